// SPDX-License-Identifier: MIT
// sap: sort-and-sweep along one axis. Radix sort of the min bounds (reusing last
// frame's order when it is still sorted), a copy of the bounds into sorted SoA
// order, then a parallel sweep over fixed chunks of the sorted range.
//
// SIMD: on x86 the sweep has an AVX2 path (8 candidates per compare), compiled with
// __attribute__((target("avx2"))) and picked at run time by
// __builtin_cpu_supports("avx2"). Other CPUs, and any run with the environment
// variable BP_NO_SIMD=1, use the scalar sweep; both report the same pairs in the
// same order and the same candidate_tests, which tests/test_sap.c checks.
#include "index.h"
#include "parallel.h"
#include "sort.h"

#include <math.h>
#include <stdlib.h>

#if defined(__x86_64__) || defined(__i386__)
#define SAP_HAVE_AVX2 1
#include <immintrin.h>
#else
#define SAP_HAVE_AVX2 0
#endif

// Sorted items per sweep chunk. Chunk costs vary with local density, so chunks are
// small enough for dynamic scheduling to even them out, large enough that a
// chunk's pair buffer and scheduling overhead stay small.
#define SAP_GRAIN 2048
// Items per chunk of the copy into SoA order and of the key rebuild.
#define SAP_COPY_GRAIN 16384
// Sentinel slots past the end of the sorted min array (+inf), so the inner loop
// needs one compare and the AVX2 path may load 8 floats from any j <= count.
#define SAP_PAD 8
// Axis statistics are taken on at most this many items (a fixed stride), so
// choosing the axis costs nothing next to the sort.
#define SAP_AXIS_SAMPLES 4096

/// Benchmark switch: false makes every step a full radix sort, so perf/ can time
/// the coherence path against it on the same frames. Not for hosts.
bool bpi_sap_coherence = true;

typedef struct sap_index {
	bpi_index base;
	bpi_radix_scratch radix;
	// Last frame's sorted order (key, dense index). Valid when order_count is
	// the scene's count and order_axis its sweep axis.
	bpi_sort_item *items;
	size_t item_capacity;
	uint32_t order_count;
	int order_axis;
	uint32_t reuse_backoff; ///< full sorts left before the next attempt to reuse the order
	// Sorted SoA: 2 * dims float arrays of `stride` floats in one block, 64-byte
	// aligned: sweep axis min, max, then (min, max) of each other axis.
	float *soa;
	size_t soa_capacity; ///< floats
	uint32_t *sorted_index;
	size_t sorted_index_capacity;
	uint64_t *chunk_tests;
	size_t chunk_tests_capacity;
} sap_index;

typedef struct sap_sweep {
	const bpi_scene *scene;
	const float *min0, *max0; ///< sweep axis, sorted; min0[count..count+SAP_PAD) = +inf
	const float *min1, *max1, *min2, *max2;
	const uint32_t *index;
	bpi_pair_chunks *chunks;
	uint64_t *chunk_tests;
	int dims;
	bool filtered;
	bool simd;
} sap_sweep;

static bool grow_array(void **array, size_t *capacity, size_t needed, size_t elem_size)
{
	if (needed <= *capacity)
		return true;
	size_t capacity_new = needed + needed / 8;
	void *grown = bpi_grow_aligned(NULL, 0, capacity_new, elem_size);
	if (!grown)
		return false;
	bpi_free_aligned(*array, *capacity * elem_size);
	*array = grown;
	*capacity = capacity_new;
	return true;
}

// The axis with the largest variance of box centres, from a fixed sample. Ties go
// to the lower axis. A pure function of the scene, so the pair order is too.
static int sap_choose_axis(const bpi_scene *s)
{
	const uint32_t n = s->count;
	const uint32_t stride = n > SAP_AXIS_SAMPLES ? n / SAP_AXIS_SAMPLES : 1;
	int best = 0;
	double best_variance = -1.0;
	for (int axis = 0; axis < s->dims; ++axis) {
		double sum = 0.0, sum2 = 0.0;
		uint32_t samples = 0;
		for (uint32_t i = 0; i < n; i += stride, ++samples) {
			double c = 0.5 * ((double)s->min[axis][i] + (double)s->max[axis][i]);
			sum += c;
			sum2 += c * c;
		}
		double variance = samples ? sum2 / samples - (sum / samples) * (sum / samples) : 0.0;
		if (variance > best_variance) {
			best_variance = variance;
			best = axis;
		}
	}
	return best;
}

typedef struct sap_keys_job {
	const float *min;
	bpi_sort_item *items;
	uint32_t count;
	uint32_t *descents; ///< per chunk: k with items[k] > items[k + 1]
} sap_keys_job;

static void sap_keys_fresh(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const sap_keys_job *job = ctx;
	for (uint32_t i = begin; i < end; ++i)
		job->items[i] = bpi_sort_item_make(bpi_radix_float_key(job->min[i]), i);
}

// New keys in last frame's order, counting where the order is now broken.
static void sap_keys_reuse(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const sap_keys_job *job = ctx;
	bpi_sort_item *items = job->items;
	for (uint32_t k = begin; k < end; ++k) {
		uint32_t i = bpi_sort_item_index(items[k]);
		items[k] = bpi_sort_item_make(bpi_radix_float_key(job->min[i]), i);
	}
	uint32_t descents = 0;
	for (uint32_t k = begin + 1; k < end; ++k)
		descents += items[k - 1] > items[k];
	job->descents[chunk] = descents;
}

// Insertion sort of (key, index) items, giving up after `budget` moves. Keys with
// their index are unique, so the result is the one sorted order regardless of
// the start. Returns false (items still a permutation) when over budget.
static bool sap_insertion_sort(bpi_sort_item *items, uint32_t count, uint64_t budget)
{
	uint64_t moves = 0;
	for (uint32_t k = 1; k < count; ++k) {
		bpi_sort_item item = items[k];
		uint32_t j = k;
		while (j > 0 && items[j - 1] > item) {
			items[j] = items[j - 1];
			--j;
		}
		items[j] = item;
		moves += k - j;
		if (moves > budget)
			return false;
	}
	return true;
}

typedef struct sap_copy_job {
	const bpi_scene *scene;
	const bpi_sort_item *items;
	float *soa[6];
	uint32_t *index;
	int axes[3]; ///< sweep axis first
} sap_copy_job;

static void sap_copy(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const sap_copy_job *job = ctx;
	const bpi_scene *s = job->scene;
	for (uint32_t k = begin; k < end; ++k)
		job->index[k] = bpi_sort_item_index(job->items[k]);
	for (int a = 0; a < s->dims; ++a) {
		const float *min = s->min[job->axes[a]], *max = s->max[job->axes[a]];
		float *smin = job->soa[2 * a], *smax = job->soa[2 * a + 1];
		for (uint32_t k = begin; k < end; ++k) {
			uint32_t i = job->index[k];
			smin[k] = min[i];
			smax[k] = max[i];
		}
	}
}

// The scalar sweep. For sorted i < j, min0[i] <= min0[j], so the pair overlaps on
// the sweep axis iff min0[j] <= max0[i]: the loop visits each such j once, equal
// mins included. Other axes are tested without branches.
static inline __attribute__((always_inline)) void sap_sweep_scalar(const sap_sweep *sw, uint32_t begin,
	uint32_t end, uint32_t chunk, int dims, bool filtered)
{
	bpi_pair_buffer *out = &sw->chunks->buffers[chunk];
	const float *min0 = sw->min0, *max0 = sw->max0, *min1 = sw->min1, *max1 = sw->max1;
	const float *min2 = sw->min2, *max2 = sw->max2;
	const uint32_t *index = sw->index;
	uint64_t tests = 0;
	for (uint32_t i = begin; i < end; ++i) {
		const float hi0 = max0[i], lo1 = min1[i], hi1 = max1[i];
		const float lo2 = dims == 3 ? min2[i] : 0.0f, hi2 = dims == 3 ? max2[i] : 0.0f;
		uint32_t j = i + 1;
		for (; min0[j] <= hi0; ++j) {
			int hit = (min1[j] <= hi1) & (lo1 <= max1[j]);
			if (dims == 3)
				hit &= (min2[j] <= hi2) & (lo2 <= max2[j]);
			if (hit && (!filtered || bpi_scene_accepts(sw->scene, index[i], index[j])))
				bpi_pair_push(out, index[i], index[j]);
		}
		tests += j - i - 1;
	}
	sw->chunk_tests[chunk] = tests;
}

static void sap_sweep_scalar_2d(const sap_sweep *sw, uint32_t begin, uint32_t end, uint32_t chunk)
{
	if (sw->filtered)
		sap_sweep_scalar(sw, begin, end, chunk, 2, true);
	else
		sap_sweep_scalar(sw, begin, end, chunk, 2, false);
}

static void sap_sweep_scalar_3d(const sap_sweep *sw, uint32_t begin, uint32_t end, uint32_t chunk)
{
	if (sw->filtered)
		sap_sweep_scalar(sw, begin, end, chunk, 3, true);
	else
		sap_sweep_scalar(sw, begin, end, chunk, 3, false);
}

#if SAP_HAVE_AVX2
// The same sweep, 8 candidates j at a time. The sweep-axis mask is a prefix of
// the 8 lanes (mins are sorted, the sentinel ends every run), so a block with any
// lane off is the last one for this i.
// Tried: finding the run end first (gallop + binary search) so blocks test only the
// other axes: 17% slower on boxprune n=1e5 (140 vs 119 ms CPU, 3.0e8 tests), the
// masked last block and loop bound cost more than the sweep-axis compare saved.
static inline __attribute__((always_inline, target("avx2"))) void sap_sweep_avx2(const sap_sweep *sw,
	uint32_t begin, uint32_t end, uint32_t chunk, int dims, bool filtered)
{
	bpi_pair_buffer *out = &sw->chunks->buffers[chunk];
	const float *min0 = sw->min0, *max0 = sw->max0, *min1 = sw->min1, *max1 = sw->max1;
	const float *min2 = sw->min2, *max2 = sw->max2;
	const uint32_t *index = sw->index;
	uint64_t tests = 0;
	for (uint32_t i = begin; i < end; ++i) {
		const __m256 hi0 = _mm256_set1_ps(max0[i]);
		const __m256 lo1 = _mm256_set1_ps(min1[i]), hi1 = _mm256_set1_ps(max1[i]);
		const __m256 lo2 = _mm256_set1_ps(dims == 3 ? min2[i] : 0.0f);
		const __m256 hi2 = _mm256_set1_ps(dims == 3 ? max2[i] : 0.0f);
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
				if (!filtered || bpi_scene_accepts(sw->scene, index[i], index[k]))
					bpi_pair_push(out, index[i], index[k]);
			}
			if (run != 0xffu)
				break;
		}
	}
	sw->chunk_tests[chunk] = tests;
}
__attribute__((target("avx2"))) static void sap_sweep_avx2_2d(const sap_sweep *sw, uint32_t begin, uint32_t end,
	uint32_t chunk)
{
	if (sw->filtered)
		sap_sweep_avx2(sw, begin, end, chunk, 2, true);
	else
		sap_sweep_avx2(sw, begin, end, chunk, 2, false);
}

__attribute__((target("avx2"))) static void sap_sweep_avx2_3d(const sap_sweep *sw, uint32_t begin, uint32_t end,
	uint32_t chunk)
{
	if (sw->filtered)
		sap_sweep_avx2(sw, begin, end, chunk, 3, true);
	else
		sap_sweep_avx2(sw, begin, end, chunk, 3, false);
}
#endif

static void sap_sweep_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const sap_sweep *sw = ctx;
#if SAP_HAVE_AVX2
	if (sw->simd) {
		if (sw->dims == 3)
			sap_sweep_avx2_3d(sw, begin, end, chunk);
		else
			sap_sweep_avx2_2d(sw, begin, end, chunk);
		return;
	}
#endif
	if (sw->dims == 3)
		sap_sweep_scalar_3d(sw, begin, end, chunk);
	else
		sap_sweep_scalar_2d(sw, begin, end, chunk);
}

static bool sap_simd_enabled(void)
{
	const char *off = getenv("BP_NO_SIMD");
	if (off && *off && !(off[0] == '0' && off[1] == '\0'))
		return false;
#if SAP_HAVE_AVX2
	return __builtin_cpu_supports("avx2");
#else
	return false;
#endif
}

// Sorts the scene's mins on `axis` into sap->items. With last frame's order on
// the same axis and entity count, the new keys are laid in that order: when
// still sorted nothing moves, and a few inversions are fixed by an insertion
// sort; otherwise (or past the move budget) a full radix sort from index order.
// Either way the result is the unique (key, index) order, so pairs do not depend
// on history.
//
// Measured (perf/bp_perf coherence, uniform n=1e5, every box moving 5% of its
// extent per frame, min over 10 frames of sort+copy, loaded 2-core machine): the
// reuse attempt nearly always fails there (too many inversions), and paying for
// it made sort+copy 15% slower than a plain full sort (3D 2.17 vs 1.86 ms, 2D
// 1.88 vs 1.63 ms). A scene at rest skips the radix sort outright (sort+copy
// 1.13 vs 2.18 ms, uniform 3D n=1e5, min of 21). So after a failed attempt the next SAP_REUSE_BACKOFF frames sort
// from scratch: a moving scene pays the attempt once in 8 frames, a scene at
// rest keeps the fast path.
#define SAP_REUSE_BACKOFF 8
static bp_status sap_sort(sap_index *sap, const bpi_scene *s, int axis, uint32_t *descent_counts, uint32_t chunks)
{
	const uint32_t n = s->count;
	sap_keys_job job = {.min = s->min[axis], .items = sap->items, .count = n, .descents = descent_counts};
	bool reuse = bpi_sap_coherence && sap->order_count == n && sap->order_axis == axis && n > 1;
	if (reuse && sap->reuse_backoff > 0) {
		--sap->reuse_backoff;
		reuse = false;
	}
	if (reuse) {
		bpi_parallel_for(n, SAP_COPY_GRAIN, s->threads, sap_keys_reuse, &job);
		uint64_t descents = 0;
		for (uint32_t c = 0; c < chunks; ++c) {
			descents += descent_counts[c];
			if (c > 0)
				descents += sap->items[(size_t)c * SAP_COPY_GRAIN - 1] > sap->items[(size_t)c * SAP_COPY_GRAIN];
		}
		if (descents == 0)
			return BP_OK;
		if (descents <= n / 64 && sap_insertion_sort(sap->items, n, 8 * (uint64_t)n))
			return BP_OK;
		sap->reuse_backoff = SAP_REUSE_BACKOFF;
	}
	sap->order_count = 0;
	bpi_parallel_for(n, SAP_COPY_GRAIN, s->threads, sap_keys_fresh, &job);
	return bpi_radix_sort_items(&sap->radix, sap->items, n, s->threads);
}

static bp_status sap_find_pairs(bpi_index *index, const bpi_scene *s, bpi_pair_buffer *out, bp_frame_stats *stats)
{
	sap_index *sap = (sap_index *)index;
	const uint32_t n = s->count;
	const uint64_t t0 = bpi_now_ns();
	const uint32_t copy_chunks = bpi_chunk_count(n, SAP_COPY_GRAIN);
	const uint32_t sweep_chunks = bpi_chunk_count(n, SAP_GRAIN);
	// Scratch, all reused across frames: items, SoA block, sorted index, and per-chunk
	// counters (chunk_tests doubles as the descent counts of the key rebuild).
	const size_t stride = ((size_t)n + SAP_PAD + 15) & ~(size_t)15; // whole cache lines
	const size_t old_items = sap->item_capacity;
	if (!grow_array((void **)&sap->items, &sap->item_capacity, (size_t)n + 1, sizeof(bpi_sort_item)) ||
		!grow_array((void **)&sap->soa, &sap->soa_capacity, stride * 2 * (size_t)s->dims, sizeof(float)) ||
		!grow_array((void **)&sap->sorted_index, &sap->sorted_index_capacity, stride, sizeof(uint32_t)) ||
		!grow_array((void **)&sap->chunk_tests, &sap->chunk_tests_capacity,
			(size_t)BP_MAX(sweep_chunks, copy_chunks) + 1, sizeof(uint64_t)) ||
		bpi_radix_sort_reserve(&sap->radix, n) != BP_OK) {
		sap->order_count = 0;
		return BP_ERR_OUT_OF_MEMORY;
	}
	if (sap->item_capacity != old_items)
		sap->order_count = 0; // the old order went with the old array
	bp_status status = bpi_pair_chunks_reset(&index->chunks, sweep_chunks);
	if (status != BP_OK)
		return status;

	const int axis = sap_choose_axis(s);
	status = sap_sort(sap, s, axis, (uint32_t *)sap->chunk_tests, copy_chunks);
	if (status != BP_OK) {
		sap->order_count = 0;
		return status;
	}
	sap->order_count = n;
	sap->order_axis = axis;

	sap_copy_job copy = {.scene = s, .items = sap->items, .index = sap->sorted_index};
	copy.axes[0] = axis;
	for (int a = 0, k = 1; a < s->dims; ++a)
		if (a != axis)
			copy.axes[k++] = a;
	for (int a = 0; a < 2 * s->dims; ++a)
		copy.soa[a] = sap->soa + (size_t)a * stride;
	bpi_parallel_for(n, SAP_COPY_GRAIN, s->threads, sap_copy, &copy);
	for (size_t k = n; k < stride; ++k) {
		copy.soa[0][k] = INFINITY; // the sentinel: ends every run
		for (int a = 1; a < 2 * s->dims; ++a)
			copy.soa[a][k] = 0.0f;
		sap->sorted_index[k] = 0;
	}
	const uint64_t t1 = bpi_now_ns();

	sap_sweep sw = {
		.scene = s,
		.min0 = copy.soa[0], .max0 = copy.soa[1], .min1 = copy.soa[2], .max1 = copy.soa[3],
		.min2 = s->dims == 3 ? copy.soa[4] : NULL, .max2 = s->dims == 3 ? copy.soa[5] : NULL,
		.index = sap->sorted_index,
		.chunks = &index->chunks,
		.chunk_tests = sap->chunk_tests,
		.dims = s->dims,
		.filtered = !s->unfiltered,
		.simd = sap_simd_enabled(),
	};
	bpi_parallel_for(n, SAP_GRAIN, s->threads, sap_sweep_chunk, &sw);
	uint64_t tests = 0;
	for (uint32_t c = 0; c < sweep_chunks; ++c)
		tests += sap->chunk_tests[c];
	const uint64_t t2 = bpi_now_ns();

	status = bpi_pair_chunks_merge(&index->chunks, out, s->threads);
	const uint64_t t3 = bpi_now_ns();
	stats->candidate_tests = tests;
	stats->cell_count = n;
	stats->ns_build = t1 - t0;
	stats->ns_find = t2 - t1;
	stats->ns_merge = t3 - t2;
	return status;
}

static bp_status sap_create(bpi_index **out)
{
	sap_index *sap = bpi_alloc(sizeof *sap);
	if (!sap)
		return BP_ERR_OUT_OF_MEMORY;
	*sap = (sap_index){.base = {.algorithm = &bpi_sap_algorithm}};
	*out = &sap->base;
	return BP_OK;
}

static void sap_destroy(bpi_index *index)
{
	sap_index *sap = (sap_index *)index;
	bpi_pair_chunks_free(&index->chunks);
	bpi_radix_sort_free(&sap->radix);
	bpi_free_aligned(sap->items, sap->item_capacity * sizeof(bpi_sort_item));
	bpi_free_aligned(sap->soa, sap->soa_capacity * sizeof(float));
	bpi_free_aligned(sap->sorted_index, sap->sorted_index_capacity * sizeof(uint32_t));
	bpi_free_aligned(sap->chunk_tests, sap->chunk_tests_capacity * sizeof(uint64_t));
	bpi_free(sap, sizeof *sap);
}

const bpi_algorithm bpi_sap_algorithm = {
	.id = BP_ALGO_SAP,
	.name = "sap",
	.create = sap_create,
	.destroy = sap_destroy,
	.find_pairs = sap_find_pairs,
};
