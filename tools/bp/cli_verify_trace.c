// SPDX-License-Identifier: MIT
// `bp verify TRACE`: every frame of a trace (or frame K alone, read through the index) replayed
// into one world per checked algorithm and an incremental world; each frame's pairs must equal,
// byte for byte, those the sweep (cli_sweep.h) finds in the reader's state, which holds the
// worlds' dense order.
#include "cli.h"
#include "cli_sweep.h"

#include <stdlib.h>
#include <string.h>

typedef struct checked_world {
	const char *name;
	bp_world *world;
	bool ok, skipped;
	uint32_t frame;  ///< the first frame that failed
	char why[160];
} checked_world;

static bp_status make_world(const bp_trace_reader *reader, bp_algorithm algorithm, bool incremental, int threads,
	bp_world **out)
{
	bp_world_def settings = bp_world_def_default();
	settings.algorithm = algorithm;
	settings.thread_count = threads;
	settings.canonical_pairs = true;
	settings.incremental = incremental;
	bp_world_def def = cli_trace_world_def(reader, &settings);
	return bp_world_create(&def, out);
}

/// Steps a checked world and compares it with the sweep's pairs of the frame.
static void check(checked_world *c, uint32_t k, const bp_pair *want, size_t want_count, bool all)
{
	if (!c->ok || c->skipped)
		return;
	bp_status status = bp_world_step(c->world);
	if (status == BP_ERR_UNSUPPORTED && all) {
		c->skipped = true;
		snprintf(c->why, sizeof c->why, "%s", bp_world_last_error(c->world));
		return;
	}
	size_t count = 0;
	const bp_pair *got = status == BP_OK ? bp_world_pairs(c->world, &count) : NULL;
	if (status != BP_OK)
		snprintf(c->why, sizeof c->why, "%s", bp_world_last_error(c->world));
	else if (count != want_count || (count && memcmp(got, want, count * sizeof *got)))
		snprintf(c->why, sizeof c->why, "pairs=%zu sweep=%zu", count, want_count);
	else
		return;
	c->ok = false;
	c->frame = k;
}

/// Brings every world to the reader's next frame (or loads the state after a seek).
static bp_status follow(bp_trace_reader *reader, checked_world *worlds, int count, bool load)
{
	bp_status status = BP_OK;
	for (int i = 0; i < count && status == BP_OK; ++i)
		status = load ? bp_trace_reader_load(reader, worlds[i].world) : bp_trace_reader_apply(reader, worlds[i].world);
	return status;
}

/// The pairs of the reader's state by the sweep.
static bool sweep_state(const bp_trace_reader *reader, sweep_pairs *out)
{
	bp_trace_state state = bp_trace_reader_state(reader);
	sweep_entities entities = {.dims = bp_trace_reader_info(reader).dims, .count = state.count,
		.bounds = state.bounds, .category = state.category, .mask = state.mask, .kinds = state.kinds,
		.shapes = state.shapes};
	return sweep_find_pairs(&entities, out);
}

/// One world per checked algorithm, then the incremental world; *count says how many were made.
static bp_status make_worlds(const bp_trace_reader *reader, const bool *checked, int threads, checked_world *worlds,
	int *count)
{
	bp_status status = BP_OK;
	*count = 0;
	for (int i = 0; i < BP_ALGO_COUNT && status == BP_OK; ++i)
		if (checked[i]) {
			worlds[*count] = (checked_world){.name = bp_algorithm_name((bp_algorithm)i), .ok = true};
			status = make_world(reader, (bp_algorithm)i, false, threads, &worlds[(*count)++].world);
		}
	if (status == BP_OK) {
		worlds[*count] = (checked_world){.name = "incremental", .ok = true};
		status = make_world(reader, BP_ALGO_AUTO, true, threads, &worlds[(*count)++].world);
	}
	return status;
}

/// One line per world; true when every world matched.
static bool report(const checked_world *worlds, int count, uint32_t frames, uint64_t pairs_total, FILE *out)
{
	bool all_ok = true;
	for (int i = 0; i < count; ++i) {
		const checked_world *c = &worlds[i];
		if (c->skipped)
			fprintf(out, "%s skipped: %s\n", c->name, c->why);
		else if (c->ok)
			fprintf(out, "%s ok frames=%u pairs=%llu\n", c->name, frames, (unsigned long long)pairs_total);
		else
			fprintf(out, "%s FAIL frame %u: %s\n", c->name, c->frame, c->why);
		all_ok &= c->ok;
	}
	return all_ok;
}

int cli_verify_trace(const char *path, const bool *checked, bool all, int threads, bool one, uint32_t frame,
	FILE *out, FILE *err)
{
	bp_trace_reader *reader = NULL;
	int code = cli_open_trace("verify", path, &reader, err);
	if (code != CLI_EXIT_OK)
		return code;
	const uint32_t frames = bp_trace_reader_info(reader).frame_count;
	if (one && frame >= frames) {
		fprintf(err, "bp verify: --frame: the trace has %u frame%s, got %u\n", frames, frames == 1 ? "" : "s", frame);
		bp_trace_reader_close(reader);
		return CLI_EXIT_USAGE;
	}
	checked_world worlds[BP_ALGO_COUNT + 1];
	int count;
	bp_status status = make_worlds(reader, checked, threads, worlds, &count);
	if (status != BP_OK)
		fprintf(err, "bp verify: cannot create a world: %s\n", bp_world_create_error());
	const uint32_t first = one ? frame : 0, end = one ? frame + 1 : frames;
	if (status == BP_OK && one && (status = bp_trace_reader_seek(reader, frame)) == BP_OK)
		status = follow(reader, worlds, count, true);
	FILE *progress = cli_status_stream(err);
	sweep_pairs want = {0};
	uint64_t pairs_total = 0;
	for (uint32_t k = first; k < end && status == BP_OK; ++k) {
		cli_status_show(progress, "bp verify: frame %u/%u", k - first + 1, end - first);
		bp_trace_frame f;
		if (!one && ((status = bp_trace_reader_next(reader, &f)) != BP_OK ||
				    (status = follow(reader, worlds, count, false)) != BP_OK))
			break;
		if (!sweep_state(reader, &want)) {
			status = BP_ERR_OUT_OF_MEMORY;
			fprintf(err, "bp verify: frame %u: out of memory\n", k);
			break;
		}
		pairs_total += want.count;
		for (int i = 0; i < count; ++i)
			check(&worlds[i], k, want.data, want.count, all);
	}
	cli_status_clear(progress);
	if (status != BP_OK && bp_trace_reader_error(reader)[0])
		fprintf(err, "bp verify: %s\n", bp_trace_reader_error(reader));
	code = cli_exit_for_status(status);
	if (code == CLI_EXIT_OK && !report(worlds, count, end - first, pairs_total, out))
		code = CLI_EXIT_MISMATCH;
	for (int i = 0; i < count; ++i)
		bp_world_destroy(worlds[i].world);
	sweep_pairs_free(&want);
	bp_trace_reader_close(reader);
	return code;
}
