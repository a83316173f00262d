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
/// Floats per leaf block: min x, y, z, then max x, y, z, BPI_BVH_LEAF lanes each,
/// so a leaf's boxes lie on two cache lines rather than on six arrays.
#define BPI_BVH_LEAF_FLOATS (6u * BPI_BVH_LEAF)
/// Floats per block of sibling nodes 2i and 2i + 1: the same six bounds, two lanes
/// each, padded to one cache line, which a walk reads whole when it tests both.
#define BPI_BVH_PAIR_FLOATS 16u

/// Built once, read-only afterwards. Position p holds entity order[p]; leaf k holds
/// positions [k * BPI_BVH_LEAF, (k + 1) * BPI_BVH_LEAF), lane p % BPI_BVH_LEAF of its
/// block, and is node first_leaf + k. Node i (1 <= i < 2 * first_leaf) has children
/// 2i and 2i + 1 and its box in lane i % 2 of node block i / 2; its box is the exact
/// float union of its children's. Nodes past the last leaf are empty (min +inf,
/// max -inf), which every test misses.
typedef struct bpi_view_bvh {
	uint32_t count;      ///< entities; 0: none built
	uint32_t first_leaf; ///< a power of two, at least the leaf count
	BPI_ARRAY(uint32_t) order;
	BPI_ARRAY(float) leaves; ///< leaf blocks
	BPI_ARRAY(float) nodes;  ///< node blocks
	BPI_ARRAY(bpi_sort_item) items; ///< build scratch
	BPI_ARRAY(float) records;       ///< build scratch: per entity min x, y, z, max x, y, z together
	bpi_radix_scratch radix;
} bpi_view_bvh;

/// The block of leaf k.
static inline const float *bpi_bvh_leaf(const bpi_view_bvh *h, uint32_t leaf)
{
	return h->leaves.data + (size_t)leaf * BPI_BVH_LEAF_FLOATS;
}

/// The block holding node i (lane i % 2).
static inline const float *bpi_bvh_pair(const bpi_view_bvh *h, uint32_t node)
{
	return h->nodes.data + (size_t)(node >> 1) * BPI_BVH_PAIR_FLOATS;
}

/// Builds the hierarchy of `count` entities of `soa`: members[0 .. count) or,
/// members NULL, the first `count`, reusing its arrays. BP_ERR_OUT_OF_MEMORY
/// leaves count = 0.
bp_status bpi_view_bvh_build(bpi_view_bvh *bvh, const bpi_soa *soa, const uint32_t *members, uint32_t count, int dims,
	int threads);
/// Gives back the build's scratch, for a hierarchy that is built once and kept.
void bpi_view_bvh_drop_scratch(bpi_view_bvh *bvh);
void bpi_view_bvh_free(bpi_view_bvh *bvh);

#endif
