// SPDX-License-Identifier: MIT
// The resting path: who rests and who is active after a step's changes, and a step's pairs
// from the kept ones and those of the active entities.
#ifndef BP_INCREMENTAL_REST_H
#define BP_INCREMENTAL_REST_H

#include "incremental/incremental_state.h"

/// Applies the changes: entities that changed stop resting and become active;
/// indices past the entity count (destroyed from the end) leave both sets. The
/// active list stays ascending. Returns whether any entity stopped resting.
bp_status bpi_update_sets(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes, int threads,
	bool *left_rest);

/// The pairs of the active entities, merged with the kept ones; `left_rest`:
/// some entities stopped resting this step, so some kept pairs are stale;
/// `filters_kept`: only bounds changed since the last step.
bp_status bpi_resting_path(bpi_incremental *x, const bpi_scene *scene, bool left_rest, bool settling,
	bool filters_kept, bpi_pair_buffer *pairs, bp_frame_stats *stats);

#endif
