// SPDX-License-Identifier: MIT
// CGAL adapter: box_self_intersection_d (segment-tree streaming) on float boxes, closed topology.
#include "peers.h"

#include <cstdint>

#include <CGAL/box_intersection_d.h>

namespace {

template <int D>
void run_box_intersection(const peer_scene &s, peer_output &out)
{
	// ID_EXPLICIT: box_self_intersection_d copies the boxes, so ids taken from
	// box addresses would be wrong; the entity index travels as the info field.
	using box = CGAL::Box_intersection_d::Box_with_info_d<float, D, uint32_t,
		CGAL::Box_intersection_d::ID_EXPLICIT>;
	std::vector<box> boxes;
	boxes.reserve(s.n);
	for (uint32_t i = 0; i < s.n; ++i) {
		float lo[D], hi[D];
		for (int k = 0; k < D; ++k) {
			lo[k] = s.min[k][i];
			hi[k] = s.max[k][i];
		}
		boxes.emplace_back(lo, hi, i);
	}
	CGAL::box_self_intersection_d(boxes.begin(), boxes.end(),
		[&](const box &a, const box &b) { peer_report(s, out, a.info(), b.info()); }, std::ptrdiff_t(10),
		CGAL::Box_intersection_d::CLOSED);
}

void run_cgal(const peer_scene &s, peer_output &out)
{
	if (s.dims == 2)
		run_box_intersection<2>(s, out);
	else
		run_box_intersection<3>(s, out);
}

} // namespace

void peers_add_cgal(std::vector<peer_method> &methods)
{
	methods.push_back({"cgal", "box_self_intersection_d", false, 0, PEER_CLOSED,
		"Box_with_info_d<float>, Topology CLOSED, cutoff 10 (the default): exact, each pair once", run_cgal});
}
