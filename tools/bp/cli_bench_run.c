// SPDX-License-Identifier: MIT
// `bp bench`: one configuration's measurement, a warm-up step then R timed steps of a world
// holding the scene, with the median and minimum wall time and the median of each stage.
#include "cli_bench.h"

#include <stdlib.h>

enum { STAGE_WALL, STAGE_PREPARE, STAGE_BUILD, STAGE_FIND, STAGE_MERGE, STAGE_COUNT };

int bench_measure(const bp_scene *scene, bp_algorithm algo, int threads, uint32_t runs, bench_row *row, FILE *err)
{
	bp_world *world = NULL;
	int code = cli_world_from_scene("bench", scene, 0, algo, threads, &world, err);
	if (code != CLI_EXIT_OK)
		return code;
	uint64_t *ns = malloc((size_t)runs * STAGE_COUNT * sizeof ns[0]);
	if (!ns) {
		bp_world_destroy(world);
		fprintf(err, "bp bench: out of memory\n");
		return CLI_EXIT_RESOURCE;
	}
	// Every step from scratch: a benchmark steps the same scene again and again, and
	// sap's reused order, the quadtree's kept tree and closest's insertion sort would
	// time the best case of an unchanged scene. perf/bench.c does the same.
	bp_status status = bp_world_set_debug_flags(world, BP_DEBUG_NO_COHERENCE);
	// Warm-up: scratch allocated and pages touched, as in every later frame of a host.
	if (status == BP_OK)
		status = bp_world_step(world);
	for (uint32_t r = 0; status == BP_OK && r < runs; ++r) {
		uint64_t t0 = cli_now_ns();
		status = bp_world_step(world);
		ns[STAGE_WALL * runs + r] = cli_now_ns() - t0;
		bp_frame_stats s = bp_world_stats(world);
		ns[STAGE_PREPARE * runs + r] = s.ns_prepare;
		ns[STAGE_BUILD * runs + r] = s.ns_build;
		ns[STAGE_FIND * runs + r] = s.ns_find;
		ns[STAGE_MERGE * runs + r] = s.ns_merge;
	}
	if (status != BP_OK) {
		fprintf(err, "bp bench: %s: %s\n", bp_algorithm_name(algo), bp_world_last_error(world));
		code = cli_exit_for_status(status);
	} else {
		size_t count;
		const bp_pair *pairs = bp_world_pairs(world, &count);
		row->dims = scene->dims;
		row->n = scene->count;
		row->algo = algo;
		row->threads = threads;
		row->runs = runs;
		row->pairs = count;
		row->checksum = bp_pairs_checksum(pairs, count, scene->ids);
		uint64_t *wall = ns + STAGE_WALL * runs;
		row->ms_median = cli_median_ms(wall, runs); // sorts wall
		row->ms_min = (double)wall[0] / 1e6;
		row->ms_prepare = cli_median_ms(ns + STAGE_PREPARE * runs, runs);
		row->ms_build = cli_median_ms(ns + STAGE_BUILD * runs, runs);
		row->ms_find = cli_median_ms(ns + STAGE_FIND * runs, runs);
		row->ms_merge = cli_median_ms(ns + STAGE_MERGE * runs, runs);
	}
	free(ns);
	bp_world_destroy(world);
	return code;
}
