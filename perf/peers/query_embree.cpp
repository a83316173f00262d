// SPDX-License-Identifier: MIT
// Embree 3 adapter: the boxes as one user geometry (Embree asks for each box's bounds and calls
// back for every box a ray reaches), in a scene built on one thread with the default quality.
// Rays are rtcIntersect1 with broadphase's slab test in the intersect callback: closest hits
// shorten the ray as they are found; all hits are recorded without shortening it, so traversal
// goes on to the end. Point, sphere and nearest are rtcPointQuery (traversal culls by distance
// from the point to node bounds); nearest shrinks the query radius to the k-th best distance
// once it has k. Embree has no box query or box cast.
#include "queries.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <embree3/rtcore.h>

namespace {

/// The intersect context, extended with what the callback needs (Embree passes it through).
struct ray_context {
	RTCIntersectContext base;
	const query_scene *scene;
	answer *all; ///< all hits go here; NULL for closest
	float max_t;
};

struct point_context {
	const query_scene *scene;
	const query *q;
	query_kind kind;
	answer *out;
	std::vector<std::pair<float, uint32_t>> heap; ///< nearest: max-heap of (squared distance, id)
};

void box_bounds(const RTCBoundsFunctionArguments *args)
{
	const query_scene &s = *(const query_scene *)args->geometryUserPtr;
	float lo[3], hi[3];
	scene_box(s, args->primID, lo, hi);
	RTCBounds *b = args->bounds_o;
	b->lower_x = lo[0], b->lower_y = lo[1], b->lower_z = lo[2];
	b->upper_x = hi[0], b->upper_y = hi[1], b->upper_z = hi[2];
}

void box_intersect(const RTCIntersectFunctionNArguments *args)
{
	if (!args->valid[0])
		return;
	const ray_context &ctx = *(const ray_context *)args->context;
	RTCRayHit *rh = (RTCRayHit *)args->rayhit; // N is 1: rtcIntersect1 only
	const float o[3] = {rh->ray.org_x, rh->ray.org_y, rh->ray.org_z};
	const float d[3] = {rh->ray.dir_x, rh->ray.dir_y, rh->ray.dir_z};
	float lo[3], hi[3], t;
	scene_box(*ctx.scene, args->primID, lo, hi);
	if (ctx.all) {
		if (sweep_hit(3, o, o, d, ctx.max_t, lo, hi, &t)) {
			ctx.all->ids.push_back(args->primID);
			ctx.all->t.push_back(t);
		}
		return;
	}
	if (!sweep_hit(3, o, o, d, rh->ray.tfar, lo, hi, &t))
		return;
	// Ties at the same t go to the lower index, as broadphase's do.
	if (rh->hit.geomID == RTC_INVALID_GEOMETRY_ID || t < rh->ray.tfar || args->primID < rh->hit.primID) {
		rh->ray.tfar = t;
		rh->hit.primID = args->primID;
		rh->hit.geomID = args->geomID;
	}
}

bool box_point_query(RTCPointQueryFunctionArguments *args)
{
	point_context &ctx = *(point_context *)args->userPtr;
	float lo[3], hi[3];
	scene_box(*ctx.scene, args->primID, lo, hi);
	const float d2 = box_distance2(3, ctx.q->p, lo, hi);
	if (ctx.kind != Q_NEAREST) {
		if (d2 <= ctx.q->radius * ctx.q->radius)
			ctx.out->ids.push_back(args->primID);
		return false;
	}
	std::vector<std::pair<float, uint32_t>> &heap = ctx.heap;
	if (heap.size() < nearest_k) {
		heap.emplace_back(d2, args->primID);
		std::push_heap(heap.begin(), heap.end());
	} else if (std::make_pair(d2, args->primID) < heap.front()) {
		std::pop_heap(heap.begin(), heap.end());
		heap.back() = {d2, args->primID};
		std::push_heap(heap.begin(), heap.end());
	} else {
		return false;
	}
	if (heap.size() < nearest_k)
		return false;
	args->query->radius = std::sqrt(heap.front().first);
	return true;
}

class embree_index final : public query_index {
public:
	const query_scene &scene;
	RTCDevice device = nullptr;
	RTCScene rtc = nullptr;
	point_context points;

	explicit embree_index(const query_scene &s) : scene(s)
	{
		device = rtcNewDevice("threads=1");
		rtc = device ? rtcNewScene(device) : nullptr;
		if (!rtc) {
			std::fprintf(stderr, "bp_peer_queries: embree: no device\n");
			std::exit(2);
		}
		RTCGeometry g = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_USER);
		rtcSetGeometryUserPrimitiveCount(g, s.n);
		rtcSetGeometryUserData(g, (void *)&s);
		rtcSetGeometryBoundsFunction(g, box_bounds, nullptr);
		rtcSetGeometryIntersectFunction(g, box_intersect);
		rtcCommitGeometry(g);
		rtcAttachGeometry(rtc, g);
		rtcReleaseGeometry(g);
		rtcCommitScene(rtc);
		points.scene = &s;
		points.heap.reserve(nearest_k);
	}

	~embree_index() override
	{
		rtcReleaseScene(rtc);
		rtcReleaseDevice(device);
	}

	void run(query_kind kind, const query &q, answer &out) override
	{
		if (kind == Q_POINT || kind == Q_SPHERE || kind == Q_NEAREST) {
			points.q = &q;
			points.kind = kind;
			points.out = &out;
			points.heap.clear();
			RTCPointQuery pq;
			pq.x = q.p[0], pq.y = q.p[1], pq.z = q.p[2];
			pq.time = 0.0f;
			pq.radius = kind == Q_POINT ? 0.0f : kind == Q_SPHERE ? q.radius : INFINITY;
			RTCPointQueryContext pctx;
			rtcInitPointQueryContext(&pctx);
			rtcPointQuery(rtc, &pq, &pctx, box_point_query, &points);
			for (const auto &h : points.heap) {
				out.ids.push_back(h.second);
				out.t.push_back(std::sqrt(h.first));
			}
			return;
		}
		ray_context ctx;
		rtcInitIntersectContext(&ctx.base);
		ctx.scene = &scene;
		ctx.all = kind == Q_RAY_ALL ? &out : nullptr;
		ctx.max_t = q.max_t;
		RTCRayHit rh;
		rh.ray.org_x = q.p[0], rh.ray.org_y = q.p[1], rh.ray.org_z = q.p[2];
		rh.ray.dir_x = q.dir[0], rh.ray.dir_y = q.dir[1], rh.ray.dir_z = q.dir[2];
		rh.ray.tnear = 0.0f;
		rh.ray.tfar = q.max_t;
		rh.ray.time = 0.0f;
		rh.ray.mask = UINT32_MAX;
		rh.ray.id = 0;
		rh.ray.flags = 0;
		rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
		rh.hit.primID = RTC_INVALID_GEOMETRY_ID;
		rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
		rtcIntersect1(rtc, &ctx.base, &rh);
		if (!ctx.all && rh.hit.geomID != RTC_INVALID_GEOMETRY_ID) {
			out.ids.push_back(rh.hit.primID);
			out.t.push_back(rh.ray.tfar);
		}
	}
};

std::unique_ptr<query_index> build(const query_scene &s) { return std::make_unique<embree_index>(s); }

} // namespace

void query_peers_add_embree(std::vector<query_peer> &peers)
{
	query_peer p{"embree", {}, false, true, false,
		"Embree 3 user geometry, scene committed on 1 thread (default quality); rays = rtcIntersect1 with "
		"broadphase's slab test in the intersect callback (all hits: recorded, ray not shortened); "
		"point, sphere, nearest8 = rtcPointQuery (nearest shrinks the radius); no box query or cast",
		build};
	p.kinds[Q_POINT] = p.kinds[Q_SPHERE] = p.kinds[Q_RAY_CLOSEST] = p.kinds[Q_RAY_ALL] = p.kinds[Q_LONG_CLOSEST] =
		p.kinds[Q_NEAREST] = true;
	peers.push_back(p);
}
