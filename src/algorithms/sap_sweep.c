// SPDX-License-Identifier: MIT
// sap's sweep kernels over the region-major sorted layout: a scalar sweep and an
// AVX2 one (8 candidates per compare), picked at run time.
//
// SIMD: on x86 the AVX2 path is compiled with __attribute__((target("avx2"))) and
// picked by __builtin_cpu_supports("avx2"). Other CPUs, and worlds with the debug flag
// BP_DEBUG_NO_SIMD, use the scalar sweep; both report the same pairs in the same order
// and the same candidate_tests, which tests/test_sap.c checks.
#include "algorithms/sap_sweep.h"

#include <stdlib.h>

#if defined(__x86_64__) || defined(__i386__)
#define SAP_HAVE_AVX2 1
#include <immintrin.h>
#else
#define SAP_HAVE_AVX2 0
#endif

// A hit found in a region is reported only when that region holds the lower corner
// of the two boxes' intersection: the OR of their corner bits is 3 (sap_regions.h). A box
// whose bits are 3 here passes every hit, which is the common case.
static inline bool sap_corner_ok(uint8_t corner_i, uint8_t corner_j)
{
	return (corner_i | corner_j) == 3;
}

// The scalar sweep of positions [begin, end) of one segment. For sorted i < j,
// min0[i] <= min0[j], so the pair overlaps on the sweep axis iff min0[j] <= max0[i]:
// the loop visits each such j once, equal mins included, and the sentinel after the
// segment ends it. Other axes are tested without branches.
static inline __attribute__((always_inline)) uint64_t sap_sweep_scalar(const bpi_sap_sweep *sw,
	bpi_pair_buffer *out, uint32_t begin, uint32_t end, int dims, bool filtered)
{
	const float *min0 = sw->min0, *max0 = sw->max0, *min1 = sw->min1, *max1 = sw->max1;
	const float *min2 = sw->min2, *max2 = sw->max2;
	const uint32_t *index = sw->layout->index.data;
	const uint8_t *corner = sw->layout->corner.data;
	uint64_t tests = 0;
	for (uint32_t i = begin; i < end && !out->failed; ++i) {
		const float hi0 = max0[i], lo1 = min1[i], hi1 = max1[i];
		const float lo2 = dims == 3 ? min2[i] : 0.0f, hi2 = dims == 3 ? max2[i] : 0.0f;
		const uint8_t ci = corner[i];
		uint32_t j = i + 1;
		for (; min0[j] <= hi0; ++j) {
			int hit = (min1[j] <= hi1) & (lo1 <= max1[j]);
			if (dims == 3)
				hit &= (min2[j] <= hi2) & (lo2 <= max2[j]);
			if (hit && sap_corner_ok(ci, corner[j]) &&
				(!filtered || bpi_scene_accepts(sw->scene, index[i], index[j])))
				bpi_pair_push(out, index[i], index[j]);
		}
		tests += j - i - 1;
	}
	return tests;
}

static uint64_t sap_sweep_scalar_2d(const bpi_sap_sweep *sw, bpi_pair_buffer *out, uint32_t begin, uint32_t end)
{
	return sw->filtered ? sap_sweep_scalar(sw, out, begin, end, 2, true)
			    : sap_sweep_scalar(sw, out, begin, end, 2, false);
}

static uint64_t sap_sweep_scalar_3d(const bpi_sap_sweep *sw, bpi_pair_buffer *out, uint32_t begin, uint32_t end)
{
	return sw->filtered ? sap_sweep_scalar(sw, out, begin, end, 3, true)
			    : sap_sweep_scalar(sw, out, begin, end, 3, false);
}

#if SAP_HAVE_AVX2
// The same sweep, 8 candidates j at a time. The sweep-axis mask is a prefix of the
// 8 lanes (mins are sorted, the sentinel ends every run), so a block with any lane
// off is the last one for this i.
// Tried: finding the run end first (gallop + binary search) so blocks test only the
// other axes: 17% slower on boxprune n=1e5 (140 vs 119 ms CPU, 3.0e8 tests, one
// region), the masked last block and loop bound cost more than the compare saved.
static inline __attribute__((always_inline, target("avx2"))) uint64_t sap_sweep_avx2(const bpi_sap_sweep *sw,
	bpi_pair_buffer *out, uint32_t begin, uint32_t end, int dims, bool filtered)
{
	const float *min0 = sw->min0, *max0 = sw->max0, *min1 = sw->min1, *max1 = sw->max1;
	const float *min2 = sw->min2, *max2 = sw->max2;
	const uint32_t *index = sw->layout->index.data;
	const uint8_t *corner = sw->layout->corner.data;
	uint64_t tests = 0;
	for (uint32_t i = begin; i < end && !out->failed; ++i) {
		const __m256 hi0 = _mm256_set1_ps(max0[i]);
		const __m256 lo1 = _mm256_set1_ps(min1[i]), hi1 = _mm256_set1_ps(max1[i]);
		const __m256 lo2 = _mm256_set1_ps(dims == 3 ? min2[i] : 0.0f);
		const __m256 hi2 = _mm256_set1_ps(dims == 3 ? max2[i] : 0.0f);
		const uint8_t ci = corner[i];
		for (uint32_t j = i + 1;; j += 8) {
			__m256 in0 = _mm256_cmp_ps(_mm256_loadu_ps(min0 + j), hi0, _CMP_LE_OQ);
			unsigned run = (unsigned)_mm256_movemask_ps(in0);
			if (!run)
				break;
			__m256 hit = _mm256_and_ps(in0, _mm256_cmp_ps(_mm256_loadu_ps(min1 + j), hi1, _CMP_LE_OQ));
			hit = _mm256_and_ps(hit, _mm256_cmp_ps(lo1, _mm256_loadu_ps(max1 + j), _CMP_LE_OQ));
			if (dims == 3) {
				hit = _mm256_and_ps(hit, _mm256_cmp_ps(_mm256_loadu_ps(min2 + j), hi2, _CMP_LE_OQ));
				hit = _mm256_and_ps(hit, _mm256_cmp_ps(lo2, _mm256_loadu_ps(max2 + j), _CMP_LE_OQ));
			}
			unsigned mask = (unsigned)_mm256_movemask_ps(hit);
			tests += (unsigned)__builtin_popcount(run);
			while (mask) {
				uint32_t k = j + (uint32_t)__builtin_ctz(mask);
				mask &= mask - 1;
				if (sap_corner_ok(ci, corner[k]) &&
					(!filtered || bpi_scene_accepts(sw->scene, index[i], index[k])))
					bpi_pair_push(out, index[i], index[k]);
			}
			if (run != 0xffu)
				break;
		}
	}
	return tests;
}

__attribute__((target("avx2"))) static uint64_t sap_sweep_avx2_2d(const bpi_sap_sweep *sw, bpi_pair_buffer *out,
	uint32_t begin, uint32_t end)
{
	return sw->filtered ? sap_sweep_avx2(sw, out, begin, end, 2, true)
			    : sap_sweep_avx2(sw, out, begin, end, 2, false);
}

__attribute__((target("avx2"))) static uint64_t sap_sweep_avx2_3d(const bpi_sap_sweep *sw, bpi_pair_buffer *out,
	uint32_t begin, uint32_t end)
{
	return sw->filtered ? sap_sweep_avx2(sw, out, begin, end, 3, true)
			    : sap_sweep_avx2(sw, out, begin, end, 3, false);
}
#endif

static uint64_t sap_sweep_segment(const bpi_sap_sweep *sw, bpi_pair_buffer *out, uint32_t begin, uint32_t end)
{
#if SAP_HAVE_AVX2
	if (sw->simd)
		return sw->dims == 3 ? sap_sweep_avx2_3d(sw, out, begin, end) : sap_sweep_avx2_2d(sw, out, begin, end);
#endif
	return sw->dims == 3 ? sap_sweep_scalar_3d(sw, out, begin, end) : sap_sweep_scalar_2d(sw, out, begin, end);
}

// A chunk may start or end inside a segment, or in a segment's sentinels: the sweep
// of position i reads only positions after i in its own segment, which the sentinels
// bound, so each piece is swept on its own.
void bpi_sap_sweep_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const bpi_sap_sweep *sw = ctx;
	const bpi_sap_layout *layout = sw->layout;
	bpi_pair_buffer *out = &sw->chunks->buffers[chunk];
	if (bpi_pair_buffer_stopped(out))
		return; // the step ran out of memory in another chunk
	// The first segment ending after `begin`.
	uint32_t lo = 0, hi = layout->segments;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (layout->seg_end[mid] <= begin)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t tests = 0;
	for (uint32_t seg = lo; seg < layout->segments && layout->seg_begin[seg] < end; ++seg) {
		uint32_t a = BP_MAX(begin, layout->seg_begin[seg]);
		uint32_t b = BP_MIN(end, layout->seg_end[seg]);
		if (a < b)
			tests += sap_sweep_segment(sw, out, a, b);
	}
	out->tests = tests;
}

bool bpi_sap_simd_enabled(const bpi_scene *scene)
{
	if (scene->debug_flags & BP_DEBUG_NO_SIMD)
		return false;
#if SAP_HAVE_AVX2
	return __builtin_cpu_supports("avx2");
#else
	return false;
#endif
}
