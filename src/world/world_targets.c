// SPDX-License-Identifier: MIT
// Which dense entities a bulk call names (a range, a list of dense indices, a list of
// handles), checked in full before any bulk setter writes.
#include "world/world_data.h"

bp_status bpi_targets_check(bp_world *w, const bpi_targets *t)
{
	if (!t->listed)
		return bpi_world_check_range(w, t->first, t->count);
	if (t->count == 0)
		return BP_OK;
	if (t->dense) {
		for (uint32_t i = 0; i < t->count; ++i)
			if (t->dense[i] >= w->count)
				return bpi_world_fail(w, BP_ERR_OUT_OF_RANGE, "dense_indices[%u]: dense index %u is outside [0, %u)",
					i, t->dense[i], w->count);
		return BP_OK;
	}
	if (!t->entities)
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "the list of entities to change is NULL");
	for (uint32_t i = 0; i < t->count; ++i)
		if (!bpi_world_live_slot(w, t->entities[i]))
			return bpi_world_stale_element(w, "entities", i);
	return BP_OK;
}

uint32_t bpi_target_dense(const bp_world *w, const bpi_targets *t, uint32_t i)
{
	if (t->dense)
		return t->dense[i];
	if (t->entities)
		return w->slots[t->entities[i].index1 - 1].dense;
	return t->first + i;
}
