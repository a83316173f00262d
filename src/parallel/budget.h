// SPDX-License-Identifier: MIT
// Pair memory budgets: the bytes a world holds for pairs, checked against its memory_limit,
// and the flag that stops every finder of a step once one growth has failed.
#ifndef BP_BUDGET_H
#define BP_BUDGET_H

#include <stdatomic.h>
#include "base/core.h"

/// An account of the memory that grows with the number of pairs: chunk pair
/// buffers, a step's pairs, and a frame's arrays derived from them. A block is
/// charged before it is allocated and given back when it is freed, so `held` is
/// exact at every moment. One per world (its steps) and one per frame scheduler
/// (its frames, those readers hold included). Zero is an empty account with no
/// limit. A NULL budget charges nothing and never stops.
typedef struct bpi_budget {
	/// Most bytes held at once; 0 = no limit. Set by bpi_budget_begin; atomic
	/// because readers that build a frame's arrays on demand charge it too.
	_Atomic size_t limit;
	_Atomic size_t held; ///< bytes charged and not given back
	/// A growth of the step under way failed (refused by the limit, or by the
	/// allocator): every finder stops, and nothing more is allocated for the
	/// step until the next one begins. One failed allocation per step, not one
	/// per pair.
	atomic_bool stopped;
	atomic_bool over_limit; ///< the failure was the limit's (the message names it)
} bpi_budget;

/// Starts a step with `limit` bytes (0 = none): clears the failure of the last.
/// Only the thread that runs the budget's steps, between steps.
void bpi_budget_begin(bpi_budget *budget, size_t limit);

/// True once a growth of this step failed. Cheap enough for every entity of a finder.
static inline bool bpi_budget_stopped(const bpi_budget *budget)
{
	return budget && atomic_load_explicit(&budget->stopped, memory_order_relaxed);
}

/// True when the account holds more than its limit, which a lowered limit or
/// blocks moved in from another account can make so. Kept blocks count until
/// given back. NULL: false.
bool bpi_budget_above_limit(const bpi_budget *budget);
/// bpi_budget_above_limit, and then the step stops as over its limit: false.
bool bpi_budget_enforce(bpi_budget *budget);

/// A cache-line-aligned block of `bytes` for the step under way, charged to the
/// budget. NULL, with the step stopped, when the step already stopped, the
/// limit would be passed or the allocator fails: the allocator is asked only
/// when the block fits.
void *bpi_budget_alloc(bpi_budget *budget, size_t bytes);
/// Frees a block of the budget and gives its bytes back. Any thread.
void bpi_budget_free(bpi_budget *budget, void *ptr, size_t bytes);
/// Moves `bytes` already allocated from one account to the other (NULL: none),
/// for a block that changes hands; may leave `to` above its limit.
void bpi_budget_move(bpi_budget *from, bpi_budget *to, size_t bytes);

/// BPI_ARRAY growth (core.h) charged to a budget, for arrays made apart from a
/// step's finders (a frame's derived arrays, by the builder after the step or by
/// a reader on demand): room for at least `needed` elements, the contents not
/// kept. False (array untouched) when the limit or the allocator refuses; the
/// step under way is neither checked nor stopped. Any thread.
#define bpi_budget_array_reserve(budget, array, needed) \
	bpi_budget_array_grow_((budget), &(array)->data, &(array)->capacity, (needed), sizeof *(array)->data)
/// Frees a budgeted array; it is empty afterwards.
#define bpi_budget_array_free(budget, array) \
	bpi_budget_array_free_((budget), &(array)->data, &(array)->capacity, sizeof *(array)->data)

bool bpi_budget_array_grow_(bpi_budget *budget, void *data, size_t *capacity, size_t needed, size_t elem_size);
void bpi_budget_array_free_(bpi_budget *budget, void *data, size_t *capacity, size_t elem_size);

#endif
