// SPDX-License-Identifier: MIT
// `bp bench TRACE`: one configuration over every frame of a trace. The world follows the trace
// (the frame's changes handed over untimed), and each frame's step is timed: the host's loop
// on recorded motion, with the medians over the frames.
#include "cli_bench.h"

#include <stdlib.h>

enum { STAGE_WALL, STAGE_PREPARE, STAGE_BUILD, STAGE_FIND, STAGE_MERGE, STAGE_ACTIVE, STAGE_SEARCHED, STAGE_COUNT };

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static double median_count(uint64_t *v, size_t count)
{
	qsort(v, count, sizeof v[0], compare_u64);
	return count % 2 ? (double)v[count / 2] : 0.5 * ((double)v[count / 2 - 1] + (double)v[count / 2]);
}

/// Replays every frame into `world`, timing each step into ns (STAGE_COUNT columns of `frames`).
static bp_status replay(bp_trace_reader *reader, bp_world *world, uint32_t frames, uint64_t *ns, const char **why)
{
	for (uint32_t k = 0; k < frames; ++k) {
		bp_trace_frame f;
		bp_status status = bp_trace_reader_next(reader, &f);
		if (status == BP_OK)
			status = bp_trace_reader_apply(reader, world);
		if (status != BP_OK) {
			*why = bp_trace_reader_error(reader);
			return status;
		}
		uint64_t t0 = cli_now_ns();
		status = bp_world_step(world);
		ns[STAGE_WALL * frames + k] = cli_now_ns() - t0;
		if (status != BP_OK) {
			*why = bp_world_last_error(world);
			return status;
		}
		bp_frame_stats s = bp_world_stats(world);
		ns[STAGE_PREPARE * frames + k] = s.ns_prepare;
		ns[STAGE_BUILD * frames + k] = s.ns_build;
		ns[STAGE_FIND * frames + k] = s.ns_find;
		ns[STAGE_MERGE * frames + k] = s.ns_merge;
		ns[STAGE_ACTIVE * frames + k] = s.active_count;
		ns[STAGE_SEARCHED * frames + k] = s.searched_count;
	}
	return BP_OK;
}

int bench_measure_trace(const char *path, const bench_plan *plan, bp_algorithm algo, int threads, bool incremental,
	bench_row *row, FILE *err)
{
	bp_trace_reader *reader = NULL;
	int code = cli_open_trace("bench", path, &reader, err);
	if (code != CLI_EXIT_OK)
		return code;
	const bp_trace_info info = bp_trace_reader_info(reader);
	const uint32_t frames = info.frame_count;
	bp_world_def settings = bp_world_def_default();
	settings.algorithm = algo;
	settings.thread_count = threads;
	settings.incremental = incremental;
	settings.margin = plan->margin;
	bp_world_def def = cli_trace_world_def(reader, &settings);
	bp_world *world = NULL;
	uint64_t *ns = malloc(((size_t)frames * STAGE_COUNT + 1) * sizeof *ns);
	const char *why = "out of memory";
	bp_status status = ns ? BP_OK : BP_ERR_OUT_OF_MEMORY;
	if (status == BP_OK && frames == 0) {
		status = BP_ERR_PARSE;
		why = "the trace has no frame";
	}
	if (status == BP_OK && (status = bp_world_create(&def, &world)) != BP_OK)
		why = bp_world_create_error();
	if (status == BP_OK)
		status = replay(reader, world, frames, ns, &why);
	if (status != BP_OK) {
		fprintf(err, "bp bench: %s: %s: %s\n", path, bp_algorithm_name(algo), why);
		code = cli_exit_for_status(status);
	} else {
		size_t count;
		const bp_pair *pairs = bp_world_pairs(world, &count);
		bp_trace_state state = bp_trace_reader_state(reader);
		*row = (bench_row){.dims = info.dims, .n = info.max_entities, .algo = algo, .threads = threads,
			.incremental = incremental, .runs = frames, .pairs = count,
			.checksum = bp_pairs_checksum(pairs, count, state.ids)};
		uint64_t *wall = ns + STAGE_WALL * frames;
		row->ms_median = cli_median_ms(wall, frames); // sorts wall
		row->ms_min = (double)wall[0] / 1e6;
		row->ms_prepare = cli_median_ms(ns + STAGE_PREPARE * frames, frames);
		row->ms_build = cli_median_ms(ns + STAGE_BUILD * frames, frames);
		row->ms_find = cli_median_ms(ns + STAGE_FIND * frames, frames);
		row->ms_merge = cli_median_ms(ns + STAGE_MERGE * frames, frames);
		row->active_median = median_count(ns + STAGE_ACTIVE * frames, frames);
		row->searched_median = median_count(ns + STAGE_SEARCHED * frames, frames);
	}
	free(ns);
	bp_world_destroy(world);
	bp_trace_reader_close(reader);
	return code;
}
