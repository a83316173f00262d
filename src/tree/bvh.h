// SPDX-License-Identifier: MIT
// A bounding volume hierarchy over listed entities (a view's query hierarchy, the step's tree
// of static entities): entities by size class, then in Morton order of their centres, split
// where the codes' highest differing bit changes into leaves of at most BPI_BVH_LEAF, node
// boxes the exact float unions of their children's. A query walks about log n nodes where a
// scan reads the whole world.
#ifndef BP_TREE_BVH_H
#define BP_TREE_BVH_H

#include "parallel/soa.h"
#include "parallel/sort.h"

/// Entities per leaf, at most.
#define BPI_BVH_LEAF 4u
/// The most entities a hierarchy holds: a slot (leaf * BPI_BVH_LEAF + lane) fits 32 bits.
#define BPI_BVH_MAX_COUNT (UINT32_MAX / BPI_BVH_LEAF)
/// Floats per leaf block: min x, y, z, then max x, y, z, BPI_BVH_LEAF lanes each,
/// so a leaf's boxes lie on two cache lines rather than on six arrays.
#define BPI_BVH_LEAF_FLOATS (6u * BPI_BVH_LEAF)
/// Words per node block: the boxes of a node's two children (six bounds, two lanes
/// each), then their references: one cache line, which a walk reads whole when it
/// tests both children.
#define BPI_BVH_BLOCK_WORDS 16u
/// A reference with this bit is leaf (ref & ~BPI_BVH_LEAF_BIT), else node block ref.
#define BPI_BVH_LEAF_BIT 0x80000000u
/// Depth of the walks' stacks: a node pops one entry and pushes two, so depth + 1
/// at most, and the depth is at most the code's bits (32) plus log2 of a run of equal codes.
#define BPI_BVH_STACK 96

/// Build scratch: a subtree below the top of the tree, sorted items [lo, hi), which one
/// thread lays out. Its node blocks and leaves are numbered from first_block and
/// first_leaf on, where the serial preorder puts them.
typedef struct bpi_bvh_subtree {
	uint32_t lo, hi;
	uint32_t blocks, leaves;
	uint32_t first_block, first_leaf;
} bpi_bvh_subtree;

/// Built once, read-only afterwards. The entities are sorted by their size class (boxes
/// far larger than the typical apart, largest first), then by the Morton code of their
/// centres, and split top down where the codes' highest differing bit changes (the halves
/// of a range of equal codes), down to ranges of at most BPI_BVH_LEAF: a node covers one
/// cell of the Morton grid, so siblings lie apart in space.
/// Block 0 holds the root in lane 0 (lane 1 is unused); block j >= 1 holds the two
/// children of inner node j. Each box is the exact float union of what it holds.
/// Leaf k holds leaf_size[k] entities, order[4k + lane], boxes in its leaf block.
/// What a node's entities can pass: the OR of their categories and of their masks, and
/// their kinds (bit 1 << bp_kind). A query filter that none of them passes skips the node.
typedef struct bpi_bvh_summary {
	uint64_t category, mask;
	uint32_t kinds;
} bpi_bvh_summary;

typedef struct bpi_bvh {
	uint32_t count;  ///< entities; 0: none built
	uint32_t leaves; ///< leaf blocks
	uint32_t blocks; ///< node blocks, the root's included
	BPI_ARRAY(uint32_t) order;     ///< BPI_BVH_LEAF per leaf
	BPI_ARRAY(uint8_t) leaf_size;  ///< entities of each leaf
	BPI_ARRAY(float) leaf_boxes;   ///< leaf blocks
	BPI_ARRAY(uint32_t) nodes;     ///< node blocks (floats and references, BPI_BVH_BLOCK_WORDS each)
	/// Per entity of the build's list (members[i], or i without one): its place in order,
	/// leaf * BPI_BVH_LEAF + lane, so a refit reads the bounds in the list's order and
	/// writes each box where it goes, rather than reading them in tree order.
	BPI_ARRAY(uint32_t) slot;
	/// Built with filters (bpi_bvh_bounds.category): per node block, its two lanes' summaries.
	BPI_ARRAY(bpi_bvh_summary) summaries;
	bool summarized;
	// The layout a refit follows: the subtrees' blocks lie apart, so each is boxed on its own
	// thread, and the few blocks above them after.
	uint32_t parts;                   ///< subtrees
	uint32_t top_count;               ///< blocks above the subtrees
	BPI_ARRAY(uint32_t) part_blocks;  ///< per subtree: its first block, its count of blocks
	BPI_ARRAY(double) part_cost;      ///< per subtree: the cost of its blocks
	BPI_ARRAY(uint32_t) top;          ///< the blocks above the subtrees, children before parents
	/// The build this shape comes from, unique in the process (0: none): a refit copy
	/// into a tree that still holds the same shape copies none of it.
	uint64_t shape;
	/// Half the surface (2D: of the perimeter) of every node box, summed: what a walk pays
	/// for the boxes it opens. cost is the tree's now, built_cost at its build; a refit
	/// keeps the shape, and its cost grows as the entities drift from where it was built.
	double cost, built_cost;
} bpi_bvh;

/// What a build works in and no walk reads: kept by whoever builds, apart from the trees
/// it builds, so a tree that readers share holds only itself and the next build reuses it.
typedef struct bpi_bvh_scratch {
	BPI_ARRAY(bpi_sort_item) items;
	BPI_ARRAY(float) records;  ///< per entity min x, y, z, max x, y, z together
	BPI_ARRAY(double) spans;   ///< per chunk of entities, the least and greatest centre on each axis
	BPI_ARRAY(uint8_t) sizes;        ///< per entity, its size (bvh.c)
	BPI_ARRAY(uint32_t) size_counts; ///< per chunk of entities, their count of each size
	BPI_ARRAY(bpi_bvh_subtree) subtrees; ///< left to right
	BPI_ARRAY(uint32_t) top;        ///< the node blocks above the subtrees, children before parents
	BPI_ARRAY(uint32_t) leaf_first; ///< a subtree's leaves' first items, from index lo on
	BPI_ARRAY(uint32_t) links;      ///< a subtree's node blocks' two references within it, from index 2 lo on
	bpi_radix_scratch radix;
} bpi_bvh_scratch;

/// The block of leaf k.
static inline const float *bpi_bvh_leaf(const bpi_bvh *h, uint32_t leaf)
{
	return h->leaf_boxes.data + (size_t)leaf * BPI_BVH_LEAF_FLOATS;
}

/// Node block j's boxes: six bounds of two lanes.
static inline const float *bpi_bvh_block(const bpi_bvh *h, uint32_t block)
{
	return (const float *)(const void *)(h->nodes.data + (size_t)block * BPI_BVH_BLOCK_WORDS);
}

/// The reference of lane `lane` of node block j.
static inline uint32_t bpi_bvh_ref(const bpi_bvh *h, uint32_t block, uint32_t lane)
{
	return h->nodes.data[(size_t)block * BPI_BVH_BLOCK_WORDS + 12 + lane];
}

/// The boxes a hierarchy is built over, by entity: `dims` arrays of mins and of maxes; and,
/// for node summaries, their categories, masks and flags (BP_FLAG_*; NULL: no summaries).
typedef struct bpi_bvh_bounds {
	const float *min[3];
	const float *max[3];
	const uint64_t *category, *mask;
	const uint8_t *flags;
} bpi_bvh_bounds;

/// The bounds and filters of a store's entities.
static inline bpi_bvh_bounds bpi_bvh_bounds_of(const bpi_soa *soa)
{
	return (bpi_bvh_bounds){{soa->min[0], soa->min[1], soa->min[2]}, {soa->max[0], soa->max[1], soa->max[2]},
		soa->category, soa->mask, soa->flags};
}

/// The summary of lane `lane` of node block j of a summarized hierarchy.
static inline const bpi_bvh_summary *bpi_bvh_summary_of(const bpi_bvh *h, uint32_t block, uint32_t lane)
{
	return &h->summaries.data[2 * (size_t)block + lane];
}

/// Builds the hierarchy of `count` entities of `bounds`: members[0 .. count) or,
/// members NULL, the first `count`, reusing its arrays and working in `scratch`, on up
/// to `threads` threads of the bound executor. Every array of bvh comes out the same for
/// any thread count and any scratch. BP_ERR_OUT_OF_MEMORY (also past BPI_BVH_MAX_COUNT)
/// leaves count = 0.
bp_status bpi_bvh_build(bpi_bvh *bvh, bpi_bvh_scratch *scratch, const bpi_bvh_bounds *bounds, const uint32_t *members,
	uint32_t count, int dims, int threads);
/// The Morton code of the centre of a box (`record`: min x, y, z, then max x, y, z) over the
/// built hierarchy's root box: boxes walked in the order of their codes visit much the
/// same nodes one after the other, so the walks find them in cache.
uint32_t bpi_bvh_walk_code(const bpi_bvh *bvh, const float *record, int dims);
/// Gives the built hierarchy the current boxes of its entities, from `bounds`, keeping
/// its shape: every box is again the exact union of what it holds, so walks stay exact
/// while the tree may fit worse than a build would (its cost says how much). `members`
/// is the list it was built over, the same entities in the same order (NULL: none). On
/// up to `threads` threads, the same for any count (bvh_refit.c).
void bpi_bvh_refit(bpi_bvh *bvh, const bpi_bvh_bounds *bounds, const uint32_t *members, int dims, int threads);
/// The same into `to`, a copy of `from`'s shape, leaving `from` as it was (readers may
/// walk it meanwhile). With `filters_kept` no entity's category, mask or flags differ from
/// when `from`'s summaries were made, so they are copied rather than gathered again.
/// BP_ERR_OUT_OF_MEMORY leaves to->count = 0.
bp_status bpi_bvh_refit_copy(bpi_bvh *to, const bpi_bvh *from, const bpi_bvh_bounds *bounds, const uint32_t *members,
	bool filters_kept, int dims, int threads);
/// Writes into node block j's two lanes the boxes (and with `summarize` the summaries) of
/// what they hold, which must be made; returns the block's part of the cost. For bvh.c
/// and bvh_refit.c.
double bpi_bvh_box_block(bpi_bvh *bvh, uint32_t block, const bpi_bvh_bounds *bounds, bool summarize, int dims);
/// bpi_bvh_box_block of node blocks [first, first + count) from the last back, each after
/// the blocks below it; returns their costs summed in that order. For bvh_refit.c.
double bpi_bvh_box_blocks(bpi_bvh *bvh, uint32_t first, uint32_t count, const bpi_bvh_bounds *bounds, bool summarize,
	int dims);
/// Gives back the spare room of a hierarchy that is built once and kept.
void bpi_bvh_trim(bpi_bvh *bvh);
void bpi_bvh_free(bpi_bvh *bvh);
void bpi_bvh_scratch_free(bpi_bvh_scratch *scratch);

#endif
