// SPDX-License-Identifier: MIT
// What the view query files share: bounds in dense or index order, input checks, the query
// filter's test, the bounded best-k heap of hits, and the periodic queries query.c hands
// to query_periodic.c.
#ifndef BP_QUERY_H
#define BP_QUERY_H

#include <float.h>
#include <math.h>

#include "algorithms/index.h"
#include "view/view.h"

/// How far a test of a hierarchy's lanes is widened past what rounding can move its value:
/// this share of the value itself plus the least normal float. A lane test that computes in
/// another order than the entity test (several lanes at once, a reciprocal for a quotient)
/// stays a superset of it, so a walk that prunes by it misses nothing the entity test keeps.
#define BPI_LANE_SLACK 0x1p-20f
#define BPI_LANE_FLOOR FLT_MIN

#if defined(__SSE2__)
#include <emmintrin.h>
#include <string.h>

/// Two floats (one bound of a node block's two lanes) into lanes 0 and 1, zeros above.
static inline __m128 bpi_load_two(const float *p)
{
	double two;
	memcpy(&two, p, sizeof two);
	return _mm_castpd_ps(_mm_set_sd(two));
}
#endif

/// Bounds arrays in some order: the snapshot's (dense order) or a block of the
/// hierarchy's. z arrays are NULL in 2D.
typedef struct bpi_box_arrays {
	const float *min[3];
	const float *max[3];
} bpi_box_arrays;

static inline bpi_box_arrays bpi_dense_arrays(const bp_view *v)
{
	return (bpi_box_arrays){
		{v->soa.min[0], v->soa.min[1], v->soa.min[2]}, {v->soa.max[0], v->soa.max[1], v->soa.max[2]}};
}


/// The bounds of a block of `lanes` boxes (bvh.h): each bound `lanes` floats.
static inline bpi_box_arrays bpi_lane_arrays(const float *block, uint32_t lanes)
{
	return (bpi_box_arrays){
		{block, block + lanes, block + 2 * lanes}, {block + 3 * lanes, block + 4 * lanes, block + 5 * lanes}};
}

/// Node block j: the boxes of its two children, at indices 0 and 1.
static inline bpi_box_arrays bpi_node_arrays(const bpi_bvh *h, uint32_t block)
{
	return bpi_lane_arrays(bpi_bvh_block(h, block), 2);
}

/// Leaf k's block, its entities' boxes at indices 0 .. leaf_size[k] - 1.
static inline bpi_box_arrays bpi_leaf_arrays(const bpi_bvh *h, uint32_t leaf)
{
	return bpi_lane_arrays(bpi_bvh_leaf(h, leaf), BPI_BVH_LEAF);
}

static inline bool bpi_all_finite(const float *v, int dims)
{
	for (int axis = 0; axis < dims; ++axis)
		if (!isfinite(v[axis]))
			return false;
	return true;
}

/// Distance from c to the interval [lo, hi] along one axis. Branch-free (at
/// most one of the two terms is positive), so the scans vectorise
/// (perf/README.md, "Queries").
/// The value is exactly lo - c, c - hi or 0, as with branches.
static inline float bpi_axis_gap(float c, float lo, float hi)
{
	float below = lo - c, above = c - hi;
	return (below > 0.0f ? below : 0.0f) + (above > 0.0f ? above : 0.0f);
}

/// Reports the total and whether the caller's buffer held it all.
static inline bp_status bpi_query_finish(size_t total, size_t capacity, size_t *out_total)
{
	*out_total = total;
	return BPI_BUFFER_STATUS(total, capacity);
}

/// A filter a query can use: NULL or with known kinds bits.
static inline bool bpi_query_filter_valid(const bp_query_filter *f)
{
	return !f || !(f->kinds & ~(uint32_t)BP_QUERY_ALL_KINDS);
}

/// The filter rule of frame.h less the callback: category and mask (no test when
/// both are all bits, as in the default filter), kind and exclusion (f not NULL).
/// Combined with & and | rather than || and &&: one branch per entity, and one more
/// where the filter excludes a handle.
static inline bool bpi_query_passes(const bp_view *v, const bp_query_filter *f, uint32_t e)
{
	const uint32_t kind = BP_QUERY_DYNAMIC + (uint32_t)(v->soa.flags[e] & BP_FLAG_STATIC); // STATIC = DYNAMIC + 1
	const bool all_bits = (f->category & f->mask) == UINT64_MAX;
	return (all_bits | (((f->category & v->soa.mask[e]) != 0) & ((v->soa.category[e] & f->mask) != 0))) &
	       ((f->kinds & kind) != 0) & (e != f->exclude) &&
	       (!f->exclude_entity.index1 || v->soa.entity[e].index1 != f->exclude_entity.index1 ||
		       v->soa.entity[e].generation != f->exclude_entity.generation);
}

/// Whether lane `lane` of node block j may hold an entity the filter passes: the test of
/// bpi_query_passes on the OR of its entities' categories and masks and on their kinds, so
/// a node it fails holds none (a superset test). NULL, or no summaries: may.
static inline bool bpi_node_may_pass(const bpi_bvh *h, uint32_t block, uint32_t lane, const bp_query_filter *f)
{
	if (!f || !h->summarized)
		return true;
	const bpi_bvh_summary *s = bpi_bvh_summary_of(h, block, lane);
	const bool all_bits = (f->category & f->mask) == UINT64_MAX;
	return (all_bits || ((f->category & s->mask) != 0 && (s->category & f->mask) != 0)) && (f->kinds & s->kinds) != 0;
}

/// The whole filter rule of frame.h; NULL accepts everything. The callback
/// goes last so that it only ever sees entities every cheap test accepted.
static inline bool bpi_query_accepts(const bp_view *v, const bp_query_filter *f, uint32_t e)
{
	return !f || (bpi_query_passes(v, f, e) && (!f->accept || f->accept(e, f->user)));
}

/// The errors of a ray query's arguments (frame.h), BP_OK when it may run.
bp_status bpi_ray_check(const bp_view *v, const float *origin, const float *dir, float max_t,
	const bp_query_filter *filter);
/// The checks of bp_view_cast_box_closest before any work: its errors, in its order.
bp_status bpi_box_cast_check(const bp_view *v, const float *min, const float *max, const float *dir, float max_t,
	const bp_query_filter *filter);
/// The checks of bp_view_nearest on the view, point and filter.
bp_status bpi_nearest_check(const bp_view *v, const float *point, const bp_query_filter *filter);

/// Squared distance from point p to box j (the same operations, in the same
/// order, as sphere_flags, so every path agrees to the bit).
static inline float bpi_box_distance2(const bpi_box_arrays *b, int dims, uint32_t j, const float *p)
{
	float gx = bpi_axis_gap(p[0], b->min[0][j], b->max[0][j]);
	float gy = bpi_axis_gap(p[1], b->min[1][j], b->max[1][j]);
	float d2 = gx * gx + gy * gy;
	if (dims == 3) {
		float gz = bpi_axis_gap(p[2], b->min[2][j], b->max[2][j]);
		d2 += gz * gz;
	}
	return d2;
}

/// Hits in (distance, index) order: the order of every hit list.
static inline bool bpi_hit_before(bp_hit a, bp_hit b)
{
	return a.distance < b.distance || (a.distance == b.distance && a.index < b.index);
}

/// Whether hit a sits above hit b in a heap of hits: the earlier (bpi_hit_before) in a
/// min-heap, the later in a max-heap. Every heap of hits is ordered by this one test.
static inline bool bpi_hit_above(bp_hit a, bp_hit b, bool max_heap)
{
	return max_heap ? bpi_hit_before(b, a) : bpi_hit_before(a, b);
}

/// Moves h[i] up to its place in the heap h[0 .. i].
static inline void bpi_hit_sift_up(bp_hit *h, size_t i, bool max_heap)
{
	for (size_t parent; i > 0 && bpi_hit_above(h[i], h[parent = (i - 1) / 2], max_heap); i = parent) {
		const bp_hit t = h[parent];
		h[parent] = h[i];
		h[i] = t;
	}
}

/// Moves h[i] down to its place in the heap h[0, n).
static inline void bpi_hit_sift_down(bp_hit *h, size_t n, size_t i, bool max_heap)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && bpi_hit_above(h[l], h[m], max_heap))
			m = l;
		if (r < n && bpi_hit_above(h[r], h[m], max_heap))
			m = r;
		if (m == i)
			return;
		const bp_hit t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/// The `capacity` smallest hits offered, as a max-heap in heap[0, size).
typedef struct bpi_best_k {
	bp_hit *heap;
	size_t size, capacity;
} bpi_best_k;

/// Keeps the `capacity` smallest hits offered.
void bpi_best_offer(bpi_best_k *b, bp_hit x);
/// Heap sort in place: ascending by (distance, index).
void bpi_best_sort(bpi_best_k *b);

// ---- periodic worlds (query_periodic.c): each entity tested on its bounds moved into the
// period cell as the periodic step moves them, the hierarchy walked once on the torus.

/// A checked box or sphere query.
typedef struct bpi_periodic_shape {
	bool sphere;        ///< false: the box [lo, hi]
	float lo[3], hi[3]; ///< box
	float c[3];         ///< sphere centre
	float r, r2;        ///< sphere radius and fl(r * r)
	bool balls;         ///< bp_query_filter.spheres_as_balls
} bpi_periodic_shape;

/// The accepted entities the shape meets, ascending, the first `capacity` into out,
/// their number into *total; BP_ERR_OUT_OF_RANGE when a buffer with room was short.
bp_status bpi_periodic_query(const bp_view *v, const bpi_periodic_shape *q, const bp_query_filter *filter,
	uint32_t *out, size_t capacity, size_t *total);

/// Calls visit on the accepted entities the shape meets, ascending, until it returns false.
void bpi_periodic_visit(const bp_view *v, const bpi_periodic_shape *q, const bp_query_filter *filter,
	bool (*visit)(uint32_t entity, void *user), void *user);

/// Offers best the accepted entities by squared distance from p on the torus: it ends
/// holding the k nearest a scan would find (best->capacity > 0).
void bpi_periodic_nearest(const bp_view *v, const float *p, const bp_query_filter *filter, bpi_best_k *best);

/// Test hook: the node and entity tests the calling thread's periodic queries made so
/// far (a scan of n entities counts n), so a test can bound a query's work by the view's size.
uint64_t bpi_periodic_query_work(void);

#endif
