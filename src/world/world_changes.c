// SPDX-License-Identifier: MIT
// The bulk calls that change bounds and destroy entities.
#include "world/world_data.h"

#include <stdlib.h>
#include <string.h>

/// A range in a world that is not incremental marks nothing, so its boxes are copied whole.
static void copy_range(bp_world *w, uint32_t first, uint32_t count, const bp_bounds_arrays *bounds)
{
	const float *src_min[3] = {bounds->min_x, bounds->min_y, bounds->min_z};
	const float *src_max[3] = {bounds->max_x, bounds->max_y, bounds->max_z};
	for (int axis = 0; axis < w->dims; ++axis) {
		memcpy(w->soa.min[axis] + first, src_min[axis], (size_t)count * sizeof(float));
		memcpy(w->soa.max[axis] + first, src_max[axis], (size_t)count * sizeof(float));
	}
}

bp_status bp_entities_set_bounds(bp_world *w, bp_target target, const bp_bounds_arrays *bounds)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	bp_status status = bpi_target_check(w, &target);
	if (status == BP_OK)
		status = bpi_world_check_arrays(w, bounds, target.count);
	if (status != BP_OK || target.count == 0)
		return status; // count 0: the SoA arrays of an empty world are NULL, and NULL + 0 is undefined
	if (target.kind == BP_TARGET_RANGE && !w->incremental) {
		copy_range(w, target.first, target.count, bounds);
		return BP_OK;
	}
	for (uint32_t i = 0; i < target.count; ++i) { // compares as it stores, so only real changes are marked
		float min[3], max[3];
		bpi_world_array_box(w, bounds, i, min, max);
		bpi_world_store_bounds(w, bpi_target_dense(w, &target, i), min, max);
	}
	return BP_OK;
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
