// SPDX-License-Identifier: MIT
// Lookups in a view's pairs and adjacency: whether two entities collide (a binary search of
// the sorted pairs), and each entity's partners, listed, visited or reduced.
#include <broadphase/frame.h>

#include "view/view.h"

bp_status bp_view_neighbours(const bp_view *v, uint32_t entity, const uint32_t **out, size_t *count)
{
	if (!v || !out || !count)
		return BP_ERR_INVALID_ARGUMENT;
	if (entity >= v->count)
		return BP_ERR_OUT_OF_RANGE;
	bp_status status = bpi_view_ensure(v, BPI_VIEW_ADJACENCY);
	if (status != BP_OK)
		return status;
	*out = v->neighbours.data + v->offsets[entity];
	*count = v->offsets[entity + 1] - v->offsets[entity];
	return BP_OK;
}

bool bp_view_colliding(const bp_view *v, uint32_t a, uint32_t b)
{
	if (!v || a >= v->count || b >= v->count || a == b)
		return false;
	// A binary search of the pairs, sorted by (lo, hi): no adjacency needed.
	bp_pair key = {BP_MIN(a, b), BP_MAX(a, b)};
	const bp_pair *p = v->pairs.data;
	size_t lo = 0, hi = v->pairs.count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p[mid].lo < key.lo || (p[mid].lo == key.lo && p[mid].hi < key.hi))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->pairs.count && p[lo].lo == key.lo && p[lo].hi == key.hi;
}

bp_status bp_view_for_each_neighbour(const bp_view *v, uint32_t entity,
	void (*fn)(uint32_t entity, uint32_t neighbour, void *user), void *user)
{
	const uint32_t *list;
	size_t count;
	if (!fn)
		return BP_ERR_INVALID_ARGUMENT;
	bp_status status = bp_view_neighbours(v, entity, &list, &count);
	if (status != BP_OK)
		return status;
	for (size_t i = 0; i < count; ++i)
		fn(entity, list[i], user);
	return BP_OK;
}

bp_status bp_view_reduce_neighbours(const bp_view *v, uint32_t entity,
	double (*fn)(double acc, uint32_t neighbour, void *user), void *user, double init, double *out)
{
	const uint32_t *list;
	size_t count;
	if (!fn || !out)
		return BP_ERR_INVALID_ARGUMENT;
	bp_status status = bp_view_neighbours(v, entity, &list, &count);
	if (status != BP_OK)
		return status;
	double acc = init;
	for (size_t i = 0; i < count; ++i)
		acc = fn(acc, list[i], user);
	*out = acc;
	return BP_OK;
}

