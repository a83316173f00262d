// SPDX-License-Identifier: MIT
// Settling (incremental_settle.h): the active entities that stopped changing join a second
// level of the resting index.
//
// The resting index has two levels: the grid of the last full step, and a smaller grid of
// the entities that stopped changing since ("settled"). Active entities that did not change in
// a step settle once there are as many of them as there are changing ones: the settled
// grid is built again over its members and them, the kept pairs become this step's pairs
// among resting entities, and the entities still active query the settled grid again
// (their candidates lack the newly settled). A host that creates entities as it goes, or
// moves some and leaves them, so pays for them while they change, not ever after.
#include "incremental/incremental_settle.h"

#include <stdatomic.h>

/// Quiet active entities settle once there are at least this many (and at least
/// as many as the changing ones, which then query the settled grid again).
#define SETTLE_MIN_DEFAULT 1024u
/// The settled grid is built again only once the quiet entities are this
/// fraction of its members, so each build's cost is spread over as many
/// settling entities as it holds, within a factor: built again every time, its
/// cost grows with its members (perf/README.md, "Incremental path").
#define SETTLED_GROWTH 0.25
/// The settled level is kept below this fraction of the full step's grid; past it
/// the next step is full, which takes everything into one grid again: left to the
/// cost model, the active entities grow and steps slow down first
/// (perf/README.md, "Incremental path").
#define SETTLED_FRACTION 0.25

static _Atomic uint32_t settle_min = SETTLE_MIN_DEFAULT;

void bpi_set_settle_min(uint32_t count) { atomic_store(&settle_min, count); }

size_t bpi_merge_settling(const bpi_pair_buffer *kept, const uint64_t *gone, const uint8_t *is_active,
	const bp_pair *fresh, size_t fresh_count, bp_pair *out, bpi_pair_buffer *next)
{
	// As the merge of bpi_pairs_merge, a kept pair is written and stepped past unless it
	// is stale, with no branch on it: a churning world has many stale pairs.
	const bp_pair *p = kept->data;
	size_t j = 0, k = 0, resting = 0;
	for (size_t i = 0; i < kept->count; ++i) {
		bp_pair a = p[i];
		const bool live = !bpi_bit_either(gone, a.lo, a.hi);
		for (; j < fresh_count && (fresh[j].lo < a.lo || (fresh[j].lo == a.lo && fresh[j].hi < a.hi)); ++j) {
			out[k++] = fresh[j];
			next->data[resting] = fresh[j];
			resting += is_active[fresh[j].lo] != 2 && is_active[fresh[j].hi] != 2;
		}
		out[k] = a;
		next->data[resting] = a;
		k += live;
		resting += live;
	}
	for (; j < fresh_count; ++j) {
		out[k++] = fresh[j];
		next->data[resting] = fresh[j];
		resting += is_active[fresh[j].lo] != 2 && is_active[fresh[j].hi] != 2;
	}
	next->count = resting;
	return k;
}

/// The next settled members into x->settling: the members still resting, then
/// the quiet active entities (is_active 1; those changed this step hold 2).
/// Returns their count.
static uint32_t gather_members(bpi_incremental *x, uint32_t n)
{
	uint32_t *list = x->settling.data, m = 0;
	for (uint32_t k = 0; k < x->settled_count; ++k) {
		uint32_t d = x->settled_of.data[k];
		if (d < n && !bpi_bit_get(x->gone.data, d) && (x->position.data[d] & BPI_SETTLED_BIT))
			list[m++] = d;
	}
	for (uint32_t k = 0; k < x->active_count; ++k)
		if (x->is_active.data[x->active.data[k]] == 1)
			list[m++] = x->active.data[k];
	return m;
}

void bpi_commit_settled(bpi_incremental *x, const bpi_scene *scene, uint32_t m)
{
	bpi_cells t = x->settled;
	x->settled = x->settled_spare;
	x->settled_spare = t;
	bpi_array_swap(&x->settled_of, &x->settling); // the members become the grid's map
	x->settled_count = m;
	x->settled_left = 0;
	uint8_t *is_active = x->is_active.data;
	for (uint32_t j = 0; j < m; ++j) {
		uint32_t d = x->settled_of.data[bpi_cells_entity_at(&x->settled, j)];
		x->position.data[d] = BPI_SETTLED_BIT | j;
		// A member that rested before keeps its filter and marks, unchanged while it rested
		// (any change makes an entity active); only the active ones that settle take theirs.
		if (bpi_bit_get(x->gone.data, d)) {
			bpi_bit_clear(x->gone.data, d);
			x->filter.data[d] = (bpi_rest_filter){scene->category[d], scene->mask[d], scene->flags[d]};
			is_active[d] = 0;
		}
	}
	// The changing entities stay active with their fat boxes, and query the new
	// settled level next step: their candidates lack the newly settled, which the
	// active x active pass no longer pairs them with.
	uint32_t out = 0;
	for (uint32_t k = 0; k < x->active_count; ++k) {
		uint32_t d = x->active.data[k];
		if (is_active[d]) {
			is_active[d] = 1;
			x->active.data[out] = d;
			x->cross.fat.data[out] = x->cross.fat.data[k];
			x->cross.growth.data[out++] = x->cross.growth.data[k];
		}
	}
	x->active_count = out;
	x->cross.requery_settled = true;
	bpi_active_invalidate(&x->among);
	bpi_pair_buffer t_pairs = x->resting_pairs;
	x->rest_stale = false;
	x->resting_pairs = x->next_pairs;
	x->next_pairs = t_pairs;
}

uint32_t bpi_prepare_settling(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes)
{
	const uint32_t n = scene->count;
	uint8_t *is_active = x->is_active.data;
	for (uint32_t c = 0; c < changes->count; ++c)
		if (changes->list[c] < n)
			is_active[changes->list[c]] = 2; // changed this step
	uint32_t quiet = 0;
	for (uint32_t k = 0; k < x->active_count; ++k)
		quiet += is_active[x->active.data[k]] == 1;
	uint32_t staying = x->settled_count - x->settled_left, most = staying + quiet;
	bool worth = quiet >= atomic_load_explicit(&settle_min, memory_order_relaxed) &&
		     quiet >= x->active_count - quiet && quiet >= SETTLED_GROWTH * staying;
	if (worth && most > SETTLED_FRACTION * x->resting_count) {
		x->settled_full = true; // a full step takes them all into one grid
		worth = false;
	}
	if (worth && bpi_array_reserve(&x->settling, most)) {
		uint32_t m = gather_members(x, n);
		bpi_scene members;
		bpi_build build = {0};
		if (bpi_subset_scene(x, scene, x->settling.data, m, false, &members) == BP_OK &&
			bpi_cells_build(&x->settled_spare, false, &members, &build) == BP_OK)
			return m;
	}
	for (uint32_t c = 0; c < changes->count; ++c)
		if (changes->list[c] < n)
			is_active[changes->list[c]] = 1;
	return 0;
}
