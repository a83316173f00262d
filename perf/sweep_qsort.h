// SPDX-License-Identifier: MIT
// The benchmark baseline: a plain scalar sort-and-sweep (qsort by min x, then a
// double loop), as a reader would first write it. Not part of the library.
#ifndef BP_PERF_SWEEP_QSORT_H
#define BP_PERF_SWEEP_QSORT_H

#include <broadphase/broadphase.h>
#include <stddef.h>

/// All overlapping pairs (closed intervals, no filters) of `count` boxes given as
/// SoA arrays. Pairs are appended to *pairs (grown with realloc). Returns the
/// pair count, or (size_t)-1 when out of memory.
size_t perf_sweep_qsort(const bp_bounds_arrays *bounds, uint32_t count, int dims, bp_pair **pairs,
	size_t *capacity);

#endif
