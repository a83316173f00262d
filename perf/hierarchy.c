// SPDX-License-Identifier: MIT
// bp_perf_hierarchy: what building a view's query hierarchy (src/tree/bvh.c) costs, the
// shared part over a whole frame. Generates one scene (perf/README.md "bp_perf_hierarchy"), binds the
// library's workers with --threads and times bpi_bvh_build after one warm-up build,
// reusing its arrays as a view does. The loop clock (src/parallel/parallel.h) splits each build
// into its parallel loops and the rest, which runs on one thread whatever the thread count.
// Prints one CSV row: label,scene,n,threads,median_ms,min_ms,serial_median_ms.
#define _POSIX_C_SOURCE 200809L
#include <bp_scene.h>
#include <stdio.h>
#include <string.h>

#include "parallel/parallel.h"
#include "parallel/threads.h"
#include "timing.h"
#include "tree/bvh.h"

enum { MAX_RUNS = 31 };

typedef struct options {
	const char *label, *scene;
	uint32_t n;
	int threads, runs;
} options;

static bool parse(int argc, char **argv, options *o)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--label") == 0)
			o->label = argv[i + 1];
		else if (strcmp(argv[i], "--scene") == 0)
			o->scene = argv[i + 1];
		else if (strcmp(argv[i], "--n") == 0)
			o->n = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--threads") == 0)
			o->threads = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--runs") == 0)
			o->runs = atoi(argv[i + 1]);
		else
			return false;
	}
	return argc % 2 == 1 && o->n > 0 && o->threads >= 1 && o->threads <= BP_MAX_THREADS && o->runs >= 1 &&
	       o->runs <= MAX_RUNS;
}

int main(int argc, char **argv)
{
	options o = {.label = "after", .scene = "uniform", .n = 1000000, .threads = 1, .runs = 7};
	bp_gen_def gen = bp_gen_def_default();
	if (!parse(argc, argv, &o) || bp_distribution_from_name(o.scene, &gen.dist) != BP_OK) {
		fprintf(stderr, "usage: bp_perf_hierarchy [--label L] [--scene uniform|mixed|...] [--n N] [--threads T]"
				" [--runs 1..%d]\n",
			MAX_RUNS);
		return 2;
	}
	gen.n = o.n;
	bp_scene *scene = NULL;
	if (bp_scene_generate(&gen, &scene) != BP_OK) {
		fprintf(stderr, "bp_perf_hierarchy: cannot generate %u entities\n", o.n);
		return 1;
	}
	const bpi_bvh_bounds bounds = {.min = {scene->min[0], scene->min[1], scene->min[2]},
		.max = {scene->max[0], scene->max[1], scene->max[2]}};
	const bpi_executor workers = {.kind = BP_EXECUTOR_WORKERS};
	bpi_team_failure failure;
	bpi_bvh bvh = {0};
	bpi_bvh_scratch scratch = {0};
	double ms[MAX_RUNS], serial_ms[MAX_RUNS];
	bpi_loop_clock clock;
	bool built = bpi_executor_enter(&workers, o.threads, &failure) == BP_OK &&
		     bpi_bvh_build(&bvh, &scratch, &bounds, NULL, o.n, scene->dims, o.threads) == BP_OK;
	for (int r = 0; built && r < o.runs; ++r) {
		bpi_loop_clock_use(&clock);
		const double t0 = now_ms();
		built = bpi_bvh_build(&bvh, &scratch, &bounds, NULL, o.n, scene->dims, o.threads) == BP_OK;
		ms[r] = now_ms() - t0;
		bpi_loop_clock_use(NULL);
		serial_ms[r] = ms[r] - (double)clock.loops[0] * 1e-6;
	}
	bpi_executor_leave();
	if (built) {
		const double median = median_sorting(ms, (size_t)o.runs), serial = median_sorting(serial_ms, (size_t)o.runs);
		printf("%s,%s,%u,%d,%.2f,%.2f,%.2f\n", o.label, o.scene, o.n, o.threads, median, ms[0], serial);
	} else {
		fprintf(stderr, "bp_perf_hierarchy: the build found no memory\n");
	}
	bpi_bvh_free(&bvh);
	bpi_bvh_scratch_free(&scratch);
	bp_scene_destroy(scene);
	return built ? 0 : 1;
}
