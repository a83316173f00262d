// SPDX-License-Identifier: MIT
// Keys, filters and kinds of a dense range from the host's arrays: the bulk forms of
// bp_entity_set_user_key, _filter and _kind, checked in full before anything changes.
#include "world.h"

#include <stdio.h>

/// The range and the arrays (NULL only when count is 0), checked before any write.
static bp_status check_range_arrays(bp_world *w, uint32_t first, uint32_t count, const void *a, const void *b)
{
	bp_status status = bpi_world_check_range(w, first, count);
	if (status == BP_OK && count > 0 && (!a || !b))
		status = bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "an array is NULL");
	return status;
}

bp_status bp_world_set_user_keys(bp_world *w, uint32_t first, uint32_t count, const uint64_t *keys)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	bp_status status = check_range_arrays(w, first, count, keys, keys);
	for (uint32_t i = 0; status == BP_OK && i < count; ++i)
		bpi_world_store_user_key(w, first + i, keys[i]);
	return status;
}

bp_status bp_world_set_filters(bp_world *w, uint32_t first, uint32_t count, const uint32_t *category,
	const uint32_t *mask)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	bp_status status = check_range_arrays(w, first, count, category, mask);
	for (uint32_t i = 0; status == BP_OK && i < count; ++i)
		bpi_world_store_filter(w, first + i, category[i], mask[i]);
	return status;
}

bp_status bp_world_set_kinds(bp_world *w, uint32_t first, uint32_t count, const bp_kind *kinds)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	bp_status status = check_range_arrays(w, first, count, kinds, kinds);
	for (uint32_t i = 0; status == BP_OK && i < count; ++i)
		if (kinds[i] != BP_KIND_DYNAMIC && kinds[i] != BP_KIND_STATIC) {
			char what[32];
			snprintf(what, sizeof what, "kinds[%u]:", i);
			status = bpi_world_check_kind(w, kinds[i], what);
		}
	for (uint32_t i = 0; status == BP_OK && i < count; ++i)
		bpi_world_store_kind(w, first + i, kinds[i]);
	return status;
}
