// SPDX-License-Identifier: MIT
// The frame scheduler: copy on submit, one builder thread, a pool of reference-counted frame
// buffers, and publication by swapping the latest pointer (DESIGN §5).
#include "frame.h"
#include "probes.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "world.h"

// Spare buffers kept for reuse. With the latest frame and the one being built
// that makes the steady state of a host submitting every frame allocate
// nothing; more spares would only hold memory.
#define SPARE_FRAMES 2

struct bpi_frames {
	pthread_mutex_t mutex; ///< guards every field below but `latest` and `indices`
	pthread_cond_t work;   ///< builder waits here for a pending snapshot or stop
	pthread_cond_t done;   ///< bp_frame_wait waits here for done_frame
	bp_view *pending;      ///< submitted, not yet taken by the builder
	bp_view *spare[SPARE_FRAMES];
	uint32_t spare_count;
	uint32_t live; ///< buffers allocated and not freed
	uint64_t submitted;
	uint64_t done_frame; ///< last frame the builder finished (published or failed)
	uint64_t published;
	bp_status failure; ///< status of the last failed build
	bool paused, stop, closed, started;
	pthread_t thread;

	/// The swap and a reader's reference increment must be one step, or a
	/// reader could take a reference on a buffer already being recycled; a
	/// short mutex does that without hazard pointers. Written only by the builder.
	pthread_mutex_t publish;
	bp_view *latest;

	bpi_stepper stepper; ///< builder thread only; separate from the world's own
	bpi_view_index_scratch index_scratch; ///< builder thread only: the query index's sort buffers
};

// ---- buffers -------------------------------------------------------------

static void free_entity_arrays(bp_view *f)
{
	bpi_soa_free(&f->soa, f->dims, f->capacity);
	bpi_free_aligned(f->offsets, ((size_t)f->capacity + 1) * sizeof(uint32_t));
	f->offsets = NULL;
	f->capacity = 0;
}

static void frame_free(bp_view *f)
{
	free_entity_arrays(f);
	bpi_pair_buffer_free(&f->pairs);
	bpi_free_aligned(f->scratch, f->scratch_capacity * sizeof(bp_pair));
	bpi_free_aligned(f->neighbours, f->neighbour_capacity * sizeof(uint32_t));
	bpi_free_aligned(f->keys, f->key_capacity * sizeof(bp_key_pair));
	bpi_free_aligned(f->began, f->began_capacity * sizeof(bp_key_pair));
	bpi_free_aligned(f->ended, f->ended_capacity * sizeof(bp_key_pair));
	bpi_view_index_free(&f->index, f->dims);
	bpi_free(f, sizeof *f);
}

/// Room for n entities in every per-entity array; all grow or none does.
static bool reserve_entities(bp_view *f, uint32_t n)
{
	if (n <= f->capacity && f->offsets)
		return true;
	uint32_t capacity = BP_MAX(BP_MAX(n, f->capacity + f->capacity / 2), 16u);
	uint32_t *offsets = bpi_alloc_aligned(((size_t)capacity + 1) * sizeof(uint32_t));
	if (!offsets || !bpi_soa_resize(&f->soa, f->dims, f->capacity, capacity, 0)) {
		bpi_free_aligned(offsets, ((size_t)capacity + 1) * sizeof(uint32_t));
		return false;
	}
	bpi_free_aligned(f->offsets, ((size_t)f->capacity + 1) * sizeof(uint32_t));
	f->offsets = offsets;
	f->capacity = capacity;
	return true;
}

static void pool_free(bpi_frames *fr)
{
	pthread_mutex_destroy(&fr->mutex);
	pthread_mutex_destroy(&fr->publish);
	pthread_cond_destroy(&fr->work);
	pthread_cond_destroy(&fr->done);
	bpi_free(fr, sizeof *fr);
}

/// A buffer nobody references any more goes back to the spares, or is freed
/// when there are enough spares or the world is gone (then the last buffer
/// out frees the pool).
static void frame_recycle(bp_view *f)
{
	bpi_frames *fr = f->pool;
	bool free_pool = false;
	pthread_mutex_lock(&fr->mutex);
	if (!fr->closed && fr->spare_count < SPARE_FRAMES) {
		fr->spare[fr->spare_count++] = f;
		f = NULL;
	} else {
		fr->live--;
		free_pool = fr->closed && fr->live == 0;
	}
	pthread_mutex_unlock(&fr->mutex);
	if (f)
		frame_free(f);
	if (free_pool)
		pool_free(fr);
}

// ---- the builder's per-frame work ------------------------------------------

static bool pairs_sorted(const bp_pair *p, size_t count)
{
	for (size_t i = 1; i < count; ++i)
		if (p[i - 1].lo > p[i].lo || (p[i - 1].lo == p[i].lo && p[i - 1].hi >= p[i].hi))
			return false;
	return true;
}

/// Stable counting sort of `from` by lo (by_lo) or hi into `to`; counts has n + 1 entries.
static void counting_pass(const bp_pair *from, bp_pair *to, size_t count, uint32_t *counts, uint32_t n, bool by_lo)
{
	memset(counts, 0, ((size_t)n + 1) * sizeof *counts);
	for (size_t i = 0; i < count; ++i)
		counts[by_lo ? from[i].lo : from[i].hi]++;
	uint32_t sum = 0;
	for (uint32_t e = 0; e <= n; ++e) {
		uint32_t c = counts[e];
		counts[e] = sum;
		sum += c;
	}
	for (size_t i = 0; i < count; ++i)
		to[counts[by_lo ? from[i].lo : from[i].hi]++] = from[i];
}

/// Sorts the pairs by (lo, hi): two stable counting passes (LSD by hi, then lo),
/// O(pairs + entities) against qsort's O(p log p); skipped when the algorithm's
/// order already is canonical (brute's is).
static bp_status sort_pairs(bp_view *f)
{
	size_t count = f->pairs.count;
	if (pairs_sorted(f->pairs.data, count))
		return BP_OK;
	if (!bpi_reserve_scratch((void **)&f->scratch, &f->scratch_capacity, count, sizeof(bp_pair)))
		return BP_ERR_OUT_OF_MEMORY;
	counting_pass(f->pairs.data, f->scratch, count, f->offsets, f->count, false);
	counting_pass(f->scratch, f->pairs.data, count, f->offsets, f->count, true);
	return BP_OK;
}

/// CSR adjacency from the sorted pairs. Each list comes out ascending: x's
/// neighbours below x arrive from blocks lo < x (in lo order) before its own
/// block lo == x (in hi order).
static bp_status build_adjacency(bp_view *f)
{
	size_t count = f->pairs.count;
	if (count > UINT32_MAX / 2)
		return BP_ERR_UNSUPPORTED; // 32-bit offsets
	// At least one slot, so bp_view_neighbours never hands out NULL.
	if (!bpi_reserve_scratch((void **)&f->neighbours, &f->neighbour_capacity, BP_MAX(2 * count, (size_t)1), sizeof(uint32_t)))
		return BP_ERR_OUT_OF_MEMORY;
	uint32_t *offsets = f->offsets;
	const bp_pair *p = f->pairs.data;
	memset(offsets, 0, ((size_t)f->count + 1) * sizeof *offsets);
	for (size_t i = 0; i < count; ++i) {
		offsets[p[i].lo + 1]++;
		offsets[p[i].hi + 1]++;
	}
	for (uint32_t e = 0; e < f->count; ++e)
		offsets[e + 1] += offsets[e];
	for (size_t i = 0; i < count; ++i) { // offsets[e] is e's cursor here
		f->neighbours[offsets[p[i].lo]++] = p[i].hi;
		f->neighbours[offsets[p[i].hi]++] = p[i].lo;
	}
	for (uint32_t e = f->count; e > 0; --e) // cursors ended at the next start: shift back
		offsets[e] = offsets[e - 1];
	offsets[0] = 0;
	return BP_OK;
}

static int compare_key_pairs(const void *a, const void *b)
{
	const bp_key_pair *x = a, *y = b;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	return x->b < y->b ? -1 : x->b > y->b;
}

static int key_pair_order(const bp_key_pair *x, const bp_key_pair *y) { return compare_key_pairs(x, y); }

/// Key pairs of this frame, sorted. When keys increase with the dense index
/// (hosts that number entities in creation order) they inherit the pairs' order
/// and no sort is needed.
static bp_status build_keys(bp_view *f)
{
	size_t count = f->pairs.count;
	if (!bpi_reserve_scratch((void **)&f->keys, &f->key_capacity, count, sizeof(bp_key_pair)))
		return BP_ERR_OUT_OF_MEMORY;
	const uint64_t *key = f->soa.user_key;
	bool increasing = true;
	for (uint32_t e = 1; e < f->count && increasing; ++e)
		increasing = key[e - 1] < key[e];
	for (size_t i = 0; i < count; ++i) {
		uint64_t a = key[f->pairs.data[i].lo], b = key[f->pairs.data[i].hi];
		f->keys[i] = a <= b ? (bp_key_pair){a, b} : (bp_key_pair){b, a};
	}
	if (!increasing && count > 1)
		qsort(f->keys, count, sizeof(bp_key_pair), compare_key_pairs);
	return BP_OK;
}

/// Multiset differences of two sorted key-pair lists: `out` gets the elements of
/// `a` missing from `b` (counted only when out is NULL). Returns their number.
static size_t key_difference(const bp_key_pair *a, size_t na, const bp_key_pair *b, size_t nb, bp_key_pair *out)
{
	size_t i = 0, j = 0, n = 0;
	while (i < na) {
		int order = j < nb ? key_pair_order(&a[i], &b[j]) : -1;
		if (order < 0) {
			if (out)
				out[n] = a[i];
			n++, i++;
		} else if (order > 0) {
			j++;
		} else {
			i++, j++;
		}
	}
	return n;
}

static bp_status build_events(bp_view *f, const bp_view *prev)
{
	const bp_key_pair *old = prev ? prev->keys : NULL;
	size_t old_count = prev ? prev->pairs.count : 0, count = f->pairs.count;
	size_t began = key_difference(f->keys, count, old, old_count, NULL);
	size_t ended = key_difference(old, old_count, f->keys, count, NULL);
	if (!bpi_reserve_scratch((void **)&f->began, &f->began_capacity, began, sizeof(bp_key_pair)) ||
		!bpi_reserve_scratch((void **)&f->ended, &f->ended_capacity, ended, sizeof(bp_key_pair)))
		return BP_ERR_OUT_OF_MEMORY;
	f->began_count = key_difference(f->keys, count, old, old_count, f->began);
	f->ended_count = key_difference(old, old_count, f->keys, count, f->ended);
	return BP_OK;
}

static bp_status build_frame(bpi_frames *fr, bp_view *f, const bp_view *prev)
{
	BPI_MARK_FRAME_BEGIN(f->number, f->count);
	uint64_t t0 = bpi_now_ns();
	bp_frame_stats stats = {.frame = f->number, .ns_prepare = f->stats.ns_prepare};
	bpi_step_fault fault; // the step's error status is what a waiter sees
	bp_status status =
		bpi_stepper_run(&fr->stepper, &f->settings, &f->soa, f->count, f->unfiltered, &f->pairs, &stats, &fault);
	BPI_MARK_STAGE_BEGIN(BPI_STAGE_VIEW);
	if (status == BP_OK)
		status = sort_pairs(f);
	if (status == BP_OK)
		status = build_adjacency(f);
	if (status == BP_OK)
		status = build_keys(f);
	if (status == BP_OK)
		status = build_events(f, prev);
	// Without memory for the index the frame still publishes: its queries scan.
	if (status == BP_OK)
		(void)bpi_view_index_build(&f->index, &fr->index_scratch, &f->soa, f->count, f->dims, stats.thread_count);
	BPI_MARK_STAGE_END(BPI_STAGE_VIEW);
	stats.ns_total = stats.ns_prepare + (bpi_now_ns() - t0);
	BPI_MARK_FRAME_END(f->number, status == BP_OK ? f->pairs.count : 0, stats.ns_total, status);
	f->stats = stats;
	return status;
}

static void *builder_main(void *arg)
{
	bpi_frames *fr = arg;
	pthread_mutex_lock(&fr->mutex);
	for (;;) {
		while (!fr->stop && (fr->paused || !fr->pending))
			pthread_cond_wait(&fr->work, &fr->mutex);
		if (fr->stop)
			break;
		bp_view *f = fr->pending;
		uint64_t number = f->number;
		fr->pending = NULL;
		pthread_mutex_unlock(&fr->mutex);
		BP_PROBE1(build_begin, number);

		bp_view *prev = fr->latest; // only this thread writes latest
		bp_status status = build_frame(fr, f, prev);
		if (status == BP_OK) {
			atomic_store_explicit(&f->refs, 1, memory_order_relaxed); // the latest pointer's reference
			pthread_mutex_lock(&fr->publish);
			fr->latest = f;
			pthread_mutex_unlock(&fr->publish);
			BP_PROBE1(publish, number);
			bp_frame_release(prev);
		} else {
			frame_recycle(f);
		}

		pthread_mutex_lock(&fr->mutex);
		if (status == BP_OK)
			fr->published = number;
		else
			fr->failure = status;
		fr->done_frame = number; // not f->number: a failed f is already recycled
		pthread_cond_broadcast(&fr->done);
	}
	pthread_mutex_unlock(&fr->mutex);
	return NULL;
}

// ---- scheduler lifetime ----------------------------------------------------

bp_status bpi_frames_create(bpi_frames **out)
{
	bpi_frames *fr = bpi_alloc(sizeof *fr);
	if (!fr)
		return BP_ERR_OUT_OF_MEMORY;
	*fr = (bpi_frames){.failure = BP_OK};
	pthread_mutex_init(&fr->mutex, NULL);
	pthread_mutex_init(&fr->publish, NULL);
	pthread_cond_init(&fr->work, NULL);
	pthread_cond_init(&fr->done, NULL);
	*out = fr;
	return BP_OK;
}

void bpi_frames_shutdown(bpi_frames *fr)
{
	if (!fr)
		return;
	pthread_mutex_lock(&fr->mutex);
	fr->stop = true;
	bool started = fr->started;
	pthread_cond_signal(&fr->work);
	pthread_cond_broadcast(&fr->done);
	pthread_mutex_unlock(&fr->mutex);
	if (started)
		pthread_join(fr->thread, NULL);
	// The builder is gone; from here only releases of held views touch the pool.
	bpi_stepper_free(&fr->stepper);
	bpi_view_index_scratch_free(&fr->index_scratch);
	pthread_mutex_lock(&fr->publish);
	bp_view *latest = fr->latest;
	fr->latest = NULL;
	pthread_mutex_unlock(&fr->publish);

	bp_view *dropped[SPARE_FRAMES + 1];
	uint32_t n = 0;
	pthread_mutex_lock(&fr->mutex);
	fr->closed = true;
	if (fr->pending)
		dropped[n++] = fr->pending;
	fr->pending = NULL;
	while (fr->spare_count)
		dropped[n++] = fr->spare[--fr->spare_count];
	fr->live -= n;
	bool free_pool = fr->live == 0; // false while latest or any held view exists
	pthread_mutex_unlock(&fr->mutex);
	for (uint32_t i = 0; i < n; ++i)
		frame_free(dropped[i]);
	if (latest)
		bp_frame_release(latest); // may be the last buffer: then it frees the pool
	else if (free_pool)
		pool_free(fr);
}

void bpi_frames_pause(bp_world *w, bool paused)
{
	bpi_frames *fr = w->frames;
	pthread_mutex_lock(&fr->mutex);
	fr->paused = paused;
	pthread_cond_signal(&fr->work);
	pthread_mutex_unlock(&fr->mutex);
}

uint32_t bpi_frames_live(bp_world *w)
{
	bpi_frames *fr = w->frames;
	pthread_mutex_lock(&fr->mutex);
	uint32_t live = fr->live;
	pthread_mutex_unlock(&fr->mutex);
	return live;
}

// ---- public API --------------------------------------------------------------

/// Copies the world's dense arrays and settings into f.
static bp_status snapshot(bp_view *f, const bp_world *w)
{
	uint64_t t0 = bpi_now_ns();
	if (!reserve_entities(f, w->count))
		return BP_ERR_OUT_OF_MEMORY;
	BPI_MARK_STAGE_BEGIN(BPI_STAGE_PREPARE);
	bpi_soa_copy(&f->soa, &w->soa, w->dims, w->count);
	f->count = w->count;
	f->unfiltered = bpi_world_unfiltered(w);
	f->settings = bpi_world_settings(w);
	f->pairs.count = 0;
	f->began_count = f->ended_count = 0;
	f->index.count = 0;
	f->stats = (bp_frame_stats){.ns_prepare = bpi_now_ns() - t0};
	BPI_MARK_STAGE_END(BPI_STAGE_PREPARE);
	return BP_OK;
}

bp_status bp_frame_submit(bp_world *w, uint64_t *out_frame)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	bpi_frames *fr = w->frames;
	pthread_mutex_lock(&fr->mutex);
	if (!fr->started) {
		if (pthread_create(&fr->thread, NULL, builder_main, fr) != 0) {
			pthread_mutex_unlock(&fr->mutex);
			return bpi_world_fail(w, BP_ERR_OUT_OF_MEMORY, "cannot start the frame builder thread");
		}
		fr->started = true;
	}
	bp_view *f = fr->spare_count ? fr->spare[--fr->spare_count] : NULL;
	if (!f)
		fr->live++; // counted before it exists, so a concurrent last release cannot free the pool
	pthread_mutex_unlock(&fr->mutex);

	if (!f) {
		f = bpi_alloc(sizeof *f);
		if (!f) {
			pthread_mutex_lock(&fr->mutex);
			fr->live--;
			pthread_mutex_unlock(&fr->mutex);
			return bpi_world_fail(w, BP_ERR_OUT_OF_MEMORY, "no memory for a frame buffer");
		}
		*f = (bp_view){.pool = fr, .dims = w->dims};
		atomic_init(&f->refs, 0);
	}
	if (snapshot(f, w) != BP_OK) {
		frame_recycle(f);
		return bpi_world_fail(w, BP_ERR_OUT_OF_MEMORY, "no memory to snapshot %u entities", w->count);
	}

	pthread_mutex_lock(&fr->mutex);
	uint64_t number = ++fr->submitted;
	f->number = number;
	bp_view *coalesced = fr->pending; // not started yet: the newer snapshot replaces it
	fr->pending = f;
	pthread_cond_signal(&fr->work);
	pthread_mutex_unlock(&fr->mutex);
	if (coalesced)
		frame_recycle(coalesced);
	if (out_frame)
		*out_frame = number;
	BP_PROBE2(submit, number, w->count);
	return BP_OK;
}

bp_status bp_frame_wait(bp_world *w, uint64_t frame)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	bpi_frames *fr = w->frames;
	pthread_mutex_lock(&fr->mutex);
	if (frame > fr->submitted) {
		pthread_mutex_unlock(&fr->mutex);
		return BP_ERR_OUT_OF_RANGE;
	}
	while (fr->done_frame < frame && !fr->stop)
		pthread_cond_wait(&fr->done, &fr->mutex);
	bp_status status = fr->published >= frame ? BP_OK : fr->failure != BP_OK ? fr->failure : BP_ERR_UNSUPPORTED;
	pthread_mutex_unlock(&fr->mutex);
	return status;
}

bp_status bp_frame_acquire(bp_world *w, bp_view **out)
{
	if (!out)
		return BP_ERR_INVALID_ARGUMENT;
	*out = NULL;
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	bpi_frames *fr = w->frames;
	pthread_mutex_lock(&fr->publish);
	bp_view *v = fr->latest;
	if (v)
		atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
	pthread_mutex_unlock(&fr->publish);
	BP_PROBE1(acquire, v ? v->number : 0);
	*out = v;
	return v ? BP_OK : BP_ERR_OUT_OF_RANGE;
}

void bp_frame_release(bp_view *v)
{
	BP_PROBE1(release, v ? v->number : 0);
	if (v && atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel) == 1)
		frame_recycle(v);
}

bp_status bp_frame_step(bp_world *w, bp_view **out)
{
	if (!out)
		return BP_ERR_INVALID_ARGUMENT;
	*out = NULL;
	uint64_t frame;
	bp_status status = bp_frame_submit(w, &frame);
	if (status == BP_OK)
		status = bp_frame_wait(w, frame);
	if (status == BP_OK)
		status = bp_frame_acquire(w, out);
	// Only the host submits and it is here, so the latest frame is the one submitted.
	BP_ASSERT(status != BP_OK || (*out)->number == frame);
	return status;
}

uint64_t bp_view_frame(const bp_view *v) { return v ? v->number : 0; }
uint32_t bp_view_entity_count(const bp_view *v) { return v ? v->count : 0; }
int bp_view_dims(const bp_view *v) { return v ? v->dims : 0; }
bp_frame_stats bp_view_stats(const bp_view *v) { return v ? v->stats : (bp_frame_stats){0}; }
const uint64_t *bp_view_user_keys(const bp_view *v) { return v ? v->soa.user_key : NULL; }

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
