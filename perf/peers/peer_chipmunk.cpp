// SPDX-License-Identifier: MIT
// Chipmunk 7 adapter: the three cpSpatialIndex classes (space hash, AABB tree, 1D sweep) via ReindexQuery.
#include "peers.h"

#include <cmath>
#include <cstdint>

#include <chipmunk/chipmunk.h>

namespace {

struct item {
	cpBB bb;
	uint32_t index;
};

struct query_context {
	const peer_scene *scene;
	peer_output *out;
};

cpBB item_bb(void *obj)
{
	return static_cast<item *>(obj)->bb;
}

cpCollisionID on_pair(void *a, void *b, cpCollisionID id, void *data)
{
	query_context *context = static_cast<query_context *>(data);
	peer_report(*context->scene, *context->out, static_cast<item *>(a)->index, static_cast<item *>(b)->index);
	return id;
}

std::vector<item> items_of(const peer_scene &s)
{
	std::vector<item> items(s.n);
	for (uint32_t i = 0; i < s.n; ++i)
		items[i] = {cpBBNew(s.min[0][i], s.min[1][i], s.max[0][i], s.max[1][i]), i};
	return items;
}

void collide(cpSpatialIndex *index, std::vector<item> &items, const peer_scene &s, peer_output &out)
{
	for (item &it : items)
		cpSpatialIndexInsert(index, &it, it.index);
	query_context context{&s, &out};
	cpSpatialIndexReindexQuery(index, on_pair, &context);
	cpSpatialIndexFree(index);
}

void run_space_hash(const peer_scene &s, peer_output &out)
{
	std::vector<item> items = items_of(s);
	// Chipmunk's advice: cell edge about the mean object size, ~10 cells per object.
	double sum = 0;
	for (const item &it : items)
		sum += std::fmax(it.bb.r - it.bb.l, it.bb.t - it.bb.b);
	double cell = s.n ? sum / s.n : 1;
	if (!(cell > 0))
		cell = 1;
	collide(cpSpaceHashNew(cell, (int)(10 * (uint64_t)s.n < 1000 ? 1000 : 10 * (uint64_t)s.n), item_bb, nullptr),
		items, s, out);
}

void run_bb_tree(const peer_scene &s, peer_output &out)
{
	std::vector<item> items = items_of(s);
	collide(cpBBTreeNew(item_bb, nullptr), items, s, out);
}

void run_sweep_1d(const peer_scene &s, peer_output &out)
{
	std::vector<item> items = items_of(s);
	collide(cpSweep1DNew(item_bb, nullptr), items, s, out);
}

} // namespace

void peers_add_chipmunk(std::vector<peer_method> &methods)
{
	methods.push_back({"chipmunk", "space_hash", true, 0, PEER_CLOSED,
		"reports every pair sharing a hashed cell (cell = mean extent, 10n cells); exact test filters", run_space_hash});
	methods.push_back({"chipmunk", "bb_tree", true, 0, PEER_CLOSED,
		"AABB tree without velocity fattening; cpBBIntersects is closed", run_bb_tree});
	methods.push_back({"chipmunk", "sweep_1d", true, 0, PEER_STRICT_X,
		"qsort on x then `min < max` (strict) on x only: y filtered exactly, pairs touching on x are lost",
		run_sweep_1d});
}
