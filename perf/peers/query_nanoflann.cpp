// SPDX-License-Identifier: MIT
// nanoflann adapter: a kd-tree over the box centres, k nearest by distance between centres. It
// answers a different question than the others (a box's centre, not its surface), so its answers
// are checked against a brute-force scan of the centres, not against broadphase's.
#include "queries.h"

#include <cmath>

#include <nanoflann.hpp>

namespace {

/// The centres as nanoflann's dataset adaptor wants them.
struct centres {
	int dims;
	std::vector<float> xyz; ///< dims floats per box
	size_t kdtree_get_point_count() const { return xyz.size() / (size_t)dims; }
	float kdtree_get_pt(size_t i, size_t k) const { return xyz[i * (size_t)dims + k]; }
	template <class bbox> bool kdtree_get_bbox(bbox &) const { return false; }
};

template <int DIM> class nanoflann_index final : public query_index {
	using tree_type =
		nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<float, centres>, centres, DIM, uint32_t>;

public:
	centres points;
	std::unique_ptr<tree_type> tree;

	explicit nanoflann_index(const query_scene &s)
	{
		points.dims = DIM;
		points.xyz.resize((size_t)s.n * DIM);
		for (uint32_t i = 0; i < s.n; ++i)
			for (int k = 0; k < DIM; ++k)
				points.xyz[(size_t)i * DIM + k] = 0.5f * (s.min[k][i] + s.max[k][i]);
		// Leaves of 10 points: nanoflann's default.
		tree = std::make_unique<tree_type>(DIM, points, nanoflann::KDTreeSingleIndexAdaptorParams(10));
	}

	void run(query_kind, const query &q, answer &out) override
	{
		uint32_t ids[nearest_k];
		float d2[nearest_k];
		size_t found = tree->knnSearch(q.p, nearest_k, ids, d2);
		for (size_t i = 0; i < found; ++i) {
			out.ids.push_back(ids[i]);
			out.t.push_back(std::sqrt(d2[i]));
		}
	}
};

std::unique_ptr<query_index> build(const query_scene &s)
{
	if (s.dims == 2)
		return std::make_unique<nanoflann_index<2>>(s);
	return std::make_unique<nanoflann_index<3>>(s);
}

} // namespace

void query_peers_add_nanoflann(std::vector<query_peer> &peers)
{
	query_peer p{"nanoflann", {}, true, true, true,
		"KDTreeSingleIndexAdaptor (L2, leaves of 10) over box centres; nearest8 = knnSearch, distances "
		"between centres (checked against centres, not against broadphase)",
		build};
	p.kinds[Q_NEAREST] = true;
	peers.push_back(p);
}
