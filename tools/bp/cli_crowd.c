// SPDX-License-Identifier: MIT
// `bp record --motion crowd`: people (0.5 m boxes) walking the streets of a grid of static
// buildings. Each picks a goal two street legs away, walks there at its own speed (most at
// 1.2-1.6 m/s, a few run) with a small sideways wobble, stands still at its goal for a while
// (no moves), then picks another. In 3D they are 1.8 m tall on the ground; 2D is the plan.
#include "cli_physics.h"

#include <math.h>
#include <stdlib.h>

#define CROWD_BLOCK 30.0f   ///< street spacing
#define CROWD_STREET 4.0f   ///< half width of a street
#define CROWD_LANE 3.0f     ///< walkers keep within this of the street's middle
#define CROWD_WOBBLE 0.15f  ///< most sideways speed of the steering noise
#define CROWD_RUNNERS 0.05f ///< fraction of runners
#define CROWD_HEIGHT 1.8f
#define CROWD_REACHED 0.2f  ///< a waypoint this close is reached

typedef struct crowd_agent {
	float position[2], half;
	float waypoint[2][2];
	float speed, wobble;
	uint32_t timer; ///< idle frames left; 0 while walking
	uint8_t leg;    ///< the waypoint walked to
	uint8_t axis;   ///< the axis of the street it stands on
} crowd_agent;

typedef struct crowd {
	cli_physics_def def;
	uint32_t blocks[2];
	crowd_agent *agents;
	cli_rng rng;
} crowd;

static float clampf(float x, float lo, float hi) { return fminf(fmaxf(x, lo), hi); }

/// Along its street to a crossing up to a block away, then up to 20 m along the cross street.
static void choose_goal(crowd *c, crowd_agent *g)
{
	const int a = g->axis, b = 1 - a;
	const float crossings = (float)c->blocks[a];
	const float k = clampf(roundf(g->position[a] / CROWD_BLOCK) + (float)(int)cli_rng_range(&c->rng, -1, 2), 0,
		crossings);
	g->waypoint[0][a] = k * CROWD_BLOCK + cli_rng_range(&c->rng, -CROWD_LANE, CROWD_LANE);
	g->waypoint[0][b] = g->position[b];
	g->waypoint[1][a] = g->waypoint[0][a];
	g->waypoint[1][b] = clampf(g->position[b] + cli_rng_range(&c->rng, -20, 20), 0,
		(float)c->blocks[b] * CROWD_BLOCK);
	g->leg = 0;
	g->timer = 0;
	g->axis = (uint8_t)b;
}

/// Frame 0 as if they had been walking for a while: somewhere along the way to a new goal.
static void start_midway(crowd *c, crowd_agent *g)
{
	choose_goal(c, g);
	const float u = cli_rng_range(&c->rng, 0, 1);
	g->leg = cli_rng_chance(&c->rng, 0.5f);
	const float *from = g->leg ? g->waypoint[0] : g->position, *to = g->waypoint[g->leg];
	for (int a = 0; a < 2; ++a)
		g->position[a] = from[a] + u * (to[a] - from[a]);
}

static void idle(crowd *c, crowd_agent *g, float lo, float hi)
{
	g->timer = (uint32_t)cli_rng_range(&c->rng, lo, hi);
}

static void *crowd_start(const cli_physics_def *def, uint32_t *statics)
{
	crowd *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->def = *def;
	c->rng = cli_rng_make(def->seed, 3);
	// About ten people a block: one in 6 m of street.
	const uint32_t side = (uint32_t)ceil(sqrt(def->n / 10.0));
	c->blocks[0] = c->blocks[1] = side < 2 ? 2 : side;
	*statics = c->blocks[0] * c->blocks[1];
	if (!(c->agents = malloc((size_t)def->n * sizeof *c->agents))) {
		free(c);
		return NULL;
	}
	for (uint32_t i = 0; i < def->n; ++i) {
		crowd_agent *g = &c->agents[i];
		g->axis = cli_rng_chance(&c->rng, 0.5f);
		const int a = g->axis, b = 1 - a;
		g->position[a] = cli_rng_range(&c->rng, 0, (float)c->blocks[a] * CROWD_BLOCK);
		g->position[b] = (float)(uint32_t)cli_rng_range(&c->rng, 0, (float)c->blocks[b] + 1) * CROWD_BLOCK +
				 cli_rng_range(&c->rng, -CROWD_LANE, CROWD_LANE);
		g->half = cli_rng_range(&c->rng, 0.2f, 0.3f);
		g->speed = cli_rng_chance(&c->rng, CROWD_RUNNERS) ? cli_rng_range(&c->rng, 3, 4)
								  : cli_rng_range(&c->rng, 1.2f, 1.6f);
		g->wobble = 0;
		if (cli_rng_chance(&c->rng, 0.3f))
			idle(c, g, 1, 600);
		else
			start_midway(c, g);
	}
	return c;
}

static void crowd_stop(void *state)
{
	crowd *c = state;
	free(c->agents);
	free(c);
}

static void agent_box(const crowd *c, const crowd_agent *g, float centre[3], float half[3])
{
	centre[0] = g->position[0];
	centre[1] = g->position[1];
	centre[2] = 0.5f * CROWD_HEIGHT;
	half[0] = half[1] = g->half;
	half[2] = c->def.dims == 3 ? 0.5f * CROWD_HEIGHT : 0;
}

/// One building a block, set back from the streets by up to 2 m, 6-40 m tall.
static void create_buildings(crowd *c, cli_changes *out)
{
	for (uint32_t by = 0; by < c->blocks[1]; ++by)
		for (uint32_t bx = 0; bx < c->blocks[0]; ++bx) {
			float lo[2], hi[2], centre[3], half[3];
			const uint32_t corner[2] = {bx, by};
			for (int a = 0; a < 2; ++a) {
				lo[a] = (float)corner[a] * CROWD_BLOCK + CROWD_STREET + cli_rng_range(&c->rng, 0.5f, 2);
				hi[a] = (float)(corner[a] + 1) * CROWD_BLOCK - CROWD_STREET - cli_rng_range(&c->rng, 0.5f, 2);
				centre[a] = 0.5f * (lo[a] + hi[a]);
				half[a] = 0.5f * (hi[a] - lo[a]);
			}
			half[2] = 0.5f * cli_rng_range(&c->rng, 6, 40);
			centre[2] = half[2];
			cli_changes_create(out, by * c->blocks[0] + bx, centre, half, BP_KIND_STATIC);
		}
}

/// One step toward the waypoint with the sideways wobble; at the last one it stops for 2-10 s.
/// False when it did not move.
static bool walk(crowd *c, crowd_agent *g)
{
	const float *target = g->waypoint[g->leg];
	const float dx = target[0] - g->position[0], dy = target[1] - g->position[1];
	const float distance = sqrtf(dx * dx + dy * dy), step = g->speed * CLI_PHYSICS_DT;
	if (distance <= fmaxf(step, CROWD_REACHED)) {
		if (distance <= step) {
			g->position[0] = target[0];
			g->position[1] = target[1];
		}
		if (g->leg++ == 1)
			idle(c, g, 120, 600);
		return distance > 0 && distance <= step;
	}
	g->wobble = clampf(0.9f * g->wobble + cli_rng_range(&c->rng, -0.03f, 0.03f), -CROWD_WOBBLE, CROWD_WOBBLE);
	const float ux = dx / distance, uy = dy / distance, side = g->wobble * CLI_PHYSICS_DT;
	g->position[0] += ux * step - uy * side;
	g->position[1] += uy * step + ux * side;
	return true;
}

static void crowd_step(void *state, uint32_t frame, cli_changes *out)
{
	crowd *c = state;
	const uint32_t statics = c->blocks[0] * c->blocks[1];
	float centre[3], half[3];
	if (frame == 0)
		create_buildings(c, out);
	for (uint32_t i = 0; i < c->def.n; ++i) {
		crowd_agent *g = &c->agents[i];
		if (frame > 0) {
			if (g->timer > 0) {
				if (--g->timer == 0)
					choose_goal(c, g);
				continue;
			}
			if (!walk(c, g))
				continue;
		}
		agent_box(c, g, centre, half);
		if (frame == 0)
			cli_changes_create(out, statics + i, centre, half, BP_KIND_DYNAMIC);
		else
			cli_changes_move(out, statics + i, centre, half);
	}
}

const cli_physics_model cli_crowd_model = {
	.name = "crowd", .churns = false, .start = crowd_start, .step = crowd_step, .stop = crowd_stop};
