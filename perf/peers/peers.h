// SPDX-License-Identifier: MIT
// The adapter interface of bp_peers: each peer library gets plain float arrays and reports pairs.
#ifndef BP_PEERS_H
#define BP_PEERS_H

#include <cstdint>
#include <vector>

#include <broadphase/world.h>

/// One frame of a scene as structure-of-arrays; min[2]/max[2] are NULL in 2D.
struct peer_scene {
	int dims;
	uint32_t n;
	const float *min[3];
	const float *max[3];
};

/// What one run of a peer found. `raw` counts every pair the peer reported
/// (fattened, quantized or merely co-located candidates included); `pairs` keeps
/// those that pass the exact closed-interval test of docs/design.md "Pair rules", as dense indices.
struct peer_output {
	uint64_t raw = 0;
	std::vector<bp_pair> pairs;
};

/// Closed-interval overlap on every axis of the scene (touching boxes overlap).
inline bool peer_overlap(const peer_scene &s, uint32_t a, uint32_t b)
{
	for (int k = 0; k < s.dims; ++k)
		if (!(s.min[k][a] <= s.max[k][b] && s.min[k][b] <= s.max[k][a]))
			return false;
	return true;
}

/// Called from a peer's pair callback: counts the raw pair and keeps it when exact.
/// The test runs inside the timed region, as it would in a host using that peer.
inline void peer_report(const peer_scene &s, peer_output &out, uint32_t a, uint32_t b)
{
	++out.raw;
	if (a != b && peer_overlap(s, a, b))
		out.pairs.push_back(a < b ? bp_pair{a, b} : bp_pair{b, a});
}

/// How a peer's own pair test relates to docs/design.md "Pair rules", which decides whether a
/// differing pair set is a failure (CLOSED) or an expected, documented difference.
enum peer_semantics {
	PEER_CLOSED,   ///< after the exact filter the set must equal broadphase's
	PEER_STRICT_X, ///< drops pairs that only touch on x (strict `<` in its sweep)
	PEER_NO_FLAT,  ///< never reports a box with a zero extent on some axis
};

/// True when a pair of docs/design.md "Pair rules" is one that a peer with these semantics is
/// expected not to report; lets the driver check such a peer's set exactly.
inline bool peer_excluded(peer_semantics semantics, const peer_scene &s, uint32_t a, uint32_t b)
{
	switch (semantics) {
	case PEER_STRICT_X:
		return s.min[0][a] == s.max[0][b] || s.min[0][b] == s.max[0][a];
	case PEER_NO_FLAT:
		for (int k = 0; k < s.dims; ++k)
			if (s.min[k][a] == s.max[k][a] || s.min[k][b] == s.max[k][b])
				return true;
		return false;
	case PEER_CLOSED:
		break;
	}
	return false;
}

struct peer_method {
	const char *library;
	const char *method;
	bool two_d_only;  ///< the peer is a 2D library: 3D scenes are skipped
	uint32_t max_n;   ///< larger scenes are skipped (0: no limit); the reason is in `note`
	peer_semantics semantics;
	const char *note; ///< one line on what the peer reports and how it was adapted
	void (*run)(const peer_scene &scene, peer_output &out);
};

void peers_add_box2d(std::vector<peer_method> &methods);
void peers_add_bullet(std::vector<peer_method> &methods);
void peers_add_chipmunk(std::vector<peer_method> &methods);
void peers_add_cgal(std::vector<peer_method> &methods);
void peers_add_ode(std::vector<peer_method> &methods);

#endif
