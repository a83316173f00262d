// SPDX-License-Identifier: MIT
// What an incremental world keeps across steps (struct bpi_incremental), and the helpers its
// paths share: the resting grid, sorting pairs, indices to cover, a list of entities as a scene.
#ifndef BP_INCREMENTAL_STATE_H
#define BP_INCREMENTAL_STATE_H

#include "base/bits.h"
#include "incremental/incremental.h"
#include "incremental/incremental_cross.h"
#include "incremental/incremental_active.h"
#include "parallel/sort.h"

/// A position of the settled level carries this bit (positions are below 2^31).
#define BPI_SETTLED_BIT 0x80000000u

struct bpi_incremental {
	bpi_indexes full;      ///< the grid of the last full step: its cells are the resting index
	bpi_active_pairs among; ///< active x active: the pairs of their fat boxes
	bool resting_valid;    ///< full.of[BP_ALGO_GRID] holds the resting index
	uint32_t resting_count;     ///< entities at the full step
	uint32_t span;              ///< dense indices gone, position and filter cover
	/// Per dense index below span, a bit (base/bits.h): not resting (active, or created
	/// since). A bit, not a byte: every merge with stale kept pairs looks up both entities
	/// of each kept pair, at random, and 128 KB at 1M entities stays in cache.
	BPI_ARRAY(uint64_t) gone;
	/// Per dense index below span, a bit: stopped resting this step. The only stale
	/// entries candidate lists can hold.
	BPI_ARRAY(uint64_t) left_now;
	/// Per resting index: its record in the full step's grid, or BPI_SETTLED_BIT and
	/// its record in the settled grid (hidden when it leaves).
	BPI_ARRAY(uint32_t) position;
	bpi_cells settled, settled_spare; ///< the settled grid, and the one the next settling builds
	BPI_ARRAY(uint32_t) settled_of;   ///< per entity of the settled grid's scene: its dense index
	uint32_t settled_count;
	uint32_t settled_left;            ///< members that stopped resting since the settled grid was built
	bool settled_full;                ///< quiet entities found no room there: the next step is full
	BPI_ARRAY(uint32_t) settling;     ///< scratch: the next settled members
	bpi_pair_buffer next_pairs;       ///< scratch: the next kept pairs
	/// Per resting index, the filter and flags a query hit is accepted by, packed:
	/// one cache miss per hit instead of three (they never change while it rests).
	BPI_ARRAY(bpi_rest_filter) filter;
	bpi_pair_buffer resting_pairs; ///< pairs among resting entities, sorted by (lo, hi)
	bool rest_stale;               ///< resting_pairs may hold pairs of entities gone from the resting index

	BPI_ARRAY(uint32_t) active; ///< dense indices of the active entities, ascending
	uint32_t active_count;
	BPI_ARRAY(uint8_t) is_active; ///< per dense index

	// Per-step scratch.
	BPI_ARRAY(bpi_sort_item) joining; ///< entities becoming active this step, sorted
	BPI_ARRAY(uint32_t) merged;       ///< the next active list
	bpi_radix_scratch radix;
	BPI_ARRAY(float) sub_bounds;      ///< the active entities' bounds, 2 * dims arrays of active_count
	BPI_ARRAY(uint64_t) sub_filter;   ///< their categories then masks
	BPI_ARRAY(uint8_t) sub_flags;
	bpi_cross cross;                  ///< active x resting: fat boxes and their candidates
	bpi_pair_buffer fresh;            ///< active pairs, then sorted
	BPI_ARRAY(bp_pair) sort_scratch;
	BPI_ARRAY(size_t) merge_counts;   ///< scratch of bpi_pairs_merge
	bool stepped; ///< a step succeeded since the state was made
	/// The last step found its pairs from the kept pairs of every entity in dense
	/// order (bpi_kept_pairs): the true bounds it packed are the last step's.
	bool kept_last;

	bool neighbours;         ///< every entity is active (in dense order), in the neighbour list
	bool moving;             ///< every entity is active (in dense order) and none rests
	/// A full step kept its bounds for a try of the moving state: the next step decides
	/// from them whether to enter it, and lays the state out only then.
	bool entering;
	BPI_ARRAY(float) entry_bounds; ///< those bounds: 2 * dims arrays of entry_count
	uint32_t entry_count;
	uint32_t moving_steps;   ///< moving steps of the current stay
	uint32_t moving_wait;    ///< full steps before moving is tried again
	uint32_t moving_backoff; ///< the wait after the last stay that did not pay
	double moving_work;      ///< the moving steps' counted work by the model, blended
	uint32_t neighbour_steps;   ///< steps the current neighbour list served
	uint32_t neighbour_wait;    ///< full steps before a neighbour list is found again
	uint32_t neighbour_backoff; ///< the wait after the last list that did not pay
	size_t moving_pairs;     ///< pairs of the last step
};

/// The full step's grid, whose cells are the resting index.
static inline bpi_cells *bpi_resting_cells(bpi_incremental *x)
{
	return &((bpi_cells_index *)x->full.of[BP_ALGO_GRID])->cells;
}

/// Sorts `p` by (lo, hi); false (p untouched) when memory runs out.
bool bpi_incremental_sort_pairs(bpi_incremental *x, bpi_pair_buffer *p, int threads);

/// Covers dense indices up to n: those created since are not resting.
bool bpi_incremental_cover(bpi_incremental *x, uint32_t n);

/// Every entity active in dense order, its fat box its bounds grown by `margin`
/// (bpi_cross_start_grown), none resting and nothing kept. False (nothing changed)
/// when memory runs out.
bool bpi_every_active(bpi_incremental *x, const bpi_scene *scene, float margin, bool searched);

/// The entities list[0 .. m) (dense indices) as a scene of their own, in list
/// order, in the scratch arrays: the active entities for both passes,
/// and after it the members of a new settled grid.
/// Without `filters` only the bounds are copied, and the scene's filter arrays are NULL:
/// a grid's build reads no filter.
bp_status bpi_subset_scene(bpi_incremental *x, const bpi_scene *s, const uint32_t *list, uint32_t m, bool filters,
	bpi_scene *sub);

#endif
