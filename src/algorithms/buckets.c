// SPDX-License-Identifier: MIT
// buckets: the classic static single-level grid. One uniform grid of buckets over the
// scene bounds; each entity lives in the bucket of its min corner and scans forward.
//
// Exactness. coord(x) = clamp(floor((x - origin) * inv), 0, cells - 1), in double,
// is monotone in x (a rounded subtract, a multiply by a positive number, a floor and
// a clamp each are), and every bucket range below comes from it. Let M be the largest
// extent, per axis, of the "small" entities (those no wider than BUCKETS_BIG_EDGES
// edges on every axis). If small a and b overlap, b.min <= a.max and
// b.min = b.max - ext(b) >= a.min - M, so coord(b.min) lies in
// [coord(a.min - M), coord(a.max)] on every axis: b's home bucket is in a's window.
// The window is symmetric in that sense, so an overlapping pair is seen from both
// sides; it is reported only from the one earlier in bucket order: buckets are
// numbered x + y*sx + z*sx*sy and entities are counting-sorted by that number, so
// "earlier" means rows (y, z) before the home row are skipped, the home row is
// scanned from just past the entity, and later rows in full ("forward half").
// Entities wider than BUCKETS_BIG_EDGES edges ("big") would widen every window
// to the whole scene (one giant box would make every entity scan every bucket), so
// they are kept out of M: each big one scans its whole window over the small
// entities, and the big ones among themselves are swept along x, sorted by min x.
// Huge spans (+-FLT_MAX) only make the edge grow to the bucket cap; the clamp keeps
// coordinates in range and, being monotone, keeps the windows exact.
#include "algorithms/index.h"
#include "parallel/parallel.h"
#include "parallel/sort.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/// Entities per chunk of the key, scatter and find passes.
#define BUCKETS_GRAIN 1024
/// Edge = this times the median largest extent when the scene gives no cell size.
/// User CPU seconds of 21 single-thread runs at n = 100K (scene setup included,
/// loaded 2-core machine) for scale 1.0 / 1.25 / 1.5 / 2.0: uniform3 0.50 / 0.52 /
/// 0.55 / 0.69; mixed3 1.11 / 1.10 / 0.77; clustered3 0.86 / 0.93 / 1.12;
/// uniform2 0.30 / 0.27 / 0.29. 1.5 has the smallest sum.
#define BUCKETS_EDGE_SCALE 1.5
/// An entity wider than this many edges on some axis is "big" (see above).
#define BUCKETS_BIG_EDGES 2.0
/// Strided sample of the extents for the median.
#define BUCKETS_SAMPLE 1024

typedef struct buckets_partial {
	double min[3], max[3]; ///< scene bounds of the chunk
	double small_extent[3]; ///< largest extent of a small entity, per axis
	uint32_t big;           ///< big entities in the chunk
} buckets_partial;

/// The grid of one step.
typedef struct buckets_grid {
	int dims;
	double origin[3], inv[3];
	int32_t cells[3]; ///< buckets per axis (1 for unused axes)
	uint32_t stride[3];
	uint32_t count;   ///< buckets; bucket `count` holds the big entities
	double edge;
	double big;       ///< extent above which an entity is big
	double reach[3];  ///< M per axis, inflated to cover rounding (see window_lo)
} buckets_grid;

typedef struct buckets_index {
	bpi_index base; // first member: converts to and from bpi_index *
	BPI_ARRAY(uint32_t) key;   ///< bucket of each entity (bucket_count = big), input order
	BPI_ARRAY(uint32_t) pos;   ///< sorted position of each entity
	BPI_ARRAY(float) rec;      ///< bounds in sorted order: min[dims] then max[dims]
	BPI_ARRAY(uint32_t) order; ///< entity index in sorted order
	BPI_ARRAY(uint32_t) start; ///< bucket_count + 2 offsets (last bucket = big entities)
	BPI_ARRAY(buckets_partial) partials;
	BPI_ARRAY(bpi_sort_item) items; ///< big entities by min x
	bpi_radix_scratch radix;
	buckets_grid grid; ///< the last build's
} buckets_index;


static inline int32_t coord(const buckets_grid *g, int axis, double x)
{
	double t = (x - g->origin[axis]) * g->inv[axis];
	if (!(t > 0))
		return 0;
	if (t >= (double)(g->cells[axis] - 1))
		return g->cells[axis] - 1;
	return (int32_t)t; // t >= 0: truncation is floor
}

// a.min - M, moved down by more than the rounding error of the double subtract
// (2^-53 relative), so it is never above the true value: then every small b that
// overlaps a has b.min >= this, and coord of it <= coord(b.min).
static inline double window_lo(const buckets_grid *g, int axis, float min)
{
	double lo = (double)min - g->reach[axis];
	return lo - fabs(lo) * 0x1p-40;
}

typedef struct buckets_job {
	buckets_index *index;
	const bpi_scene *scene;
	buckets_grid grid;
} buckets_job;

static void bounds_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	buckets_job *job = ctx;
	const bpi_scene *s = job->scene;
	buckets_partial *p = &job->index->partials.data[chunk];
	for (int axis = 0; axis < 3; ++axis) {
		p->min[axis] = INFINITY;
		p->max[axis] = -INFINITY;
	}
	for (int axis = 0; axis < s->dims; ++axis) {
		const float *lo = s->min[axis], *hi = s->max[axis];
		float a = lo[begin], b = hi[begin];
		for (uint32_t i = begin; i < end; ++i) {
			a = BP_MIN(a, lo[i]);
			b = BP_MAX(b, hi[i]);
		}
		p->min[axis] = a;
		p->max[axis] = b;
	}
}

static double median_extent(const bpi_scene *s)
{
	double sample[BUCKETS_SAMPLE];
	uint32_t step = s->count / BUCKETS_SAMPLE + 1, m = 0;
	for (uint32_t i = 0; i < s->count && m < BUCKETS_SAMPLE; i += step) {
		double e = 0;
		for (int axis = 0; axis < s->dims; ++axis)
			e = BP_MAX(e, (double)s->max[axis][i] - s->min[axis][i]);
		sample[m++] = e;
	}
	return m ? bpi_select_double(sample, m, m / 2) : 0;
}

// Edge and buckets per axis: the requested or sampled edge, doubled until the grid
// has at most 2N + 4096 buckets.
static void choose_grid(buckets_grid *g, const bpi_scene *s, const double *min, const double *max)
{
	g->dims = s->dims;
	double edge = s->cell_size > 0 ? s->cell_size : median_extent(s) * BUCKETS_EDGE_SCALE;
	if (!(edge > 0)) {
		// Points: the scene span over n^(1/dims).
		double span = 0;
		for (int axis = 0; axis < s->dims; ++axis)
			span = BP_MAX(span, max[axis] - min[axis]);
		edge = span / BP_MAX(s->dims == 2 ? sqrt((double)s->count) : cbrt((double)s->count), 1.0);
	}
	edge = BP_MAX(edge, 1e-30);
	double cap = BP_MIN(2.0 * s->count + 4096.0, (double)INT32_MAX - 2);
	for (;;) {
		double total = 1;
		for (int axis = 0; axis < s->dims; ++axis)
			total *= floor((max[axis] - min[axis]) / edge) + 1;
		if (total <= cap)
			break;
		edge *= 2;
	}
	g->edge = edge;
	g->big = edge * BUCKETS_BIG_EDGES;
	uint32_t stride = 1;
	for (int axis = 0; axis < 3; ++axis) {
		bool used = axis < s->dims;
		g->origin[axis] = used ? min[axis] : 0;
		g->inv[axis] = 1.0 / edge;
		g->cells[axis] = used ? (int32_t)(floor((max[axis] - min[axis]) / edge) + 1) : 1;
		g->stride[axis] = stride;
		stride *= (uint32_t)g->cells[axis];
	}
	g->count = stride;
}

static void key_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	buckets_job *job = ctx;
	const bpi_scene *s = job->scene;
	const buckets_grid *g = &job->grid;
	buckets_partial *p = &job->index->partials.data[chunk];
	uint32_t *key = job->index->key.data;
	double reach[3] = {0, 0, 0};
	uint32_t big = 0;
	for (uint32_t i = begin; i < end; ++i) {
		double e[3] = {0, 0, 0};
		bool is_big = false;
		uint32_t k = 0;
		for (int axis = 0; axis < s->dims; ++axis) {
			double lo = s->min[axis][i];
			e[axis] = (double)s->max[axis][i] - lo;
			is_big = is_big || e[axis] > g->big;
			k += (uint32_t)coord(g, axis, lo) * g->stride[axis];
		}
		if (is_big) {
			key[i] = g->count;
			++big;
		} else {
			key[i] = k;
			for (int axis = 0; axis < 3; ++axis)
				reach[axis] = BP_MAX(reach[axis], e[axis]);
		}
	}
	for (int axis = 0; axis < 3; ++axis)
		p->small_extent[axis] = reach[axis];
	p->big = big;
}

static void scatter_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	buckets_job *job = ctx;
	const bpi_scene *s = job->scene;
	buckets_index *x = job->index;
	int dims = s->dims, width = 2 * dims;
	for (uint32_t i = begin; i < end; ++i) {
		uint32_t p = x->pos.data[i];
		float *r = &x->rec.data[(size_t)p * width];
		for (int axis = 0; axis < dims; ++axis) {
			r[axis] = s->min[axis][i];
			r[dims + axis] = s->max[axis][i];
		}
		x->order.data[p] = i;
	}
}

// Tests sorted position p against positions [from, to); returns the tests made.
static inline uint64_t scan_range(const buckets_index *x, const bpi_scene *s, bpi_pair_buffer *out, uint32_t p,
	uint32_t from, uint32_t to)
{
	int dims = s->dims, width = 2 * dims;
	const float *a = &x->rec.data[(size_t)p * width];
	uint32_t ia = x->order.data[p];
	for (uint32_t q = from; q < to; ++q) {
		if (!bpi_record_overlap(a, &x->rec.data[(size_t)q * width], dims))
			continue;
		uint32_t ib = x->order.data[q];
		if (s->unfiltered || bpi_scene_accepts(s, ia, ib))
			bpi_pair_push(out, ia, ib);
	}
	return to > from ? to - from : 0;
}

static void find_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	buckets_job *job = ctx;
	const buckets_index *x = job->index;
	const bpi_scene *s = job->scene;
	const buckets_grid *g = &job->grid;
	bpi_pair_buffer *out = &x->base.chunks.buffers[chunk];
	if (bpi_pair_buffer_stopped(out))
		return; // the step ran out of memory in another chunk
	int dims = s->dims, width = 2 * dims;
	uint32_t small_end = x->start.data[g->count], total = s->count;
	uint64_t tests = 0;
	for (uint32_t p = begin; p < end && !out->failed; ++p) {
		const float *a = &x->rec.data[(size_t)p * width];
		bool big = p >= small_end;
		int32_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}, home[3] = {0, 0, 0};
		for (int axis = 0; axis < dims; ++axis) {
			lo[axis] = coord(g, axis, window_lo(g, axis, a[axis]));
			hi[axis] = coord(g, axis, a[dims + axis]);
			home[axis] = coord(g, axis, a[axis]);
		}
		if (small_end > 0) {
			for (int32_t z = lo[2]; z <= hi[2]; ++z) {
				for (int32_t y = lo[1]; y <= hi[1]; ++y) {
					uint32_t row = (uint32_t)y * g->stride[1] + (uint32_t)z * g->stride[2];
					uint32_t to = x->start.data[row + (uint32_t)hi[0] + 1];
					if (big) {
						tests += scan_range(x, s, out, p, x->start.data[row + (uint32_t)lo[0]], to);
						continue;
					}
					// Forward half: rows before the home row hold only earlier entities.
					if (z < home[2] || (z == home[2] && y < home[1]))
						continue;
					uint32_t from = z == home[2] && y == home[1] ? p + 1 : x->start.data[row + (uint32_t)lo[0]];
					tests += scan_range(x, s, out, p, from, to);
				}
			}
		}
		if (big) {
			// Big ones after p, sorted by min x: stop at the first that starts past a.max x.
			uint32_t q_end = p + 1;
			while (q_end < total && x->rec.data[(size_t)q_end * width] <= a[dims])
				++q_end;
			tests += scan_range(x, s, out, p, p + 1, q_end);
		}
	}
	out->tests = tests;
}

static bp_status reserve(buckets_index *x, const bpi_scene *s, uint32_t chunks)
{
	size_t n = s->count;
	bool ok = bpi_array_reserve(&x->key, n) && bpi_array_reserve(&x->pos, n) &&
		  bpi_array_reserve(&x->rec, n * 2 * (size_t)s->dims) && bpi_array_reserve(&x->order, n) &&
		  bpi_array_reserve(&x->partials, chunks);
	return ok ? BP_OK : BP_ERR_OUT_OF_MEMORY;
}

// Sorts the big entities (the tail from `first`) by min x, stably, and rewrites
// their records in that order.
static bp_status sort_big(buckets_index *x, const bpi_scene *s, uint32_t first)
{
	uint32_t count = s->count - first;
	if (count < 2)
		return BP_OK;
	if (!bpi_array_reserve(&x->items, count))
		return BP_ERR_OUT_OF_MEMORY;
	for (uint32_t k = 0; k < count; ++k) {
		uint32_t i = x->order.data[first + k];
		x->items.data[k] = bpi_sort_item_make(bpi_radix_float_key(s->min[0][i]), i);
	}
	bp_status status = bpi_radix_sort_items(&x->radix, x->items.data, count, s->threads);
	if (status != BP_OK)
		return status;
	int dims = s->dims, width = 2 * dims;
	for (uint32_t k = 0; k < count; ++k) {
		uint32_t i = bpi_sort_item_index(x->items.data[k]), p = first + k;
		float *r = &x->rec.data[(size_t)p * width];
		for (int axis = 0; axis < dims; ++axis) {
			r[axis] = s->min[axis][i];
			r[dims + axis] = s->max[axis][i];
		}
		x->order.data[p] = i;
	}
	return BP_OK;
}

static bp_status buckets_build(bpi_index *base, const bpi_scene *scene, bpi_build *build)
{
	buckets_index *x = (buckets_index *)base;
	uint32_t n = scene->count, chunks = bpi_chunk_count(n, BUCKETS_GRAIN);
	bp_status status = reserve(x, scene, chunks);
	if (status != BP_OK || n == 0)
		return status;

	// Bounds, grid, keys.
	buckets_job job = {.index = x, .scene = scene};
	bpi_parallel_for(n, BUCKETS_GRAIN, scene->threads, bounds_chunk, &job);
	double min[3] = {0, 0, 0}, max[3] = {0, 0, 0};
	for (int axis = 0; axis < scene->dims; ++axis) {
		min[axis] = INFINITY;
		max[axis] = -INFINITY;
		for (uint32_t c = 0; c < chunks; ++c) {
			min[axis] = BP_MIN(min[axis], x->partials.data[c].min[axis]);
			max[axis] = BP_MAX(max[axis], x->partials.data[c].max[axis]);
		}
	}
	buckets_grid *g = &job.grid;
	choose_grid(g, scene, min, max);
	if (!bpi_array_reserve(&x->start, (size_t)g->count + 2))
		return BP_ERR_OUT_OF_MEMORY;
	bpi_parallel_for(n, BUCKETS_GRAIN, scene->threads, key_chunk, &job);
	uint32_t big = 0;
	for (uint32_t c = 0; c < chunks; ++c) {
		big += x->partials.data[c].big;
		for (int axis = 0; axis < 3; ++axis)
			g->reach[axis] = BP_MAX(g->reach[axis], x->partials.data[c].small_extent[axis]);
	}
	for (int axis = 0; axis < 3; ++axis)
		g->reach[axis] *= 1 + 0x1p-40;

	// Counting sort. The count and cursor passes are serial; the record scatter
	// after them is parallel. perf on uniform3 100K, 1 thread: find_chunk 79% of
	// the samples, scatter 6%, keys 4%, the serial passes (in
	// buckets_build) 1.3%: not worth parallel histograms.
	uint32_t *start = x->start.data;
	memset(start, 0, ((size_t)g->count + 2) * sizeof *start);
	for (uint32_t i = 0; i < n; ++i)
		start[x->key.data[i] + 1]++;
	uint64_t occupied = 0;
	// The list of big entities counts as one more bucket when it holds any.
	for (uint32_t b = 0; b <= g->count; ++b) {
		occupied += start[b + 1] != 0;
		start[b + 1] += start[b];
	}
	for (uint32_t i = 0; i < n; ++i)
		x->pos.data[i] = start[x->key.data[i]]++;
	// The cursor pass moved each start to the next bucket's: shift back.
	for (uint32_t b = g->count + 1; b > 0; --b)
		start[b] = start[b - 1];
	start[0] = 0;
	bpi_parallel_for(n, BUCKETS_GRAIN, scene->threads, scatter_chunk, &job);
	status = sort_big(x, scene, n - big);
	if (status != BP_OK)
		return status;
	x->grid = *g;
	build->chunks = chunks;
	build->cell_count = occupied;
	build->cell_size = (float)fmin(g->edge, FLT_MAX);
	for (int axis = 0; axis < 3; ++axis)
		build->cell_origin[axis] = (float)g->origin[axis];
	return BP_OK;
}

static bp_status buckets_find(bpi_index *base, const bpi_scene *scene, bpi_build *build)
{
	(void)build;
	buckets_index *x = (buckets_index *)base;
	buckets_job job = {.index = x, .scene = scene, .grid = x->grid};
	bpi_parallel_for(scene->count, BUCKETS_GRAIN, scene->threads, find_chunk, &job);
	return BP_OK;
}

static void buckets_release(bpi_index *base)
{
	buckets_index *x = (buckets_index *)base;
	bpi_array_free(&x->key);
	bpi_array_free(&x->pos);
	bpi_array_free(&x->rec);
	bpi_array_free(&x->order);
	bpi_array_free(&x->start);
	bpi_array_free(&x->partials);
	bpi_array_free(&x->items);
	bpi_radix_sort_free(&x->radix);
}

const bpi_algorithm bpi_buckets_algorithm = {
	.name = "buckets",
	.index_size = sizeof(buckets_index),
	.release = buckets_release,
	.build = buckets_build,
	.find = buckets_find,
};
