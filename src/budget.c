// SPDX-License-Identifier: MIT
// Pair memory budgets (budget.h): charge before allocating, give back on free, stop on failure.
#include "budget.h"

void bpi_budget_begin(bpi_budget *b)
{
	atomic_store_explicit(&b->stopped, false, memory_order_relaxed);
}

static void give(bpi_budget *b, size_t bytes)
{
	if (b)
		atomic_fetch_sub_explicit(&b->held, bytes, memory_order_relaxed);
}

void *bpi_budget_alloc(bpi_budget *b, size_t bytes)
{
	if (!b)
		return bpi_alloc_aligned(bytes);
	if (bpi_budget_stopped(b))
		return NULL;
	atomic_fetch_add_explicit(&b->held, bytes, memory_order_relaxed);
	void *ptr = bpi_alloc_aligned(bytes);
	if (!ptr) {
		give(b, bytes);
		atomic_store_explicit(&b->stopped, true, memory_order_relaxed);
	}
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
