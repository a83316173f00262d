// SPDX-License-Identifier: MIT
// Bullet adapter: btDbvt, the dynamic AABB tree of btDbvtBroadphase, filled by insert and then
// optimized top-down once. Box, point and sphere queries are collideTV on the query's bounding
// box (closed, as btDbvt's Intersect), spheres with the exact distance test in the callback; rays
// and box casts are rayTestInternal, as btDbvtBroadphase::rayTest calls it (a cast grows each
// node by the cast box), with broadphase's slab test on each leaf it reports. btDbvt cannot
// shorten a ray while it walks, so closest hits are the least of all hits. No nearest.
#include "queries.h"

#include <cmath>
#include <cstdint>

#include <BulletCollision/BroadphaseCollision/btDbvt.h>

namespace {

struct leaf_collector final : btDbvt::ICollide {
	const query_scene *scene = nullptr;
	const query *q = nullptr;
	query_kind kind = Q_BOX;
	answer *out = nullptr;
	uint32_t best = UINT32_MAX;
	float best_t = 0;

	void Process(const btDbvtNode *leaf) override
	{
		const uint32_t id = (uint32_t)(uintptr_t)leaf->data;
		float lo[3], hi[3], t;
		switch (kind) {
		case Q_BOX:
		case Q_POINT:
			out->ids.push_back(id);
			break;
		case Q_SPHERE:
			scene_box(*scene, id, lo, hi);
			if (box_distance2(3, q->p, lo, hi) <= q->radius * q->radius)
				out->ids.push_back(id);
			break;
		case Q_RAY_ALL:
			if (query_sweep(*scene, id, kind, *q, &t)) {
				out->ids.push_back(id);
				out->t.push_back(t);
			}
			break;
		default: // closest rays and casts
			if (query_sweep(*scene, id, kind, *q, &t) &&
				(best == UINT32_MAX || t < best_t || (t == best_t && id < best)))
				best = id, best_t = t;
			break;
		}
	}
};

class bullet_index final : public query_index {
public:
	btDbvt tree;
	const query_scene &scene;
	leaf_collector collector;
	btAlignedObjectArray<const btDbvtNode *> stack;

	explicit bullet_index(const query_scene &s) : scene(s)
	{
		for (uint32_t i = 0; i < s.n; ++i) {
			btVector3 lo(s.min[0][i], s.min[1][i], s.min[2][i]), hi(s.max[0][i], s.max[1][i], s.max[2][i]);
			tree.insert(btDbvtVolume::FromMM(lo, hi), (void *)(uintptr_t)i);
		}
		tree.optimizeTopDown();
		collector.scene = &s;
	}

	void run(query_kind kind, const query &q, answer &out) override
	{
		collector.q = &q;
		collector.kind = kind;
		collector.out = &out;
		collector.best = UINT32_MAX;
		const btVector3 p(q.p[0], q.p[1], q.p[2]);
		switch (kind) {
		case Q_BOX:
			tree.collideTV(tree.m_root,
				btDbvtVolume::FromMM(btVector3(q.lo[0], q.lo[1], q.lo[2]), btVector3(q.hi[0], q.hi[1], q.hi[2])),
				collector);
			return;
		case Q_POINT:
			tree.collideTV(tree.m_root, btDbvtVolume::FromMM(p, p), collector);
			return;
		case Q_SPHERE:
			tree.collideTV(tree.m_root, btDbvtVolume::FromCR(p, q.radius), collector);
			return;
		default:
			break;
		}
		// Rays from q.p, casts from the cast box's centre with the box as offsets about it.
		btVector3 from = p, box_lo(0, 0, 0), box_hi(0, 0, 0);
		if (kind == Q_CAST_CLOSEST) {
			for (int k = 0; k < 3; ++k) {
				from[k] = 0.5f * (q.lo[k] + q.hi[k]);
				box_lo[k] = q.lo[k] - from[k];
				box_hi[k] = q.hi[k] - from[k];
			}
		}
		const btVector3 dir(q.dir[0], q.dir[1], q.dir[2]);
		btVector3 inverse;
		unsigned signs[3];
		for (int k = 0; k < 3; ++k) {
			inverse[k] = dir[k] == 0.0f ? BT_LARGE_FLOAT : 1.0f / dir[k];
			signs[k] = inverse[k] < 0.0f;
		}
		tree.rayTestInternal(tree.m_root, from, from + dir * q.max_t, inverse, signs, q.max_t, box_lo, box_hi, stack,
			collector);
		if (kind != Q_RAY_ALL && collector.best != UINT32_MAX) {
			out.ids.push_back(collector.best);
			out.t.push_back(collector.best_t);
		}
	}
};

std::unique_ptr<query_index> build(const query_scene &s) { return std::make_unique<bullet_index>(s); }

} // namespace

void query_peers_add_bullet(std::vector<query_peer> &peers)
{
	query_peer p{"bullet", {}, false, true, false,
		"btDbvt (insert, then optimizeTopDown); box, point = collideTV; sphere = collideTV on its bounding box "
		"+ exact test; rays and box cast = rayTestInternal (as btDbvtBroadphase::rayTest) + broadphase's slab "
		"test per leaf, closest = least of all hits; no nearest",
		build};
	p.kinds[Q_BOX] = p.kinds[Q_POINT] = p.kinds[Q_SPHERE] = p.kinds[Q_RAY_CLOSEST] = p.kinds[Q_RAY_ALL] =
		p.kinds[Q_LONG_CLOSEST] = p.kinds[Q_CAST_CLOSEST] = true;
	peers.push_back(p);
}
