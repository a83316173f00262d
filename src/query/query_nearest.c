// SPDX-License-Identifier: MIT
// The k nearest entities of a point on a published frame: a walk of the hierarchy nearest
// node first that keeps the best k in a bounded heap (a scan without a hierarchy; periodic
// worlds: query_periodic.c).
#include "query/query.h"

// ---- bounded best-k (max-heap on (distance, index)) ----------------------------

void bpi_best_offer(bpi_best_k *b, bp_hit x)
{
	if (b->size < b->capacity) {
		b->heap[b->size] = x;
		bpi_hit_sift_up(b->heap, b->size++, true);
	} else if (b->capacity && bpi_hit_before(x, b->heap[0])) {
		b->heap[0] = x;
		bpi_hit_sift_down(b->heap, b->size, 0, true);
	}
}

void bpi_best_sort(bpi_best_k *b)
{
	for (size_t n = b->size; n > 1; --n) {
		bp_hit t = b->heap[0];
		b->heap[0] = b->heap[n - 1];
		b->heap[n - 1] = t;
		bpi_hit_sift_down(b->heap, n - 1, 0, true);
	}
}

/// Offers entity order[j] (entry j of b) when it can still enter the best k
/// and the filter accepts it (tested after the distance, so the callback only
/// sees entities that would enter).
static inline void nearest_offer(bpi_best_k *best, const bpi_box_arrays *b, int dims, uint32_t j, uint32_t e,
	const float *p, const bp_view *v, const bp_query_filter *filter)
{
	const bp_hit x = {e, bpi_box_distance2(b, dims, j, p)};
	// Cheap reject once the heap is full: most entities stop here.
	if (best->size == best->capacity && (best->capacity == 0 || !bpi_hit_before(x, best->heap[0])))
		return;
	if (bpi_query_accepts(v, filter, e))
		bpi_best_offer(best, x);
}

/// Offers leaf `leaf`'s entities of the part.
static void nearest_leaf(const bp_view *v, const bpi_bvh_part *part, uint32_t leaf, const float *p,
	const bp_query_filter *filter, bpi_best_k *best)
{
	const bpi_bvh *h = part->bvh;
	const bpi_box_arrays boxes = bpi_leaf_arrays(h, leaf);
	const uint32_t *order = h->order.data + (size_t)leaf * BPI_BVH_LEAF;
	for (uint32_t lane = 0; lane < h->leaf_size.data[leaf]; ++lane)
		if (!bpi_part_skips(part, order[lane]))
			nearest_offer(best, &boxes, v->dims, lane, order[lane], p, v, filter);
}

/// Whether a node at squared distance d2 may hold one of the k nearest: ties are
/// walked (the stop is strict), since they may hold a lower index.
static bool nearest_may_hold(const bpi_best_k *best, float d2)
{
	return best->size < best->capacity || d2 <= best->heap[0].distance;
}

/// k nearest under `root` (a reference), depth first, nearer child first.
static void nearest_subtree(const bp_view *v, const bpi_bvh_part *part, uint32_t root, float root_d2, const float *p,
	const bp_query_filter *filter, bpi_best_k *best)
{
	const bpi_bvh *h = part->bvh;
	struct {
		uint32_t ref;
		float d2;
	} stack[BPI_BVH_STACK];
	uint32_t top = 0;
	stack[top].ref = root;
	stack[top++].d2 = root_d2;
	while (top) {
		--top;
		const uint32_t ref = stack[top].ref;
		if (!nearest_may_hold(best, stack[top].d2))
			continue;
		if (ref & BPI_BVH_LEAF_BIT) {
			nearest_leaf(v, part, ref & ~BPI_BVH_LEAF_BIT, p, filter, best);
			continue;
		}
		const bpi_box_arrays kids = bpi_node_arrays(h, ref);
		const float d[2] = {bpi_box_distance2(&kids, v->dims, 0, p), bpi_box_distance2(&kids, v->dims, 1, p)};
		const uint32_t second = d[0] <= d[1] ? 1u : 0u;
		for (uint32_t k = 0; k < 2; ++k) { // the farther first, so the nearer is walked first
			const uint32_t c = k == 0 ? second : 1u - second;
			if (bpi_node_may_pass(h, ref, c, filter)) {
				stack[top].ref = bpi_bvh_ref(h, ref, c);
				stack[top++].d2 = d[c];
			}
		}
	}
}

/// Nodes waiting in the best-first walk; past this many a node is walked depth first
/// at once instead, which gives the same answer.
#define NEAREST_QUEUE 128

typedef struct node_entry {
	float d2;
	uint32_t ref;
} node_entry;

static void queue_push(node_entry *q, uint32_t *size, node_entry x)
{
	uint32_t i = (*size)++;
	while (i && q[(i - 1) / 2].d2 > x.d2) {
		q[i] = q[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	q[i] = x;
}

static node_entry queue_pop(node_entry *q, uint32_t *size)
{
	const node_entry top = q[0], last = q[--*size];
	uint32_t i = 0;
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= *size)
			break;
		if (c + 1 < *size && q[c + 1].d2 < q[c].d2)
			++c;
		if (!(q[c].d2 < last.d2))
			break;
		q[i] = q[c];
		i = c;
	}
	q[i] = last;
	return top;
}

/// k nearest through the hierarchy, nearest node first. A node's fl(d^2) is at
/// most that of any box under it (each gap is monotone in the box's bounds, and
/// so are the squares and the sum), so once the nearest waiting node is farther
/// than the k-th best, no node left holds one nearer.
static void nearest_bvh(const bp_view *v, const bpi_bvh_part *part, const float *p, const bp_query_filter *filter,
	bpi_best_k *best)
{
	const bpi_bvh *h = part->bvh;
	node_entry queue[NEAREST_QUEUE];
	uint32_t size = 0;
	const bpi_box_arrays root = bpi_node_arrays(h, 0);
	if (bpi_node_may_pass(h, 0, 0, filter))
		queue_push(queue, &size, (node_entry){bpi_box_distance2(&root, v->dims, 0, p), bpi_bvh_ref(h, 0, 0)});
	while (size) {
		const node_entry x = queue_pop(queue, &size);
		if (!nearest_may_hold(best, x.d2))
			break;
		if (x.ref & BPI_BVH_LEAF_BIT) {
			nearest_leaf(v, part, x.ref & ~BPI_BVH_LEAF_BIT, p, filter, best);
			continue;
		}
		const bpi_box_arrays kids = bpi_node_arrays(h, x.ref);
		for (uint32_t c = 0; c < 2; ++c) {
			const node_entry kid = {bpi_box_distance2(&kids, v->dims, c, p), bpi_bvh_ref(h, x.ref, c)};
			if (!nearest_may_hold(best, kid.d2) || !bpi_node_may_pass(h, x.ref, c, filter))
				continue;
			if (size < NEAREST_QUEUE)
				queue_push(queue, &size, kid);
			else
				nearest_subtree(v, part, kid.ref, kid.d2, p, filter, best);
		}
	}
}

bp_status bpi_nearest_check(const bp_view *v, const float *point, const bp_query_filter *filter)
{
	if (!v || !point || !bpi_query_filter_valid(filter))
		return BP_ERR_INVALID_ARGUMENT;
	return bpi_all_finite(point, v->dims) ? BP_OK : BP_ERR_NOT_FINITE;
}

bp_status bp_view_nearest(const bp_view *v, const float *point, uint32_t k,
	const bp_query_filter *filter, bp_hit *out, size_t *count)
{
	if (!count || (k && !out))
		return BP_ERR_INVALID_ARGUMENT;
	const bp_status status = bpi_nearest_check(v, point, filter);
	if (status != BP_OK)
		return status;
	bpi_best_k best = {out, 0, BP_MIN(k, v->count)};
	bpi_bvh_part parts[2];
	(void)bpi_view_ensure(v, BPI_VIEW_HIERARCHY);
	const int part_count = bpi_hierarchy_parts(&v->hierarchy, parts);
	if (best.capacity && v->settings.periodic) {
		bpi_periodic_nearest(v, point, filter, &best);
	} else if (best.capacity && part_count) {
		// The changed part first: what moved is most of what a filter on kinds looks for,
		// and the bound it leaves keeps the walk of the shared part near the point. The
		// best k do not depend on the order.
		for (int part = part_count; part-- > 0;)
			nearest_bvh(v, &parts[part], point, filter, &best);
	} else {
		const bpi_box_arrays b = bpi_dense_arrays(v);
		for (uint32_t i = 0; i < v->count && best.capacity; ++i)
			nearest_offer(&best, &b, v->dims, i, i, point, v, filter);
	}
	bpi_best_sort(&best);
	for (size_t i = 0; i < best.size; ++i)
		out[i].distance = sqrtf(out[i].distance);
	*count = best.size;
	return BP_OK;
}

