// SPDX-License-Identifier: MIT
// bp_perf_queries_game: a game's reads of one frame, and what a batch of rays gains from threads.
// One world of n uniform 3D boxes (half on team 1, half on team 2; a tenth of them agents), stepped
// through the scheduler. Each frame's reads, on the host thread: every agent casts one short ray
// that leaves itself out by handle, finds its 8 nearest enemies, and the frame casts a batch of
// line-of-sight rays between agents, with one filter and with a filter each (leaving out the
// agent a ray starts in). Then batches of 10,000 rays on 1 and T threads (default 2): random
// rays, and sight lines with a filter each.
// CSV rows n,what,threads,count,median_ms,min_ms.
#define _POSIX_C_SOURCE 200809L // clock_gettime
#include <broadphase/broadphase.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timing.h"

#define RAY_LENGTH 10.0f ///< about 3% of the world at 1M: a weapon or sight ray
#define BATCH 10000u

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

typedef struct game {
	uint32_t n, agents; ///< agents are dense indices [0, agents)
	float world;
	bp_entity *handles;
	float (*centre)[3];
	bp_ray *rays; ///< BATCH rays
	bp_hit *hits;
} game;

static bp_world *make_world(game *g, int threads, uint64_t seed)
{
	bp_world_def def = bp_world_def_default();
	def.dims = 3, def.capacity = g->n, def.thread_count = threads;
	bp_world *w = NULL;
	if (bp_world_create(&def, &w) != BP_OK)
		return NULL;
	uint64_t rng = seed;
	for (uint32_t i = 0; i < g->n; ++i) {
		bp_entity_def e = bp_entity_def_default();
		for (int k = 0; k < 3; ++k) {
			e.min[k] = rng_float(&rng, 0.0f, g->world);
			e.max[k] = e.min[k] + rng_float(&rng, 0.0f, 1.0f);
			g->centre[i][k] = 0.5f * (e.min[k] + e.max[k]);
		}
		e.kind = i < g->agents ? BP_KIND_DYNAMIC : BP_KIND_STATIC;
		e.category = 1u + (uint32_t)(i & 1); // teams 1 and 2
		if (bp_entity_create(w, &e, &g->handles[i]) != BP_OK)
			return NULL;
	}
	return w;
}

/// One frame's reads; returns hits seen, so nothing is optimised away.
static size_t read_frame(const game *g, const bp_view *v, uint64_t *rng)
{
	size_t seen = 0;
	bp_hit hit, near[8];
	bool found;
	size_t count;
	for (uint32_t a = 0; a < g->agents; ++a) {
		float dir[3];
		for (int k = 0; k < 3; ++k)
			dir[k] = rng_float(rng, -1.0f, 1.0f);
		const float len = sqrtf(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
		for (int k = 0; k < 3; ++k)
			dir[k] /= len;
		bp_query_filter self = bp_query_filter_default();
		self.exclude_entity = g->handles[a];
		(void)bp_view_cast_ray_closest(v, g->centre[a], dir, RAY_LENGTH, &self, &hit, &found);
		bp_query_filter enemies = bp_query_filter_default();
		enemies.mask = a & 1 ? 1u : 2u;
		(void)bp_view_nearest(v, g->centre[a], 8, &enemies, near, &count);
		seen += found + count;
	}
	return seen;
}

/// Sight lines from agent i to agent i + 1 (mod agents), as rays of length 1.
static void sight_lines(const game *g, uint32_t count)
{
	for (uint32_t r = 0; r < count; ++r) {
		const uint32_t a = r % g->agents, b = (r + 1) % g->agents;
		bp_ray *ray = &g->rays[r];
		for (int k = 0; k < 3; ++k) {
			ray->origin[k] = g->centre[a][k];
			ray->dir[k] = g->centre[b][k] - g->centre[a][k];
		}
		ray->max_t = 1.0f;
	}
}

static void report(FILE *csv, uint32_t n, const char *what, int threads, uint32_t count, double *ms, int runs)
{
	double min = ms[0];
	for (int r = 1; r < runs; ++r)
		min = ms[r] < min ? ms[r] : min;
	const double med = median_sorting(ms, (size_t)runs);
	printf("n=%-8u %-22s threads=%d count=%-6u median %8.3f ms  min %8.3f ms\n", n, what, threads, count, med, min);
	fprintf(csv, "%u,%s,%d,%u,%.4f,%.4f\n", n, what, threads, count, med, min);
}

int main(int argc, char **argv)
{
	const uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000000;
	const int runs = argc > 2 ? atoi(argv[2]) : 7;
	const char *csv_path = argc > 3 && strcmp(argv[3], "-") != 0 ? argv[3] : NULL;
	const int threads = argc > 4 ? atoi(argv[4]) : 2;
	if (n < 100 || runs < 1 || runs > 101 || threads < 2 || threads > 256) {
		fprintf(stderr, "usage: bp_perf_queries_game [n >= 100] [runs <= 101] [csv or -] [threads 2..256]\n");
		return 2;
	}
	FILE *csv = csv_path ? fopen(csv_path, "a") : stdout;
	if (!csv)
		return 1;
	if (!csv_path || ftell(csv) == 0)
		fprintf(csv, "n,what,threads,count,median_ms,min_ms\n");
	game g = {.n = n, .agents = n / 10 < 1000u ? n / 10 : 1000u, .world = cbrtf((float)n) * 2.0f};
	g.handles = malloc(n * sizeof *g.handles);
	g.centre = malloc(n * sizeof *g.centre);
	g.rays = malloc(BATCH * sizeof *g.rays);
	g.hits = malloc(BATCH * sizeof *g.hits);
	double *ms = malloc((size_t)runs * sizeof *ms);
	bp_world *worlds[2] = {make_world(&g, 1, 7), make_world(&g, threads, 7)};
	bp_view *views[2] = {NULL, NULL};
	for (int t = 0; t < 2; ++t)
		if (!worlds[t] || bp_frame_step(worlds[t], &views[t]) != BP_OK)
			return 1;
	uint64_t rng = 11;
	size_t seen = read_frame(&g, views[0], &rng); // makes the hierarchy
	for (int r = 0; r < runs; ++r) {
		const double t0 = now_ms();
		seen += read_frame(&g, views[0], &rng);
		ms[r] = now_ms() - t0;
	}
	report(csv, n, "agents_ray_and_nearest", 1, g.agents, ms, runs);
	sight_lines(&g, g.agents);
	for (int r = 0; r < runs; ++r) {
		const double t0 = now_ms();
		(void)bp_view_cast_rays_closest(views[0], g.rays, g.agents, NULL, g.hits);
		ms[r] = now_ms() - t0;
	}
	report(csv, n, "sight_line_batch", 1, g.agents, ms, runs);
	// The same sight lines, each leaving out the agent it starts in: a filter each.
	bp_query_filter *each = malloc(BATCH * sizeof *each);
	for (uint32_t r = 0; r < BATCH; ++r) {
		each[r] = bp_query_filter_default();
		each[r].exclude = r % g.agents;
	}
	for (int r = 0; r < runs; ++r) {
		const double t0 = now_ms();
		(void)bp_view_cast_rays_closest_each(views[0], g.rays, g.agents, each, g.hits);
		ms[r] = now_ms() - t0;
	}
	report(csv, n, "sight_line_batch_each", 1, g.agents, ms, runs);
	// Short random rays, as many as a busy frame casts, on 1 and T threads in turn.
	for (uint32_t r = 0; r < BATCH; ++r) {
		bp_ray *ray = &g.rays[r];
		for (int k = 0; k < 3; ++k) {
			ray->origin[k] = rng_float(&rng, 0.0f, g.world);
			ray->dir[k] = rng_float(&rng, -1.0f, 1.0f);
		}
		ray->max_t = RAY_LENGTH;
	}
	(void)bp_view_cast_rays_closest(views[1], g.rays, BATCH, NULL, g.hits); // workers started
	double *by_threads[2] = {malloc((size_t)runs * sizeof(double)), malloc((size_t)runs * sizeof(double))};
	for (int r = 0; r < runs; ++r)
		for (int t = 0; t < 2; ++t) {
			const double t0 = now_ms();
			(void)bp_view_cast_rays_closest(views[t], g.rays, BATCH, NULL, g.hits);
			by_threads[t][r] = now_ms() - t0;
		}
	report(csv, n, "ray_batch", 1, BATCH, by_threads[0], runs);
	report(csv, n, "ray_batch", threads, BATCH, by_threads[1], runs);
	printf("ray_batch: %d threads %.2fx one thread (medians); %zu hits seen\n", threads,
		by_threads[0][runs / 2] / by_threads[1][runs / 2], seen);
	// Sight lines from agents' centres to random points, each leaving out its agent.
	sight_lines(&g, BATCH);
	for (int r = 0; r < runs; ++r)
		for (int t = 0; t < 2; ++t) {
			const double t0 = now_ms();
			(void)bp_view_cast_rays_closest_each(views[t], g.rays, BATCH, each, g.hits);
			by_threads[t][r] = now_ms() - t0;
		}
	report(csv, n, "sight_line_batch_each", 1, BATCH, by_threads[0], runs);
	report(csv, n, "sight_line_batch_each", threads, BATCH, by_threads[1], runs);
	printf("sight_line_batch_each: %d threads %.2fx one thread (medians)\n", threads,
		by_threads[0][runs / 2] / by_threads[1][runs / 2]);
	free(each);
	for (int t = 0; t < 2; ++t) {
		bp_view_release(views[t]);
		bp_world_destroy(worlds[t]);
		free(by_threads[t]);
	}
	if (csv != stdout)
		fclose(csv);
	free(g.handles), free(g.centre), free(g.rays), free(g.hits), free(ms);
	return 0;
}
