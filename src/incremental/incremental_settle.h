// SPDX-License-Identifier: MIT
// Settling: the active entities that stopped changing join the second level of the resting
// index, a grid of its own, so they stop costing every step.
#ifndef BP_INCREMENTAL_SETTLE_H
#define BP_INCREMENTAL_SETTLE_H

#include "incremental/incremental_state.h"

/// The merge of a step that settles: the kept pairs, less those of entities that
/// stopped resting, and the sorted fresh ones into `out`, and into `next` (room for
/// all) the pairs that stay resting once it has settled, that is all but those of an entity
/// changed this step (is_active 2), which stays active. Returns the pairs written to
/// `out`.
size_t bpi_merge_settling(const bpi_pair_buffer *kept, const uint64_t *gone, const uint8_t *is_active,
	const bp_pair *fresh, size_t fresh_count, bp_pair *out, bpi_pair_buffer *next);

/// Makes the settled grid built before the step (in settled_spare, over x->settling's
/// m members) the second resting level, and the pairs the step's merge kept for it
/// (in next_pairs) the resting pairs. Cannot fail.
void bpi_commit_settled(bpi_incremental *x, const bpi_scene *scene, uint32_t m);

/// Before an incremental step: whether the active entities it does not change settle
/// after it, with the members still resting, into a new settled grid, when enough of
/// them are quiet (incremental_settle.c). If so the grid is built now, into
/// settled_spare, the step's merge keeps the resting pairs for it, and
/// bpi_commit_settled makes both current: returns the members. All or nothing: when memory runs out or the grid cannot be
/// built, 0, and they stay active, which is exact too. The entities changed this step
/// are marked 2 in is_active until the commit, or past a return of 0.
uint32_t bpi_prepare_settling(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes);

#endif
