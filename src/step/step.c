// SPDX-License-Identifier: MIT
// The stepper: the scene an algorithm sees, and the plain, periodic or incremental dispatch, in one place.
#include "step/step.h"
#include "parallel/parallel.h"

#include <stdatomic.h>

/// Keeps the pairs the host's pair filter accepts, in order.
static void host_filter(const bpi_step_settings *settings, const bpi_soa *soa, bpi_pair_buffer *pairs,
	bp_frame_stats *stats)
{
	size_t kept = 0;
	for (size_t i = 0; i < pairs->count; ++i) {
		bp_pair p = pairs->data[i];
		if (settings->pair_filter(soa->entity[p.lo], soa->entity[p.hi], soa->user_key[p.lo], soa->user_key[p.hi],
			    settings->pair_filter_user))
			pairs->data[kept++] = p;
	}
	pairs->count = kept;
	stats->pair_count = kept;
}

static bp_status find_pairs(bpi_stepper *stepper, const bpi_step_settings *settings, const bpi_soa *soa,
	uint32_t count, bool unfiltered, const bpi_changes *changes, bpi_pair_buffer *pairs, bp_frame_stats *stats,
	bpi_step_fault *fault)
{
	bpi_scene scene = {
		.count = count,
		.dims = settings->dims,
		.category = soa->category,
		.mask = soa->mask,
		.flags = soa->flags,
		.unfiltered = unfiltered,
		.threads = bpi_step_threads(settings, count),
		.cell_size = settings->cell_size,
		.debug_flags = settings->debug_flags,
		.margin = settings->margin,
		.skin = settings->skin,
		.budget = stepper->budget,
	};
	for (int axis = 0; axis < settings->dims; ++axis) {
		scene.min[axis] = soa->min[axis];
		scene.max[axis] = soa->max[axis];
	}
	if (settings->periodic) {
		bp_status status = bpi_periodic_step(&stepper->periodic, &stepper->indexes, settings->algorithm, &scene,
			settings->period, pairs, stats, fault);
		if (settings->incremental) { // a periodic step is a full one: every entity searched
			stats->active_count = stats->searched_count = count;
			stats->path = BP_PATH_FULL;
		}
		return status;
	}
	if (settings->incremental && changes)
		return bpi_incremental_step(&stepper->incremental, &scene, changes, settings->algorithm,
			settings->canonical_pairs, pairs, stats);
	return bpi_pipeline_run(&stepper->indexes, settings->algorithm, &scene, pairs, stats);
}

static _Atomic uint32_t serial_step_entities = BP_SERIAL_STEP_ENTITIES;

void bpi_set_serial_step_entities(uint32_t count) { atomic_store(&serial_step_entities, count); }

int bpi_step_threads(const bpi_step_settings *settings, uint32_t count)
{
	if (count < atomic_load_explicit(&serial_step_entities, memory_order_relaxed))
		return 1;
	const int threads = bpi_resolve_threads(&settings->executor, settings->thread_count);
	// The host's task system shares its workers with the host as it sees fit.
	const bool leave_one =
		settings->thread_count == 0 && settings->builder && settings->executor.kind != BP_EXECUTOR_HOST;
	return leave_one ? BP_MAX(1, threads - 1) : threads;
}

bp_status bpi_stepper_run(bpi_stepper *stepper, const bpi_step_settings *settings, const bpi_soa *soa,
	uint32_t count, bool unfiltered, const bpi_changes *changes, bpi_pair_buffer *pairs, bp_frame_stats *stats,
	bpi_step_fault *fault)
{
	bp_status status = find_pairs(stepper, settings, soa, count, unfiltered, changes, pairs, stats, fault);
	if (status == BP_OK && settings->pair_filter)
		host_filter(settings, soa, pairs, stats);
	return status;
}

void bpi_stepper_free(bpi_stepper *stepper)
{
	bpi_indexes_free(&stepper->indexes);
	bpi_periodic_free(stepper->periodic);
	bpi_incremental_free(stepper->incremental);
	*stepper = (bpi_stepper){0};
}
