// SPDX-License-Identifier: MIT
// Periodic worlds: normalize each box into the period cell, add ghost copies of boxes that
// cross the upper face, run any algorithm on that plain scene, and map pairs back.
#include "step/periodic.h"
#include "parallel/parallel.h"
#include "parallel/sort.h"

#include <math.h>
#include <string.h>

// Why this is exact (per axis, period P, all arithmetic real):
// A box is normalized to [a, a + ea] with a in [0, P); the contract ea <= P/2
// (checked here) gives a + ea < 3P/2. Two normalized boxes A = [a, a + ea] and
// B = [b, b + eb] overlap under the shift k (B moved by kP) iff
//     a - b - eb <= kP <= a - b + ea.
// As a - b lies in (-P, P) and ea, eb <= P/2, kP lies in (-3P/2, 3P/2): only
// k in {-1, 0, 1} can hold. This is where the P/2 bound is used (any bound < P
// would still give |k| <= 1; P/2 is the minimum-image contract, under which the
// nearest image is unambiguous).
//   k = 0:  A and B overlap as they are.
//   k = 1:  b + P <= a + ea, so A's max >= P: A has a ghost moved by -P, and
//           that ghost overlaps B exactly when A overlaps B moved by +P.
//   k = -1: symmetric, with B's ghost.
// The axes choose k independently, so a box whose max >= P on the axes in M
// gets one ghost per non-empty subset S of M (moved by -P on the axes of S):
// for a pair with shifts k_i, the image of A moved on {i: k_i = 1} and the image
// of B moved on {i: k_i = -1} both exist and overlap on every axis. Conversely
// every overlap between images is a real overlap under some shift. So the pairs
// of the ghost scene, mapped to their originals, minus a box with its own ghost,
// are exactly the periodic pairs; a pair can appear several times (through
// several images), hence the sort and unique at the end.
//
// Rounding: positions are reduced with fmod (exact) and a negative remainder
// moved up by P in double; the normalized min, max and ghost bounds are each
// rounded once to float. For bounds and periods on a common binary grid that
// float holds exactly (integers, or multiples of 1/1024 below 2^13, ...) nothing
// rounds and the pairs are exact; otherwise a touching contact across the seam
// may be decided by a rounding of one ulp.

// Entities per chunk of the normalize and ghost passes: fixed, so the ghost
// order (and with it the inner algorithm's input) is the same for any thread count.
#define PERIODIC_GRAIN 4096u
// Pairs per chunk of the map-back pass.
#define PERIODIC_PAIR_GRAIN (1u << 16)
#define NO_FAULT UINT32_MAX

struct bpi_periodic {
	// The ghost scene: `n` normalized originals then the ghosts.
	BPI_ARRAY(float) min[3], max[3];
	BPI_ARRAY(uint64_t) category, mask;
	BPI_ARRAY(uint8_t) flags;
	BPI_ARRAY(uint32_t) origin; ///< ghost g (entry n + g) -> original dense index

	// Per chunk of the entity passes.
	BPI_ARRAY(uint32_t) chunk_ghosts; ///< ghosts of the chunk, then their prefix sum
	BPI_ARRAY(uint32_t) chunk_fault;  ///< first entity of the chunk that is too large, or NO_FAULT
	BPI_ARRAY(int8_t) chunk_fault_axis;

	bpi_pair_buffer pairs; ///< inner algorithm's output; swapped with the caller's buffer
	BPI_ARRAY(bpi_sort_item) items;
	bpi_radix_scratch sort;
};

// ---- scratch -------------------------------------------------------------

/// Room for `capacity` entries in every ghost-scene array, keeping the first `keep` (origin
/// is indexed by ghost, so it keeps none). Each array keeps its entries and its own
/// capacity, so a failure part-way leaves every array as usable as it was.
static bool reserve_entries(bpi_periodic *p, int dims, size_t capacity, size_t keep)
{
	bool ok = bpi_array_grow(&p->category, keep, capacity) && bpi_array_grow(&p->mask, keep, capacity) &&
		  bpi_array_grow(&p->flags, keep, capacity) && bpi_array_reserve(&p->origin, capacity);
	for (int axis = 0; axis < dims; ++axis)
		ok = ok && bpi_array_grow(&p->min[axis], keep, capacity) && bpi_array_grow(&p->max[axis], keep, capacity);
	return ok;
}

static bool reserve_chunks(bpi_periodic *p, uint32_t chunks)
{
	return bpi_array_reserve(&p->chunk_ghosts, chunks) && bpi_array_reserve(&p->chunk_fault, chunks) &&
	       bpi_array_reserve(&p->chunk_fault_axis, chunks);
}

void bpi_periodic_free(bpi_periodic *p)
{
	if (!p)
		return;
	for (int axis = 0; axis < 3; ++axis) {
		bpi_array_free(&p->min[axis]);
		bpi_array_free(&p->max[axis]);
	}
	bpi_array_free(&p->category);
	bpi_array_free(&p->mask);
	bpi_array_free(&p->flags);
	bpi_array_free(&p->origin);
	bpi_array_free(&p->chunk_ghosts);
	bpi_array_free(&p->chunk_fault);
	bpi_array_free(&p->chunk_fault_axis);
	bpi_pair_buffer_free(&p->pairs);
	bpi_array_free(&p->items);
	bpi_radix_sort_free(&p->sort);
	bpi_free(p, sizeof *p);
}

// ---- normalize and ghosts ------------------------------------------------

typedef struct periodic_job {
	bpi_periodic *p;
	const bpi_scene *scene;
	float period[3];
	double half[3]; ///< period / 2
	uint32_t n;
} periodic_job;

/// Axes on which normalized entity i crosses the upper face (max >= period).
static unsigned crossing_axes(const periodic_job *job, uint32_t i)
{
	unsigned axes = 0;
	for (int axis = 0; axis < job->scene->dims; ++axis)
		if (job->p->max[axis].data[i] >= job->period[axis])
			axes |= 1u << axis;
	return axes;
}

static void normalize_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const periodic_job *job = ctx;
	const bpi_scene *s = job->scene;
	bpi_periodic *p = job->p;
	uint32_t ghosts = 0, fault = NO_FAULT;
	int8_t fault_axis = 0;
	for (uint32_t i = begin; i < end; ++i) {
		for (int axis = 0; axis < s->dims; ++axis) {
			double lo = s->min[axis][i], extent = (double)s->max[axis][i] - lo;
			if (extent > job->half[axis] && fault == NO_FAULT)
				fault = i, fault_axis = (int8_t)axis;
			const float a = bpi_periodic_reduce(s->min[axis][i], job->period[axis]);
			p->min[axis].data[i] = a;
			p->max[axis].data[i] = (float)((double)a + extent);
		}
		p->category.data[i] = s->category[i];
		p->mask.data[i] = s->mask[i];
		p->flags.data[i] = s->flags[i];
		ghosts += (1u << __builtin_popcount(crossing_axes(job, i))) - 1;
	}
	p->chunk_ghosts.data[chunk] = ghosts;
	p->chunk_fault.data[chunk] = fault;
	p->chunk_fault_axis.data[chunk] = fault_axis;
}

static void ghost_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const periodic_job *job = ctx;
	bpi_periodic *p = job->p;
	int dims = job->scene->dims;
	size_t e = (size_t)job->n + p->chunk_ghosts.data[chunk]; // prefix sum by now
	for (uint32_t i = begin; i < end; ++i) {
		unsigned axes = crossing_axes(job, i);
		// Each non-empty subset of the crossing axes, largest first.
		for (unsigned subset = axes; subset; subset = (subset - 1) & axes) {
			for (int axis = 0; axis < dims; ++axis) {
				bool moved = subset >> axis & 1;
				double shift = moved ? (double)job->period[axis] : 0.0;
				float *min = p->min[axis].data, *max = p->max[axis].data;
				min[e] = moved ? (float)((double)min[i] - shift) : min[i];
				max[e] = moved ? (float)((double)max[i] - shift) : max[i];
			}
			p->category.data[e] = p->category.data[i];
			p->mask.data[e] = p->mask.data[i];
			p->flags.data[e] = p->flags.data[i];
			p->origin.data[e - job->n] = i;
			++e;
		}
	}
}

// ---- map pairs back ------------------------------------------------------

typedef struct map_job {
	const bpi_periodic *p;
	uint32_t n;
} map_job;

static inline uint32_t original(const map_job *job, uint32_t entry)
{
	return entry < job->n ? entry : job->p->origin.data[entry - job->n];
}

/// Pairs -> sort items keyed by hi (first radix pass); a box with its own ghost
/// becomes (UINT32_MAX, UINT32_MAX), which sorts last and is dropped.
static void map_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const map_job *job = ctx;
	const bp_pair *pairs = job->p->pairs.data;
	bpi_sort_item *items = job->p->items.data;
	for (uint32_t i = begin; i < end; ++i) {
		uint32_t a = original(job, pairs[i].lo), b = original(job, pairs[i].hi);
		uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
		if (a == b)
			lo = hi = UINT32_MAX;
		items[i] = bpi_sort_item_make(hi, lo);
	}
}

/// Re-keys the items by lo (second radix pass), keeping hi as the index.
static void rekey_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	bpi_sort_item *items = ctx;
	for (uint32_t i = begin; i < end; ++i)
		items[i] = bpi_sort_item_make(bpi_sort_item_index(items[i]), bpi_sort_item_key(items[i]));
}

/// Maps the inner pairs to originals and leaves them sorted by (lo, hi), unique,
/// without self pairs, in p->pairs.
static bp_status map_back(bpi_periodic *p, uint32_t n, int threads)
{
	size_t count = p->pairs.count;
	if (count > UINT32_MAX) // beyond the radix sort's range
		return BP_ERR_OUT_OF_MEMORY;
	if (!bpi_array_reserve(&p->items, count))
		return BP_ERR_OUT_OF_MEMORY;
	map_job job = {p, n};
	bpi_parallel_for((uint32_t)count, PERIODIC_PAIR_GRAIN, threads, map_chunk, &job);
	// Two stable passes, hi then lo: sorted by (lo, hi) for any thread count.
	bp_status status = bpi_radix_sort_items(&p->sort, p->items.data, (uint32_t)count, threads);
	if (status != BP_OK)
		return status;
	bpi_parallel_for((uint32_t)count, PERIODIC_PAIR_GRAIN, threads, rekey_chunk, p->items.data);
	status = bpi_radix_sort_items(&p->sort, p->items.data, (uint32_t)count, threads);
	if (status != BP_OK)
		return status;
	size_t kept = 0;
	for (size_t i = 0; i < count; ++i) {
		bpi_sort_item item = p->items.data[i];
		if (bpi_sort_item_key(item) == UINT32_MAX)
			break; // only self pairs from here on (no entity has index UINT32_MAX)
		if (i > 0 && item == p->items.data[i - 1])
			continue;
		p->pairs.data[kept++] = (bp_pair){bpi_sort_item_key(item), bpi_sort_item_index(item)};
	}
	p->pairs.count = kept;
	return BP_OK;
}

// ---- the step ------------------------------------------------------------

bp_status bpi_periodic_step(bpi_periodic **scratch, bpi_indexes *indexes, bp_algorithm requested,
	const bpi_scene *scene, const float period[3], bpi_pair_buffer *pairs, bp_frame_stats *stats,
	bpi_periodic_fault *fault)
{
	uint64_t t0 = bpi_now_ns();
	if (!*scratch) {
		*scratch = bpi_alloc(sizeof **scratch);
		if (!*scratch)
			return BP_ERR_OUT_OF_MEMORY;
		**scratch = (bpi_periodic){0};
	}
	bpi_periodic *p = *scratch;
	uint32_t n = scene->count;
	int threads = scene->threads;
	uint32_t chunks = bpi_chunk_count(n, PERIODIC_GRAIN);
	if (!reserve_entries(p, scene->dims, n, 0) || !reserve_chunks(p, chunks))
		return BP_ERR_OUT_OF_MEMORY;
	periodic_job job = {.p = p, .scene = scene, .n = n};
	for (int axis = 0; axis < scene->dims; ++axis) {
		job.period[axis] = period[axis];
		job.half[axis] = (double)period[axis] * 0.5;
	}
	bpi_parallel_for(n, PERIODIC_GRAIN, threads, normalize_chunk, &job);

	// The first fault in chunk order is the lowest entity index: the same report
	// for any thread count.
	uint64_t ghosts = 0;
	for (uint32_t c = 0; c < chunks; ++c) {
		if (p->chunk_fault.data[c] != NO_FAULT) {
			uint32_t i = p->chunk_fault.data[c];
			int axis = p->chunk_fault_axis.data[c];
			*fault = (bpi_periodic_fault){i, axis, (double)scene->max[axis][i] - (double)scene->min[axis][i]};
			return BP_ERR_PERIODIC_EXTENT;
		}
		uint32_t chunk_ghosts = p->chunk_ghosts.data[c];
		p->chunk_ghosts.data[c] = (uint32_t)ghosts; // exclusive prefix sum (checked below)
		ghosts += chunk_ghosts;
	}
	uint64_t total = (uint64_t)n + ghosts;
	if (total > UINT32_MAX - 1) {
		*fault = (bpi_periodic_fault){n, -1, 0.0};
		return BP_ERR_OUT_OF_RANGE;
	}
	if (!reserve_entries(p, scene->dims, (size_t)total, n))
		return BP_ERR_OUT_OF_MEMORY;
	if (ghosts)
		bpi_parallel_for(n, PERIODIC_GRAIN, threads, ghost_chunk, &job);

	bpi_scene inner = *scene;
	inner.count = (uint32_t)total;
	for (int axis = 0; axis < scene->dims; ++axis) {
		inner.min[axis] = p->min[axis].data;
		inner.max[axis] = p->max[axis].data;
	}
	inner.category = p->category.data;
	inner.mask = p->mask.data;
	inner.flags = p->flags.data;
	stats->ns_prepare += bpi_now_ns() - t0;

	bp_status status = bpi_pipeline_run(indexes, requested, &inner, &p->pairs, stats);
	if (status != BP_OK)
		return status;
	uint64_t t1 = bpi_now_ns();
	status = map_back(p, n, threads);
	if (status != BP_OK)
		return status;
	bpi_pair_buffer_hand_over(&p->pairs, pairs);
	stats->entity_count = n;
	stats->pair_count = pairs->count;
	stats->ns_merge += bpi_now_ns() - t1;
	return BP_OK;
}
