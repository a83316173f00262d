// SPDX-License-Identifier: MIT
// `bp record --motion pile|rain|crowd|brownian|freefall|gravity`: each physics-like motion gives
// a trace that `bp verify` accepts, the same bytes for the same seed, and the motion its model
// promises, read back through the trace reader: a pile settles and sleeps, rain is recycled
// over the terrain every frame, a crowd walks slowly and stands still at its goals, brownian
// boxes move every frame inside their walls, falling boxes stack and come to rest, and boxes
// under turning gravity slide toward the new down.
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

static const char *const motions[] = {"pile", "rain", "crowd", "brownian", "freefall", "gravity"};
enum { MOTIONS = sizeof motions / sizeof motions[0] };

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
	for (size_t m = 0; m < MOTIONS; ++m)
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
	for (size_t m = 0; m < MOTIONS; ++m) {
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
	cr_assert(strstr(r.err, "--motion: unknown motion 'swarm' (known: walk pile rain crowd brownian freefall gravity)"), "%s", r.err);
	result_free(&r);
	r = BP("record", "--motion", "walk", "--n", "10", "--churn", "0.1", "--frames", "2", "-o", path);
	expect_code(&r, 0, "--motion walk --churn");
	result_free(&r);
}

/// The bounds of every entity as the trace left them, by id, and its statics: what the
/// brownian, freefall and gravity checks read.
enum { BOXES_MAX = 1024 };

typedef struct boxes_seen {
	int dims;
	uint32_t statics, n;                  ///< ids 0..statics-1 are static, the n bodies follow
	float min[BOXES_MAX][3], max[BOXES_MAX][3];
	float before_min[BOXES_MAX][3];       ///< a body's min before this frame's move
	uint32_t moves_in_frame[BOXES_MAX];   ///< by id: moves of the last frame
	uint32_t outside, frames;
	void (*frame_done)(struct boxes_seen *, const bp_trace_frame *);
	void *context;
} boxes_seen;

/// Whether body `id` is within the statics' outer box and overlaps none of them by more than
/// `slack` on every axis: inside the closed region they wall in.
static bool inside_walls(const boxes_seen *b, uint32_t id, float slack)
{
	for (int a = 0; a < b->dims; ++a) {
		float lo = INFINITY, hi = -INFINITY;
		for (uint32_t s = 0; s < b->statics; ++s) {
			lo = fminf(lo, b->min[s][a]);
			hi = fmaxf(hi, b->max[s][a]);
		}
		if (b->min[id][a] < lo || b->max[id][a] > hi)
			return false;
	}
	for (uint32_t s = 0; s < b->statics; ++s) {
		bool apart = false;
		for (int a = 0; a < b->dims; ++a)
			apart |= b->min[id][a] >= b->max[s][a] - slack || b->max[id][a] <= b->min[s][a] + slack;
		if (!apart)
			return false;
	}
	return true;
}

static void see_boxes(const bp_trace_frame *f, const bp_trace_state *s, void *context)
{
	boxes_seen *b = context;
	(void)s;
	for (uint32_t i = 0; i < f->create_count; ++i) {
		const bp_trace_entity *e = &f->creates[i];
		cr_assert_lt(e->id, BOXES_MAX);
		b->statics += e->kind == BP_KIND_STATIC;
		b->n += e->kind == BP_KIND_DYNAMIC;
		for (int a = 0; a < b->dims; ++a) {
			b->min[e->id][a] = b->before_min[e->id][a] = e->min[a];
			b->max[e->id][a] = e->max[a];
		}
	}
	const float *mins[3] = {f->moves.min_x, f->moves.min_y, f->moves.min_z};
	const float *maxs[3] = {f->moves.max_x, f->moves.max_y, f->moves.max_z};
	memset(b->moves_in_frame, 0, sizeof b->moves_in_frame);
	for (uint32_t i = 0; i < f->move_count; ++i) {
		const uint32_t id = f->move_ids[i];
		b->moves_in_frame[id]++;
		for (int a = 0; a < b->dims; ++a) {
			b->before_min[id][a] = b->min[id][a];
			b->min[id][a] = mins[a][i];
			b->max[id][a] = maxs[a][i];
		}
	}
	for (uint32_t id = b->statics; id < b->statics + b->n; ++id)
		b->outside += !inside_walls(b, id, 1e-4f);
	b->frames++;
	if (b->frame_done)
		b->frame_done(b, f);
}

static void see_motion(const char *path, int dims, boxes_seen *b)
{
	b->dims = dims;
	each_frame(path, see_boxes, b);
	cr_assert_eq(b->statics, 2u * (uint32_t)dims, "a closed region has %d walls, not %u", 2 * dims, b->statics);
	cr_assert_eq(b->outside, 0, "%u times a box was outside its walls", b->outside);
}

/// The deepest overlap of two bodies: over the pairs, the least overlap over the axes. With
/// `away_from_walls`, of the pairs where neither body touches a wall.
static float deepest_overlap(const boxes_seen *b, bool away_from_walls)
{
	float deepest = 0;
	for (uint32_t i = b->statics; i < b->statics + b->n; ++i)
		for (uint32_t j = i + 1; j < b->statics + b->n; ++j) {
			if (away_from_walls && (!inside_walls(b, i, -1e-3f) || !inside_walls(b, j, -1e-3f)))
				continue;
			float depth = INFINITY;
			for (int a = 0; a < b->dims; ++a)
				depth = fminf(depth, fminf(b->max[i][a], b->max[j][a]) - fmaxf(b->min[i][a], b->min[j][a]));
			deepest = fmaxf(deepest, depth);
		}
	return deepest;
}

/// The most a brownian box goes along an axis in a frame (2 m/s) and the least (0.5 m/s, but
/// a bounce can fold a step back on itself).
#define BROWNIAN_MOST_STEP (2.001f / 60)

typedef struct brownian_seen {
	uint32_t still, too_far, turned;
	float last_step[BOXES_MAX][3];
} brownian_seen;

static void brownian_frame(boxes_seen *b, const bp_trace_frame *f)
{
	brownian_seen *seen = b->context;
	if (f->index == 0)
		return;
	for (uint32_t id = b->statics; id < b->statics + b->n; ++id) {
		seen->still += b->moves_in_frame[id] != 1;
		bool turned = false, clear_of_walls = inside_walls(b, id, -0.1f);
		for (int a = 0; a < b->dims; ++a) {
			const float step = b->min[id][a] - b->before_min[id][a];
			seen->too_far += fabsf(step) > BROWNIAN_MOST_STEP;
			seen->still += step == 0;
			turned |= f->index > 1 && step * seen->last_step[id][a] < 0;
			seen->last_step[id][a] = step;
		}
		seen->turned += turned && clear_of_walls;
	}
}

Test(cli_motion, brownian_boxes_move_every_frame_inside_their_walls)
{
	for (int dims = 2; dims <= 3; ++dims) {
		const char *path = record("brownian", "300", "120", dims == 2 ? "2" : "3", "4", "brownian.bpt");
		brownian_seen seen = {0};
		boxes_seen b = {.frame_done = brownian_frame, .context = &seen};
		see_motion(path, dims, &b);
		cr_assert_eq(b.n, 300);
		cr_assert_eq(seen.still, 0, "%dD: %u times a box did not move on an axis", dims, seen.still);
		cr_assert_eq(seen.too_far, 0, "%dD: %u steps faster than 2 m/s", dims, seen.too_far);
		// A new velocity is drawn with chance 1/20 a frame: about 1800 in 119 frames, most away from walls.
		cr_assert_geq(seen.turned, 300, "%dD: %u turns away from the walls", dims, seen.turned);
	}
}

enum { FALL_FRAMES = 150, FALL_QUIET = 30 };
/// Boxes never overlap by more than this (1/8 m) on every axis.
#define FALL_MOST_OVERLAP 0.1251f

typedef struct fall_seen {
	uint32_t late_moves;
	float deepest;
} fall_seen;

static void fall_frame(boxes_seen *b, const bp_trace_frame *f)
{
	fall_seen *seen = b->context;
	if (f->index >= FALL_FRAMES - FALL_QUIET)
		seen->late_moves += f->move_count;
	if (f->index % 10 == 0)
		seen->deepest = fmaxf(seen->deepest, deepest_overlap(b, false));
}

/// Body `id` stands on the floor or on another body whose top its bottom touches, their
/// footprints overlapping.
static bool supported(const boxes_seen *b, uint32_t id)
{
	const int up = b->dims - 1;
	if (fabsf(b->min[id][up]) < 1e-4f)
		return true;
	for (uint32_t j = b->statics; j < b->statics + b->n; ++j) {
		bool under = j != id && fabsf(b->max[j][up] - b->min[id][up]) < 1e-4f;
		for (int a = 0; a < up && under; ++a)
			under = b->min[id][a] < b->max[j][a] && b->min[j][a] < b->max[id][a];
		if (under)
			return true;
	}
	return false;
}

/// Records 400 bodies of `motion` for FALL_FRAMES frames in `dims` and follows them through b.
static void record_and_see(const char *motion, const char *seed, int dims, const char *file, boxes_seen *b)
{
	char frames[16];
	snprintf(frames, sizeof frames, "%d", FALL_FRAMES);
	see_motion(record(motion, "400", frames, dims == 2 ? "2" : "3", seed, file), dims, b);
}

Test(cli_motion, freefall_boxes_stack_and_come_to_rest)
{
	for (int dims = 2; dims <= 3; ++dims) {
		fall_seen seen = {0};
		boxes_seen b = {.frame_done = fall_frame, .context = &seen};
		record_and_see("freefall", "6", dims, "freefall.bpt", &b);
		cr_assert_eq(seen.late_moves, 0, "%dD: %u moves in the last %d frames", dims, seen.late_moves, FALL_QUIET);
		cr_assert_leq(deepest_overlap(&b, false), FALL_MOST_OVERLAP, "%dD: boxes end %g m inside one another", dims,
			deepest_overlap(&b, false));
		cr_assert_leq(seen.deepest, FALL_MOST_OVERLAP, "%dD: boxes %g m inside one another", dims, seen.deepest);
		uint32_t floating = 0, stacked = 0;
		for (uint32_t id = b.statics; id < b.statics + b.n; ++id) {
			floating += !supported(&b, id);
			stacked += b.min[id][dims - 1] > 0.4f;
		}
		cr_assert_eq(floating, 0, "%dD: %u boxes rest on nothing", dims, floating);
		cr_assert_geq(stacked, b.n / 10, "%dD: only %u boxes rest on others", dims, stacked);
	}
}

typedef struct gravity_seen {
	double mean_x[FALL_FRAMES];
	float deepest;
} gravity_seen;

static void gravity_frame(boxes_seen *b, const bp_trace_frame *f)
{
	gravity_seen *seen = b->context;
	double sum = 0;
	for (uint32_t id = b->statics; id < b->statics + b->n; ++id)
		sum += 0.5 * (b->min[id][0] + b->max[id][0]);
	seen->mean_x[f->index] = sum / b->n;
	// A stack that reaches the far wall is stopped there, inside the boxes before it.
	if (f->index % 10 == 0)
		seen->deepest = fmaxf(seen->deepest, deepest_overlap(b, true));
}

Test(cli_motion, turning_gravity_slides_the_boxes_toward_the_new_down)
{
	for (int dims = 2; dims <= 3; ++dims) {
		gravity_seen seen = {0};
		boxes_seen b = {.frame_done = gravity_frame, .context = &seen};
		record_and_see("gravity", "8", dims, "gravity.bpt", &b);
		cr_assert_leq(seen.deepest, FALL_MOST_OVERLAP, "%dD: boxes away from the walls %g m inside one another",
			dims, seen.deepest);
		// Down at first, toward +x from 1/6 s to 7/6 s (frames 10 to 70), then up.
		const double slide = seen.mean_x[70] - seen.mean_x[10];
		cr_assert_gt(slide, 1.0, "%dD: the boxes moved %g m along x while pulled toward +x", dims, slide);
		cr_assert_lt(fabs(seen.mean_x[10] - seen.mean_x[1]), 0.05, "%dD: the boxes slid %g m while pulled down",
			dims, seen.mean_x[10] - seen.mean_x[1]);
	}
}
