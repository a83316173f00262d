// SPDX-License-Identifier: MIT
// grid: a uniform grid (with coarser levels for big entities) laid densely over the
// scene bounds of each step. The work is in cells_build.c and cells_find.c, shared with hash.
#include "algorithms/cells.h"

static bp_status grid_build(bpi_index *index, const bpi_scene *scene, bpi_build *build)
{
	return bpi_cells_build(&((bpi_cells_index *)index)->cells, false, scene, build);
}

const bpi_algorithm bpi_grid_algorithm = {
	.name = "grid",
	.index_size = sizeof(bpi_cells_index),
	.release = bpi_cells_index_release,
	.build = grid_build,
	.find = bpi_cells_index_find,
};
