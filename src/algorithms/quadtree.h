// SPDX-License-Identifier: MIT
// What the quadtree index reports about its last update, beyond bp_frame_stats (tests, tuning).
#ifndef BP_QUADTREE_H
#define BP_QUADTREE_H

#include "algorithms/index.h"

/// Entities the last successful update inserted: all of them after a rebuild, only the new
/// and moved ones after an incremental update. `index` must be a quadtree index.
uint32_t bpi_quadtree_reinserted(const bpi_index *index);

#endif
