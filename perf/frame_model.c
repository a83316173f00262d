// SPDX-License-Identifier: MIT
// bp_perf_frame_model: what a whole frame through bp_frame_step should take on p threads, from
// what this machine can measure on one (perf/README.md, "bp_perf_frame_model"). Two workloads of
// uniform 3D boxes, each with a reader that queries every frame's view, so the build makes
// the query hierarchy: N all moving a little every frame (a plain grid world), and the still
// world, N static + M moving (an incremental world). Per stage of the frame (the snapshot on
// submit, the step's stages, the view's pair sort, events, what changed for the hierarchy, the
// hierarchy, and the rest of the call: the hand-off between threads where the builder builds)
// the loop clock splits loops from the serial
// rest, and model.h turns them and the stage's memory traffic into a time on p threads. The
// same run steps 1- and 2-thread worlds to check the model at p = 2.
// CSV: workload,socket,threads,ms,speedup, then the inputs as comment lines.
#define _POSIX_C_SOURCE 200809L // clock_gettime
#include <bp_scene.h>
#include <stdlib.h>
#include <string.h>

#include "base/probes.h"
#include "model.h"
#include "timing.h"

enum { RUNS = 7, WARM = 3 };

/// The frame's stages, in the order they run. The still world's step is one stage: the
/// incremental step does not switch the loop clock's stages.
enum { SNAPSHOT, BUILD, FIND, MERGE, SORT, EVENTS, CHANGES, HIERARCHY, HANDOFF, ROWS };
static const char *row_name[ROWS] = {"snapshot", "build", "find", "merge", "sort", "events", "changes",
	"hierarchy", "handoff"};
/// The loop clock's stage of each row with loops; -1: none (the row runs no loops).
static const int row_clock[ROWS] = {BPI_LOOP_CLOCK_SNAPSHOT, BPI_STAGE_BUILD, BPI_STAGE_FIND, BPI_STAGE_MERGE,
	BPI_LOOP_CLOCK_SORT, BPI_LOOP_CLOCK_EVENTS, BPI_LOOP_CLOCK_CHANGES, BPI_LOOP_CLOCK_HIERARCHY, -1};

/// Bytes a stage reads and writes per entity it covers and per pair. The step's are the grid's
/// (scaling_model.c); the snapshot reads and writes the 57 bytes of each entity it copies (a
/// full copy runs in chunks on the world's threads); what changed compares both snapshots'
/// bounds and filters (2 x 41); the hand-off runs on one thread, so its time already is its
/// traffic. The pair sort (src/parallel/pairs_sort.c) reads the pairs to
/// count them, scatters them (read and write) and sorts each bucket in cache and back (8 + 16 +
/// 16); the dense events (view_events.c) read this frame's and the last frame's pairs twice,
/// counting then writing (4 x 8). The hierarchy of a moving world is the last one's shape
/// refit (tree/bvh_refit.c) into the pool's part of that shape, which copies none of the
/// layout: it reads the bounds (24) and the slots (4) into their leaf lanes (read and
/// written, 48) and reads and writes the node boxes (~28).
static const double bytes_per_entity[ROWS] = {2 * 57, 24 * 2 + 12 + 60 + 8, 64, 0, 0, 0, 2 * 41, 24 + 4 + 48 + 28, 0};
static const double bytes_per_pair[ROWS] = {0, 0, 8, 16, 40, 32, 0, 0, 0};

typedef struct workload {
	const char *name;
	uint32_t statics, moving; ///< the first `statics` entities stay put
	bool incremental;
} workload;

/// One frame's readings of the clocked world, ms.
typedef struct reading {
	double time[ROWS], loops[ROWS][MODEL_WIDTHS];
} reading;

static bp_world *world_of(const bp_scene *scene, const workload *wl, bp_executor executor, int threads)
{
	bp_world_def def = bp_world_def_default();
	def.dims = scene->dims;
	def.algorithm = BP_ALGO_GRID;
	def.incremental = wl->incremental;
	def.executor = executor;
	def.thread_count = threads;
	def.capacity = scene->count;
	if (executor == BP_EXECUTOR_HOST)
		def.task_system = model_inline_tasks();
	bp_world *w = NULL;
	bp_bounds_arrays bounds = bp_scene_frame_bounds(scene, 0);
	bp_entity_def still = bp_entity_def_default(), moving = still;
	still.kind = BP_KIND_STATIC;
	moving.kind = BP_KIND_DYNAMIC;
	bp_status status = bp_world_create(&def, &w);
	if (status == BP_OK && wl->statics)
		status = bp_world_create_entities(w, wl->statics, &bounds, &still, NULL);
	const float **arrays[6] = {&bounds.min_x, &bounds.min_y, &bounds.min_z, &bounds.max_x, &bounds.max_y, &bounds.max_z};
	for (int k = 0; k < 6; ++k)
		*arrays[k] += wl->statics;
	if (status == BP_OK)
		status = bp_world_create_entities(w, wl->moving, &bounds, &moving, NULL);
	if (status != BP_OK) {
		fprintf(stderr, "bp_perf_frame_model: cannot make a world of %u entities\n", scene->count);
		bp_world_destroy(w);
		return NULL;
	}
	return w;
}

/// Moves the movers by up to 5% of their extent per axis, a random walk.
static void move(bp_scene *s, const workload *wl, uint64_t *rng)
{
	for (int k = 0; k < s->dims; ++k)
		for (uint32_t i = wl->statics; i < s->count; ++i) {
			*rng = bp_splitmix64(*rng);
			const float u = (float)(*rng >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
			const float d = 0.05f * u * (s->max[k][i] - s->min[k][i]);
			s->min[k][i] += d;
			s->max[k][i] += d;
		}
}

/// Hands the movers to the world, steps a frame and lets a reader query its view; the frame's
/// wall time (submit to acquire) in *ms and its statistics in *stats.
static bool frame(bp_world *w, const bp_scene *s, const workload *wl, double *ms, bp_frame_stats *stats)
{
	bp_bounds_arrays b = bp_scene_frame_bounds(s, 0);
	const float **arrays[6] = {&b.min_x, &b.min_y, &b.min_z, &b.max_x, &b.max_y, &b.max_z};
	for (int k = 0; k < 6; ++k)
		*arrays[k] += wl->statics;
	if (bp_entities_set_bounds(w, bp_target_range(wl->statics, wl->moving), &b) != BP_OK)
		return false;
	bp_view *view = NULL;
	const double t0 = now_ms();
	const bp_status status = bp_frame_step(w, &view);
	*ms = now_ms() - t0;
	if (status != BP_OK)
		return false;
	*stats = bp_view_stats(view);
	const float lo[3] = {s->min[0][0], s->min[1][0], s->min[2][0]}, hi[3] = {s->max[0][0], s->max[1][0], s->max[2][0]};
	uint32_t hits[64];
	size_t total = 0;
	bp_view_overlap_box(view, lo, hi, NULL, hits, 64, &total); // the reader asks for the hierarchy
	return bp_view_release(view) == BP_OK;
}

/// The clocked frame's stages: times from its statistics and the clock, loops from the clock.
static void read_clock(const bpi_loop_clock *c, const bp_frame_stats *s, double wall_ms, bool split, reading *r)
{
	memset(r, 0, sizeof *r);
	for (int k = 0; k < ROWS; ++k)
		for (int w = 0; w < MODEL_WIDTHS && row_clock[k] >= 0; ++w)
			r->loops[k][w] = 1e-6 * (w == 0 ? (double)c->loops[row_clock[k]] : c->on[row_clock[k]][w - 1]);
	// Loops the step runs outside build, find and merge (the incremental step's all) are the build's.
	for (int w = 0; w < MODEL_WIDTHS; ++w)
		r->loops[BUILD][w] += 1e-6 * (w == 0 ? (double)c->loops[BPI_STAGE_PREPARE] : c->on[BPI_STAGE_PREPARE][w - 1]);
	r->time[SNAPSHOT] = 1e-6 * (double)s->ns_prepare;
	r->time[BUILD] = 1e-6 * (double)s->ns_build;
	r->time[FIND] = 1e-6 * (double)s->ns_find;
	r->time[MERGE] = 1e-6 * (double)s->ns_merge;
	if (!split) {
		for (int k = FIND; k <= MERGE; ++k) {
			r->time[BUILD] += r->time[k];
			for (int w = 0; w < MODEL_WIDTHS; ++w)
				r->loops[BUILD][w] += r->loops[k][w];
			r->time[k] = 0;
			memset(r->loops[k], 0, sizeof r->loops[k]);
		}
	}
	r->time[SORT] = 1e-6 * (double)c->ns[BPI_LOOP_CLOCK_SORT];
	r->time[EVENTS] = 1e-6 * (double)c->ns[BPI_LOOP_CLOCK_EVENTS];
	r->time[HIERARCHY] = 1e-6 * (double)s->ns_hierarchy;
	const double view = 1e-6 * (double)s->ns_view;
	r->time[CHANGES] = view - r->time[SORT] - r->time[EVENTS] - r->time[HIERARCHY];
	r->time[HANDOFF] = wall_ms - 1e-6 * (double)s->ns_total;
}

/// The model's stages from the medians of the readings.
static void stages_of(const reading *r, const workload *wl, double pairs, model_stage *stages)
{
	double v[RUNS];
	for (int k = 0; k < ROWS; ++k) {
		stages[k] = (model_stage){.name = row_name[k]};
		for (int w = 0; w < MODEL_WIDTHS; ++w) {
			for (int i = 0; i < RUNS; ++i)
				v[i] = r[i].loops[k][w];
			stages[k].loops[w] = median_sorting(v, RUNS);
		}
		for (int i = 0; i < RUNS; ++i)
			v[i] = r[i].time[k];
		const double time = median_sorting(v, RUNS);
		stages[k].serial = time > stages[k].loops[0] ? time - stages[k].loops[0] : 0;
		// The incremental snapshot, step, changes and hierarchy touch the movers; full ones every entity.
		const double covered = (k == SNAPSHOT || k == BUILD || k == FIND || k == CHANGES || k == HIERARCHY) && wl->incremental
		                     ? wl->moving
		                     : (double)wl->statics + wl->moving;
		stages[k].traffic_mb = (bytes_per_entity[k] * covered + bytes_per_pair[k] * pairs) * 1e-6;
	}
}

static void write_inputs(FILE *csv, const workload *wl, const model_stage *stages, double pairs, double measured[2])
{
	fprintf(csv, "%s,measured,1,%.3f,1.000\n%s,measured,2,%.3f,%.3f\n", wl->name, measured[0], wl->name, measured[1],
		measured[0] / measured[1]);
	fprintf(csv, "# %s: statics=%u moving=%u incremental=%d pairs=%.0f runs=%d\n", wl->name, wl->statics, wl->moving,
		wl->incremental, pairs, RUNS);
	for (int k = 0; k < ROWS; ++k)
		fprintf(csv, "# %s %s: serial_ms=%.3f loops_ms=%.3f traffic_mb=%.1f\n", wl->name, stages[k].name,
			stages[k].serial, stages[k].loops[0], stages[k].traffic_mb);
}

/// Runs one workload: the clocked world and the 1- and 2-thread worlds, interleaved so load
/// hits all three alike, then the model and the check.
static bool run(const workload *wl, double bw1, FILE *csv)
{
	bp_gen_def gen = bp_gen_def_default();
	gen.n = wl->statics + wl->moving;
	gen.dims = 3;
	bp_scene *scene = NULL;
	if (bp_scene_generate(&gen, &scene) != BP_OK)
		return false;
	bp_world *worlds[3] = {world_of(scene, wl, BP_EXECUTOR_HOST, 0), world_of(scene, wl, BP_EXECUTOR_WORKERS, 1),
		world_of(scene, wl, BP_EXECUTOR_WORKERS, 2)};
	reading readings[RUNS];
	double ms[3][RUNS], pairs = 0;
	uint64_t rng = 45;
	bool ok = worlds[0] && worlds[1] && worlds[2];
	for (int r = -WARM; r < RUNS && ok; ++r) {
		move(scene, wl, &rng);
		for (int k = 0; k < 3 && ok; ++k) {
			bpi_loop_clock clock;
			bp_frame_stats stats = {0};
			double wall = 0;
			bpi_loop_clock_use(k == 0 ? &clock : NULL);
			ok = frame(worlds[k], scene, wl, &wall, &stats);
			bpi_loop_clock_use(NULL);
			if (ok && r >= 0 && k == 0)
				read_clock(&clock, &stats, wall, !wl->incremental, &readings[r]);
			if (ok && r >= 0)
				ms[k][r] = wall;
			pairs = (double)stats.pair_count;
		}
	}
	if (ok) {
		model_stage stages[ROWS];
		stages_of(readings, wl, pairs, stages);
		char prefix[64];
		snprintf(prefix, sizeof prefix, "%s,", wl->name);
		printf("%s: %u static + %u moving, %s world, %.0f pairs, a reader every frame\n", wl->name, wl->statics,
			wl->moving, wl->incremental ? "incremental" : "plain", pairs);
		model_report(stages, ROWS, bw1, prefix, csv);
		const double one = model_frame_ms(stages, ROWS, 0, &model_sockets[0], bw1),
			     two = model_frame_ms(stages, ROWS, 1, &model_sockets[0], bw1);
		double measured[2] = {median_sorting(ms[1], RUNS), median_sorting(ms[2], RUNS)};
		printf("  check at p = 2: model %.2fx (%.2f / %.2f ms); this machine measured %.2fx (%.2f / %.2f ms)\n",
			one / two, one, two, measured[0] / measured[1], measured[0], measured[1]);
		if (csv)
			write_inputs(csv, wl, stages, pairs, measured);
	}
	for (int k = 0; k < 3; ++k)
		bp_world_destroy(worlds[k]);
	bp_scene_destroy(scene);
	return ok;
}

int main(int argc, char **argv)
{
	const uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000000u;
	const uint32_t moving = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 10000u;
	const char *csv_path = argc > 3 ? argv[3] : NULL;
	if (n == 0 || moving == 0) {
		fprintf(stderr, "usage: bp_perf_frame_model [N] [MOVING] [CSV]\n");
		return 1;
	}
	const workload workloads[] = {{"all_moving", 0, n, false}, {"still", n, moving, true}};
	FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
	if (csv)
		fprintf(csv, "workload,socket,threads,ms,speedup\n");
	const double bw1 = model_stream_gb_per_s();
	printf("frame model, one thread's stream bandwidth %.1f GB/s\n", bw1);
	bool ok = true;
	for (size_t k = 0; k < sizeof workloads / sizeof workloads[0] && ok; ++k)
		ok = run(&workloads[k], bw1, csv);
	if (csv) {
		fprintf(csv, "# stream_gb_per_s=%.2f\n", bw1);
		for (int m = 0; m < MODEL_SOCKETS; ++m)
			fprintf(csv, "# socket %s: %.0f GB/s\n", model_sockets[m].name, model_sockets[m].gb_per_s);
		fclose(csv);
	}
	if (!ok)
		fprintf(stderr, "bp_perf_frame_model: a frame failed\n");
	return ok ? 0 : 2;
}
