// SPDX-License-Identifier: MIT
// An allocator for the library (bp_set_allocator) that keeps the peak of the bytes it holds
// and refuses any allocation that would take them past a cap: a test asks whether reading a
// file allocates beyond what the file can justify without needing the memory to find out.
#ifndef BP_TEST_CAPPED_HEAP_H
#define BP_TEST_CAPPED_HEAP_H

#include <stdint.h>

/// Installs the allocator with `cap` bytes; call while no library object exists.
void capped_heap_install(int64_t cap);
/// Puts the library's default allocator back; call while no library object exists.
void capped_heap_remove(void);
/// Starts a new peak at the bytes held now, and forgets the refusals.
void capped_heap_reset(void);
/// The most bytes held at once since the install or the last reset.
int64_t capped_heap_peak(void);
/// Allocations refused since the install or the last reset.
int64_t capped_heap_refusals(void);

#endif
