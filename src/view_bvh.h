// SPDX-License-Identifier: MIT
// A bounding volume hierarchy over a published frame's entities, for the rays and box casts
// of a view: entities in Morton order of their centres, cut into leaves of BPI_BVH_LEAF, and
// an implicit complete binary tree over the leaves whose node boxes are the exact float
// unions of their children's. A cast walks it near child first, so it visits about log n
// nodes where one sorted axis reads a slab of the world.
#ifndef BP_VIEW_BVH_H
#define BP_VIEW_BVH_H

#include "soa.h"
#include "sort.h"

/// Entities per leaf.
#define BPI_BVH_LEAF 4u

/// Built once per frame, read-only afterwards. Position p holds entity order[p],
/// its bounds min[a][p] / max[a][p]; leaf k holds positions [k * BPI_BVH_LEAF,
/// (k + 1) * BPI_BVH_LEAF) and is node first_leaf + k. Node i (1 <= i < 2 *
/// first_leaf) has children 2i and 2i + 1 and box node_min[a][i] / node_max[a][i];
/// nodes past the last leaf are empty (min +inf, max -inf), which every cast misses.
typedef struct bpi_view_bvh {
	uint32_t count;      ///< entities; 0: none built
	uint32_t first_leaf; ///< a power of two, at least the leaf count
	BPI_ARRAY(uint32_t) order;
	BPI_ARRAY(float) bounds; ///< positions: min x, y, z then max x, y, z arrays of `count`
	BPI_ARRAY(float) nodes;  ///< nodes: the same six arrays of 2 * first_leaf
	const float *min[3], *max[3];
	const float *node_min[3], *node_max[3];
	BPI_ARRAY(bpi_sort_item) items; ///< build scratch
	BPI_ARRAY(float) records;       ///< build scratch: per entity min x, y, z, max x, y, z together
	bpi_radix_scratch radix;
} bpi_view_bvh;

/// Builds the hierarchy of `count` entities of `soa`: members[0 .. count) or,
/// members NULL, the first `count`, reusing its arrays. BP_ERR_OUT_OF_MEMORY
/// leaves count = 0.
bp_status bpi_view_bvh_build(bpi_view_bvh *bvh, const bpi_soa *soa, const uint32_t *members, uint32_t count, int dims,
	int threads);
/// Gives back the build's scratch, for a hierarchy that is built once and kept.
void bpi_view_bvh_drop_scratch(bpi_view_bvh *bvh);
void bpi_view_bvh_free(bpi_view_bvh *bvh);

#endif
