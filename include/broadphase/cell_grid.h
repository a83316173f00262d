// SPDX-License-Identifier: MIT
// Grid neighbourhoods for agent-based simulations: a bounded (or toroidal) grid of
// cells, entities binned by their centre, and iteration over a cell's neighbours.
#ifndef BROADPHASE_CELL_GRID_H
#define BROADPHASE_CELL_GRID_H

#include <stdbool.h>
#include "base.h"
#include "world.h"

#ifdef __cplusplus
extern "C" {
#endif

// Threads. bp_cell_grid_assign and bp_cell_grid_destroy change the grid: one thread, while no
// query runs on it (and, for assign, while the world's writer leaves the world alone). Every
// other function only reads the grid, so any number of threads may call them at once.

/// A fixed grid of cells[0] x cells[1] (x cells[2]) square cells of edge
/// cell_size, whose cell (0, 0, 0) has its lower corner at origin. Cells are
/// numbered x fastest: cell = x + cells[0] * (y + cells[1] * z).
typedef struct bp_cell_grid bp_cell_grid;

/// Grid settings. Always start from bp_cell_grid_def_default(); fields are only
/// ever appended.
typedef struct bp_cell_grid_def {
	int dims;          ///< 2 or 3; must equal the dims of the worlds it bins. Default 3.
	float origin[3];   ///< lower corner of cell 0, finite (z ignored in 2D). Default 0.
	float cell_size;   ///< cell edge, > 0 and finite. Default 1.
	uint32_t cells[3]; ///< cells per axis, each >= 1, product <= 2^31 (z ignored in 2D). Default 1.
	/// false (bounded): a point outside the grid belongs to the nearest border
	/// cell (coordinates are clamped per axis), and the border cells have fewer
	/// neighbours. true (toroidal): coordinates wrap (floor-mod cells[k]), so
	/// every cell has the full neighbourhood, minus duplicates on axes with fewer
	/// than 3 cells. Default false.
	bool toroidal;
	int32_t internal_value; ///< set by bp_cell_grid_def_default; do not touch
} bp_cell_grid_def;

/// Any thread.
BP_API bp_cell_grid_def bp_cell_grid_def_default(void);

/// Creates an empty grid (every cell holds no entity until bp_cell_grid_assign).
/// Takes memory for cells + 1 counters. Errors: BP_ERR_INVALID_ARGUMENT for a
/// NULL pointer, a def not from bp_cell_grid_def_default, dims not 2 or 3, or
/// cell_size <= 0; BP_ERR_NOT_FINITE for a NaN/infinite origin or cell_size;
/// BP_ERR_OUT_OF_RANGE for a zero cell count on some axis or more than 2^31
/// cells in all; BP_ERR_OUT_OF_MEMORY. On error *out is NULL and nothing is
/// allocated. Any thread.
BP_API bp_status bp_cell_grid_create(const bp_cell_grid_def *def, bp_cell_grid **out);
/// Destroys a grid. NULL is ignored. Warning: no query may be running on it.
BP_API void bp_cell_grid_destroy(bp_cell_grid *grid);

/// Bins every entity of the world into one cell by the centre of its bounds,
/// (min + max) / 2, computed in double: cell coordinate k is
/// floor((centre[k] - origin[k]) / cell_size), clamped to [0, cells[k] - 1]
/// (bounded) or taken floor-mod cells[k] (toroidal). Entities are the world's
/// dense indices at the time of the call (bp_world_entity_at and
/// bp_world_user_keys map them to handles and keys); each cell then lists its
/// entities in ascending dense index. Replaces the previous assignment.
/// Cost O(entities + cells); the centres are computed on the world's threads
/// (bp_world_set_thread_count). Errors: BP_ERR_INVALID_ARGUMENT for NULL or when
/// the world's dims differ from the grid's; BP_ERR_OUT_OF_MEMORY, also when the
/// world's threads cannot start. On error the grid keeps its previous assignment.
/// Warning: the world must not change during the call, and no query may run on
/// the grid during it. After it returns, every query below only reads the grid,
/// so any number of threads may query it at once.
BP_API bp_status bp_cell_grid_assign(bp_cell_grid *grid, const bp_world *world);

/// Number of cells (cells[0] * cells[1] * cells[2] in 3D, cells[0] * cells[1] in 2D).
/// Any thread.
BP_API uint32_t bp_cell_grid_cell_count(const bp_cell_grid *grid);
/// Number of entities binned by the last assign (0 before the first). Any thread.
BP_API uint32_t bp_cell_grid_entity_count(const bp_cell_grid *grid);

/// The cell holding a point, by the same rule as assign (clamped or wrapped).
/// Reads dims floats. BP_ERR_INVALID_ARGUMENT for NULL; BP_ERR_NOT_FINITE for a
/// NaN/infinite coordinate. Any thread.
BP_API bp_status bp_cell_grid_cell_of(const bp_cell_grid *grid, const float *point, uint32_t *cell);
/// Linear index of the cell at integer coordinates (dims of them).
/// BP_ERR_OUT_OF_RANGE when a coordinate is >= cells[k] (no wrapping here). Any thread.
BP_API bp_status bp_cell_grid_cell_index(const bp_cell_grid *grid, const uint32_t *coords, uint32_t *cell);
/// Integer coordinates of a cell; coords[2] is 0 in 2D. BP_ERR_OUT_OF_RANGE
/// when cell >= bp_cell_grid_cell_count. Any thread.
BP_API bp_status bp_cell_grid_cell_coords(const bp_cell_grid *grid, uint32_t cell, uint32_t coords[3]);
/// The cell the last assign put an entity (dense index) in. BP_ERR_OUT_OF_RANGE
/// when entity >= bp_cell_grid_entity_count. Any thread.
BP_API bp_status bp_cell_grid_entity_cell(const bp_cell_grid *grid, uint32_t entity, uint32_t *cell);

/// Writes the neighbours of a cell into out and their number into *count: the cells
/// whose coordinates differ from the cell's by at most 1 on every axis (8 in 2D,
/// 26 in 3D). Bounded: those outside the grid are left out (3 / 5 / 8 in 2D
/// for corner / edge / interior cells). Toroidal: coordinates wrap, and a cell
/// reached twice (an axis of 2 cells) is listed once and the cell itself never
/// (an axis of 1 cell), so a 1x1 toroidal grid has none. Always in ascending cell
/// index. BP_ERR_INVALID_ARGUMENT for NULL; BP_ERR_OUT_OF_RANGE for a cell out of
/// range. Any thread.
BP_API bp_status bp_cell_grid_neighbour_cells(const bp_cell_grid *grid, uint32_t cell, uint32_t out[26],
	uint32_t *count);

/// The entities of one cell, ascending dense index: a pointer into the grid,
/// valid until the next assign or destroy. BP_ERR_OUT_OF_RANGE when cell is out
/// of range. Any thread.
BP_API bp_status bp_cell_grid_cell_entities(const bp_cell_grid *grid, uint32_t cell, const uint32_t **entities,
	uint32_t *count);

/// Calls fn(entity, user) for every entity in the cell's neighbour cells, and
/// in the cell itself when include_cell, each exactly once: cells in ascending
/// index (the cell itself among them), entities of a cell in ascending dense
/// index. When fn returns false the walk stops there (still BP_OK).
/// BP_ERR_INVALID_ARGUMENT for NULL; BP_ERR_OUT_OF_RANGE for a cell out of range.
/// Any thread; fn runs on the calling thread.
BP_API bp_status bp_cell_grid_for_each_near(const bp_cell_grid *grid, uint32_t cell, bool include_cell,
	bool (*fn)(uint32_t entity, void *user), void *user);

/// Folds fn over the same entities in the same order as bp_cell_grid_for_each_near:
/// acc = init, then acc = fn(acc, entity, user) for each; *out = acc.
/// Same errors as bp_cell_grid_for_each_near. Any thread.
BP_API bp_status bp_cell_grid_reduce_near(const bp_cell_grid *grid, uint32_t cell, bool include_cell,
	double (*fn)(double acc, uint32_t entity, void *user), void *user, double init, double *out);

/// The entities in the cell holding a point (bp_cell_grid_cell_of) and in its
/// neighbour cells, in for-each order. Writes at most `capacity` of them to out
/// (out may be NULL when capacity is 0) and sets *total to how many there are in
/// all; when that is more than a capacity > 0 it returns BP_ERR_OUT_OF_RANGE (as
/// the view queries do) and the first `capacity` are written: call again with a
/// buffer of *total. Capacity 0 counts: BP_OK with *total set. BP_ERR_INVALID_ARGUMENT for NULL; BP_ERR_NOT_FINITE for a
/// NaN/infinite coordinate. Any thread.
BP_API bp_status bp_cell_grid_near_point(const bp_cell_grid *grid, const float *point, uint32_t *out,
	size_t capacity, size_t *total);

#ifdef __cplusplus
}
#endif
#endif
