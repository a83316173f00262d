// SPDX-License-Identifier: MIT
// `bp record --motion pile`: boxes dropped in columns onto a static ground slab between static
// walls. Each falls under gravity, lands on the ground or on the box below it in its column,
// jitters a little while it settles, then sleeps (no more moves). A periodic disturbance wakes
// the columns around a random one and drops the top box of that column again.
#include "cli_physics.h"

#include <math.h>
#include <stdlib.h>

enum {
	PILE_LEVELS = 6,          ///< boxes per column
	PILE_TILE_COLUMNS = 8,    ///< columns per ground tile, each way
	PILE_LEVEL_DELAY = 9,     ///< frames between the drops of one column's levels
	PILE_DISTURB_PERIOD = 90, ///< frames between disturbances
	PILE_COLUMNS_PER_DISTURBANCE = 128,
};
#define PILE_SPACING 1.5f    ///< between column centres: boxes are at most 1 m wide
#define PILE_JITTER 0.01f    ///< settling jitter, a fraction of the box's size
#define PILE_JITTER_DECAY 0.97f ///< per frame: the jitter fades over about a second
#define PILE_WALL 4.0f       ///< wall height

typedef enum pile_phase { PILE_WAITING, PILE_FALLING, PILE_SETTLING, PILE_ASLEEP } pile_phase;

typedef struct pile_box {
	float rest[3]; ///< centre once landed
	float half[3];
	float drop;    ///< height above rest it falls from
	float fall;    ///< height above rest now
	float speed;   ///< downward
	float amplitude[3];
	uint32_t timer; ///< frames until the drop (waiting) or the sleep (settling)
	pile_phase phase;
} pile_box;

typedef struct pile {
	cli_physics_def def;
	uint32_t statics, columns, row; ///< row: columns along x (3D: the grid's side)
	pile_box *boxes;                ///< box b: column b / PILE_LEVELS, level b % PILE_LEVELS
	cli_rng rng;
} pile;

static void column_centre(const pile *p, uint32_t column, float out[2])
{
	out[0] = (float)(column % p->row) * PILE_SPACING;
	out[1] = (float)(column / p->row) * PILE_SPACING;
}

static uint32_t rows(const pile *p) { return (p->columns + p->row - 1) / p->row; }

static uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

static uint32_t count_statics(const pile *p)
{
	const uint32_t tiles_x = ceil_div(p->row, PILE_TILE_COLUMNS);
	return p->def.dims == 2 ? tiles_x + 2 : tiles_x * ceil_div(rows(p), PILE_TILE_COLUMNS) + 4;
}

/// Stacks each column's levels on one another, sizes from the stream, and the drop schedule.
static void place_boxes(pile *p)
{
	const int up = p->def.dims - 1;
	for (uint32_t c = 0; c < p->columns; ++c) {
		const uint32_t phase = (uint32_t)cli_rng_range(&p->rng, 0, 30);
		const float drop = cli_rng_range(&p->rng, 1, 3);
		float xy[2], bottom = 0;
		column_centre(p, c, xy);
		for (uint32_t k = 0; k < PILE_LEVELS && c * PILE_LEVELS + k < p->def.n; ++k) {
			pile_box *b = &p->boxes[c * PILE_LEVELS + k];
			for (int a = 0; a < p->def.dims; ++a)
				b->half[a] = cli_rng_range(&p->rng, 0.25f, 0.5f);
			for (int a = 0; a < up; ++a)
				b->rest[a] = xy[a] + cli_rng_range(&p->rng, -0.05f, 0.05f);
			b->rest[up] = bottom + b->half[up];
			bottom += 2 * b->half[up];
			// One drop height per column: a level never catches up with the one below.
			b->drop = b->fall = drop;
			b->timer = 1 + phase + k * PILE_LEVEL_DELAY;
			b->phase = PILE_WAITING;
		}
	}
}

static void *pile_start(const cli_physics_def *def, uint32_t *statics)
{
	pile *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->def = *def;
	p->rng = cli_rng_make(def->seed, 1);
	p->columns = ceil_div(def->n, PILE_LEVELS);
	p->row = def->dims == 2 ? p->columns : (uint32_t)ceil(sqrt((double)p->columns));
	if (!(p->boxes = calloc(def->n, sizeof *p->boxes))) {
		free(p);
		return NULL;
	}
	place_boxes(p);
	*statics = p->statics = count_statics(p);
	return p;
}

static void pile_stop(void *state)
{
	pile *p = state;
	free(p->boxes);
	free(p);
}

static void box_centre(const pile *p, const pile_box *b, float out[3])
{
	for (int a = 0; a < 3; ++a)
		out[a] = b->rest[a];
	out[p->def.dims - 1] += b->fall;
}

/// The ground tiles (top at height 0) and the walls around the columns.
static void create_statics(const pile *p, cli_changes *out)
{
	const int up = p->def.dims - 1;
	const float edge = 0.5f * PILE_SPACING, tile = PILE_TILE_COLUMNS * PILE_SPACING;
	const float extent[2] = {(float)p->row * PILE_SPACING, (float)rows(p) * PILE_SPACING};
	const uint32_t tiles_x = ceil_div(p->row, PILE_TILE_COLUMNS);
	const uint32_t tiles_y = p->def.dims == 2 ? 1 : ceil_div(rows(p), PILE_TILE_COLUMNS);
	uint32_t id = 0;
	for (uint32_t ty = 0; ty < tiles_y; ++ty)
		for (uint32_t tx = 0; tx < tiles_x; ++tx) {
			float centre[3] = {((float)tx + 0.5f) * tile - edge, ((float)ty + 0.5f) * tile - edge, 0};
			float half[3] = {0.5f * tile, 0.5f * tile, 0};
			centre[up] = -0.5f;
			half[up] = 0.5f;
			cli_changes_create(out, id++, centre, half, BP_KIND_STATIC);
		}
	// A wall of 0.5 m on each side of each horizontal axis, as long as the floor.
	for (int a = 0; a < up; ++a)
		for (int side = 0; side < 2; ++side) {
			float centre[3], half[3];
			for (int b = 0; b < up; ++b) {
				centre[b] = 0.5f * extent[b] - edge;
				half[b] = 0.5f * extent[b];
			}
			centre[a] = side ? extent[a] - edge + 0.25f : -edge - 0.25f;
			half[a] = 0.25f;
			centre[up] = 0.5f * PILE_WALL;
			half[up] = 0.5f * PILE_WALL;
			cli_changes_create(out, id++, centre, half, BP_KIND_STATIC);
		}
}

/// Settling again (or longer) for `frames`, jittering by `fraction` of its size.
static void wake(const pile *p, pile_box *b, float fraction, uint32_t frames)
{
	if (b->phase != PILE_SETTLING && b->phase != PILE_ASLEEP)
		return;
	for (int a = 0; a < p->def.dims; ++a)
		b->amplitude[a] = fmaxf(b->amplitude[a], fraction * 2 * b->half[a]);
	if (b->phase == PILE_ASLEEP || b->timer < frames)
		b->timer = frames;
	b->phase = PILE_SETTLING;
}

/// A box that lands shakes the two below it.
static void land(pile *p, uint32_t index)
{
	pile_box *b = &p->boxes[index];
	b->fall = 0;
	b->speed = 0;
	b->phase = PILE_SETTLING;
	b->timer = (uint32_t)cli_rng_range(&p->rng, 60, 120);
	for (int a = 0; a < p->def.dims; ++a)
		b->amplitude[a] = PILE_JITTER * 2 * b->half[a];
	for (uint32_t k = 1; k <= 2 && index % PILE_LEVELS >= k; ++k)
		wake(p, &p->boxes[index - k], 0.5f * PILE_JITTER, 60);
}

/// Wakes the columns around a random one and drops its top box from its drop height again.
static void disturb(pile *p)
{
	const uint32_t centre = (uint32_t)cli_rng_range(&p->rng, 0, (float)p->columns) % p->columns;
	const int64_t cx = centre % p->row, cy = centre / p->row;
	for (int64_t dy = -1; dy <= 1; ++dy)
		for (int64_t dx = -1; dx <= 1; ++dx) {
			const int64_t x = cx + dx, y = cy + dy;
			if (x < 0 || x >= p->row || y < 0 || (uint64_t)(y * p->row + x) >= p->columns)
				continue;
			const uint32_t column = (uint32_t)(y * p->row + x);
			for (uint32_t k = 0; k < PILE_LEVELS && column * PILE_LEVELS + k < p->def.n; ++k)
				wake(p, &p->boxes[column * PILE_LEVELS + k], PILE_JITTER,
					(uint32_t)cli_rng_range(&p->rng, 45, 90));
		}
	uint32_t top = centre * PILE_LEVELS + PILE_LEVELS - 1;
	if (top >= p->def.n)
		top = p->def.n - 1;
	pile_box *b = &p->boxes[top];
	if (b->phase == PILE_SETTLING) {
		b->phase = PILE_FALLING;
		b->fall = b->drop;
		b->speed = 0;
	}
}

static void pile_step(void *state, uint32_t frame, cli_changes *out)
{
	pile *p = state;
	const uint32_t statics = p->statics;
	float centre[3];
	if (frame == 0) {
		create_statics(p, out);
		for (uint32_t i = 0; i < p->def.n; ++i) {
			box_centre(p, &p->boxes[i], centre);
			cli_changes_create(out, statics + i, centre, p->boxes[i].half, BP_KIND_DYNAMIC);
		}
		return;
	}
	if (frame % PILE_DISTURB_PERIOD == 0)
		for (uint32_t d = 0; d < 1 + p->columns / PILE_COLUMNS_PER_DISTURBANCE; ++d)
			disturb(p);
	for (uint32_t i = 0; i < p->def.n; ++i) {
		pile_box *b = &p->boxes[i];
		switch (b->phase) {
		case PILE_WAITING:
			if (--b->timer == 0)
				b->phase = PILE_FALLING;
			continue;
		case PILE_ASLEEP:
			continue;
		case PILE_FALLING:
			b->speed += CLI_PHYSICS_GRAVITY * CLI_PHYSICS_DT;
			b->fall -= b->speed * CLI_PHYSICS_DT;
			if (b->fall <= 0)
				land(p, i);
			box_centre(p, b, centre);
			break;
		case PILE_SETTLING:
			box_centre(p, b, centre);
			for (int a = 0; a < p->def.dims; ++a) {
				centre[a] += b->amplitude[a] * cli_rng_range(&p->rng, -1, 1);
				b->amplitude[a] *= PILE_JITTER_DECAY;
			}
			if (--b->timer == 0)
				b->phase = PILE_ASLEEP;
			break;
		}
		cli_changes_move(out, statics + i, centre, b->half);
	}
}

const cli_physics_model cli_pile_model = {
	.name = "pile", .churns = false, .start = pile_start, .step = pile_step, .stop = pile_stop};
