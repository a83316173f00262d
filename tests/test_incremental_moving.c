// SPDX-License-Identifier: MIT
// The moving state of incremental worlds (docs/design.md "Incremental path"): worlds where every
// entity changes a little each step take it by the model alone, and stay exact through it; worlds
// where everything moves far give it up. Every step is checked against the oracle and, byte for
// byte, against a world that rebuilds in full.
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

enum { CAPACITY = 16000 };

/// A shadow of the entities in dense order, an incremental world and a plain one.
typedef struct moving_world {
	int dims;
	uint32_t n;
	oracle_box boxes[CAPACITY];
	bp_entity handles[CAPACITY], plain_handles[CAPACITY];
	bp_world *world, *plain;
	test_rng rng;
	uint32_t paths[BP_PATH_NEIGHBOURS + 1];
	uint32_t rebuilds; ///< neighbour-list steps that found every pair again
	uint64_t moving_tests; ///< the most candidate tests of one moving step
} moving_world;

static bp_world *world_of(int dims, bool incremental, float skin, int threads, uint32_t debug_flags)
{
	bp_world_def def = bp_world_def_default();
	def.dims = dims;
	def.debug_flags = debug_flags;
	def.thread_count = threads;
	def.incremental = incremental;
	def.skin = skin;
	def.canonical_pairs = true;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	return w;
}

static void add(moving_world *m, bool filters)
{
	oracle_box *b = &m->boxes[m->n];
	*b = (oracle_box){.category = 1, .mask = (uint32_t)-1};
	float extent = test_rng_float(&m->rng, 0.5f, 1.0f);
	for (int k = 0; k < m->dims; ++k) {
		b->min[k] = test_rng_float(&m->rng, 0.0f, 24.0f);
		b->max[k] = b->min[k] + extent;
	}
	if (filters) {
		b->category = test_rng_below(&m->rng, 4) == 0 ? 2u : 1u;
		b->is_static = test_rng_below(&m->rng, 5) == 0;
		b->is_sphere = test_rng_below(&m->rng, 5) == 0;
	}
	bp_entity_def e = oracle_entity_def(b);
	cr_assert_eq(bp_entity_create(m->world, &e, &m->handles[m->n]), BP_OK);
	cr_assert_eq(bp_entity_create(m->plain, &e, &m->plain_handles[m->n]), BP_OK);
	m->n++;
}

static void remove_at(moving_world *m, uint32_t d)
{
	cr_assert_eq(bp_entity_destroy(m->world, m->handles[d]), BP_OK);
	cr_assert_eq(bp_entity_destroy(m->plain, m->plain_handles[d]), BP_OK);
	uint32_t last = --m->n;
	m->boxes[d] = m->boxes[last];
	m->handles[d] = m->handles[last];
	m->plain_handles[d] = m->plain_handles[last];
}

/// Moves entity d by up to `step` on every axis.
static void nudge(moving_world *m, uint32_t d, float step)
{
	oracle_box *b = &m->boxes[d];
	for (int k = 0; k < m->dims; ++k) {
		float by = test_rng_float(&m->rng, -step, step);
		b->min[k] += by;
		b->max[k] += by;
	}
	cr_assert_eq(bp_entity_set_bounds(m->world, m->handles[d], b->min, b->max), BP_OK);
	cr_assert_eq(bp_entity_set_bounds(m->plain, m->plain_handles[d], b->min, b->max), BP_OK);
}

static void step_and_check(moving_world *m)
{
	bp_frame_stats stats = oracle_step_both(m->world, m->plain, m->boxes, m->n, m->dims);
	cr_assert(stats.path >= BP_PATH_FULL && stats.path <= BP_PATH_NEIGHBOURS);
	m->paths[stats.path]++;
	m->rebuilds += stats.path == BP_PATH_NEIGHBOURS && stats.searched_count == stats.entity_count;
	if (stats.path == BP_PATH_MOVING && stats.candidate_tests > m->moving_tests)
		m->moving_tests = stats.candidate_tests;
}

/// A run: `n` entities in `dims` moving up to `step` per step and axis for `steps`
/// steps (up to `calm_step` from step `calm_from` on, when set), with `churn` creates
/// and destroys per step; `filters`: categories, statics and spheres; `skin` and
/// `debug_flags`: the incremental world's; both worlds on `threads` threads.
typedef struct motion {
	int dims;
	uint32_t n;
	int steps;
	float step;
	uint32_t churn;
	bool filters;
	float skin;
	uint64_t seed;
	int threads;
	uint32_t debug_flags;
	int calm_from;
	float calm_step;
	uint32_t far_each; ///< entities moved up to far_step each step besides, the next ones in turn
	float far_step;
} motion;

static moving_world *run(const motion *r)
{
	moving_world *m = calloc(1, sizeof *m);
	cr_assert(m);
	int threads = r->threads ? r->threads : 1;
	*m = (moving_world){.dims = r->dims, .rng = {r->seed},
		.world = world_of(r->dims, true, r->skin, threads, r->debug_flags),
		.plain = world_of(r->dims, false, 0.0f, threads, 0)};
	for (uint32_t i = 0; i < r->n; ++i)
		add(m, r->filters);
	step_and_check(m);
	for (int s = 0; s < r->steps; ++s) {
		float step = r->calm_from && s >= r->calm_from ? r->calm_step : r->step;
		for (uint32_t d = 0; d < m->n; ++d)
			if (!m->boxes[d].is_static)
				nudge(m, d, step);
		for (uint32_t f = 0; f < r->far_each; ++f)
			nudge(m, (uint32_t)((s * (uint64_t)r->far_each + f) % m->n), r->far_step);
		for (uint32_t c = 0; c < r->churn; ++c) {
			remove_at(m, test_rng_below(&m->rng, m->n));
			add(m, r->filters);
		}
		step_and_check(m);
	}
	return m;
}

static void finish(moving_world *m)
{
	bp_world_destroy(m->world);
	bp_world_destroy(m->plain);
	free(m);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(incremental_moving, jitter_takes_the_moving_state_3d, .timeout = 120)
{
	moving_world *m = run(&(motion){.dims = 3, .n = 3000, .steps = 60, .step = 0.002f, .seed = 101});
	cr_assert_gt(m->paths[BP_PATH_MOVING], 40, "moving steps: %u of 60", m->paths[BP_PATH_MOVING]);
	finish(m);
}

Test(incremental_moving, jitter_with_filters_spheres_and_churn_2d, .timeout = 120)
{
	moving_world *m = run(
		&(motion){.dims = 2, .n = 3000, .steps = 60, .step = 0.002f, .churn = 8, .filters = true, .seed = 102});
	cr_assert_gt(m->paths[BP_PATH_MOVING], 40, "moving steps: %u of 60", m->paths[BP_PATH_MOVING]);
	finish(m);
}

Test(incremental_moving, far_motion_gives_it_up, .timeout = 120)
{
	moving_world *m = run(&(motion){.dims = 3, .n = 3000, .steps = 60, .step = 0.5f, .seed = 103});
	cr_assert_lt(m->paths[BP_PATH_MOVING], 10, "moving steps: %u of 60", m->paths[BP_PATH_MOVING]);
	finish(m);
}

/// Enough entities and kept pairs that a moving step's check (4,096 changes a chunk)
/// and re-test (16,384 kept pairs a chunk) run in several chunks, on three threads:
/// the pairs still come out in order.
Test(incremental_moving, many_chunks_on_threads, .timeout = 240)
{
	moving_world *m = run(&(motion){.dims = 3, .n = 12000, .steps = 26, .step = 0.002f, .churn = 8, .filters = true,
		.seed = 106, .threads = 3});
	cr_assert_gt(m->paths[BP_PATH_MOVING], 4, "moving steps: %u of 26", m->paths[BP_PATH_MOVING]);
	cr_assert_gt(m->moving_tests, 3 * 16384, "kept pairs re-tested: %llu", (unsigned long long)m->moving_tests);
	finish(m);
}

/// A skin of 0.2 holds a random walk of up to 0.002 per step for at least 50 steps
/// (0.1 on every axis), so the list is found again only a few times (the first).
Test(incremental_moving, a_neighbour_list_keeps_its_pairs_while_the_skin_holds, .timeout = 120)
{
	moving_world *m = run(
		&(motion){.dims = 3, .n = 3000, .steps = 60, .step = 0.002f, .filters = true, .skin = 0.2f, .seed = 104});
	cr_assert_eq(m->paths[BP_PATH_NEIGHBOURS], 61);
	cr_assert_leq(m->rebuilds, 3, "found again %u times", m->rebuilds);
	finish(m);
}

/// Creates and destroys, and motion beyond half the skin, find the list again every
/// step, the debug flag keeping it: exact throughout.
Test(incremental_moving, a_neighbour_list_through_churn_and_far_motion, .timeout = 120)
{
	moving_world *m = run(&(motion){.dims = 2, .n = 3000, .steps = 40, .step = 0.3f, .churn = 8, .filters = true,
		.skin = 0.2f, .seed = 105, .debug_flags = BP_DEBUG_ALWAYS_INCREMENTAL});
	cr_assert_eq(m->paths[BP_PATH_NEIGHBOURS], 41);
	cr_assert_eq(m->rebuilds, 41);
	finish(m);
}

/// The same motion without the flag: a list found again the step after it was found
/// never pays, so the world takes full steps, 16 before it finds a list again, then 32.
/// Steps: 0 finds a list, 1 gives it up (full), 2-16 full, 17 finds one, 18-40 full.
Test(incremental_moving, a_neighbour_list_found_every_step_gives_way_to_full_steps, .timeout = 120)
{
	moving_world *m = run(&(motion){
		.dims = 2, .n = 3000, .steps = 40, .step = 0.3f, .churn = 8, .filters = true, .skin = 0.2f, .seed = 105});
	cr_assert_eq(m->paths[BP_PATH_NEIGHBOURS], 2);
	cr_assert_eq(m->rebuilds, 2);
	cr_assert_eq(m->paths[BP_PATH_FULL], 39);
	finish(m);
}

/// Far motion, then calm: the list found at step 0 is given up at step 1, and the one
/// found after the wait, at step 17, holds to the end (step 64).
Test(incremental_moving, a_neighbour_list_comes_back_when_the_motion_calms, .timeout = 120)
{
	moving_world *m = run(&(motion){.dims = 3, .n = 3000, .steps = 64, .step = 0.3f, .filters = true, .skin = 0.2f,
		.seed = 107, .calm_from = 4, .calm_step = 0.002f});
	cr_assert_eq(m->paths[BP_PATH_NEIGHBOURS], 1 + 48, "neighbour steps: %u", m->paths[BP_PATH_NEIGHBOURS]);
	cr_assert_leq(m->rebuilds, 4, "found again %u times", m->rebuilds);
	finish(m);
}

/// A list that holds while 1% of the entities, others each step, leave their grown boxes:
/// their boxes pile up beside the columns of the searchers' sweep, which are laid out
/// again every few steps by merging them in, and after eight merges by planning the bands
/// anew. Exact throughout.
Test(incremental_moving, waves_of_searchers_merge_into_the_columns, .timeout = 120)
{
	moving_world *m = run(&(motion){.dims = 3, .n = 3000, .steps = 120, .step = 0.002f, .filters = true,
		.skin = 0.2f, .seed = 108, .far_each = 30, .far_step = 0.5f});
	cr_assert_eq(m->paths[BP_PATH_NEIGHBOURS], 121, "neighbour steps: %u", m->paths[BP_PATH_NEIGHBOURS]);
	cr_assert_leq(m->rebuilds, 3, "found again %u times", m->rebuilds);
	finish(m);
}
