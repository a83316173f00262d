// SPDX-License-Identifier: MIT
// A published frame's memory, the extras derived from its pairs (canonical order and,
// through view_events.c, named pairs and events by the builder; adjacency and query hierarchy
// by the builder or on first use) and its plain accessors.
#include "view/view.h"
#include "parallel/parallel.h"
#include "base/probes.h"

#include <stdlib.h>
#include <string.h>

// ---- memory --------------------------------------------------------------------

static void free_entity_arrays(bp_view *view)
{
	bpi_soa_free(&view->soa, view->dims, view->capacity);
	bpi_free_aligned(view->offsets, ((size_t)view->capacity + 1) * sizeof(uint32_t));
	view->offsets = NULL;
	view->capacity = 0;
}

bp_view *bpi_view_create(struct bpi_frames *pool, _Atomic uint64_t *hierarchy_asked,
	_Atomic(bpi_bvh_shared *) *retired, int dims)
{
	bp_view *view = bpi_alloc(sizeof *view);
	if (!view)
		return NULL;
	*view = (bp_view){.pool = pool, .dims = dims, .hierarchy_asked = hierarchy_asked, .hierarchy.retired = retired};
	atomic_init(&view->refs, 0);
	atomic_init(&view->ready, 0u);
	atomic_init(&view->asked, 0u);
	if (pthread_mutex_init(&view->lazy_lock, NULL) != 0) {
		bpi_free(view, sizeof *view);
		return NULL;
	}
	return view;
}

void bpi_view_free(bp_view *view)
{
	pthread_mutex_destroy(&view->lazy_lock);
	free_entity_arrays(view);
	bpi_pair_buffer_free(&view->pairs);
	bpi_budget_array_free(view->budget, &view->scratch);
	bpi_budget_array_free(view->budget, &view->neighbours);
	bpi_view_events_free(view);
	bpi_array_free(&view->changes);
	bpi_view_hierarchy_free(&view->hierarchy);
	bpi_array_free(&view->slot_dense);
	bpi_free(view, sizeof *view);
}

bool bpi_view_reserve(bp_view *view, uint32_t n)
{
	if (n <= view->capacity && view->offsets)
		return true;
	uint32_t capacity = BP_MAX(BP_MAX(n, view->capacity + view->capacity / 2), 16u);
	uint32_t *offsets = bpi_alloc_aligned(((size_t)capacity + 1) * sizeof(uint32_t));
	if (!offsets || !bpi_soa_resize(&view->soa, view->dims, view->capacity, capacity, 0)) {
		bpi_free_aligned(offsets, ((size_t)capacity + 1) * sizeof(uint32_t));
		return false;
	}
	bpi_free_aligned(view->offsets, ((size_t)view->capacity + 1) * sizeof(uint32_t));
	view->offsets = offsets;
	view->capacity = capacity;
	return true;
}

// ---- derived from the pairs ------------------------------------------------------

static bool pairs_sorted(const bp_pair *p, size_t count)
{
	for (size_t i = 1; i < count; ++i)
		if (p[i - 1].lo > p[i].lo || (p[i - 1].lo == p[i].lo && p[i - 1].hi >= p[i].hi))
			return false;
	return true;
}

/// Sorts the pairs by (lo, hi) on the team (pairs_sort.c), cheaper than two stable
/// counting passes over the entities; skipped when the step says they are sorted (an
/// incremental step's) or the algorithm's order already is canonical, as brute's is
/// (perf/README.md, "Pair buffers and sorting").
static bp_status sort_pairs(bp_view *view, bool sorted, int threads)
{
	size_t count = view->pairs.count;
	BP_ASSERT(!sorted || pairs_sorted(view->pairs.data, count));
	if (sorted || pairs_sorted(view->pairs.data, count))
		return BP_OK;
	if (!bpi_budget_array_reserve(view->budget, &view->scratch, count) ||
		!bpi_pairs_sort_canonical(view->pairs.data, count, view->scratch.data, threads))
		return BP_ERR_OUT_OF_MEMORY;
	return BP_OK;
}

/// CSR adjacency from the sorted pairs. Each list comes out ascending: x's
/// neighbours below x arrive from blocks lo < x (in lo order) before its own
/// block lo == x (in hi order).
static bp_status build_adjacency(bp_view *view)
{
	size_t count = view->pairs.count;
	if (count > UINT32_MAX / 2)
		return BP_ERR_UNSUPPORTED; // 32-bit offsets
	// At least one slot, so bp_view_neighbours never hands out NULL.
	if (!bpi_budget_array_reserve(view->budget, &view->neighbours, BP_MAX(2 * count, (size_t)1)))
		return BP_ERR_OUT_OF_MEMORY;
	uint32_t *offsets = view->offsets;
	const bp_pair *p = view->pairs.data;
	uint32_t *neighbours = view->neighbours.data;
	memset(offsets, 0, ((size_t)view->count + 1) * sizeof *offsets);
	for (size_t i = 0; i < count; ++i) {
		offsets[p[i].lo + 1]++;
		offsets[p[i].hi + 1]++;
	}
	for (uint32_t e = 0; e < view->count; ++e)
		offsets[e + 1] += offsets[e];
	for (size_t i = 0; i < count; ++i) { // offsets[e] is e's cursor here
		neighbours[offsets[p[i].lo]++] = p[i].hi;
		neighbours[offsets[p[i].hi]++] = p[i].lo;
	}
	for (uint32_t e = view->count; e > 0; --e) // cursors ended at the next start: shift back
		offsets[e] = offsets[e - 1];
	offsets[0] = 0;
	return BP_OK;
}

/// The hierarchy, taking prev's shared part when prev made one and `known` lists what differs.
static void make_hierarchy(bp_view *view, const bp_view *prev, const bpi_hierarchy_changes *known,
	bpi_bvh_scratch *scratch, int threads)
{
	bpi_hierarchy_changes changes = known ? *known : (bpi_hierarchy_changes){0};
	changes.prev = known && prev && (atomic_load_explicit(&prev->ready, memory_order_acquire) & BPI_VIEW_HIERARCHY)
			       ? &prev->hierarchy
			       : NULL;
	(void)bpi_view_hierarchy_make(&view->hierarchy, &changes, &view->soa, view->count, view->dims, scratch, threads);
}

bp_status bpi_view_derive(bp_view *view, const bp_view *prev, const bpi_hierarchy_changes *changes, bool hierarchy,
	bool sorted, bpi_bvh_scratch *scratch, int threads, uint64_t *ns_hierarchy)
{
	unsigned named = 0; // the extras the events made
	*ns_hierarchy = 0;
	bpi_loop_clock_stage(BPI_LOOP_CLOCK_SORT);
	bp_status status = sort_pairs(view, sorted, threads);
	bpi_loop_clock_stage(BPI_LOOP_CLOCK_EVENTS);
	if (status == BP_OK)
		status = bpi_view_events_build(view, prev, &named, threads);
	bpi_loop_clock_stage(BPI_STAGE_PREPARE);
	if (status != BP_OK)
		return status;
	if (!prev) {
		atomic_store_explicit(&view->ready, named, memory_order_release);
		return BP_OK;
	}
	// The extras a reader used last frame it uses this frame too: made now, so it
	// does not wait. A host that uses neither pays for neither: each is a sizeable
	// share of a frame (perf/README.md, "Views: extras and pair events").
	unsigned asked = atomic_load_explicit(&prev->asked, memory_order_relaxed);
	if (hierarchy) {
		const uint64_t t0 = bpi_now_ns();
		bpi_loop_clock_stage(BPI_LOOP_CLOCK_HIERARCHY);
		make_hierarchy(view, prev, changes, scratch, threads);
		bpi_loop_clock_stage(BPI_STAGE_PREPARE);
		*ns_hierarchy = bpi_now_ns() - t0;
	}
	unsigned made = (hierarchy ? (unsigned)BPI_VIEW_HIERARCHY : 0u) | named;
	if (asked & BPI_VIEW_ADJACENCY) {
		// Lists that found no memory are not made: the first reader to ask tries again.
		view->adjacency_status = build_adjacency(view);
		made |= view->adjacency_status == BP_ERR_OUT_OF_MEMORY ? 0u : (unsigned)BPI_VIEW_ADJACENCY;
	}
	atomic_store_explicit(&view->ready, made, memory_order_release);
	return BP_OK;
}

void bpi_view_derive_queries(bp_view *view, const bp_view *prev, const bpi_hierarchy_changes *changes,
	bpi_bvh_scratch *scratch, int threads)
{
	BP_ASSERT(view->pairs.count == 0);
	view->world_view = true; // no pairs: no events, and never counted from (bp_view_events_since)
	bpi_loop_clock_stage(BPI_LOOP_CLOCK_HIERARCHY);
	make_hierarchy(view, prev, changes, scratch, threads);
	bpi_loop_clock_stage(BPI_STAGE_PREPARE);
	atomic_store_explicit(&view->ready, (unsigned)(BPI_VIEW_HIERARCHY | BPI_VIEW_EVENT_NAMES), memory_order_release);
}

bool bpi_view_keeps_hierarchy(const bp_view *view, const bp_view *prev)
{
	if (!prev)
		return false;
	const uint64_t asked = atomic_load_explicit(view->hierarchy_asked, memory_order_relaxed);
	const uint64_t keep = view->settings.query_hierarchy_frames;
	return asked && asked < view->number && (keep == UINT32_MAX || view->number - asked <= keep + 1);
}

/// A reader's making of one kind of derived data, under the view's lock: BP_OK once made;
/// an error leaves it unmade, for a later call to try again.
typedef bp_status make_extra_fn(bp_view *view);

static bp_status make_hierarchy_lazily(bp_view *view)
{
	// Not the builder's scratch: the builder may be making the next frame meanwhile.
	bpi_bvh_scratch scratch = {0};
	make_hierarchy(view, NULL, NULL, &scratch, bpi_step_threads(&view->settings, view->count));
	bpi_bvh_scratch_free(&scratch);
	return BP_OK; // a hierarchy that found no memory leaves its queries to scans
}

/// Made whatever it found, but for memory: adjacency_status keeps what it found.
static bp_status make_adjacency_lazily(bp_view *view)
{
	view->adjacency_status = build_adjacency(view);
	return view->adjacency_status == BP_ERR_OUT_OF_MEMORY ? BP_ERR_OUT_OF_MEMORY : BP_OK;
}

/// Slots kept from an earlier submit into this buffer are made already.
static bp_status make_slots_lazily(bp_view *view)
{
	return view->slots_kept ? BP_OK : bpi_view_slots_build(view);
}

/// The kinds of derived data a reader may make, in the order they are made.
static const struct {
	unsigned bit;
	make_extra_fn *make;
} extras[] = {
	{BPI_VIEW_HIERARCHY, make_hierarchy_lazily},
	{BPI_VIEW_ADJACENCY, make_adjacency_lazily},
	{BPI_VIEW_NAMES, bpi_view_names_build},
	{BPI_VIEW_SLOTS, make_slots_lazily},
	{BPI_VIEW_EVENT_NAMES, bpi_view_events_name},
	{BPI_VIEW_KEYS, bpi_view_keys_build},
};

bp_status bpi_view_ensure(const bp_view *view, unsigned what)
{
	bp_view *v = (bp_view *)view; // the extras are caches: made once, then read only
	if ((atomic_load_explicit(&v->asked, memory_order_relaxed) & what) != what) {
		atomic_fetch_or_explicit(&v->asked, what, memory_order_relaxed);
		uint64_t asked = atomic_load_explicit(v->hierarchy_asked, memory_order_relaxed);
		while ((what & BPI_VIEW_HIERARCHY) && asked < v->number &&
			!atomic_compare_exchange_weak_explicit(v->hierarchy_asked, &asked, v->number, memory_order_relaxed,
				memory_order_relaxed)) {
		}
	}
	unsigned ready = atomic_load_explicit(&v->ready, memory_order_acquire);
	bp_status status = BP_OK;
	if ((ready & what) != what) {
		pthread_mutex_lock(&v->lazy_lock);
		ready = atomic_load_explicit(&v->ready, memory_order_relaxed);
		for (size_t k = 0; k < sizeof extras / sizeof extras[0]; ++k) {
			if (!(what & extras[k].bit) || (ready & extras[k].bit))
				continue;
			if (status == BP_OK)
				status = extras[k].make(v);
			if (status != BP_OK) // not made: a later call tries again
				what &= ~extras[k].bit;
		}
		atomic_store_explicit(&v->ready, ready | what, memory_order_release);
		pthread_mutex_unlock(&v->lazy_lock);
	}
	if (status != BP_OK)
		return status;
	return (what & BPI_VIEW_ADJACENCY) ? v->adjacency_status : BP_OK;
}

// ---- accessors --------------------------------------------------------------------

uint64_t bp_view_frame(const bp_view *v) { return v ? v->number : 0; }
uint32_t bp_view_entity_count(const bp_view *v) { return v ? v->count : 0; }
int bp_view_dims(const bp_view *v) { return v ? v->dims : 0; }
bp_frame_stats bp_view_stats(const bp_view *v) { return v ? v->stats : (bp_frame_stats){0}; }
const uint64_t *bp_view_user_keys(const bp_view *v) { return v ? v->soa.user_key : NULL; }
const bp_entity *bp_view_entities(const bp_view *v) { return v ? v->soa.entity : NULL; }

const bp_pair *bp_view_pairs(const bp_view *v, size_t *count)
{
	if (count)
		*count = v ? v->pairs.count : 0;
	return v ? v->pairs.data : NULL;
}

bp_bounds_arrays bp_view_bounds(const bp_view *v)
{
	if (!v)
		return (bp_bounds_arrays){0};
	return (bp_bounds_arrays){v->soa.min[0], v->soa.min[1], v->soa.min[2], v->soa.max[0], v->soa.max[1], v->soa.max[2]};
}
