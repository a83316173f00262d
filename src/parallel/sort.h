// SPDX-License-Identifier: MIT
// Parallel LSD radix sort of (uint32 key, uint32 index) items, used by sap and the hash build.
#ifndef BP_SORT_H
#define BP_SORT_H

#include <string.h>
#include "base/core.h"

/// A sort item: key in the high 32 bits, index in the low 32. Comparing items as
/// uint64 orders by key, then by index, so a stable sort of items that start in
/// index order yields one order that depends on the keys alone.
typedef uint64_t bpi_sort_item;

static inline bpi_sort_item bpi_sort_item_make(uint32_t key, uint32_t index)
{
	return (uint64_t)key << 32 | index;
}
static inline uint32_t bpi_sort_item_key(bpi_sort_item item) { return (uint32_t)(item >> 32); }
static inline uint32_t bpi_sort_item_index(bpi_sort_item item) { return (uint32_t)item; }

/// Order-preserving map of a float to uint32 (docs/design.md "Parallel pattern"): a < b as floats iff
/// key(a) < key(b). -0.0 sorts just below +0.0; NaN is never passed here.
static inline uint32_t bpi_radix_float_key(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u ^ ((uint32_t)((int32_t)u >> 31) | 0x80000000u);
}

/// Scratch reused across sorts (and frames): a second item array and the
/// per-chunk histograms. Zero-initialise; free with bpi_radix_sort_free.
typedef struct bpi_radix_scratch {
	BPI_ARRAY(bpi_sort_item) items;
	BPI_ARRAY(uint32_t) histograms; ///< [chunk][pass][bucket]
} bpi_radix_scratch;

/// Makes room for sorting `count` items, so that a later sort of at most that
/// many allocates nothing. BP_ERR_OUT_OF_MEMORY leaves the scratch as it was.
bp_status bpi_radix_sort_reserve(bpi_radix_scratch *scratch, size_t count);
void bpi_radix_sort_free(bpi_radix_scratch *scratch);

/// Sorts items by key (the high 32 bits), stably, on up to `threads` threads.
/// The result is identical for every thread count: chunks have a fixed size.
/// Digit passes whose digit is the same for every item are skipped.
/// Warning: grows the scratch when it is too small; fails only when that fails.
bp_status bpi_radix_sort_items(bpi_radix_scratch *scratch, bpi_sort_item *items, uint32_t count, int threads);

/// Insertion sort of whole (key, index) items, for last step's order under new
/// keys: items with distinct indices have one sorted order whatever the start.
/// Gives up after `budget` moves and returns false (items still a permutation).
bool bpi_insertion_sort_items(bpi_sort_item *items, uint32_t count, uint64_t budget);

/// The k-th smallest of v[0 .. count) (k < count): the value v sorted would
/// hold at k. A quickselect that reorders v; O(count) expected. For the medians
/// and quantiles of extents that size cells, regions and buckets.
float bpi_select_float(float *v, size_t count, size_t k);
double bpi_select_double(double *v, size_t count, size_t k);

#endif
