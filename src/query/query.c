// SPDX-License-Identifier: MIT
// Box, point and sphere queries on a published frame (rays and casts: query_ray.c; k nearest:
// query_nearest.c; periodic worlds: query_periodic.c). All read-only on the view, so any
// number of threads may run them at once.
#include <stdlib.h>
#include <string.h>

#include "query/query.h"

// Box, point, sphere, ray and nearest walk the view's hierarchy (view_hierarchy.h), and are
// linear scans over the snapshot's SoA arrays when the view has none (small views, or no
// memory). The hierarchy and the adjacency are the only state a query writes: made once,
// under the view's lock, by the first query that needs them (bpi_view_ensure) when the
// builder did not make them.

#define SCAN_BLOCK 64

/// hit[j] = box base + j overlaps the closed box [lo, hi], j < m. No branch, so
/// the loop vectorises into a byte mask (perf/README.md, "Queries").
static void box_flags(const bpi_box_arrays *b, int dims, uint32_t base, uint32_t m, const float *lo, const float *hi,
	uint8_t *hit)
{
	// In 2D the z test repeats y with y's bounds: always true when y is.
	const int z = dims == 3 ? 2 : 1;
	const float *ax0 = b->min[0] + base, *ax1 = b->max[0] + base, *ay0 = b->min[1] + base, *ay1 = b->max[1] + base;
	const float *az0 = b->min[z] + base, *az1 = b->max[z] + base;
	const float lx = lo[0], hx = hi[0], ly = lo[1], hy = hi[1], lz = lo[z], hz = hi[z];
	for (uint32_t j = 0; j < m; ++j)
		hit[j] = (uint8_t)((ax0[j] <= hx) & (lx <= ax1[j]) & (ay0[j] <= hy) & (ly <= ay1[j]) & (az0[j] <= hz) &
		                   (lz <= az1[j]));
}

/// hit[j] = box base + j is within sqrt(r2) of c, j < m.
static void sphere_flags(const bpi_box_arrays *b, int dims, uint32_t base, uint32_t m, const float *c, float r2,
	uint8_t *hit)
{
	const float *x0 = b->min[0] + base, *x1 = b->max[0] + base, *y0 = b->min[1] + base, *y1 = b->max[1] + base;
	if (dims == 2) {
		for (uint32_t j = 0; j < m; ++j) {
			float gx = bpi_axis_gap(c[0], x0[j], x1[j]), gy = bpi_axis_gap(c[1], y0[j], y1[j]);
			hit[j] = gx * gx + gy * gy <= r2;
		}
	} else {
		const float *z0 = b->min[2] + base, *z1 = b->max[2] + base;
		for (uint32_t j = 0; j < m; ++j) {
			float gx = bpi_axis_gap(c[0], x0[j], x1[j]), gy = bpi_axis_gap(c[1], y0[j], y1[j]);
			float gz = bpi_axis_gap(c[2], z0[j], z1[j]);
			hit[j] = gx * gx + gy * gy + gz * gz <= r2;
		}
	}
}

// ---- hierarchy results: the `capacity` lowest dense indices, ascending -------------

/// Where a box or sphere query through the hierarchy puts its hits. The walk
/// visits entities in hierarchy order, but the contract is ascending dense
/// indices and, for a short buffer, the lowest ones: out is filled, then kept as
/// a max-heap of the lowest `capacity` indices, and sorted at the end. Sorting
/// costs O(h log h) for h hits, so past `limit` hits the query gives up on the
/// hierarchy and scans (already ascending): it never costs much more than the scan.
typedef struct index_sink {
	uint32_t *out;
	size_t capacity, total, limit;
} index_sink;

static void sift_down_u32(uint32_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && h[l] > h[m])
			m = l;
		if (r < n && h[r] > h[m])
			m = r;
		if (m == i)
			return;
		uint32_t t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void heapify_u32(uint32_t *h, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down_u32(h, n, i);
}

static inline void sink_push(index_sink *s, uint32_t e)
{
	if (s->total < s->capacity) {
		s->out[s->total] = e;
	} else if (s->capacity) {
		if (s->total == s->capacity)
			heapify_u32(s->out, s->capacity);
		if (e < s->out[0]) {
			s->out[0] = e;
			sift_down_u32(s->out, s->capacity, 0);
		}
	}
	s->total++;
}

/// Sorts the first min(capacity, total) results ascending.
static void sink_sort(index_sink *s)
{
	size_t n = BP_MIN(s->total, s->capacity);
	uint32_t *a = s->out;
	if (n <= 32) {
		for (size_t i = 1; i < n; ++i) {
			uint32_t x = a[i];
			size_t j = i;
			for (; j > 0 && a[j - 1] > x; --j)
				a[j] = a[j - 1];
			a[j] = x;
		}
		return;
	}
	if (s->total <= s->capacity)
		heapify_u32(a, n);
	for (size_t m = n; m > 1; --m) {
		uint32_t t = a[0];
		a[0] = a[m - 1];
		a[m - 1] = t;
		sift_down_u32(a, m - 1, 0);
	}
}

// A filter reads each hit's category, mask and kind: arrays in dense order,
// where the hits of one query lie far apart, so each read is a cache miss.
// Gathered in batches and tested in one loop of independent loads, the misses
// overlap instead of coming one after another (perf/README.md, "Queries").
#define FILTER_BATCH 64

typedef struct hit_batch {
	uint32_t e[FILTER_BATCH];
	uint32_t n;
} hit_batch;

/// Keeps the entities of the batch the filter accepts, in order; returns their number.
static uint32_t batch_filter(hit_batch *h, const bp_view *v, const bp_query_filter *f)
{
	uint8_t pass[FILTER_BATCH];
	for (uint32_t i = 0; i < h->n; ++i)
		pass[i] = bpi_query_passes(v, f, h->e[i]);
	uint32_t kept = 0;
	for (uint32_t i = 0; i < h->n; ++i)
		if (pass[i] && (!f->accept || f->accept(h->e[i], f->user)))
			h->e[kept++] = h->e[i];
	h->n = 0;
	return kept;
}

/// The first j in [k, m) with hit[j] != 0, or m: hits are rare, so 8 flags a load.
static inline uint32_t next_hit(const uint8_t *hit, uint32_t m, uint32_t k)
{
	while (k < m) {
		if (k % 8 == 0) {
			const uint32_t end = BP_MIN(k + 8, m);
			uint64_t word = 0;
			memcpy(&word, hit + k, end - k);
			if (!word) {
				k = end;
				continue;
			}
		}
		if (hit[k])
			return k;
		++k;
	}
	return m;
}

/// Pushes order[k] for every hit[k] != 0; through `batch` when there is a filter (flush
/// it at the end with sink_flush). False once the sink passed its limit.
static bool sink_flags(index_sink *s, const uint8_t *hit, uint32_t m, const uint32_t *order, const bp_view *v,
	const bp_query_filter *filter, hit_batch *batch)
{
	for (uint32_t k = next_hit(hit, m, 0); k < m; k = next_hit(hit, m, k + 1)) {
		if (!filter) {
			sink_push(s, order[k]);
		} else {
			batch->e[batch->n++] = order[k];
			if (batch->n == FILTER_BATCH)
				for (uint32_t i = 0, kept = batch_filter(batch, v, filter); i < kept; ++i)
					sink_push(s, batch->e[i]);
		}
	}
	return s->total <= s->limit;
}

static void sink_flush(index_sink *s, const bp_view *v, const bp_query_filter *filter, hit_batch *batch)
{
	if (filter)
		for (uint32_t i = 0, kept = batch_filter(batch, v, filter); i < kept; ++i)
			sink_push(s, batch->e[i]);
}

/// Appends to out (first `capacity`) the accepted entities of the batch; returns the new total.
static size_t emit_batch(hit_batch *batch, const bp_view *v, const bp_query_filter *filter, uint32_t *out,
	size_t capacity, size_t total)
{
	for (uint32_t i = 0, kept = batch_filter(batch, v, filter); i < kept; ++i, ++total)
		if (total < capacity)
			out[total] = batch->e[i];
	return total;
}

/// Appends base + k for every hit[k] != 0 (ascending); with a filter through `batch`
/// (flush it at the end with emit_batch). Returns the new total.
static size_t emit_hits(const uint8_t *hit, uint32_t m, uint32_t base, uint32_t *out, size_t capacity, size_t total,
	const bp_view *v, const bp_query_filter *filter, hit_batch *batch)
{
	for (uint32_t k = next_hit(hit, m, 0); k < m; k = next_hit(hit, m, k + 1)) {
		if (!filter) {
			if (total < capacity)
				out[total] = base + k;
			total++;
		} else {
			batch->e[batch->n++] = base + k;
			if (batch->n == FILTER_BATCH)
				total = emit_batch(batch, v, filter, out, capacity, total);
		}
	}
	return total;
}

enum query_shape { SHAPE_BOX, SHAPE_SPHERE };

/// A box or sphere query, checked.
typedef struct shape {
	enum query_shape kind;
	const float *lo, *hi; ///< box
	float c[3];           ///< sphere
	float r, r2;
	bool balls; ///< sphere entities are tested as balls (bp_query_filter.spheres_as_balls)
} shape;

/// Hits past which sorting them costs about a quarter of a full scan (heap
/// sort ~30 ns per hit at h ~ n / 256, scan ~1 ns per entity). A filter with a
/// callback gets no limit: the scan would call it a second time on the hits
/// the index already showed it.
static size_t sink_limit(const bp_view *v, const bp_query_filter *filter)
{
	if (filter && filter->accept)
		return SIZE_MAX;
	return BP_MAX((size_t)v->count / 256, (size_t)256);
}

static void shape_flags(const shape *q, const bpi_box_arrays *b, int dims, uint32_t base, uint32_t m, uint8_t *hit)
{
	if (q->kind == SHAPE_BOX)
		box_flags(b, dims, base, m, q->lo, q->hi, hit);
	else
		sphere_flags(b, dims, base, m, q->c, q->r2, hit);
}

/// Whether sphere entity e, as the largest ball centred in its bounds, meets the
/// shape: in double, as the pairs test a sphere (shapes.c), the query being a box
/// or a ball of its own centre and radius.
static bool ball_meets(const shape *q, const bp_view *v, uint32_t e)
{
	double centre[3], radius = INFINITY, d2 = 0.0;
	for (int a = 0; a < v->dims; ++a) {
		const double lo = v->soa.min[a][e], hi = v->soa.max[a][e];
		centre[a] = 0.5 * (lo + hi);
		radius = fmin(radius, 0.5 * (hi - lo));
	}
	if (q->kind == SHAPE_BOX) {
		for (int a = 0; a < v->dims; ++a) {
			const double lo = q->lo[a], hi = q->hi[a], p = centre[a];
			const double gap = p < lo ? lo - p : p > hi ? p - hi : 0.0;
			d2 += gap * gap;
		}
		return d2 <= radius * radius;
	}
	for (int a = 0; a < v->dims; ++a) {
		const double d = (double)q->c[a] - centre[a];
		d2 += d * d;
	}
	const double reach = (double)q->r + radius;
	return d2 <= reach * reach;
}

/// Clears hit[j] of the sphere entities among the m hits (entity order[j], or
/// base + j when order is NULL) whose ball the shape misses, when it asks for balls.
static void ball_flags(const shape *q, const bp_view *v, const uint32_t *order, uint32_t base, uint32_t m,
	uint8_t *hit)
{
	if (!q->balls)
		return;
	for (uint32_t j = 0; j < m; ++j) {
		const uint32_t e = order ? order[j] : base + j;
		if (hit[j] && (v->soa.flags[e] & BP_FLAG_SPHERE))
			hit[j] = ball_meets(q, v, e);
	}
}

/// Whether the shape reaches node i of the hierarchy: the same tests as for an
/// entity, monotone in the bounds, so a node it misses holds nothing it meets.
static bool shape_reaches_node(const shape *q, const bpi_box_arrays *nodes, int dims, uint32_t i)
{
	if (q->kind == SHAPE_SPHERE)
		return bpi_box_distance2(nodes, dims, i, q->c) <= q->r2;
	for (int a = 0; a < dims; ++a)
		if (!(nodes->min[a][i] <= q->hi[a] && q->lo[a] <= nodes->max[a][i]))
			return false;
	return true;
}

/// The lanes of node block j the shape reaches, as bits. A box's closed overlap test
/// compares both lanes of each bound at once: comparisons round nothing, so the lanes agree
/// with shape_reaches_node to the bit.
static unsigned shape_reaches_lanes(const shape *q, const bpi_bvh *h, uint32_t j, int dims)
{
#if defined(__SSE2__)
	if (q->kind == SHAPE_BOX) {
		const float *block = bpi_bvh_block(h, j);
		__m128 meets = _mm_castsi128_ps(_mm_set1_epi32(-1));
		for (int a = 0; a < dims; ++a) {
			const __m128 lo = bpi_load_two(block + 2 * a);
			const __m128 hi = bpi_load_two(block + 2 * (3 + a));
			meets = _mm_and_ps(meets, _mm_and_ps(_mm_cmple_ps(lo, _mm_set1_ps(q->hi[a])),
							  _mm_cmple_ps(_mm_set1_ps(q->lo[a]), hi)));
		}
		return (unsigned)_mm_movemask_ps(meets) & 3u;
	}
	// The squared gap summed as the entity test sums it, but never contracted into a fused
	// multiply-add as a compiler may contract that one: compared widened.
	if (q->kind == SHAPE_SPHERE) {
		const float *block = bpi_bvh_block(h, j);
		const __m128 zero = _mm_setzero_ps();
		__m128 d2 = zero;
		for (int a = 0; a < dims; ++a) {
			const __m128 lo = bpi_load_two(block + 2 * a);
			const __m128 hi = bpi_load_two(block + 2 * (3 + a));
			const __m128 c = _mm_set1_ps(q->c[a]);
			const __m128 gap = _mm_add_ps(_mm_max_ps(_mm_sub_ps(lo, c), zero), _mm_max_ps(_mm_sub_ps(c, hi), zero));
			d2 = _mm_add_ps(d2, _mm_mul_ps(gap, gap));
		}
		const float reach2 = q->r2 * (1.0f + BPI_LANE_SLACK) + BPI_LANE_FLOOR;
		return (unsigned)_mm_movemask_ps(_mm_cmple_ps(d2, _mm_set1_ps(reach2))) & 3u;
	}
#endif
	const bpi_box_arrays kids = bpi_node_arrays(h, j);
	return (unsigned)shape_reaches_node(q, &kids, dims, 0) | (unsigned)shape_reaches_node(q, &kids, dims, 1) << 1;
}

/// Calls leaf(leaf index, ctx) for every leaf of the part whose box the shape
/// reaches (closed tests, monotone in the bounds), depth first; stops when it
/// returns false. Returns false when stopped.
static bool shape_leaves(const bpi_bvh *h, const shape *q, int dims, const bp_query_filter *filter,
	bool (*leaf)(uint32_t leaf, void *ctx), void *ctx)
{
	uint32_t stack[BPI_BVH_STACK], top = 0;
	const bpi_box_arrays root = bpi_node_arrays(h, 0);
	if (shape_reaches_node(q, &root, dims, 0) && bpi_node_may_pass(h, 0, 0, filter))
		stack[top++] = bpi_bvh_ref(h, 0, 0);
	while (top) {
		const uint32_t ref = stack[--top];
		if (ref & BPI_BVH_LEAF_BIT) {
			if (!leaf(ref & ~BPI_BVH_LEAF_BIT, ctx))
				return false;
			continue;
		}
		const unsigned reach = shape_reaches_lanes(q, h, ref, dims);
		for (uint32_t c = 0; c < 2; ++c)
			if ((reach >> c & 1u) && bpi_node_may_pass(h, ref, c, filter))
				stack[top++] = bpi_bvh_ref(h, ref, c);
	}
	return true;
}

/// The entities of leaf `leaf` of the part the shape meets, as flags (skipped ones cleared).
static uint32_t leaf_flags(const bp_view *v, const bpi_bvh_part *part, const shape *q, uint32_t leaf, uint8_t *hit)
{
	const bpi_bvh *h = part->bvh;
	const uint32_t size = h->leaf_size.data[leaf];
	const bpi_box_arrays boxes = bpi_leaf_arrays(h, leaf);
	shape_flags(q, &boxes, v->dims, 0, size, hit);
	// Skipped entries first: an out-of-date one may name an index past the view's count.
	if (part->changed)
		for (uint32_t lane = 0; lane < size; ++lane)
			hit[lane] &= !bpi_part_skips(part, h->order.data[(size_t)leaf * BPI_BVH_LEAF + lane]);
	ball_flags(q, v, h->order.data + (size_t)leaf * BPI_BVH_LEAF, 0, size, hit);
	return size;
}

typedef struct shape_sinking {
	const bp_view *v;
	const bpi_bvh_part *part;
	const shape *q;
	const bp_query_filter *filter;
	index_sink *sink;
	hit_batch *batch;
} shape_sinking;

static bool sink_leaf(uint32_t leaf, void *ctx)
{
	const shape_sinking *x = ctx;
	uint8_t hit[BPI_BVH_LEAF];
	const uint32_t size = leaf_flags(x->v, x->part, x->q, leaf, hit);
	return sink_flags(x->sink, hit, size, x->part->bvh->order.data + (size_t)leaf * BPI_BVH_LEAF, x->v, x->filter,
		x->batch);
}

/// Pushes the part's entities the shape meets into the sink; false once the hits
/// pass the sink's limit.
static bool shape_part(const bp_view *v, const bpi_bvh_part *part, const shape *q, const bp_query_filter *filter,
	index_sink *s, hit_batch *batch)
{
	shape_sinking x = {v, part, q, filter, s, batch};
	return shape_leaves(part->bvh, q, v->dims, filter, sink_leaf, &x);
}

/// The shape's accepted entities through the hierarchy, as query_shape_run gives
/// them; false (nothing written that counts) when the hits pass the sink's limit.
static bool query_shape_bvh(const bp_view *v, const bpi_bvh_part *parts, int part_count, const shape *q,
	const bp_query_filter *filter, uint32_t *out, size_t capacity, size_t *total)
{
	index_sink s = {out, capacity, 0, sink_limit(v, filter)};
	hit_batch batch = {.n = 0};
	for (int k = 0; k < part_count; ++k)
		if (!shape_part(v, &parts[k], q, filter, &s, &batch))
			return false;
	sink_flush(&s, v, filter, &batch);
	sink_sort(&s);
	*total = s.total;
	return true;
}

/// Every accepted entity in the shape, ascending, into out (first `capacity`);
/// returns the total.
static size_t query_shape_run(const bp_view *v, const shape *q, const bp_query_filter *filter, uint32_t *out,
	size_t capacity)
{
	size_t found;
	bpi_bvh_part parts[2];
	(void)bpi_view_ensure(v, BPI_VIEW_HIERARCHY);
	const int part_count = bpi_hierarchy_parts(&v->hierarchy, parts);
	if (part_count && query_shape_bvh(v, parts, part_count, q, filter, out, capacity, &found))
		return found;
	uint8_t hit[SCAN_BLOCK];
	hit_batch batch = {.n = 0};
	const bpi_box_arrays b = bpi_dense_arrays(v);
	size_t total = 0;
	for (uint32_t base = 0; base < v->count; base += SCAN_BLOCK) {
		const uint32_t m = BP_MIN(v->count - base, (uint32_t)SCAN_BLOCK);
		shape_flags(q, &b, v->dims, base, m, hit);
		ball_flags(q, v, NULL, base, m, hit);
		total = emit_hits(hit, m, base, out, capacity, total, v, filter, &batch);
	}
	return filter ? emit_batch(&batch, v, filter, out, capacity, total) : total;
}

/// Calls visit on every accepted entity of the batch until it returns false;
/// false then.
static bool visit_batch(hit_batch *batch, const bp_view *v, const bp_query_filter *filter,
	bool (*visit)(uint32_t entity, void *user), void *user)
{
	for (uint32_t i = 0, kept = batch_filter(batch, v, filter); i < kept; ++i)
		if (!visit(batch->e[i], user))
			return false;
	return true;
}

/// Calls visit on every accepted entity in the shape, in index order (dense
/// order when scanning), until it returns false. No sorting, so no hit limit.
/// Hands entity e to visit, or to the batch of the filter; false once visit said stop.
static bool visit_one(uint32_t e, hit_batch *batch, const bp_view *v, const bp_query_filter *filter,
	bool (*visit)(uint32_t entity, void *user), void *user)
{
	if (!filter)
		return visit(e, user);
	batch->e[batch->n++] = e;
	return batch->n < FILTER_BATCH || visit_batch(batch, v, filter, visit, user);
}

typedef struct shape_visiting {
	const bp_view *v;
	const bpi_bvh_part *part;
	const shape *q;
	const bp_query_filter *filter;
	hit_batch *batch;
	bool (*visit)(uint32_t entity, void *user);
	void *user;
} shape_visiting;

static bool visit_leaf(uint32_t leaf, void *ctx)
{
	const shape_visiting *x = ctx;
	uint8_t hit[BPI_BVH_LEAF];
	const uint32_t size = leaf_flags(x->v, x->part, x->q, leaf, hit);
	const uint32_t *order = x->part->bvh->order.data + (size_t)leaf * BPI_BVH_LEAF;
	for (uint32_t lane = 0; lane < size; ++lane)
		if (hit[lane] && !visit_one(order[lane], x->batch, x->v, x->filter, x->visit, x->user))
			return false;
	return true;
}

/// visit_shape_run through one part of the hierarchy; false once visit said stop.
static bool visit_shape_part(const bp_view *v, const bpi_bvh_part *part, const shape *q,
	const bp_query_filter *filter, hit_batch *batch, bool (*visit)(uint32_t entity, void *user), void *user)
{
	shape_visiting x = {v, part, q, filter, batch, visit, user};
	return shape_leaves(part->bvh, q, v->dims, filter, visit_leaf, &x);
}

static void visit_shape_run(const bp_view *v, const shape *q, const bp_query_filter *filter,
	bool (*visit)(uint32_t entity, void *user), void *user)
{
	bpi_bvh_part parts[2];
	(void)bpi_view_ensure(v, BPI_VIEW_HIERARCHY);
	const int part_count = bpi_hierarchy_parts(&v->hierarchy, parts);
	if (part_count) {
		hit_batch batch = {.n = 0};
		for (int k = 0; k < part_count; ++k)
			if (!visit_shape_part(v, &parts[k], q, filter, &batch, visit, user))
				return;
		if (filter)
			visit_batch(&batch, v, filter, visit, user);
		return;
	}
	uint8_t hit[SCAN_BLOCK];
	hit_batch batch = {.n = 0};
	const bpi_box_arrays b = bpi_dense_arrays(v);
	for (uint32_t base = 0; base < v->count; base += SCAN_BLOCK) {
		const uint32_t m = BP_MIN(v->count - base, (uint32_t)SCAN_BLOCK);
		shape_flags(q, &b, v->dims, base, m, hit);
		ball_flags(q, v, NULL, base, m, hit);
		for (uint32_t k = 0; k < m; ++k)
			if (hit[k] && !visit_one(base + k, &batch, v, filter, visit, user))
				return;
	}
	if (filter)
		visit_batch(&batch, v, filter, visit, user);
}

/// Checks a box query's input and makes its shape.
static bp_status box_shape(const bp_view *v, const float *min, const float *max, const bp_query_filter *filter,
	shape *q)
{
	if (!v || !min || !max || !bpi_query_filter_valid(filter))
		return BP_ERR_INVALID_ARGUMENT;
	if (!bpi_all_finite(min, v->dims) || !bpi_all_finite(max, v->dims))
		return BP_ERR_NOT_FINITE;
	for (int axis = 0; axis < v->dims; ++axis)
		if (min[axis] > max[axis])
			return BP_ERR_INVERTED_BOUNDS;
	*q = (shape){.kind = SHAPE_BOX, .lo = min, .hi = max, .balls = filter && filter->spheres_as_balls};
	return BP_OK;
}

/// As box_shape for a sphere query.
static bp_status sphere_shape(const bp_view *v, const float *center, float radius, const bp_query_filter *filter,
	shape *q)
{
	if (!v || !center || !bpi_query_filter_valid(filter))
		return BP_ERR_INVALID_ARGUMENT;
	if (!bpi_all_finite(center, v->dims) || !isfinite(radius))
		return BP_ERR_NOT_FINITE;
	if (radius < 0)
		return BP_ERR_INVALID_ARGUMENT;
	*q = (shape){.kind = SHAPE_SPHERE, .c = {center[0], center[1], v->dims == 3 ? center[2] : 0.0f}, .r = radius,
		.r2 = radius * radius, .balls = filter && filter->spheres_as_balls};
	return BP_OK;
}

// ---- periodic worlds (query_periodic.c) ------------------------------------------

/// The checked shape as a periodic query takes it.
static bpi_periodic_shape periodic_shape(const shape *q, int dims)
{
	bpi_periodic_shape s = {.sphere = q->kind == SHAPE_SPHERE, .r = q->r, .r2 = q->r2, .balls = q->balls};
	for (int a = 0; a < dims; ++a) {
		if (s.sphere)
			s.c[a] = q->c[a];
		else
			s.lo[a] = q->lo[a], s.hi[a] = q->hi[a];
	}
	return s;
}

/// A list query in a periodic world.
static bp_status wrapped_list(const bp_view *v, const shape *q, const bp_query_filter *filter, uint32_t *out,
	size_t capacity, size_t *total)
{
	const bpi_periodic_shape s = periodic_shape(q, v->dims);
	return bpi_periodic_query(v, &s, filter, out, capacity, total);
}

/// A visitor in a periodic world: the entities in ascending order.
static bp_status wrapped_visit(const bp_view *v, const shape *q, const bp_query_filter *filter,
	bool (*visit)(uint32_t entity, void *user), void *user)
{
	const bpi_periodic_shape s = periodic_shape(q, v->dims);
	bpi_periodic_visit(v, &s, filter, visit, user);
	return BP_OK;
}

/// The list form of the overlap queries once the shape is made (`made`: how that went); the
/// buffer's errors come first.
static bp_status overlap_list(const bp_view *v, const shape *q, bp_status made, const bp_query_filter *filter,
	uint32_t *out, size_t capacity, size_t *total)
{
	const bp_status buffer = bpi_view_check_buffer(v, out, capacity, total);
	if (buffer != BP_OK || made != BP_OK)
		return buffer != BP_OK ? buffer : made;
	if (v->settings.periodic)
		return wrapped_list(v, q, filter, out, capacity, total);
	return bpi_query_finish(query_shape_run(v, q, filter, out, capacity), capacity, total);
}

/// The visitor form of the overlap queries once the shape is made.
static bp_status overlap_visit(const bp_view *v, const shape *q, bp_status made, const bp_query_filter *filter,
	bool (*visit)(uint32_t entity, void *user), void *user)
{
	if (made == BP_OK && v->settings.periodic)
		return wrapped_visit(v, q, filter, visit, user);
	if (made == BP_OK)
		visit_shape_run(v, q, filter, visit, user);
	return made;
}

bp_status bp_view_overlap_box(const bp_view *v, const float *min, const float *max,
	const bp_query_filter *filter, uint32_t *out, size_t capacity, size_t *total)
{
	shape q;
	const bp_status made = box_shape(v, min, max, filter, &q);
	return overlap_list(v, &q, made, filter, out, capacity, total);
}

bp_status bp_view_overlap_point(const bp_view *v, const float *point, const bp_query_filter *filter,
	uint32_t *out, size_t capacity, size_t *total)
{
	return bp_view_overlap_box(v, point, point, filter, out, capacity, total);
}

bp_status bp_view_overlap_sphere(const bp_view *v, const float *center, float radius,
	const bp_query_filter *filter, uint32_t *out, size_t capacity, size_t *total)
{
	shape q;
	const bp_status made = sphere_shape(v, center, radius, filter, &q);
	return overlap_list(v, &q, made, filter, out, capacity, total);
}

bp_status bp_view_visit_overlap_box(const bp_view *v, const float *min, const float *max,
	const bp_query_filter *filter, bool (*visit)(uint32_t entity, void *user), void *user)
{
	shape q;
	bp_status status = visit ? box_shape(v, min, max, filter, &q) : BP_ERR_INVALID_ARGUMENT;
	return overlap_visit(v, &q, status, filter, visit, user);
}

bp_status bp_view_visit_overlap_sphere(const bp_view *v, const float *center, float radius,
	const bp_query_filter *filter, bool (*visit)(uint32_t entity, void *user), void *user)
{
	shape q;
	bp_status status = visit ? sphere_shape(v, center, radius, filter, &q) : BP_ERR_INVALID_ARGUMENT;
	return overlap_visit(v, &q, status, filter, visit, user);
}

bp_query_filter bp_query_filter_default(void)
{
	return (bp_query_filter){.category = UINT64_MAX, .mask = UINT64_MAX, .kinds = BP_QUERY_ALL_KINDS,
		.exclude = BP_QUERY_NO_EXCLUDE};
}
