// SPDX-License-Identifier: MIT
// Jolt adapter: the boxes as static bodies with box shapes (no convex radius) in a PhysicsSystem,
// whose broadphase is Jolt's BroadPhaseQuadTree, one broadphase layer. Bodies are added in one
// AddBodiesPrepare/AddBodiesFinalize and the tree is rebuilt with OptimizeBroadPhase; the build
// time is those two (making the shapes and bodies is not index work). Queries are the
// broadphase's own: CollideAABox, CollidePoint, CollideSphere, CastRay (closest: Jolt's
// ClosestHitCollisionCollector, which shortens the ray; all: a collector keeping every hit) and
// CastAABox with the closest-hit collector. A body's bounds are its centre plus half extents,
// exact on the scene's 2^-10 grid. Jolt's broadphase reports the slab entry as the fraction, which
// is negative for a ray or cast that starts inside a box; the adapter clamps it to 0, the t of
// such a hit in broadphase. No nearest.
#include "peer_clock.h"
#include "queries.h"

#include <algorithm>

#include <Jolt/Jolt.h>

#include <Jolt/Core/Factory.h>
#include <Jolt/Physics/Body/BodyCreationSettings.h>
#include <Jolt/Physics/Collision/AABoxCast.h>
#include <Jolt/Physics/Collision/CastResult.h>
#include <Jolt/Physics/Collision/CollisionCollectorImpl.h>
#include <Jolt/Physics/Collision/RayCast.h>
#include <Jolt/Physics/Collision/Shape/BoxShape.h>
#include <Jolt/Physics/PhysicsSystem.h>
#include <Jolt/RegisterTypes.h>

namespace {

using namespace JPH;

class one_layer final : public BroadPhaseLayerInterface {
public:
	uint GetNumBroadPhaseLayers() const override { return 1; }
	BroadPhaseLayer GetBroadPhaseLayer(ObjectLayer) const override { return BroadPhaseLayer(0); }
#if defined(JPH_EXTERNAL_PROFILE) || defined(JPH_PROFILE_ENABLED)
	const char *GetBroadPhaseLayerName(BroadPhaseLayer) const override { return "boxes"; }
#endif
};

/// Every body of a box, point or sphere query, as a scene index.
class set_collector final : public CollideShapeBodyCollector {
public:
	const std::vector<uint32_t> *index_of = nullptr;
	answer *out = nullptr;
	void AddHit(const BodyID &body) override { out->ids.push_back((*index_of)[body.GetIndex()]); }
};

/// Every hit of a ray, with its t (Jolt's fraction of the ray's length).
class all_hits final : public RayCastBodyCollector {
public:
	const std::vector<uint32_t> *index_of = nullptr;
	answer *out = nullptr;
	float length = 0;
	void AddHit(const BroadPhaseCastResult &hit) override
	{
		out->ids.push_back((*index_of)[hit.mBodyID.GetIndex()]);
		out->t.push_back(std::max(hit.mFraction, 0.0f) * length);
	}
};

class jolt_index final : public query_index {
public:
	one_layer layers;
	ObjectVsBroadPhaseLayerFilter object_vs_layer;
	ObjectLayerPairFilter object_pairs;
	PhysicsSystem system;
	std::vector<uint32_t> index_of; ///< body index -> scene index
	double build_ms = 0;
	set_collector set;
	all_hits all;
	ClosestHitCollisionCollector<RayCastBodyCollector> closest_ray;
	ClosestHitCollisionCollector<CastShapeBodyCollector> closest_cast;

	explicit jolt_index(const query_scene &s)
	{
		system.Init(s.n, 0, 1024, 1024, layers, object_vs_layer, object_pairs);
		BodyInterface &bodies = system.GetBodyInterfaceNoLock();
		std::vector<BodyID> ids(s.n);
		for (uint32_t i = 0; i < s.n; ++i) {
			Vec3 lo(s.min[0][i], s.min[1][i], s.min[2][i]), hi(s.max[0][i], s.max[1][i], s.max[2][i]);
			Ref<Shape> box = new BoxShape(0.5f * (hi - lo), 0.0f);
			BodyCreationSettings settings(box, RVec3(0.5f * (lo + hi)), Quat::sIdentity(), EMotionType::Static, 0);
			Body *body = bodies.CreateBody(settings);
			ids[i] = body->GetID();
			if (index_of.size() <= ids[i].GetIndex())
				index_of.resize(ids[i].GetIndex() + 1);
			index_of[ids[i].GetIndex()] = i;
		}
		double t0 = peer_now_ms();
		BodyInterface::AddState state = bodies.AddBodiesPrepare(ids.data(), (int)s.n);
		bodies.AddBodiesFinalize(ids.data(), (int)s.n, state, EActivation::DontActivate);
		system.OptimizeBroadPhase();
		build_ms = peer_now_ms() - t0;
		set.index_of = all.index_of = &index_of;
	}

	double index_build_ms() const override { return build_ms; }

	void run(query_kind kind, const query &q, answer &out) override
	{
		const BroadPhaseQuery &bp = system.GetBroadPhaseQuery();
		const Vec3 p(q.p[0], q.p[1], q.p[2]), dir(q.dir[0], q.dir[1], q.dir[2]);
		set.out = all.out = &out;
		switch (kind) {
		case Q_BOX:
			set.Reset();
			bp.CollideAABox(AABox(Vec3(q.lo[0], q.lo[1], q.lo[2]), Vec3(q.hi[0], q.hi[1], q.hi[2])), set);
			break;
		case Q_POINT:
			set.Reset();
			bp.CollidePoint(p, set);
			break;
		case Q_SPHERE:
			set.Reset();
			bp.CollideSphere(p, q.radius, set);
			break;
		case Q_RAY_ALL:
			all.Reset();
			all.length = q.max_t;
			bp.CastRay(RayCast(p, dir * q.max_t), all);
			break;
		case Q_RAY_CLOSEST:
		case Q_LONG_CLOSEST:
			closest_ray.Reset();
			bp.CastRay(RayCast(p, dir * q.max_t), closest_ray);
			if (closest_ray.HadHit()) {
				out.ids.push_back(index_of[closest_ray.mHit.mBodyID.GetIndex()]);
				out.t.push_back(std::max(closest_ray.mHit.mFraction, 0.0f) * q.max_t);
			}
			break;
		case Q_CAST_CLOSEST:
			closest_cast.Reset();
			bp.CastAABox({AABox(Vec3(q.lo[0], q.lo[1], q.lo[2]), Vec3(q.hi[0], q.hi[1], q.hi[2])), dir * q.max_t},
				closest_cast);
			if (closest_cast.HadHit()) {
				out.ids.push_back(index_of[closest_cast.mHit.mBodyID.GetIndex()]);
				out.t.push_back(std::max(closest_cast.mHit.mFraction, 0.0f) * q.max_t);
			}
			break;
		default:
			break;
		}
	}
};

std::unique_ptr<query_index> build(const query_scene &s)
{
	static bool registered = false;
	if (!registered) {
		RegisterDefaultAllocator();
		Factory::sInstance = new Factory();
		RegisterTypes();
		registered = true;
	}
	return std::make_unique<jolt_index>(s);
}

} // namespace

void query_peers_add_jolt(std::vector<query_peer> &peers)
{
	query_peer p{"jolt", {}, false, true, false,
		"BroadPhaseQuadTree of a PhysicsSystem (static box bodies, one layer; build = AddBodies + "
		"OptimizeBroadPhase); CollideAABox, CollidePoint, CollideSphere, CastRay (closest: "
		"ClosestHitCollisionCollector; all: a collector keeping every hit), CastAABox (closest); no nearest",
		build};
	for (int k = 0; k < Q_KIND_COUNT; ++k)
		p.kinds[k] = k != Q_NEAREST;
	peers.push_back(p);
}
