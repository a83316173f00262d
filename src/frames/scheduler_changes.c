// SPDX-License-Identifier: MIT
// What changed between frames (scheduler_changes.h): the submit log, each snapshot's list
// for the builder, and the builder's changes since the frame its incremental state follows.
#include "frames/scheduler_changes.h"
#include "base/bits.h"
#include "base/probes.h"
#include "parallel/parallel.h"

#include <string.h>

// ---- the submit log (host thread) -------------------------------------------------------

void bpi_submit_log_add(bpi_submit_log *log, uint64_t number, const bpi_changes *changes)
{
	bpi_submit_entry *e = &log->entry[number % BPI_SUBMIT_LOG];
	e->number = number;
	e->all = changes->all || !bpi_array_reserve(&e->list, changes->count);
	e->count = e->all ? 0 : changes->count;
	e->bounds_only = changes->bounds_only;
	if (e->count)
		memcpy(e->list.data, changes->list, e->count * sizeof *e->list.data);
}

/// Whether the log still holds every submit after view's content up to `number`, each
/// with `bounds_only` set where `need_bounds_only` and its list where `need_lists`.
static bool log_holds(const bpi_submit_log *log, const bp_view *view, uint64_t number, bool need_lists,
	bool need_bounds_only)
{
	if (view->content == 0 || number - view->content > BPI_SUBMIT_LOG)
		return false;
	for (uint64_t k = view->content + 1; k <= number; ++k) {
		const bpi_submit_entry *e = &log->entry[k % BPI_SUBMIT_LOG];
		if (e->number != k || (need_lists && e->all) || (need_bounds_only && !e->bounds_only))
			return false;
	}
	return true;
}

/// Whether `later` lists the entities of e, and copies every field e copies.
static bool covered_by(const bpi_submit_entry *e, const bpi_submit_entry *later)
{
	return e->count == later->count && (e->bounds_only || !later->bounds_only) &&
	       (e->count == 0 || memcmp(e->list.data, later->list.data, e->count * sizeof *e->list.data) == 0);
}

bool bpi_submit_log_copy(const bpi_submit_log *log, bp_view *view, const bpi_soa *src, uint32_t count, uint64_t number)
{
	if (!log_holds(log, view, number, true, false))
		return false;
	for (uint64_t k = view->content + 1; k <= number; ++k) {
		const bpi_submit_entry *e = &log->entry[k % BPI_SUBMIT_LOG];
		// Every copy reads the world as it is now: a list the next submit repeats with as
		// many fields (the same movers, frame after frame) is copied there.
		if (k < number && covered_by(e, &log->entry[(k + 1) % BPI_SUBMIT_LOG]))
			continue;
		// Indices past the count were destroyed since.
		bpi_soa_copy_listed(&view->soa, src, view->dims, e->list.data, e->count, count, e->bounds_only);
	}
	// Once every entity is in place: an index listed early may hold a later submit's entity.
	for (uint64_t k = view->content + 1; k <= number; ++k) {
		const bpi_submit_entry *e = &log->entry[k % BPI_SUBMIT_LOG];
		if (!e->bounds_only)
			bpi_view_slots_note(view, e->list.data, e->count, count);
	}
	return true;
}

bool bpi_submit_log_bounds_only(const bpi_submit_log *log, const bp_view *view, uint64_t number)
{
	return log_holds(log, view, number, false, true);
}

void bpi_submit_log_free(bpi_submit_log *log)
{
	for (int k = 0; k < BPI_SUBMIT_LOG; ++k)
		bpi_array_free(&log->entry[k].list);
}

void bpi_view_note_changes(bp_view *view, const bpi_changes *changes, uint64_t number, const bp_view *coalesced)
{
	view->changes_since = coalesced ? coalesced->changes_since : number - 1;
	uint32_t earlier = coalesced ? coalesced->changes_count : 0;
	view->changes_all = changes->all || (coalesced && coalesced->changes_all) ||
			 !bpi_array_reserve(&view->changes, (size_t)changes->count + earlier);
	view->changes_bounds_only = changes->bounds_only && (!coalesced || coalesced->changes_bounds_only);
	view->changes_count = 0;
	if (view->changes_all)
		return;
	if (changes->count)
		memcpy(view->changes.data, changes->list, changes->count * sizeof *view->changes.data);
	if (earlier)
		memcpy(view->changes.data + changes->count, coalesced->changes.data, earlier * sizeof *view->changes.data);
	view->changes_count = changes->count + earlier;
}

// ---- the builder's changes ------------------------------------------------------------

/// Bit-for-bit equality of entity i's bounds in two snapshots.
static bool same_bounds(const bp_view *a, const bp_view *b, uint32_t i)
{
	for (int axis = 0; axis < a->dims; ++axis)
		if (memcmp(&a->soa.min[axis][i], &b->soa.min[axis][i], sizeof(float)) != 0 ||
			memcmp(&a->soa.max[axis][i], &b->soa.max[axis][i], sizeof(float)) != 0)
			return false;
	return true;
}

/// Equality of entity i's filters and flags in two snapshots.
static bool same_filters(const bp_view *a, const bp_view *b, uint32_t i)
{
	return a->soa.category[i] == b->soa.category[i] && a->soa.mask[i] == b->soa.mask[i] &&
	       a->soa.flags[i] == b->soa.flags[i];
}

/// Whether index i holds the same entity in two snapshots.
static bool same_handle(const bp_view *a, const bp_view *b, uint32_t i)
{
	return a->soa.entity[i].index1 == b->soa.entity[i].index1 &&
	       a->soa.entity[i].generation == b->soa.entity[i].generation;
}

/// Entities per chunk of the comparison: whole words of the bit list.
#define COMPARE_GRAIN 16384u

typedef struct compare_job {
	const bp_view *view, *prev;
	uint64_t *bits;          ///< per entity below both counts: it differs
	uint32_t *counts;        ///< per chunk: the entities that differ, then their first place
	uint8_t *filters;        ///< per chunk: some index's filters, flags or entity differ
	uint32_t *list;
	bool bounds_only;        ///< the submits in between changed bounds alone: compare only them
} compare_job;

static void compare_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const compare_job *job = ctx;
	uint32_t count = 0;
	bool filters = false;
	for (uint32_t w = begin / 64; w * 64 < end; ++w) {
		uint64_t word = 0;
		for (uint32_t i = w * 64; i < BP_MIN(end, w * 64 + 64); ++i) {
			// A moved entity's filters too, while none differs yet: bounds_only needs them all.
			// An index a destroy gave another entity is listed only if it differs, but then
			// more than bounds changed there.
			bool differs = !same_bounds(job->view, job->prev, i);
			if (!job->bounds_only && (!differs || !filters)) {
				const bool filter_differs = !same_filters(job->view, job->prev, i);
				filters = filters || filter_differs || !same_handle(job->view, job->prev, i);
				differs = differs || filter_differs;
			}
			word |= (uint64_t)differs << (i & 63);
		}
		job->bits[w] = word;
		count += (uint32_t)__builtin_popcountll(word);
	}
	job->counts[chunk] = count;
	job->filters[chunk] = filters;
}

static void list_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const compare_job *job = ctx;
	uint32_t *out = job->list + job->counts[chunk];
	for (uint32_t w = begin / 64; w * 64 < end; ++w)
		for (uint64_t m = job->bits[w]; m; m &= m - 1)
			*out++ = w * 64 + (uint32_t)__builtin_ctzll(m);
}

/// By comparing the two snapshots, in chunks on `threads` threads: O(entities), against
/// a full build's much larger constant. An entity a destroy moved into an index is found
/// as changed unless it equals what was there, in which case the pairs at that index are
/// the same too.
static bpi_changes snapshot_changes(bpi_build_changes *b, const bp_view *view, const bp_view *prev, int threads)
{
	bpi_changes changes = {.all = true};
	const uint32_t shared = prev ? BP_MIN(view->count, prev->count) : 0, chunks = bpi_chunk_count(shared, COMPARE_GRAIN);
	if (!prev || prev->dims != view->dims || !bpi_array_reserve(&b->changed, view->count) ||
		!bpi_array_reserve(&b->bits, bpi_bit_words(shared)) || !bpi_array_reserve(&b->chunk_counts, chunks) ||
		!bpi_array_reserve(&b->chunk_filters, chunks))
		return changes;
	// The submits' own word that only bounds changed, when it reaches back to prev.
	const bool said = view->changes_since == prev->number && view->changes_bounds_only;
	compare_job job = {view, prev, b->bits.data, b->chunk_counts.data, b->chunk_filters.data, b->changed.data, said};
	bpi_loop_clock_stage(BPI_LOOP_CLOCK_CHANGES);
	bpi_parallel_for(shared, COMPARE_GRAIN, threads, compare_chunk, &job);
	uint32_t count = 0;
	bool bounds_only = view->count == prev->count;
	for (uint32_t c = 0; c < chunks; ++c) {
		const uint32_t n = job.counts[c];
		job.counts[c] = count;
		count += n;
		bounds_only = bounds_only && !job.filters[c];
	}
	bpi_parallel_for(shared, COMPARE_GRAIN, threads, list_chunk, &job);
	bpi_loop_clock_stage(BPI_STAGE_PREPARE);
	for (uint32_t i = shared; i < view->count; ++i)
		b->changed.data[count++] = i;
	return (bpi_changes){.list = b->changed.data, .count = count, .previous_count = prev->count,
		.bounds_only = bounds_only};
}

bpi_changes bpi_build_changes_find(bpi_build_changes *b, const bp_view *view, const bp_view *prev, int threads)
{
	if (!prev || view->changes_all || view->changes_since != prev->number)
		return snapshot_changes(b, view, prev, threads);
	uint32_t span = BP_MAX(view->count, prev->count);
	if (!bpi_array_grow(&b->seen, b->seen_size, span) || !bpi_array_reserve(&b->changed, view->changes_count))
		return snapshot_changes(b, view, prev, threads);
	if (span > b->seen_size) {
		memset(b->seen.data + b->seen_size, 0, span - b->seen_size);
		b->seen_size = span;
	}
	uint32_t count = 0;
	for (uint32_t k = 0; k < view->changes_count; ++k) {
		uint32_t i = view->changes.data[k];
		if (i < span && !b->seen.data[i]) { // past both counts: born and gone in between
			b->seen.data[i] = 1;
			b->changed.data[count++] = i;
		}
	}
	for (uint32_t k = 0; k < count; ++k)
		b->seen.data[b->changed.data[k]] = 0;
	return (bpi_changes){.list = b->changed.data, .count = count, .previous_count = prev->count,
		.bounds_only = view->changes_bounds_only};
}

void bpi_build_changes_free(bpi_build_changes *b)
{
	bpi_array_free(&b->changed);
	bpi_array_free(&b->seen);
	bpi_array_free(&b->bits);
	bpi_array_free(&b->chunk_counts);
	bpi_array_free(&b->chunk_filters);
	*b = (bpi_build_changes){0};
}
