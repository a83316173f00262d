// SPDX-License-Identifier: MIT
#include "bulk_values.h"

const char *bulk_setter_name(bulk_setter setter)
{
	static const char *const names[BULK_SETTERS] = {"user_keys", "filters", "kinds", "shapes", "bounds",
		"bounds_f64", "spheres"};
	return setter < BULK_SETTERS ? names[setter] : "?";
}

void bulk_values_fill(bulk_values *v)
{
	for (uint32_t i = 0; i < BULK_VALUES; ++i) {
		v->category[i] = v->mask[i] = 8, v->keys[i] = 100 + i;
		v->kinds[i] = i % 2 ? BP_KIND_STATIC : BP_KIND_DYNAMIC, v->shapes[i] = BP_SHAPE_SPHERE;
		v->x[i] = v->lo[i] = 3.5f * (float)i, v->radius[i] = 1, v->hi[i] = v->lo[i] + 1;
		v->lo64[i] = v->lo[i], v->hi64[i] = v->hi[i];
	}
}

bp_status bulk_set(bp_world *w, bulk_setter setter, bp_target target, const bulk_values *v)
{
	const bp_sphere_arrays spheres = {v->x, v->x, v->x, v->radius};
	const bp_bounds_arrays bounds = {v->lo, v->lo, v->lo, v->hi, v->hi, v->hi};
	const bp_bounds_arrays_f64 bounds64 = {v->lo64, v->lo64, v->lo64, v->hi64, v->hi64, v->hi64};
	switch (setter) {
	case BULK_USER_KEYS: return bp_entities_set_user_keys(w, target, v->keys);
	case BULK_FILTERS: return bp_entities_set_filters(w, target, v->category, v->mask);
	case BULK_KINDS: return bp_entities_set_kinds(w, target, v->kinds);
	case BULK_SHAPES: return bp_entities_set_shapes(w, target, v->shapes);
	case BULK_BOUNDS: return bp_entities_set_bounds(w, target, &bounds);
	case BULK_BOUNDS_F64: return bp_entities_set_bounds_f64(w, target, &bounds64);
	default: return bp_entities_set_spheres(w, target, &spheres);
	}
}
