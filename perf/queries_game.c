// SPDX-License-Identifier: MIT
// bp_perf_queries_game: a game's reads of one frame, and what a batch of rays gains from threads.
// One world of n uniform 3D boxes (half on team 1, half on team 2; a tenth of them agents), stepped
// through the scheduler. Each frame's reads, on the host thread: every agent casts one short ray
// that leaves itself out by handle, finds its 8 nearest enemies, and the frame casts a batch of
// line-of-sight rays between agents, with one filter and with a filter each (leaving out the
// agent a ray starts in). Then batches of 10,000 queries on 1 and T threads (default 2): random
// rays, sight lines, the agents' bodies swept along them and their 8 nearest enemies, the last
// three with a filter each.
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
	bp_box_cast *casts; ///< BATCH casts
	float *points;      ///< BATCH points
	bp_hit *nearest;    ///< 8 per point
	size_t *counts;
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

/// Each ray's agent's body (1 wide at its centre) swept along the ray, and its centre as a
/// point for nearest.
static void agent_queries(game *g)
{
	for (uint32_t r = 0; r < BATCH; ++r) {
		const uint32_t a = r % g->agents;
		for (int k = 0; k < 3; ++k) {
			g->casts[r].min[k] = g->centre[a][k] - 0.5f;
			g->casts[r].max[k] = g->centre[a][k] + 0.5f;
			g->casts[r].dir[k] = g->rays[r].dir[k];
			g->points[3 * r + k] = g->centre[a][k];
		}
		g->casts[r].max_t = g->rays[r].max_t;
	}
}

/// Query r's agent's enemies: the other team's dynamic entities, never the agent.
static void enemy_filters(const game *g, bp_query_filter *each)
{
	for (uint32_t r = 0; r < BATCH; ++r) {
		const uint32_t a = r % g->agents;
		each[r] = bp_query_filter_default();
		each[r].category = 1u + (a & 1u);
		each[r].mask = 2u - (a & 1u);
		each[r].kinds = BP_QUERY_DYNAMIC;
		each[r].exclude = a;
	}
}

/// A batch of BATCH queries on a view, what the thread comparison times.
typedef void batch_fn(const bp_view *v, game *g, const bp_query_filter *each);

static void random_rays(const bp_view *v, game *g, const bp_query_filter *each)
{
	(void)each;
	(void)bp_view_cast_rays_closest(v, g->rays, BATCH, NULL, g->hits);
}

static void sight_lines_each(const bp_view *v, game *g, const bp_query_filter *each)
{
	(void)bp_view_cast_rays_closest_each(v, g->rays, BATCH, each, g->hits);
}

/// Each agent's box (its centre, 1 wide) swept 10 units along its sight line, leaving
/// itself out: a character controller's move.
static void body_casts_each(const bp_view *v, game *g, const bp_query_filter *each)
{
	(void)bp_view_cast_boxes_closest_each(v, g->casts, BATCH, each, g->hits);
}

/// The 8 nearest enemies of every agent (BATCH agents' centres, the enemy team's filter).
static void nearest_enemies_each(const bp_view *v, game *g, const bp_query_filter *each)
{
	(void)bp_view_nearest_points_each(v, g->points, BATCH, 8, each, g->nearest, g->counts);
}

/// Medians of `runs` runs of fn on the 1-thread and the T-thread view, interleaved.
static void time_threads(bp_view *views[2], batch_fn *fn, game *g, const bp_query_filter *each, int runs,
	double *by_threads[2])
{
	fn(views[1], g, each); // workers started
	for (int r = 0; r < runs; ++r)
		for (int t = 0; t < 2; ++t) {
			const double t0 = now_ms();
			fn(views[t], g, each);
			by_threads[t][r] = now_ms() - t0;
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
	g.casts = malloc(BATCH * sizeof *g.casts);
	g.points = malloc(3 * BATCH * sizeof *g.points);
	g.nearest = malloc(8 * BATCH * sizeof *g.nearest);
	g.counts = malloc(BATCH * sizeof *g.counts);
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
	double *by_threads[2] = {malloc((size_t)runs * sizeof(double)), malloc((size_t)runs * sizeof(double))};
	// Sight lines from agents' centres to random points, each leaving out its agent; the
	// agents' bodies swept along them; the agents' nearest enemies.
	const struct {
		const char *what;
		batch_fn *fn;
	} batches[] = {{"ray_batch", random_rays}, {"sight_line_batch_each", sight_lines_each},
		{"body_cast_batch_each", body_casts_each}, {"nearest_enemies_batch_each", nearest_enemies_each}};
	for (size_t b = 0; b < sizeof batches / sizeof *batches; ++b) {
		if (b == 1)
			sight_lines(&g, BATCH);
		if (b == 2)
			agent_queries(&g);
		if (b == 3)
			enemy_filters(&g, each);
		time_threads(views, batches[b].fn, &g, each, runs, by_threads);
		report(csv, n, batches[b].what, 1, BATCH, by_threads[0], runs);
		report(csv, n, batches[b].what, threads, BATCH, by_threads[1], runs);
		printf("%s: %d threads %.2fx one thread (medians)\n", batches[b].what, threads,
			by_threads[0][runs / 2] / by_threads[1][runs / 2]);
	}
	printf("%zu hits seen by the agents' frames\n", seen);
	free(each);
	for (int t = 0; t < 2; ++t) {
		bp_view_release(views[t]);
		bp_world_destroy(worlds[t]);
		free(by_threads[t]);
	}
	if (csv != stdout)
		fclose(csv);
	free(g.handles), free(g.centre), free(g.rays), free(g.hits), free(ms);
	free(g.casts), free(g.points), free(g.nearest), free(g.counts);
	return 0;
}
