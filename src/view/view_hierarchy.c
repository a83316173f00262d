// SPDX-License-Identifier: MIT
// Makes a view's two-part hierarchy (view_hierarchy.h): takes the last frame's shared part,
// marks what changed since it was built, and makes the changed part over those entities;
// when most changed, a new shared part. Either is the last one's shape refit when it holds
// the same entities and still fits them, else built.
#include "view/view_hierarchy.h"
#include "base/bits.h"

#include <string.h>

/// A shared part is rebuilt once more than 1 / this of the entities is out of date in it:
/// the changed part, built every frame, then costs a sizeable part of a full build.
#define SHARED_STALE_SHARE 16u

/// A shared part whose entities mostly changed is refit rather than built while its cost
/// (bvh.h) stays within this many percent of its cost when built.
#define REFIT_COST_PERCENT 150u

static _Atomic uint32_t min_count = BPI_HIERARCHY_MIN_COUNT, stale_share = SHARED_STALE_SHARE,
			refit_percent = REFIT_COST_PERCENT;

void bpi_set_hierarchy_rules(uint32_t count, uint32_t share)
{
	atomic_store(&min_count, count);
	atomic_store(&stale_share, share ? share : 1u);
}

void bpi_set_hierarchy_refit(uint32_t percent)
{
	atomic_store(&refit_percent, percent);
}

/// Whether the last shared part may be refit: its shape still fits its entities, by the
/// cost its boxes add up to (a count of the bounds, never of the clock).
static bool refit_fits(const bpi_bvh *last)
{
	const uint32_t percent = atomic_load_explicit(&refit_percent, memory_order_relaxed);
	return percent && last->cost * 100.0 <= last->built_cost * (double)percent;
}

int bpi_hierarchy_parts(const bpi_view_hierarchy *hy, bpi_bvh_part parts[2])
{
	if (!hy->shared)
		return 0;
	int n = 0;
	parts[n++] = (bpi_bvh_part){&hy->shared->bvh, hy->changed.data, hy->count};
	if (hy->changed_part.count)
		parts[n++] = (bpi_bvh_part){&hy->changed_part, NULL, 0};
	return n;
}

static void shared_free(bpi_bvh_shared *shared)
{
	if (shared) {
		bpi_bvh_free(&shared->bvh);
		bpi_free(shared, sizeof *shared);
	}
}

void bpi_view_hierarchy_retired_free(_Atomic(bpi_bvh_shared *) *retired)
{
	shared_free(atomic_exchange_explicit(retired, NULL, memory_order_acquire));
}

void bpi_view_hierarchy_clear(bpi_view_hierarchy *hy)
{
	bpi_bvh_shared *shared = hy->shared;
	hy->shared = NULL;
	hy->changed_part.count = 0;
	if (shared && atomic_fetch_sub_explicit(&shared->refs, 1u, memory_order_acq_rel) == 1u) {
		// An all-moving world drops a whole part a frame: its pages, kept, spare the next
		// part the kernel's zeroing of as many fresh ones.
		if (hy->retired)
			shared = atomic_exchange_explicit(hy->retired, shared, memory_order_acq_rel);
		shared_free(shared);
	}
}

/// A shared part to make: the pool's retired one, its arrays kept, else a new one.
static bpi_bvh_shared *shared_new(bpi_view_hierarchy *hy, uint32_t count)
{
	bpi_bvh_shared *shared = hy->retired ? atomic_exchange_explicit(hy->retired, NULL, memory_order_acq_rel) : NULL;
	if (!shared) {
		shared = bpi_alloc(sizeof *shared);
		if (!shared)
			return NULL;
		shared->bvh = (bpi_bvh){0};
	}
	shared->count = count;
	atomic_init(&shared->refs, 1u);
	return shared;
}

void bpi_view_hierarchy_free(bpi_view_hierarchy *hy)
{
	bpi_view_hierarchy_clear(hy);
	bpi_array_free(&hy->changed);
	bpi_array_free(&hy->members);
	bpi_bvh_free(&hy->changed_part);
}

/// A new shared part over every entity, `last` refit when given (its summaries kept with
/// `filters_kept`), else built; nothing is out of date in it.
static bp_status make_shared(bpi_view_hierarchy *hy, const bpi_soa *soa, uint32_t count, int dims,
	const bpi_bvh *last, bool filters_kept, bpi_bvh_scratch *scratch, int threads)
{
	bpi_bvh_shared *shared = shared_new(hy, count);
	if (!shared)
		return BP_ERR_OUT_OF_MEMORY;
	const bpi_bvh_bounds bounds = bpi_bvh_bounds_of(soa);
	const bp_status status = !bpi_array_reserve(&hy->changed, bpi_bit_words(count)) ? BP_ERR_OUT_OF_MEMORY
				 : last ? bpi_bvh_refit_copy(&shared->bvh, last, &bounds, NULL, filters_kept, dims, threads)
					: bpi_bvh_build(&shared->bvh, scratch, &bounds, NULL, count, dims, threads);
	if (status != BP_OK) {
		shared_free(shared);
		return BP_ERR_OUT_OF_MEMORY;
	}
	memset(hy->changed.data, 0, bpi_bit_words(count) * sizeof *hy->changed.data);
	hy->member_count = 0;
	hy->shared = shared;
	hy->count = count;
	hy->filters_changed = false;
	return BP_OK;
}

/// The last frame's out-of-date marks plus this frame's changes, and the changed part's
/// entities from them (*changed_count of them). False without memory or when too many are
/// out of date. Where the count stayed and nothing new went out of date (the same movers,
/// frame after frame) the last frame's members are this one's, found without a pass over
/// the marks.
static bool mark_changes(bpi_view_hierarchy *hy, const bpi_hierarchy_changes *changes, uint32_t count,
	uint32_t *changed_count)
{
	const bpi_view_hierarchy *prev = changes->prev;
	const uint32_t shared_count = prev->shared->count;
	const uint32_t limit = count / atomic_load_explicit(&stale_share, memory_order_relaxed);
	// Each listed entity is out of date or born, once, so a list past the limit decides
	// as the marks would, before they are copied and counted.
	if (changes->count > limit)
		return false;
	if (!bpi_array_reserve(&hy->changed, bpi_bit_words(shared_count)))
		return false;
	uint64_t *bits = hy->changed.data;
	memcpy(bits, prev->changed.data, bpi_bit_words(shared_count) * sizeof *bits);
	const uint32_t kept = BP_MIN(count, shared_count), born = count - kept;
	uint32_t fresh = 0; // listed entities of the shared part that were not out of date yet
	for (uint32_t k = 0; k < changes->count; ++k) {
		const uint32_t e = changes->list[k];
		if (e < shared_count) {
			const uint64_t bit = (uint64_t)1 << (e & 63);
			fresh += e < kept && !(bits[e >> 6] & bit);
			bits[e >> 6] |= bit;
		}
	}
	if (count == prev->count && fresh == 0) {
		if (prev->member_count > limit || !bpi_array_reserve(&hy->members, prev->member_count))
			return false;
		if (prev->member_count) // none: the last frame's list may never have been made
			memcpy(hy->members.data, prev->members.data, prev->member_count * sizeof *hy->members.data);
		*changed_count = hy->member_count = prev->member_count;
		return true;
	}
	uint32_t marked = 0;
	for (size_t w = 0; w < bpi_bit_words(kept); ++w)
		marked += (uint32_t)__builtin_popcountll(bits[w]);
	if (marked + born > limit || !bpi_array_reserve(&hy->members, (size_t)marked + born))
		return false;
	uint32_t n = 0;
	for (size_t w = 0; w < bpi_bit_words(kept); ++w)
		for (uint64_t m = bits[w]; m; m &= m - 1) {
			const uint32_t e = (uint32_t)(w * 64) + (uint32_t)__builtin_ctzll(m);
			if (e < kept)
				hy->members.data[n++] = e;
		}
	for (uint32_t e = kept; e < count; ++e)
		hy->members.data[n++] = e;
	*changed_count = hy->member_count = n;
	return true;
}

/// The changed part over hy->members: the last one's shape refit when it held the same
/// entities (the same movers, frame after frame) and still fits them, else built.
static bp_status make_changed_part(bpi_view_hierarchy *hy, const bpi_hierarchy_changes *changes, const bpi_soa *soa,
	uint32_t changed_count, int dims, bpi_bvh_scratch *scratch, int threads)
{
	const bpi_bvh_bounds bounds = bpi_bvh_bounds_of(soa);
	const bpi_view_hierarchy *prev = changes->prev;
	const bpi_bvh *last = &prev->changed_part;
	const bool same = changed_count && last->count == changed_count &&
			  memcmp(prev->members.data, hy->members.data, changed_count * sizeof *hy->members.data) == 0;
	if (same && refit_fits(last))
		return bpi_bvh_refit_copy(&hy->changed_part, last, &bounds, hy->members.data, changes->bounds_only, dims,
			threads);
	return bpi_bvh_build(&hy->changed_part, scratch, &bounds, hy->members.data, changed_count, dims, threads);
}

bp_status bpi_view_hierarchy_make(bpi_view_hierarchy *hy, const bpi_hierarchy_changes *changes, const bpi_soa *soa,
	uint32_t count, int dims, bpi_bvh_scratch *scratch, int threads)
{
	bpi_view_hierarchy_clear(hy);
	if (count < atomic_load_explicit(&min_count, memory_order_relaxed))
		return BP_OK;
	uint32_t changed_count;
	if (!changes || !changes->prev || !changes->prev->shared)
		return make_shared(hy, soa, count, dims, NULL, false, scratch, threads);
	const bool filters_changed = changes->prev->filters_changed || !changes->bounds_only;
	if (!mark_changes(hy, changes, count, &changed_count)) {
		const bpi_bvh_shared *last = changes->prev->shared;
		if (last->count == count && refit_fits(&last->bvh) &&
			make_shared(hy, soa, count, dims, &last->bvh, !filters_changed, scratch, threads) == BP_OK)
			return BP_OK;
		return make_shared(hy, soa, count, dims, NULL, false, scratch, threads);
	}
	if (make_changed_part(hy, changes, soa, changed_count, dims, scratch, threads) != BP_OK)
		return make_shared(hy, soa, count, dims, NULL, false, scratch, threads);
	hy->shared = changes->prev->shared;
	atomic_fetch_add_explicit(&hy->shared->refs, 1u, memory_order_relaxed);
	hy->count = count;
	hy->filters_changed = filters_changed;
	return BP_OK;
}
