// SPDX-License-Identifier: MIT
// Box2D 2.4 adapter: b2DynamicTree built from the boxes, then one tree query per box.
#include "peers.h"

#include <cstdint>

#include <box2d/b2_collision.h>
#include <box2d/b2_dynamic_tree.h>

namespace {

struct query_context {
	const b2DynamicTree *tree;
	const peer_scene *scene;
	peer_output *out;
	uint32_t self;

	/// Each pair is taken once, from its lower index. The tree holds AABBs
	/// fattened by b2_aabbExtension and the query box is exact, so every exact
	/// overlap is among the candidates; peer_report drops the rest.
	bool QueryCallback(int32 proxy)
	{
		uint32_t other = (uint32_t)(uintptr_t)tree->GetUserData(proxy);
		if (other > self)
			peer_report(*scene, *out, self, other);
		return true;
	}
};

b2AABB box_of(const peer_scene &s, uint32_t i)
{
	b2AABB box;
	box.lowerBound.Set(s.min[0][i], s.min[1][i]);
	box.upperBound.Set(s.max[0][i], s.max[1][i]);
	return box;
}

void run_dynamic_tree(const peer_scene &s, peer_output &out)
{
	b2DynamicTree tree;
	for (uint32_t i = 0; i < s.n; ++i)
		tree.CreateProxy(box_of(s, i), (void *)(uintptr_t)i);
	query_context context{&tree, &s, &out, 0};
	for (uint32_t i = 0; i < s.n; ++i) {
		context.self = i;
		tree.Query(&context, box_of(s, i));
	}
}

} // namespace

void peers_add_box2d(std::vector<peer_method> &methods)
{
	methods.push_back({"box2d", "dynamic_tree", true, 0, PEER_CLOSED,
		"tree of AABBs fattened by b2_aabbExtension, queried with exact boxes; b2TestOverlap is closed",
		run_dynamic_tree});
}
