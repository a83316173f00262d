// SPDX-License-Identifier: MIT
// Value arrays for every bulk setter, and one call that hands them to any of them: for the
// tests that try each setter against each target.
#ifndef BP_TEST_BULK_VALUES_H
#define BP_TEST_BULK_VALUES_H

#include <broadphase/broadphase.h>

enum { BULK_VALUES = 5 };

typedef enum bulk_setter {
	BULK_USER_KEYS,
	BULK_FILTERS,
	BULK_KINDS,
	BULK_SHAPES,
	BULK_BOUNDS,
	BULK_BOUNDS_F64,
	BULK_SPHERES,
	BULK_SETTERS
} bulk_setter;

/// Element i of each array is the value for a target's i-th entity.
typedef struct bulk_values {
	uint64_t category[BULK_VALUES], mask[BULK_VALUES], keys[BULK_VALUES];
	bp_kind kinds[BULK_VALUES];
	bp_shape shapes[BULK_VALUES];
	float x[BULK_VALUES], radius[BULK_VALUES], lo[BULK_VALUES], hi[BULK_VALUES];
	double lo64[BULK_VALUES], hi64[BULK_VALUES];
} bulk_values;

/// "user_keys", "filters", ...: the X of bp_entities_set_X.
const char *bulk_setter_name(bulk_setter setter);
/// Valid values on every axis of a 2D or 3D world: filter 8, static and dynamic kinds by
/// turn, spheres, unit boxes along the diagonal.
void bulk_values_fill(bulk_values *v);
/// bp_entities_set_X of the values to the target, X named by `setter`.
bp_status bulk_set(bp_world *world, bulk_setter setter, bp_target target, const bulk_values *v);

#endif
