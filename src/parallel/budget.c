// SPDX-License-Identifier: MIT
// Pair memory budgets (budget.h): charge before allocating, give back on free, stop on failure.
#include "parallel/budget.h"

#include <string.h>

void bpi_budget_begin(bpi_budget *b, size_t limit)
{
	atomic_store_explicit(&b->limit, limit, memory_order_relaxed);
	atomic_store_explicit(&b->stopped, false, memory_order_relaxed);
	atomic_store_explicit(&b->over_limit, false, memory_order_relaxed);
}

static void stop(bpi_budget *b, bool over_limit)
{
	if (over_limit)
		atomic_store_explicit(&b->over_limit, true, memory_order_relaxed);
	atomic_store_explicit(&b->stopped, true, memory_order_relaxed);
}

/// Charges `bytes` unless that takes `held` past the limit. Chunks grow at once
/// on several threads, hence the compare-and-swap.
static bool take(bpi_budget *b, size_t bytes)
{
	const size_t limit = atomic_load_explicit(&b->limit, memory_order_relaxed);
	size_t held = atomic_load_explicit(&b->held, memory_order_relaxed);
	do {
		if (limit && (bytes > limit || held > limit - bytes))
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&b->held, &held, held + bytes, memory_order_relaxed,
		memory_order_relaxed));
	return true;
}

static void give(bpi_budget *b, size_t bytes)
{
	if (b)
		atomic_fetch_sub_explicit(&b->held, bytes, memory_order_relaxed);
}

/// A block charged to b, or NULL (nothing charged) when the limit or the allocator refuses.
static void *charged_alloc(bpi_budget *b, size_t bytes, bool *over_limit)
{
	*over_limit = b && !take(b, bytes);
	if (*over_limit)
		return NULL;
	void *ptr = bpi_alloc_aligned(bytes);
	if (!ptr)
		give(b, bytes);
	return ptr;
}

bool bpi_budget_above_limit(const bpi_budget *b)
{
	if (!b)
		return false;
	const size_t limit = atomic_load_explicit(&b->limit, memory_order_relaxed);
	return limit && atomic_load_explicit(&b->held, memory_order_relaxed) > limit;
}

bool bpi_budget_enforce(bpi_budget *b)
{
	if (!bpi_budget_above_limit(b))
		return true;
	stop(b, true);
	return false;
}

void *bpi_budget_alloc(bpi_budget *b, size_t bytes)
{
	if (bpi_budget_stopped(b))
		return NULL;
	bool over_limit;
	void *ptr = charged_alloc(b, bytes, &over_limit);
	if (!ptr && b)
		stop(b, over_limit);
	return ptr;
}

void bpi_budget_free(bpi_budget *b, void *ptr, size_t bytes)
{
	if (!ptr)
		return;
	bpi_free_aligned(ptr, bytes);
	give(b, bytes);
}

void bpi_budget_move(bpi_budget *from, bpi_budget *to, size_t bytes)
{
	if (from == to || bytes == 0)
		return;
	give(from, bytes);
	if (to)
		atomic_fetch_add_explicit(&to->held, bytes, memory_order_relaxed);
}

bool bpi_budget_array_grow_(bpi_budget *b, void *data, size_t *capacity, size_t needed, size_t elem_size)
{
	if (needed <= *capacity)
		return true;
	size_t grown = BP_MAX(needed, *capacity + *capacity / 2); // as bpi_array_reserve
	if (grown > SIZE_MAX / elem_size)
		return false;
	bool over_limit;
	void *fresh = charged_alloc(b, grown * elem_size, &over_limit);
	if (!fresh)
		return false;
	void *old;
	memcpy(&old, data, sizeof old);
	bpi_budget_free(b, old, *capacity * elem_size);
	memcpy(data, &fresh, sizeof fresh);
	*capacity = grown;
	return true;
}

void bpi_budget_array_free_(bpi_budget *b, void *data, size_t *capacity, size_t elem_size)
{
	void *old;
	memcpy(&old, data, sizeof old);
	bpi_budget_free(b, old, *capacity * elem_size);
	old = NULL;
	memcpy(data, &old, sizeof old);
	*capacity = 0;
}
