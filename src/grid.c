// SPDX-License-Identifier: MIT
// grid: a uniform grid (with coarser levels for big entities) laid densely over the
// scene bounds of each step. The work is in cells.c, shared with hash.
#include "cells.h"

typedef struct grid_index {
	bpi_index base; // first member: converts to and from bpi_index *
	bpi_cells cells;
} grid_index;

static bp_status grid_create(bpi_index **out)
{
	return bpi_index_new(sizeof(grid_index), &bpi_grid_algorithm, out);
}

static void grid_destroy(bpi_index *base)
{
	grid_index *index = (grid_index *)base;
	bpi_cells_free(&index->cells);
	bpi_pair_chunks_free(&index->base.chunks);
	bpi_free(index, sizeof *index);
}

static bp_status grid_find_pairs(bpi_index *base, const bpi_scene *scene, bpi_pair_buffer *out, bp_frame_stats *stats)
{
	grid_index *index = (grid_index *)base;
	return bpi_cells_find_pairs(&index->cells, false, scene, &index->base.chunks, out, stats);
}

const bpi_algorithm bpi_grid_algorithm = {
	.id = BP_ALGO_GRID,
	.name = "grid",
	.create = grid_create,
	.destroy = grid_destroy,
	.find_pairs = grid_find_pairs,
};
