// SPDX-License-Identifier: MIT
// The adapter interface of bp_peer_queries: one scene of boxes and one set of queries, the same for
// every library, and the answers each library gives, in a form the driver can compare.
#ifndef BP_PEER_QUERIES_H
#define BP_PEER_QUERIES_H

#include <cstdint>
#include <memory>
#include <vector>

/// The query kinds, in the order of the tables.
enum query_kind {
	Q_BOX,          ///< every box overlapping a closed box (about 20 hits in the uniform scenes)
	Q_POINT,        ///< every box containing a point
	Q_SPHERE,       ///< every box within radius of a centre
	Q_RAY_CLOSEST,  ///< short ray (3% of the world's extent), closest hit
	Q_RAY_ALL,      ///< the same short rays, every hit
	Q_LONG_CLOSEST, ///< ray from one face of the world to the opposite one, closest hit
	Q_CAST_CLOSEST, ///< box cast (unit box) over the short rays' length, closest hit
	Q_NEAREST,      ///< the 8 nearest boxes by Euclidean distance to the box (0 inside)
	Q_KIND_COUNT
};

extern const char *const query_kind_names[Q_KIND_COUNT];

constexpr uint32_t nearest_k = 8;

/// The boxes, as structure of arrays (z arrays empty in 2D). Every coordinate is a multiple of
/// 2^-10 and every box is a centre plus half extents of that grid, so a library that stores a box
/// as centre and half extents (Jolt's bodies) reproduces min and max exactly.
struct query_scene {
	int dims = 3;
	uint32_t n = 0;
	float extent = 0; ///< the world is [0, extent] on every axis
	std::vector<float> min[3], max[3];
};

/// One query. Boxes and casts use lo/hi; points, spheres, nearest and rays use p; rays and casts
/// go along dir (unit length) to max_t, so t is a distance.
struct query {
	float p[3];
	float lo[3], hi[3];
	float dir[3];
	float radius;
	float max_t;
};

/// What a library answered. Set queries fill ids (any order); closest queries fill one id and t
/// when found; all-hits rays fill ids and t in matching order (any order); nearest fills ids and t
/// (the distance), at most nearest_k, any order. The driver sorts before comparing.
struct answer {
	std::vector<uint32_t> ids;
	std::vector<float> t;
	void clear()
	{
		ids.clear();
		t.clear();
	}
};

/// A library's index over one scene. run answers one query into `out` (cleared by the caller) and
/// is what is timed: the library's call plus whatever a host needs to get the answer the query
/// kind asks for (for example an exact slab test in a callback that only gets candidates).
class query_index {
public:
	virtual ~query_index() = default;
	virtual void run(query_kind kind, const query &q, answer &out) = 0;
	/// The index's own build time when the build call also makes what is not index (Jolt's bodies
	/// and shapes); negative to take the whole build call.
	virtual double index_build_ms() const { return -1.0; }
};

struct query_peer {
	const char *library;
	bool kinds[Q_KIND_COUNT]; ///< the kinds it answers
	bool two_d, three_d;      ///< the scene dimensions it takes
	/// Answers about box centres, not boxes (nanoflann): checked against centres, not against ours.
	bool centres;
	const char *note; ///< one line on how the library is used for each kind
	/// Builds the index over the scene; the driver times this call.
	std::unique_ptr<query_index> (*build)(const query_scene &scene);
};

void query_peers_add_jolt(std::vector<query_peer> &peers);
void query_peers_add_box2d3(std::vector<query_peer> &peers);
void query_peers_add_embree(std::vector<query_peer> &peers);
void query_peers_add_spatialindex(std::vector<query_peer> &peers);
void query_peers_add_nanoflann(std::vector<query_peer> &peers);
void query_peers_add_bullet(std::vector<query_peer> &peers);

// Exact tests shared by the adapters that receive candidates and must decide hits themselves,
// in float and in the order of operations of broadphase's own tests (closed boxes).

/// The sweep of the box [lo, hi] along d for 0 <= t <= max_t against the closed box [blo, bhi] on
/// `dims` axes, with broadphase's arithmetic (a ray is the sweep of lo = hi = origin): true and the
/// least t of contact in *t (0 when they overlap at the start) on a hit.
bool sweep_hit(int dims, const float *lo, const float *hi, const float *d, float max_t, const float *blo,
	const float *bhi, float *t);

/// Squared distance from p to the box [blo, bhi] on `dims` axes (0 inside).
float box_distance2(int dims, const float *p, const float *blo, const float *bhi);

/// Box i of the scene into lo/hi (3 floats each; z is 0 in 2D).
inline void scene_box(const query_scene &s, uint32_t i, float *lo, float *hi)
{
	for (int k = 0; k < 3; ++k) {
		lo[k] = k < s.dims ? s.min[k][i] : 0.0f;
		hi[k] = k < s.dims ? s.max[k][i] : 0.0f;
	}
}

/// The sweep of query q (a ray for rays, the box [lo, hi] for casts) against box i: true and *t on a hit.
inline bool query_sweep(const query_scene &s, uint32_t i, query_kind kind, const query &q, float *t)
{
	float blo[3], bhi[3];
	scene_box(s, i, blo, bhi);
	if (kind == Q_CAST_CLOSEST)
		return sweep_hit(s.dims, q.lo, q.hi, q.dir, q.max_t, blo, bhi, t);
	return sweep_hit(s.dims, q.p, q.p, q.dir, q.max_t, blo, bhi, t);
}

#endif
