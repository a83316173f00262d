// SPDX-License-Identifier: MIT
// The moving state: every entity active with a fat box of its own and none resting, for
// worlds where most entities change every step.
#ifndef BP_INCREMENTAL_MOVING_H
#define BP_INCREMENTAL_MOVING_H

#include "incremental/incremental_state.h"

/// A try of the moving state begins: the bounds of this full step are kept, so the
/// next step can tell how far its changed entities moved. Laying the state out waits
/// for that step's decision: a try refused costs a copy of the bounds. False (no try)
/// when memory runs out.
bool bpi_begin_entry(bpi_incremental *x, const bpi_scene *scene);

/// The moving state's sets after creates and destroys: the active list stays every
/// dense index, so the positions that remain keep their fat boxes and kept pairs.
/// An entity a destroy moved into a hole checks the fat box there, which holds
/// every pair of any bounds inside it with its filter.
bp_status bpi_update_moving(bpi_incremental *x, uint32_t n);

/// The moving state's step: the changed entities that left their fat boxes search
/// the others' fat boxes, and the kept pairs of the fat boxes, sorted, are re-tested
/// straight into the caller's pairs.
bp_status bpi_moving_path(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes,
	const bpi_changes *moved, bpi_pair_buffer *pairs, bp_frame_stats *stats, bool *gave_up);

/// The step's pairs from the pairs of the fat boxes, every entity active in dense
/// order: those of the entities that searched found again (only `changed`, when not
/// NULL, can have), then all re-tested, sorted, straight into `pairs`.
bp_status bpi_kept_pairs(bpi_incremental *x, const bpi_scene *scene, const uint32_t *changed, uint32_t count,
	const bpi_changes *moved, bpi_pair_buffer *pairs, bp_frame_stats *stats);

#endif
