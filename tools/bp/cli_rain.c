// SPDX-License-Identifier: MIT
// `bp record --motion rain`: bodies (ragdoll-sized boxes) raining onto static terrain, a
// heightfield of static tiles. Each falls from 8-18 m above the terrain, lands at 12-20 m/s,
// bounces a little, rests, and is then destroyed and created again at the top under a new id.
// A third of them tumble while in the air: their box is the box of a rotating one.
#include "cli_physics.h"

#include <math.h>
#include <stdlib.h>

#define RAIN_TILE 4.0f           ///< terrain tile edge
#define RAIN_TERRAIN_HEIGHT 4.0f ///< tallest tile
#define RAIN_BOUNCE 0.3f         ///< speed kept at a bounce
#define RAIN_REST_SPEED 1.5f     ///< slower than this at a bounce: it stays down

typedef enum rain_phase { RAIN_FALLING, RAIN_RESTING } rain_phase;

typedef struct rain_body {
	uint32_t id;
	float centre[3], half[3]; ///< half: of the unrotated body
	float velocity[3];
	float angle, spin;        ///< rotation in the plane of x and up
	uint32_t timer;           ///< resting frames left
	rain_phase phase;
} rain_body;

typedef struct rain {
	cli_physics_def def;
	uint32_t statics, tiles[2], next_id;
	float *height; ///< top of each tile, row by row
	rain_body *bodies;
	cli_rng rng;
} rain;

static uint32_t tile_of(const rain *r, float x, int axis)
{
	const float t = floorf(x / RAIN_TILE);
	return t <= 0 ? 0 : t >= (float)r->tiles[axis] ? r->tiles[axis] - 1 : (uint32_t)t;
}

static float terrain_at(const rain *r, const float centre[3])
{
	const uint32_t ty = r->def.dims == 2 ? 0 : tile_of(r, centre[1], 1);
	return r->height[(size_t)ty * r->tiles[0] + tile_of(r, centre[0], 0)];
}

/// Rolling hills: a sum of two waves of random phase, plus a little noise per tile.
static void make_terrain(rain *r)
{
	const float p0 = cli_rng_range(&r->rng, 0, 6.3f), p1 = cli_rng_range(&r->rng, 0, 6.3f);
	for (uint32_t ty = 0; ty < r->tiles[1]; ++ty)
		for (uint32_t tx = 0; tx < r->tiles[0]; ++tx) {
			const float wave = sinf(0.11f * (float)tx + p0) + sinf(0.07f * (float)ty + 0.05f * (float)tx + p1);
			const float h = 0.25f * RAIN_TERRAIN_HEIGHT * (wave + 2) + cli_rng_range(&r->rng, -0.3f, 0.3f);
			r->height[(size_t)ty * r->tiles[0] + tx] = fminf(fmaxf(h, 0), RAIN_TERRAIN_HEIGHT);
		}
}

/// The box of the body rotated by its angle in the plane of axes 0 and up.
static void rotated_half(const rain *r, const rain_body *b, float out[3])
{
	const int up = r->def.dims - 1;
	const float c = fabsf(cosf(b->angle)), s = fabsf(sinf(b->angle));
	for (int a = 0; a < 3; ++a)
		out[a] = b->half[a];
	out[0] = c * b->half[0] + s * b->half[up];
	out[up] = s * b->half[0] + c * b->half[up];
}

/// A new body over a random spot of the terrain, `above` metres higher than the terrain.
static void spawn(rain *r, rain_body *b, float above)
{
	const int up = r->def.dims - 1;
	b->id = r->next_id++;
	for (int a = 0; a < up; ++a) {
		b->centre[a] = cli_rng_range(&r->rng, 1, (float)r->tiles[a] * RAIN_TILE - 1);
		b->velocity[a] = cli_rng_range(&r->rng, -1, 1);
	}
	b->half[0] = cli_rng_range(&r->rng, 0.2f, 0.4f);
	b->half[1] = cli_rng_range(&r->rng, 0.2f, 0.4f);
	b->half[2] = cli_rng_range(&r->rng, 0.2f, 0.4f);
	b->half[up] = cli_rng_range(&r->rng, 0.4f, 0.9f);
	b->centre[up] = terrain_at(r, b->centre) + above + b->half[up];
	b->velocity[up] = -cli_rng_range(&r->rng, 2, 6);
	b->angle = 0;
	b->spin = cli_rng_chance(&r->rng, 1.0f / 3) ? cli_rng_range(&r->rng, -6, 6) : 0;
	b->phase = RAIN_FALLING;
}

static void rest(rain_body *b, uint32_t frames)
{
	b->phase = RAIN_RESTING;
	b->timer = frames;
}

static void *rain_start(const cli_physics_def *def, uint32_t *statics)
{
	rain *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->def = *def;
	r->rng = cli_rng_make(def->seed, 2);
	// About 8 m^2 of terrain per body in 3D, 3 m of it in 2D.
	if (def->dims == 2) {
		r->tiles[0] = (uint32_t)ceil(3.0 * def->n / RAIN_TILE);
		r->tiles[1] = 1;
	} else {
		r->tiles[0] = r->tiles[1] = (uint32_t)ceil(sqrt(8.0 * def->n) / RAIN_TILE);
	}
	*statics = r->statics = r->tiles[0] * r->tiles[1];
	r->next_id = r->statics;
	r->height = malloc((size_t)r->statics * sizeof *r->height);
	r->bodies = malloc((size_t)def->n * sizeof *r->bodies);
	if (!r->height || !r->bodies) {
		free(r->height);
		free(r->bodies);
		free(r);
		return NULL;
	}
	make_terrain(r);
	// Frame 0 as if it had been raining for a while: some bodies resting, the others at any height.
	for (uint32_t i = 0; i < def->n; ++i) {
		rain_body *b = &r->bodies[i];
		if (cli_rng_chance(&r->rng, 0.4f)) {
			spawn(r, b, 0);
			b->spin = 0;
			rest(b, (uint32_t)cli_rng_range(&r->rng, 1, 120));
		} else {
			spawn(r, b, cli_rng_range(&r->rng, 0.5f, 18));
		}
	}
	return r;
}

static void rain_stop(void *state)
{
	rain *r = state;
	free(r->height);
	free(r->bodies);
	free(r);
}

static void create_terrain(const rain *r, cli_changes *out)
{
	const int up = r->def.dims - 1;
	for (uint32_t ty = 0; ty < r->tiles[1]; ++ty)
		for (uint32_t tx = 0; tx < r->tiles[0]; ++tx) {
			const float top = r->height[(size_t)ty * r->tiles[0] + tx];
			float centre[3] = {((float)tx + 0.5f) * RAIN_TILE, ((float)ty + 0.5f) * RAIN_TILE, 0};
			float half[3] = {0.5f * RAIN_TILE, 0.5f * RAIN_TILE, 0};
			centre[up] = 0.5f * (top - 1); // down to 1 m below height 0
			half[up] = 0.5f * (top + 1);
			cli_changes_create(out, ty * r->tiles[0] + tx, centre, half, BP_KIND_STATIC);
		}
}

/// One step of flight: gravity, drift (kept over the terrain), spin, and the bounce.
static void fly(rain *r, rain_body *b)
{
	const int up = r->def.dims - 1;
	for (int a = 0; a < up; ++a) {
		const float x = b->centre[a] + b->velocity[a] * CLI_PHYSICS_DT, hi = (float)r->tiles[a] * RAIN_TILE - 1;
		if (x < 1 || x > hi)
			b->velocity[a] = -b->velocity[a];
		b->centre[a] = fminf(fmaxf(x, 1), hi);
	}
	b->velocity[up] -= CLI_PHYSICS_GRAVITY * CLI_PHYSICS_DT;
	b->centre[up] += b->velocity[up] * CLI_PHYSICS_DT;
	b->angle += b->spin * CLI_PHYSICS_DT;
	float half[3];
	rotated_half(r, b, half);
	const float ground = terrain_at(r, b->centre) + half[up];
	if (b->centre[up] > ground || b->velocity[up] > 0)
		return;
	b->centre[up] = ground;
	b->velocity[up] = -RAIN_BOUNCE * b->velocity[up];
	b->spin *= 0.5f;
	for (int a = 0; a < up; ++a)
		b->velocity[a] *= 0.5f;
	if (b->velocity[up] < RAIN_REST_SPEED)
		rest(b, (uint32_t)cli_rng_range(&r->rng, 60, 180));
}

static void rain_step(void *state, uint32_t frame, cli_changes *out)
{
	rain *r = state;
	float half[3];
	if (frame == 0) {
		create_terrain(r, out);
		for (uint32_t i = 0; i < r->def.n; ++i) {
			rotated_half(r, &r->bodies[i], half);
			cli_changes_create(out, r->bodies[i].id, r->bodies[i].centre, half, BP_KIND_DYNAMIC);
		}
		return;
	}
	// Destroys first: a trace frame lists them before its creates.
	for (uint32_t i = 0; i < r->def.n; ++i) {
		rain_body *b = &r->bodies[i];
		if (b->phase == RAIN_RESTING && --b->timer == 0) {
			cli_changes_destroy(out, b->id);
			spawn(r, b, cli_rng_range(&r->rng, 8, 18));
			rotated_half(r, b, half);
			cli_changes_create(out, b->id, b->centre, half, BP_KIND_DYNAMIC);
		} else if (b->phase == RAIN_FALLING) {
			fly(r, b);
			rotated_half(r, b, half);
			cli_changes_move(out, b->id, b->centre, half);
		}
	}
}

const cli_physics_model cli_rain_model = {
	.name = "rain", .churns = true, .start = rain_start, .step = rain_step, .stop = rain_stop};
