// SPDX-License-Identifier: MIT
// bp_peer_queries: the queries of a published frame (bp_view_*) against the spatial indexes a host
// would use instead, on one thread: the same seeded boxes and queries for every library, each query
// timed on its own (median and p99), index build times beside them, and every answer cross-checked
// against broadphase's and, on a sample, against a brute-force scan.
#include "peer_clock.h"
#include "queries.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <utility>

#include <broadphase/broadphase.h>

const char *const query_kind_names[Q_KIND_COUNT] = {"box", "point", "sphere", "ray_closest", "ray_all",
	"long_ray_closest", "boxcast_closest", "nearest8"};

bool sweep_hit(int dims, const float *lo, const float *hi, const float *d, float max_t, const float *blo,
	const float *bhi, float *t)
{
	// Per axis the boxes touch for t in [(blo - hi) / d, (bhi - lo) / d] (mirrored for d < 0);
	// an axis with d == 0 must overlap throughout. broadphase's sweep, operation for operation.
	float enter = 0.0f, leave = max_t;
	for (int k = 0; k < dims; ++k) {
		float t1, t2;
		if (d[k] == 0.0f) {
			if (hi[k] < blo[k] || lo[k] > bhi[k])
				return false;
			continue;
		}
		if (d[k] > 0.0f) {
			t1 = (blo[k] - hi[k]) / d[k];
			t2 = (bhi[k] - lo[k]) / d[k];
		} else {
			t1 = (bhi[k] - lo[k]) / d[k];
			t2 = (blo[k] - hi[k]) / d[k];
		}
		enter = t1 > enter ? t1 : enter;
		leave = t2 < leave ? t2 : leave;
		if (enter > leave)
			return false;
	}
	*t = enter;
	return true;
}

float box_distance2(int dims, const float *p, const float *blo, const float *bhi)
{
	float d2 = 0.0f;
	for (int k = 0; k < dims; ++k) {
		float g = p[k] < blo[k] ? blo[k] - p[k] : p[k] > bhi[k] ? p[k] - bhi[k] : 0.0f;
		d2 += g * g;
	}
	return d2;
}

namespace {

// ---- scenes and queries ---------------------------------------------------------

struct rng {
	uint64_t s;
	uint64_t next()
	{
		uint64_t z = (s += 0x9e3779b97f4a7c15u);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
		return z ^ (z >> 31);
	}
	float uniform(float lo, float hi) { return lo + (hi - lo) * (float)(next() >> 40) * 0x1p-24f; }
};

/// To the 2^-10 grid: centres and half extents on it make min and max exact sums (the world stays
/// below 2^13, so every such value has at most 23 significant bits).
float grid(float x) { return std::round(x * 1024.0f) / 1024.0f; }

enum scene_kind { S_UNIFORM, S_MIXED };
const char *const scene_kind_names[] = {"uniform", "mixed"};

/// Uniform: half extents in (0, 0.5] per axis (boxes up to 1 across), centres uniform in a world
/// sized for one box per 8 units of volume (4 of area), as bp_perf_queries. Mixed: the same
/// world with 90% of the boxes as uniform, 9% with half extents in (0.5, 4] and 1% in (4, 20]
/// per axis, as a game level of props, furniture and buildings.
query_scene make_scene(scene_kind kind, int dims, uint32_t n, uint64_t seed)
{
	query_scene s;
	s.dims = dims;
	s.n = n;
	s.extent = grid(dims == 3 ? std::cbrt((float)n) * 2.0f : std::sqrt((float)n) * 2.0f);
	for (int k = 0; k < dims; ++k) {
		s.min[k].resize(n);
		s.max[k].resize(n);
	}
	rng r{seed};
	for (uint32_t i = 0; i < n; ++i) {
		float lo = 0x1p-10f, hi = 0.5f;
		if (kind == S_MIXED) {
			float u = r.uniform(0.0f, 1.0f);
			if (u >= 0.99f)
				lo = 4.0f, hi = 20.0f;
			else if (u >= 0.9f)
				lo = 0.5f, hi = 4.0f;
		}
		for (int k = 0; k < dims; ++k) {
			float half = std::max(grid(r.uniform(lo, hi)), 0x1p-10f);
			float centre = grid(r.uniform(0.0f, s.extent));
			s.min[k][i] = centre - half;
			s.max[k][i] = centre + half;
		}
	}
	return s;
}

/// Box half size and sphere radius for about 20 hits in the uniform scenes.
float box_half(int dims) { return dims == 3 ? 2.5f : 4.2f; }
float sphere_radius(int dims) { return dims == 3 ? 3.0f : 4.5f; }
constexpr float short_ray_share = 0.03f; ///< short rays and casts reach 3% of the world's extent
constexpr float cast_half = 0.5f;        ///< the cast box is 1 unit across

void random_dir(rng &r, int dims, float *d)
{
	for (;;) {
		float len2 = 0.0f;
		for (int k = 0; k < 3; ++k) {
			d[k] = k < dims ? r.uniform(-1.0f, 1.0f) : 0.0f;
			len2 += d[k] * d[k];
		}
		if (len2 > 0.01f && len2 <= 1.0f) {
			float inv = 1.0f / std::sqrt(len2);
			for (int k = 0; k < 3; ++k)
				d[k] *= inv;
			return;
		}
	}
}

/// The queries of every kind, `count` each; the two short-ray kinds share their rays.
void make_queries(const query_scene &s, uint32_t count, uint64_t seed, std::vector<query> (&out)[Q_KIND_COUNT])
{
	rng r{seed};
	const int dims = s.dims;
	const float e = s.extent;
	for (uint32_t i = 0; i < count; ++i) {
		query q{};
		for (int k = 0; k < dims; ++k)
			q.p[k] = r.uniform(0.0f, e);
		random_dir(r, dims, q.dir);
		q.max_t = short_ray_share * e;
		q.radius = sphere_radius(dims);
		query box = q, cast = q;
		for (int k = 0; k < dims; ++k) {
			box.lo[k] = q.p[k] - box_half(dims);
			box.hi[k] = q.p[k] + box_half(dims);
			cast.lo[k] = q.p[k] - cast_half;
			cast.hi[k] = q.p[k] + cast_half;
		}
		// Across the world: from a point on the x = 0 face to one on the x = extent face.
		query across = q;
		float to[3] = {e, 0.0f, 0.0f}, len2 = 0.0f;
		across.p[0] = 0.0f;
		for (int k = 1; k < dims; ++k) {
			across.p[k] = r.uniform(0.0f, e);
			to[k] = r.uniform(0.0f, e);
		}
		for (int k = 0; k < dims; ++k)
			len2 += (to[k] - across.p[k]) * (to[k] - across.p[k]);
		across.max_t = std::sqrt(len2);
		for (int k = 0; k < dims; ++k)
			across.dir[k] = (to[k] - across.p[k]) / across.max_t;
		out[Q_BOX].push_back(box);
		out[Q_POINT].push_back(q);
		out[Q_SPHERE].push_back(q);
		out[Q_RAY_CLOSEST].push_back(q);
		out[Q_RAY_ALL].push_back(q);
		out[Q_LONG_CLOSEST].push_back(across);
		out[Q_CAST_CLOSEST].push_back(cast);
		out[Q_NEAREST].push_back(q);
	}
}

// ---- broadphase through its public API --------------------------------------------

class ours_index final : public query_index {
public:
	bp_world *world = nullptr;
	bp_view *view = nullptr;
	std::vector<uint32_t> ids;
	std::vector<bp_hit> hits;

	~ours_index() override
	{
		bp_view_release(view);
		bp_world_destroy(world);
	}

	void run(query_kind kind, const query &q, answer &out) override
	{
		bp_status status = BP_OK;
		size_t total = 0;
		bool found = false;
		bp_hit hit;
		switch (kind) {
		case Q_BOX:
		case Q_POINT:
		case Q_SPHERE:
			for (;;) {
				status = kind == Q_BOX ? bp_view_overlap_box(view, q.lo, q.hi, nullptr, ids.data(), ids.size(), &total)
					: kind == Q_POINT  ? bp_view_overlap_point(view, q.p, nullptr, ids.data(), ids.size(), &total)
					                   : bp_view_overlap_sphere(view, q.p, q.radius, nullptr, ids.data(), ids.size(), &total);
				if (status != BP_ERR_OUT_OF_RANGE)
					break;
				ids.resize(total);
			}
			out.ids.assign(ids.begin(), ids.begin() + (ptrdiff_t)total);
			break;
		case Q_RAY_CLOSEST:
		case Q_LONG_CLOSEST:
		case Q_CAST_CLOSEST:
			status = kind == Q_CAST_CLOSEST
				? bp_view_cast_box_closest(view, q.lo, q.hi, q.dir, q.max_t, nullptr, &hit, &found)
				: bp_view_cast_ray_closest(view, q.p, q.dir, q.max_t, nullptr, &hit, &found);
			if (found) {
				out.ids.push_back(hit.index);
				out.t.push_back(hit.distance);
			}
			break;
		case Q_RAY_ALL:
		case Q_NEAREST:
			for (;;) {
				status = kind == Q_RAY_ALL
					? bp_view_cast_ray(view, q.p, q.dir, q.max_t, nullptr, hits.data(), hits.size(), &total)
					: bp_view_nearest(view, q.p, nearest_k, nullptr, hits.data(), &total);
				if (status != BP_ERR_OUT_OF_RANGE)
					break;
				hits.resize(total);
			}
			for (size_t i = 0; i < total; ++i) {
				out.ids.push_back(hits[i].index);
				out.t.push_back(hits[i].distance);
			}
			break;
		case Q_KIND_COUNT:
			break;
		}
		if (status != BP_OK) {
			std::fprintf(stderr, "bp_peer_queries: broadphase %s: %s\n", query_kind_names[kind],
				bp_status_string(status));
			std::exit(2);
		}
	}
};

struct ours_build {
	std::unique_ptr<ours_index> index;
	double frame_ms; ///< world, bulk insert and bp_frame_step (the frame's pairs included)
	double index_ms; ///< the lazy query index, made by the first query
};

ours_build build_ours(const query_scene &s)
{
	ours_build b{std::make_unique<ours_index>(), 0, 0};
	ours_index &x = *b.index;
	x.ids.resize(1024);
	x.hits.resize(1024);
	bp_world_def def = bp_world_def_default();
	def.dims = s.dims;
	def.capacity = s.n;
	def.thread_count = 1;
	bp_bounds_arrays bounds{s.min[0].data(), s.min[1].data(), s.dims == 3 ? s.min[2].data() : nullptr,
		s.max[0].data(), s.max[1].data(), s.dims == 3 ? s.max[2].data() : nullptr};
	bp_entity_def common = bp_entity_def_default();
	double t0 = peer_now_ms();
	bp_status status = bp_world_create(&def, &x.world);
	if (status == BP_OK)
		status = bp_world_create_entities(x.world, s.n, &bounds, &common, nullptr);
	if (status == BP_OK)
		status = bp_frame_step(x.world, &x.view);
	double t1 = peer_now_ms();
	if (status != BP_OK) {
		std::fprintf(stderr, "bp_peer_queries: broadphase world: %s\n",
			x.world ? bp_world_last_error(x.world) : bp_status_string(status));
		std::exit(2);
	}
	// The view makes its query index on first use: one query pays for it, and is the build time.
	const float origin[3] = {0, 0, 0}, dir[3] = {1, 0, 0};
	bp_hit hit;
	bool found;
	status = bp_view_cast_ray_closest(x.view, origin, dir, 0.0f, nullptr, &hit, &found);
	double t2 = peer_now_ms();
	if (status != BP_OK) {
		std::fprintf(stderr, "bp_peer_queries: broadphase index: %s\n", bp_status_string(status));
		std::exit(2);
	}
	b.frame_ms = t1 - t0;
	b.index_ms = t2 - t1;
	return b;
}

// ---- brute force --------------------------------------------------------------------

/// The answer by scanning every box with the arithmetic of sweep_hit and box_distance2; with
/// `centres` set, nearest measures to box centres (what nanoflann answers).
void brute_force(const query_scene &s, query_kind kind, const query &q, bool centres, answer &out)
{
	const int dims = s.dims;
	float best_t = INFINITY;
	uint32_t best = UINT32_MAX;
	std::vector<std::pair<float, uint32_t>> near;
	for (uint32_t i = 0; i < s.n; ++i) {
		float lo[3], hi[3], t;
		scene_box(s, i, lo, hi);
		switch (kind) {
		case Q_BOX: {
			bool hit = true;
			for (int k = 0; k < dims; ++k)
				hit = hit && lo[k] <= q.hi[k] && q.lo[k] <= hi[k];
			if (hit)
				out.ids.push_back(i);
			break;
		}
		case Q_POINT: {
			bool hit = true;
			for (int k = 0; k < dims; ++k)
				hit = hit && lo[k] <= q.p[k] && q.p[k] <= hi[k];
			if (hit)
				out.ids.push_back(i);
			break;
		}
		case Q_SPHERE:
			if (box_distance2(dims, q.p, lo, hi) <= q.radius * q.radius)
				out.ids.push_back(i);
			break;
		case Q_RAY_ALL:
			if (query_sweep(s, i, kind, q, &t)) {
				out.ids.push_back(i);
				out.t.push_back(t);
			}
			break;
		case Q_RAY_CLOSEST:
		case Q_LONG_CLOSEST:
		case Q_CAST_CLOSEST:
			if (query_sweep(s, i, kind, q, &t) && t < best_t)
				best_t = t, best = i;
			break;
		case Q_NEAREST: {
			float d2;
			if (centres) {
				d2 = 0.0f;
				for (int k = 0; k < dims; ++k) {
					float g = 0.5f * (lo[k] + hi[k]) - q.p[k];
					d2 += g * g;
				}
			} else {
				d2 = box_distance2(dims, q.p, lo, hi);
			}
			near.emplace_back(d2, i);
			break;
		}
		case Q_KIND_COUNT:
			break;
		}
	}
	if (best != UINT32_MAX) {
		out.ids.push_back(best);
		out.t.push_back(best_t);
	}
	if (kind == Q_NEAREST) {
		size_t k = std::min<size_t>(nearest_k, near.size());
		std::partial_sort(near.begin(), near.begin() + (ptrdiff_t)k, near.end());
		for (size_t i = 0; i < k; ++i) {
			out.ids.push_back(near[i].second);
			out.t.push_back(std::sqrt(near[i].first));
		}
	}
}

// ---- comparing answers ----------------------------------------------------------------

/// Sorts an answer: sets by id; rays and nearest by (t, id).
void normalize(answer &a)
{
	if (a.t.empty()) {
		std::sort(a.ids.begin(), a.ids.end());
		return;
	}
	std::vector<std::pair<float, uint32_t>> v;
	for (size_t i = 0; i < a.ids.size(); ++i)
		v.emplace_back(a.t[i], a.ids[i]);
	std::sort(v.begin(), v.end());
	for (size_t i = 0; i < v.size(); ++i) {
		a.t[i] = v[i].first;
		a.ids[i] = v[i].second;
	}
}

enum verdict { SAME, TOLERATED, DIFFERENT };

/// Distances (t, nearest) within this of each other are the same answer computed with other
/// arithmetic: a few float ulps at the world's extent.
float tolerance(const query_scene &s) { return 4e-6f * std::max(1.0f, s.extent); }

/// In double precision, how far box i is from the boundary of query q's hit test: near 0 when a
/// difference in float arithmetic (or a library's own rounding) can decide either way.
double margin(const query_scene &s, uint32_t i, query_kind kind, const query &q)
{
	const int dims = s.dims;
	float lo[3], hi[3];
	scene_box(s, i, lo, hi);
	switch (kind) {
	case Q_BOX:
	case Q_POINT: {
		const float *qlo = kind == Q_BOX ? q.lo : q.p, *qhi = kind == Q_BOX ? q.hi : q.p;
		double m = INFINITY;
		for (int k = 0; k < dims; ++k)
			m = std::min({m, std::fabs((double)qhi[k] - lo[k]), std::fabs((double)hi[k] - qlo[k])});
		return m;
	}
	case Q_SPHERE: {
		double d2 = 0;
		for (int k = 0; k < dims; ++k) {
			double g = q.p[k] < lo[k] ? (double)lo[k] - q.p[k] : q.p[k] > hi[k] ? (double)q.p[k] - hi[k] : 0.0;
			d2 += g * g;
		}
		return std::fabs(std::sqrt(d2) - q.radius);
	}
	default: {
		// Rays and casts: the slab interval's closeness to empty, and to either end of [0, max_t].
		const float *qlo = kind == Q_CAST_CLOSEST ? q.lo : q.p, *qhi = kind == Q_CAST_CLOSEST ? q.hi : q.p;
		double enter = -INFINITY, leave = INFINITY, m = INFINITY;
		for (int k = 0; k < dims; ++k) {
			double d = q.dir[k], t1, t2;
			if (d == 0) {
				m = std::min({m, std::fabs((double)qhi[k] - lo[k]), std::fabs((double)hi[k] - qlo[k])});
				continue;
			}
			if (d > 0) {
				t1 = ((double)lo[k] - qhi[k]) / d;
				t2 = ((double)hi[k] - qlo[k]) / d;
			} else {
				t1 = ((double)hi[k] - qlo[k]) / d;
				t2 = ((double)lo[k] - qhi[k]) / d;
			}
			enter = std::max(enter, t1);
			leave = std::min(leave, t2);
		}
		return std::min({m, std::fabs(leave - enter), std::fabs(enter - q.max_t), std::fabs(leave)});
	}
	}
}

/// Compares answer a (a library's) with b (the reference), both normalized.
verdict compare(const query_scene &s, query_kind kind, const query &q, const answer &a, const answer &b)
{
	const double tol = tolerance(s);
	if (a.ids == b.ids && a.t.size() == b.t.size()) {
		for (size_t i = 0; i < a.t.size(); ++i)
			if (std::fabs(a.t[i] - b.t[i]) > tol)
				return DIFFERENT;
		bool exact = a.t == b.t;
		return exact ? SAME : TOLERATED;
	}
	if (kind == Q_NEAREST) {
		// Same distances, position by position: other ids only at ties.
		if (a.t.size() != b.t.size())
			return DIFFERENT;
		for (size_t i = 0; i < a.t.size(); ++i)
			if (std::fabs(a.t[i] - b.t[i]) > tol)
				return DIFFERENT;
		return TOLERATED;
	}
	if (kind == Q_RAY_CLOSEST || kind == Q_LONG_CLOSEST || kind == Q_CAST_CLOSEST) {
		if (a.ids.size() == 1 && b.ids.size() == 1)
			return std::fabs(a.t[0] - b.t[0]) <= tol ? TOLERATED : DIFFERENT;
		const answer &one = a.ids.empty() ? b : a; // found by one side only
		return margin(s, one.ids[0], kind, q) <= tol ? TOLERATED : DIFFERENT;
	}
	// Sets (and all hits): every id found by one side only must sit on the test's boundary.
	std::vector<uint32_t> only;
	std::set_symmetric_difference(a.ids.begin(), a.ids.end(), b.ids.begin(), b.ids.end(), std::back_inserter(only));
	for (uint32_t i : only)
		if (margin(s, i, kind, q) > tol)
			return DIFFERENT;
	return TOLERATED;
}

// ---- timing and the run --------------------------------------------------------------

struct options {
	std::vector<uint32_t> sizes{100000, 1000000};
	std::vector<std::string> scenes{"uniform3", "mixed3", "uniform2"};
	uint32_t queries = 1000;
	unsigned passes = 3;
	uint32_t sample = 16;
	uint64_t seed = 1;
	const char *csv = nullptr;
	std::vector<std::string> only;
};

struct cell {
	bool ran = false;
	double median_us = 0, p99_us = 0, mean_results = 0;
	uint32_t checked = 0, tolerated = 0, mismatched = 0;           ///< against ours, every query
	uint32_t brute_checked = 0, brute_tolerated = 0, brute_mismatched = 0; ///< against brute force, the sample
};

struct library_row {
	std::string library;
	bool centres = false;
	double build_ms = 0;
	cell cells[Q_KIND_COUNT];
};

double percentile(std::vector<double> &v, double p)
{
	std::sort(v.begin(), v.end());
	size_t i = (size_t)std::ceil(p * (double)v.size()) - 1;
	return v[std::min(i, v.size() - 1)];
}

/// Times every query of `kind` on `index`: one untimed pass whose answers are kept, then
/// `passes` timed ones, each query on its own clock.
void time_kind(query_index &index, query_kind kind, const std::vector<query> &qs, unsigned passes, cell &c,
	std::vector<answer> &answers)
{
	answers.assign(qs.size(), answer());
	size_t results = 0;
	for (size_t i = 0; i < qs.size(); ++i) {
		index.run(kind, qs[i], answers[i]);
		results += answers[i].ids.size();
		normalize(answers[i]);
	}
	answer out;
	std::vector<double> us;
	us.reserve(qs.size() * passes);
	for (unsigned pass = 0; pass < passes; ++pass)
		for (const query &q : qs) {
			out.clear();
			auto t0 = std::chrono::steady_clock::now();
			index.run(kind, q, out);
			auto t1 = std::chrono::steady_clock::now();
			us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
		}
	c.ran = true;
	c.median_us = percentile(us, 0.5);
	c.p99_us = percentile(us, 0.99);
	c.mean_results = (double)results / (double)qs.size();
}

/// The clock's own cost per reading pair, for the log: every per-query time includes it.
double clock_overhead_us()
{
	std::vector<double> us;
	for (int i = 0; i < 10001; ++i) {
		auto t0 = std::chrono::steady_clock::now();
		auto t1 = std::chrono::steady_clock::now();
		us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
	}
	return percentile(us, 0.5);
}

bool wanted(const options &o, const char *library)
{
	return o.only.empty() || std::find(o.only.begin(), o.only.end(), library) != o.only.end();
}

std::vector<std::string> split(const std::string &list)
{
	std::vector<std::string> parts;
	for (size_t start = 0; start <= list.size();) {
		size_t comma = list.find(',', start);
		if (comma == std::string::npos)
			comma = list.size();
		if (comma > start)
			parts.push_back(list.substr(start, comma - start));
		start = comma + 1;
	}
	return parts;
}

void usage(FILE *f)
{
	std::fprintf(f,
		"usage: bp_peer_queries [--n N,N] [--scenes uniform3,mixed3,uniform2] [--queries Q] [--passes P]\n"
		"                       [--sample S] [--seed N] [--only LIB,LIB] [--csv FILE]\n"
		"  times broadphase's view queries and every query peer built in, one thread, Q queries of each\n"
		"  kind timed P times each; checks every answer against broadphase's and S per kind against\n"
		"  a brute-force scan. Exits 1 when broadphase differs from brute force.\n");
}

bool parse(int argc, char **argv, options &o)
{
	for (int i = 1; i < argc; ++i) {
		const char *a = argv[i];
		bool has_value = i + 1 < argc;
		if (!std::strcmp(a, "--n") && has_value) {
			o.sizes.clear();
			for (const std::string &v : split(argv[++i]))
				o.sizes.push_back((uint32_t)std::strtoul(v.c_str(), nullptr, 10));
		} else if (!std::strcmp(a, "--scenes") && has_value) {
			o.scenes = split(argv[++i]);
		} else if (!std::strcmp(a, "--queries") && has_value) {
			o.queries = (uint32_t)std::strtoul(argv[++i], nullptr, 10);
		} else if (!std::strcmp(a, "--passes") && has_value) {
			o.passes = (unsigned)std::strtoul(argv[++i], nullptr, 10);
		} else if (!std::strcmp(a, "--sample") && has_value) {
			o.sample = (uint32_t)std::strtoul(argv[++i], nullptr, 10);
		} else if (!std::strcmp(a, "--seed") && has_value) {
			o.seed = std::strtoull(argv[++i], nullptr, 10);
		} else if (!std::strcmp(a, "--only") && has_value) {
			o.only = split(argv[++i]);
		} else if (!std::strcmp(a, "--csv") && has_value) {
			o.csv = argv[++i];
		} else {
			return false;
		}
	}
	for (const std::string &s : o.scenes)
		if (s != "uniform3" && s != "mixed3" && s != "uniform2" && s != "mixed2")
			return false;
	for (uint32_t n : o.sizes)
		if (n < 1 || n > 8000000)
			return false;
	return o.queries >= 1 && o.passes >= 1 && o.sample <= o.queries;
}

/// Prints a differing answer: the first results of each side (id and t).
void report(const char *library, const char *reference, query_kind kind, size_t i, const answer &a, const answer &b)
{
	std::printf("  mismatch %s vs %s: %s query %zu:", library, reference, query_kind_names[kind], i);
	for (const answer *x : {&a, &b}) {
		std::printf(" [%zu:", x->ids.size());
		for (size_t j = 0; j < x->ids.size() && j < 4; ++j)
			std::printf(x->t.empty() ? " %u" : " %u@%.9g", x->ids[j], x->t.empty() ? 0.0 : (double)x->t[j]);
		std::printf("]");
	}
	std::printf("\n");
}

/// Checks one library's answers: all of them against ours, the sample against brute force.
void check(const query_scene &s, query_kind kind, const std::vector<query> &qs, const std::vector<answer> &got,
	const std::vector<answer> *ours, const std::vector<answer> &brute, cell &c, const std::string &library)
{
	for (size_t i = 0; ours && i < qs.size(); ++i) {
		verdict v = compare(s, kind, qs[i], got[i], (*ours)[i]);
		++c.checked;
		c.tolerated += v == TOLERATED;
		if (v == DIFFERENT && ++c.mismatched <= 3)
			report(library.c_str(), "broadphase", kind, i, got[i], (*ours)[i]);
	}
	for (size_t i = 0; i < brute.size(); ++i) {
		verdict v = compare(s, kind, qs[i], got[i], brute[i]);
		++c.brute_checked;
		c.brute_tolerated += v == TOLERATED;
		if (v == DIFFERENT && ++c.brute_mismatched <= 3)
			report(library.c_str(), "brute force", kind, i, got[i], brute[i]);
	}
}

} // namespace

int main(int argc, char **argv)
{
	options o;
	if (!parse(argc, argv, o)) {
		usage(stderr);
		return 1;
	}
	std::vector<query_peer> peers;
#ifdef BP_QPEER_JOLT
	query_peers_add_jolt(peers);
#endif
#ifdef BP_QPEER_BOX2D3
	query_peers_add_box2d3(peers);
#endif
#ifdef BP_QPEER_EMBREE
	query_peers_add_embree(peers);
#endif
#ifdef BP_QPEER_SPATIALINDEX
	query_peers_add_spatialindex(peers);
#endif
#ifdef BP_QPEER_NANOFLANN
	query_peers_add_nanoflann(peers);
#endif
#ifdef BP_QPEER_BULLET
	query_peers_add_bullet(peers);
#endif
	FILE *csv = nullptr;
	if (o.csv && !(csv = std::fopen(o.csv, "w"))) {
		std::fprintf(stderr, "bp_peer_queries: cannot write '%s'\n", o.csv);
		return 3;
	}
	if (csv)
		std::fprintf(csv, "scene,n,dims,query,library,median_us,p99_us,build_ms,mean_results,checked,tolerated,"
				  "mismatched,brute_checked,brute_tolerated,brute_mismatched,ratio_to_ours\n");
	std::printf("# queries per kind %" PRIu32 ", timed passes %u, brute-force sample %" PRIu32
		    ", seed %" PRIu64 ", clock overhead %.3f us per reading\n",
		o.queries, o.passes, o.sample, o.seed, clock_overhead_us());
	for (const query_peer &p : peers)
		if (wanted(o, p.library))
			std::printf("# %s: %s\n", p.library, p.note);
	bool ours_wrong = false;
	uint64_t peer_mismatches = 0;
	for (const std::string &scene_name : o.scenes)
		for (uint32_t n : o.sizes) {
			const int dims = scene_name.back() - '0';
			const scene_kind kind = scene_name.rfind("mixed", 0) == 0 ? S_MIXED : S_UNIFORM;
			query_scene s = make_scene(kind, dims, n, o.seed);
			std::vector<query> qs[Q_KIND_COUNT];
			make_queries(s, o.queries, o.seed + 1, qs);
			std::printf("\nscene %s n=%" PRIu32 " dims=%d extent=%.1f\n", scene_name.c_str(), n, dims, s.extent);
			std::fflush(stdout);

			// Brute force on the sample, for every library (nanoflann's against centres).
			std::vector<answer> brute[Q_KIND_COUNT], brute_centres;
			for (int k = 0; k < Q_KIND_COUNT; ++k)
				for (uint32_t i = 0; i < o.sample; ++i) {
					brute[k].emplace_back();
					brute_force(s, (query_kind)k, qs[k][i], false, brute[k].back());
					normalize(brute[k].back());
				}
			for (uint32_t i = 0; i < o.sample; ++i) {
				brute_centres.emplace_back();
				brute_force(s, Q_NEAREST, qs[Q_NEAREST][i], true, brute_centres.back());
				normalize(brute_centres.back());
			}

			std::vector<library_row> rows;
			std::vector<answer> ours_answers[Q_KIND_COUNT];
			{
				ours_build b = build_ours(s);
				library_row r;
				r.library = "broadphase";
				r.build_ms = b.index_ms;
				std::printf("broadphase: world + bp_frame_step %.1f ms, query index %.1f ms\n", b.frame_ms, b.index_ms);
				for (int k = 0; k < Q_KIND_COUNT; ++k) {
					cell &c = r.cells[k];
					time_kind(*b.index, (query_kind)k, qs[k], o.passes, c, ours_answers[k]);
					check(s, (query_kind)k, qs[k], ours_answers[k], nullptr, brute[k], c, r.library);
					if (c.brute_mismatched)
						ours_wrong = true;
				}
				rows.push_back(r);
			}
			for (const query_peer &p : peers) {
				if (!wanted(o, p.library) || (dims == 2 ? !p.two_d : !p.three_d))
					continue;
				library_row r;
				r.library = p.library;
				r.centres = p.centres;
				double t0 = peer_now_ms();
				std::unique_ptr<query_index> index = p.build(s);
				r.build_ms = index->index_build_ms() >= 0 ? index->index_build_ms() : peer_now_ms() - t0;
				std::printf("%s: build %.1f ms\n", p.library, r.build_ms);
				std::fflush(stdout);
				for (int k = 0; k < Q_KIND_COUNT; ++k) {
					if (!p.kinds[k])
						continue;
					cell &c = r.cells[k];
					std::vector<answer> got;
					time_kind(*index, (query_kind)k, qs[k], o.passes, c, got);
					if (p.centres)
						check(s, (query_kind)k, qs[k], got, nullptr, brute_centres, c, r.library);
					else
						check(s, (query_kind)k, qs[k], got, &ours_answers[k], brute[k], c, r.library);
					peer_mismatches += c.mismatched + c.brute_mismatched;
				}
				rows.push_back(r);
			}

			std::printf("%-18s %-13s %10s %10s %9s %8s %s\n", "query", "library", "median_us", "p99_us", "results",
				"ratio", "checked: ours tolerated/mismatched, brute tolerated/mismatched");
			for (int k = 0; k < Q_KIND_COUNT; ++k)
				for (const library_row &r : rows) {
					const cell &c = r.cells[k];
					if (!c.ran)
						continue;
					const cell &base = rows[0].cells[k];
					double ratio = c.median_us / base.median_us;
					std::string label = r.library + (r.centres ? " (centres)" : "");
					std::printf("%-18s %-13s %10.3f %10.3f %9.1f %8.2f %u: %u/%u, %u: %u/%u\n", query_kind_names[k],
						label.c_str(), c.median_us, c.p99_us, c.mean_results, ratio, c.checked, c.tolerated,
						c.mismatched, c.brute_checked, c.brute_tolerated, c.brute_mismatched);
					if (csv)
						std::fprintf(csv, "%s,%" PRIu32 ",%d,%s,%s,%.4f,%.4f,%.2f,%.2f,%u,%u,%u,%u,%u,%u,%.3f\n",
							scene_name.c_str(), n, dims, query_kind_names[k], label.c_str(), c.median_us, c.p99_us,
							r.build_ms, c.mean_results, c.checked, c.tolerated, c.mismatched, c.brute_checked,
							c.brute_tolerated, c.brute_mismatched, ratio);
				}
			std::printf("%-18s", "build_ms");
			for (const library_row &r : rows)
				std::printf(" %s %.1f", r.library.c_str(), r.build_ms);
			std::printf("\n");
			std::fflush(stdout);
			if (csv)
				std::fflush(csv);
		}
	if (csv)
		std::fclose(csv);
	std::printf("\npeer answers that differ beyond float tolerance: %" PRIu64 "\n", peer_mismatches);
	if (ours_wrong) {
		std::fprintf(stderr, "bp_peer_queries: broadphase differs from brute force (see the mismatch lines)\n");
		return 1;
	}
	return 0;
}
