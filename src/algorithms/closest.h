// SPDX-License-Identifier: MIT
// The closest-pair finder's one extra entry point: how often it fell back to the full sort (tests read it).
#ifndef BP_CLOSEST_H
#define BP_CLOSEST_H

#include "algorithms/index.h"

/// Steps since `index` (a closest-pair finder's index) was created that took the full radix
/// sort rather than fixing last step's order with the insertion sort.
uint64_t bpi_closest_full_sorts(const bpi_index *index);

#endif
