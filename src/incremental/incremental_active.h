// SPDX-License-Identifier: MIT
// Active x active (docs/design.md "Incremental path"): the pairs among the active entities, through the fat boxes
// their searches of the resting index made (incremental_cross.h).
#ifndef BP_INCREMENTAL_ACTIVE_H
#define BP_INCREMENTAL_ACTIVE_H

#include "incremental/incremental_columns.h"
#include "incremental/incremental_cross.h"
#include "algorithms/pipeline.h"
#include "parallel/sort.h"

/// State kept across incremental steps; zero-initialised is empty (and not valid).
typedef struct bpi_active_pairs {
	/// Pairs of positions in the active list (lo < hi) whose fat boxes overlap and
	/// whose filters accept each other: while neither entity searches again, they
	/// hold every pair of the two that can overlap.
	BPI_ARRAY(bp_pair) kept;
	size_t kept_count;
	BPI_ARRAY(bpi_sort_item) order; ///< positions by fat lo x, as last sorted
	uint32_t order_count;           ///< 0: sort afresh
	bpi_columns columns;            ///< the fat boxes in columns, for the searchers' sweep
	bpi_columns coarse;             ///< those too wide for them, in columns of their own
	BPI_ARRAY(bpi_sort_item) wide_items; ///< scratch: the wide ones in x order
	BPI_ARRAY(bpi_active_row) rows_by_position; ///< scratch: the fat boxes as rows, for a layout
	BPI_ARRAY(bpi_active_row) wide_rows; ///< scratch: the extra list's rows too wide for the columns
	uint32_t merges;                ///< layouts that merged the extra list since one planned the bands
	bool columns_current;           ///< they hold every fat box but those in `extra`
	BPI_ARRAY(bpi_active_row) extra; ///< fat boxes of the positions that searched since the columns were laid out
	uint32_t extra_count;
	BPI_ARRAY(uint32_t) in_extra;   ///< by position: 1 + its entry in `extra` (its row is out of date), or 0
	BPI_ARRAY(uint64_t) stale;      ///< by position, a bit (bpi_bit_get): in `extra`
	bpi_columns extra_columns;      ///< `extra` on the bands of `columns`, laid out every step it changes
	BPI_ARRAY(bpi_active_row) extra_wide; ///< the rows of `extra` too wide for those bands
	uint32_t extra_wide_count;
	uint64_t extra_reads;           ///< rows of `extra` laid out or read one by one since the columns were
	BPI_ARRAY(bpi_box4) boxes;      ///< the true bounds by position, packed for the re-test
	uint32_t boxes_count;           ///< positions of `boxes` packed by the last call; 0: none
	BPI_ARRAY(size_t) written;      ///< scratch: pairs per chunk of the re-test
	BPI_ARRAY(uint8_t) searched;    ///< scratch: by position, 1 when it searched this step
	BPI_ARRAY(bp_pair) spare;       ///< scratch: sorting and merging the kept pairs
	bool sorted;                    ///< `kept` is sorted by (lo, hi)
	BPI_ARRAY(float) fat_bounds;    ///< the fat boxes as a scene, to find them all again
	BPI_ARRAY(uint8_t) fat_flags;
	bpi_radix_scratch radix;
	bpi_pair_buffer found;          ///< the pipeline's pairs of fat boxes
	/// Scratch: the positions that searched, ascending, then in the order they sweep.
	BPI_ARRAY(uint32_t) searcher_list;
	BPI_ARRAY(bpi_sort_item) sweep_order; ///< scratch: the searchers keyed by the first column they reach
	bpi_pair_chunks swept;          ///< scratch: the searchers' new pairs, per chunk of that list
	BPI_ARRAY(size_t) merge_counts; ///< scratch of bpi_pairs_merge
	bpi_indexes indexes;            ///< the pipeline's, unless the caller lends its own
	float rows_per_search;          ///< rows a searcher's sweep read, blended; 0 = none yet
	uint64_t rows_read;             ///< by the searchers of the last call
	/// The last call laid the columns out again for the extra list's reads, planning the
	/// bands anew or merging it in: the model of the moving state prices both alike, as
	/// when every layout planned the bands (perf/README.md, "Incremental: active entities").
	bool laid_out;
	uint32_t extra_laid;            ///< rows of the extra list the last call laid out on the bands
	bool found_all;                 ///< the last call ran the pipeline over every box
	bool first_layout;              ///< the next layout is the first since the pipeline ran
	bool valid;                     ///< `kept` is whole for the active list as it stands
} bpi_active_pairs;

/// One step's active entities.
typedef struct bpi_active_input {
	const bpi_scene *scene;///< by position: their bounds, filters and flags
	const bpi_fat *fat;     ///< by position: their fat boxes after this step's searches
	const uint32_t *active; ///< by position: the dense index, ascending
	uint32_t count;
	uint32_t now;           ///< fat[k].queried_at == now: k searched this step
	/// When many searched, find every pair of the fat boxes again and keep them,
	/// rather than the true pairs keeping nothing: the caller expects few searches
	/// in the steps that follow.
	bool keep;
	/// When not NULL, only these positions (any order, repeats and positions past
	/// `count` allowed) can have searched this step. With `keep`, the pairs come out
	/// sorted by (lo, hi) of positions.
	const uint32_t *changed;
	uint32_t changed_count;
	/// When not NULL, the list is the last call's (same positions, those past its
	/// count new) and only these positions' bounds can differ from that call's
	/// (each once, any order, positions past `count` allowed): the re-test packs
	/// those alone.
	const uint32_t *moved;
	uint32_t moved_count;
	/// When not NULL, the pipeline runs in these indexes, which the caller has no use
	/// for while this state is kept, rather than in its own: a world all active then
	/// holds one grid, and the step that enters its moving state writes memory the
	/// full steps before it wrote, not as much again that is new.
	bpi_indexes *spare;
} bpi_active_input;

/// The pairs among the active entities, as dense (lo, hi), appended to `out` in
/// no particular order. Pairs kept from the last call stand for entities that did
/// not search since; those of entities that did are found again by a sweep over the
/// fat boxes, or for all by the pipeline over the fat boxes when the list changed.
/// When too many searched, the pipeline over the true bounds finds them all and
/// nothing is kept (unless `keep`). Fills the stats the pipeline fills when it runs. On error the
/// state is not valid, and `out` may hold some of the pairs.
bp_status bpi_active_find(bpi_active_pairs *ap, const bpi_active_input *in, bpi_pair_buffer *out,
	bp_frame_stats *stats);

/// The active list lost its positions from `count` on, and kept the others: their
/// kept pairs stand.
void bpi_active_truncate(bpi_active_pairs *ap, uint32_t count);

/// The active list changed (positions mean other entities): the next call finds
/// every pair again.
static inline void bpi_active_invalidate(bpi_active_pairs *ap)
{
	ap->valid = ap->columns_current = false;
	ap->boxes_count = 0;
}

void bpi_active_free(bpi_active_pairs *ap);

/// Test hook: layouts that merge the extra list into the columns between two that plan
/// the bands anew (8 by default; 0 plans every layout anew). Warning: call only while no
/// step runs.
void bpi_set_active_merges_most(uint32_t count);

#endif
