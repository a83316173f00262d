// SPDX-License-Identifier: MIT
// Keys, filters, kinds and shapes from the host's arrays, for a dense range, a list of
// dense indices or a list of handles: the bulk forms of bp_entity_set_user_key, _filter,
// _kind and _shape, checked in full before anything changes.
#include "world/world_data.h"

#include <stdio.h>

/// The targets and the arrays (NULL only when count is 0), checked before any write.
static bp_status check_targets_arrays(bp_world *w, bpi_targets t, const void *a, const void *b)
{
	bp_status status = bpi_targets_check(w, &t);
	if (status == BP_OK && t.count > 0 && (!a || !b))
		status = bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "an array is NULL");
	return status;
}

static bp_status set_user_keys(bp_world *w, bpi_targets t, const uint64_t *keys)
{
	bp_status status = check_targets_arrays(w, t, keys, keys);
	for (uint32_t i = 0; status == BP_OK && i < t.count; ++i)
		bpi_world_store_user_key(w, bpi_target_dense(w, &t, i), keys[i]);
	return status;
}

static bp_status set_filters(bp_world *w, bpi_targets t, const uint64_t *category, const uint64_t *mask)
{
	bp_status status = check_targets_arrays(w, t, category, mask);
	for (uint32_t i = 0; status == BP_OK && i < t.count; ++i)
		bpi_world_store_filter(w, bpi_target_dense(w, &t, i), category[i], mask[i]);
	return status;
}

static bp_status set_kinds(bp_world *w, bpi_targets t, const bp_kind *kinds)
{
	bp_status status = check_targets_arrays(w, t, kinds, kinds);
	for (uint32_t i = 0; status == BP_OK && i < t.count; ++i)
		if (kinds[i] != BP_KIND_DYNAMIC && kinds[i] != BP_KIND_STATIC) {
			char what[32];
			snprintf(what, sizeof what, "kinds[%u]:", i);
			status = bpi_world_check_kind(w, kinds[i], what);
		}
	for (uint32_t i = 0; status == BP_OK && i < t.count; ++i)
		bpi_world_store_kind(w, bpi_target_dense(w, &t, i), kinds[i]);
	return status;
}

static bp_status set_shapes(bp_world *w, bpi_targets t, const bp_shape *shapes)
{
	bp_status status = check_targets_arrays(w, t, shapes, shapes);
	for (uint32_t i = 0; status == BP_OK && i < t.count; ++i)
		if (shapes[i] != BP_SHAPE_BOX && shapes[i] != BP_SHAPE_SPHERE)
			status = bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "shapes[%u]: shape %d is neither box nor sphere", i,
				(int)shapes[i]);
	for (uint32_t i = 0; status == BP_OK && i < t.count; ++i)
		bpi_world_store_shape(w, bpi_target_dense(w, &t, i), shapes[i] == BP_SHAPE_SPHERE);
	return status;
}

bp_status bp_world_set_user_keys(bp_world *w, uint32_t first, uint32_t count, const uint64_t *keys)
{
	return w ? set_user_keys(w, bpi_targets_range(first, count), keys) : BP_ERR_INVALID_ARGUMENT;
}

bp_status bp_world_set_user_keys_indexed(bp_world *w, uint32_t count, const uint32_t *dense_indices, const uint64_t *keys)
{
	return w ? set_user_keys(w, bpi_targets_indexed(count, dense_indices), keys) : BP_ERR_INVALID_ARGUMENT;
}

bp_status bp_world_set_user_keys_by_handle(bp_world *w, uint32_t count, const bp_entity *entities, const uint64_t *keys)
{
	return w ? set_user_keys(w, bpi_targets_handles(count, entities), keys) : BP_ERR_INVALID_ARGUMENT;
}

bp_status bp_world_set_filters(bp_world *w, uint32_t first, uint32_t count, const uint64_t *category,
	const uint64_t *mask)
{
	return w ? set_filters(w, bpi_targets_range(first, count), category, mask) : BP_ERR_INVALID_ARGUMENT;
}

bp_status bp_world_set_filters_indexed(bp_world *w, uint32_t count, const uint32_t *dense_indices, const uint64_t *category,
	const uint64_t *mask)
{
	return w ? set_filters(w, bpi_targets_indexed(count, dense_indices), category, mask) : BP_ERR_INVALID_ARGUMENT;
}

bp_status bp_world_set_filters_by_handle(bp_world *w, uint32_t count, const bp_entity *entities, const uint64_t *category,
	const uint64_t *mask)
{
	return w ? set_filters(w, bpi_targets_handles(count, entities), category, mask) : BP_ERR_INVALID_ARGUMENT;
}

bp_status bp_world_set_kinds(bp_world *w, uint32_t first, uint32_t count, const bp_kind *kinds)
{
	return w ? set_kinds(w, bpi_targets_range(first, count), kinds) : BP_ERR_INVALID_ARGUMENT;
}

bp_status bp_world_set_kinds_indexed(bp_world *w, uint32_t count, const uint32_t *dense_indices, const bp_kind *kinds)
{
	return w ? set_kinds(w, bpi_targets_indexed(count, dense_indices), kinds) : BP_ERR_INVALID_ARGUMENT;
}

bp_status bp_world_set_kinds_by_handle(bp_world *w, uint32_t count, const bp_entity *entities, const bp_kind *kinds)
{
	return w ? set_kinds(w, bpi_targets_handles(count, entities), kinds) : BP_ERR_INVALID_ARGUMENT;
}

bp_status bp_world_set_shapes(bp_world *w, uint32_t first, uint32_t count, const bp_shape *shapes)
{
	return w ? set_shapes(w, bpi_targets_range(first, count), shapes) : BP_ERR_INVALID_ARGUMENT;
}

bp_status bp_world_set_shapes_indexed(bp_world *w, uint32_t count, const uint32_t *dense_indices, const bp_shape *shapes)
{
	return w ? set_shapes(w, bpi_targets_indexed(count, dense_indices), shapes) : BP_ERR_INVALID_ARGUMENT;
}

bp_status bp_world_set_shapes_by_handle(bp_world *w, uint32_t count, const bp_entity *entities, const bp_shape *shapes)
{
	return w ? set_shapes(w, bpi_targets_handles(count, entities), shapes) : BP_ERR_INVALID_ARGUMENT;
}
