// SPDX-License-Identifier: MIT
// Thread counts (world.h, BP_MAX_THREADS) and threads that cannot start (threads.c): 0, 1 and
// the maximum step to the oracle's pairs, larger counts are refused and change nothing, and a
// thread the system refuses fails the call with a status, never the process.
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "world/world_frames.h"
#include "oracle.h"
#include "step/step.h"
#include "parallel/threads.h"

enum { N = 1500 };

typedef struct scene {
	oracle_box boxes[N];
	oracle_pairs pairs;
} scene;

static scene *make_scene(void)
{
	static scene s;
	// Brute cuts 1500 entities into 47 chunks: every count above 1 starts a team.
	test_random_boxes(s.boxes, N, 3, 20.0f, 2.0f, false, 415);
	s.pairs = oracle_find_pairs(s.boxes, N, 3);
	cr_assert_gt(s.pairs.count, 1000);
	return &s;
}

static void assert_oracle_pairs(const bp_world *w, const scene *s)
{
	size_t count;
	const bp_pair *pairs = bp_world_pairs(w, &count);
	cr_assert(oracle_same_pair_set(pairs, count, &s->pairs));
}

/// A frame through the scheduler reports the oracle's pairs; returns its stats.
static bp_frame_stats assert_frame_pairs(bp_world *w, const scene *s)
{
	bp_view *view = NULL;
	cr_assert_eq(bp_frame_step(w, &view), BP_OK, "%s", bp_world_last_error(w));
	size_t count;
	const bp_pair *pairs = bp_view_pairs(view, &count);
	cr_assert(oracle_same_pair_set(pairs, count, &s->pairs));
	bp_frame_stats stats = bp_view_stats(view);
	bp_view_release(view);
	return stats;
}

/// True when `text` contains the decimal form of v.
static bool mentions(const char *text, long long v)
{
	char number[32];
	snprintf(number, sizeof number, "%lld", v);
	return strstr(text, number) != NULL;
}

// ---- counts the library accepts -----------------------------------------------

static void check_count_steps(int requested, int expected)
{
	scene *s = make_scene();
	bp_world *w = test_world_from_boxes(s->boxes, N, 3, BP_ALGO_BRUTE, requested);
	cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
	cr_assert_eq(bp_world_stats(w).thread_count, expected);
	assert_oracle_pairs(w, s);
	bp_world_destroy(w);
	oracle_pairs_free(&s->pairs);
}

Test(threads, zero_means_every_core, .timeout = 60)
{
	enum { LARGE = BP_SERIAL_STEP_ENTITIES };
	static oracle_box boxes[LARGE];
	test_random_boxes(boxes, LARGE, 3, 30.0f, 2.0f, false, 416);
	oracle_pairs pairs = oracle_find_pairs(boxes, LARGE, 3);
	bp_world *w = test_world_from_boxes(boxes, LARGE, 3, BP_ALGO_BRUTE, 0);
	cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
	int cores = omp_get_num_procs();
	cr_assert_eq(bp_world_stats(w).thread_count, cores < BP_MAX_THREADS ? cores : BP_MAX_THREADS);
	size_t count;
	const bp_pair *found = bp_world_pairs(w, &count);
	cr_assert(oracle_same_pair_set(found, count, &pairs));
	bp_world_destroy(w);
	oracle_pairs_free(&pairs);
}

// A step too small to gain from threads runs on the caller, whatever the count.
Test(threads, a_small_step_runs_on_the_caller, .timeout = 60)
{
	cr_assert_lt(N, BP_SERIAL_STEP_ENTITIES);
	bpi_set_serial_step_entities(BP_SERIAL_STEP_ENTITIES); // the library's rule, not the suites'
	check_count_steps(0, 1);
	check_count_steps(4, 1);
	bpi_set_serial_step_entities(0);
}

Test(threads, one, .timeout = 60) { check_count_steps(1, 1); }

Test(threads, the_maximum, .timeout = 120)
{
	// 1024 threads on a small machine: most wait, the pairs are the same. A system that
	// cannot start that many (a pids limit, a small address space) makes it a refused
	// step, which the world survives.
	scene *s = make_scene();
	bp_world *w = test_world_from_boxes(s->boxes, N, 3, BP_ALGO_BRUTE, BP_MAX_THREADS);
	bp_status status = bp_world_step(w);
	if (status == BP_OK) {
		cr_assert_eq(bp_world_stats(w).thread_count, BP_MAX_THREADS);
	} else {
		cr_assert_eq(status, BP_ERR_OUT_OF_MEMORY);
		cr_assert(strstr(bp_world_last_error(w), "cannot start 1024 threads") != NULL, "%s", bp_world_last_error(w));
		cr_log_warn("this system cannot start %d threads: %s", BP_MAX_THREADS, bp_world_last_error(w));
		cr_assert_eq(bp_world_set_thread_count(w, 1), BP_OK);
		cr_assert_eq(bp_world_step(w), BP_OK);
	}
	assert_oracle_pairs(w, s);
	bp_world_destroy(w);
	oracle_pairs_free(&s->pairs);
}

// ---- counts the library refuses -----------------------------------------------

Test(threads, beyond_the_maximum_no_world_is_created)
{
	const int refused[] = {BP_MAX_THREADS + 1, INT_MAX, -1, INT_MIN};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
		bp_world_def def = bp_world_def_default();
		def.thread_count = refused[i];
		bp_world *w = NULL;
		cr_assert_eq(bp_world_create(&def, &w), BP_ERR_INVALID_ARGUMENT, "thread_count %d", refused[i]);
		cr_assert_null(w);
	}
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(threads, beyond_the_maximum_setter_changes_nothing, .timeout = 60)
{
	scene *s = make_scene();
	bp_world *w = test_world_from_boxes(s->boxes, N, 3, BP_ALGO_BRUTE, 2);
	const int refused[] = {BP_MAX_THREADS + 1, INT_MAX, -1};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
		cr_assert_eq(bp_world_set_thread_count(w, refused[i]), BP_ERR_INVALID_ARGUMENT);
		const char *why = bp_world_last_error(w);
		cr_assert(mentions(why, refused[i]) && mentions(why, BP_MAX_THREADS), "last_error: '%s'", why);
	}
	cr_assert_eq(bp_world_step(w), BP_OK);
	cr_assert_eq(bp_world_stats(w).thread_count, 2, "a refused count changed the world's");
	assert_oracle_pairs(w, s);
	bp_world_destroy(w);
	oracle_pairs_free(&s->pairs);
}

// ---- threads the system refuses -------------------------------------------------
//
// The library starts its threads through bpi_thread_start; this stand-in lets the
// first `granted` starts through and refuses the rest as the system does when it is out
// of threads or of address space for their stacks (EAGAIN).

static _Atomic int granted;
static _Atomic int refused_starts;

static int rationed_creator(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	if (atomic_fetch_sub(&granted, 1) <= 0) {
		atomic_fetch_add(&refused_starts, 1);
		return EAGAIN;
	}
	return pthread_create(thread, NULL, fn, arg);
}

static void ration_threads(int count)
{
	atomic_store(&granted, count);
	atomic_store(&refused_starts, 0);
	bpi_thread_set_creator(rationed_creator);
}

Test(threads, a_team_the_system_refuses_fails_the_step_not_the_process, .timeout = 60)
{
	scene *s = make_scene();
	bp_world *w = test_world_from_boxes(s->boxes, N, 3, BP_ALGO_BRUTE, 1);
	cr_assert_eq(bp_world_step(w), BP_OK);
	cr_assert_eq(bp_world_set_thread_count(w, 8), BP_OK);
	ration_threads(3); // 3 of the 7 workers of a team of 8
	cr_assert_eq(bp_world_step(w), BP_ERR_OUT_OF_MEMORY);
	cr_assert_eq(atomic_load(&refused_starts), 1, "the check went on after the first refusal");
	const char *why = bp_world_last_error(w);
	cr_assert(strstr(why, "cannot start 8 threads (3 of 7 workers started)") != NULL, "last_error: '%s'", why);
	cr_assert_eq(bp_world_stats(w).frame, 1, "the failed step counted");
	cr_assert_eq(bp_world_stats(w).thread_count, 1);
	assert_oracle_pairs(w, s); // the first step's pairs are kept

	// The world goes on: with fewer threads, or with the system willing again.
	cr_assert_eq(bp_world_set_thread_count(w, 4), BP_OK);
	ration_threads(3);
	cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
	cr_assert_eq(bp_world_stats(w).thread_count, 4);
	assert_oracle_pairs(w, s);
	bpi_thread_set_creator(NULL);
	cr_assert_eq(bp_world_set_thread_count(w, 8), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
	cr_assert_eq(bp_world_stats(w).thread_count, 8);
	assert_oracle_pairs(w, s);
	bp_world_destroy(w);
	oracle_pairs_free(&s->pairs);
}

Test(threads, a_builder_the_system_refuses_fails_the_submit, .timeout = 60)
{
	scene *s = make_scene();
	bp_world *w = test_world_from_boxes(s->boxes, N, 3, BP_ALGO_BRUTE, 2);
	ration_threads(0);
	uint64_t frame = 0;
	cr_assert_eq(bp_frame_submit(w, &frame), BP_ERR_OUT_OF_MEMORY);
	cr_assert(strstr(bp_world_last_error(w), "cannot start the frame builder thread") != NULL);
	cr_assert_eq(bpi_world_live_frames(w), 0, "a refused submit kept a frame buffer");
	bp_view *view = NULL;
	cr_assert_eq(bp_frame_acquire(w, &view), BP_ERR_NO_FRAME, "nothing was published");
	bpi_thread_set_creator(NULL);

	cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
	assert_oracle_pairs(w, s);
	assert_frame_pairs(w, s);
	bp_world_destroy(w);
	oracle_pairs_free(&s->pairs);
}

Test(threads, a_team_the_system_refuses_fails_the_frame, .timeout = 60)
{
	scene *s = make_scene();
	bp_world *w = test_world_from_boxes(s->boxes, N, 3, BP_ALGO_BRUTE, 6);
	ration_threads(1); // the builder, then none of its team
	uint64_t frame = 0;
	// Refused twice: the copy on submit, which then copies on the host thread alone, and
	// the builder's team, which fails the frame.
	cr_assert_eq(bp_frame_submit(w, &frame), BP_OK, "%s", bp_world_last_error(w));
	cr_assert_eq(bp_frame_wait(w, frame), BP_ERR_OUT_OF_MEMORY);
	cr_assert_eq(atomic_load(&refused_starts), 2);
	bp_view *view = NULL;
	cr_assert_eq(bp_frame_acquire(w, &view), BP_ERR_NO_FRAME, "a frame whose team did not start was published");
	bpi_thread_set_creator(NULL);

	cr_assert_eq(assert_frame_pairs(w, s).thread_count, 6);
	bp_world_destroy(w);
	oracle_pairs_free(&s->pairs);
}

Test(threads, a_team_the_system_refuses_fails_a_grid_assign, .timeout = 60)
{
	scene *s = make_scene();
	bp_world *w = test_world_from_boxes(s->boxes, N, 3, BP_ALGO_BRUTE, 5);
	bp_cell_grid_def def = bp_cell_grid_def_default();
	def.cells[0] = def.cells[1] = def.cells[2] = 4;
	def.cell_size = 5.0f;
	bp_cell_grid *grid = NULL;
	cr_assert_eq(bp_cell_grid_create(&def, &grid), BP_OK);
	ration_threads(2);
	cr_assert_eq(bp_cell_grid_assign(grid, w), BP_ERR_OUT_OF_MEMORY);
	cr_assert_eq(bp_cell_grid_entity_count(grid), 0, "a failed assign binned entities");
	bpi_thread_set_creator(NULL);
	cr_assert_eq(bp_cell_grid_assign(grid, w), BP_OK);
	cr_assert_eq(bp_cell_grid_entity_count(grid), N);
	bp_cell_grid_destroy(grid);
	bp_world_destroy(w);
	oracle_pairs_free(&s->pairs);
}
