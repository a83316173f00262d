// SPDX-License-Identifier: MIT
// bp_world_step: the synchronous step of a world, on the caller's thread and the world's workers.
#include "parallel/parallel.h"
#include "base/probes.h"
#include "parallel/threads.h"
#include "world/world_data.h"

#include <float.h>
#include <math.h>
#include <string.h>

// world.h promises that last_error says why grid or hash are not supported: they
// cannot lay cells over bounds whose span on an axis (max - min) is beyond float.
// Error path only, so the bounds are found again here rather than kept by the step.
static bp_status fail_unsupported(bp_world *w, bp_algorithm algorithm)
{
	const char *name = bp_algorithm_name(algorithm);
	for (int axis = 0; axis < w->dims; ++axis) {
		float lo = INFINITY, hi = -INFINITY;
		for (uint32_t i = 0; i < w->count; ++i) {
			lo = fminf(lo, w->soa.min[axis][i]);
			hi = fmaxf(hi, w->soa.max[axis][i]);
		}
		if (isinf(hi - lo))
			return bpi_world_fail(w, BP_ERR_UNSUPPORTED,
				"%s step: not supported: %c spans %.9g to %.9g, beyond float range (%s needs max - min <= "
				"%.9g on each axis; sap takes any finite bounds)",
				name, "xyz"[axis], (double)lo, (double)hi, name, (double)FLT_MAX);
	}
	return bpi_world_fail(w, BP_ERR_UNSUPPORTED, "%s step: not supported: no cells fit the bounds", name);
}

/// canonical_pairs: the step's pairs by (lo, hi), on the step's team. The O(count)
/// sort needs a second buffer; without one the in-place qsort runs, so the step
/// gains no way to fail; the qsort is the slow fallback
/// (perf/README.md, "Pair buffers and sorting").
static void sort_canonical(bp_world *w, int threads, bp_frame_stats *stats)
{
	uint64_t t0 = bpi_now_ns();
	bpi_pair_buffer *p = &w->pairs;
	if (!bpi_array_reserve(&w->sort_scratch, p->count) ||
		!bpi_pairs_sort_canonical(p->data, p->count, w->sort_scratch.data, threads))
		bpi_pairs_sort_in_place(p->data, p->count);
	stats->ns_merge += bpi_now_ns() - t0;
}

bp_status bp_world_step(bp_world *w)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	BPI_MARK_FRAME_BEGIN(w->stats.frame + 1, w->count);
	BPI_MARK_STAGE_BEGIN(BPI_STAGE_PREPARE);
	uint64_t t0 = bpi_now_ns();
	bpi_step_settings settings = bpi_world_settings(w);
	bp_frame_stats stats = {.frame = w->stats.frame + 1, .ns_prepare = bpi_now_ns() - t0};
	BPI_MARK_STAGE_END(BPI_STAGE_PREPARE);
	bpi_team_failure team;
	if (bpi_executor_enter(&settings.executor, bpi_step_threads(&settings, w->count), &team) != BP_OK) {
		BPI_MARK_FRAME_END(stats.frame, 0, bpi_now_ns() - t0, BP_ERR_OUT_OF_MEMORY);
		return bpi_world_fail(w, BP_ERR_OUT_OF_MEMORY, "cannot start %d threads (%d of %d workers started): %s",
			team.wanted, team.started, team.wanted - 1, strerror(team.error));
	}
	bpi_step_fault fault = {0};
	bpi_changes changes = {
		.list = w->step_marks.list.data,
		.count = w->step_marks.count,
		.previous_count = w->step_marks.since_count,
		.all = w->step_marks.all,
		.bounds_only = w->step_marks.bounds_only,
	};
	bpi_budget_begin(&w->budget, settings.memory_limit);
	bp_status status = bpi_stepper_run(&w->stepper, &settings, &w->soa, w->count, bpi_world_unfiltered(w),
		&changes, &w->pairs, &stats, &fault);
	if (status == BP_OK && w->canonical_pairs && !w->periodic && !w->incremental) // the others come sorted
		sort_canonical(w, bpi_step_threads(&settings, w->count), &stats);
	bpi_executor_leave();
	if (status != BP_OK)
		BPI_MARK_FRAME_END(stats.frame, 0, bpi_now_ns() - t0, status);
	if ((status == BP_ERR_OUT_OF_RANGE || status == BP_ERR_PERIODIC_EXTENT) && w->periodic) {
		if (fault.axis < 0)
			return bpi_world_fail(w, status, "periodic step: %u entities need more than %u boxes with ghosts",
				fault.entity, UINT32_MAX - 1);
		return bpi_world_fail(w, status, "dense index %u: extent_%c %.9g > period_%c / 2 = %.9g", fault.entity,
			"xyz"[fault.axis], fault.extent, "xyz"[fault.axis], (double)w->period[fault.axis] * 0.5);
	}
	if (status == BP_ERR_OUT_OF_MEMORY && atomic_load(&w->budget.over_limit))
		return bpi_world_fail(w, status, "%s step: the pairs need more than memory_limit = %zu bytes",
			bp_algorithm_name(stats.algorithm), settings.memory_limit);
	if (status == BP_ERR_UNSUPPORTED)
		return fail_unsupported(w, stats.algorithm);
	if (status != BP_OK)
		return bpi_world_fail(w, status, "%s step: %s", bp_algorithm_name(stats.algorithm),
			bp_status_string(status));
	bpi_world_clear_changes(w);
	bpi_world_events_step(w);
	stats.ns_total = bpi_now_ns() - t0;
	BPI_MARK_FRAME_END(stats.frame, stats.pair_count, stats.ns_total, BP_OK);
	w->stats = stats;
	return BP_OK;
}

const bp_pair *bp_world_pairs(const bp_world *w, size_t *count)
{
	if (count)
		*count = w ? w->pairs.count : 0;
	return w ? w->pairs.data : NULL;
}

bp_frame_stats bp_world_stats(const bp_world *w)
{
	return w ? w->stats : (bp_frame_stats){0};
}
