// SPDX-License-Identifier: MIT
// bp_perf_incremental: what a step costs when most of the world is at rest. Worlds that step
// the same frames side by side, interleaved frame by frame so that load hits all alike:
//   static_moving  S static + M moving entities: incremental, full (grid), and a world of the
//                  M movers alone (the cost the incremental world is held to);
//   all_moving     N entities all moving: incremental against full (grid), and with --skin a
//                  world keeping a neighbour list;
//   churn          N entities, a fraction destroyed and as many created per frame, beside a
//                  world of the same N where as many move instead;
//   static_moving_frames  static_moving through the frame scheduler (bp_frame_step), with
//                  the view's extras (sorted pairs, adjacency, events, query index).
//   static_moving_readers  the incremental world of static_moving through the scheduler, with
//                  and without a reader that queries every view (a box, a ray, 8 nearest), beside
//                  its twin stepped by bp_world_step, and one stepped so with a world view
//                  (bp_world_view) after each step for the reader: what the frame and keeping
//                  the query index cost over the step.
//   still_steps    a new incremental world of static_moving stepped alone from its first step:
//                  each step's time, path and active and searched counts, and the worst of
//                  steps 3-9 against their median (no step of a still world may stall).
// Movers move by up to 5% of their extent per frame and axis (--step F: F of it): a random walk,
// or with --steady at a fixed velocity each (as bodies in flight, and `bp frames`, move). With --host-busy a
// host thread spins on one core the whole time, as a simulating host does. CSV: workload,dims,
// n,moving,threads,host_busy,world,ms_median,ms_min,pairs,searched_median,frames,motion,
// ms_mean,ms_p99. With --spatial the entities lie in the order of their centres along a Morton
// curve, as particle codes sort their atoms (motion then reads walk_spatial or steady_spatial);
// a step other than 5% follows the motion's name ("walk@0.01").
#define _POSIX_C_SOURCE 200809L // clock_gettime
#include <broadphase/broadphase.h>
#include <bp_scene.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>
#include "host_busy.h"
#include "timing.h"

#define MAX_WORLDS 3

typedef struct options {
	int dims;
	uint32_t n_static, n_moving, n_all;
	double churn; ///< fraction destroyed (and created) per frame
	int threads;
	uint32_t frames;
	bool host_busy;
	const char *csv;
	const char *only; ///< one workload, or NULL for all
	bool skip_full;   ///< no full-rebuild world (to profile the incremental one alone)
	bool steady;      ///< movers keep a velocity rather than walk at random
	bool spatial;     ///< entities in the order of their centres along a Morton curve
	float margin;     ///< the incremental worlds' bp_world_def.margin (0 = from the motion)
	float skin;       ///< all_moving: a world with this neighbour-list skin too (0 = none)
	float step;       ///< the most a mover moves per frame and axis, as a fraction of its extent
} options;

/// One world under test and its frame times.
/// The frame stages a subject keeps per frame: prepare, build, find, merge, view, hierarchy.
#define STAGES 6

typedef struct subject {
	const char *name;
	bp_world *world;
	uint32_t first;  ///< scene entity its dense index 0 holds
	uint32_t count;  ///< entities it holds
	double *ms;
	size_t pairs;
	bool scheduler; ///< frames through bp_frame_step (submit, build, publish) rather than bp_world_step
	bool world_view; ///< after each bp_world_step a bp_world_view, timed with it
	bool reader;    ///< queries each view (not counted in ms; in query_ms)
	double *query_ms;
	double *searched; ///< per frame, bp_frame_stats.searched_count
	double *stage[STAGES]; ///< per frame, each stage's time from the stats (ms)
} subject;

/// Per-frame arrays for each subject.
static void subjects_start(subject *subjects, int count, const options *o)
{
	for (int s = 0; s < count; ++s) {
		subjects[s].ms = malloc(o->frames * sizeof(double));
		subjects[s].searched = malloc(o->frames * sizeof(double));
		subjects[s].query_ms = malloc(o->frames * sizeof(double));
		for (int k = 0; k < STAGES; ++k)
			subjects[s].stage[k] = malloc(o->frames * sizeof(double));
	}
}

/// Destroys the worlds, saying what each held (library memory, from
/// bp_allocated_bytes): with the pairs, the persistent state of an incremental one.
static void subjects_finish(subject *subjects, int count)
{
	for (int s = 0; s < count; ++s) {
		int64_t before = bp_allocated_bytes();
		bp_world_destroy(subjects[s].world);
		double held = (double)(before - bp_allocated_bytes());
		if (subjects[s].world)
			printf("  %-12s held %8.1f MiB, %6.1f bytes per entity, %8.1f per pair\n", subjects[s].name,
				held / 1048576.0, held / subjects[s].count, subjects[s].pairs ? held / (double)subjects[s].pairs : 0);
		free(subjects[s].ms);
		free(subjects[s].searched);
		free(subjects[s].query_ms);
		for (int k = 0; k < STAGES; ++k)
			free(subjects[s].stage[k]);
	}
}

// ---- the busy host -------------------------------------------------------------

// ---- worlds --------------------------------------------------------------------

static bp_world *world_of(const bp_scene *scene, uint32_t first, uint32_t count, uint32_t statics, bool incremental,
	bp_algorithm algorithm, const options *o)
{
	bp_world_def def = bp_world_def_default();
	def.dims = scene->dims;
	def.thread_count = o->threads;
	def.algorithm = algorithm;
	def.incremental = incremental;
	def.margin = incremental ? o->margin : 0.0f;
	def.skin = algorithm == BP_ALGO_COUNT ? o->skin : 0.0f; // BP_ALGO_COUNT: the neighbour list's world
	def.algorithm = algorithm == BP_ALGO_COUNT ? BP_ALGO_AUTO : algorithm;
	def.capacity = count * 2;
	bp_world *w = NULL;
	if (bp_world_create(&def, &w) != BP_OK)
		return NULL;
	bp_bounds_arrays all = bp_scene_frame_bounds(scene, 0);
	const float **arrays[6] = {&all.min_x, &all.min_y, &all.min_z, &all.max_x, &all.max_y, &all.max_z};
	for (int k = 0; k < 6; ++k)
		if (*arrays[k])
			*arrays[k] += first;
	bp_entity_def e = bp_entity_def_default();
	e.kind = BP_KIND_STATIC;
	bp_status status = bp_world_create_entities(w, statics, &all, &e, NULL);
	for (int k = 0; k < 6; ++k)
		if (*arrays[k])
			*arrays[k] += statics;
	e.kind = BP_KIND_DYNAMIC;
	if (status == BP_OK)
		status = bp_world_create_entities(w, count - statics, &all, &e, NULL);
	if (status != BP_OK) {
		fprintf(stderr, "bp_perf_incremental: %s\n", bp_world_last_error(w));
		bp_world_destroy(w);
		return NULL;
	}
	return w;
}

/// The entities [first, first + count) of the scene that move, and how.
typedef struct movers {
	uint32_t first, count;
	uint32_t *index;
	float *velocity; ///< steady motion: count per axis, drawn on the first move; NULL = random walk
	bool steady;
	float step; ///< options.step
} movers;

/// Per axis, a step of up to `step` of the entity's extent, either way.
static float motion_step(const bp_scene *s, int axis, uint32_t i, float step, uint64_t *rng)
{
	*rng = bp_splitmix64(*rng);
	float u = (float)(*rng >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
	return step * u * (s->max[axis][i] - s->min[axis][i]);
}

/// Moves the movers one frame: a new random step each, or their own velocity.
static void move(bp_scene *s, movers *m, uint64_t *rng)
{
	if (m->steady && !m->velocity) {
		m->velocity = malloc((size_t)m->count * (size_t)s->dims * sizeof(float));
		for (int k = 0; k < s->dims; ++k)
			for (uint32_t j = 0; j < m->count; ++j)
				m->velocity[(size_t)k * m->count + j] = motion_step(s, k, m->first + j, m->step, rng);
	}
	for (int k = 0; k < s->dims; ++k)
		for (uint32_t j = 0; j < m->count; ++j) {
			uint32_t i = m->first + j;
			float d = m->velocity ? m->velocity[(size_t)k * m->count + j] : motion_step(s, k, i, m->step, rng);
			s->min[k][i] += d;
			s->max[k][i] += d;
		}
}

/// Hands the movers [first, first + count) of the scene to a world whose dense
/// index 0 is scene entity `base`: by index list, as a host that knows what moved.
static void push_moves(bp_world *w, const bp_scene *s, uint32_t base, uint32_t first, uint32_t count, uint32_t *index)
{
	for (uint32_t i = 0; i < count; ++i)
		index[i] = first - base + i;
	bp_bounds_arrays b = bp_scene_frame_bounds(s, 0);
	const float **arrays[6] = {&b.min_x, &b.min_y, &b.min_z, &b.max_x, &b.max_y, &b.max_z};
	for (int k = 0; k < 6; ++k)
		if (*arrays[k])
			*arrays[k] += first;
	bp_entities_set_bounds(w, bp_target_indices(count, index), &b);
}

/// The subject's mean frame time.
static double mean_ms(const subject *s, const options *o)
{
	double mean = 0;
	for (uint32_t f = 0; f < o->frames; ++f)
		mean += s->ms[f] / o->frames;
	return mean;
}

static void report(FILE *csv, const options *o, const char *workload, uint32_t n, uint32_t moving, const subject *s)
{
	double min = s->ms[0];
	for (uint32_t f = 1; f < o->frames; ++f)
		min = s->ms[f] < min ? s->ms[f] : min;
	const double mean = mean_ms(s, o);
	double med = median_sorting(s->ms, o->frames), searched = median_sorting(s->searched, o->frames);
	double p99 = s->ms[(size_t)((o->frames - 1) * 0.99)]; // sorted by the median
	const char *name = o->steady ? (o->spatial ? "steady_spatial" : "steady") : (o->spatial ? "walk_spatial" : "walk");
	char motion[48];
	if (o->step != 0.05f)
		snprintf(motion, sizeof motion, "%s@%g", name, (double)o->step);
	else
		snprintf(motion, sizeof motion, "%s", name);
	double stage[STAGES];
	for (int k = 0; k < STAGES; ++k)
		stage[k] = median_sorting(s->stage[k], o->frames);
	printf("%-13s dims=%d n=%-8u moving=%-8u threads=%d host_busy=%d %-6s %-12s median %9.3f ms  min %9.3f ms"
	       "  mean %9.3f ms  p99 %9.3f ms  pairs %zu  searched %.0f  stages prepare/build/find/merge/view/hierarchy"
	       " %.3f/%.3f/%.3f/%.3f/%.3f/%.3f ms\n",
		workload, o->dims, n, moving, o->threads, o->host_busy, motion, s->name, med, min, mean, p99, s->pairs,
		searched, stage[0], stage[1], stage[2], stage[3], stage[4], stage[5]);
	if (csv)
		fprintf(csv, "%s,%d,%u,%u,%d,%d,%s,%.4f,%.4f,%zu,%.0f,%u,%s,%.4f,%.4f\n", workload, o->dims, n, moving,
			o->threads, o->host_busy, s->name, med, min, s->pairs, searched, o->frames, motion, mean, p99);
}

/// A game's reads of a view: a box around one entity, a short ray from it, its 8 nearest.
static void read_view(const bp_view *view, const bp_scene *scene, uint64_t *rng)
{
	*rng = bp_splitmix64(*rng);
	const uint32_t e = (uint32_t)(*rng % bp_view_entity_count(view));
	float lo[3] = {0}, hi[3] = {0}, centre[3] = {0}, dir[3] = {1.0f, 0.5f, 0.25f};
	for (int a = 0; a < scene->dims; ++a) {
		const float extent = scene->max[a][e] - scene->min[a][e];
		lo[a] = scene->min[a][e] - extent;
		hi[a] = scene->max[a][e] + extent;
		centre[a] = 0.5f * (scene->min[a][e] + scene->max[a][e]);
	}
	uint32_t hits[64];
	size_t total;
	bp_hit hit, nearest[8];
	bool found;
	(void)bp_view_overlap_box(view, lo, hi, NULL, hits, 64, &total);
	(void)bp_view_cast_ray_closest(view, centre, dir, 20.0f * (hi[0] - lo[0]), NULL, &hit, &found);
	(void)bp_view_nearest(view, centre, 8, NULL, nearest, &total);
}

/// Steps every subject once per frame, interleaved; `change` applies a frame's
/// changes to the scene and the worlds first.
typedef void change_fn(bp_scene *scene, subject *subjects, int count, uint64_t *rng, void *ctx);

static void run(const options *o, bp_scene *scene, subject *subjects, int count, change_fn *change, void *ctx)
{
	// A world view's reader draws from its own generator, so the others move as without it.
	uint64_t rng = 99, view_rng = 7;
	for (int s = 0; s < count; ++s)
		bp_world_step(subjects[s].world); // the full build every world starts with
	for (int32_t f = -2; f < (int32_t)o->frames; ++f) { // two warm-up frames
		change(scene, subjects, count, &rng, ctx);
		for (int s = 0; s < count; ++s) {
			bp_world *w = subjects[s].world;
			double t0 = now_ms();
			bp_view *view = NULL;
			bp_status status = subjects[s].scheduler ? bp_frame_step(w, &view) : bp_world_step(w);
			if (status == BP_OK && subjects[s].world_view)
				status = bp_world_view(w, &view);
			if (f >= 0) {
				subjects[s].ms[f] = now_ms() - t0;
				bp_frame_stats stats = view && !subjects[s].world_view ? bp_view_stats(view) : bp_world_stats(w);
				subjects[s].searched[f] = stats.searched_count;
				const uint64_t ns[STAGES] = {
					stats.ns_prepare, stats.ns_build, stats.ns_find, stats.ns_merge, stats.ns_view, stats.ns_hierarchy};
				for (int k = 0; k < STAGES; ++k)
					subjects[s].stage[k][f] = (double)ns[k] * 1e-6;
			}
			if (status != BP_OK)
				fprintf(stderr, "bp_perf_incremental: %s\n", bp_world_last_error(w));
			if (view && subjects[s].reader) {
				double q0 = now_ms();
				read_view(view, scene, subjects[s].world_view ? &view_rng : &rng);
				if (f >= 0)
					subjects[s].query_ms[f] = now_ms() - q0;
			}
			if (view && !subjects[s].world_view)
				bp_view_pairs(view, &subjects[s].pairs);
			else
				bp_world_pairs(w, &subjects[s].pairs);
			bp_view_release(view);
		}
	}
}

// ---- static_moving ------------------------------------------------------------------

static void move_movers(bp_scene *scene, subject *subjects, int count, uint64_t *rng, void *ctx)
{
	movers *m = ctx;
	move(scene, m, rng);
	for (int s = 0; s < count; ++s)
		push_moves(subjects[s].world, scene, subjects[s].first, m->first, m->count, m->index);
}

/// Spreads the low 10 bits of v to every third bit.
static uint32_t spread_bits(uint32_t v)
{
	v &= 0x3FF;
	v = (v | v << 16) & 0x030000FF;
	v = (v | v << 8) & 0x0300F00F;
	v = (v | v << 4) & 0x030C30C3;
	return (v | v << 2) & 0x09249249;
}

typedef struct keyed {
	uint32_t key, index;
} keyed;

static int by_key(const void *a, const void *b)
{
	const keyed *x = a, *y = b;
	return x->key != y->key ? (x->key > y->key) - (x->key < y->key) : (x->index > y->index) - (x->index < y->index);
}

/// Reorders the scene's entities by the Morton code of their centres (10 bits an
/// axis), as particle codes sort their atoms: entities close in space then lie close
/// in the dense order.
static void spatial_order(bp_scene *s)
{
	float lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
	for (int a = 0; a < s->dims; ++a) {
		lo[a] = INFINITY;
		hi[a] = -INFINITY;
		for (uint32_t i = 0; i < s->count; ++i) {
			lo[a] = fminf(lo[a], s->min[a][i]);
			hi[a] = fmaxf(hi[a], s->max[a][i]);
		}
	}
	keyed *order = malloc((size_t)s->count * sizeof *order);
	float *moved = malloc((size_t)s->count * sizeof *moved);
	uint32_t *ids = malloc((size_t)s->count * sizeof *ids);
	if (!order || !moved || !ids) {
		free(order), free(moved), free(ids);
		return;
	}
	for (uint32_t i = 0; i < s->count; ++i) {
		uint32_t key = 0;
		for (int a = 0; a < s->dims; ++a) {
			float centre = 0.5f * (s->min[a][i] + s->max[a][i]);
			uint32_t q = (uint32_t)(1023.0f * (centre - lo[a]) / fmaxf(hi[a] - lo[a], 1e-30f));
			key |= spread_bits(q) << a;
		}
		order[i] = (keyed){key, i};
	}
	qsort(order, s->count, sizeof *order, by_key);
	for (int a = 0; a < s->dims; ++a)
		for (int side = 0; side < 2; ++side) {
			float *v = side ? s->max[a] : s->min[a];
			for (uint32_t i = 0; i < s->count; ++i)
				moved[i] = v[order[i].index];
			memcpy(v, moved, (size_t)s->count * sizeof *v);
		}
	for (uint32_t i = 0; i < s->count; ++i)
		ids[i] = s->ids[order[i].index];
	memcpy(s->ids, ids, (size_t)s->count * sizeof *ids);
	free(order), free(moved), free(ids);
}

static bp_scene *generate(const options *o, uint32_t n)
{
	bp_gen_def def = bp_gen_def_default();
	def.n = n;
	def.dims = o->dims;
	bp_scene *scene = NULL;
	if (bp_scene_generate(&def, &scene) != BP_OK)
		fprintf(stderr, "bp_perf_incremental: cannot generate %u entities\n", n);
	else if (o->spatial)
		spatial_order(scene);
	return scene;
}

/// `scheduler`: every world steps through bp_frame_step, view extras included.
static void static_moving(const options *o, FILE *csv, bool scheduler)
{
	const char *workload = scheduler ? "static_moving_frames" : o->skip_full ? "static_moving_quiet" : "static_moving";
	uint32_t n = o->n_static + o->n_moving;
	bp_scene *scene = generate(o, n);
	if (!scene)
		return;
	movers m = {o->n_static, o->n_moving, malloc(o->n_moving * sizeof(uint32_t)), NULL, o->steady, o->step};
	// Movers first: without the full grid (--skip-full) the first two run alone, and the
	// grid's 1M-entity step no longer empties the caches between the others' steps.
	subject subjects[MAX_WORLDS] = {
		{.name = "incremental", .world = world_of(scene, 0, n, o->n_static, true, BP_ALGO_AUTO, o), .count = n},
		{.name = "movers_only", .world = world_of(scene, o->n_static, o->n_moving, 0, false, BP_ALGO_AUTO, o),
			.first = o->n_static, .count = o->n_moving},
		{.name = "full_grid", .world = world_of(scene, 0, n, o->n_static, false, BP_ALGO_GRID, o), .count = n},
	};
	subjects_start(subjects, MAX_WORLDS, o);
	for (int s = 0; s < MAX_WORLDS; ++s)
		subjects[s].scheduler = scheduler;
	const int count = o->skip_full ? 2 : MAX_WORLDS;
	run(o, scene, subjects, count, move_movers, &m);
	double med[MAX_WORLDS];
	for (int s = 0; s < count; ++s) {
		report(csv, o, workload, n, o->n_moving, &subjects[s]);
		med[s] = subjects[s].ms[o->frames / 2]; // sorted by report
	}
	if (count == MAX_WORLDS)
		printf("%s ratios: incremental / movers_only = %.2f, full_grid / incremental = %.1f\n", workload,
			med[0] / med[1], med[2] / med[0]);
	else
		printf("%s ratio without the full grid: incremental / movers_only = %.2f\n", workload, med[0] / med[1]);
	subjects_finish(subjects, MAX_WORLDS);
	free(m.index);
	free(m.velocity);
	bp_scene_destroy(scene);
}

static const char *const path_names[BP_PATH_NEIGHBOURS + 1] = {"plain", "full", "resting", "moving", "neighbours"};

/// Steps judged by still_steps: 3 to 9, counting the first (full) step as 1.
#define STILL_FIRST 3u
#define STILL_LAST 9u

/// still_steps: a new incremental world of S static + M moving entities, stepped o->frames
/// times from its first step, alone, so no other world's step hides or causes a stall. CSV:
/// workload,dims,static,moving,threads,frames,median_ms,worst_ms,worst_step,worst_path,
/// worst_searched,worst_over_median (over steps 3-9).
static void still_steps(const options *o, FILE *csv)
{
	uint32_t n = o->n_static + o->n_moving, frames = o->frames > STILL_LAST ? o->frames : STILL_LAST;
	bp_scene *scene = generate(o, n);
	bp_world *w = scene ? world_of(scene, 0, n, o->n_static, true, BP_ALGO_AUTO, o) : NULL;
	double *ms = malloc(frames * sizeof *ms), judged[STILL_LAST - STILL_FIRST + 1];
	movers m = {o->n_static, o->n_moving, malloc(o->n_moving * sizeof(uint32_t)), NULL, o->steady, o->step};
	uint64_t rng = 99;
	double worst = 0;
	uint32_t worst_step = 0, worst_searched = 0;
	bp_step_path worst_path = BP_PATH_PLAIN;
	for (uint32_t f = 1; w && ms && m.index && f <= frames; ++f) {
		if (f > 1)
			move_movers(scene, &(subject){.world = w}, 1, &rng, &m);
		double t0 = now_ms();
		if (bp_world_step(w) != BP_OK)
			fprintf(stderr, "bp_perf_incremental: %s\n", bp_world_last_error(w));
		ms[f - 1] = now_ms() - t0;
		bp_frame_stats st = bp_world_stats(w);
		printf("still_steps threads=%d step=%-3u %9.3f ms  path=%-10s active=%-8u searched=%-8u "
		       "build/find/merge %.3f/%.3f/%.3f ms\n",
			o->threads, f, ms[f - 1], path_names[st.path], st.active_count, st.searched_count, st.ns_build * 1e-6,
			st.ns_find * 1e-6, st.ns_merge * 1e-6);
		if (f >= STILL_FIRST && f <= STILL_LAST) {
			judged[f - STILL_FIRST] = ms[f - 1];
			if (ms[f - 1] > worst) {
				worst = ms[f - 1];
				worst_step = f;
				worst_path = st.path;
				worst_searched = st.searched_count;
			}
		}
	}
	if (w && ms && m.index) {
		double med = median_sorting(judged, STILL_LAST - STILL_FIRST + 1);
		printf("still_steps threads=%d steps %u-%u: median %.3f ms, worst %.3f ms (step %u, %s, %u searched), "
		       "worst / median %.2f\n",
			o->threads, STILL_FIRST, STILL_LAST, med, worst, worst_step, path_names[worst_path], worst_searched,
			worst / med);
		if (csv)
			fprintf(csv, "still_steps,%d,%u,%u,%d,%u,%.4f,%.4f,%u,%s,%u,%.3f\n", o->dims, o->n_static, o->n_moving,
				o->threads, frames, med, worst, worst_step, path_names[worst_path], worst_searched, worst / med);
	}
	bp_world_destroy(w);
	free(ms);
	free(m.index);
	free(m.velocity);
	bp_scene_destroy(scene);
}

/// static_moving's incremental world through the scheduler, without and with a reader; stepped
/// by bp_world_step; and stepped so with a world view each step that the reader queries.
static void static_moving_readers(const options *o, FILE *csv)
{
	enum { SUBJECTS = 4 };
	uint32_t n = o->n_static + o->n_moving;
	bp_scene *scene = generate(o, n);
	if (!scene)
		return;
	movers m = {o->n_static, o->n_moving, malloc(o->n_moving * sizeof(uint32_t)), NULL, o->steady, o->step};
	subject subjects[SUBJECTS] = {
		{.name = "no_reader", .world = world_of(scene, 0, n, o->n_static, true, BP_ALGO_AUTO, o), .count = n},
		{.name = "reader", .world = world_of(scene, 0, n, o->n_static, true, BP_ALGO_AUTO, o), .count = n,
			.reader = true},
		{.name = "world_step", .world = world_of(scene, 0, n, o->n_static, true, BP_ALGO_AUTO, o), .count = n},
		{.name = "world_view", .world = world_of(scene, 0, n, o->n_static, true, BP_ALGO_AUTO, o), .count = n,
			.reader = true},
	};
	subjects_start(subjects, SUBJECTS, o);
	subjects[0].scheduler = subjects[1].scheduler = true;
	subjects[3].world_view = true;
	run(o, scene, subjects, SUBJECTS, move_movers, &m);
	double med[SUBJECTS], mean[SUBJECTS];
	for (int s = 0; s < SUBJECTS; ++s) {
		report(csv, o, "static_moving_readers", n, o->n_moving, &subjects[s]);
		med[s] = subjects[s].ms[o->frames / 2];
		mean[s] = mean_ms(&subjects[s], o);
	}
	printf("static_moving_readers: reader / no_reader = %.2f; the reader's queries %.3f ms a frame (median)\n",
		med[1] / med[0], median_sorting(subjects[1].query_ms, o->frames));
	printf("static_moving_readers: frame / world step, medians (means): no reader %.2f (%.2f), reader %.2f (%.2f)\n",
		med[0] / med[2], mean[0] / mean[2], med[1] / med[2], mean[1] / mean[2]);
	printf("static_moving_readers: world step and world view / world step, median (mean): %.2f (%.2f)\n",
		med[3] / med[2], mean[3] / mean[2]);
	subjects_finish(subjects, SUBJECTS);
	free(m.index);
	free(m.velocity);
	bp_scene_destroy(scene);
}

// ---- all_moving ---------------------------------------------------------------------

static void all_moving(const options *o, FILE *csv)
{
	bp_scene *scene = generate(o, o->n_all);
	if (!scene)
		return;
	movers m = {0, o->n_all, malloc(o->n_all * sizeof(uint32_t)), NULL, o->steady, o->step};
	subject subjects[3] = {
		{.name = "incremental", .world = world_of(scene, 0, o->n_all, 0, true, BP_ALGO_AUTO, o), .count = o->n_all},
		{.name = "full_grid", .world = world_of(scene, 0, o->n_all, 0, false, BP_ALGO_GRID, o), .count = o->n_all},
		{.name = "neighbours", .world = world_of(scene, 0, o->n_all, 0, true, BP_ALGO_COUNT, o), .count = o->n_all},
	};
	const int count = o->skin > 0 ? 3 : 2;
	subjects_start(subjects, count, o);
	run(o, scene, subjects, count, move_movers, &m);
	double med[3], mean[3];
	for (int s = 0; s < count; ++s) {
		mean[s] = mean_ms(&subjects[s], o);
		report(csv, o, "all_moving", o->n_all, o->n_all, &subjects[s]);
		med[s] = subjects[s].ms[o->frames / 2];
	}
	printf("all_moving ratio: full_grid / incremental = %.2f (means %.2f)\n", med[1] / med[0], mean[1] / mean[0]);
	if (count == 3)
		printf("all_moving ratio: full_grid / neighbours (skin %g) = %.2f (means %.2f)\n", (double)o->skin,
			med[1] / med[2], mean[1] / mean[2]);
	subjects_finish(subjects, count);
	if (count == 2)
		bp_world_destroy(subjects[2].world);
	free(m.index);
	free(m.velocity);
	bp_scene_destroy(scene);
}

// ---- churn --------------------------------------------------------------------------

typedef struct churn_state {
	uint32_t per_frame;
	bp_entity *handles[2]; ///< per world, dense order
	uint32_t count;
	bp_scene *scene;
	bp_scene *moving_scene; ///< the same world for the moving subject, whose per_frame first entities move
	movers movers;
	int churned;           ///< subjects that churn, the moving one after them
} churn_state;

/// Destroys per_frame random entities and creates as many at random places of the scene.
static void churn_frame(bp_scene *scene, subject *subjects, int count, uint64_t *rng, void *ctx)
{
	churn_state *c = ctx;
	bp_entity_def e = bp_entity_def_default();
	for (uint32_t k = 0; k < c->per_frame; ++k) {
		*rng = bp_splitmix64(*rng);
		uint32_t d = (uint32_t)(*rng % c->count);
		*rng = bp_splitmix64(*rng);
		uint32_t from = (uint32_t)(*rng % scene->count);
		for (int axis = 0; axis < scene->dims; ++axis) {
			e.min[axis] = scene->min[axis][from];
			e.max[axis] = scene->max[axis][from];
		}
		for (int s = 0; s < count && s < c->churned; ++s) {
			bp_entity_destroy(subjects[s].world, c->handles[s][d]);
			c->handles[s][d] = c->handles[s][c->count - 1];
			bp_entity_create(subjects[s].world, &e, &c->handles[s][c->count - 1]);
		}
	}
	if (count > c->churned) {
		move(c->moving_scene, &c->movers, rng);
		push_moves(subjects[c->churned].world, c->moving_scene, 0, 0, c->movers.count, c->movers.index);
	}
}

static void churn(const options *o, FILE *csv)
{
	bp_scene *scene = generate(o, o->n_all);
	if (!scene)
		return;
	// --skip-full leaves the rebuilt world out but keeps the moving one, the yardstick.
	const int churned = o->skip_full ? 1 : 2, count = churned + 1;
	churn_state c = {(uint32_t)(o->churn * o->n_all), {NULL, NULL}, o->n_all, scene, generate(o, o->n_all), {0},
		churned};
	c.movers = (movers){0, c.per_frame, malloc(c.per_frame * sizeof(uint32_t)), NULL, o->steady, o->step};
	subject subjects[3] = {
		{.name = "incremental", .world = world_of(scene, 0, o->n_all, 0, true, BP_ALGO_AUTO, o), .count = o->n_all},
		{.name = "full_grid", .world = NULL, .count = o->n_all},
		{.name = "moving", .world = world_of(c.moving_scene, 0, o->n_all, 0, true, BP_ALGO_AUTO, o), .count = o->n_all},
	};
	if (o->skip_full)
		subjects[1] = subjects[2];
	else
		subjects[1].world = world_of(scene, 0, o->n_all, 0, false, BP_ALGO_GRID, o);
	subjects_start(subjects, count, o);
	for (int s = 0; s < churned; ++s) {
		c.handles[s] = malloc(o->n_all * sizeof(bp_entity));
		for (uint32_t i = 0; i < o->n_all; ++i)
			c.handles[s][i] = bp_world_entity_at(subjects[s].world, i);
	}
	run(o, scene, subjects, count, churn_frame, &c);
	double med[3];
	for (int s = 0; s < count; ++s) {
		report(csv, o, "churn", o->n_all, c.per_frame, &subjects[s]);
		med[s] = subjects[s].ms[o->frames / 2];
	}
	if (churned == 2)
		printf("churn ratio: full_grid / incremental = %.2f (%u created and %u destroyed per frame)\n",
			med[1] / med[0], c.per_frame, c.per_frame);
	printf("churn ratio: incremental / moving = %.2f (as many moving instead)\n", med[0] / med[churned]);
	subjects_finish(subjects, count);
	free(c.movers.index);
	free(c.movers.velocity);
	bp_scene_destroy(c.moving_scene);
	for (int s = 0; s < churned; ++s)
		free(c.handles[s]);
	bp_scene_destroy(scene);
}

// ---- main -----------------------------------------------------------------------------

static bool parse(int argc, char **argv, options *o)
{
	for (int i = 1; i < argc; ++i) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool *flag = strcmp(a, "--host-busy") == 0   ? &o->host_busy
			     : strcmp(a, "--skip-full") == 0 ? &o->skip_full
			     : strcmp(a, "--steady") == 0    ? &o->steady
			     : strcmp(a, "--spatial") == 0   ? &o->spatial
							       : NULL;
		if (flag) {
			*flag = true;
			continue;
		}
		if (!v) {
			fprintf(stderr, "bp_perf_incremental: %s needs a value\n", a);
			return false;
		}
		++i;
		if (strcmp(a, "--dims") == 0)
			o->dims = atoi(v);
		else if (strcmp(a, "--static") == 0)
			o->n_static = (uint32_t)strtoul(v, NULL, 10);
		else if (strcmp(a, "--moving") == 0)
			o->n_moving = (uint32_t)strtoul(v, NULL, 10);
		else if (strcmp(a, "--n") == 0)
			o->n_all = (uint32_t)strtoul(v, NULL, 10);
		else if (strcmp(a, "--churn") == 0)
			o->churn = atof(v);
		else if (strcmp(a, "--threads") == 0)
			o->threads = atoi(v);
		else if (strcmp(a, "--frames") == 0)
			o->frames = (uint32_t)strtoul(v, NULL, 10);
		else if (strcmp(a, "--margin") == 0)
			o->margin = strtof(v, NULL);
		else if (strcmp(a, "--skin") == 0)
			o->skin = strtof(v, NULL);
		else if (strcmp(a, "--step") == 0)
			o->step = strtof(v, NULL);
		else if (strcmp(a, "--csv") == 0)
			o->csv = v;
		else if (strcmp(a, "--only") == 0)
			o->only = v;
		else {
			fprintf(stderr, "usage: bp_perf_incremental [--dims 2|3] [--static S] [--moving M] [--n N] [--churn F]\n"
					"       [--threads T] [--frames F] [--host-busy] [--steady]\n"
					"       [--only static_moving|static_moving_frames|static_moving_readers|all_moving|churn|\n"
					"              still_steps]\n"
					"       [--skip-full] [--margin M] [--skin S] [--step F] [--spatial] [--csv FILE]\n");
			return false;
		}
	}
	if ((o->dims != 2 && o->dims != 3) || o->frames == 0 || o->n_moving == 0 || o->n_all == 0 || !(o->margin >= 0) ||
		!(o->step > 0 && o->step <= 1)) {
		fprintf(stderr, "bp_perf_incremental: bad options\n");
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	options o = {.dims = 3, .n_static = 1000000, .n_moving = 10000, .n_all = 1000000, .churn = 0.01, .threads = 1,
		.frames = 15, .step = 0.05f};
	if (!parse(argc, argv, &o))
		return 1;
	FILE *csv = o.csv ? fopen(o.csv, "a") : NULL;
	if (o.csv && !csv) {
		fprintf(stderr, "bp_perf_incremental: cannot open %s\n", o.csv);
		return 3;
	}
	bool still = o.only && strcmp(o.only, "still_steps") == 0; // its own columns
	if (csv && ftell(csv) == 0 && still)
		fprintf(csv, "workload,dims,static,moving,threads,frames,median_ms,worst_ms,worst_step,worst_path,"
			     "worst_searched,worst_over_median\n");
	else if (csv && ftell(csv) == 0)
		fprintf(csv, "workload,dims,n,moving,threads,host_busy,world,ms_median,ms_min,pairs,searched_median,frames,"
			     "motion,ms_mean,ms_p99\n");
	host_busy host;
	host_busy_start(&host, o.host_busy);
	if (!o.only || strcmp(o.only, "static_moving") == 0)
		static_moving(&o, csv, false);
	if (!o.only || strcmp(o.only, "static_moving_frames") == 0)
		static_moving(&o, csv, true);
	if (!o.only || strcmp(o.only, "static_moving_readers") == 0)
		static_moving_readers(&o, csv);
	if (!o.only || strcmp(o.only, "all_moving") == 0)
		all_moving(&o, csv);
	if (!o.only || strcmp(o.only, "churn") == 0)
		churn(&o, csv);
	if (still)
		still_steps(&o, csv);
	host_busy_stop(&host);
	if (csv)
		fclose(csv);
	return 0;
}
