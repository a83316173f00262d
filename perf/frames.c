// SPDX-License-Identifier: MIT
// bp_perf_frames: does the frame scheduler hide the build behind host work, and what does a build
// running in the background cost an AABB query on the host thread? CSV rows bench,scene,n,threads,metric,value.
#define _POSIX_C_SOURCE 200809L // clock_gettime
#include <broadphase/broadphase.h>
#include <bp_scene.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "scene_options.h"
#include "timing.h"

static void busy_ns(uint64_t ns)
{
	uint64_t until = now_ns() + ns;
	while (now_ns() < until) {
	}
}

/// The q-quantile (nearest rank) of v[0..count), sorting in place.
static double quantile(double *v, size_t count, double q)
{
	if (count == 0)
		return 0;
	qsort(v, count, sizeof v[0], compare_double);
	size_t rank = (size_t)ceil(q * (double)count);
	return v[rank ? rank - 1 : 0];
}

typedef struct options {
	bp_distribution dist;
	int dims;
	uint32_t n;
	int threads;
	bp_algorithm algorithm;
	uint32_t frames; ///< frames per timed block
	uint32_t rounds; ///< blocks of each kind, interleaved
	double host_ms;  ///< 0: as long as the measured build
	const char *csv;
} options;

typedef struct bench {
	options o;
	bp_scene *scene;
	bp_world *world;
	float *centre[3], *half[3], *velocity[3], *min[3], *max[3];
	float lo[3], hi[3];
	float query_edge;
	uint64_t rng;
	uint32_t hits[2]; ///< query results seen, to keep the queries honest
	FILE *csv;
	char scene_name[32];
} bench;

/// Rows are named bench/policy ("overlap/passive"): OMP_WAIT_POLICY changes both
/// numbers a lot on 2 cores, and libgomp reads it only at load, so it is set by the
/// caller and recorded here.
static void row(bench *b, const char *bench_name, const char *metric, double value)
{
	const char *policy = getenv("OMP_WAIT_POLICY");
	char name[64];
	snprintf(name, sizeof name, "%s/%s", bench_name, policy && *policy ? policy : "unset");
	printf("%-16s %-12s n=%u threads=%d %-28s %.3f\n", name, b->scene_name, b->o.n, b->o.threads, metric, value);
	if (b->csv)
		fprintf(b->csv, "%s,%s,%u,%d,%s,%.6g\n", name, b->scene_name, b->o.n, b->o.threads, metric, value);
}

// Motion as in `bp frames`: a fixed velocity per entity (up to 5% of its extent per axis and frame),
// bouncing off the box of the first frame's centres.
static bool motion_init(bench *b)
{
	const uint32_t n = b->scene->count;
	double extent = 0, span = 1;
	for (int a = 0; a < b->o.dims; ++a) {
		b->centre[a] = malloc(n * sizeof(float));
		b->half[a] = malloc(n * sizeof(float));
		b->velocity[a] = malloc(n * sizeof(float));
		b->min[a] = malloc(n * sizeof(float));
		b->max[a] = malloc(n * sizeof(float));
		if (!b->centre[a] || !b->half[a] || !b->velocity[a] || !b->min[a] || !b->max[a])
			return false;
		b->lo[a] = INFINITY;
		b->hi[a] = -INFINITY;
		double sum = 0;
		for (uint32_t i = 0; i < n; ++i) {
			float c = 0.5f * (b->scene->min[a][i] + b->scene->max[a][i]);
			float h = 0.5f * (b->scene->max[a][i] - b->scene->min[a][i]);
			b->centre[a][i] = c;
			b->half[a][i] = h;
			b->lo[a] = fminf(b->lo[a], c);
			b->hi[a] = fmaxf(b->hi[a], c);
			uint64_t bits = bp_splitmix64(((uint64_t)a << 32) | i);
			b->velocity[a][i] = (float)(0.1 * h * ((double)(bits >> 11) * 0x1p-53 * 2.0 - 1.0));
			sum += 2.0 * h;
		}
		extent = sum / n;
		span = b->hi[a] - b->lo[a] + extent;
	}
	// Cubic query box expected to overlap ~10 boxes in an even spread (uniform
	// scenes: every axis has the same span and mean extent):
	// n * ((s + e) / span)^dims = 10.
	b->query_edge = (float)fmax(0.0, span * pow(10.0 / n, 1.0 / b->o.dims) - extent);
	return true;
}

static bp_status move(bench *b)
{
	const uint32_t n = b->scene->count;
	for (int a = 0; a < b->o.dims; ++a) {
		for (uint32_t i = 0; i < n; ++i) {
			float x = b->centre[a][i] + b->velocity[a][i];
			if (x < b->lo[a] || x > b->hi[a]) {
				x = fminf(fmaxf(x, b->lo[a]), b->hi[a]);
				b->velocity[a][i] = -b->velocity[a][i];
			}
			b->centre[a][i] = x;
			b->min[a][i] = x - b->half[a][i];
			b->max[a][i] = x + b->half[a][i];
		}
	}
	bp_bounds_arrays bounds = {b->min[0], b->min[1], b->min[2], b->max[0], b->max[1], b->max[2]};
	return bp_entities_set_bounds(b->world, bp_target_range(0, n), &bounds);
}

/// One AABB query around a random entity; returns its time in ns.
static double query(bench *b, const bp_view *view, int which)
{
	uint32_t e = (uint32_t)(bp_splitmix64(b->rng++) % b->scene->count);
	float lo[3], hi[3];
	for (int a = 0; a < b->o.dims; ++a) {
		lo[a] = b->centre[a][e] - 0.5f * b->query_edge;
		hi[a] = b->centre[a][e] + 0.5f * b->query_edge;
	}
	uint32_t out[256];
	size_t total = 0;
	uint64_t t0 = now_ns();
	(void)bp_view_overlap_box(view, lo, hi, NULL, out, 256, &total);
	double ns = (double)(now_ns() - t0);
	b->hits[which] += (uint32_t)total;
	return ns;
}

static double build_ms(const bp_view *view)
{
	bp_frame_stats s = bp_view_stats(view);
	return (double)(s.ns_total - s.ns_prepare) / 1e6;
}

/// Median build time of a few synchronous frames (also warms the pools).
static bool calibrate(bench *b, double *out_ms)
{
	double ms[5];
	for (int i = 0; i < 5; ++i) {
		bp_view *v = NULL;
		if (move(b) != BP_OK || bp_frame_step(b->world, &v) != BP_OK)
			return false;
		ms[i] = build_ms(v);
		bp_view_release(v);
	}
	*out_ms = quantile(ms, 5, 0.5);
	return true;
}

typedef struct samples {
	double *period, *host, *build;
	size_t count;
} samples;

/// Overlapped frames: move, submit, host work while the build runs, wait, take the view.
static bool run_overlapped(bench *b, uint64_t host_ns, samples *s)
{
	for (uint32_t f = 0; f < b->o.frames; ++f) {
		uint64_t t0 = now_ns(), number = 0;
		if (move(b) != BP_OK || bp_frame_submit(b->world, &number) != BP_OK)
			return false;
		busy_ns(host_ns);
		uint64_t t1 = now_ns();
		bp_view *v = NULL;
		if (bp_frame_wait(b->world, number) != BP_OK || bp_frame_acquire(b->world, &v) != BP_OK)
			return false;
		uint64_t t2 = now_ns();
		s->period[s->count] = (double)(t2 - t0) / 1e6;
		s->host[s->count] = (double)(t1 - t0) / 1e6;
		s->build[s->count] = build_ms(v);
		s->count++;
		bp_view_release(v);
	}
	return true;
}

/// Serial frames: the same build (bp_frame_step, so sort and events too), then the host work.
/// `world_step`: bp_world_step instead (pairs only, no sort or events: a cheaper build).
static bool run_serial(bench *b, uint64_t host_ns, bool world_step, samples *s)
{
	for (uint32_t f = 0; f < b->o.frames; ++f) {
		uint64_t t0 = now_ns();
		if (move(b) != BP_OK)
			return false;
		if (world_step) {
			if (bp_world_step(b->world) != BP_OK)
				return false;
		} else {
			bp_view *v = NULL;
			if (bp_frame_step(b->world, &v) != BP_OK)
				return false;
			bp_view_release(v);
		}
		busy_ns(host_ns);
		s->period[s->count++] = (double)(now_ns() - t0) / 1e6;
	}
	return true;
}

static bool bench_overlap(bench *b, double build_estimate_ms)
{
	const double host_ms = b->o.host_ms > 0 ? b->o.host_ms : build_estimate_ms;
	const uint64_t host_ns = (uint64_t)(host_ms * 1e6);
	const size_t cap = (size_t)b->o.frames * b->o.rounds;
	double *mem = calloc(cap * 5, sizeof(double));
	if (!mem)
		return false;
	samples over = {mem, mem + cap, mem + 2 * cap, 0};
	samples serial = {mem + 3 * cap, NULL, NULL, 0}, step = {mem + 4 * cap, NULL, NULL, 0};
	bool ok = true;
	// Interleaved blocks, so that load from other processes hits all three alike.
	for (uint32_t r = 0; ok && r < b->o.rounds; ++r)
		ok = run_overlapped(b, host_ns, &over) && run_serial(b, host_ns, false, &serial) &&
			run_serial(b, host_ns, true, &step);
	if (ok) {
		double h = quantile(over.host, over.count, 0.5), bd = quantile(over.build, over.count, 0.5);
		double po = quantile(over.period, over.count, 0.5), ps = quantile(serial.period, serial.count, 0.5);
		row(b, "overlap", "host_ms", h);
		row(b, "overlap", "build_ms", bd);
		row(b, "overlap", "max_host_build_ms", fmax(h, bd));
		row(b, "overlap", "sum_host_build_ms", h + bd);
		row(b, "overlap", "period_overlapped_ms", po);
		row(b, "overlap", "period_serial_ms", ps);
		row(b, "overlap", "period_serial_world_step_ms", quantile(step.period, step.count, 0.5));
		row(b, "overlap", "ratio_overlapped_to_max", po / fmax(h, bd));
		row(b, "overlap", "speedup_serial_to_overlapped", ps / po);
	}
	free(mem);
	return ok;
}

/// p50/p99 of host-thread AABB queries while a build runs and while none does.
/// "During": queries from submit until about 80% of the estimated build time has
/// passed (so the builder is running); "idle": the same number after the wait.
static bool bench_query(bench *b, double build_estimate_ms)
{
	const size_t cap = 1u << 16;
	double *during = malloc(cap * sizeof(double)), *idle = malloc(cap * sizeof(double));
	size_t nd = 0, ni = 0;
	bool ok = during && idle;
	bp_view *held = NULL;
	ok = ok && bp_frame_step(b->world, &held) == BP_OK;
	const uint64_t window = (uint64_t)(0.8 * build_estimate_ms * 1e6);
	for (uint32_t f = 0; ok && f < b->o.frames * b->o.rounds; ++f) {
		uint64_t number = 0;
		ok = move(b) == BP_OK && bp_frame_submit(b->world, &number) == BP_OK;
		uint64_t t0 = now_ns();
		size_t k = 0;
		while (ok && now_ns() - t0 < window && nd < cap) {
			during[nd++] = query(b, held, 0);
			++k;
		}
		ok = ok && bp_frame_wait(b->world, number) == BP_OK;
		bp_view_release(held);
		held = NULL;
		ok = ok && bp_frame_acquire(b->world, &held) == BP_OK;
		for (size_t i = 0; ok && i < k && ni < cap; ++i)
			idle[ni++] = query(b, held, 1);
	}
	bp_view_release(held);
	if (ok && nd && ni) {
		double d99 = quantile(during, nd, 0.99), i99 = quantile(idle, ni, 0.99);
		row(b, "query", "queries_each", (double)ni);
		row(b, "query", "hits_mean", (double)b->hits[1] / (double)ni);
		row(b, "query", "p50_during_build_us", quantile(during, nd, 0.5) / 1e3);
		row(b, "query", "p99_during_build_us", d99 / 1e3);
		row(b, "query", "p50_no_build_us", quantile(idle, ni, 0.5) / 1e3);
		row(b, "query", "p99_no_build_us", i99 / 1e3);
		row(b, "query", "p99_ratio", d99 / i99);
	}
	free(during);
	free(idle);
	return ok;
}

static void usage(FILE *to)
{
	fputs("usage: bp_perf_frames [--n N] [--dist NAME] [--dims 2|3] [--algo NAME] [--threads T]\n"
	      "                      [--frames F] [--rounds R] [--host-ms H] [--csv FILE]\n"
	      "defaults: --n 200000 --dist uniform --dims 3 --algo grid --threads 2 --frames 6 --rounds 3,\n"
	      "--host-ms 0 = as long as the measured build\n",
		to);
}

int main(int argc, char **argv)
{
	options o = {.dist = BP_DIST_UNIFORM, .dims = 3, .n = 200000, .threads = 2, .algorithm = BP_ALGO_GRID,
		.frames = 6, .rounds = 3};
	for (int i = 1; i < argc; i += 2) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool ok = v != NULL;
		if (strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (ok && strcmp(a, "--n") == 0)
			o.n = (uint32_t)strtoul(v, NULL, 10);
		else if (ok && strcmp(a, "--dims") == 0)
			o.dims = atoi(v);
		else if (ok && strcmp(a, "--threads") == 0)
			o.threads = atoi(v);
		else if (ok && strcmp(a, "--frames") == 0)
			o.frames = (uint32_t)strtoul(v, NULL, 10);
		else if (ok && strcmp(a, "--rounds") == 0)
			o.rounds = (uint32_t)strtoul(v, NULL, 10);
		else if (ok && strcmp(a, "--host-ms") == 0)
			o.host_ms = atof(v);
		else if (!ok || !perf_scene_option(a, v, &o.dist, &o.algorithm, &o.csv, &ok))
			ok = false;
		if (!ok) {
			fprintf(stderr, "bp_perf_frames: bad argument '%s'\n", a);
			usage(stderr);
			return 1;
		}
	}
	if (o.n < 100 || o.frames == 0 || o.rounds == 0 || (o.dims != 2 && o.dims != 3)) {
		usage(stderr);
		return 1;
	}
	bench b = {.o = o, .rng = 1};
	snprintf(b.scene_name, sizeof b.scene_name, "%s:%d", bp_distribution_name(o.dist), o.dims);
	bp_gen_def gen = bp_gen_def_default();
	gen.dist = o.dist;
	gen.dims = o.dims;
	gen.n = o.n;
	bp_world_def def = bp_world_def_default();
	def.dims = o.dims;
	def.capacity = o.n;
	def.algorithm = o.algorithm;
	def.thread_count = o.threads;
	bp_entity_def common = bp_entity_def_default();
	int code = 0;
	if (bp_scene_generate(&gen, &b.scene) != BP_OK || bp_world_create(&def, &b.world) != BP_OK) {
		fprintf(stderr, "bp_perf_frames: cannot generate the scene or create the world\n");
		code = 3;
	} else {
		bp_bounds_arrays bounds = bp_scene_frame_bounds(b.scene, 0);
		if (bp_world_create_entities(b.world, o.n, &bounds, &common, NULL) != BP_OK || !motion_init(&b)) {
			fprintf(stderr, "bp_perf_frames: out of memory\n");
			code = 3;
		}
	}
	if (code == 0 && o.csv) {
		b.csv = fopen(o.csv, "w");
		if (!b.csv) {
			perror(o.csv);
			code = 3;
		} else
			fprintf(b.csv, "bench,scene,n,threads,metric,value\n");
	}
	double build_estimate = 0;
	if (code == 0 && !calibrate(&b, &build_estimate))
		code = 3;
	if (code == 0 && (!bench_overlap(&b, build_estimate) || !bench_query(&b, build_estimate))) {
		fprintf(stderr, "bp_perf_frames: a frame failed: %s\n", bp_world_last_error(b.world));
		code = 3;
	}
	if (b.csv && fclose(b.csv) != 0)
		code = 3;
	for (int a = 0; a < 3; ++a) {
		free(b.centre[a]);
		free(b.half[a]);
		free(b.velocity[a]);
		free(b.min[a]);
		free(b.max[a]);
	}
	bp_world_destroy(b.world);
	bp_scene_destroy(b.scene);
	return code;
}
