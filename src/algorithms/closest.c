// SPDX-License-Identifier: MIT
// The closest-pair finder (BP_ALGO_CLOSEST): divide and conquer in the manner of the
// closest-pair algorithm. Entities are sorted by min on one axis; each half is solved, then
// only the strip where they meet.
//
// Sort. The axis is the one of largest centre spread (from a strided sample). The
// order is kept across steps: when the count and axis are unchanged, last step's
// order is fixed with an insertion sort (nearly sorted when entities move a little),
// abandoned for a full radix sort past CLOSEST_MOVES_PER_ENTITY * N moves. Both sort
// by (radix key of min, entity index), a total order, so either path gives the same
// order and the output does not depend on the history.
//
// Recursion, bottom up. Leaves of CLOSEST_LEAF sorted positions are brute forced.
// Merging segments L = [s, m) and R = [m, e): every pair inside L or R is already
// found, so only pairs a in L, b in R are left. Sorted by min, a.min <= b.min <=
// b.max, so on the axis they overlap iff b.min <= a.max. The smallest min on the
// right is R's first (the split), so only left entities with a.max >= split can
// meet anything, and only right entities with b.min <= the largest left max: those
// are the two strips. As the closest-pair algorithm sorts its strip on the other
// coordinate, the strips are sorted by min on the axis of second largest spread
// and swept against each other there (a two-set sort and sweep), so each cross
// pair is tested only when it overlaps on both axes: far fewer tests than every
// right entity up to a.max on the first axis alone (perf/README.md, "closest: the strip sweep").
// Warning: the strips are as wide as the boxes are long: one giant box is in
// every strip at every level (still exact), and a scene of many boxes spanning
// both axes degenerates toward O(n^2).
//
// Parallel. The leaves, then each level's merges, are cut into fixed chunks of
// about CLOSEST_GRAIN positions (independent of the thread count) and run with
// bpi_parallel_for; each chunk writes its own buffer, and the buffers are merged
// leaves first, then level by level, each in position order. A merge is one task,
// so the top levels (one or two merges) run on one or two threads, and the
// insertion sort is serial.
#include "algorithms/closest.h"
#include "parallel/parallel.h"
#include "parallel/sort.h"

#include <math.h>

/// Brute-forced leaf segment.
#define CLOSEST_LEAF 32
/// Positions per chunk, for the leaves and for each merge level (a multiple of CLOSEST_LEAF).
#define CLOSEST_GRAIN 2048
/// More insertion-sort moves than this times N: the order is far from last
/// step's, and the radix sort is cheaper.
#define CLOSEST_MOVES_PER_ENTITY 4
/// Strided sample for the choice of axis.
#define CLOSEST_SAMPLE 1024

typedef struct closest_index {
	bpi_index base; // first member: converts to and from bpi_index *
	BPI_ARRAY(bpi_sort_item) items; ///< (key of min on the axis, entity) in sorted order, kept across steps
	uint32_t sorted_count; ///< entities `items` held sorted after the last step; UINT32_MAX: none
	int sorted_axis;
	BPI_ARRAY(float) rec; ///< bounds in sorted order: min[dims] then max[dims]
	BPI_ARRAY(bpi_sort_item) strip; ///< a merge of [s, e) sorts its strips in strip[s, e)
	bpi_radix_scratch radix;
	int axis, axis2; ///< the last build's sort and strip axes (see closest_job)
	uint64_t full_sorts; ///< steps that took the radix sort (for tests)
} closest_index;

typedef struct closest_job {
	closest_index *index;
	const bpi_scene *scene;
	int axis;
	int axis2;          ///< the strips' sweep axis: second largest centre spread
	uint32_t segment;   ///< merge level: segment size (halves of segment / 2)
	uint32_t first_buf; ///< buffer of this pass's chunk 0
} closest_job;

static void choose_axes(const bpi_scene *s, int *first, int *second)
{
	float lo[3], hi[3];
	for (int axis = 0; axis < 3; ++axis) {
		lo[axis] = INFINITY;
		hi[axis] = -INFINITY;
	}
	uint32_t step = s->count / CLOSEST_SAMPLE + 1;
	for (uint32_t i = 0; i < s->count; i += step)
		for (int axis = 0; axis < s->dims; ++axis) {
			float centre = s->min[axis][i] * 0.5f + s->max[axis][i] * 0.5f;
			lo[axis] = BP_MIN(lo[axis], centre);
			hi[axis] = BP_MAX(hi[axis], centre);
		}
	int best = 0, next = -1;
	for (int axis = 1; axis < s->dims; ++axis)
		if ((double)hi[axis] - lo[axis] > (double)hi[best] - lo[best])
			best = axis;
	for (int axis = 0; axis < s->dims; ++axis)
		if (axis != best && (next < 0 || (double)hi[axis] - lo[axis] > (double)hi[next] - lo[next]))
			next = axis;
	*first = best;
	*second = next;
}


typedef struct key_job {
	bpi_sort_item *items;
	const float *min;
	bool keep_order;
} key_job;

static void key_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const key_job *job = ctx;
	for (uint32_t p = begin; p < end; ++p) {
		uint32_t i = job->keep_order ? bpi_sort_item_index(job->items[p]) : p;
		job->items[p] = bpi_sort_item_make(bpi_radix_float_key(job->min[i]), i);
	}
}

static void record_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	closest_job *job = ctx;
	const bpi_scene *s = job->scene;
	int dims = s->dims;
	for (uint32_t p = begin; p < end; ++p) {
		uint32_t i = bpi_sort_item_index(job->index->items.data[p]);
		float *r = &job->index->rec.data[(size_t)p * 2 * dims];
		for (int axis = 0; axis < dims; ++axis) {
			r[axis] = s->min[axis][i];
			r[dims + axis] = s->max[axis][i];
		}
	}
}

// The sorted order of this step into index->items and index->rec.
static bp_status sort_entities(closest_index *x, const bpi_scene *s, int axis)
{
	uint32_t n = s->count;
	bool incremental = bpi_scene_coherent(s) && x->sorted_count == n && x->sorted_axis == axis;
	x->sorted_count = UINT32_MAX;
	key_job keys = {x->items.data, s->min[axis], incremental};
	bpi_parallel_for(n, CLOSEST_GRAIN, s->threads, key_chunk, &keys);
	if (!incremental || !bpi_insertion_sort_items(x->items.data, n, (uint64_t)CLOSEST_MOVES_PER_ENTITY * n)) {
		// From index order: the stable radix sort then gives the (key, index) order.
		keys.keep_order = false;
		bpi_parallel_for(n, CLOSEST_GRAIN, s->threads, key_chunk, &keys);
		bp_status status = bpi_radix_sort_items(&x->radix, x->items.data, n, s->threads);
		if (status != BP_OK)
			return status;
		x->full_sorts++;
	}
	x->sorted_count = n;
	x->sorted_axis = axis;
	return BP_OK;
}

static inline void report(const closest_index *x, const bpi_scene *s, bpi_pair_buffer *out, uint32_t p, uint32_t q)
{
	uint32_t a = bpi_sort_item_index(x->items.data[p]), b = bpi_sort_item_index(x->items.data[q]);
	if (s->unfiltered || bpi_scene_accepts(s, a, b))
		bpi_pair_push(out, a, b);
}

static void leaf_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	closest_job *job = ctx;
	const closest_index *x = job->index;
	const bpi_scene *s = job->scene;
	bpi_pair_buffer *out = &x->base.chunks.buffers[job->first_buf + chunk];
	if (bpi_pair_buffer_stopped(out))
		return; // the step ran out of memory in another chunk
	int dims = s->dims, width = 2 * dims, ax = job->axis;
	uint64_t tests = 0;
	for (uint32_t leaf = begin; leaf < end && !out->failed; leaf += CLOSEST_LEAF) {
		uint32_t leaf_end = BP_MIN(leaf + CLOSEST_LEAF, end);
		for (uint32_t p = leaf; p < leaf_end; ++p) {
			const float *a = &x->rec.data[(size_t)p * width];
			// Sorted by min: past the first q with min > a.max nothing overlaps.
			for (uint32_t q = p + 1; q < leaf_end; ++q) {
				const float *b = &x->rec.data[(size_t)q * width];
				if (b[ax] > a[dims + ax])
					break;
				++tests;
				if (bpi_record_overlap(a, b, dims))
					report(x, s, out, p, q);
			}
		}
	}
	out->tests = tests;
}

// In-place heapsort of strip items by (key on the second axis, position): no
// allocation, and a unique result since positions differ.
static void heap_sift(bpi_sort_item *a, uint32_t root, uint32_t n)
{
	bpi_sort_item item = a[root];
	for (uint32_t child; (child = 2 * root + 1) < n; root = child) {
		if (child + 1 < n && a[child + 1] > a[child])
			++child;
		if (a[child] <= item)
			break;
		a[root] = a[child];
	}
	a[root] = item;
}

static void heap_sort(bpi_sort_item *a, uint32_t n)
{
	for (uint32_t i = n / 2; i-- > 0;)
		heap_sift(a, i, n);
	for (uint32_t i = n; i-- > 1;) {
		bpi_sort_item top = a[0];
		a[0] = a[i];
		a[i] = top;
		heap_sift(a, 0, i);
	}
}

// Tests `p` against strip items from `from` while their min on the second axis
// is <= p's max there.
static inline uint64_t strip_scan(const closest_index *x, const bpi_scene *s, bpi_pair_buffer *out, uint32_t p,
	const bpi_sort_item *strip, uint32_t from, uint32_t count, int ax2)
{
	int dims = s->dims, width = 2 * dims;
	const float *a = &x->rec.data[(size_t)p * width];
	uint64_t tests = 0;
	for (uint32_t k = from; k < count; ++k) {
		uint32_t q = bpi_sort_item_index(strip[k]);
		const float *b = &x->rec.data[(size_t)q * width];
		if (b[ax2] > a[dims + ax2])
			break;
		++tests;
		if (bpi_record_overlap(a, b, dims))
			report(x, s, out, p, q);
	}
	return tests;
}

// Merges segments [start, mid) and [mid, stop): the strips, sorted by min on the
// second axis, swept against each other as in a two-set sort and sweep.
static uint64_t merge_segments(const closest_index *x, const bpi_scene *s, bpi_pair_buffer *out, int ax, int ax2,
	uint32_t start, uint32_t mid, uint32_t stop)
{
	int dims = s->dims, width = 2 * dims;
	const float *rec = x->rec.data;
	float split = rec[(size_t)mid * width + ax], reach = -INFINITY;
	bpi_sort_item *left = &x->strip.data[start], *right = &x->strip.data[mid];
	uint32_t nl = 0, nr = 0;
	for (uint32_t p = start; p < mid; ++p) {
		float hi = rec[(size_t)p * width + dims + ax];
		reach = BP_MAX(reach, hi);
		if (hi >= split)
			left[nl++] = bpi_sort_item_make(bpi_radix_float_key(rec[(size_t)p * width + ax2]), p);
	}
	for (uint32_t q = mid; q < stop && rec[(size_t)q * width + ax] <= reach; ++q)
		right[nr++] = bpi_sort_item_make(bpi_radix_float_key(rec[(size_t)q * width + ax2]), q);
	if (nl == 0 || nr == 0)
		return 0;
	heap_sort(left, nl);
	heap_sort(right, nr);
	// Each cross pair overlapping on the second axis is tested once, by whichever
	// comes first in the merged order (ties: the left one); the other is still ahead.
	uint64_t tests = 0;
	uint32_t i = 0, j = 0;
	while (i < nl && j < nr) {
		if (bpi_sort_item_key(left[i]) <= bpi_sort_item_key(right[j]))
			tests += strip_scan(x, s, out, bpi_sort_item_index(left[i++]), right, j, nr, ax2);
		else
			tests += strip_scan(x, s, out, bpi_sort_item_index(right[j++]), left, i, nl, ax2);
	}
	return tests;
}

static void merge_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	closest_job *job = ctx;
	const closest_index *x = job->index;
	const bpi_scene *s = job->scene;
	bpi_pair_buffer *out = &x->base.chunks.buffers[job->first_buf + chunk];
	if (bpi_pair_buffer_stopped(out))
		return; // the step ran out of memory in another chunk
	uint32_t n = s->count, half = job->segment / 2;
	uint64_t tests = 0;
	for (uint32_t k = begin; k < end && !out->failed; ++k) {
		uint64_t start = (uint64_t)k * job->segment, mid = start + half;
		if (mid >= n)
			break;
		uint32_t stop = (uint32_t)BP_MIN(start + job->segment, n);
		tests += merge_segments(x, s, out, job->axis, job->axis2, (uint32_t)start, (uint32_t)mid, stop);
	}
	out->tests = tests;
}

static uint32_t merges_per_chunk(uint64_t segment)
{
	return segment >= CLOSEST_GRAIN ? 1 : (uint32_t)(CLOSEST_GRAIN / segment);
}

static bp_status closest_build(bpi_index *base, const bpi_scene *scene, bpi_build *build)
{
	closest_index *x = (closest_index *)base;
	uint32_t n = scene->count;
	// Buffers: one per leaf chunk, then per level one per group of merges
	// covering about CLOSEST_GRAIN positions.
	uint32_t buffers = bpi_chunk_count(n, CLOSEST_GRAIN);
	for (uint64_t segment = 2 * CLOSEST_LEAF; segment / 2 < n; segment *= 2)
		buffers += bpi_chunk_count(bpi_chunk_count(n, (uint32_t)segment), merges_per_chunk(segment));
	// Keeps last step's order when the count is unchanged: the capacity suffices.
	// A grown array holds none of it, also when a later reserve of this step fails.
	if (x->items.capacity < n)
		x->sorted_count = UINT32_MAX;
	if (!bpi_array_reserve(&x->items, n) || !bpi_array_reserve(&x->rec, (size_t)n * 2 * scene->dims) ||
		!bpi_array_reserve(&x->strip, n) ||
		bpi_radix_sort_reserve(&x->radix, n) != BP_OK)
		return BP_ERR_OUT_OF_MEMORY;
	closest_job job = {.index = x, .scene = scene};
	choose_axes(scene, &job.axis, &job.axis2);
	bp_status status = sort_entities(x, scene, job.axis);
	if (status != BP_OK)
		return status;
	bpi_parallel_for(n, CLOSEST_GRAIN, scene->threads, record_chunk, &job);
	x->axis = job.axis;
	x->axis2 = job.axis2;
	build->chunks = buffers;
	return BP_OK;
}

static bp_status closest_find(bpi_index *base, const bpi_scene *scene, bpi_build *build)
{
	(void)build;
	closest_index *x = (closest_index *)base;
	uint32_t n = scene->count;
	closest_job job = {.index = x, .scene = scene, .axis = x->axis, .axis2 = x->axis2};
	bpi_parallel_for(n, CLOSEST_GRAIN, scene->threads, leaf_chunk, &job);
	job.first_buf = bpi_chunk_count(n, CLOSEST_GRAIN);
	for (uint64_t segment = 2 * CLOSEST_LEAF; segment / 2 < n && !bpi_budget_stopped(scene->budget); segment *= 2) {
		job.segment = (uint32_t)segment;
		uint32_t merges = bpi_chunk_count(n, (uint32_t)segment), per = merges_per_chunk(segment);
		bpi_parallel_for(merges, per, scene->threads, merge_chunk, &job);
		job.first_buf += bpi_chunk_count(merges, per);
	}
	return BP_OK;
}

static void closest_init(bpi_index *base)
{
	((closest_index *)base)->sorted_count = UINT32_MAX;
}

static void closest_release(bpi_index *base)
{
	closest_index *x = (closest_index *)base;
	bpi_array_free(&x->items);
	bpi_array_free(&x->rec);
	bpi_array_free(&x->strip);
	bpi_radix_sort_free(&x->radix);
}

uint64_t bpi_closest_full_sorts(const bpi_index *index)
{
	return ((const closest_index *)index)->full_sorts;
}

const bpi_algorithm bpi_closest_algorithm = {
	.name = "closest",
	.index_size = sizeof(closest_index),
	.init = closest_init,
	.release = closest_release,
	.build = closest_build,
	.find = closest_find,
};
