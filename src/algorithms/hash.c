// SPDX-License-Identifier: MIT
// hash: an unbounded hashed grid (with coarser levels for big entities); integer cell
// coordinates hashed into a table sized from N. The work is in cells_build.c and cells_find.c, shared with grid.
#include "algorithms/cells.h"

static bp_status hash_build(bpi_index *index, const bpi_scene *scene, bpi_build *build)
{
	return bpi_cells_build(&((bpi_cells_index *)index)->cells, true, scene, build);
}

const bpi_algorithm bpi_hash_algorithm = {
	.name = "hash",
	.index_size = sizeof(bpi_cells_index),
	.release = bpi_cells_index_release,
	.build = hash_build,
	.find = bpi_cells_index_find,
};
