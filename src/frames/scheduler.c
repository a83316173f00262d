// SPDX-License-Identifier: MIT
// The frame scheduler: copy on submit, one builder thread (or the host in bp_frame_step), a pool of reference-counted frame
// buffers, and publication by swapping the latest pointer (docs/design.md "Frame protocol").
#include "frames/scheduler.h"
#include "frames/scheduler_changes.h"
#include "parallel/parallel.h"
#include "base/probes.h"
#include "parallel/threads.h"

#include <pthread.h>
#include <string.h>

// Spare buffers kept for reuse. With the latest frame and the one being built
// that makes the steady state of a host submitting every frame allocate
// nothing; more spares would only hold memory.
#define SPARE_FRAMES 2

struct bpi_frames {
	pthread_mutex_t mutex; ///< guards every field below but `latest` and `stepper`
	pthread_cond_t work;   ///< builder waits here for a pending snapshot or stop
	pthread_cond_t done;   ///< bp_frame_wait waits here for done_frame
	bp_view *pending;      ///< submitted, not yet taken for a build
	/// A build runs, on the builder thread or on a host thread waiting in bp_frame_step:
	/// whoever takes `pending` sets it, and the other waits, so the builder's state
	/// (stepper, changes, scratch, latest) has one user at a time.
	bool building;
	bool pending_for_host; ///< `pending` is bp_frame_step's: the builder leaves it to its caller
	bp_view *spare[SPARE_FRAMES];
	uint32_t spare_count;
	uint32_t live; ///< buffers allocated and not freed
	_Atomic uint64_t hierarchy_asked; ///< every view's hierarchy_asked
	_Atomic(bpi_bvh_shared *) retired; ///< every view's hierarchy.retired
	uint64_t submitted;
	uint64_t frame_submitted; ///< the last submit that is a frame (not a world view)
	uint64_t done_frame; ///< last frame a build finished (published or failed)
	uint64_t published;
	bp_status failure; ///< status of the last failed build
	bool paused, stop, closed, started;
	pthread_t thread;

	/// The swap and a reader's reference increment must be one step, or a
	/// reader could take a reference on a buffer already being recycled; a
	/// short mutex does that without hazard pointers. Written only by the building thread.
	pthread_mutex_t publish;
	bp_view *latest;
	/// The last world view, held by the pool (with BPI_VIEW_LATEST, so a reader's extra
	/// release cannot take it): the next one's hierarchy starts from it or from latest,
	/// whichever is newer. Its build's thread only, as latest.
	bp_view *queried;

	bpi_stepper stepper; ///< the building thread only; separate from the world's own
	/// Pair memory of the stepper and of every frame buffer, held ones
	/// included; it lives as long as the pool, so a view released after the
	/// world gives its bytes back here.
	bpi_budget budget;
	bpi_build_changes changes; ///< the building thread only
	/// The query hierarchies' build scratch, the building thread only: readers walk only the trees.
	bpi_bvh_scratch hierarchy_scratch;

	bpi_submit_log log; ///< host thread only
};

// ---- the pool --------------------------------------------------------------------

static void pool_free(bpi_frames *fr)
{
	bpi_view_hierarchy_retired_free(&fr->retired);
	pthread_mutex_destroy(&fr->mutex);
	pthread_mutex_destroy(&fr->publish);
	pthread_cond_destroy(&fr->work);
	pthread_cond_destroy(&fr->done);
	bpi_free(fr, sizeof *fr);
}

/// Counts `n` freed buffers out of the pool; the last one out of a closed pool frees it.
static void pool_leave(bpi_frames *fr, uint32_t n)
{
	pthread_mutex_lock(&fr->mutex);
	fr->live -= n;
	const bool free_pool = fr->closed && fr->live == 0;
	pthread_mutex_unlock(&fr->mutex);
	if (free_pool)
		pool_free(fr);
}

/// A buffer nobody references any more goes back to the spares, or is freed
/// when there are enough spares or the world is gone (then the last buffer
/// out frees the pool). A buffer is freed before it leaves the count: freeing
/// it still touches the pool (its budget, the retired hierarchy part).
static void frame_recycle(bp_view *view)
{
	bpi_frames *fr = view->pool;
	pthread_mutex_lock(&fr->mutex);
	const bool spare = !fr->closed && fr->spare_count < SPARE_FRAMES;
	if (spare)
		fr->spare[fr->spare_count++] = view;
	pthread_mutex_unlock(&fr->mutex);
	if (spare)
		return;
	bpi_view_free(view);
	pool_leave(fr, 1);
}

/// Drops the latest pointer's reference to a frame it no longer points at, or the pool's to
/// a world view it no longer keeps (NULL: none); recycled when no reader holds it either.
static void unpublish(bp_view *view)
{
	if (view && atomic_fetch_sub_explicit(&view->refs, BPI_VIEW_LATEST, memory_order_acq_rel) == BPI_VIEW_LATEST)
		frame_recycle(view);
}

// ---- the build -------------------------------------------------------------------

static bp_status build_frame(bpi_frames *fr, bp_view *view, const bp_view *prev, bool on_host)
{
	BPI_MARK_FRAME_BEGIN(view->number, view->count);
	uint64_t t0 = bpi_now_ns();
	bp_frame_stats stats = {.frame = view->number, .ns_prepare = view->stats.ns_prepare};
	bpi_step_fault fault; // the step's error status is what a waiter sees
	bpi_team_failure team; // a build whose threads cannot start fails as one out of memory
	const bpi_executor *executor = &view->settings.executor;
	view->settings.builder = !on_host; // a host that builds would only wait: it takes every core
	const int team_threads = bpi_step_threads(&view->settings, view->count);
	bp_status status = bpi_executor_enter(executor, team_threads, &team);
	bpi_budget_begin(&fr->budget, view->settings.memory_limit);
	if (bpi_budget_above_limit(&fr->budget))
		bpi_pair_buffer_free(&view->pairs); // a reused buffer's old pairs: give the block back
	bpi_changes changes = {.all = true};
	const bool incremental = view->settings.incremental && !view->settings.periodic;
	if (status == BP_OK && incremental)
		changes = bpi_build_changes_find(&fr->changes, view, prev, team_threads);
	// An incremental step merges sorted lists, so asked for canonical pairs it sorts only a
	// full step's (before the host's pair filter, which keeps the order), and the view need
	// neither sort nor check them.
	bpi_step_settings step = view->settings;
	step.canonical_pairs = step.canonical_pairs || incremental;
	if (status == BP_OK)
		status = bpi_stepper_run(&fr->stepper, &step, &view->soa, view->count, view->unfiltered, &changes,
			&view->pairs, &stats, &fault);
	BPI_MARK_STAGE_BEGIN(BPI_STAGE_VIEW);
	const uint64_t view_t0 = bpi_now_ns();
	// Decided once: a reader asking meanwhile must not make a hierarchy without what changed.
	const bool hierarchy = bpi_view_keeps_hierarchy(view, prev);
	if (!hierarchy) // no reader queries now: the part kept for the next hierarchy goes
		bpi_view_hierarchy_retired_free(&fr->retired);
	// The hierarchy takes the last frame's shared part when what changed is known.
	if (status == BP_OK && changes.all && hierarchy)
		changes = bpi_build_changes_find(&fr->changes, view, prev, team_threads);
	const bpi_hierarchy_changes changed = {NULL, changes.list, changes.count, changes.bounds_only};
	if (status == BP_OK)
		status = bpi_view_derive(view, prev, changes.all ? NULL : &changed, hierarchy, incremental,
			&fr->hierarchy_scratch, stats.thread_count, &stats.ns_hierarchy);
	stats.ns_view = bpi_now_ns() - view_t0;
	bpi_executor_leave();
	// The next build measures its changes from the latest frame, which this one
	// does not replace: a step that succeeded here must not be built upon.
	if (status != BP_OK)
		bpi_incremental_forget(fr->stepper.incremental);
	BPI_MARK_STAGE_END(BPI_STAGE_VIEW);
	stats.ns_total = stats.ns_prepare + (bpi_now_ns() - t0);
	BPI_MARK_FRAME_END(view->number, status == BP_OK ? view->pairs.count : 0, stats.ns_total, status);
	view->stats = stats;
	return status;
}

/// Takes the pending frame for a build; under the mutex.
static bp_view *take_pending(bpi_frames *fr)
{
	bp_view *view = fr->pending;
	fr->pending = NULL;
	fr->pending_for_host = false;
	fr->building = true;
	return view;
}

/// Builds a taken frame and publishes it (or recycles it, failed); called without the
/// mutex, returns holding it, the build over and waiters told.
static void build_and_publish(bpi_frames *fr, bp_view *view, bool on_host)
{
	const uint64_t number = view->number;
	BP_PROBE1(build_begin, number);
	bp_view *prev = fr->latest; // only the building thread writes latest
	bp_status status = build_frame(fr, view, prev, on_host);
	if (status == BP_OK) {
		atomic_store_explicit(&view->refs, BPI_VIEW_LATEST, memory_order_relaxed);
		pthread_mutex_lock(&fr->publish);
		fr->latest = view;
		pthread_mutex_unlock(&fr->publish);
		BP_PROBE1(publish, number);
		unpublish(prev);
	} else {
		frame_recycle(view);
	}

	pthread_mutex_lock(&fr->mutex);
	if (status == BP_OK)
		fr->published = number;
	else
		fr->failure = status;
	fr->done_frame = number; // not view->number: a failed view is already recycled
	fr->building = false;
	pthread_cond_broadcast(&fr->done);
	pthread_cond_signal(&fr->work); // a frame submitted meanwhile
}

static void *builder_main(void *arg)
{
	bpi_frames *fr = arg;
	pthread_mutex_lock(&fr->mutex);
	for (;;) {
		while (!fr->stop && (fr->paused || !fr->pending || fr->building || fr->pending_for_host))
			pthread_cond_wait(&fr->work, &fr->mutex);
		if (fr->stop)
			break;
		bp_view *view = take_pending(fr);
		pthread_mutex_unlock(&fr->mutex);
		build_and_publish(fr, view, false);
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
	atomic_init(&fr->hierarchy_asked, 0u);
	atomic_init(&fr->retired, NULL);
	fr->stepper.budget = &fr->budget;
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
	// The builder is gone and so is the host: from here only releases of held views touch the pool.
	bpi_stepper_free(&fr->stepper);
	bpi_build_changes_free(&fr->changes);
	bpi_bvh_scratch_free(&fr->hierarchy_scratch);
	bpi_submit_log_free(&fr->log);
	pthread_mutex_lock(&fr->publish);
	bp_view *latest = fr->latest, *queried = fr->queried;
	fr->latest = fr->queried = NULL;
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
	pthread_mutex_unlock(&fr->mutex);
	for (uint32_t i = 0; i < n; ++i)
		bpi_view_free(dropped[i]);
	// While latest or any held view lives the count stays above zero: their last
	// release frees the pool.
	pool_leave(fr, n);
	unpublish(latest);
	unpublish(queried);
}

void bpi_frames_pause(bpi_frames *fr, bool paused)
{
	pthread_mutex_lock(&fr->mutex);
	fr->paused = paused;
	pthread_cond_signal(&fr->work);
	pthread_cond_broadcast(&fr->done); // a bp_frame_step waiting to build
	pthread_mutex_unlock(&fr->mutex);
}

uint32_t bpi_frames_live(bpi_frames *fr)
{
	pthread_mutex_lock(&fr->mutex);
	uint32_t live = fr->live;
	pthread_mutex_unlock(&fr->mutex);
	return live;
}

// ---- submit and read ----------------------------------------------------------------

/// Copies every entity of the source (only its bounds with `bounds_only`) into view: on
/// the world's threads as a step would use them (the host thread and its own crew; the
/// builder keeps its), else on this one. A host's task system is not called from a
/// submit: it runs the library's steps only. Either way in the same chunks, which the
/// loop clock counts as the loops they are.
static void copy_store(bp_view *view, const bpi_frame_source *src, bool bounds_only)
{
	const int threads = bpi_step_threads(&src->settings, src->count);
	const bool own = src->settings.executor.kind != BP_EXECUTOR_HOST;
	bpi_team_failure team;
	const bool crew = own && threads > 1 && bpi_executor_enter(&src->settings.executor, threads, &team) == BP_OK;
	bpi_loop_clock_stage(BPI_LOOP_CLOCK_SNAPSHOT);
	bpi_soa_copy_parallel(&view->soa, src->soa, view->dims, src->count, bounds_only, crew ? threads : 1);
	bpi_loop_clock_stage(BPI_STAGE_PREPARE);
	if (crew)
		bpi_executor_leave();
}

/// Copies the source's arrays (or only what changed since the buffer's last
/// snapshot) and settings into view, as submit `number`.
static bp_status snapshot(bpi_frames *fr, bp_view *view, const bpi_frame_source *src, uint64_t number)
{
	uint64_t t0 = bpi_now_ns();
	uint32_t capacity = view->capacity;
	if (!bpi_view_reserve(view, src->count))
		return BP_ERR_OUT_OF_MEMORY;
	if (view->capacity != capacity)
		view->content = 0; // new arrays: nothing kept
	BPI_MARK_STAGE_BEGIN(BPI_STAGE_PREPARE);
	if (!bpi_submit_log_copy(&fr->log, view, src->soa, src->count, number)) {
		// A host that only moves entities changes no handle: the slots stay.
		const bool bounds_only = bpi_submit_log_bounds_only(&fr->log, view, number);
		copy_store(view, src, bounds_only);
		view->slots_kept = view->slots_kept && bounds_only;
	}
	view->content = number;
	view->count = src->count;
	view->unfiltered = src->unfiltered;
	view->layout = src->layout;
	view->settings = src->settings;
	view->pairs.count = 0;
	view->began_count = view->ended_count = 0;
	view->previous = 0;
	view->world_view = false;
	bpi_view_hierarchy_clear(&view->hierarchy);
	atomic_store_explicit(&view->ready, 0u, memory_order_relaxed);
	atomic_store_explicit(&view->asked, 0u, memory_order_relaxed);
	view->adjacency_status = BP_OK;
	view->stats = (bp_frame_stats){.ns_prepare = bpi_now_ns() - t0};
	BPI_MARK_STAGE_END(BPI_STAGE_PREPARE);
	return BP_OK;
}

/// A buffer holding the source as the next submit, *number; the builder started first
/// unless the caller builds. On error no buffer is taken and *why says what failed.
static bp_status fill(bpi_frames *fr, const bpi_frame_source *source, bool host_builds, bp_view **out, uint64_t *number,
	const char **why)
{
	pthread_mutex_lock(&fr->mutex);
	if (!fr->started && !host_builds) { // a host that builds its frames needs no builder yet
		if (bpi_thread_start(&fr->thread, builder_main, fr) != 0) {
			pthread_mutex_unlock(&fr->mutex);
			*why = "cannot start the frame builder thread";
			return BP_ERR_OUT_OF_MEMORY;
		}
		fr->started = true;
	}
	bp_view *view = fr->spare_count ? fr->spare[--fr->spare_count] : NULL;
	if (!view)
		fr->live++; // counted before it exists, so a concurrent last release cannot free the pool
	pthread_mutex_unlock(&fr->mutex);

	if (!view) {
		view = bpi_view_create(fr, &fr->hierarchy_asked, &fr->retired, source->settings.dims);
		if (!view) {
			pthread_mutex_lock(&fr->mutex);
			fr->live--;
			pthread_mutex_unlock(&fr->mutex);
			*why = "no memory for a frame buffer";
			return BP_ERR_OUT_OF_MEMORY;
		}
		view->budget = &fr->budget;
		view->pairs.budget = &fr->budget;
	}
	*number = fr->submitted + 1; // only the host submits: nobody else writes it
	bpi_submit_log_add(&fr->log, *number, &source->changes);
	if (snapshot(fr, view, source, *number) != BP_OK) {
		frame_recycle(view);
		*why = "no memory to snapshot the entities";
		return BP_ERR_OUT_OF_MEMORY;
	}
	*out = view;
	return BP_OK;
}

bp_status bpi_frames_submit(bpi_frames *fr, const bpi_frame_source *source, bool host_builds, uint64_t *out_frame,
	const char **why)
{
	bp_view *view;
	uint64_t number;
	bp_status status = fill(fr, source, host_builds, &view, &number, why);
	if (status != BP_OK)
		return status;
	pthread_mutex_lock(&fr->mutex);
	bp_view *coalesced = fr->pending; // not started yet: the newer snapshot replaces it
	fr->pending = NULL;
	pthread_mutex_unlock(&fr->mutex);
	// A world view just before reaches back as a coalesced snapshot does, so the build
	// finds what changed since the latest frame from the lists, not by comparing snapshots.
	const bp_view *before = coalesced ? coalesced
			      : fr->queried && fr->queried->number == number - 1 ? fr->queried
										 : NULL;
	bpi_view_note_changes(view, &source->changes, number, before);
	pthread_mutex_lock(&fr->mutex);
	fr->submitted = fr->frame_submitted = number;
	view->number = number;
	fr->pending = view;
	fr->pending_for_host = host_builds;
	if (!host_builds)
		pthread_cond_signal(&fr->work);
	pthread_mutex_unlock(&fr->mutex);
	if (coalesced)
		frame_recycle(coalesced);
	*out_frame = number;
	BP_PROBE2(submit, number, source->count);
	return BP_OK;
}

/// Makes a world view's hierarchy from the newer of the last frame and the last world view.
static void build_view(bpi_frames *fr, bp_view *view)
{
	const uint64_t t0 = bpi_now_ns();
	const bp_view *prev = fr->queried && (!fr->latest || fr->queried->number > fr->latest->number) ? fr->queried
													 : fr->latest;
	view->settings.builder = false;
	const int threads = bpi_step_threads(&view->settings, view->count);
	bpi_team_failure team;
	const bool crew = threads > 1 && bpi_executor_enter(&view->settings.executor, threads, &team) == BP_OK;
	const bpi_changes changes = bpi_build_changes_find(&fr->changes, view, prev, crew ? threads : 1);
	const bpi_hierarchy_changes changed = {NULL, changes.list, changes.count, changes.bounds_only};
	bpi_view_derive_queries(view, prev, changes.all ? NULL : &changed, &fr->hierarchy_scratch, crew ? threads : 1);
	if (crew)
		bpi_executor_leave();
	const uint64_t ns = bpi_now_ns() - t0;
	view->stats = (bp_frame_stats){.frame = view->number, .thread_count = crew ? threads : 1,
		.entity_count = view->count, .ns_prepare = view->stats.ns_prepare, .ns_view = ns, .ns_hierarchy = ns,
		.ns_total = view->stats.ns_prepare + ns};
}

bp_status bpi_frames_view(bpi_frames *fr, const bpi_frame_source *source, bp_view **out, const char **why)
{
	// A frame submitted before is built first: the view takes the next number after it.
	pthread_mutex_lock(&fr->mutex);
	const uint64_t last = fr->frame_submitted;
	const bool queued = fr->done_frame < last;
	pthread_mutex_unlock(&fr->mutex);
	if (queued)
		(void)bpi_frames_wait(fr, last, true); // its status is the frame's, for its waiters
	bp_view *view;
	uint64_t number;
	bp_status status = fill(fr, source, true, &view, &number, why);
	if (status != BP_OK)
		return status;
	bpi_view_note_changes(view, &source->changes, number, NULL);
	pthread_mutex_lock(&fr->mutex);
	fr->submitted = number;
	view->number = number;
	fr->building = true; // the builder's state has one user at a time
	pthread_mutex_unlock(&fr->mutex);
	build_view(fr, view);
	bp_view *old = fr->queried;
	atomic_store_explicit(&view->refs, BPI_VIEW_LATEST + 1u, memory_order_relaxed); // the pool's and the caller's
	fr->queried = view;
	pthread_mutex_lock(&fr->mutex);
	fr->building = false;
	pthread_cond_signal(&fr->work); // the builder never waits on a world view, but may on building
	pthread_mutex_unlock(&fr->mutex);
	unpublish(old);
	*out = view;
	return BP_OK;
}

bp_status bpi_frames_wait(bpi_frames *fr, uint64_t frame, bool build_here)
{
	pthread_mutex_lock(&fr->mutex);
	if (frame > fr->submitted) {
		pthread_mutex_unlock(&fr->mutex);
		return BP_ERR_NOT_SUBMITTED;
	}
	if (frame > fr->frame_submitted) { // a world view's, built before bp_world_view returned
		pthread_mutex_unlock(&fr->mutex);
		return BP_OK;
	}
	while (fr->done_frame < frame && !fr->stop) {
		if (build_here && fr->pending && fr->pending->number == frame && !fr->building && !fr->paused) {
			bp_view *view = take_pending(fr);
			pthread_mutex_unlock(&fr->mutex);
			build_and_publish(fr, view, true);
			continue;
		}
		pthread_cond_wait(&fr->done, &fr->mutex);
	}
	bp_status status = fr->published >= frame ? BP_OK : fr->failure != BP_OK ? fr->failure : BP_ERR_UNSUPPORTED;
	pthread_mutex_unlock(&fr->mutex);
	return status;
}

bp_view *bpi_frames_acquire(bpi_frames *fr)
{
	pthread_mutex_lock(&fr->publish);
	bp_view *v = fr->latest;
	if (v)
		atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
	pthread_mutex_unlock(&fr->publish);
	BP_PROBE1(acquire, v ? v->number : 0);
	return v;
}

// The public release lives with the pool it returns buffers to.
bp_status bp_view_release(bp_view *v)
{
	BP_PROBE1(release, v ? v->number : 0);
	if (!v)
		return BP_OK;
	// A compare-and-swap rather than a decrement: a release that finds no reader
	// reference is refused before it can take the latest pointer's, or wrap.
	unsigned refs = atomic_load_explicit(&v->refs, memory_order_relaxed);
	do {
		if ((refs & ~BPI_VIEW_LATEST) == 0)
			return BP_ERR_STALE_HANDLE;
	} while (!atomic_compare_exchange_weak_explicit(&v->refs, &refs, refs - 1, memory_order_acq_rel,
		memory_order_relaxed));
	if (refs == 1)
		frame_recycle(v);
	return BP_OK;
}

bp_status bp_frame_release(bp_view *v) { return bp_view_release(v); }
