// SPDX-License-Identifier: MIT
// What a full step costs per entity as the world grows: time, and the memory it holds beyond
// the world's entity store. Each size is stepped twice over: once with the default allocator
// for the time (median of --runs steps after a warm-up), once through a counting allocator
// for the bytes (the store after the entities are created, and the most held at once while
// steps run). The budget of #17 is 64 bytes per entity + 8 per pair beyond the store.
#define _POSIX_C_SOURCE 200809L
#include <broadphase/broadphase.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bp_scene.h"
#include "scene_options.h"
#include "timing.h"

enum { MAX_SIZES = 16 };

typedef struct options {
	uint32_t sizes[MAX_SIZES];
	int size_count;
	int thread_list[MAX_SIZES];
	int thread_count;
	int threads; ///< the one being measured
	int runs;
	bp_algorithm algorithm;
	bp_distribution dist;
	const char *csv;
} options;

// ---- the counting allocator -------------------------------------------------------

static _Atomic int64_t held, held_most;

static void *counting_alloc(size_t size, size_t align, void *user)
{
	(void)user;
	void *p = NULL;
	if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size ? size : 1) != 0)
		return NULL;
	int64_t now = atomic_fetch_add(&held, (int64_t)size) + (int64_t)size;
	int64_t most = atomic_load(&held_most);
	while (now > most && !atomic_compare_exchange_weak(&held_most, &most, now)) {
	}
	return p;
}

static void counting_free(void *p, size_t size, size_t align, void *user)
{
	(void)align;
	(void)user;
	if (p)
		atomic_fetch_sub(&held, (int64_t)size);
	free(p);
}

// ---- one size ---------------------------------------------------------------------

typedef struct measure {
	size_t pairs;
	double step_ms;     ///< median
	int64_t store;      ///< bytes held once the entities exist
	int64_t step_most;  ///< the most bytes held while steps ran, the store included
} measure;

/// A world of the scene's entities; NULL when it cannot be made.
static bp_world *world_of(const options *o, const bp_scene *scene)
{
	bp_world_def def = bp_world_def_default();
	def.dims = scene->dims;
	def.capacity = scene->count;
	def.algorithm = o->algorithm;
	def.thread_count = o->threads;
	bp_world *world = NULL;
	bp_entity_def common = bp_entity_def_default();
	bp_bounds_arrays bounds = bp_scene_frame_bounds(scene, 0);
	if (bp_world_create(&def, &world) != BP_OK)
		return NULL;
	if (bp_world_create_entities(world, scene->count, &bounds, &common, NULL) != BP_OK) {
		bp_world_destroy(world);
		return NULL;
	}
	return world;
}

static bool time_steps(const options *o, const bp_scene *scene, measure *m)
{
	bp_world *world = world_of(o, scene);
	double *ms = malloc((size_t)o->runs * sizeof *ms);
	bool ok = world && ms && bp_world_step(world) == BP_OK; // warm-up: scratch grows once
	for (int r = 0; ok && r < o->runs; ++r) {
		double t0 = now_ms();
		ok = bp_world_step(world) == BP_OK;
		ms[r] = now_ms() - t0;
	}
	if (ok) {
		bp_world_pairs(world, &m->pairs);
		m->step_ms = median_sorting(ms, (size_t)o->runs);
	}
	free(ms);
	bp_world_destroy(world);
	return ok;
}

static bool count_bytes(const options *o, const bp_scene *scene, measure *m)
{
	bp_allocator counting = {.alloc = counting_alloc, .free = counting_free};
	bp_set_allocator(&counting);
	bp_world *world = world_of(o, scene);
	bool ok = world != NULL;
	if (ok) {
		m->store = atomic_load(&held);
		atomic_store(&held_most, m->store);
		// Two steps: the second shows whether anything held by the first adds up.
		ok = bp_world_step(world) == BP_OK && bp_world_step(world) == BP_OK;
		m->step_most = atomic_load(&held_most);
	}
	bp_world_destroy(world);
	bp_set_allocator(NULL);
	return ok;
}

// ---- the driver ---------------------------------------------------------------------

/// A comma-separated list of up to MAX_SIZES numbers in [least, most].
static bool parse_list(const char *text, unsigned long least, unsigned long most, unsigned long *out, int *count)
{
	*count = 0;
	for (const char *p = text; *p;) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		if (end == p || v < least || v > most || *count == MAX_SIZES || (*end && *end != ','))
			return false;
		out[(*count)++] = v;
		p = *end ? end + 1 : end;
	}
	return *count > 0;
}

static bool parse_sizes(const char *text, options *o)
{
	unsigned long v[MAX_SIZES];
	if (!parse_list(text, 100, 100000000ul, v, &o->size_count))
		return false;
	for (int i = 0; i < o->size_count; ++i)
		o->sizes[i] = (uint32_t)v[i];
	return true;
}

static bool parse_threads(const char *text, options *o)
{
	unsigned long v[MAX_SIZES];
	if (!parse_list(text, 1, BP_MAX_THREADS, v, &o->thread_count))
		return false;
	for (int i = 0; i < o->thread_count; ++i)
		o->thread_list[i] = (int)v[i];
	return true;
}

/// Times and weighs one world of the scene at o->threads, and writes its row.
/// Returns the exit code.
static int measure_row(const options *o, const bp_scene *scene, FILE *csv)
{
	measure m = {0};
	if (!time_steps(o, scene, &m) || !count_bytes(o, scene, &m)) {
		fprintf(stderr, "bp_perf_memory: n=%u: out of memory or a step failed\n", scene->count);
		return 3;
	}
	double n = scene->count;
	// Beyond the store: what the steps held at most, per entity, against the budget.
	double step_b = (double)(m.step_most - m.store) / n, budget_b = 64.0 + 8.0 * (double)m.pairs / n;
	char line[256];
	snprintf(line, sizeof line, "%s,%s,%d,%u,%zu,%.3f,%.1f,%.1f,%.1f,%.1f,%.2f\n", bp_distribution_name(o->dist),
		bp_algorithm_name(o->algorithm), o->threads, scene->count, m.pairs, m.step_ms, m.step_ms * 1e6 / n,
		(double)m.store / n, step_b, budget_b, step_b / budget_b);
	fputs(line, stdout);
	fflush(stdout);
	if (csv)
		fputs(line, csv);
	return 0;
}

static void usage(FILE *to)
{
	fputs("usage: bp_perf_memory [--sizes N,N,...] [--dist NAME] [--algo NAME] [--threads T,T,...] [--runs R]\n"
	      "                      [--csv FILE]\n"
	      "defaults: --sizes 10000,100000,1000000,10000000 --dist uniform --algo grid --threads 1 --runs 5\n",
		to);
}

int main(int argc, char **argv)
{
	options o = {.runs = 5, .algorithm = BP_ALGO_GRID, .dist = BP_DIST_UNIFORM};
	parse_sizes("10000,100000,1000000,10000000", &o);
	parse_threads("1", &o);
	for (int i = 1; i < argc; i += 2) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool ok = v != NULL;
		if (strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (ok && strcmp(a, "--sizes") == 0)
			ok = parse_sizes(v, &o);
		else if (ok && strcmp(a, "--threads") == 0)
			ok = parse_threads(v, &o);
		else if (ok && strcmp(a, "--runs") == 0)
			ok = (o.runs = atoi(v)) > 0;
		else if (!ok || !perf_scene_option(a, v, &o.dist, &o.algorithm, &o.csv, &ok))
			ok = false;
		if (!ok) {
			fprintf(stderr, "bp_perf_memory: bad argument '%s'\n", a);
			usage(stderr);
			return 1;
		}
	}
	FILE *csv = o.csv ? fopen(o.csv, "w") : NULL;
	if (o.csv && !csv) {
		perror(o.csv);
		return 3;
	}
	const char *header = "dist,algo,threads,n,pairs,step_ms,ns_per_entity,store_b_per_entity,"
			     "step_b_per_entity,budget_b_per_entity,step_over_budget\n";
	fputs(header, stdout);
	if (csv)
		fputs(header, csv);
	int code = 0;
	for (int s = 0; s < o.size_count && code == 0; ++s) {
		bp_gen_def gen = bp_gen_def_default();
		gen.dist = o.dist;
		gen.n = o.sizes[s];
		bp_scene *scene = NULL;
		if (bp_scene_generate(&gen, &scene) != BP_OK) {
			fprintf(stderr, "bp_perf_memory: n=%u: cannot generate the scene\n", o.sizes[s]);
			code = 3;
		}
		for (int t = 0; t < o.thread_count && code == 0; ++t) {
			o.threads = o.thread_list[t];
			code = measure_row(&o, scene, csv);
		}
		bp_scene_destroy(scene);
	}
	if (csv)
		fclose(csv);
	return code;
}
