// SPDX-License-Identifier: MIT
// Box2D v3 adapter (2D): b2DynamicTree, one proxy per box (exact, not fattened) inserted one by
// one, then b2DynamicTree_Rebuild with a full build, as Box2D rebuilds its trees. Box and point
// queries are b2DynamicTree_Query; circles b2DynamicTree_Query on the circle's bounding box plus the
// exact distance test in the callback; rays b2DynamicTree_RayCast and box casts
// b2DynamicTree_BoxCast, with broadphase's slab test per proxy in the callback, which clips the
// ray to the closest hit so far (closest) or lets it run (all hits). No nearest.
#include "queries.h"

#include <box2d/collision.h>
#include <box2d/types.h>

namespace {

struct context {
	const query_scene *scene;
	const query *q;
	query_kind kind;
	answer *out;
	uint32_t best;
	float best_t;
};

bool on_box(int, uint64_t user, void *c)
{
	context &ctx = *(context *)c;
	const uint32_t id = (uint32_t)user;
	if (ctx.kind == Q_SPHERE) {
		float lo[3], hi[3];
		scene_box(*ctx.scene, id, lo, hi);
		if (box_distance2(2, ctx.q->p, lo, hi) > ctx.q->radius * ctx.q->radius)
			return true;
	}
	ctx.out->ids.push_back(id);
	return true;
}

/// Rays and casts: the fraction Box2D gets back is t over the query's length.
float on_cast(uint32_t id, float max_fraction, context &ctx)
{
	float t;
	if (!query_sweep(*ctx.scene, id, ctx.kind, *ctx.q, &t))
		return max_fraction;
	if (ctx.kind == Q_RAY_ALL) {
		ctx.out->ids.push_back(id);
		ctx.out->t.push_back(t);
		return max_fraction;
	}
	if (ctx.best == UINT32_MAX || t < ctx.best_t || (t == ctx.best_t && id < ctx.best)) {
		ctx.best = id;
		ctx.best_t = t;
	}
	return ctx.best_t / ctx.q->max_t;
}

float on_ray(const b2RayCastInput *input, int, uint64_t user, void *c)
{
	return on_cast((uint32_t)user, input->maxFraction, *(context *)c);
}

float on_box_cast(const b2BoxCastInput *input, int, uint64_t user, void *c)
{
	return on_cast((uint32_t)user, input->maxFraction, *(context *)c);
}

class box2d_index final : public query_index {
public:
	b2DynamicTree tree;
	const query_scene &scene;

	explicit box2d_index(const query_scene &s) : scene(s)
	{
		tree = b2DynamicTree_Create((int)s.n);
		for (uint32_t i = 0; i < s.n; ++i) {
			b2AABB box{{s.min[0][i], s.min[1][i]}, {s.max[0][i], s.max[1][i]}};
			b2DynamicTree_CreateProxy(&tree, box, B2_DEFAULT_CATEGORY_BITS, i);
		}
		b2DynamicTree_Rebuild(&tree, true);
	}

	~box2d_index() override { b2DynamicTree_Destroy(&tree); }

	void run(query_kind kind, const query &q, answer &out) override
	{
		context ctx{&scene, &q, kind, &out, UINT32_MAX, 0.0f};
		const b2Vec2 p{q.p[0], q.p[1]}, move{q.dir[0] * q.max_t, q.dir[1] * q.max_t};
		switch (kind) {
		case Q_BOX:
			b2DynamicTree_Query(&tree, {{q.lo[0], q.lo[1]}, {q.hi[0], q.hi[1]}}, B2_DEFAULT_MASK_BITS, on_box, &ctx);
			return;
		case Q_POINT:
			b2DynamicTree_Query(&tree, {p, p}, B2_DEFAULT_MASK_BITS, on_box, &ctx);
			return;
		case Q_SPHERE:
			b2DynamicTree_Query(&tree, {{p.x - q.radius, p.y - q.radius}, {p.x + q.radius, p.y + q.radius}},
				B2_DEFAULT_MASK_BITS, on_box, &ctx);
			return;
		case Q_RAY_CLOSEST:
		case Q_RAY_ALL:
		case Q_LONG_CLOSEST: {
			b2RayCastInput input{p, move, 1.0f};
			b2DynamicTree_RayCast(&tree, &input, B2_DEFAULT_MASK_BITS, on_ray, &ctx);
			break;
		}
		case Q_CAST_CLOSEST: {
			b2BoxCastInput input{{{q.lo[0], q.lo[1]}, {q.hi[0], q.hi[1]}}, move, 1.0f};
			b2DynamicTree_BoxCast(&tree, &input, B2_DEFAULT_MASK_BITS, on_box_cast, &ctx);
			break;
		}
		default:
			return;
		}
		if (kind != Q_RAY_ALL && ctx.best != UINT32_MAX) {
			out.ids.push_back(ctx.best);
			out.t.push_back(ctx.best_t);
		}
	}
};

std::unique_ptr<query_index> build(const query_scene &s) { return std::make_unique<box2d_index>(s); }

} // namespace

void query_peers_add_box2d3(std::vector<query_peer> &peers)
{
	query_peer p{"box2d3", {}, true, false, false,
		"Box2D v3 b2DynamicTree (exact proxies, full Rebuild after insertion); box, point = Query; circle = "
		"Query on its bounding box + exact test; rays = RayCast, box cast = BoxCast, broadphase's slab test "
		"in the callback clipping to the closest hit; no nearest",
		build};
	for (int k = 0; k < Q_KIND_COUNT; ++k)
		p.kinds[k] = k != Q_NEAREST;
	peers.push_back(p);
}
