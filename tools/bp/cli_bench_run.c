// SPDX-License-Identifier: MIT
// `bp bench`: one configuration's measurement, a warm-up step then R timed steps of a world
// holding the scene, with the median and minimum wall time and the median of each stage. With
// --static, --moving and --incremental the world is one mostly at rest: statics, movers handed
// over by dense index, an incremental world.
#include "cli_bench.h"

#include <stdlib.h>

#include "cli_motion.h"

enum { STAGE_WALL, STAGE_PREPARE, STAGE_BUILD, STAGE_FIND, STAGE_MERGE, STAGE_ACTIVE, STAGE_SEARCHED, STAGE_COUNT };

const char *bench_line_name(bp_algorithm algo, bool incremental, char *buffer, size_t size)
{
	snprintf(buffer, size, "%s%s", bp_algorithm_name(algo), incremental ? "-incremental" : "");
	return buffer;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/// Median of `count` (> 0) counts; sorts them.
static double median_count(uint64_t *v, size_t count)
{
	qsort(v, count, sizeof v[0], compare_u64);
	return count % 2 ? (double)v[count / 2] : 0.5 * ((double)v[count / 2 - 1] + (double)v[count / 2]);
}

/// The plan's statics (every (1/F)-th by dense index) become BP_KIND_STATIC, and the
/// plan's movers (every (1/M)-th of the others) start moving. m->count is 0 when
/// nothing moves.
static bp_status start_rest(const bench_plan *plan, const bp_scene *scene, bp_world *world, cli_motion *m)
{
	*m = (cli_motion){0};
	const uint32_t n = scene->count, statics = cli_fraction_count(n, plan->static_fraction);
	uint32_t *index = malloc((size_t)(n ? n : 1) * sizeof *index);
	if (!index)
		return BP_ERR_OUT_OF_MEMORY;
	bp_status status = BP_OK;
	// index[0..statics) the statics, then index[statics..n) the dynamic entities, ascending.
	if (statics > 0) {
		cli_spread(n, statics, index);
		for (uint32_t j = 0; j < statics && status == BP_OK; ++j)
			status = bp_entity_set_kind(world, bp_world_entity_at(world, index[j]), BP_KIND_STATIC);
	}
	uint32_t *dynamic = index + statics, dynamics = 0;
	for (uint32_t i = 0, j = 0; i < n; ++i) {
		if (j < statics && index[j] == i)
			++j;
		else
			dynamic[dynamics++] = i;
	}
	const uint32_t movers = cli_fraction_count(dynamics, plan->moving);
	if (status == BP_OK && movers > 0) {
		// Mover j is dynamic entity floor(j * dynamics / movers): spread in place, as
		// that index is never below j.
		for (uint32_t j = 0; j < movers; ++j)
			dynamic[j] = dynamic[(uint64_t)j * dynamics / movers];
		if (!cli_motion_init(m, scene, plan->seed, movers, movers == n ? NULL : dynamic))
			status = BP_ERR_OUT_OF_MEMORY;
	}
	free(index);
	return status;
}

/// One step, after a frame of motion when entities move (not timed).
static bp_status move_and_step(cli_motion *m, bp_world *world, uint64_t *step_ns)
{
	bp_status status = BP_OK;
	if (m->count > 0) {
		cli_motion_step(m);
		status = cli_motion_apply(m, world);
	}
	uint64_t t0 = cli_now_ns();
	if (status == BP_OK)
		status = bp_world_step(world);
	*step_ns = cli_now_ns() - t0;
	return status;
}

int bench_measure(const bp_scene *scene, const bench_plan *plan, bp_algorithm algo, int threads, bool incremental,
	bench_row *row, FILE *err)
{
	const uint32_t runs = plan->runs;
	bp_world_def def = bp_world_def_default();
	def.algorithm = algo;
	def.thread_count = threads;
	def.incremental = incremental;
	def.margin = plan->margin;
	bp_world *world = NULL;
	int code = cli_world_from_scene_def("bench", scene, 0, &def, &world, err);
	if (code != CLI_EXIT_OK)
		return code;
	uint64_t *ns = malloc((size_t)runs * STAGE_COUNT * sizeof ns[0]);
	cli_motion motion = {0};
	bp_status status = ns ? start_rest(plan, scene, world, &motion) : BP_ERR_OUT_OF_MEMORY;
	if (status == BP_ERR_OUT_OF_MEMORY) {
		cli_motion_free(&motion);
		free(ns);
		bp_world_destroy(world);
		fprintf(err, "bp bench: out of memory\n");
		return CLI_EXIT_RESOURCE;
	}
	// Every step from scratch when nothing moves: a benchmark steps the same scene again
	// and again, and sap's reused order, the quadtree's kept tree and closest's insertion
	// sort would time the best case of an unchanged scene. perf/bench.c does the same.
	// Moving entities make that work real (it is what a host gets), and an incremental
	// world is measured as a host runs it.
	const bool moves = motion.count > 0;
	if (status == BP_OK && !moves && !incremental)
		status = bp_world_set_debug_flags(world, BP_DEBUG_NO_COHERENCE);
	// Warm-up: scratch allocated and pages touched, as in every later frame of a host;
	// with motion also the first incremental steps, which measure the costs the world
	// chooses its path by.
	uint64_t step_ns;
	if (status == BP_OK)
		status = bp_world_step(world);
	for (int w = 0; status == BP_OK && moves && w < BENCH_WARMUP_MOVES; ++w)
		status = move_and_step(&motion, world, &step_ns);
	for (uint32_t r = 0; status == BP_OK && r < runs; ++r) {
		status = move_and_step(&motion, world, &step_ns);
		ns[STAGE_WALL * runs + r] = step_ns;
		bp_frame_stats s = bp_world_stats(world);
		ns[STAGE_PREPARE * runs + r] = s.ns_prepare;
		ns[STAGE_BUILD * runs + r] = s.ns_build;
		ns[STAGE_FIND * runs + r] = s.ns_find;
		ns[STAGE_MERGE * runs + r] = s.ns_merge;
		ns[STAGE_ACTIVE * runs + r] = s.active_count;
		ns[STAGE_SEARCHED * runs + r] = s.searched_count;
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
		row->incremental = incremental;
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
		row->active_median = median_count(ns + STAGE_ACTIVE * runs, runs);
		row->searched_median = median_count(ns + STAGE_SEARCHED * runs, runs);
	}
	cli_motion_free(&motion);
	free(ns);
	bp_world_destroy(world);
	return code;
}
