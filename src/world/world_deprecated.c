// SPDX-License-Identifier: MIT
// The bulk setters before 0.8 (world.h "Deprecated bulk setters"), each the bp_entities_set_X
// call with the target its name describes. This file goes in 0.9.
#include "world/world_data.h"

#define UNPARENTHESISE(...) __VA_ARGS__

/// The three old setters of one attribute: `params` are its value parameters and `args`
/// their names, each list in parentheses.
#define OLD_SETTERS(attribute, params, args) \
	bp_status bp_world_set_##attribute(bp_world *w, uint32_t first, uint32_t count, UNPARENTHESISE params) \
	{ \
		return bp_entities_set_##attribute(w, bp_target_range(first, count), UNPARENTHESISE args); \
	} \
	bp_status bp_world_set_##attribute##_indexed(bp_world *w, uint32_t count, const uint32_t *dense_indices, \
		UNPARENTHESISE params) \
	{ \
		return bp_entities_set_##attribute(w, bp_target_indices(count, dense_indices), UNPARENTHESISE args); \
	} \
	bp_status bp_world_set_##attribute##_by_handle(bp_world *w, uint32_t count, const bp_entity *entities, \
		UNPARENTHESISE params) \
	{ \
		return bp_entities_set_##attribute(w, bp_target_handles(count, entities), UNPARENTHESISE args); \
	}

OLD_SETTERS(user_keys, (const uint64_t *keys), (keys))
OLD_SETTERS(filters, (const uint64_t *category, const uint64_t *mask), (category, mask))
OLD_SETTERS(kinds, (const bp_kind *kinds), (kinds))
OLD_SETTERS(shapes, (const bp_shape *shapes), (shapes))
OLD_SETTERS(bounds, (const bp_bounds_arrays *bounds), (bounds))
OLD_SETTERS(bounds_f64, (const bp_bounds_arrays_f64 *bounds), (bounds))
OLD_SETTERS(spheres, (const bp_sphere_arrays *spheres), (spheres))
