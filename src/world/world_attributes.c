// SPDX-License-Identifier: MIT
// Keys, filters, kinds and shapes from the host's arrays for a bp_target: the bulk forms of
// bp_entity_set_user_key, _filter, _kind and _shape, checked in full before anything changes.
#include "world/world_data.h"

#include <stdio.h>

/// The targets and the arrays (NULL only when count is 0), checked before any write.
static bp_status check_targets_arrays(bp_world *w, const bp_target *t, const void *a, const void *b)
{
	bp_status status = bpi_target_check(w, t);
	if (status == BP_OK && t->count > 0 && (!a || !b))
		status = bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "an array is NULL");
	return status;
}

static bp_status set_user_keys(bp_world *w, const bp_target *t, const uint64_t *keys)
{
	bp_status status = check_targets_arrays(w, t, keys, keys);
	for (uint32_t i = 0; status == BP_OK && i < t->count; ++i)
		bpi_world_store_user_key(w, bpi_target_dense(w, t, i), keys[i]);
	return status;
}

static bp_status set_filters(bp_world *w, const bp_target *t, const uint64_t *category, const uint64_t *mask)
{
	bp_status status = check_targets_arrays(w, t, category, mask);
	for (uint32_t i = 0; status == BP_OK && i < t->count; ++i)
		bpi_world_store_filter(w, bpi_target_dense(w, t, i), category[i], mask[i]);
	return status;
}

static bp_status set_kinds(bp_world *w, const bp_target *t, const bp_kind *kinds)
{
	bp_status status = check_targets_arrays(w, t, kinds, kinds);
	for (uint32_t i = 0; status == BP_OK && i < t->count; ++i)
		if (kinds[i] != BP_KIND_DYNAMIC && kinds[i] != BP_KIND_STATIC) {
			char what[32];
			snprintf(what, sizeof what, "kinds[%u]:", i);
			status = bpi_world_check_kind(w, kinds[i], what);
		}
	for (uint32_t i = 0; status == BP_OK && i < t->count; ++i)
		bpi_world_store_kind(w, bpi_target_dense(w, t, i), kinds[i]);
	return status;
}

static bp_status set_shapes(bp_world *w, const bp_target *t, const bp_shape *shapes)
{
	bp_status status = check_targets_arrays(w, t, shapes, shapes);
	for (uint32_t i = 0; status == BP_OK && i < t->count; ++i)
		if (shapes[i] != BP_SHAPE_BOX && shapes[i] != BP_SHAPE_SPHERE)
			status = bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "shapes[%u]: shape %d is neither box nor sphere", i,
				(int)shapes[i]);
	for (uint32_t i = 0; status == BP_OK && i < t->count; ++i)
		bpi_world_store_shape(w, bpi_target_dense(w, t, i), shapes[i] == BP_SHAPE_SPHERE);
	return status;
}

bp_status bp_entities_set_user_keys(bp_world *w, bp_target target, const uint64_t *keys)
{
	return w ? set_user_keys(w, &target, keys) : BP_ERR_INVALID_ARGUMENT;
}

bp_status bp_entities_set_filters(bp_world *w, bp_target target, const uint64_t *category, const uint64_t *mask)
{
	return w ? set_filters(w, &target, category, mask) : BP_ERR_INVALID_ARGUMENT;
}

bp_status bp_entities_set_kinds(bp_world *w, bp_target target, const bp_kind *kinds)
{
	return w ? set_kinds(w, &target, kinds) : BP_ERR_INVALID_ARGUMENT;
}

bp_status bp_entities_set_shapes(bp_world *w, bp_target target, const bp_shape *shapes)
{
	return w ? set_shapes(w, &target, shapes) : BP_ERR_INVALID_ARGUMENT;
}
