// SPDX-License-Identifier: MIT
// Which dense entities a bulk call names (bp_target: a range, a list of dense indices, a
// list of handles), checked in full before any bulk setter writes.
#include "world/world_data.h"

static bp_status check_indices(bp_world *w, uint32_t count, const uint32_t *dense)
{
	if (count > 0 && !dense)
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "the list of dense indices to change is NULL");
	for (uint32_t i = 0; i < count; ++i)
		if (dense[i] >= w->count)
			return bpi_world_fail(w, BP_ERR_OUT_OF_RANGE, "dense_indices[%u]: dense index %u is outside [0, %u)", i,
				dense[i], w->count);
	return BP_OK;
}

static bp_status check_handles(bp_world *w, uint32_t count, const bp_entity *entities)
{
	if (count > 0 && !entities)
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "the list of entities to change is NULL");
	for (uint32_t i = 0; i < count; ++i)
		if (!bpi_world_live_slot(w, entities[i]))
			return bpi_world_stale_element(w, "entities", i);
	return BP_OK;
}

bp_status bpi_target_check(bp_world *w, const bp_target *t)
{
	switch (t->kind) {
	case BP_TARGET_RANGE:
		return bpi_world_check_range(w, t->first, t->count);
	case BP_TARGET_INDICES:
		return check_indices(w, t->count, t->dense_indices);
	case BP_TARGET_HANDLES:
		return check_handles(w, t->count, t->entities);
	}
	return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "target kind %d is none of range, indices, handles",
		(int)t->kind);
}

uint32_t bpi_target_dense(const bp_world *w, const bp_target *t, uint32_t i)
{
	switch (t->kind) {
	case BP_TARGET_INDICES:
		return t->dense_indices[i];
	case BP_TARGET_HANDLES:
		return w->slots[t->entities[i].index1 - 1].dense;
	default:
		return t->first + i;
	}
}
