// SPDX-License-Identifier: MIT
// Makes a view's two-part hierarchy (view_hierarchy.h): shares the last frame's rest,
// marks what changed since it was built, and builds the movers part over those entities.
#include "view/view_hierarchy.h"

#include <string.h>

/// A rest is rebuilt once more than 1 / this of the entities is out of date in it:
/// the movers part, built every frame, then costs a sizeable part of a full build.
#define REST_STALE_SHARE 16u

static _Atomic uint32_t min_count = BPI_HIERARCHY_MIN_COUNT, stale_share = REST_STALE_SHARE;

void bpi_set_hierarchy_rules(uint32_t count, uint32_t share)
{
	atomic_store(&min_count, count);
	atomic_store(&stale_share, share ? share : 1u);
}

int bpi_hierarchy_parts(const bpi_view_hierarchy *hy, bpi_bvh_part parts[2])
{
	if (!hy->rest)
		return 0;
	int n = 0;
	parts[n++] = (bpi_bvh_part){&hy->rest->bvh, hy->changed.data, hy->count};
	if (hy->movers.count)
		parts[n++] = (bpi_bvh_part){&hy->movers, NULL, 0};
	return n;
}

void bpi_view_hierarchy_clear(bpi_view_hierarchy *hy)
{
	bpi_bvh_rest *rest = hy->rest;
	hy->rest = NULL;
	hy->movers.count = 0;
	if (rest && atomic_fetch_sub_explicit(&rest->refs, 1u, memory_order_acq_rel) == 1u) {
		bpi_view_bvh_free(&rest->bvh);
		bpi_free(rest, sizeof *rest);
	}
}

void bpi_view_hierarchy_free(bpi_view_hierarchy *hy)
{
	bpi_view_hierarchy_clear(hy);
	bpi_array_free(&hy->changed);
	bpi_array_free(&hy->members);
	bpi_view_bvh_free(&hy->movers);
}

static size_t words(uint32_t bits)
{
	return ((size_t)bits + 63) / 64;
}

/// A new rest over every entity; nothing is out of date in it.
static bp_status make_rest(bpi_view_hierarchy *hy, const bpi_soa *soa, uint32_t count, int dims, int threads)
{
	bpi_bvh_rest *rest = bpi_alloc(sizeof *rest);
	if (!rest)
		return BP_ERR_OUT_OF_MEMORY;
	*rest = (bpi_bvh_rest){.count = count};
	atomic_init(&rest->refs, 1u);
	if (!bpi_array_reserve(&hy->changed, words(count)) ||
		bpi_view_bvh_build(&rest->bvh, soa, NULL, count, dims, threads) != BP_OK) {
		bpi_view_bvh_free(&rest->bvh);
		bpi_free(rest, sizeof *rest);
		return BP_ERR_OUT_OF_MEMORY;
	}
	bpi_view_bvh_drop_scratch(&rest->bvh);
	memset(hy->changed.data, 0, words(count) * sizeof *hy->changed.data);
	hy->rest = rest;
	hy->count = count;
	return BP_OK;
}

/// The last frame's out-of-date marks plus this frame's changes, and the movers'
/// entities from them into *movers. False without memory or when too many are out of date.
static bool mark_changes(bpi_view_hierarchy *hy, const bpi_hierarchy_changes *changes, uint32_t count,
	uint32_t *movers)
{
	const bpi_view_hierarchy *prev = changes->prev;
	const uint32_t rest_count = prev->rest->count;
	const uint32_t limit = count / atomic_load_explicit(&stale_share, memory_order_relaxed);
	if (!bpi_array_reserve(&hy->changed, words(rest_count)))
		return false;
	uint64_t *bits = hy->changed.data;
	memcpy(bits, prev->changed.data, words(rest_count) * sizeof *bits);
	for (uint32_t k = 0; k < changes->count; ++k) {
		const uint32_t e = changes->list[k];
		if (e < rest_count)
			bits[e >> 6] |= (uint64_t)1 << (e & 63);
	}
	const uint32_t kept = BP_MIN(count, rest_count), born = count - kept;
	uint32_t marked = 0;
	for (size_t w = 0; w < words(kept); ++w)
		marked += (uint32_t)__builtin_popcountll(bits[w]);
	if (marked + born > limit || !bpi_array_reserve(&hy->members, (size_t)marked + born))
		return false;
	uint32_t n = 0;
	for (size_t w = 0; w < words(kept); ++w)
		for (uint64_t m = bits[w]; m; m &= m - 1) {
			const uint32_t e = (uint32_t)(w * 64) + (uint32_t)__builtin_ctzll(m);
			if (e < kept)
				hy->members.data[n++] = e;
		}
	for (uint32_t e = kept; e < count; ++e)
		hy->members.data[n++] = e;
	*movers = n;
	return true;
}

bp_status bpi_view_hierarchy_make(bpi_view_hierarchy *hy, const bpi_hierarchy_changes *changes, const bpi_soa *soa,
	uint32_t count, int dims, int threads)
{
	bpi_view_hierarchy_clear(hy);
	if (count < atomic_load_explicit(&min_count, memory_order_relaxed))
		return BP_OK;
	uint32_t movers;
	if (!changes || !changes->prev || !changes->prev->rest || !mark_changes(hy, changes, count, &movers))
		return make_rest(hy, soa, count, dims, threads);
	if (bpi_view_bvh_build(&hy->movers, soa, hy->members.data, movers, dims, threads) != BP_OK)
		return make_rest(hy, soa, count, dims, threads);
	hy->rest = changes->prev->rest;
	atomic_fetch_add_explicit(&hy->rest->refs, 1u, memory_order_relaxed);
	hy->count = count;
	return BP_OK;
}
