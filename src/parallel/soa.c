// SPDX-License-Identifier: MIT
// Allocation, growth and copies of the per-entity SoA arrays.
#include "parallel/soa.h"
#include "parallel/parallel.h"

#include <string.h>

/// Entities per chunk of a parallel copy: about 3.5 MB of the store, enough to stream.
#define SOA_COPY_GRAIN 65536u

/// Calls fn on each array of a bpi_soa with its element size: one place that
/// knows the list of arrays.
#define BPI_SOA_EACH(soa, dims, fn)                                                                             \
	do {                                                                                                    \
		for (int axis_ = 0; axis_ < (dims); ++axis_) {                                                  \
			fn((soa)->min[axis_], sizeof(float));                                                   \
			fn((soa)->max[axis_], sizeof(float));                                                   \
		}                                                                                               \
		fn((soa)->category, sizeof(uint64_t));                                                          \
		fn((soa)->mask, sizeof(uint64_t));                                                              \
		fn((soa)->flags, sizeof(uint8_t));                                                              \
		fn((soa)->user_key, sizeof(uint64_t));                                                          \
		fn((soa)->entity, sizeof(bp_entity));                                                           \
	} while (0)

void bpi_soa_free(bpi_soa *soa, int dims, uint32_t capacity)
{
#define FREE_ARRAY(array, size) bpi_free_aligned((array), (size_t)capacity * (size))
	BPI_SOA_EACH(soa, dims, FREE_ARRAY);
#undef FREE_ARRAY
	*soa = (bpi_soa){0};
}

bool bpi_soa_resize(bpi_soa *soa, int dims, uint32_t old_capacity, uint32_t capacity, uint32_t keep)
{
	bpi_soa fresh = {0};
	bool ok = true;
#define ALLOC_ARRAY(array, size) ok &= ((array) = bpi_alloc_aligned((size_t)capacity * (size))) != NULL
	BPI_SOA_EACH(&fresh, dims, ALLOC_ARRAY);
#undef ALLOC_ARRAY
	if (!ok) {
		bpi_soa_free(&fresh, dims, capacity);
		return false;
	}
	bpi_soa_copy(&fresh, soa, dims, BP_MIN(keep, capacity));
	bpi_soa_free(soa, dims, old_capacity);
	*soa = fresh;
	return true;
}

/// Copies entities [begin, end) of the bounds arrays, or of every array, array by array.
static void copy_range(bpi_soa *dst, const bpi_soa *src, int dims, uint32_t begin, uint32_t end, bool bounds_only)
{
	const size_t n = end - begin;
	if (n == 0)
		return; // arrays may be NULL then, and memcpy from NULL is undefined
	for (int axis = 0; axis < dims; ++axis) {
		memcpy(dst->min[axis] + begin, src->min[axis] + begin, n * sizeof(float));
		memcpy(dst->max[axis] + begin, src->max[axis] + begin, n * sizeof(float));
	}
	if (bounds_only)
		return;
	memcpy(dst->category + begin, src->category + begin, n * sizeof(uint64_t));
	memcpy(dst->mask + begin, src->mask + begin, n * sizeof(uint64_t));
	memcpy(dst->flags + begin, src->flags + begin, n * sizeof(uint8_t));
	memcpy(dst->user_key + begin, src->user_key + begin, n * sizeof(uint64_t));
	memcpy(dst->entity + begin, src->entity + begin, n * sizeof(bp_entity));
}

void bpi_soa_copy(bpi_soa *dst, const bpi_soa *src, int dims, uint32_t count)
{
	copy_range(dst, src, dims, 0, count, false);
}

typedef struct copy_job {
	bpi_soa *dst;
	const bpi_soa *src;
	int dims;
	bool bounds_only;
} copy_job;

static void copy_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const copy_job *job = ctx;
	copy_range(job->dst, job->src, job->dims, begin, end, job->bounds_only);
}

void bpi_soa_copy_parallel(bpi_soa *dst, const bpi_soa *src, int dims, uint32_t count, bool bounds_only, int threads)
{
	copy_job job = {dst, src, dims, bounds_only};
	bpi_parallel_for(count, SOA_COPY_GRAIN, threads, copy_chunk, &job);
}

void bpi_soa_copy_listed(bpi_soa *dst, const bpi_soa *src, int dims, const uint32_t *list, uint32_t count,
	uint32_t limit, bool bounds_only)
{
	// Array by array: each loop reads and writes one stream per side, where a loop
	// over entities copying every field kept eleven in flight
	// (perf/README.md, "Copies on submit").
#define COPY_LISTED(array)                                                                                   \
	for (uint32_t c = 0; c < count; ++c)                                                                     \
		if (list[c] < limit)                                                                                 \
			dst->array[list[c]] = src->array[list[c]];
	for (int axis = 0; axis < dims; ++axis) {
		COPY_LISTED(min[axis])
		COPY_LISTED(max[axis])
	}
	// A host that only moves entities changes nothing else: 5 of 11 arrays in 3D,
	// so the other arrays are not copied (perf/README.md, "Copies on submit").
	if (bounds_only)
		return;
	COPY_LISTED(category)
	COPY_LISTED(mask)
	COPY_LISTED(flags)
	COPY_LISTED(user_key)
	COPY_LISTED(entity)
#undef COPY_LISTED
}

void bpi_soa_copy_entity(bpi_soa *dst, uint32_t to, const bpi_soa *src, uint32_t from, int dims)
{
	for (int axis = 0; axis < dims; ++axis) {
		dst->min[axis][to] = src->min[axis][from];
		dst->max[axis][to] = src->max[axis][from];
	}
	dst->category[to] = src->category[from];
	dst->mask[to] = src->mask[from];
	dst->flags[to] = src->flags[from];
	dst->user_key[to] = src->user_key[from];
	dst->entity[to] = src->entity[from];
}
