// SPDX-License-Identifier: MIT
// hash: an unbounded hashed grid (with coarser levels for big entities); integer cell
// coordinates hashed into a table sized from N. The work is in cells.c, shared with grid.
#include "cells.h"

typedef struct hash_index {
	bpi_index base; // first member: converts to and from bpi_index *
	bpi_cells cells;
} hash_index;

static bp_status hash_create(bpi_index **out)
{
	return bpi_index_new(sizeof(hash_index), &bpi_hash_algorithm, out);
}

static void hash_destroy(bpi_index *base)
{
	hash_index *index = (hash_index *)base;
	bpi_cells_free(&index->cells);
	bpi_pair_chunks_free(&index->base.chunks);
	bpi_free(index, sizeof *index);
}

static bp_status hash_find_pairs(bpi_index *base, const bpi_scene *scene, bpi_pair_buffer *out, bp_frame_stats *stats)
{
	hash_index *index = (hash_index *)base;
	return bpi_cells_find_pairs(&index->cells, true, scene, &index->base.chunks, out, stats);
}

const bpi_algorithm bpi_hash_algorithm = {
	.id = BP_ALGO_HASH,
	.name = "hash",
	.create = hash_create,
	.destroy = hash_destroy,
	.find_pairs = hash_find_pairs,
};
