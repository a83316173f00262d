// SPDX-License-Identifier: MIT
// The calls that change entities by list: bounds by dense index or by handle, bulk destroy.
#include "world/world_data.h"

#include <stdlib.h>

/// Checks the targets and the arrays, then stores box i at target i.
static bp_status store_listed(bp_world *w, const bpi_targets *targets, const bp_bounds_arrays *bounds)
{
	bp_status status = bpi_targets_check(w, targets);
	if (status == BP_OK)
		status = bpi_world_check_arrays(w, bounds, targets->count);
	for (uint32_t i = 0; status == BP_OK && i < targets->count; ++i) {
		float min[3], max[3];
		bpi_world_array_box(w, bounds, i, min, max);
		bpi_world_store_bounds(w, bpi_target_dense(w, targets, i), min, max);
	}
	return status;
}

bp_status bp_world_set_bounds_indexed(bp_world *w, uint32_t count, const uint32_t *dense_indices,
	const bp_bounds_arrays *bounds)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	bpi_targets targets = bpi_targets_indexed(count, dense_indices);
	return store_listed(w, &targets, bounds);
}

bp_status bp_world_set_bounds_by_handle(bp_world *w, uint32_t count, const bp_entity *entities,
	const bp_bounds_arrays *bounds)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	bpi_targets targets = bpi_targets_handles(count, entities);
	return store_listed(w, &targets, bounds);
}

static int compare_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

bp_status bp_world_destroy_entities(bp_world *w, uint32_t count, const bp_entity *entities)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	if (count == 0)
		return BP_OK;
	if (!entities)
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "handle array is NULL");
	for (uint32_t i = 0; i < count; ++i)
		if (!bpi_world_live_slot(w, entities[i]))
			return bpi_world_stale_element(w, "entities", i);
	// A handle listed twice would be stale by its second destroy: refuse before the first.
	uint32_t *slots = bpi_alloc((size_t)count * sizeof *slots);
	if (!slots)
		return bpi_world_fail(w, BP_ERR_OUT_OF_MEMORY, "no memory to check %u handles", count);
	for (uint32_t i = 0; i < count; ++i)
		slots[i] = entities[i].index1;
	qsort(slots, count, sizeof *slots, compare_u32);
	uint32_t repeated = 0;
	for (uint32_t i = 1; i < count && !repeated; ++i)
		if (slots[i] == slots[i - 1])
			repeated = slots[i];
	bpi_free(slots, (size_t)count * sizeof *slots);
	if (repeated) {
		char text[64];
		bp_entity e = {repeated, w->slots[repeated - 1].generation};
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "%s is listed twice", bpi_handle_text(w, e, text, sizeof text));
	}
	for (uint32_t i = 0; i < count; ++i)
		bp_entity_destroy(w, entities[i]); // cannot fail: every handle was checked live and distinct
	return BP_OK;
}
