// SPDX-License-Identifier: MIT
// Pair memory budgets: the bytes a world holds for pairs, and the flag that stops every
// finder of a step once one growth has failed.
#ifndef BP_BUDGET_H
#define BP_BUDGET_H

#include <stdatomic.h>
#include "core.h"

/// An account of the memory that grows with the number of pairs: chunk pair
/// buffers and a step's pairs. A block is charged before it is allocated and
/// given back when it is freed, so `held` is exact at every moment. One per
/// world (its steps) and one per frame scheduler (its frames, those readers
/// hold included). Zero is an empty account. A NULL budget charges nothing and
/// never stops.
typedef struct bpi_budget {
	_Atomic size_t held; ///< bytes charged and not given back
	/// A growth of the step under way failed: every finder stops, and nothing
	/// more is allocated through the budget until the next step begins. One
	/// failed allocation per step, not one per pair.
	atomic_bool stopped;
} bpi_budget;

/// Starts a step: clears the failure of the last. Only the thread that runs
/// the budget's steps, between steps.
void bpi_budget_begin(bpi_budget *budget);

/// True once a growth of this step failed.
static inline bool bpi_budget_stopped(const bpi_budget *budget)
{
	return budget && atomic_load_explicit(&budget->stopped, memory_order_relaxed);
}

/// A cache-line-aligned block of `bytes` charged to the budget. NULL, with the
/// step stopped, when the step already stopped or the allocator fails.
void *bpi_budget_alloc(bpi_budget *budget, size_t bytes);
/// Frees a block of bpi_budget_alloc and gives its bytes back. Any thread.
void bpi_budget_free(bpi_budget *budget, void *ptr, size_t bytes);
/// Moves `bytes` already allocated from one account to the other (NULL: none),
/// for a block that changes hands.
void bpi_budget_move(bpi_budget *from, bpi_budget *to, size_t bytes);

#endif
