// SPDX-License-Identifier: MIT
// `bp record --motion brownian`: 0.5-1 m boxes drifting through a closed region of static walls,
// filled to a tenth, each at 0.5-2 m/s on every axis. Each frame a box draws a new velocity with
// probability 1/20, and a box that reaches a wall bounces off it. Boxes pass through one another:
// every box moves every frame.
#include "cli_physics.h"

#include <math.h>
#include <stdlib.h>

#define BROWNIAN_FILL 0.1f      ///< of the region's volume taken by the boxes
#define BROWNIAN_MIN_SPEED 0.5f ///< per axis, so that every box moves every frame
#define BROWNIAN_MAX_SPEED 2.0f
#define BROWNIAN_REDRAW 0.05f   ///< chance per frame of a new velocity

typedef struct brownian_box {
	float centre[3], half[3], velocity[3];
} brownian_box;

typedef struct brownian {
	cli_physics_def def;
	uint32_t statics;
	float side; ///< of the region [0, side] on every axis
	brownian_box *boxes;
	cli_rng rng;
} brownian;

static void draw_velocity(brownian *b, brownian_box *box)
{
	for (int a = 0; a < b->def.dims; ++a) {
		const float speed = cli_rng_range(&b->rng, BROWNIAN_MIN_SPEED, BROWNIAN_MAX_SPEED);
		box->velocity[a] = cli_rng_chance(&b->rng, 0.5f) ? speed : -speed;
	}
}

/// The side of the region the boxes (0.75 m across on average) fill to BROWNIAN_FILL.
static float region_side(uint32_t n, int dims)
{
	return ceilf((float)pow(n * pow(0.75, dims) / BROWNIAN_FILL, 1.0 / dims));
}

static void *brownian_start(const cli_physics_def *def, uint32_t *statics)
{
	brownian *b = calloc(1, sizeof *b);
	if (!b || !(b->boxes = malloc((size_t)(def->n ? def->n : 1) * sizeof *b->boxes))) {
		free(b);
		return NULL;
	}
	b->def = *def;
	b->rng = cli_rng_make(def->seed, 4);
	b->side = region_side(def->n, def->dims);
	for (uint32_t i = 0; i < def->n; ++i) {
		brownian_box *box = &b->boxes[i];
		for (int a = 0; a < def->dims; ++a) {
			box->half[a] = cli_rng_range(&b->rng, 0.25f, 0.5f);
			box->centre[a] = cli_rng_range(&b->rng, box->half[a], b->side - box->half[a]);
		}
		draw_velocity(b, box);
	}
	*statics = b->statics = 2 * (uint32_t)def->dims;
	return b;
}

static void brownian_stop(void *state)
{
	brownian *b = state;
	free(b->boxes);
	free(b);
}

/// One frame of flight on each axis, reflected off the walls.
static void fly(const brownian *b, brownian_box *box)
{
	for (int a = 0; a < b->def.dims; ++a) {
		const float lo = box->half[a], hi = b->side - box->half[a];
		float x = box->centre[a] + box->velocity[a] * CLI_PHYSICS_DT;
		if (x < lo || x > hi) {
			x = x < lo ? 2 * lo - x : 2 * hi - x;
			box->velocity[a] = -box->velocity[a];
		}
		box->centre[a] = fminf(fmaxf(x, lo), hi);
	}
}

static void brownian_step(void *state, uint32_t frame, cli_changes *out)
{
	brownian *b = state;
	if (frame == 0) {
		const float lo[3] = {0, 0, 0}, hi[3] = {b->side, b->side, b->side};
		uint32_t id = 0;
		cli_region_walls(out, lo, hi, &id);
		for (uint32_t i = 0; i < b->def.n; ++i)
			cli_changes_create(out, b->statics + i, b->boxes[i].centre, b->boxes[i].half, BP_KIND_DYNAMIC);
		return;
	}
	for (uint32_t i = 0; i < b->def.n; ++i) {
		brownian_box *box = &b->boxes[i];
		if (cli_rng_chance(&b->rng, BROWNIAN_REDRAW))
			draw_velocity(b, box);
		fly(b, box);
		cli_changes_move(out, b->statics + i, box->centre, box->half);
	}
}

const cli_physics_model cli_brownian_model = {.name = "brownian",
	.churns = false,
	.start = brownian_start,
	.step = brownian_step,
	.stop = brownian_stop};
