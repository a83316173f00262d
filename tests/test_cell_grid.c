// SPDX-License-Identifier: MIT
// Grid neighbourhoods (cell_grid.h) against oracles written here from the definition:
// neighbours by enumerating every cell, assignment and near-entity walks by brute force.
#include <criterion/criterion.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

// ---- the oracle: cells from the text of the definition ------------------------

typedef struct shape {
	int dims;
	uint32_t cells[3];
	bool toroidal;
	float origin[3];
	float cell_size;
} shape;

static bp_cell_grid *make_grid(const shape *s)
{
	bp_cell_grid_def def = bp_cell_grid_def_default();
	def.dims = s->dims;
	def.toroidal = s->toroidal;
	def.cell_size = s->cell_size > 0 ? s->cell_size : 1.0f;
	for (int k = 0; k < 3; ++k) {
		def.cells[k] = s->cells[k];
		def.origin[k] = s->origin[k];
	}
	bp_cell_grid *g = NULL;
	cr_assert_eq(bp_cell_grid_create(&def, &g), BP_OK);
	cr_assert_not_null(g);
	return g;
}

static uint32_t umin(uint32_t a, uint32_t b) { return a < b ? a : b; }

static uint32_t shape_cells(const shape *s, int k) { return k < s->dims ? s->cells[k] : 1; }

static uint32_t total_cells(const shape *s) { return shape_cells(s, 0) * shape_cells(s, 1) * shape_cells(s, 2); }

static void oracle_coords(const shape *s, uint32_t cell, int64_t c[3])
{
	c[0] = cell % shape_cells(s, 0);
	c[1] = cell / shape_cells(s, 0) % shape_cells(s, 1);
	c[2] = cell / shape_cells(s, 0) / shape_cells(s, 1);
}

/// Distance between two coordinates on an axis: plain, or around the ring.
static int64_t axis_distance(const shape *s, int k, int64_t a, int64_t b)
{
	int64_t d = llabs(a - b);
	if (s->toroidal && (int64_t)shape_cells(s, k) - d < d)
		d = (int64_t)shape_cells(s, k) - d;
	return d;
}

/// a and b are neighbours: distinct cells within one step on every axis.
static bool oracle_adjacent(const shape *s, uint32_t a, uint32_t b)
{
	if (a == b)
		return false;
	int64_t ca[3], cb[3];
	oracle_coords(s, a, ca);
	oracle_coords(s, b, cb);
	for (int k = 0; k < 3; ++k)
		if (axis_distance(s, k, ca[k], cb[k]) > 1)
			return false;
	return true;
}

/// Cell of a point: floor((x - origin) / size) per axis, clamped or taken mod n.
/// Only for coordinates within int64 range of cells (the far cases are hand-worked).
static uint32_t oracle_cell(const shape *s, const double x[3])
{
	int64_t c[3] = {0, 0, 0};
	for (int k = 0; k < s->dims; ++k) {
		int64_t n = s->cells[k];
		int64_t q = (int64_t)floor((x[k] - (double)s->origin[k]) / (double)s->cell_size);
		if (s->toroidal)
			c[k] = ((q % n) + n) % n;
		else
			c[k] = q < 0 ? 0 : q >= n ? n - 1 : q;
	}
	return (uint32_t)(c[0] + shape_cells(s, 0) * (c[1] + shape_cells(s, 1) * c[2]));
}

static uint32_t oracle_box_cell(const shape *s, const oracle_box *b)
{
	double centre[3];
	for (int k = 0; k < 3; ++k)
		centre[k] = ((double)b->min[k] + (double)b->max[k]) / 2;
	return oracle_cell(s, centre);
}

/// Neighbours of a cell by looking at every cell in turn (so ascending).
static uint32_t oracle_neighbours(const shape *s, uint32_t cell, uint32_t out[26])
{
	uint32_t count = 0;
	for (uint32_t c = 0; c < total_cells(s); ++c)
		if (oracle_adjacent(s, cell, c)) {
			cr_assert_lt(count, 26);
			out[count++] = c;
		}
	return count;
}

/// The grid's neighbour list of a valid cell; its length is returned.
static uint32_t neighbours_of(const bp_cell_grid *g, uint32_t cell, uint32_t out[26])
{
	uint32_t count = 99;
	cr_assert_eq(bp_cell_grid_neighbour_cells(g, cell, out, &count), BP_OK, "cell %u", cell);
	return count;
}

static void check_neighbours(const shape *s, const bp_cell_grid *g, uint32_t cell)
{
	uint32_t want[26], got[26];
	uint32_t want_count = oracle_neighbours(s, cell, want);
	uint32_t got_count = neighbours_of(g, cell, got);
	cr_assert_eq(got_count, want_count, "cell %u of %ux%ux%u (%s): %u neighbours, want %u", cell, s->cells[0],
		s->cells[1], shape_cells(s, 2), s->toroidal ? "toroidal" : "bounded", got_count, want_count);
	for (uint32_t i = 0; i < want_count; ++i)
		cr_assert_eq(got[i], want[i], "cell %u: neighbour %u is %u, want %u", cell, i, got[i], want[i]);
}

static uint32_t neighbour_count(const bp_cell_grid *g, uint32_t x, uint32_t y, uint32_t z)
{
	uint32_t cell, out[26];
	cr_assert_eq(bp_cell_grid_cell_index(g, (uint32_t[]){x, y, z}, &cell), BP_OK);
	return neighbours_of(g, cell, out);
}

// ---- neighbour cells -----------------------------------------------------------

Test(cell_grid, neighbours_2d_bounded_by_hand)
{
	shape s = {.dims = 2, .cells = {4, 3}};
	bp_cell_grid *g = make_grid(&s);
	// A corner has the 3 cells of the 2x2 block it starts, an edge cell the 5 of
	// a 3x2 block, an interior cell the 8 of its 3x3 block (minus itself each time).
	cr_assert_eq(neighbour_count(g, 0, 0, 0), 3);
	cr_assert_eq(neighbour_count(g, 3, 2, 0), 3);
	cr_assert_eq(neighbour_count(g, 1, 0, 0), 5);
	cr_assert_eq(neighbour_count(g, 0, 1, 0), 5);
	cr_assert_eq(neighbour_count(g, 1, 1, 0), 8);
	cr_assert_eq(neighbour_count(g, 2, 1, 0), 8);
	// Corner (0,0) = cell 0: (1,0) = 1, (0,1) = 4, (1,1) = 5.
	uint32_t out[26];
	cr_assert_eq(neighbours_of(g, 0, out), 3);
	cr_assert(out[0] == 1 && out[1] == 4 && out[2] == 5);
	for (uint32_t c = 0; c < total_cells(&s); ++c)
		check_neighbours(&s, g, c);
	bp_cell_grid_destroy(g);
}

Test(cell_grid, neighbours_3d_bounded_by_hand)
{
	shape s = {.dims = 3, .cells = {4, 4, 4}};
	bp_cell_grid *g = make_grid(&s);
	// 2x2x2 - 1 = 7 at a corner, 3x2x2 - 1 = 11 on an edge, 3x3x2 - 1 = 17 on a
	// face, 3x3x3 - 1 = 26 inside.
	cr_assert_eq(neighbour_count(g, 0, 0, 0), 7);
	cr_assert_eq(neighbour_count(g, 3, 3, 3), 7);
	cr_assert_eq(neighbour_count(g, 1, 0, 0), 11);
	cr_assert_eq(neighbour_count(g, 0, 2, 3), 11);
	cr_assert_eq(neighbour_count(g, 1, 2, 0), 17);
	cr_assert_eq(neighbour_count(g, 3, 1, 2), 17);
	cr_assert_eq(neighbour_count(g, 1, 2, 2), 26);
	for (uint32_t c = 0; c < total_cells(&s); ++c)
		check_neighbours(&s, g, c);
	bp_cell_grid_destroy(g);
}

Test(cell_grid, neighbours_toroidal_full_when_three_or_more)
{
	shape shapes[] = {
		{.dims = 2, .cells = {3, 3}, .toroidal = true},
		{.dims = 2, .cells = {5, 4}, .toroidal = true},
		{.dims = 3, .cells = {3, 4, 5}, .toroidal = true},
	};
	for (size_t i = 0; i < sizeof shapes / sizeof *shapes; ++i) {
		bp_cell_grid *g = make_grid(&shapes[i]);
		uint32_t full = shapes[i].dims == 2 ? 8 : 26, out[26];
		for (uint32_t c = 0; c < total_cells(&shapes[i]); ++c) {
			cr_assert_eq(neighbours_of(g, c, out), full, "shape %zu cell %u", i, c);
			check_neighbours(&shapes[i], g, c);
		}
		bp_cell_grid_destroy(g);
	}
}

Test(cell_grid, neighbours_toroidal_small_axes_deduplicated)
{
	uint32_t out[26];
	// 2x2 torus: offsets -1 and +1 reach the same column, so every cell's
	// neighbours are the 3 other cells. Cell 0 -> {1, 2, 3}.
	shape s22 = {.dims = 2, .cells = {2, 2}, .toroidal = true};
	bp_cell_grid *g = make_grid(&s22);
	cr_assert_eq(neighbours_of(g, 0, out), 3);
	cr_assert(out[0] == 1 && out[1] == 2 && out[2] == 3);
	cr_assert_eq(neighbours_of(g, 3, out), 3);
	cr_assert(out[0] == 0 && out[1] == 1 && out[2] == 2);
	bp_cell_grid_destroy(g);
	// 1x5 torus: x has one column (the cell itself), y wraps: cell 2 -> {1, 3},
	// cell 0 -> {1, 4}.
	shape s15 = {.dims = 2, .cells = {1, 5}, .toroidal = true};
	g = make_grid(&s15);
	cr_assert_eq(neighbours_of(g, 2, out), 2);
	cr_assert(out[0] == 1 && out[1] == 3);
	cr_assert_eq(neighbours_of(g, 0, out), 2);
	cr_assert(out[0] == 1 && out[1] == 4);
	bp_cell_grid_destroy(g);
	// 1x1 torus: the only cell is never its own neighbour.
	shape s11 = {.dims = 2, .cells = {1, 1}, .toroidal = true};
	g = make_grid(&s11);
	cr_assert_eq(neighbours_of(g, 0, out), 0);
	bp_cell_grid_destroy(g);
	// 2x2x2 torus: the 7 other cells.
	shape s222 = {.dims = 3, .cells = {2, 2, 2}, .toroidal = true};
	g = make_grid(&s222);
	for (uint32_t c = 0; c < 8; ++c)
		cr_assert_eq(neighbours_of(g, c, out), 7);
	bp_cell_grid_destroy(g);
}

Test(cell_grid, neighbours_every_small_shape_match_oracle)
{
	for (int dims = 2; dims <= 3; ++dims)
		for (int toroidal = 0; toroidal < 2; ++toroidal)
			for (uint32_t x = 1; x <= 5; ++x)
				for (uint32_t y = 1; y <= 5; ++y)
					for (uint32_t z = 1; z <= (dims == 3 ? 4u : 1u); ++z) {
						shape s = {.dims = dims, .cells = {x, y, z}, .toroidal = toroidal};
						bp_cell_grid *g = make_grid(&s);
						cr_assert_eq(bp_cell_grid_cell_count(g), total_cells(&s));
						for (uint32_t c = 0; c < total_cells(&s); ++c)
							check_neighbours(&s, g, c);
						uint32_t out[26];
						uint32_t count;
						cr_assert_eq(bp_cell_grid_neighbour_cells(g, total_cells(&s), out, &count),
							BP_ERR_OUT_OF_RANGE);
						bp_cell_grid_destroy(g);
					}
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(cell_grid, coords_and_index_round_trip)
{
	shape s = {.dims = 3, .cells = {3, 4, 5}};
	bp_cell_grid *g = make_grid(&s);
	for (uint32_t c = 0; c < total_cells(&s); ++c) {
		uint32_t coords[3], back;
		int64_t want[3];
		oracle_coords(&s, c, want);
		cr_assert_eq(bp_cell_grid_cell_coords(g, c, coords), BP_OK);
		cr_assert(coords[0] == want[0] && coords[1] == want[1] && coords[2] == want[2]);
		cr_assert_eq(bp_cell_grid_cell_index(g, coords, &back), BP_OK);
		cr_assert_eq(back, c);
	}
	uint32_t coords[3] = {7, 7, 7}, cell = 99;
	cr_assert_eq(bp_cell_grid_cell_coords(g, 60, coords), BP_ERR_OUT_OF_RANGE);
	cr_assert_eq(coords[0], 7, "unchanged on error");
	cr_assert_eq(bp_cell_grid_cell_index(g, (uint32_t[]){0, 4, 0}, &cell), BP_ERR_OUT_OF_RANGE);
	cr_assert_eq(cell, 99, "unchanged on error");
	bp_cell_grid_destroy(g);
}

// ---- assignment ---------------------------------------------------------------

/// Random boxes in [lo, lo + span)^dims, so with a grid over part of that
/// range some centres fall outside the grid on every side.
static void random_boxes(oracle_box *boxes, uint32_t n, int dims, float lo, float span, uint64_t seed)
{
	test_random_boxes(boxes, n, dims, span, span / 20, false, seed);
	for (uint32_t i = 0; i < n; ++i)
		for (int k = 0; k < dims; ++k) {
			boxes[i].min[k] += lo;
			boxes[i].max[k] += lo;
		}
}

static bp_world *make_world(const oracle_box *boxes, uint32_t n, int dims, int threads)
{
	bp_world_def def = bp_world_def_default();
	def.dims = dims;
	def.thread_count = threads;
	return test_world_from_def(boxes, n, &def);
}

/// Every entity in its oracle cell, and every cell listing exactly its
/// entities, ascending.
static void check_assignment(const shape *s, const bp_cell_grid *g, const oracle_box *boxes, uint32_t n)
{
	cr_assert_eq(bp_cell_grid_entity_count(g), n);
	uint32_t *want = malloc((n ? n : 1) * sizeof *want);
	for (uint32_t i = 0; i < n; ++i) {
		want[i] = oracle_box_cell(s, &boxes[i]);
		uint32_t got;
		cr_assert_eq(bp_cell_grid_entity_cell(g, i, &got), BP_OK);
		cr_assert_eq(got, want[i], "entity %u in cell %u, want %u", i, got, want[i]);
	}
	uint32_t listed = 0;
	for (uint32_t c = 0; c < total_cells(s); ++c) {
		const uint32_t *list;
		uint32_t count;
		cr_assert_eq(bp_cell_grid_cell_entities(g, c, &list, &count), BP_OK);
		uint32_t k = 0;
		for (uint32_t i = 0; i < n; ++i)
			if (want[i] == c) {
				cr_assert_lt(k, count, "cell %u lists too few", c);
				cr_assert_eq(list[k], i, "cell %u entry %u", c, k);
				++k;
			}
		cr_assert_eq(k, count, "cell %u lists %u, want %u", c, count, k);
		listed += count;
	}
	cr_assert_eq(listed, n);
	free(want);
}

static const shape random_shapes[] = {
	{.dims = 2, .cells = {7, 5}, .origin = {-3.5f, 2.25f}, .cell_size = 1.5f},
	{.dims = 2, .cells = {7, 5}, .origin = {-3.5f, 2.25f}, .cell_size = 1.5f, .toroidal = true},
	{.dims = 3, .cells = {5, 4, 6}, .origin = {-2.0f, 0.5f, 1.0f}, .cell_size = 1.25f},
	{.dims = 3, .cells = {5, 4, 6}, .origin = {-2.0f, 0.5f, 1.0f}, .cell_size = 1.25f, .toroidal = true},
	{.dims = 3, .cells = {2, 1, 3}, .origin = {0.0f, 0.0f, 0.0f}, .cell_size = 2.0f, .toroidal = true},
};
enum { RANDOM_SHAPES = sizeof random_shapes / sizeof *random_shapes };

Test(cell_grid, assign_matches_brute_force, .timeout = 60)
{
	enum { N = 3000 };
	oracle_box *boxes = malloc(N * sizeof *boxes);
	for (int i = 0; i < RANDOM_SHAPES; ++i) {
		const shape *s = &random_shapes[i];
		// Boxes over about three times the grid's span, centred on it.
		float span = 3.0f * s->cell_size * (float)s->cells[0];
		random_boxes(boxes, N, s->dims, s->origin[0] - span / 3, span, 100 + (uint64_t)i);
		bp_cell_grid *g = make_grid(s);
		for (int threads = 1; threads <= 3; threads += 2) {
			bp_world *w = make_world(boxes, N, s->dims, threads);
			cr_assert_eq(bp_cell_grid_assign(g, w), BP_OK);
			check_assignment(s, g, boxes, N);
			bp_world_destroy(w);
		}
		// Reassigning a smaller world replaces the assignment.
		bp_world *w = make_world(boxes + 1000, 500, s->dims, 2);
		cr_assert_eq(bp_cell_grid_assign(g, w), BP_OK);
		check_assignment(s, g, boxes + 1000, 500);
		bp_world_destroy(w);
		bp_cell_grid_destroy(g);
	}
	free(boxes);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(cell_grid, empty_before_assign_and_with_empty_world)
{
	shape s = {.dims = 2, .cells = {3, 3}};
	bp_cell_grid *g = make_grid(&s);
	const uint32_t *list;
	uint32_t count = 9;
	cr_assert_eq(bp_cell_grid_cell_entities(g, 4, &list, &count), BP_OK);
	cr_assert_eq(count, 0);
	size_t total = 9;
	cr_assert_eq(bp_cell_grid_near_point(g, (float[]){1.5f, 1.5f}, NULL, 0, &total), BP_OK);
	cr_assert_eq(total, 0);
	bp_world *w = make_world(NULL, 0, 2, 1);
	cr_assert_eq(bp_cell_grid_assign(g, w), BP_OK);
	cr_assert_eq(bp_cell_grid_entity_count(g), 0);
	cr_assert_eq(bp_cell_grid_near_point(g, (float[]){1.5f, 1.5f}, NULL, 0, &total), BP_OK);
	cr_assert_eq(total, 0);
	bp_world_destroy(w);
	bp_cell_grid_destroy(g);
}

Test(cell_grid, far_points_clamp_or_wrap_by_hand)
{
	// Cells of edge 1 from 0, 3 per axis. Toroidal: 2^40 = 4^20 = 1 (mod 3),
	// -2^40 = -1 = 2 (mod 3), 2^100 = 4^50 = 1 (mod 3); -0.5 -> floor -1 -> 2.
	// Bounded: everything below 0 goes to column 0, above 3 to column 2.
	const float xs[] = {0x1p40f, -0x1p40f, 0x1p100f, -0.5f, 3.0f, -3e38f, 3e38f};
	const uint32_t wrapped[] = {1, 2, 1, 2, 0, 0, 0}, clamped[] = {2, 0, 2, 0, 2, 0, 2};
	// -3e38 and 3e38: floor of +-3e38 are multiples of 2^(127-23) = 2^104;
	// 3e38 = m * 2^104 with m = 3e38 / 2^104 (an integer), and 2^104 = 4^52 = 1
	// (mod 3), so the residue is m mod 3, found below without the library.
	double m = (double)3e38f / 0x1p104;
	cr_assert_eq(m, floor(m));
	uint32_t m3 = (uint32_t)fmod(m, 3.0);
	uint32_t wrapped_far[] = {m3, (3 - m3) % 3};
	for (int toroidal = 0; toroidal < 2; ++toroidal) {
		shape s = {.dims = 2, .cells = {3, 3}, .toroidal = toroidal};
		bp_cell_grid *g = make_grid(&s);
		for (size_t i = 0; i < sizeof xs / sizeof *xs; ++i) {
			uint32_t cell;
			cr_assert_eq(bp_cell_grid_cell_of(g, (float[]){xs[i], 0.5f}, &cell), BP_OK);
			uint32_t want = toroidal ? (i >= 5 ? wrapped_far[i == 5 ? 1 : 0] : wrapped[i]) : clamped[i];
			cr_assert_eq(cell, want, "x = %g (%s): cell %u, want %u", (double)xs[i],
				toroidal ? "toroidal" : "bounded", cell, want);
		}
		// And assign agrees with cell_of, as box centres: a point box at each x.
		oracle_box boxes[7];
		for (int i = 0; i < 7; ++i)
			boxes[i] = (oracle_box){.min = {xs[i], 0.5f}, .max = {xs[i], 0.5f}, .category = 1, .mask = UINT64_MAX};
		bp_world *w = make_world(boxes, 7, 2, 1);
		cr_assert_eq(bp_cell_grid_assign(g, w), BP_OK);
		for (uint32_t i = 0; i < 7; ++i) {
			uint32_t a, b;
			cr_assert_eq(bp_cell_grid_entity_cell(g, i, &a), BP_OK);
			cr_assert_eq(bp_cell_grid_cell_of(g, boxes[i].min, &b), BP_OK);
			cr_assert_eq(a, b);
		}
		bp_world_destroy(w);
		bp_cell_grid_destroy(g);
	}
}

// ---- for each, reduce, near point ---------------------------------------------

typedef struct visits {
	uint32_t *list;
	uint32_t count, stop_after;
} visits;

static bool record(uint32_t entity, void *user)
{
	visits *v = user;
	v->list[v->count++] = entity;
	return v->count < v->stop_after;
}

/// Order-sensitive fold: any reordering or repeat changes the result.
static double fold(double acc, uint32_t entity, void *user)
{
	(void)user;
	return acc * 0.75 + (double)entity + 1.0;
}

/// The entities near `cell` in the documented order: cells ascending, entities
/// ascending within a cell, by scanning every cell and every entity.
static uint32_t oracle_near(const shape *s, const uint32_t *cell_of, uint32_t n, uint32_t cell, bool include_cell,
	uint32_t *out)
{
	uint32_t count = 0;
	for (uint32_t c = 0; c < total_cells(s); ++c) {
		if (!oracle_adjacent(s, cell, c) && !(include_cell && c == cell))
			continue;
		for (uint32_t i = 0; i < n; ++i)
			if (cell_of[i] == c)
				out[count++] = i;
	}
	return count;
}

Test(cell_grid, near_walks_match_brute_force, .timeout = 60)
{
	enum { N = 800 };
	oracle_box boxes[N];
	uint32_t cell_of[N], want[N], got[N];
	for (int i = 0; i < RANDOM_SHAPES; ++i) {
		const shape *s = &random_shapes[i];
		float span = 2.0f * s->cell_size * (float)s->cells[0];
		random_boxes(boxes, N, s->dims, s->origin[0] - span / 4, span, 200 + (uint64_t)i);
		for (uint32_t e = 0; e < N; ++e)
			cell_of[e] = oracle_box_cell(s, &boxes[e]);
		bp_cell_grid *g = make_grid(s);
		bp_world *w = make_world(boxes, N, s->dims, 2);
		cr_assert_eq(bp_cell_grid_assign(g, w), BP_OK);
		for (uint32_t c = 0; c < total_cells(s); ++c)
			for (int include = 0; include < 2; ++include) {
				uint32_t want_count = oracle_near(s, cell_of, N, c, include, want);
				visits v = {got, 0, UINT32_MAX};
				cr_assert_eq(bp_cell_grid_for_each_near(g, c, include, record, &v), BP_OK);
				cr_assert_eq(v.count, want_count, "shape %d cell %u include %d", i, c, include);
				cr_assert_arr_eq(got, want, want_count * sizeof *want, "shape %d cell %u: order", i, c);
				double acc = 0, want_acc = 0.5;
				for (uint32_t k = 0; k < want_count; ++k)
					want_acc = fold(want_acc, want[k], NULL);
				cr_assert_eq(bp_cell_grid_reduce_near(g, c, include, fold, NULL, 0.5, &acc), BP_OK);
				cr_assert(acc == want_acc, "shape %d cell %u: reduce %g, want %g", i, c, acc, want_acc);
				// Early stop: the callback says stop after its 3rd visit.
				v = (visits){got, 0, 3};
				cr_assert_eq(bp_cell_grid_for_each_near(g, c, include, record, &v), BP_OK);
				cr_assert_eq(v.count, umin(3u, want_count));
				cr_assert_arr_eq(got, want, v.count * sizeof *want);
			}
		// Points inside and well outside the grid.
		test_rng rng = {300 + (uint64_t)i};
		for (int q = 0; q < 200; ++q) {
			float p[3] = {0, 0, 0};
			double pd[3] = {0, 0, 0};
			for (int k = 0; k < s->dims; ++k) {
				float extent = s->cell_size * (float)s->cells[k];
				p[k] = test_rng_float(&rng, s->origin[k] - extent, s->origin[k] + 2 * extent);
				pd[k] = p[k];
			}
			uint32_t cell, want_cell = oracle_cell(s, pd);
			cr_assert_eq(bp_cell_grid_cell_of(g, p, &cell), BP_OK);
			cr_assert_eq(cell, want_cell);
			uint32_t want_count = oracle_near(s, cell_of, N, want_cell, true, want);
			size_t count = 0;
			cr_assert_eq(bp_cell_grid_near_point(g, p, got, N, &count), BP_OK);
			cr_assert_eq(count, want_count);
			cr_assert_arr_eq(got, want, want_count * sizeof *want);
			// A short buffer gets the first `capacity`, and the full count.
			uint32_t small[5] = {0};
			cr_assert_eq(bp_cell_grid_near_point(g, p, small, 5, &count), want_count > 5 ? BP_ERR_OUT_OF_RANGE : BP_OK);
			cr_assert_eq(count, want_count);
			cr_assert_arr_eq(small, want, umin(5u, want_count) * sizeof *want);
			cr_assert_eq(bp_cell_grid_near_point(g, p, NULL, 0, &count), BP_OK, "capacity 0 counts");
			cr_assert_eq(count, want_count);
		}
		bp_world_destroy(w);
		bp_cell_grid_destroy(g);
	}
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(cell_grid, concurrent_queries_agree, .timeout = 60)
{
	// Queries only read the grid: many threads at once see what one thread sees.
	enum { N = 2000 };
	static oracle_box boxes[N];
	const shape *s = &random_shapes[3];
	random_boxes(boxes, N, 3, s->origin[0], s->cell_size * 6, 400);
	bp_cell_grid *g = make_grid(s);
	bp_world *w = make_world(boxes, N, 3, 4);
	cr_assert_eq(bp_cell_grid_assign(g, w), BP_OK);
	const uint32_t cells = total_cells(s);
	double *serial = malloc(cells * sizeof *serial), *parallel = malloc(cells * sizeof *parallel);
	for (uint32_t c = 0; c < cells; ++c)
		cr_assert_eq(bp_cell_grid_reduce_near(g, c, true, fold, NULL, 0, &serial[c]), BP_OK);
	int failures = 0;
#pragma omp parallel for num_threads(4) reduction(+ : failures)
	for (uint32_t c = 0; c < cells; ++c)
		failures += bp_cell_grid_reduce_near(g, c, true, fold, NULL, 0, &parallel[c]) != BP_OK;
	cr_assert_eq(failures, 0);
	for (uint32_t c = 0; c < cells; ++c)
		cr_assert(serial[c] == parallel[c], "cell %u", c);
	free(serial);
	free(parallel);
	bp_world_destroy(w);
	bp_cell_grid_destroy(g);
}

// ---- bad input -----------------------------------------------------------------

// Each makes one field of a valid def bad.
#define SPOIL(name, body) static void name(bp_cell_grid_def *d) { body; }
SPOIL(dims_1, d->dims = 1)
SPOIL(dims_4, d->dims = 4)
SPOIL(origin_nan, d->origin[1] = NAN)
SPOIL(origin_inf, d->origin[2] = INFINITY)
SPOIL(size_zero, d->cell_size = 0)
SPOIL(size_negative, d->cell_size = -1)
SPOIL(size_nan, d->cell_size = NAN)
SPOIL(size_inf, d->cell_size = INFINITY)
SPOIL(cells_zero, d->cells[2] = 0)
SPOIL(cells_too_many, d->cells[0] = 1u << 11; d->cells[1] = 1u << 10; d->cells[2] = (1u << 10) + 1)
SPOIL(cells_overflow, d->cells[0] = UINT32_MAX; d->cells[1] = UINT32_MAX; d->cells[2] = UINT32_MAX)
SPOIL(no_cookie, d->internal_value = 0)
#undef SPOIL

Test(cell_grid, bad_defs_are_refused_and_allocate_nothing)
{
	typedef struct bad {
		const char *what;
		bp_status want;
		void (*spoil)(bp_cell_grid_def *def);
	} bad;
	const bad cases[] = {
		{"dims 1", BP_ERR_INVALID_ARGUMENT, dims_1},
		{"dims 4", BP_ERR_INVALID_ARGUMENT, dims_4},
		{"origin NaN", BP_ERR_NOT_FINITE, origin_nan},
		{"origin inf", BP_ERR_NOT_FINITE, origin_inf},
		{"cell_size 0", BP_ERR_INVALID_ARGUMENT, size_zero},
		{"cell_size < 0", BP_ERR_INVALID_ARGUMENT, size_negative},
		{"cell_size NaN", BP_ERR_NOT_FINITE, size_nan},
		{"cell_size inf", BP_ERR_NOT_FINITE, size_inf},
		{"a zero axis", BP_ERR_OUT_OF_RANGE, cells_zero},
		{"2^31 + 2^21 cells", BP_ERR_OUT_OF_RANGE, cells_too_many},
		{"(2^32-1)^3 cells", BP_ERR_OUT_OF_RANGE, cells_overflow},
		{"def not from the default", BP_ERR_INVALID_ARGUMENT, no_cookie},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
		bp_cell_grid_def def = bp_cell_grid_def_default();
		def.cells[0] = def.cells[1] = def.cells[2] = 4;
		cases[i].spoil(&def);
		bp_cell_grid *g = (bp_cell_grid *)&def; // any non-NULL value: must come back NULL
		bp_status status = bp_cell_grid_create(&def, &g);
		cr_assert_eq(status, cases[i].want, "%s: got %s", cases[i].what, bp_status_string(status));
		cr_assert_null(g, "%s", cases[i].what);
		cr_assert_eq(bp_allocated_bytes(), 0, "%s", cases[i].what);
	}
	// In 2D, z fields are not looked at.
	bp_cell_grid_def def = bp_cell_grid_def_default();
	def.dims = 2;
	def.cells[2] = 0;
	def.origin[2] = NAN;
	bp_cell_grid *g = NULL;
	cr_assert_eq(bp_cell_grid_create(&def, &g), BP_OK);
	bp_cell_grid_destroy(g);
	cr_assert_eq(bp_cell_grid_create(NULL, &g), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_cell_grid_create(&def, NULL), BP_ERR_INVALID_ARGUMENT);
	bp_cell_grid_destroy(NULL);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(cell_grid, bad_calls_change_nothing)
{
	enum { N = 300 };
	oracle_box boxes[N];
	const shape *s = &random_shapes[2];
	random_boxes(boxes, N, 3, s->origin[0], s->cell_size * 5, 500);
	bp_cell_grid *g = make_grid(s);
	bp_world *w3 = make_world(boxes, N, 3, 1);
	bp_world *w2 = make_world(boxes, 10, 2, 1);
	cr_assert_eq(bp_cell_grid_assign(g, w3), BP_OK);
	cr_assert_eq(bp_cell_grid_assign(g, w2), BP_ERR_INVALID_ARGUMENT, "dims differ");
	cr_assert_eq(bp_cell_grid_assign(g, NULL), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_cell_grid_assign(NULL, w3), BP_ERR_INVALID_ARGUMENT);
	check_assignment(s, g, boxes, N);

	const uint32_t cells = total_cells(s);
	uint32_t cell = 77, count = 77, out[26];
	const uint32_t *list = NULL;
	size_t total = 77;
	double acc = 77;
	visits v = {out, 0, UINT32_MAX};
	cr_assert_eq(bp_cell_grid_cell_of(g, (float[]){NAN, 0, 0}, &cell), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_cell_grid_cell_of(g, (float[]){0, 0, -INFINITY}, &cell), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_cell_grid_cell_of(NULL, (float[]){0, 0, 0}, &cell), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(cell, 77);
	cr_assert_eq(bp_cell_grid_entity_cell(g, N, &cell), BP_ERR_OUT_OF_RANGE);
	cr_assert_eq(bp_cell_grid_cell_entities(g, cells, &list, &count), BP_ERR_OUT_OF_RANGE);
	cr_assert(count == 77 && list == NULL);
	cr_assert_eq(bp_cell_grid_for_each_near(g, cells, true, record, &v), BP_ERR_OUT_OF_RANGE);
	cr_assert_eq(bp_cell_grid_for_each_near(g, 0, true, NULL, &v), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(v.count, 0);
	cr_assert_eq(bp_cell_grid_reduce_near(g, cells, true, fold, NULL, 0, &acc), BP_ERR_OUT_OF_RANGE);
	cr_assert_eq(bp_cell_grid_reduce_near(g, 0, true, NULL, NULL, 0, &acc), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(acc, 77);
	cr_assert_eq(bp_cell_grid_near_point(g, (float[]){0, NAN, 0}, out, 26, &total), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_cell_grid_near_point(g, (float[]){0, 0, 0}, NULL, 5, &total), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(total, 77);
	cr_assert_eq(bp_cell_grid_neighbour_cells(NULL, 0, out, &count), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_cell_grid_neighbour_cells(g, 0, out, NULL), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_cell_grid_cell_count(NULL), 0);
	check_assignment(s, g, boxes, N);

	bp_world_destroy(w2);
	bp_world_destroy(w3);
	bp_cell_grid_destroy(g);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

// ---- allocation failure ----------------------------------------------------------

// Fails the allocation numbered fail_at (1-based) after arming; 0 = never.
static _Atomic uint64_t calls, fail_at;

static void *flaky_alloc(size_t size, size_t align, void *user)
{
	(void)user;
	if (atomic_fetch_add(&calls, 1) + 1 == atomic_load(&fail_at))
		return NULL;
	return aligned_alloc(align, (size + align - 1) / align * align);
}

static void flaky_free(void *ptr, size_t size, size_t align, void *user)
{
	(void)size, (void)align, (void)user;
	free(ptr);
}

Test(cell_grid, allocation_failure_changes_nothing, .timeout = 60)
{
	static const bp_allocator flaky = {flaky_alloc, flaky_free, NULL};
	bp_set_allocator(&flaky);
	enum { SMALL = 100, LARGE = 900 };
	static oracle_box boxes[LARGE];
	const shape *s = &random_shapes[0];
	random_boxes(boxes, LARGE, 2, s->origin[0] - 2, s->cell_size * 9, 600);
	bp_world *small = make_world(boxes, SMALL, 2, 2), *large = make_world(boxes, LARGE, 2, 2);
	const int64_t base = bp_allocated_bytes();
	// Fail each allocation of create + assign(small) + assign(large) in turn.
	uint64_t k = 1;
	for (;; ++k) {
		atomic_store(&calls, 0);
		atomic_store(&fail_at, k);
		bp_cell_grid *g = NULL;
		bp_status status = bp_cell_grid_create(&(bp_cell_grid_def){0}, &g); // no cookie: refused, no allocation
		cr_assert_eq(status, BP_ERR_INVALID_ARGUMENT);
		bp_cell_grid_def def = bp_cell_grid_def_default();
		def.dims = 2;
		def.cells[0] = s->cells[0];
		def.cells[1] = s->cells[1];
		def.origin[0] = s->origin[0];
		def.origin[1] = s->origin[1];
		def.cell_size = s->cell_size;
		status = bp_cell_grid_create(&def, &g);
		if (status != BP_OK) {
			cr_assert_eq(status, BP_ERR_OUT_OF_MEMORY, "k = %llu", (unsigned long long)k);
			cr_assert_null(g);
			cr_assert_eq(bp_allocated_bytes(), base, "k = %llu: leak", (unsigned long long)k);
			continue;
		}
		status = bp_cell_grid_assign(g, small);
		if (status != BP_OK) {
			cr_assert_eq(status, BP_ERR_OUT_OF_MEMORY, "k = %llu", (unsigned long long)k);
			check_assignment(s, g, boxes, 0); // still empty
			cr_assert_eq(bp_cell_grid_assign(g, small), BP_OK);
		}
		check_assignment(s, g, boxes, SMALL);
		status = bp_cell_grid_assign(g, large);
		if (status != BP_OK) {
			cr_assert_eq(status, BP_ERR_OUT_OF_MEMORY, "k = %llu", (unsigned long long)k);
			check_assignment(s, g, boxes, SMALL); // the previous assignment stands
			cr_assert_eq(bp_cell_grid_assign(g, large), BP_OK);
		}
		check_assignment(s, g, boxes, LARGE);
		bool injected = atomic_load(&calls) >= k;
		bp_cell_grid_destroy(g);
		cr_assert_eq(bp_allocated_bytes(), base, "k = %llu: leak", (unsigned long long)k);
		if (!injected)
			break;
	}
	atomic_store(&fail_at, 0);
	// 2 for create (grid, cells) + 2 per growing assign (entities, cells of entities).
	cr_assert_eq(k - 1, 6, "%llu allocations", (unsigned long long)(k - 1));
	bp_world_destroy(small);
	bp_world_destroy(large);
	cr_assert_eq(bp_allocated_bytes(), 0);
	bp_set_allocator(NULL);
}
