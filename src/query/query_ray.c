// SPDX-License-Identifier: MIT
// Rays and box casts on a view: the closest hit, every hit, and hits visited in order. A ray is
// the cast of a zero-size box, so both run through one sweep and agree to the bit.
#include <string.h>

#include "query/sweep.h"

bp_status bpi_ray_check(const bp_view *v, const float *origin, const float *dir, float max_t,
	const bp_query_filter *filter)
{
	if (!v || !origin || !dir || isnan(max_t) || max_t < 0 || !bpi_query_filter_valid(filter))
		return BP_ERR_INVALID_ARGUMENT;
	if (!bpi_all_finite(origin, v->dims) || !bpi_all_finite(dir, v->dims))
		return BP_ERR_NOT_FINITE;
	return BP_OK;
}

static bp_status make_ray(const bp_view *v, const float *origin, const float *dir, float max_t,
	const bp_query_filter *filter, sweep *s)
{
	const bp_status status = bpi_ray_check(v, origin, dir, max_t, filter);
	if (status != BP_OK)
		return status;
	*s = (sweep){.max_t = max_t, .dims = v->dims};
	for (int axis = 0; axis < v->dims; ++axis) {
		s->lo[axis] = s->hi[axis] = origin[axis];
		s->d[axis] = dir[axis];
	}
	sweep_prepare(s);
	return BP_OK;
}

bp_status bpi_box_cast_check(const bp_view *v, const float *min, const float *max, const float *dir, float max_t,
	const bp_query_filter *filter)
{
	if (!v || !min || !max || !dir || isnan(max_t) || max_t < 0 || !bpi_query_filter_valid(filter))
		return BP_ERR_INVALID_ARGUMENT;
	if (!bpi_all_finite(min, v->dims) || !bpi_all_finite(max, v->dims) || !bpi_all_finite(dir, v->dims))
		return BP_ERR_NOT_FINITE;
	for (int axis = 0; axis < v->dims; ++axis)
		if (min[axis] > max[axis])
			return BP_ERR_INVERTED_BOUNDS;
	return BP_OK;
}

static bp_status make_box_cast(const bp_view *v, const float *min, const float *max, const float *dir, float max_t,
	const bp_query_filter *filter, sweep *s)
{
	const bp_status status = bpi_box_cast_check(v, min, max, dir, max_t, filter);
	if (status != BP_OK)
		return status;
	*s = (sweep){.max_t = max_t, .dims = v->dims};
	for (int axis = 0; axis < v->dims; ++axis) {
		s->lo[axis] = min[axis];
		s->hi[axis] = max[axis];
		s->d[axis] = dir[axis];
	}
	sweep_prepare(s);
	return BP_OK;
}

static inline bool closer(float t, uint32_t e, bp_hit best)
{
	return best.index == UINT32_MAX || t < best.distance || (t == best.distance && e < best.index);
}

// ---- through the hierarchy --------------------------------------------------------

// Each node box is the exact float union of its children's, and the lane test (sweep.h)
// keeps every box sweep_box keeps with an entry t at most sweep_box's: a node it rejects
// holds no hit, and a node's t is at most that of anything under it. So a walk that skips
// a node entering after the best hit (strictly: a tie may be a lower index) is exact.

typedef struct bvh_walk {
	const bpi_bvh *h;
	const bp_query_filter *filter; ///< nodes none of whose entities pass it are skipped
	struct {
		uint32_t ref;
		float t;
	} stack[BPI_BVH_STACK];
	uint32_t top;
} bvh_walk;

/// The lanes of node block j the sweep may reach at or before `bound`, as bits, and a t for
/// each at most its exact entry.
static unsigned node_lanes(const bpi_bvh *h, uint32_t block, const sweep *s, float bound, float t[4])
{
	if (s->lanes_fast)
		return sweep_lanes(bpi_bvh_block(h, block), 2, s, bound, t);
	const bpi_box_arrays kids = bpi_node_arrays(h, block);
	unsigned reach = 0;
	for (uint32_t c = 0; c < 2; ++c)
		reach |= (unsigned)(sweep_box(&kids, s, c, &t[c]) && t[c] <= bound) << c;
	return reach;
}

/// The lanes of leaf k that may hold a hit entering at or before `bound`, as bits: each one
/// still to be confirmed by sweep_box.
static unsigned leaf_lanes(const bpi_bvh *h, uint32_t leaf, const sweep *s, float bound)
{
	const unsigned used = (1u << h->leaf_size.data[leaf]) - 1u;
	float t[4];
	return s->lanes_fast ? sweep_lanes(bpi_bvh_leaf(h, leaf), BPI_BVH_LEAF, s, bound, t) & used : used;
}

static void walk_start(bvh_walk *w, const bpi_bvh *h, const sweep *s, const bp_query_filter *filter)
{
	w->h = h;
	w->filter = filter;
	w->top = 0;
	float t[4];
	if ((node_lanes(h, 0, s, INFINITY, t) & 1u) && bpi_node_may_pass(h, 0, 0, filter)) {
		w->stack[0].ref = bpi_bvh_ref(h, 0, 0);
		w->stack[0].t = t[0];
		w->top = 1;
	}
}

/// Pushes the children of node block j the sweep reaches and that enter at or
/// before `bound`, the nearer last so that it is walked first.
static void walk_children(bvh_walk *w, const sweep *s, uint32_t block, float bound)
{
	float t[4];
	bool hit[2];
	const unsigned reach = node_lanes(w->h, block, s, bound, t);
	for (int c = 0; c < 2; ++c)
		hit[c] = (reach >> c & 1u) && bpi_node_may_pass(w->h, block, (uint32_t)c, w->filter);
	const int near = hit[0] && hit[1] ? t[1] < t[0] : hit[1];
	for (int k = 0; k < 2; ++k) {
		const int c = k == 0 ? 1 - near : near;
		if (hit[c]) {
			const uint32_t ref = bpi_bvh_ref(w->h, block, (uint32_t)c);
			// The far child waits on the stack: its line loads meanwhile.
			__builtin_prefetch(ref & BPI_BVH_LEAF_BIT ? bpi_bvh_leaf(w->h, ref & ~BPI_BVH_LEAF_BIT)
								  : bpi_bvh_block(w->h, ref));
			w->stack[w->top].ref = ref;
			w->stack[w->top++].t = t[c];
		}
	}
}

/// The next leaf the walk reaches whose entry is at or before `bound`, into
/// *leaf. False when none is left.
static bool walk_next_leaf(bvh_walk *w, const sweep *s, float bound, uint32_t *leaf)
{
	while (w->top) {
		--w->top;
		const uint32_t ref = w->stack[w->top].ref;
		if (w->stack[w->top].t > bound)
			continue;
		if (!(ref & BPI_BVH_LEAF_BIT)) {
			walk_children(w, s, ref, bound);
			continue;
		}
		*leaf = ref & ~BPI_BVH_LEAF_BIT;
		return true;
	}
	return false;
}

/// Offers the part's hits to `best`, walking only nodes that enter at or before it.
static void bvh_closest(const bp_view *v, const bpi_bvh_part *part, const sweep *s, const bp_query_filter *filter,
	bp_hit *best)
{
	const bpi_bvh *h = part->bvh;
	bvh_walk w;
	uint32_t leaf;
	float t;
	walk_start(&w, h, s, filter);
	while (walk_next_leaf(&w, s, best->distance, &leaf)) {
		const bpi_box_arrays boxes = bpi_leaf_arrays(h, leaf);
		const uint32_t *order = h->order.data + (size_t)leaf * BPI_BVH_LEAF;
		for (unsigned m = leaf_lanes(h, leaf, s, best->distance); m; m &= m - 1) {
			const uint32_t lane = (uint32_t)__builtin_ctz(m), e = order[lane];
			if (sweep_box(&boxes, s, lane, &t) && closer(t, e, *best) && !bpi_part_skips(part, e) &&
				bpi_query_accepts(v, filter, e))
				*best = (bp_hit){e, t};
		}
	}
}

static size_t bvh_all(const bp_view *v, const bpi_bvh_part *part, const sweep *s, const bp_query_filter *filter,
	bpi_best_k *best)
{
	const bpi_bvh *h = part->bvh;
	size_t count = 0;
	bvh_walk w;
	uint32_t leaf;
	float t;
	walk_start(&w, h, s, filter);
	while (walk_next_leaf(&w, s, INFINITY, &leaf)) {
		const bpi_box_arrays boxes = bpi_leaf_arrays(h, leaf);
		const uint32_t *order = h->order.data + (size_t)leaf * BPI_BVH_LEAF;
		for (unsigned m = leaf_lanes(h, leaf, s, INFINITY); m; m &= m - 1) {
			const uint32_t lane = (uint32_t)__builtin_ctz(m), e = order[lane];
			if (sweep_box(&boxes, s, lane, &t) && !bpi_part_skips(part, e) && bpi_query_accepts(v, filter, e)) {
				bpi_best_offer(best, (bp_hit){e, t});
				count++;
			}
		}
	}
	return count;
}

/// The closest accepted hit; index UINT32_MAX when none. The filter is asked
/// only about hits that would beat the best so far.
static bp_hit sweep_closest(const bp_view *v, const sweep *s, const bp_query_filter *filter)
{
	bp_hit best = {UINT32_MAX, INFINITY};
	bpi_bvh_part parts[2];
	(void)bpi_view_ensure(v, BPI_VIEW_HIERARCHY);
	const int part_count = bpi_hierarchy_parts(&v->hierarchy, parts);
	for (int k = 0; k < part_count; ++k)
		bvh_closest(v, &parts[k], s, filter, &best);
	if (part_count)
		return best;
	float t;
	const bpi_box_arrays b = bpi_dense_arrays(v);
	for (uint32_t i = 0; i < v->count; ++i)
		// Strictly closer only: scanning upwards keeps the lowest index on ties.
		if (sweep_box(&b, s, i, &t) && (best.index == UINT32_MAX || t < best.distance) &&
			bpi_query_accepts(v, filter, i))
			best = (bp_hit){i, t};
	return best;
}

/// Every accepted hit offered to `best` (the nearest `capacity` kept); returns
/// their number. The heap orders by (t, index), so the visiting order does not
/// change the answer.
static size_t sweep_all(const bp_view *v, const sweep *s, const bp_query_filter *filter, bpi_best_k *best)
{
	size_t count = 0;
	bpi_bvh_part parts[2];
	(void)bpi_view_ensure(v, BPI_VIEW_HIERARCHY);
	const int part_count = bpi_hierarchy_parts(&v->hierarchy, parts);
	for (int k = 0; k < part_count; ++k)
		count += bvh_all(v, &parts[k], s, filter, best);
	if (part_count)
		return count;
	float t;
	const bpi_box_arrays b = bpi_dense_arrays(v);
	for (uint32_t i = 0; i < v->count; ++i)
		if (sweep_box(&b, s, i, &t) && bpi_query_accepts(v, filter, i)) {
			bpi_best_offer(best, (bp_hit){i, t});
			count++;
		}
	return count;
}

// ---- visitors: hits in (t, index) order ------------------------------------------

#define PENDING_LOCAL 64

/// Hits found but not yet visited: a min-heap on (t, index), on the stack until
/// it outgrows PENDING_LOCAL.
typedef struct pending {
	bp_hit *heap;
	size_t size, capacity;
	bp_hit local[PENDING_LOCAL];
} pending;

static bool pending_push(pending *p, bp_hit x)
{
	if (p->size == p->capacity) {
		bp_hit *grown = bpi_alloc(2 * p->capacity * sizeof *grown);
		if (!grown)
			return false;
		memcpy(grown, p->heap, p->size * sizeof *grown);
		if (p->heap != p->local)
			bpi_free(p->heap, p->capacity * sizeof *grown);
		p->heap = grown;
		p->capacity *= 2;
	}
	p->heap[p->size] = x;
	bpi_hit_sift_up(p->heap, p->size++, false);
	return true;
}

static bp_hit pending_pop(pending *p)
{
	const bp_hit top = p->heap[0];
	p->heap[0] = p->heap[--p->size];
	bpi_hit_sift_down(p->heap, p->size, 0, false);
	return top;
}

/// Visits every pending hit that comes before `bound` (strictly: a later entry
/// entering at exactly `bound` may have a lower index). False once visit said stop.
static bool pending_visit(pending *p, float bound, bool (*visit)(bp_hit hit, void *user), void *user)
{
	while (p->size && p->heap[0].distance < bound)
		if (!visit(pending_pop(p), user))
			return false;
	return true;
}

static void pending_init(pending *p)
{
	p->heap = p->local;
	p->size = 0;
	p->capacity = PENDING_LOCAL;
}

static void pending_free(pending *p)
{
	if (p->heap != p->local)
		bpi_free(p->heap, p->capacity * sizeof *p->heap);
}

/// Walks the hierarchy's nodes in order of entry t (one queue per part, the
/// nearer head first) and hands each hit to visit as soon as no node left to walk
/// can enter before it: a node's entry t is at most that of anything under it.
static bp_status walk_visit(const bp_view *v, const bpi_bvh_part *parts, int part_count, const sweep *s,
	const bp_query_filter *filter, bool (*visit)(bp_hit hit, void *user), void *user)
{
	pending hits, nodes[2];
	pending_init(&hits);
	pending_init(&nodes[0]);
	pending_init(&nodes[1]);
	bool go = true, room = true;
	float t, lanes_t[4];
	for (int k = 0; k < part_count; ++k)
		if (node_lanes(parts[k].bvh, 0, s, INFINITY, lanes_t) & 1u)
			room = room && pending_push(&nodes[k], (bp_hit){bpi_bvh_ref(parts[k].bvh, 0, 0), lanes_t[0]});
	while (go && room && (nodes[0].size || nodes[1].size)) {
		const int k = !nodes[0].size || (nodes[1].size && bpi_hit_before(nodes[1].heap[0], nodes[0].heap[0]));
		const bp_hit x = pending_pop(&nodes[k]);
		const bpi_bvh_part *part = &parts[k];
		const bpi_bvh *h = part->bvh;
		go = pending_visit(&hits, x.distance, visit, user);
		if (!go)
			break;
		if (!(x.index & BPI_BVH_LEAF_BIT)) {
			const unsigned reach = node_lanes(h, x.index, s, INFINITY, lanes_t);
			for (uint32_t c = 0; c < 2 && room; ++c)
				if (reach >> c & 1u)
					room = pending_push(&nodes[k], (bp_hit){bpi_bvh_ref(h, x.index, c), lanes_t[c]});
			continue;
		}
		const uint32_t leaf = x.index & ~BPI_BVH_LEAF_BIT;
		const bpi_box_arrays boxes = bpi_leaf_arrays(h, leaf);
		const uint32_t *order = h->order.data + (size_t)leaf * BPI_BVH_LEAF;
		for (unsigned m = leaf_lanes(h, leaf, s, INFINITY); m && room; m &= m - 1) {
			const uint32_t lane = (uint32_t)__builtin_ctz(m), e = order[lane];
			if (sweep_box(&boxes, s, lane, &t) && !bpi_part_skips(part, e) && bpi_query_accepts(v, filter, e))
				room = pending_push(&hits, (bp_hit){e, t});
		}
	}
	// The hits left, in order (not through pending_visit: hits at t = inf go out too).
	while (go && room && hits.size)
		go = visit(pending_pop(&hits), user);
	pending_free(&hits);
	pending_free(&nodes[0]);
	pending_free(&nodes[1]);
	return room ? BP_OK : BP_ERR_OUT_OF_MEMORY;
}

/// Hands each hit to visit in (t, index) order: through the hierarchy as soon as
/// no node left can enter before it; without one, every hit waits for the end of a scan.
static bp_status sweep_visit(const bp_view *v, const sweep *s, const bp_query_filter *filter,
	bool (*visit)(bp_hit hit, void *user), void *user)
{
	bpi_bvh_part parts[2];
	(void)bpi_view_ensure(v, BPI_VIEW_HIERARCHY);
	const int part_count = bpi_hierarchy_parts(&v->hierarchy, parts);
	if (part_count)
		return walk_visit(v, parts, part_count, s, filter, visit, user);
	pending p;
	pending_init(&p);
	bool room = true, go = true;
	float t;
	const bpi_box_arrays b = bpi_dense_arrays(v);
	for (uint32_t i = 0; i < v->count && room; ++i)
		if (sweep_box(&b, s, i, &t) && bpi_query_accepts(v, filter, i))
			room = pending_push(&p, (bp_hit){i, t});
	while (go && room && p.size)
		go = visit(pending_pop(&p), user);
	pending_free(&p);
	return room ? BP_OK : BP_ERR_OUT_OF_MEMORY;
}

// ---- entry points -------------------------------------------------------------

static bp_status closest_out(const bp_view *v, const sweep *s, const bp_query_filter *filter, bp_hit *out,
	bool *found)
{
	bp_hit best = sweep_closest(v, s, filter);
	*found = best.index != UINT32_MAX;
	if (*found)
		*out = best;
	return BP_OK;
}

static bp_status all_out(const bp_view *v, const sweep *s, const bp_query_filter *filter, bp_hit *out,
	size_t capacity, size_t *total)
{
	// A short buffer gets the nearest `capacity` hits, so a caller that wants
	// only the first few can pass a small buffer on purpose.
	bpi_best_k best = {out, 0, capacity};
	size_t count = sweep_all(v, s, filter, &best);
	bpi_best_sort(&best);
	return bpi_query_finish(count, capacity, total);
}

bp_status bp_view_cast_ray_closest(const bp_view *v, const float *origin, const float *dir, float max_t,
	const bp_query_filter *filter, bp_hit *out, bool *found)
{
	sweep s;
	bp_status status = out && found ? make_ray(v, origin, dir, max_t, filter, &s) : BP_ERR_INVALID_ARGUMENT;
	return status == BP_OK ? closest_out(v, &s, filter, out, found) : status;
}

bp_status bp_view_cast_ray(const bp_view *v, const float *origin, const float *dir, float max_t,
	const bp_query_filter *filter, bp_hit *out, size_t capacity, size_t *total)
{
	sweep s;
	bp_status status = bpi_view_check_buffer(v, out, capacity, total);
	if (status == BP_OK)
		status = make_ray(v, origin, dir, max_t, filter, &s);
	return status == BP_OK ? all_out(v, &s, filter, out, capacity, total) : status;
}

bp_status bp_view_visit_cast_ray(const bp_view *v, const float *origin, const float *dir, float max_t,
	const bp_query_filter *filter, bool (*visit)(bp_hit hit, void *user), void *user)
{
	sweep s;
	bp_status status = visit ? make_ray(v, origin, dir, max_t, filter, &s) : BP_ERR_INVALID_ARGUMENT;
	return status == BP_OK ? sweep_visit(v, &s, filter, visit, user) : status;
}

bp_status bp_view_cast_box_closest(const bp_view *v, const float *min, const float *max, const float *dir,
	float max_t, const bp_query_filter *filter, bp_hit *out, bool *found)
{
	sweep s;
	bp_status status =
		out && found ? make_box_cast(v, min, max, dir, max_t, filter, &s) : BP_ERR_INVALID_ARGUMENT;
	return status == BP_OK ? closest_out(v, &s, filter, out, found) : status;
}

bp_status bp_view_cast_box(const bp_view *v, const float *min, const float *max, const float *dir, float max_t,
	const bp_query_filter *filter, bp_hit *out, size_t capacity, size_t *total)
{
	sweep s;
	bp_status status = bpi_view_check_buffer(v, out, capacity, total);
	if (status == BP_OK)
		status = make_box_cast(v, min, max, dir, max_t, filter, &s);
	return status == BP_OK ? all_out(v, &s, filter, out, capacity, total) : status;
}

bp_status bp_view_visit_cast_box(const bp_view *v, const float *min, const float *max, const float *dir,
	float max_t, const bp_query_filter *filter, bool (*visit)(bp_hit hit, void *user), void *user)
{
	sweep s;
	bp_status status = visit ? make_box_cast(v, min, max, dir, max_t, filter, &s) : BP_ERR_INVALID_ARGUMENT;
	return status == BP_OK ? sweep_visit(v, &s, filter, visit, user) : status;
}
