// SPDX-License-Identifier: MIT
// bp_perf_queries: what a query filter costs. The same queries on one view, unfiltered and through
// filters that reject about half the hits (category bits, or a host callback), interleaved in
// each run. CSV rows scene,query,n,filter,queries,median_ns,min_ns,hits,ratio: medians over blocks of
// queries (all runs), min_ns the fastest block, ratio the median of the per-block ratios to "none".
#define _POSIX_C_SOURCE 200809L // clock_gettime
#include <broadphase/broadphase.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timing.h"

#define RUNS_MAX 31
#define BLOCK 20 ///< queries timed together; the filters take turns block by block
/// Rays and casts reach 10 units (about 3% of the world at 1M), as a game's short
/// line-of-sight or weapon rays do.
#define RAY_LENGTH 10.0f

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static float rng_float(uint64_t *s, float lo, float hi)
{
	return lo + (hi - lo) * (float)(rng_next(s) >> 40) * 0x1p-24f;
}

enum query { Q_AABB, Q_SPHERE, Q_VISIT_AABB, Q_RAY_ALL, Q_RAY_CLOSEST, Q_BOXCAST_ALL, Q_NEAREST, Q_NEAREST16, Q_COUNT };
static const char *const query_names[Q_COUNT] = {
	"aabb", "sphere", "visit_aabb", "raycast_all", "raycast_closest", "boxcast_all", "nearest8", "nearest16"};
enum filter { F_NONE, F_BITS, F_CALLBACK, F_COUNT };
static const char *const filter_names[F_COUNT] = {"none", "category", "callback"};

typedef struct bench {
	const bp_view *view;
	int dims;
	uint32_t queries;
	float (*point)[3], (*dir)[3];
	const uint8_t *team; ///< the host's own table: entity e is on team[e] (what the callback reads)
	uint32_t *out;
	bp_hit *hits;
	size_t capacity;
} bench;

static bool on_team_one(uint32_t entity, void *user) { return ((const uint8_t *)user)[entity] == 1; }

static bool count_visit(uint32_t entity, void *user)
{
	(void)entity;
	++*(size_t *)user;
	return true;
}

/// Runs queries [first, end) of kind q through filter f (NULL: the plain call); returns the hits.
static size_t run_queries(const bench *b, enum query q, const bp_query_filter *f, uint32_t first, uint32_t end)
{
	size_t hits = 0;
	for (uint32_t i = first; i < end; ++i) {
		const float *p = b->point[i], *d = b->dir[i];
		float lo[3], hi[3];
		for (int k = 0; k < 3; ++k) {
			lo[k] = p[k] - 3.0f;
			hi[k] = p[k] + 3.0f;
		}
		size_t n = 0;
		bool found = false;
		bp_status status = BP_OK;
		switch (q) {
		case Q_AABB:
			status = bp_view_overlap_box(b->view, lo, hi, f, b->out, b->capacity, &n);
			break;
		case Q_SPHERE:
			status = bp_view_overlap_sphere(b->view, p, 3.0f, f, b->out, b->capacity, &n);
			break;
		case Q_VISIT_AABB:
			status = bp_view_visit_overlap_box(b->view, lo, hi, f, count_visit, &n);
			break;
		case Q_RAY_ALL:
			status = bp_view_cast_ray(b->view, p, d, RAY_LENGTH, f, b->hits, b->capacity, &n);
			break;
		case Q_RAY_CLOSEST:
			status = bp_view_cast_ray_closest(b->view, p, d, RAY_LENGTH, f, b->hits, &found);
			n = found;
			break;
		case Q_BOXCAST_ALL: {
			float blo[3], bhi[3];
			for (int k = 0; k < 3; ++k) {
				blo[k] = p[k] - 0.5f;
				bhi[k] = p[k] + 0.5f;
			}
			status = bp_view_cast_box(b->view, blo, bhi, d, RAY_LENGTH, f, b->hits, b->capacity, &n);
			break;
		}
		default: {
			// nearest16 unfiltered finds about what nearest8 through a filter
			// rejecting half must look at: its fair reference.
			const uint32_t k = q == Q_NEAREST ? 8 : 16;
			status = bp_view_nearest(b->view, p, k, f, b->hits, &n);
			break;
		}
		}
		if (status != BP_OK) {
			fprintf(stderr, "bp_perf_queries: %s: %s\n", query_names[q], bp_status_string(status));
			exit(1);
		}
		hits += n;
	}
	return hits;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, compare_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 200000;
	int runs = argc > 2 ? atoi(argv[2]) : 7;
	uint32_t queries = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 2000;
	const char *csv_path = argc > 4 ? argv[4] : NULL;
	if (n < 1 || runs < 1 || runs > RUNS_MAX || queries < 1) {
		fprintf(stderr, "usage: bp_perf_queries [n] [runs <= %d] [queries] [csv]\n", RUNS_MAX);
		return 2;
	}
	// Uniform 3D boxes, extents up to 1, at about the density of bp_perf's uniform
	// scene; half on team 1 (category 1), half on team 2 (category 2).
	const float world = cbrtf((float)n) * 2.0f;
	bp_world_def def = bp_world_def_default();
	def.dims = 3;
	def.capacity = n;
	def.thread_count = 1;
	bp_world *w = NULL;
	if (bp_world_create(&def, &w) != BP_OK)
		return 1;
	uint8_t *team = malloc(n);
	uint64_t rng = 12345;
	for (uint32_t i = 0; i < n; ++i) {
		bp_entity_def e = bp_entity_def_default();
		for (int k = 0; k < 3; ++k) {
			e.min[k] = rng_float(&rng, 0.0f, world);
			e.max[k] = e.min[k] + rng_float(&rng, 0.0f, 1.0f);
		}
		team[i] = (uint8_t)(1 + (rng_next(&rng) & 1));
		e.category = team[i];
		bp_entity out;
		if (bp_entity_create(w, &e, &out) != BP_OK)
			return 1;
	}
	bp_view *view = NULL;
	if (bp_frame_step(w, &view) != BP_OK)
		return 1;
	bench b = {.view = view, .dims = 3, .queries = queries, .team = team, .capacity = n};
	b.point = malloc(queries * sizeof *b.point);
	b.dir = malloc(queries * sizeof *b.dir);
	b.out = malloc(n * sizeof *b.out);
	b.hits = malloc(n * sizeof *b.hits);
	for (uint32_t i = 0; i < queries; ++i) {
		float len = 0;
		for (int k = 0; k < 3; ++k) {
			b.point[i][k] = rng_float(&rng, 0.0f, world);
			b.dir[i][k] = rng_float(&rng, -1.0f, 1.0f);
			len += b.dir[i][k] * b.dir[i][k];
		}
		for (int k = 0; k < 3; ++k)
			b.dir[i][k] /= sqrtf(len);
	}
	bp_query_filter filters[F_COUNT];
	filters[F_BITS] = bp_query_filter_default();
	filters[F_BITS].mask = 1; // team 1 only
	filters[F_CALLBACK] = bp_query_filter_default();
	filters[F_CALLBACK].accept = on_team_one;
	filters[F_CALLBACK].user = team;

	FILE *csv = csv_path ? fopen(csv_path, "w") : stdout;
	if (!csv)
		return 1;
	fprintf(csv, "scene,query,n,filter,queries,median_ns,min_ns,hits,ratio\n");
	const uint32_t blocks = (queries + BLOCK - 1) / BLOCK;
	double *ns[F_COUNT], *ratio[F_COUNT];
	for (int f = 0; f < F_COUNT; ++f) {
		ns[f] = malloc((size_t)runs * blocks * sizeof *ns[f]);
		ratio[f] = malloc((size_t)runs * blocks * sizeof *ratio[f]);
	}
	for (int q = 0; q < Q_COUNT; ++q) {
		run_queries(&b, (enum query)q, NULL, 0, queries); // warm: index made, caches filled
		size_t hits[F_COUNT] = {0}, samples = 0;
		for (int r = 0; r < runs; ++r) {
			// Block by block, each filter in turn and each first in a third of the
			// blocks; the ratio is taken per block, so a slow moment of the shared
			// machine (or a warm cache) falls on every filter of that block alike.
			for (uint32_t first = 0, turn = 0; first < queries; first += BLOCK, ++turn, ++samples) {
				const uint32_t end = first + BLOCK < queries ? first + BLOCK : queries;
				for (int k = 0; k < F_COUNT; ++k) {
					const int f = (int)((turn + (uint32_t)r + (uint32_t)k) % F_COUNT);
					uint64_t t0 = now_ns();
					size_t h = run_queries(&b, (enum query)q, f == F_NONE ? NULL : &filters[f], first, end);
					ns[f][samples] = (double)(now_ns() - t0) / (end - first);
					if (r == 0)
						hits[f] += h;
				}
				for (int f = 0; f < F_COUNT; ++f)
					ratio[f][samples] = ns[f][samples] / ns[F_NONE][samples];
			}
		}
		for (int f = 0; f < F_COUNT; ++f) {
			double med_ratio = median(ratio[f], (int)samples), med = median(ns[f], (int)samples);
			fprintf(csv, "uniform3d,%s,%u,%s,%u,%.1f,%.1f,%.2f,%.3f\n", query_names[q], n, filter_names[f], queries,
				med, ns[f][0], (double)hits[f] / queries, med_ratio);
			fflush(csv);
		}
	}
	for (int f = 0; f < F_COUNT; ++f) {
		free(ns[f]);
		free(ratio[f]);
	}
	if (csv != stdout)
		fclose(csv);
	bp_view_release(view);
	bp_world_destroy(w);
	free(team);
	free(b.point);
	free(b.dir);
	free(b.out);
	free(b.hits);
	return 0;
}
