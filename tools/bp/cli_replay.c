// SPDX-License-Identifier: MIT
// `bp frames --replay FILE`: a trace's frames through three worlds that follow it: a plain world
// stepped with bp_world_step, an incremental world, and a world whose frames go through the
// frame scheduler. Every frame the three must give the same pairs, byte for byte.
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { WORLD_PLAIN, WORLD_INCREMENTAL, WORLD_SCHEDULED, WORLD_COUNT };

#define HELD_SEARCHED_SHARE 0.2

typedef struct replay_run {
	bp_trace_reader *reader;
	bp_world *world[WORLD_COUNT];
	uint64_t *ns[WORLD_COUNT]; ///< per frame: the step, or the scheduler's build
	uint32_t frames;
	uint32_t paths[BP_PATH_NEIGHBOURS + 1]; ///< frames by the incremental world's path
	/// Frames whose changed entities mostly stayed inside their fat boxes (a moving or
	/// neighbour-list step in which at most HELD_SEARCHED_SHARE of them searched), and
	/// the plain and incremental worlds' time on them.
	uint32_t held;
	uint64_t held_ns[2];
	FILE *out, *err;
} replay_run;

static const char *const path_names[BP_PATH_NEIGHBOURS + 1] = {"plain", "full", "resting", "moving", "neighbours"};

static int create_worlds(replay_run *r, bp_algorithm algorithm, int threads, float skin)
{
	bp_world_def settings = bp_world_def_default();
	settings.algorithm = algorithm;
	settings.thread_count = threads;
	settings.canonical_pairs = true; // every world sorted, as views are: their pairs compare byte for byte
	for (int w = 0; w < WORLD_COUNT; ++w) {
		bp_world_def def = cli_trace_world_def(r->reader, &settings);
		def.incremental = w == WORLD_INCREMENTAL;
		def.skin = def.incremental ? skin : 0.0f;
		bp_status status = bp_world_create(&def, &r->world[w]);
		if (status != BP_OK) {
			fprintf(r->err, "bp frames: cannot create a world: %s\n", bp_world_create_error());
			return cli_exit_for_status(status);
		}
		if (!(r->ns[w] = calloc((size_t)r->frames + 1, sizeof(uint64_t)))) {
			fprintf(r->err, "bp frames: out of memory\n");
			return CLI_EXIT_RESOURCE;
		}
	}
	return CLI_EXIT_OK;
}

static int mismatch(replay_run *r, uint32_t k, const char *which, size_t got, size_t want)
{
	fprintf(r->err, "bp frames: frame %u: the %s world's pairs (%zu) differ from the plain world's (%zu)\n", k, which,
		got, want);
	return CLI_EXIT_MISMATCH;
}

/// Steps the three worlds on frame k; checks that they agree.
static int step_frame(replay_run *r, uint32_t k, bool lines, size_t changes)
{
	bp_status status = BP_OK;
	for (int w = 0; w < WORLD_SCHEDULED && status == BP_OK; ++w) {
		uint64_t t0 = cli_now_ns();
		status = bp_world_step(r->world[w]);
		r->ns[w][k] = cli_now_ns() - t0;
		if (status != BP_OK)
			fprintf(r->err, "bp frames: frame %u: %s\n", k, bp_world_last_error(r->world[w]));
	}
	bp_world *scheduled = r->world[WORLD_SCHEDULED];
	uint64_t number = 0;
	bp_view *view = NULL;
	if (status == BP_OK && ((status = bp_frame_submit(scheduled, &number)) != BP_OK ||
				       (status = bp_frame_wait(scheduled, number)) != BP_OK ||
				       (status = bp_frame_acquire(scheduled, &view)) != BP_OK))
		fprintf(r->err, "bp frames: frame %u: the scheduler: %s\n", k, bp_status_string(status));
	if (status != BP_OK)
		return cli_exit_for_status(status);
	bp_frame_stats built = bp_view_stats(view);
	r->ns[WORLD_SCHEDULED][k] = built.ns_total - built.ns_prepare;
	size_t n_plain, n_incremental, n_view;
	const bp_pair *plain = bp_world_pairs(r->world[WORLD_PLAIN], &n_plain);
	const bp_pair *incremental = bp_world_pairs(r->world[WORLD_INCREMENTAL], &n_incremental);
	const bp_pair *viewed = bp_view_pairs(view, &n_view);
	int code = CLI_EXIT_OK;
	if (n_incremental != n_plain || (n_plain && memcmp(incremental, plain, n_plain * sizeof(bp_pair))))
		code = mismatch(r, k, "incremental", n_incremental, n_plain);
	else if (n_view != n_plain || (n_plain && memcmp(viewed, plain, n_plain * sizeof(bp_pair))))
		code = mismatch(r, k, "scheduled", n_view, n_plain);
	bp_frame_stats s = bp_world_stats(r->world[WORLD_INCREMENTAL]);
	if (code == CLI_EXIT_OK && lines) {
		fprintf(r->out,
			"frame=%u entities=%u changes=%zu pairs=%zu plain_ms=%.3f incremental_ms=%.3f build_ms=%.3f "
			"active=%u searched=%u path=%s\n",
			k, bp_world_entity_count(r->world[WORLD_PLAIN]), changes, n_plain, (double)r->ns[WORLD_PLAIN][k] / 1e6,
			(double)r->ns[WORLD_INCREMENTAL][k] / 1e6, (double)r->ns[WORLD_SCHEDULED][k] / 1e6, s.active_count,
			s.searched_count, path_names[s.path]);
	}
	if (code == CLI_EXIT_OK) {
		r->paths[s.path]++;
		bool kept = s.path == BP_PATH_MOVING || s.path == BP_PATH_NEIGHBOURS;
		if (kept && changes > 0 && s.searched_count <= HELD_SEARCHED_SHARE * (double)changes) {
			r->held++;
			r->held_ns[0] += r->ns[WORLD_PLAIN][k];
			r->held_ns[1] += r->ns[WORLD_INCREMENTAL][k];
		}
	}
	bp_view_release(view);
	return code;
}

static int run_frames(replay_run *r, bool lines)
{
	for (uint32_t k = 0; k < r->frames; ++k) {
		bp_trace_frame f;
		bp_status status = bp_trace_reader_next(r->reader, &f);
		for (int w = 0; w < WORLD_COUNT && status == BP_OK; ++w)
			status = bp_trace_reader_apply(r->reader, r->world[w]);
		if (status != BP_OK) {
			fprintf(r->err, "bp frames: %s\n", bp_trace_reader_error(r->reader));
			return cli_exit_for_status(status);
		}
		size_t changes = (size_t)f.destroy_count + f.create_count + f.set_count + f.move_count;
		int code = step_frame(r, k, lines, changes);
		if (code != CLI_EXIT_OK)
			return code;
	}
	return CLI_EXIT_OK;
}

int cli_replay(const char *path, bp_algorithm algorithm, int threads, float skin, bool verbose, FILE *out, FILE *err)
{
	replay_run r = {.out = out, .err = err};
	int code = cli_open_trace("frames", path, &r.reader, err);
	if (code != CLI_EXIT_OK)
		return code;
	r.frames = bp_trace_reader_info(r.reader).frame_count;
	code = create_worlds(&r, algorithm, threads, skin);
	if (code == CLI_EXIT_OK)
		code = run_frames(&r, verbose || isatty(fileno(out)) != 1);
	if (code == CLI_EXIT_OK) {
		size_t pairs = 0;
		bp_world_pairs(r.world[WORLD_PLAIN], &pairs);
		double ms[WORLD_COUNT];
		for (int w = 0; w < WORLD_COUNT; ++w)
			ms[w] = r.frames ? cli_median_ms(r.ns[w], r.frames) : 0;
		double total[WORLD_COUNT] = {0};
		for (int w = 0; w < WORLD_COUNT; ++w)
			for (uint32_t k = 0; k < r.frames; ++k)
				total[w] += (double)r.ns[w][k];
		fprintf(out,
			"frames=%u entities_max=%u algo=%s plain_ms_median=%.3f incremental_ms_median=%.3f "
			"build_ms_median=%.3f incremental_vs_plain=%.3f incremental_vs_plain_total=%.3f full=%u resting=%u "
			"moving=%u neighbours=%u held=%u held_vs_plain=%.3f pairs_last=%zu\n",
			r.frames, bp_trace_reader_info(r.reader).max_entities,
			bp_algorithm_name(bp_world_stats(r.world[WORLD_PLAIN]).algorithm), ms[WORLD_PLAIN],
			ms[WORLD_INCREMENTAL], ms[WORLD_SCHEDULED], ms[WORLD_PLAIN] > 0 ? ms[WORLD_INCREMENTAL] / ms[WORLD_PLAIN] : 0,
			total[WORLD_PLAIN] > 0 ? total[WORLD_INCREMENTAL] / total[WORLD_PLAIN] : 0, r.paths[BP_PATH_FULL],
			r.paths[BP_PATH_RESTING], r.paths[BP_PATH_MOVING], r.paths[BP_PATH_NEIGHBOURS], r.held,
			r.held_ns[0] ? (double)r.held_ns[1] / (double)r.held_ns[0] : 0, pairs);
	}
	for (int w = 0; w < WORLD_COUNT; ++w) {
		bp_world_destroy(r.world[w]);
		free(r.ns[w]);
	}
	bp_trace_reader_close(r.reader);
	return code;
}
