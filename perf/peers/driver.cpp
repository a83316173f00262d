// SPDX-License-Identifier: MIT
// bp_peers: runs broadphase and the peer libraries found at configure time over the same scene
// files, checks their pair sets against broadphase's, and prints times side by side (CSV + table).
#include "peer_clock.h"
#include "peers.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <time.h>

#include <broadphase/broadphase.h>
#include <bp_scene.h>

namespace {

struct options {
	unsigned runs = 5;
	int threads = 1;
	const char *csv = nullptr;
	std::vector<std::string> only;
	bool check = false;
	std::vector<const char *> scenes;
};

/// Wall-clock median and minimum, and the median of process CPU time (all
/// threads): on a shared, overloaded machine the CPU time is the steadier one.
struct timing {
	double median_ms, min_ms, cpu_median_ms;
};

struct row {
	std::string library, method;
	bool skipped = false;
	std::string why;
	timing t{};
	uint64_t raw = 0;
	size_t pairs = 0;
	uint64_t checksum = 0;
	size_t duplicates = 0;
	peer_semantics semantics = PEER_CLOSED;
	bool is_broadphase = false;
	std::vector<bp_pair> list; ///< the distinct pairs, sorted
};

double median_of(std::vector<double> &ms)
{
	std::sort(ms.begin(), ms.end());
	size_t r = ms.size();
	return r % 2 ? ms[r / 2] : (ms[r / 2 - 1] + ms[r / 2]) / 2;
}

timing summarize(std::vector<double> ms, std::vector<double> cpu)
{
	double median = median_of(ms);
	return {median, ms[0], median_of(cpu)};
}

/// Sorts the pairs, counts repeated ones (a peer reporting a pair twice) and
/// returns the checksum over the distinct pairs with scene ids.
void finish(row &r, std::vector<bp_pair> &pairs, const uint32_t *ids)
{
	bp_pairs_sort(pairs.data(), pairs.size());
	size_t kept = 0;
	for (size_t i = 0; i < pairs.size(); ++i) {
		if (kept && pairs[kept - 1].lo == pairs[i].lo && pairs[kept - 1].hi == pairs[i].hi)
			++r.duplicates;
		else
			pairs[kept++] = pairs[i];
	}
	pairs.resize(kept);
	r.pairs = kept;
	r.checksum = bp_pairs_checksum(pairs.data(), kept, ids);
	r.list = std::move(pairs);
}

/// broadphase's pairs less those the peer's documented semantics exclude: the
/// set such a peer must find for its difference to count as explained.
bool explained(const row &base, const row &r, const peer_scene &s, const uint32_t *ids)
{
	if (r.semantics == PEER_CLOSED || r.duplicates)
		return false;
	std::vector<bp_pair> expected;
	for (const bp_pair &p : base.list)
		if (!peer_excluded(r.semantics, s, p.lo, p.hi))
			expected.push_back(p);
	return expected.size() == r.pairs && bp_pairs_checksum(expected.data(), expected.size(), ids) == r.checksum;
}

/// broadphase from the same arrays: world creation, bulk insert and one step are
/// timed, as a peer's proxy creation and pair search are.
bool run_broadphase(const bp_scene *scene, bp_algorithm algo, int threads, unsigned runs, row &r)
{
	std::vector<double> ms, cpu;
	std::vector<bp_pair> pairs;
	bp_bounds_arrays bounds = bp_scene_frame_bounds(scene, 0);
	bp_entity_def common = bp_entity_def_default();
	// With several runs, one untimed run first takes page faults and thread start-up out of the times.
	unsigned warm = runs > 1;
	for (unsigned run = 0; run < runs + warm; ++run) {
		bp_world_def def = bp_world_def_default();
		def.dims = scene->dims;
		def.capacity = scene->count;
		def.algorithm = algo;
		def.thread_count = threads;
		bp_world *world = nullptr;
		double c0 = peer_cpu_ms(), t0 = peer_now_ms();
		bp_status status = bp_world_create(&def, &world);
		if (status == BP_OK)
			status = bp_world_create_entities(world, scene->count, &bounds, &common, nullptr);
		if (status == BP_OK)
			status = bp_world_step(world);
		double t1 = peer_now_ms(), c1 = peer_cpu_ms();
		if (status != BP_OK) {
			r.skipped = true;
			r.why = world ? bp_world_last_error(world) : bp_status_string(status);
			bp_world_destroy(world);
			return false;
		}
		if (run >= warm) {
			ms.push_back(t1 - t0);
			cpu.push_back(c1 - c0);
		}
		if (run + 1 == runs + warm) {
			size_t count;
			const bp_pair *p = bp_world_pairs(world, &count);
			pairs.assign(p, p + count);
		}
		bp_world_destroy(world);
	}
	r.t = summarize(ms, cpu);
	r.raw = pairs.size();
	finish(r, pairs, scene->ids);
	return true;
}

void run_peer(const peer_method &m, const peer_scene &s, const uint32_t *ids, unsigned runs, row &r)
{
	r.semantics = m.semantics;
	if (m.two_d_only && s.dims != 2) {
		r.skipped = true;
		r.why = "2D library";
		return;
	}
	if (m.max_n && s.n > m.max_n) {
		r.skipped = true;
		r.why = "n > " + std::to_string(m.max_n);
		return;
	}
	std::vector<double> ms, cpu;
	peer_output kept;
	unsigned warm = runs > 1;
	for (unsigned run = 0; run < runs + warm; ++run) {
		peer_output out;
		double c0 = peer_cpu_ms(), t0 = peer_now_ms();
		m.run(s, out);
		double t1 = peer_now_ms(), c1 = peer_cpu_ms();
		if (run >= warm) {
			ms.push_back(t1 - t0);
			cpu.push_back(c1 - c0);
		}
		if (run + 1 == runs + warm)
			kept = std::move(out);
	}
	r.t = summarize(ms, cpu);
	r.raw = kept.raw;
	finish(r, kept.pairs, ids);
}

std::string scene_name(const char *path)
{
	std::string name = path;
	size_t slash = name.find_last_of('/');
	if (slash != std::string::npos)
		name = name.substr(slash + 1);
	size_t dot = name.find('.');
	return dot == std::string::npos ? name : name.substr(0, dot);
}

bool wanted(const options &o, const char *library)
{
	return o.only.empty() || std::find(o.only.begin(), o.only.end(), library) != o.only.end();
}

void usage(FILE *f)
{
	std::fprintf(f,
		"usage: bp_peers [--runs R] [--threads T] [--only LIB,LIB] [--csv FILE] [--check] SCENE...\n"
		"  times broadphase (auto, sap, grid at T threads, default 1; auto at all cores)\n"
		"  and every peer built in, on each scene file; --check exits 1 when a pair set\n"
		"  differs from broadphase's by more than the peer's documented semantics explain.\n");
}

bool parse(int argc, char **argv, options &o)
{
	for (int i = 1; i < argc; ++i) {
		const char *a = argv[i];
		bool has_value = i + 1 < argc;
		if (!std::strcmp(a, "--runs") && has_value) {
			o.runs = (unsigned)std::strtoul(argv[++i], nullptr, 10);
		} else if (!std::strcmp(a, "--threads") && has_value) {
			o.threads = (int)std::strtol(argv[++i], nullptr, 10);
		} else if (!std::strcmp(a, "--csv") && has_value) {
			o.csv = argv[++i];
		} else if (!std::strcmp(a, "--only") && has_value) {
			std::string list = argv[++i];
			for (size_t start = 0; start <= list.size();) {
				size_t comma = list.find(',', start);
				if (comma == std::string::npos)
					comma = list.size();
				o.only.push_back(list.substr(start, comma - start));
				start = comma + 1;
			}
		} else if (!std::strcmp(a, "--check")) {
			o.check = true;
		} else if (a[0] == '-') {
			return false;
		} else {
			o.scenes.push_back(a);
		}
	}
	return !o.scenes.empty() && o.runs >= 1 && o.runs <= 1000 && o.threads >= 0;
}

} // namespace

int main(int argc, char **argv)
{
	options o;
	if (!parse(argc, argv, o)) {
		usage(stderr);
		return 1;
	}
	std::vector<peer_method> methods;
#ifdef BP_PEER_BOX2D
	peers_add_box2d(methods);
#endif
#ifdef BP_PEER_BULLET
	peers_add_bullet(methods);
#endif
#ifdef BP_PEER_CHIPMUNK
	peers_add_chipmunk(methods);
#endif
#ifdef BP_PEER_CGAL
	peers_add_cgal(methods);
#endif
#ifdef BP_PEER_ODE
	peers_add_ode(methods);
#endif
	FILE *csv = nullptr;
	if (o.csv && !(csv = std::fopen(o.csv, "w"))) {
		std::fprintf(stderr, "bp_peers: cannot write '%s'\n", o.csv);
		return 3;
	}
	if (csv)
		std::fprintf(csv, "scene,n,dims,library,method,ms_median,ms_min,pairs,checksum,matches_broadphase,"
				  "ratio_vs_broadphase,raw_pairs,cpu_ms_median,cpu_ratio_vs_broadphase\n");
	for (const peer_method &m : methods)
		if (wanted(o, m.library))
			std::printf("# %s %s: %s\n", m.library, m.method, m.note);

	int cores = (int)std::thread::hardware_concurrency();
	bool failed = false;
	for (const char *path : o.scenes) {
		bp_scene *scene = nullptr;
		bp_scene_error err;
		if (bp_scene_read(path, &scene, &err) != BP_OK) {
			std::fprintf(stderr, "bp_peers: %s\n", err.message);
			return 2;
		}
		bp_bounds_arrays b = bp_scene_frame_bounds(scene, 0);
		peer_scene s{scene->dims, scene->count, {b.min_x, b.min_y, b.min_z}, {b.max_x, b.max_y, b.max_z}};
		std::string name = scene_name(path);
		std::vector<row> rows;
		std::string suffix = "/" + std::to_string(o.threads ? o.threads : cores) + "t";
		const bp_algorithm algos[] = {BP_ALGO_AUTO, BP_ALGO_SAP, BP_ALGO_GRID};
		for (bp_algorithm algo : algos) {
			row r;
			r.library = "broadphase";
			r.method = bp_algorithm_name(algo) + suffix;
			r.is_broadphase = true;
			run_broadphase(scene, algo, o.threads, o.runs, r);
			rows.push_back(r);
		}
		if (o.threads != 0 && o.threads != cores) {
			row r;
			r.library = "broadphase";
			r.method = "auto/" + std::to_string(cores) + "t";
			r.is_broadphase = true;
			run_broadphase(scene, BP_ALGO_AUTO, 0, o.runs, r);
			rows.push_back(r);
		}
		for (const peer_method &m : methods) {
			if (!wanted(o, m.library))
				continue;
			row r;
			r.library = m.library;
			r.method = m.method;
			run_peer(m, s, scene->ids, o.runs, r);
			rows.push_back(r);
		}
		const row &base = rows[0];
		std::printf("\nscene %s: n=%" PRIu32 " dims=%d, broadphase auto pairs=%zu checksum=%016" PRIx64 "\n",
			name.c_str(), scene->count, scene->dims, base.pairs, base.checksum);
		std::printf("%-10s %-24s %10s %10s %10s %10s %10s %-16s %-9s %7s %9s\n", "library", "method", "ms_median",
			"ms_min", "cpu_ms", "raw", "pairs", "checksum", "matches", "ratio", "cpu_ratio");
		for (const row &r : rows) {
			if (r.skipped) {
				std::printf("%-10s %-24s skipped: %s\n", r.library.c_str(), r.method.c_str(), r.why.c_str());
				if (r.is_broadphase)
					failed = true;
				continue;
			}
			bool matches = !base.skipped && r.pairs == base.pairs && r.checksum == base.checksum && !r.duplicates;
			bool expected = !matches && !base.skipped && explained(base, r, s, scene->ids);
			const char *verdict = matches ? "yes" : expected ? "explained" : "no";
			double ratio = base.skipped ? 0 : r.t.median_ms / base.t.median_ms;
			double cpu_ratio = base.skipped ? 0 : r.t.cpu_median_ms / base.t.cpu_median_ms;
			if (!matches && !expected)
				failed = true;
			char dup[40] = "";
			if (r.duplicates)
				std::snprintf(dup, sizeof dup, " (%zu repeated)", r.duplicates);
			std::printf("%-10s %-24s %10.3f %10.3f %10.3f %10" PRIu64 " %10zu %016" PRIx64 " %-9s %7.2f %9.2f%s\n",
				r.library.c_str(), r.method.c_str(), r.t.median_ms, r.t.min_ms, r.t.cpu_median_ms, r.raw, r.pairs,
				r.checksum, verdict, ratio, cpu_ratio, dup);
			if (csv)
				std::fprintf(csv, "%s,%" PRIu32 ",%d,%s,%s,%.3f,%.3f,%zu,%016" PRIx64 ",%s,%.3f,%" PRIu64 ",%.3f,%.3f\n",
					name.c_str(), scene->count, scene->dims, r.library.c_str(), r.method.c_str(), r.t.median_ms,
					r.t.min_ms, r.pairs, r.checksum, verdict, ratio, r.raw, r.t.cpu_median_ms, cpu_ratio);
		}
		std::fflush(stdout);
		if (csv)
			std::fflush(csv);
		bp_scene_destroy(scene);
	}
	if (csv)
		std::fclose(csv);
	if (o.check && failed) {
		std::fprintf(stderr, "bp_peers: a pair set differs where the semantics match (see the table)\n");
		return 1;
	}
	return 0;
}
