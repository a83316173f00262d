// SPDX-License-Identifier: MIT
// Static entities in a tree of their own. Two static entities never pair, so when few
// entities are dynamic the algorithm runs over those alone and each walks the tree of the
// static ones: no static x static candidate is made. The tree is kept across steps while
// the static entities stay, and refit when only their bounds changed.
#ifndef BP_STATICS_H
#define BP_STATICS_H

#include "algorithms/index.h"
#include "tree/bvh.h"

/// The split pays when at most one entity in BPI_STATICS_MOVER_SHARE is dynamic: a
/// dynamic entity's walk of the tree, which misses the cache on its way down, costs
/// about as much as this many entities' share of a full step (perf/README.md,
/// "bp_perf_statics").
#define BPI_STATICS_MOVER_SHARE 16u

typedef struct bpi_statics {
	bpi_bvh tree;                     ///< over `members`, when `built`
	bool built;
	uint32_t static_count;            ///< entries of members and bounds
	uint64_t moved_since_build;       ///< static entities refit since the tree was built
	BPI_ARRAY(uint32_t) members;      ///< static dense indices, ascending
	BPI_ARRAY(float) bounds;          ///< their bounds as the tree holds them, 2 dims floats each
	uint32_t mover_count;
	BPI_ARRAY(uint32_t) movers;       ///< dynamic dense indices, ascending
	BPI_ARRAY(float) mover_bounds;    ///< 2 dims arrays of mover_count
	BPI_ARRAY(uint64_t) mover_filters; ///< categories, then masks
	BPI_ARRAY(uint8_t) mover_flags;
	BPI_ARRAY(uint32_t) chunk_counts; ///< per chunk of the scene: static entities, then their prefix
	BPI_ARRAY(uint8_t) chunk_marks;   ///< per chunk: a member changed, a mover is filtered
	BPI_ARRAY(uint32_t) chunk_moved;  ///< per chunk: members whose bounds changed
	bpi_scene movers_scene;           ///< the dynamic entities alone, dense in `movers` order
	BPI_ARRAY(bpi_sort_item) walk_order; ///< movers by the code of their centres in the tree
	bpi_radix_scratch radix;
	bpi_pair_buffer movers_pairs;     ///< what the algorithm found among the movers
	bpi_pair_chunks chunks;           ///< dynamic x static pairs, per chunk of movers
} bpi_statics;

/// Decides from the counts whether `scene` splits and, when it does, makes the scene of its
/// dynamic entities (*movers, pointing into `statics`) and the tree of its static ones, built,
/// refit or kept. *movers = NULL: no split, nothing else done. Fails only for memory.
bp_status bpi_statics_split(bpi_statics *statics, const bpi_scene *scene, const bpi_scene **movers);

/// After the algorithm wrote the movers' pairs into statics->movers_pairs (indices of the
/// movers' scene): makes `pairs` those pairs in dense indices of `scene`, then every
/// dynamic x static pair, movers in Morton order and each one's by static entity. Adds the
/// walks' tests and times to stats. `pairs` keeps its pairs on failure.
bp_status bpi_statics_join(bpi_statics *statics, const bpi_scene *scene, bpi_pair_buffer *pairs,
	bp_frame_stats *stats);

/// Gives back the pair memory of the split (charged to the steps' account), for steps
/// that do not split, that failed, or whose account is above its limit.
void bpi_statics_drop_pairs(bpi_statics *statics);
void bpi_statics_free(bpi_statics *statics);

/// Test hook: scenes split when at most one entity in `share` is dynamic (1: whenever
/// one is static). Warning: call only while no step runs.
void bpi_set_statics_mover_share(uint32_t share);

#endif
