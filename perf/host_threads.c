// SPDX-License-Identifier: MIT
// bp_perf_host_threads: what the library's threads cost a host that keeps a core busy, with
// default settings and no environment variables. Workloads, each timed with 1 thread, 2 threads
// and the default (0 = all cores) on the library's workers and on an OpenMP team, worlds
// stepped alternately so that load hits all alike:
//   pairs_small  2,000 uniform boxes, bp_world_step (what `bp pairs` times);
//   frame_small  3,000 moving boxes through the scheduler (bp_frame_step: submit, build, acquire);
//   step_1m      1M uniform boxes, bp_world_step.
// With --host-busy a host thread spins on one core the whole time, as a simulating host does.
// CSV: workload,n,executor,threads,host_busy,ms_median,ms_min.
#define _POSIX_C_SOURCE 200809L // clock_gettime
#include <broadphase/broadphase.h>
#include <bp_scene.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "host_busy.h"
#include "timing.h"

typedef struct setting {
	bp_executor executor;
	int threads;
} setting;

enum { SETTINGS = 5 };
static const setting settings[SETTINGS] = {
	{BP_EXECUTOR_WORKERS, 1},
	{BP_EXECUTOR_WORKERS, 2},
	{BP_EXECUTOR_WORKERS, 0},
	{BP_EXECUTOR_OPENMP, 2},
	{BP_EXECUTOR_OPENMP, 0},
};

static const char *executor_name(bp_executor e) { return e == BP_EXECUTOR_OPENMP ? "openmp" : "workers"; }

static bp_world *world_of(const bp_scene *scene, setting s)
{
	bp_world_def def = bp_world_def_default();
	def.dims = scene->dims;
	def.thread_count = s.threads;
	def.executor = s.executor;
	bp_world *w = NULL;
	bp_bounds_arrays bounds = bp_scene_frame_bounds(scene, 0);
	bp_entity_def e = bp_entity_def_default();
	if (bp_world_create(&def, &w) != BP_OK || bp_world_create_entities(w, scene->count, &bounds, &e, NULL) != BP_OK) {
		fprintf(stderr, "bp_perf_host_threads: %s\n", w ? bp_world_last_error(w) : "cannot create a world");
		bp_world_destroy(w);
		return NULL;
	}
	return w;
}

/// Moves every box by up to 5% of its extent.
static void move(bp_scene *s, uint64_t *rng)
{
	for (int k = 0; k < s->dims; ++k)
		for (uint32_t i = 0; i < s->count; ++i) {
			*rng = bp_splitmix64(*rng);
			float u = (float)(*rng >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
			float d = 0.05f * u * (s->max[k][i] - s->min[k][i]);
			s->min[k][i] += d;
			s->max[k][i] += d;
		}
}

static bp_scene *scene_of(uint32_t n, uint64_t seed)
{
	bp_gen_def g = bp_gen_def_default();
	g.n = n;
	g.dims = 3;
	g.seed = seed;
	bp_scene *s = NULL;
	return bp_scene_generate(&g, &s) == BP_OK ? s : NULL;
}

/// One timed repetition of a workload on world w: a step, or a frame after moving the scene.
static double run_once(bp_world *w, bp_scene *s, bool frames)
{
	if (frames) {
		bp_bounds_arrays bounds = bp_scene_frame_bounds(s, 0);
		bp_entities_set_bounds(w, bp_target_range(0, s->count), &bounds);
		bp_view *view = NULL;
		double t0 = now_ms();
		bp_status status = bp_frame_step(w, &view);
		double ms = now_ms() - t0;
		if (status == BP_OK)
			bp_view_release(view);
		return ms;
	}
	double t0 = now_ms();
	bp_world_step(w);
	return now_ms() - t0;
}

static void workload(const char *name, uint32_t n, uint32_t reps, bool frames, bool busy, FILE *csv)
{
	bp_scene *scene = scene_of(n, 7);
	bp_world *worlds[SETTINGS] = {0};
	double *ms[SETTINGS];
	for (int t = 0; t < SETTINGS; ++t) {
		worlds[t] = scene ? world_of(scene, settings[t]) : NULL;
		ms[t] = malloc(reps * sizeof(double));
	}
	uint64_t rng = 1;
	for (uint32_t r = 0; r < reps + 1; ++r) { // the first repetition warms up
		if (frames)
			move(scene, &rng);
		for (int t = 0; t < SETTINGS; ++t)
			if (worlds[t]) {
				double v = run_once(worlds[t], scene, frames);
				if (r > 0)
					ms[t][r - 1] = v;
			}
	}
	for (int t = 0; t < SETTINGS; ++t) {
		if (worlds[t]) {
			qsort(ms[t], reps, sizeof(double), compare_double);
			const char *executor = executor_name(settings[t].executor);
			printf("%-12s n=%-8u %-8s threads=%d host_busy=%d  median %9.3f ms  min %9.3f ms\n", name, n,
				executor, settings[t].threads, busy, ms[t][reps / 2], ms[t][0]);
			if (csv)
				fprintf(csv, "%s,%u,%s,%d,%d,%.4f,%.4f\n", name, n, executor, settings[t].threads, busy,
					ms[t][reps / 2], ms[t][0]);
		}
		bp_world_destroy(worlds[t]);
		free(ms[t]);
	}
	bp_scene_destroy(scene);
}

int main(int argc, char **argv)
{
	bool busy = false;
	const char *csv_path = NULL;
	for (int i = 1; i < argc; ++i) {
		if (strcmp(argv[i], "--host-busy") == 0)
			busy = true;
		else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
			csv_path = argv[++i];
		else {
			fprintf(stderr, "usage: bp_perf_host_threads [--host-busy] [--csv FILE]\n");
			return 1;
		}
	}
	FILE *csv = csv_path ? fopen(csv_path, "a") : NULL;
	if (csv_path && !csv) {
		fprintf(stderr, "bp_perf_host_threads: cannot open %s\n", csv_path);
		return 3;
	}
	if (csv && ftell(csv) == 0)
		fprintf(csv, "workload,n,executor,threads,host_busy,ms_median,ms_min\n");
	host_busy host;
	host_busy_start(&host, busy);
	workload("pairs_small", 2000, 201, false, busy, csv);
	workload("frame_small", 3000, 201, true, busy, csv);
	workload("step_1m", 1000000, 7, false, busy, csv);
	host_busy_stop(&host);
	if (csv)
		fclose(csv);
	return 0;
}
