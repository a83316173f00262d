// SPDX-License-Identifier: MIT
// `bp record --motion freefall|gravity`: 0.5-1 m boxes in a closed region of static walls,
// falling under gravity and stacking. freefall drops them from up to 6.5 m onto the floor of a
// flat region under 1 g; gravity fills a cube-like region to a tenth and pulls at 2 g along
// the axis nearest a direction that turns from down toward +x and over, a quarter turn a second.
//
// Contacts are a kinematic sweep along the axis gravity pulls along: the boxes are taken in
// order of their leading face (the face toward the wall gravity pulls to), and each one that
// has passed the wall or the trailing face of a box already taken that shares a cell of the
// plane across the axis is put back against it and loses its speed toward it. After the sweep
// no two boxes overlap by more than 2 * FALL_SLACK on every axis, and a box at rest gives the
// same bounds every frame, so it is not moved.
#include "cli_physics.h"

#include <math.h>
#include <stdlib.h>

#define FALL_SLACK 0.0625f   ///< boxes overlapping this little or less across a sweep's axis pass by
#define FALL_CELL (2 * FALL_SLACK) ///< cells of a sweep's plane: no wider, so that touching boxes share none
#define FALL_MAX_SPEED 12.0f ///< per axis: a frame's step (0.2 m) stays under the smallest half box
#define FALLFREE_AIR 6.0f    ///< freefall: bottoms start 0.5 m to 6.5 m above the floor
#define FALLFREE_FILL 0.25f  ///< freefall: of the air layer taken by the boxes
#define TURNING_FILL 0.1f    ///< gravity: of the cube taken by the boxes
#define TURNING_G (2 * CLI_PHYSICS_GRAVITY)
#define TURNING_START 0.5235988f ///< 30 degrees off down, toward +x
#define TURNING_RATE 1.5707963f  ///< radians a second, in the plane of x and up

typedef struct fall_box {
	float centre[3], half[3], velocity[3];
	float shown[3]; ///< the centre last written to the trace
} fall_box;

/// A box's place in a sweep: its leading face along the swept axis, then its index.
typedef struct fall_key {
	float lead;
	uint32_t index;
} fall_key;

typedef struct fall {
	cli_physics_def def;
	bool turning;
	uint32_t statics;
	float lo[3], hi[3]; ///< the region inside the walls
	fall_box *boxes;
	fall_key *keys;
	float *height;      ///< per cell of the plane across the swept axis: the highest trailing face
	cli_rng rng;
} fall;

static uint32_t cells_along(const fall *f, int axis) { return (uint32_t)ceilf((f->hi[axis] - f->lo[axis]) / FALL_CELL); }

/// The cells [first, last] of `axis` that the box's extent, less FALL_SLACK each side, covers:
/// boxes that overlap by more than twice the slack on `axis` share one.
static void cell_span(const fall *f, const fall_box *box, int axis, uint32_t *first, uint32_t *last)
{
	const float half = box->half[axis] - FALL_SLACK;
	const float from = (box->centre[axis] - half - f->lo[axis]) / FALL_CELL;
	const float to = ceilf((box->centre[axis] + half - f->lo[axis]) / FALL_CELL) - 1;
	const float top = (float)(cells_along(f, axis) - 1);
	*first = (uint32_t)fminf(fmaxf(floorf(from), 0), top);
	*last = (uint32_t)fminf(fmaxf(to, (float)*first), top);
}

static int by_lead(const void *x, const void *y)
{
	const fall_key *a = x, *b = y;
	if (a->lead != b->lead)
		return a->lead < b->lead ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/// Puts each box against the wall or the boxes before it along `axis`, gravity pulling toward
/// the low wall when `down`, else toward the high one. Coordinates are flipped for the high
/// wall so that the sweep always runs from low to high.
static void sweep(fall *f, int axis, bool down)
{
	const float flip = down ? 1.0f : -1.0f, wall = down ? f->lo[axis] : -f->hi[axis];
	const float far = down ? f->hi[axis] : -f->lo[axis];
	const int across[2] = {axis == 0 ? 1 : 0, axis == 2 ? 1 : 2};
	const uint32_t rows = f->def.dims == 3 ? cells_along(f, across[1]) : 1, row = cells_along(f, across[0]);
	for (size_t c = 0; c < (size_t)rows * row; ++c)
		f->height[c] = wall;
	for (uint32_t i = 0; i < f->def.n; ++i)
		f->keys[i] = (fall_key){flip * f->boxes[i].centre[axis] - f->boxes[i].half[axis], i};
	qsort(f->keys, f->def.n, sizeof *f->keys, by_lead);
	for (uint32_t k = 0; k < f->def.n; ++k) {
		fall_box *box = &f->boxes[f->keys[k].index];
		uint32_t x0, x1, y0 = 0, y1 = 0;
		cell_span(f, box, across[0], &x0, &x1);
		if (f->def.dims == 3)
			cell_span(f, box, across[1], &y0, &y1);
		float support = wall;
		for (uint32_t y = y0; y <= y1; ++y)
			for (uint32_t x = x0; x <= x1; ++x)
				support = fmaxf(support, f->height[(size_t)y * row + x]);
		float u = flip * box->centre[axis];
		if (u - box->half[axis] < support) {
			// A full row stops at the far wall: there the boxes may overlap more.
			u = fminf(support + box->half[axis], far - box->half[axis]);
			box->centre[axis] = flip * u;
			if (flip * box->velocity[axis] < 0)
				box->velocity[axis] = 0;
		}
		for (uint32_t y = y0; y <= y1; ++y)
			for (uint32_t x = x0; x <= x1; ++x)
				f->height[(size_t)y * row + x] = u + box->half[axis];
	}
}

/// The axis gravity pulls along at frame `frame` and whether toward its low wall. freefall: down.
/// gravity: the axis nearest a direction that starts TURNING_START off down and turns toward
/// +x (and on over the top) at TURNING_RATE; a pull along one axis at a time keeps the stacks
/// a single sweep makes.
static void gravity_at(const fall *f, uint32_t frame, int *axis, bool *down)
{
	const int up = f->def.dims - 1;
	*axis = up;
	*down = true;
	if (!f->turning)
		return;
	const float turn = TURNING_START + TURNING_RATE * CLI_PHYSICS_DT * (float)frame;
	const float across = sinf(turn), along_up = -cosf(turn);
	const bool sideways = fabsf(across) > fabsf(along_up);
	*axis = sideways ? 0 : up;
	*down = sideways ? across < 0 : along_up < 0;
}

/// Boxes at random places, bottoms in [air_lo, air_hi) on the up axis, then pushed up off one
/// another (the sweep across up needs no ceiling); the ceiling goes 1 m over the highest.
static void place_boxes(fall *f, float air_lo, float air_hi)
{
	const int up = f->def.dims - 1;
	for (uint32_t i = 0; i < f->def.n; ++i) {
		fall_box *box = &f->boxes[i];
		for (int a = 0; a < f->def.dims; ++a) {
			box->half[a] = cli_rng_range(&f->rng, 0.25f, 0.5f);
			box->centre[a] = cli_rng_range(&f->rng, f->lo[a] + box->half[a], f->hi[a] - box->half[a]);
		}
		box->centre[up] = cli_rng_range(&f->rng, air_lo, air_hi) + box->half[up];
	}
	f->hi[up] = INFINITY; // no ceiling yet to stop the boxes pushed up
	sweep(f, up, true);
	float top = air_hi;
	for (uint32_t i = 0; i < f->def.n; ++i) {
		fall_box *box = &f->boxes[i];
		top = fmaxf(top, box->centre[up] + box->half[up]);
		for (int a = 0; a < 3; ++a)
			box->shown[a] = box->centre[a];
	}
	f->hi[up] = ceilf(top) + 1;
}

/// Cells of the largest plane a sweep runs across.
static size_t largest_plane(const fall *f)
{
	size_t most = 1;
	for (int axis = 0; axis < f->def.dims; ++axis) {
		size_t cells = 1;
		for (int a = 0; a < f->def.dims; ++a)
			cells *= a == axis ? 1 : cells_along(f, a);
		most = cells > most ? cells : most;
	}
	return most;
}

/// The side a region needs for boxes (0.75 m across on average) to fill `fill` of `axes` of it
/// given `depth` metres of the other axes.
static float side_for(uint32_t n, int dims, int axes, float depth, float fill)
{
	return fmaxf(2, ceilf((float)pow(n * pow(0.75, dims) / (fill * depth), 1.0 / axes)));
}

static void fall_free(fall *f)
{
	free(f->boxes);
	free(f->keys);
	free(f->height);
	free(f);
}

static void *fall_start(const cli_physics_def *def, uint32_t *statics, bool turning)
{
	fall *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->def = *def;
	f->turning = turning;
	f->rng = cli_rng_make(def->seed, turning ? 6 : 5);
	const int up = def->dims - 1;
	const float side = turning ? side_for(def->n, def->dims, def->dims, 1, TURNING_FILL)
				   : side_for(def->n, def->dims, up, FALLFREE_AIR, FALLFREE_FILL);
	for (int a = 0; a < def->dims; ++a)
		f->hi[a] = side;
	const size_t n = def->n ? def->n : 1;
	f->boxes = calloc(n, sizeof *f->boxes);
	f->keys = malloc(n * sizeof *f->keys);
	f->height = malloc(largest_plane(f) * sizeof *f->height);
	if (!f->boxes || !f->keys || !f->height) {
		fall_free(f);
		return NULL;
	}
	if (turning)
		place_boxes(f, 0, side - 1);
	else
		place_boxes(f, 0.5f, 0.5f + FALLFREE_AIR);
	float *height = realloc(f->height, largest_plane(f) * sizeof *f->height);
	if (!height) {
		fall_free(f);
		return NULL;
	}
	f->height = height;
	*statics = f->statics = 2 * (uint32_t)def->dims;
	return f;
}

static void *freefall_start(const cli_physics_def *def, uint32_t *statics) { return fall_start(def, statics, false); }

static void *gravity_start(const cli_physics_def *def, uint32_t *statics) { return fall_start(def, statics, true); }

static void fall_stop(void *state) { fall_free(state); }

/// One frame of flight under `gravity`, capped in speed and held inside the walls.
static void fly(const fall *f, fall_box *box, const float gravity[3])
{
	for (int a = 0; a < f->def.dims; ++a) {
		float v = fminf(fmaxf(box->velocity[a] + gravity[a] * CLI_PHYSICS_DT, -FALL_MAX_SPEED), FALL_MAX_SPEED);
		float x = box->centre[a] + v * CLI_PHYSICS_DT;
		const float lo = f->lo[a] + box->half[a], hi = f->hi[a] - box->half[a];
		if (x < lo || x > hi) {
			x = x < lo ? lo : hi;
			v = 0;
		}
		box->centre[a] = x;
		box->velocity[a] = v;
	}
}

static bool moved(const fall *f, const fall_box *box)
{
	for (int a = 0; a < f->def.dims; ++a)
		if (box->centre[a] != box->shown[a])
			return true;
	return false;
}

static void fall_step(void *state, uint32_t frame, cli_changes *out)
{
	fall *f = state;
	if (frame == 0) {
		uint32_t id = 0;
		cli_region_walls(out, f->lo, f->hi, &id);
		for (uint32_t i = 0; i < f->def.n; ++i)
			cli_changes_create(out, f->statics + i, f->boxes[i].centre, f->boxes[i].half, BP_KIND_DYNAMIC);
		return;
	}
	int axis;
	bool down;
	gravity_at(f, frame, &axis, &down);
	float gravity[3] = {0, 0, 0};
	gravity[axis] = (down ? -1.0f : 1.0f) * (f->turning ? TURNING_G : CLI_PHYSICS_GRAVITY);
	for (uint32_t i = 0; i < f->def.n; ++i)
		fly(f, &f->boxes[i], gravity);
	sweep(f, axis, down);
	for (uint32_t i = 0; i < f->def.n; ++i) {
		fall_box *box = &f->boxes[i];
		if (!moved(f, box))
			continue;
		for (int a = 0; a < 3; ++a)
			box->shown[a] = box->centre[a];
		cli_changes_move(out, f->statics + i, box->centre, box->half);
	}
}

const cli_physics_model cli_freefall_model = {
	.name = "freefall", .churns = false, .start = freefall_start, .step = fall_step, .stop = fall_stop};

const cli_physics_model cli_gravity_model = {
	.name = "gravity", .churns = false, .start = gravity_start, .step = fall_step, .stop = fall_stop};
