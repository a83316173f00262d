// SPDX-License-Identifier: MIT
// ODE adapter: box geoms in a dHashSpace or dSweepAndPruneSpace; dSpaceCollide's callback is AABB-level.
#include "peers.h"

#include <cmath>
#include <cstdint>

#include <ode/ode.h>

namespace {

struct collide_context {
	const peer_scene *scene;
	peer_output *out;
};

void on_pair(void *data, dGeomID a, dGeomID b)
{
	collide_context *context = static_cast<collide_context *>(data);
	peer_report(*context->scene, *context->out, (uint32_t)(uintptr_t)dGeomGetData(a),
		(uint32_t)(uintptr_t)dGeomGetData(b));
}

void init_once()
{
	static bool done = (dInitODE2(0), true);
	(void)done;
}

/// A box geom per entity: centre and side lengths in double, which ODE turns
/// back into an AABB (centre +- side / 2), equal to the input in all but rare
/// rounding cases; the exact filter decides those. ODE 0.16 never reports a box
/// with a zero side (every pair missed on boxprune involves one), so 2D scenes
/// get z = [0, 1] for every box: all boxes overlap on z, as in 2D.
void collide(dSpaceID space, const peer_scene &s, peer_output &out)
{
	for (uint32_t i = 0; i < s.n; ++i) {
		double lo[3] = {s.min[0][i], s.min[1][i], s.dims == 3 ? s.min[2][i] : 0.0};
		double hi[3] = {s.max[0][i], s.max[1][i], s.dims == 3 ? s.max[2][i] : 1.0};
		dGeomID g = dCreateBox(space, hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
		dGeomSetPosition(g, (lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2);
		dGeomSetData(g, (void *)(uintptr_t)i);
	}
	collide_context context{&s, &out};
	dSpaceCollide(space, &context, on_pair);
	dSpaceDestroy(space); // cleanup mode 1: destroys the geoms too
}

void run_hash(const peer_scene &s, peer_output &out)
{
	init_once();
	// Levels are powers of two; the largest must hold the largest box, or the
	// box goes to a list tested against every other box.
	float largest = 0;
	for (uint32_t i = 0; i < s.n; ++i)
		for (int k = 0; k < s.dims; ++k)
			largest = std::fmax(largest, s.max[k][i] - s.min[k][i]);
	int top = largest > 0 ? (int)std::ceil(std::log2(largest)) : 0;
	dSpaceID space = dHashSpaceCreate(nullptr);
	dHashSpaceSetLevels(space, top - 6, top);
	collide(space, s, out);
}

void run_sap(const peer_scene &s, peer_output &out)
{
	init_once();
	collide(dSweepAndPruneSpaceCreate(nullptr, dSAP_AXES_XYZ), s, out);
}

} // namespace

// Both spaces take seconds per step at 1e5 entities (perf/results/2core/peers.csv:
// 190-356x broadphase's CPU time), so the 1e6 scenes would take minutes per run.
#define ODE_MAX_N 200000

void peers_add_ode(std::vector<peer_method> &methods)
{
	methods.push_back({"ode", "hash_space", false, ODE_MAX_N, PEER_NO_FLAT,
		"dBox geoms (double) in dHashSpace, levels top-6..top from the largest box; AABB-level callback; "
		"flat boxes never reported",
		run_hash});
	methods.push_back({"ode", "sap_space", false, ODE_MAX_N, PEER_NO_FLAT,
		"dBox geoms in dSweepAndPruneSpace (XYZ); AABB-level callback; flat boxes never reported", run_sap});
}
