// SPDX-License-Identifier: MIT
// Box, point, sphere and nearest queries in periodic worlds (query.h).
#include <stdlib.h>
#include <string.h>

#include "step/periodic.h"
#include "query/query.h"

// What a query meets (per axis, period P; frame.h states it for users).
// An entity's interval [lo, hi] and a box query's [ql, qh] are moved into the period cell
// as the periodic step moves a box (bpi_periodic_reduce): the min by whole periods into
// [0, P), exactly, then rounded once to float; the max that min plus the extent, in
// double, rounded once. An interval whose extent (in double) is at least P covers the
// torus: that axis always meets. Otherwise take A = [a, a'] and B = [b, b'] in the cell
// (a, b in [0, P), a' < a + P, b' < b + P). A meets B moved by kP iff
//     a - b' <= kP <= a' - b,
// and a - b' > -2P, a' - b < 2P: only k in {-1, 0, 1} can hold. k = 1 needs a' >= P and
// k = -1 needs b' >= P; each is tested as the step tests it, with the interval that
// reaches P moved down by P, each bound rounded once (periodic.c's ghosts). So a box query
// meets exactly what a box with its bounds would pair with, and a point is a box of
// extent 0.
// A sphere's (and nearest's) gap on an axis is the least, over the entity's interval in
// the cell moved by -P, 0 and P (each bound rounded once), of the gap from the centre
// moved into the cell: with c in [0, P) and a' < a + P, a move of 2P or more is farther
// than the move of P the same way. The squares of the gaps are summed in float as a plain
// query sums them; a sphere meets when that is <= fl(r * r), and nearest reports its root.
// The sum is monotone in each gap, so the least gap per axis gives the nearest image.
// Balls (spheres_as_balls), after the bounds test: the ball of the entity's interval in
// the cell, in double, against the query's box or ball moved by -P, 0 or P on each axis
// (the centres lie in [0, 3P/2), so no other move is nearer).
//
// Why the walk finds every entity the test meets: the hierarchy holds the entities where
// they lie, anywhere. A node is entered when, in double, its box may meet the shape on the
// torus: on each axis [nl - qh, nh - ql] holds a multiple of P (a box), or the sum of the
// squares of the node's least per-axis gaps to the centre is within fl(r * r) (a sphere).
// Each gap is loosened by 2^-16 P and the squared distance by 2^-16 of itself and 2^-120,
// far more than the roundings between the real intervals and those the test reads (a few
// ulps of 2P per bound, 2^-22 of a float sum, underflow below 2^-148), so no node holding a
// met entity is left out; the test alone decides. A node is entered at most once, and a
// walk that passes 2n + 64 tests (a shared part may hold more than the view's n entities),
// or hits a sort would take long over, gives way to a scan in index order: a query costs
// at most about three scans, whatever the shapes' size or position.

/// The node tests' margin: in periods per gap, and of a squared distance.
#define NODE_MARGIN 0x1p-16

static _Thread_local uint64_t query_work;

uint64_t bpi_periodic_query_work(void)
{
	return query_work;
}

/// An interval moved into the period cell; `whole` when its extent reaches the period.
typedef struct cell_span {
	float lo, hi;
	bool whole;
} cell_span;

static cell_span cell_span_of(float lo, float hi, float period)
{
	const double extent = (double)hi - lo;
	if (extent >= period)
		return (cell_span){0.0f, 0.0f, true};
	const float a = bpi_periodic_reduce(lo, period);
	return (cell_span){a, (float)((double)a + extent), false};
}

/// x moved by k periods in double, rounded once (k = -1: the bound of a ghost).
static inline float shifted(float x, int k, float period)
{
	return (float)((double)x + k * (double)period);
}

static inline bool spans_meet(float al, float ah, float bl, float bh)
{
	return al <= bh && bl <= ah;
}

/// Whether the query's span meets the entity's on the torus: as they are, or with the
/// one that reaches the period moved down by it.
static bool cell_spans_meet(cell_span q, cell_span e, float period)
{
	if (q.whole || e.whole || spans_meet(q.lo, q.hi, e.lo, e.hi))
		return true;
	if (q.hi >= period && spans_meet(shifted(q.lo, -1, period), shifted(q.hi, -1, period), e.lo, e.hi))
		return true;
	return e.hi >= period && spans_meet(q.lo, q.hi, shifted(e.lo, -1, period), shifted(e.hi, -1, period));
}

/// The least gap from c (in the cell) to the entity's span moved by -1, 0 or 1 periods.
static float cell_gap(float c, cell_span e, float period)
{
	if (e.whole)
		return 0.0f;
	float gap = bpi_axis_gap(c, e.lo, e.hi);
	for (int k = -1; k <= 1; k += 2) {
		const float moved = bpi_axis_gap(c, shifted(e.lo, k, period), shifted(e.hi, k, period));
		gap = moved < gap ? moved : gap;
	}
	return gap;
}

/// x moved by whole periods into about [0, p] in double, within 2^-32 p: the node tests'
/// reduction (fmod, exact, only where the quotient is large).
static double cell_offset(double x, double p)
{
	const double r = fabs(x) < 0x1p20 * p ? x - p * floor(x / p) : fmod(x, p);
	return r < 0 ? r + p : r;
}

/// How far past `base` x lies on the torus, in about [0, p] (both in about [0, p]).
static double offset_past(double x, double base, double p)
{
	const double d = x - base;
	return d - p * floor(d / p);
}

/// How far past `base` (in about [0, p]) the node bound x lies on the torus, in about
/// [0, p]. Near the cell one subtraction and a multiply by 1 / p: their error is far
/// below the node tests' margin, and a quotient that rounds across a whole number lands
/// just below 0 or just below p, where both tests answer as they would at the other end.
static double node_offset(double x, double base, double p, double inverse)
{
	if (fabs(x) >= 0x1p20 * p)
		return offset_past(cell_offset(x, p), base, p);
	const double d = x - base;
	return d - p * floor(d * inverse);
}

static double loosened(double d2)
{
	return d2 + d2 * NODE_MARGIN + 0x1p-120;
}

/// Tests a walk may make before a scan is cheaper: the hierarchy's shared part may
/// hold many more entries than the view has entities.
static uint64_t walk_budget(const bp_view *v)
{
	return 2u * (uint64_t)v->count + 64u;
}

/// A query made ready: its shape in the cell for the entity test, and for the node tests.
typedef struct torus_query {
	const bp_view *v;
	const bpi_periodic_shape *q;
	int dims;
	float period[3];
	cell_span box[3]; ///< a box query's spans
	float centre[3];  ///< a sphere's centre
	double base[3];   ///< node tests: the box's upper end or the sphere's centre, in the cell
	double extent[3]; ///< node tests: the box's extent (0 for a sphere)
	double inverse[3]; ///< node tests: 1 / period
	double reach2;    ///< node tests: fl(r * r), loosened
	uint64_t work;    ///< node and entity tests made
	uint64_t budget;  ///< tests past which the walk gives way to a scan
	const bp_query_filter *filter; ///< prunes the nodes none of whose entities it passes
} torus_query;

static torus_query torus_query_of(const bp_view *v, const bpi_periodic_shape *q)
{
	torus_query t = {.v = v, .q = q, .dims = v->dims, .reach2 = loosened(q->r2), .budget = walk_budget(v)};
	for (int a = 0; a < t.dims; ++a) {
		const float p = v->settings.period[a];
		t.period[a] = p;
		t.inverse[a] = 1.0 / p;
		if (q->sphere) {
			t.centre[a] = bpi_periodic_reduce(q->c[a], p);
			t.base[a] = cell_offset(q->c[a], p);
		} else {
			t.box[a] = cell_span_of(q->lo[a], q->hi[a], p);
			t.base[a] = cell_offset(q->hi[a], p);
			t.extent[a] = (double)q->hi[a] - q->lo[a];
		}
	}
	return t;
}

// ---- the entity test ----------------------------------------------------------------

static void entity_spans(const torus_query *t, uint32_t e, cell_span *s)
{
	for (int a = 0; a < t->dims; ++a)
		s[a] = cell_span_of(t->v->soa.min[a][e], t->v->soa.max[a][e], t->period[a]);
}

/// The squared distance from the centre on the torus, in a plain query's operations.
static float entity_distance2(const torus_query *t, const cell_span *s)
{
	float g[3] = {0.0f, 0.0f, 0.0f};
	for (int a = 0; a < t->dims; ++a)
		g[a] = cell_gap(t->centre[a], s[a], t->period[a]);
	float d2 = g[0] * g[0] + g[1] * g[1];
	if (t->dims == 3)
		d2 += g[2] * g[2];
	return d2;
}

/// The least distance in double from x to [lo, hi] moved by -p, 0 or p.
static double least_gap(double x, double lo, double hi, double p)
{
	double best = INFINITY;
	for (int k = -1; k <= 1; ++k) {
		const double l = lo + k * p, h = hi + k * p;
		best = fmin(best, x < l ? l - x : x > h ? x - h : 0.0);
	}
	return best;
}

/// Whether sphere entity e, as the largest ball centred in its spans, meets the shape.
static bool ball_meets(const torus_query *t, const cell_span *s, uint32_t e)
{
	double radius = INFINITY, d2 = 0.0;
	for (int a = 0; a < t->dims; ++a) {
		const double lo = s[a].whole ? t->v->soa.min[a][e] : s[a].lo;
		const double hi = s[a].whole ? t->v->soa.max[a][e] : s[a].hi;
		radius = fmin(radius, 0.5 * (hi - lo));
		if (s[a].whole || (!t->q->sphere && t->box[a].whole))
			continue;
		const double centre = 0.5 * (lo + hi), p = t->period[a];
		const double gap = t->q->sphere ? least_gap(t->centre[a], centre, centre, p)
		                                : least_gap(centre, t->box[a].lo, t->box[a].hi, p);
		d2 += gap * gap;
	}
	const double reach = t->q->sphere ? (double)t->q->r + radius : radius;
	return d2 <= reach * reach;
}

static bool entity_meets(torus_query *t, uint32_t e)
{
	cell_span s[3];
	entity_spans(t, e, s);
	++t->work;
	bool met = true;
	if (t->q->sphere)
		met = entity_distance2(t, s) <= t->q->r2;
	else
		for (int a = 0; a < t->dims && met; ++a)
			met = cell_spans_meet(t->box[a], s[a], t->period[a]);
	if (met && t->q->balls && (t->v->soa.flags[e] & BP_FLAG_SPHERE))
		met = ball_meets(t, s, e);
	return met;
}

// ---- the node tests (conservative, see above) -------------------------------------------

/// Whether a box query may meet on axis a something in [nl, nh]: [nl - qh, nh - ql] holds
/// a multiple of the period, loosened.
static bool node_axis_meets(const torus_query *t, int a, float nl, float nh)
{
	const double p = t->period[a], margin = p * NODE_MARGIN + 0x1p-126;
	const double reach = ((double)nh - nl) + t->extent[a];
	if (reach >= p - margin)
		return true;
	const double u = node_offset(nl, t->base[a], p, t->inverse[a]);
	return u <= margin || u + reach >= p - margin;
}

/// At most the least gap on the torus from the centre to anything in [nl, nh] on axis a.
static double node_axis_gap(const torus_query *t, int a, float nl, float nh)
{
	const double p = t->period[a], margin = p * NODE_MARGIN + 0x1p-126, extent = (double)nh - nl;
	if (extent >= p - margin)
		return 0.0;
	const double u = node_offset(nl, t->base[a], p, t->inverse[a]);
	if (u + extent >= p - margin)
		return 0.0; // the node wraps round the centre
	const double gap = (u < p - u - extent ? u : p - u - extent) - margin;
	return gap > 0.0 ? gap : 0.0;
}

static double node_distance2(torus_query *t, const bpi_box_arrays *b, uint32_t i)
{
	++t->work;
	double d2 = 0.0;
	for (int a = 0; a < t->dims; ++a) {
		const double gap = node_axis_gap(t, a, b->min[a][i], b->max[a][i]);
		d2 += gap * gap;
	}
	return d2;
}

static bool node_reached(torus_query *t, const bpi_box_arrays *b, uint32_t i)
{
	if (t->q->sphere)
		return node_distance2(t, b, i) <= t->reach2;
	++t->work;
	for (int a = 0; a < t->dims; ++a)
		if (!node_axis_meets(t, a, b->min[a][i], b->max[a][i]))
			return false;
	return true;
}

// ---- box, point and sphere ------------------------------------------------------------

/// The hits of the walk, up to `limit`: past that many, sorting them would cost about a
/// quarter of a scan, which is taken instead.
typedef struct hit_list {
	uint32_t *e;
	size_t size, capacity, limit;
} hit_list;

/// False when the list is at its limit or cannot grow.
static bool hits_push(hit_list *h, uint32_t e)
{
	if (h->size == h->limit)
		return false;
	if (h->size == h->capacity) {
		const size_t grown = BP_MIN(BP_MAX(2 * h->capacity, (size_t)64), h->limit);
		uint32_t *more = bpi_alloc(grown * sizeof *more);
		if (!more)
			return false;
		if (h->size)
			memcpy(more, h->e, h->size * sizeof *more);
		bpi_free(h->e, h->capacity * sizeof *h->e);
		h->e = more;
		h->capacity = grown;
	}
	h->e[h->size++] = e;
	return true;
}

static bool walk_leaf(torus_query *t, const bpi_bvh_part *part, uint32_t leaf, hit_list *hits)
{
	const bpi_bvh *h = part->bvh;
	const uint32_t *order = h->order.data + (size_t)leaf * BPI_BVH_LEAF;
	for (uint32_t lane = 0; lane < h->leaf_size.data[leaf]; ++lane)
		if (!bpi_part_skips(part, order[lane]) && entity_meets(t, order[lane]) && !hits_push(hits, order[lane]))
			return false;
	return true;
}

/// The part's entities the shape meets into hits, depth first; false once hits is full
/// or the walk passed its budget.
static bool walk_part(torus_query *t, const bpi_bvh_part *part, hit_list *hits)
{
	const bpi_bvh *h = part->bvh;
	uint32_t stack[BPI_BVH_STACK], top = 0;
	const bpi_box_arrays root = bpi_node_arrays(h, 0);
	if (node_reached(t, &root, 0) && bpi_node_may_pass(h, 0, 0, t->filter))
		stack[top++] = bpi_bvh_ref(h, 0, 0);
	while (top) {
		if (t->work > t->budget)
			return false;
		const uint32_t ref = stack[--top];
		if (ref & BPI_BVH_LEAF_BIT) {
			if (!walk_leaf(t, part, ref & ~BPI_BVH_LEAF_BIT, hits))
				return false;
			continue;
		}
		const bpi_box_arrays kids = bpi_node_arrays(h, ref);
		for (uint32_t c = 0; c < 2; ++c)
			if (node_reached(t, &kids, c) && bpi_node_may_pass(h, ref, c, t->filter))
				stack[top++] = bpi_bvh_ref(h, ref, c);
	}
	return true;
}

static int compare_u32(const void *x, const void *y)
{
	const uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return (a > b) - (a < b);
}

/// The entities the shape meets, ascending, through the hierarchy; false when the view
/// has none, or the hits passed the list's limit (or its memory), or the walk its budget.
static bool walk_hits(torus_query *t, hit_list *hits)
{
	bpi_bvh_part parts[2];
	(void)bpi_view_ensure(t->v, BPI_VIEW_HIERARCHY);
	const int part_count = bpi_hierarchy_parts(&t->v->hierarchy, parts);
	for (int k = 0; k < part_count; ++k)
		if (!walk_part(t, &parts[k], hits))
			return false;
	if (hits->size > 1)
		qsort(hits->e, hits->size, sizeof *hits->e, compare_u32);
	return part_count > 0;
}

/// Hands emit the accepted entities the shape meets, ascending, until it returns false.
/// The filter runs after the walk, so accept sees each entity at most once.
static void periodic_run(const bp_view *v, const bpi_periodic_shape *q, const bp_query_filter *filter,
	bool (*emit)(uint32_t entity, void *user), void *user)
{
	torus_query t = torus_query_of(v, q);
	t.filter = filter;
	hit_list hits = {.limit = BP_MAX((size_t)v->count / 256, (size_t)256)};
	if (walk_hits(&t, &hits)) {
		for (size_t i = 0; i < hits.size; ++i)
			if (bpi_query_accepts(v, filter, hits.e[i]) && !emit(hits.e[i], user))
				break;
	} else {
		for (uint32_t e = 0; e < v->count; ++e)
			if (entity_meets(&t, e) && bpi_query_accepts(v, filter, e) && !emit(e, user))
				break;
	}
	bpi_free(hits.e, hits.capacity * sizeof *hits.e);
	query_work += t.work;
}

typedef struct out_buffer {
	uint32_t *out;
	size_t capacity, total;
} out_buffer;

static bool to_buffer(uint32_t e, void *user)
{
	out_buffer *b = user;
	if (b->total < b->capacity)
		b->out[b->total] = e;
	b->total++;
	return true;
}

bp_status bpi_periodic_query(const bp_view *v, const bpi_periodic_shape *q, const bp_query_filter *filter,
	uint32_t *out, size_t capacity, size_t *total)
{
	out_buffer b = {out, capacity, 0};
	periodic_run(v, q, filter, to_buffer, &b);
	return bpi_query_finish(b.total, capacity, total);
}

void bpi_periodic_visit(const bp_view *v, const bpi_periodic_shape *q, const bp_query_filter *filter,
	bool (*visit)(uint32_t entity, void *user), void *user)
{
	periodic_run(v, q, filter, visit, user);
}

// ---- nearest --------------------------------------------------------------------------

static void nearest_offer(torus_query *t, uint32_t e, const bp_query_filter *filter, bpi_best_k *best)
{
	cell_span s[3];
	entity_spans(t, e, s);
	++t->work;
	const bp_hit x = {e, entity_distance2(t, s)};
	if ((best->size < best->capacity || bpi_hit_before(x, best->heap[0])) && bpi_query_accepts(t->v, filter, e))
		bpi_best_offer(best, x);
}

/// Whether a node at loosened squared distance d2 may hold one of the k nearest (ties
/// are walked: they may hold a lower index).
static bool nearest_may_hold(const bpi_best_k *best, double d2)
{
	return best->size < best->capacity || d2 <= loosened(best->heap[0].distance);
}

/// k nearest in the part, depth first, nearer child first; false when it passed its budget.
static bool nearest_part(torus_query *t, const bpi_bvh_part *part, const bp_query_filter *filter, bpi_best_k *best)
{
	const bpi_bvh *h = part->bvh;
	struct {
		uint32_t ref;
		double d2;
	} stack[BPI_BVH_STACK];
	const bpi_box_arrays root = bpi_node_arrays(h, 0);
	uint32_t top = 0;
	if (bpi_node_may_pass(h, 0, 0, filter)) {
		stack[0].ref = bpi_bvh_ref(h, 0, 0);
		stack[top++].d2 = node_distance2(t, &root, 0);
	}
	while (top) {
		if (t->work > t->budget)
			return false;
		--top;
		const uint32_t ref = stack[top].ref;
		if (!nearest_may_hold(best, stack[top].d2))
			continue;
		if (ref & BPI_BVH_LEAF_BIT) {
			const uint32_t leaf = ref & ~BPI_BVH_LEAF_BIT, *order = h->order.data + (size_t)leaf * BPI_BVH_LEAF;
			for (uint32_t lane = 0; lane < h->leaf_size.data[leaf]; ++lane)
				if (!bpi_part_skips(part, order[lane]))
					nearest_offer(t, order[lane], filter, best);
			continue;
		}
		const bpi_box_arrays kids = bpi_node_arrays(h, ref);
		const double d[2] = {node_distance2(t, &kids, 0), node_distance2(t, &kids, 1)};
		const uint32_t near = d[0] <= d[1] ? 0u : 1u;
		const uint32_t farther_first[2] = {1u - near, near}; // the nearer child on top
		for (int k = 0; k < 2; ++k)
			if (bpi_node_may_pass(h, ref, farther_first[k], filter)) {
				stack[top].ref = bpi_bvh_ref(h, ref, farther_first[k]);
				stack[top++].d2 = d[farther_first[k]];
			}
	}
	return true;
}

void bpi_periodic_nearest(const bp_view *v, const float *p, const bp_query_filter *filter, bpi_best_k *best)
{
	const bpi_periodic_shape point = {.sphere = true, .c = {p[0], p[1], v->dims == 3 ? p[2] : 0.0f}};
	torus_query t = torus_query_of(v, &point);
	if (filter && filter->accept)
		t.budget = UINT64_MAX; // a scan after the walk would call accept a second time
	bpi_bvh_part parts[2];
	(void)bpi_view_ensure(v, BPI_VIEW_HIERARCHY);
	const int part_count = bpi_hierarchy_parts(&v->hierarchy, parts);
	bool walked = part_count > 0;
	for (int k = 0; k < part_count && walked; ++k)
		walked = nearest_part(&t, &parts[k], filter, best);
	if (!walked)
		best->size = 0;
	for (uint32_t e = 0; e < v->count && !walked; ++e)
		nearest_offer(&t, e, filter, best);
	query_work += t.work;
}
