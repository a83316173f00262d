// SPDX-License-Identifier: MIT
// The moving state of incremental worlds (docs/design.md "Incremental path"): worlds where every
// entity changes a little each step take it by the model alone, and stay exact through it; worlds
// where everything moves far give it up. Every step is checked against the oracle and, byte for
// byte, against a world that rebuilds in full.
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

enum { CAPACITY = 4000 };

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
} moving_world;

static bp_world *world_of(int dims, bool incremental, float skin)
{
	bp_world_def def = bp_world_def_default();
	def.dims = dims;
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
}

/// `step`: how far entities move per step and axis; `churn`: creates and destroys per
/// step; `filters`: categories, statics and spheres; `skin`: the incremental world's.
static moving_world *run(int dims, uint32_t n, int steps, float step, uint32_t churn, bool filters, float skin,
	uint64_t seed)
{
	moving_world *m = calloc(1, sizeof *m);
	cr_assert(m);
	*m = (moving_world){.dims = dims, .rng = {seed}, .world = world_of(dims, true, skin),
		.plain = world_of(dims, false, 0.0f)};
	for (uint32_t i = 0; i < n; ++i)
		add(m, filters);
	step_and_check(m);
	for (int s = 0; s < steps; ++s) {
		for (uint32_t d = 0; d < m->n; ++d)
			if (!m->boxes[d].is_static)
				nudge(m, d, step);
		for (uint32_t c = 0; c < churn; ++c) {
			remove_at(m, test_rng_below(&m->rng, m->n));
			add(m, filters);
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
	moving_world *m = run(3, 3000, 60, 0.002f, 0, false, 0.0f, 101);
	cr_assert_gt(m->paths[BP_PATH_MOVING], 40, "moving steps: %u of 60", m->paths[BP_PATH_MOVING]);
	finish(m);
}

Test(incremental_moving, jitter_with_filters_spheres_and_churn_2d, .timeout = 120)
{
	moving_world *m = run(2, 3000, 60, 0.002f, 8, true, 0.0f, 102);
	cr_assert_gt(m->paths[BP_PATH_MOVING], 40, "moving steps: %u of 60", m->paths[BP_PATH_MOVING]);
	finish(m);
}

Test(incremental_moving, far_motion_gives_it_up, .timeout = 120)
{
	moving_world *m = run(3, 3000, 60, 0.5f, 0, false, 0.0f, 103);
	cr_assert_lt(m->paths[BP_PATH_MOVING], 10, "moving steps: %u of 60", m->paths[BP_PATH_MOVING]);
	finish(m);
}

/// A skin of 0.2 holds a random walk of up to 0.002 per step for at least 50 steps
/// (0.1 on every axis), so the list is found again only a few times (the first).
Test(incremental_moving, a_neighbour_list_keeps_its_pairs_while_the_skin_holds, .timeout = 120)
{
	moving_world *m = run(3, 3000, 60, 0.002f, 0, true, 0.2f, 104);
	cr_assert_eq(m->paths[BP_PATH_NEIGHBOURS], 61);
	cr_assert_leq(m->rebuilds, 3, "found again %u times", m->rebuilds);
	finish(m);
}

/// Creates and destroys, and motion beyond half the skin, find the list again: exact
/// throughout.
Test(incremental_moving, a_neighbour_list_through_churn_and_far_motion, .timeout = 120)
{
	moving_world *m = run(2, 3000, 40, 0.3f, 8, true, 0.2f, 105);
	cr_assert_eq(m->paths[BP_PATH_NEIGHBOURS], 41);
	cr_assert_eq(m->rebuilds, 41);
	finish(m);
}
