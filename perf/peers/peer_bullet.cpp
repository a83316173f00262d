// SPDX-License-Identifier: MIT
// Bullet adapter: btDbvtBroadphase and btAxisSweep3 (bt32BitAxisSweep3 above 16-bit handle counts).
#include "peers.h"

#include <algorithm>
#include <cstdint>
#include <memory>

#include <btBulletCollisionCommon.h>

namespace {

btVector3 lower_of(const peer_scene &s, uint32_t i)
{
	return btVector3(s.min[0][i], s.min[1][i], s.dims == 3 ? s.min[2][i] : 0.0f);
}

btVector3 upper_of(const peer_scene &s, uint32_t i)
{
	return btVector3(s.max[0][i], s.max[1][i], s.dims == 3 ? s.max[2][i] : 0.0f);
}

void collect(btBroadphaseInterface &broadphase, const peer_scene &s, peer_output &out)
{
	broadphase.calculateOverlappingPairs(nullptr);
	btBroadphasePairArray &pairs = broadphase.getOverlappingPairCache()->getOverlappingPairArray();
	for (int i = 0; i < pairs.size(); ++i)
		peer_report(s, out, (uint32_t)(uintptr_t)pairs[i].m_pProxy0->m_clientObject,
			(uint32_t)(uintptr_t)pairs[i].m_pProxy1->m_clientObject);
}

void run_dbvt(const peer_scene &s, peer_output &out)
{
	std::vector<btBroadphaseProxy *> proxies(s.n);
	{
		// Default settings: each createProxy queries both trees for new pairs
		// (m_deferedcollide false), leaves hold the exact AABB.
		btDbvtBroadphase broadphase;
		for (uint32_t i = 0; i < s.n; ++i)
			proxies[i] = broadphase.createProxy(lower_of(s, i), upper_of(s, i), BOX_SHAPE_PROXYTYPE,
				(void *)(uintptr_t)i, 1, -1, nullptr);
		collect(broadphase, s, out);
	}
	// The broadphase destructor frees its trees and pair cache but not the
	// proxies; destroyProxy would scan the whole pair cache once per proxy.
	for (btBroadphaseProxy *proxy : proxies)
		btAlignedFree(proxy);
}

template <typename sweep>
void run_sweep(const peer_scene &s, peer_output &out, unsigned max_handles)
{
	// World bounds from the scene, padded; in 2D z is [0, 0] inside [-1, 1].
	btVector3 lo(BT_LARGE_FLOAT, BT_LARGE_FLOAT, s.dims == 3 ? BT_LARGE_FLOAT : -1.0f);
	btVector3 hi(-BT_LARGE_FLOAT, -BT_LARGE_FLOAT, s.dims == 3 ? -BT_LARGE_FLOAT : 1.0f);
	for (uint32_t i = 0; i < s.n; ++i) {
		lo.setMin(lower_of(s, i));
		hi.setMax(upper_of(s, i));
	}
	btVector3 pad = (hi - lo) * 0.001f + btVector3(1, 1, 1);
	std::unique_ptr<sweep> broadphase(new sweep(lo - pad, hi + pad, max_handles, nullptr, true));
	for (uint32_t i = 0; i < s.n; ++i)
		broadphase->createProxy(lower_of(s, i), upper_of(s, i), BOX_SHAPE_PROXYTYPE, (void *)(uintptr_t)i, 1, -1,
			nullptr);
	collect(*broadphase, s, out);
}

/// btAxisSweep3 keeps handles in unsigned short (at most 32767 objects);
/// larger scenes use its 32-bit twin, which quantizes to 32 bits instead of 16.
void run_axis_sweep(const peer_scene &s, peer_output &out)
{
	if (s.n + 2 < 32767)
		run_sweep<btAxisSweep3>(s, out, s.n + 2);
	else
		run_sweep<bt32BitAxisSweep3>(s, out, s.n + 2);
}

} // namespace

void peers_add_bullet(std::vector<peer_method> &methods)
{
	methods.push_back({"bullet", "dbvt", false, 0, PEER_CLOSED,
		"btDbvtBroadphase, default settings; exact leaves, closed Intersect; 2D gets z = [0, 0]", run_dbvt});
	// Each createProxy insertion-sorts its endpoints into all three axes, O(n)
	// per proxy: 1.5 s of CPU at n = 1e4 on the 2-core box, so 1e5 would take minutes.
	methods.push_back({"bullet", "axis_sweep3", false, 20000, PEER_CLOSED,
		"btAxisSweep3 (bt32BitAxisSweep3 above 32k handles): quantized, conservative, filtered exactly; "
		"O(n) insertion per proxy, so n > 20000 is skipped",
		run_axis_sweep});
}
