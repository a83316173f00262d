// SPDX-License-Identifier: MIT
// A view's entities by handle and by index: handles to dense indices (bp_view_dense_index),
// a table by handle slot made on first use and then kept by each submit into the same buffer
// for the indices it changed; and an entity's settings by dense index (bp_view_entity_get).
#include "view/view.h"

#include <string.h>

static const uint32_t NOWHERE = UINT32_MAX;

/// Room for slot `slot`; new entries hold NOWHERE.
static bool cover(bp_view *view, uint32_t slot)
{
	if (slot < view->slot_span)
		return true;
	const uint32_t span = BP_MAX(slot + 1, view->slot_span + view->slot_span / 2);
	if (!bpi_array_grow(&view->slot_dense, view->slot_span, span))
		return false;
	for (uint32_t s = view->slot_span; s < span; ++s)
		view->slot_dense.data[s] = NOWHERE;
	view->slot_span = span;
	return true;
}

void bpi_view_slots_note(bp_view *view, const uint32_t *list, uint32_t listed, uint32_t count)
{
	for (uint32_t k = 0; k < listed && view->slots_kept; ++k) {
		const uint32_t i = list[k];
		if (i >= count)
			continue; // destroyed since: the entity now at its old index says where it went
		const uint32_t slot = view->soa.entity[i].index1 - 1;
		if (cover(view, slot))
			view->slot_dense.data[slot] = i;
		else
			view->slots_kept = false;
	}
}

bp_status bpi_view_slots_build(bp_view *view)
{
	view->slots_kept = true;
	for (uint32_t s = 0; s < view->slot_span; ++s)
		view->slot_dense.data[s] = NOWHERE;
	for (uint32_t i = 0; i < view->count && view->slots_kept; ++i) {
		const uint32_t slot = view->soa.entity[i].index1 - 1;
		if (cover(view, slot))
			view->slot_dense.data[slot] = i;
		else
			view->slots_kept = false;
	}
	return view->slots_kept ? BP_OK : BP_ERR_OUT_OF_MEMORY;
}

static bool same_handle(bp_entity a, bp_entity b)
{
	return a.index1 == b.index1 && a.generation == b.generation;
}

bp_status bp_view_dense_index(const bp_view *v, bp_entity entity, uint32_t *out)
{
	if (!v || !out)
		return BP_ERR_INVALID_ARGUMENT;
	const uint32_t slot = entity.index1 - 1;
	if (entity.index1 && bpi_view_ensure(v, BPI_VIEW_SLOTS) == BP_OK) {
		const uint32_t i = slot < v->slot_span ? v->slot_dense.data[slot] : NOWHERE;
		if (i < v->count && same_handle(v->soa.entity[i], entity)) {
			*out = i;
			return BP_OK;
		}
		return BP_ERR_STALE_HANDLE;
	}
	for (uint32_t i = 0; i < v->count && entity.index1; ++i) // no memory for the table: exact all the same
		if (same_handle(v->soa.entity[i], entity)) {
			*out = i;
			return BP_OK;
		}
	return BP_ERR_STALE_HANDLE;
}

bp_entity_def bpi_soa_entity_def(const bpi_soa *soa, int dims, uint32_t dense)
{
	bp_entity_def def = bp_entity_def_default();
	for (int axis = 0; axis < dims; ++axis) {
		def.min[axis] = soa->min[axis][dense];
		def.max[axis] = soa->max[axis][dense];
	}
	def.category = soa->category[dense];
	def.mask = soa->mask[dense];
	def.kind = (soa->flags[dense] & BP_FLAG_STATIC) ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
	def.shape = (soa->flags[dense] & BP_FLAG_SPHERE) ? BP_SHAPE_SPHERE : BP_SHAPE_BOX;
	def.user_key = soa->user_key[dense];
	return def;
}

bp_status bp_view_entity_get(const bp_view *v, uint32_t dense, bp_entity_def *out)
{
	if (!v || !out)
		return BP_ERR_INVALID_ARGUMENT;
	if (dense >= v->count)
		return BP_ERR_OUT_OF_RANGE;
	*out = bpi_soa_entity_def(&v->soa, v->dims, dense);
	return BP_OK;
}
