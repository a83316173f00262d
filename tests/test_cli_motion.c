// SPDX-License-Identifier: MIT
// `bp record --motion pile|rain|crowd`: each physics-like motion gives a trace that `bp verify`
// accepts, the same bytes for the same seed, and the motion its model promises, read back
// through the trace reader: a pile settles and sleeps, rain is recycled over the terrain every
// frame, a crowd walks slowly and stands still at its goals.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_runner.h"
#include "tmpfiles.h"

static void make_tmp_dir(void) { test_tmp_dir_make("bp_cli_motion_"); }

TestSuite(cli_motion, .init = make_tmp_dir, .fini = test_tmp_dir_remove, .timeout = 120);

static const char *const motions[] = {"pile", "rain", "crowd"};

/// Records `motion` into the test's directory as `name` and returns its path.
static const char *record(const char *motion, const char *n, const char *frames, const char *dims, const char *seed,
	const char *name)
{
	const char *path = test_tmp_path(name);
	cli_result r = BP("record", "--motion", motion, "--n", n, "--frames", frames, "--dims", dims, "--seed", seed,
		"-o", path);
	expect_code(&r, 0, motion);
	char expect[96];
	snprintf(expect, sizeof expect, " frames=%s n=%s dims=%s ", frames, n, dims);
	cr_assert(strstr(r.out, "recorded=") && strstr(r.out, expect) && strstr(r.out, " statics="), "%s", r.out);
	result_free(&r);
	return path;
}

/// Reads a trace frame by frame; `visit` sees each frame and the reader's state after it.
static void each_frame(const char *path, void (*visit)(const bp_trace_frame *, const bp_trace_state *, void *),
	void *context)
{
	bp_trace_reader *reader = NULL;
	cr_assert_eq(bp_trace_reader_open(path, &reader), BP_OK, "%s", bp_trace_open_error());
	bp_trace_frame frame;
	while (bp_trace_reader_next(reader, &frame) == BP_OK) {
		bp_trace_state state = bp_trace_reader_state(reader);
		visit(&frame, &state, context);
	}
	cr_assert_eq(bp_trace_reader_position(reader), bp_trace_reader_info(reader).frame_count, "%s",
		bp_trace_reader_error(reader));
	bp_trace_reader_close(reader);
}

Test(cli_motion, every_motion_verifies_in_2d_and_3d)
{
	for (size_t m = 0; m < 3; ++m)
		for (int dims = 2; dims <= 3; ++dims) {
			const char *path = record(motions[m], "300", "120", dims == 2 ? "2" : "3", "1", "motion.bpt");
			cli_result r = BP("verify", path, "--threads", "2");
			expect_code(&r, 0, motions[m]);
			cr_assert(strstr(r.out, "incremental ok frames=120 ") && strstr(r.out, "sap ok frames=120 "), "%s: %s",
				motions[m], r.out);
			result_free(&r);
		}
}

Test(cli_motion, the_seed_alone_decides_the_bytes)
{
	for (size_t m = 0; m < 3; ++m) {
		size_t sizes[3];
		char *bytes[3];
		const char *seeds[] = {"7", "7", "8"}, *names[] = {"a.bpt", "b.bpt", "c.bpt"};
		for (int i = 0; i < 3; ++i)
			bytes[i] = test_read_file(record(motions[m], "300", "60", "3", seeds[i], names[i]), &sizes[i]);
		cr_assert(sizes[0] == sizes[1] && memcmp(bytes[0], bytes[1], sizes[0]) == 0, "%s: seed 7 twice differs",
			motions[m]);
		cr_assert(sizes[0] != sizes[2] || memcmp(bytes[0], bytes[2], sizes[0]) != 0, "%s: seeds 7 and 8 agree",
			motions[m]);
		for (int i = 0; i < 3; ++i)
			free(bytes[i]);
	}
}

enum { PILE_N = 300, PILE_FRAMES = 400, PILE_LAST = 30 };

typedef struct pile_seen {
	uint32_t moves[PILE_FRAMES];
	bool *late_mover; ///< by id: moved in the last PILE_LAST frames
} pile_seen;

static void see_pile(const bp_trace_frame *f, const bp_trace_state *s, void *context)
{
	pile_seen *seen = context;
	(void)s;
	seen->moves[f->index] = f->move_count;
	if (f->index >= PILE_FRAMES - PILE_LAST)
		for (uint32_t i = 0; i < f->move_count; ++i)
			seen->late_mover[f->move_ids[i]] = true;
}

Test(cli_motion, a_pile_settles_and_sleeps)
{
	const char *path = record("pile", "300", "400", "3", "3", "pile.bpt");
	pile_seen seen = {.late_mover = calloc(1u << 16, sizeof(bool))};
	each_frame(path, see_pile, &seen);
	uint32_t busiest = 0, quietest = PILE_N, late = 0;
	for (uint32_t f = 1; f < 100; ++f)
		busiest = seen.moves[f] > busiest ? seen.moves[f] : busiest;
	for (uint32_t f = 200; f < PILE_FRAMES; ++f)
		quietest = seen.moves[f] < quietest ? seen.moves[f] : quietest;
	for (uint32_t id = 0; id < 1u << 16; ++id)
		late += seen.late_mover[id];
	cr_assert_geq(busiest, PILE_N / 2, "while falling and settling most boxes move: at most %u", busiest);
	cr_assert_leq(quietest, PILE_N / 50, "once settled the boxes sleep: at least %u moves a frame", quietest);
	cr_assert_leq(late, PILE_N / 4, "%u boxes moved in the last %d frames", late, PILE_LAST);
	free(seen.late_mover);
}

/// Late frames: after the bodies resting at frame 0 have all been recycled once.
enum { RAIN_LATE = 180 };

typedef struct rain_seen {
	int up;
	float terrain_top;       ///< the highest static box
	uint64_t late_creates, late_destroys;
	uint32_t low_creates;    ///< created after frame 0 at or below the terrain's top
} rain_seen;

static void see_rain(const bp_trace_frame *f, const bp_trace_state *s, void *context)
{
	rain_seen *seen = context;
	(void)s;
	for (uint32_t i = 0; i < f->create_count; ++i) {
		const bp_trace_entity *e = &f->creates[i];
		if (f->index == 0 && e->kind == BP_KIND_STATIC)
			seen->terrain_top = fmaxf(seen->terrain_top, e->max[seen->up]);
		if (f->index > 0)
			seen->low_creates += e->kind != BP_KIND_DYNAMIC || e->min[seen->up] <= seen->terrain_top;
	}
	if (f->index >= RAIN_LATE) {
		seen->late_creates += f->create_count;
		seen->late_destroys += f->destroy_count;
	}
}

Test(cli_motion, rain_is_recycled_above_the_terrain)
{
	for (int dims = 2; dims <= 3; ++dims) {
		const char *path = record("rain", "300", "240", dims == 2 ? "2" : "3", "5", "rain.bpt");
		rain_seen seen = {.up = dims - 1, .terrain_top = -INFINITY};
		each_frame(path, see_rain, &seen);
		cr_assert(seen.terrain_top > 0, "no terrain");
		cr_assert(seen.late_creates > 0 && seen.late_destroys > 0, "%dD: frames %d on: %llu creates, %llu destroys",
			dims, RAIN_LATE, (unsigned long long)seen.late_creates, (unsigned long long)seen.late_destroys);
		cr_assert_eq(seen.low_creates, 0, "%dD: %u bodies created at or below the terrain", dims, seen.low_creates);
	}
}

enum { CROWD_N = 300, CROWD_FRAMES = 240, CROWD_STOPPED = 30 };
/// The fastest runner (4 m/s) with the most sideways wobble, a frame of 1/60 s.
#define CROWD_MOST_STEP (4.01 / 60)
/// The fastest walker (1.6 m/s), the same.
#define CROWD_WALK_STEP (1.61 / 60)

typedef struct crowd_seen {
	float *min_x, *min_y; ///< by id, as last created or moved
	uint32_t *last_move;  ///< by id, the last frame it moved in
	uint32_t fewest_idle;
	uint64_t moves, walking_steps;
	double longest_step;
} crowd_seen;

static void see_crowd(const bp_trace_frame *f, const bp_trace_state *s, void *context)
{
	crowd_seen *seen = context;
	(void)s;
	for (uint32_t i = 0; i < f->create_count; ++i) {
		seen->min_x[f->creates[i].id] = f->creates[i].min[0];
		seen->min_y[f->creates[i].id] = f->creates[i].min[1];
	}
	if (f->index == 0)
		return;
	const uint32_t idle = CROWD_N - f->move_count;
	seen->fewest_idle = idle < seen->fewest_idle ? idle : seen->fewest_idle;
	for (uint32_t i = 0; i < f->move_count; ++i) {
		const uint32_t id = f->move_ids[i];
		const double step = hypot(f->moves.min_x[i] - seen->min_x[id], f->moves.min_y[i] - seen->min_y[id]);
		seen->longest_step = fmax(seen->longest_step, step);
		seen->walking_steps += step <= CROWD_WALK_STEP;
		seen->min_x[id] = f->moves.min_x[i];
		seen->min_y[id] = f->moves.min_y[i];
		seen->last_move[id] = f->index;
	}
	seen->moves += f->move_count;
}

Test(cli_motion, a_crowd_walks_and_stands)
{
	const char *path = record("crowd", "300", "240", "3", "9", "crowd.bpt");
	crowd_seen seen = {.min_x = calloc(1u << 16, sizeof(float)), .min_y = calloc(1u << 16, sizeof(float)),
		.last_move = calloc(1u << 16, sizeof(uint32_t)), .fewest_idle = CROWD_N};
	each_frame(path, see_crowd, &seen);
	// Walked, then stood still to the end: people who reached a goal.
	uint32_t stopped = 0;
	for (uint32_t id = 0; id < 1u << 16; ++id)
		stopped += seen.last_move[id] > 0 && seen.last_move[id] < CROWD_FRAMES - CROWD_STOPPED;
	cr_assert_geq(stopped, CROWD_N / 50, "%u people walked and then stood for %d frames", stopped, CROWD_STOPPED);
	cr_assert_geq(seen.fewest_idle, CROWD_N / 20, "a frame where only %u people stand still", seen.fewest_idle);
	cr_assert_gt(seen.moves, (uint64_t)CROWD_N * (CROWD_FRAMES - 1) / 2, "most people walk: %llu moves",
		(unsigned long long)seen.moves);
	cr_assert_leq(seen.longest_step, CROWD_MOST_STEP, "a step of %g m in one frame", seen.longest_step);
	cr_assert_geq(seen.walking_steps, seen.moves * 9 / 10, "%llu of %llu steps at walking pace",
		(unsigned long long)seen.walking_steps, (unsigned long long)seen.moves);
	free(seen.min_x);
	free(seen.min_y);
	free(seen.last_move);
}

Test(cli_motion, walk_options_and_unknown_motions_are_refused)
{
	const char *path = test_tmp_path("bad.bpt");
	const char *walk_only[] = {"--dist", "uniform", "--moving", "0.5", "--churn", "0.1"};
	for (int i = 0; i < 3; ++i) {
		cli_result r = BP("record", "--motion", "rain", "--n", "10", walk_only[2 * i], walk_only[2 * i + 1], "-o", path);
		expect_code(&r, CLI_EXIT_USAGE, walk_only[2 * i]);
		char expect[96];
		snprintf(expect, sizeof expect, "bp record: %s applies to --motion walk only, not rain\n", walk_only[2 * i]);
		cr_assert(strstr(r.err, expect), "%s", r.err);
		result_free(&r);
	}
	cli_result r = BP("record", "--motion", "swarm", "--n", "10", "-o", path);
	expect_code(&r, CLI_EXIT_USAGE, "--motion swarm");
	cr_assert(strstr(r.err, "--motion: unknown motion 'swarm' (known: walk pile rain crowd)"), "%s", r.err);
	result_free(&r);
	r = BP("record", "--motion", "walk", "--n", "10", "--churn", "0.1", "--frames", "2", "-o", path);
	expect_code(&r, 0, "--motion walk --churn");
	result_free(&r);
}
