// SPDX-License-Identifier: MIT
// libspatialindex adapter: an R*-tree in memory, bulk loaded (STR) from the boxes, with the
// library's default node capacities. Boxes go in as double regions (exact); box and point queries
// are its intersection and point-location queries (closed), spheres its intersection query on the
// sphere's bounding box plus the exact distance test in the visitor, nearest its best-first
// nearestNeighborQuery (distance to the box), the distance taken in the visitor. It has no rays.
#include "queries.h"

#include <cmath>

#include <spatialindex/SpatialIndex.h>

namespace {

using namespace SpatialIndex;

/// Hands the boxes to the bulk loader one by one.
class box_stream final : public IDataStream {
public:
	box_stream(const query_scene &s) : scene(s) {}
	IData *getNext() override
	{
		if (next == scene.n)
			return nullptr;
		double lo[3], hi[3];
		for (int k = 0; k < scene.dims; ++k) {
			lo[k] = scene.min[k][next];
			hi[k] = scene.max[k][next];
		}
		Region r(lo, hi, (uint32_t)scene.dims);
		RTree::Data *d = new RTree::Data(0, nullptr, r, next);
		++next;
		return d;
	}
	bool hasNext() override { return next < scene.n; }
	uint32_t size() override { return scene.n; }
	void rewind() override { next = 0; }

private:
	const query_scene &scene;
	uint32_t next = 0;
};

/// Collects ids; for spheres keeps only boxes within the radius, for nearest at most k with their
/// distances.
class collector final : public IVisitor {
public:
	const query_scene *scene = nullptr;
	const query *q = nullptr;
	query_kind kind = Q_BOX;
	answer *out = nullptr;

	void visitNode(const INode &) override {}
	void visitData(std::vector<const IData *> &v) override
	{
		for (const IData *d : v)
			visitData(*d);
	}
	void visitData(const IData &d) override
	{
		uint32_t id = (uint32_t)d.getIdentifier();
		if (kind == Q_BOX || kind == Q_POINT) {
			out->ids.push_back(id);
			return;
		}
		float lo[3], hi[3];
		scene_box(*scene, id, lo, hi);
		float d2 = box_distance2(scene->dims, q->p, lo, hi);
		if (kind == Q_SPHERE) {
			if (d2 <= q->radius * q->radius)
				out->ids.push_back(id);
		} else if (out->ids.size() < nearest_k) {
			out->ids.push_back(id);
			out->t.push_back(std::sqrt(d2));
		}
	}
};

class rtree_index final : public query_index {
public:
	const query_scene &scene;
	std::unique_ptr<IStorageManager> storage;
	std::unique_ptr<ISpatialIndex> tree;
	collector visitor;

	explicit rtree_index(const query_scene &s) : scene(s)
	{
		storage.reset(StorageManager::createNewMemoryStorageManager());
		box_stream stream(s);
		id_type root;
		// Fill factor 0.7 and 100 entries per node: the library's defaults.
		tree.reset(RTree::createAndBulkLoadNewRTree(RTree::BLM_STR, stream, *storage, 0.7, 100, 100,
			(uint32_t)s.dims, RTree::RV_RSTAR, root));
		visitor.scene = &s;
	}

	void run(query_kind kind, const query &q, answer &out) override
	{
		visitor.q = &q;
		visitor.kind = kind;
		visitor.out = &out;
		double a[3], b[3];
		const uint32_t dims = (uint32_t)scene.dims;
		switch (kind) {
		case Q_BOX:
			for (int k = 0; k < scene.dims; ++k)
				a[k] = q.lo[k], b[k] = q.hi[k];
			tree->intersectsWithQuery(Region(a, b, dims), visitor);
			break;
		case Q_POINT:
			for (int k = 0; k < scene.dims; ++k)
				a[k] = q.p[k];
			tree->pointLocationQuery(Point(a, dims), visitor);
			break;
		case Q_SPHERE:
			for (int k = 0; k < scene.dims; ++k)
				a[k] = (double)q.p[k] - q.radius, b[k] = (double)q.p[k] + q.radius;
			tree->intersectsWithQuery(Region(a, b, dims), visitor);
			break;
		case Q_NEAREST:
			for (int k = 0; k < scene.dims; ++k)
				a[k] = q.p[k];
			tree->nearestNeighborQuery(nearest_k, Point(a, dims), visitor);
			break;
		default:
			break;
		}
	}
};

std::unique_ptr<query_index> build(const query_scene &s) { return std::make_unique<rtree_index>(s); }

} // namespace

void query_peers_add_spatialindex(std::vector<query_peer> &peers)
{
	query_peer p{"rstar", {}, true, true, false,
		"libspatialindex R*-tree, in memory, STR bulk load, 100 entries a node; box = intersectsWithQuery, "
		"point = pointLocationQuery, sphere = intersectsWithQuery on its bounding box + exact test, "
		"nearest8 = nearestNeighborQuery (distance to the box); no rays",
		build};
	p.kinds[Q_BOX] = p.kinds[Q_POINT] = p.kinds[Q_SPHERE] = p.kinds[Q_NEAREST] = true;
	peers.push_back(p);
}
