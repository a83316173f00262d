// SPDX-License-Identifier: MIT
// The neighbour list (bp_world_def.skin): every entity's box grown by half the skin, the pairs
// of the grown boxes kept, and those of the few that leave them found again.
#ifndef BP_INCREMENTAL_NEIGHBOURS_H
#define BP_INCREMENTAL_NEIGHBOURS_H

#include "incremental/incremental_state.h"

/// A step of the neighbour list (bp_world_def.skin): the kept pairs re-tested, those
/// of the few entities that left their boxes grown by half the skin found again by
/// their new grown boxes; when many left, or the first time, every box grown again
/// and every pair of them found again.
bp_status bpi_neighbour_path(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes,
	const bpi_changes *moved, bp_algorithm algorithm, bool sorted, bpi_pair_buffer *pairs, bp_frame_stats *stats);

#endif
