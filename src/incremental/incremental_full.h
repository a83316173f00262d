// SPDX-License-Identifier: MIT
// The full path: every pair of the scene, and the resting index it keeps for the steps after.
#ifndef BP_INCREMENTAL_FULL_H
#define BP_INCREMENTAL_FULL_H

#include "incremental/incremental_state.h"

/// Every pair. With `keep`, by the grid, whose cells become the resting index, and
/// every entity rests; without, by `algorithm`, as the plain world finds them, and
/// nothing rests, so the next step is full again (a world moving all over does not
/// pay for keeping an index it would not use). Without a grid (spans beyond float)
/// AUTO's choice runs and nothing rests either. Sorted when kept, as the merges of
/// the next steps need them, or when `sorted`; else in the algorithm's order, at
/// the plain world's cost.
bp_status bpi_full_step(bpi_incremental *x, const bpi_scene *scene, bool keep, bp_algorithm algorithm,
	bool sorted, bpi_pair_buffer *pairs, bp_frame_stats *stats);

#endif
