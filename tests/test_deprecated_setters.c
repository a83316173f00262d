// SPDX-License-Identifier: MIT
// The 21 bulk setters before 0.8 (world.h "Deprecated bulk setters") against
// bp_entities_set_X with the target each name describes: on two worlds built alike, the old
// call and the new one give the same status, the same message and the same entities, for a
// good target and a bad one.
#define BP_NO_DEPRECATION_WARNINGS
#include <broadphase/broadphase.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "bulk_values.h"

enum { N = 40, C = BULK_VALUES, FORMS = 3, ATTRIBUTES = BULK_SETTERS };

/// N entities of varied settings, two of them destroyed so that dense indices have moved.
static bp_world *make_world(void)
{
	bp_world_def def = bp_world_def_default();
	def.thread_count = 1;
	bp_world *w;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_entity made[N];
	for (uint32_t i = 0; i < N; ++i) {
		bp_entity_def e = bp_entity_def_default();
		for (int a = 0; a < 3; ++a)
			e.min[a] = (float)i, e.max[a] = (float)i + 2;
		e.category = 1u << (i % 3), e.user_key = i, e.kind = i % 4 ? BP_KIND_DYNAMIC : BP_KIND_STATIC;
		cr_assert_eq(bp_entity_create(w, &e, &made[i]), BP_OK);
	}
	cr_assert_eq(bp_entity_destroy(w, made[3]), BP_OK);
	cr_assert_eq(bp_entity_destroy(w, made[10]), BP_OK);
	return w;
}

/// One call's target and values; handles are the world's own (handles carry their world).
typedef struct args {
	uint32_t first, dense[C];
	bp_entity handles[C];
	bulk_values values;
} args;

static void make_args(const bp_world *w, bool bad, args *a)
{
	uint32_t count = bp_world_entity_count(w);
	a->first = bad ? count - 2 : 7;
	for (uint32_t i = 0; i < C; ++i) {
		a->dense[i] = (i * 11 + 4) % count;
		a->handles[i] = bp_world_entity_at(w, a->dense[i]);
	}
	a->dense[1] = a->dense[3]; // listed twice: the last values win
	a->handles[1] = a->handles[3];
	if (bad)
		a->dense[C - 1] = count, a->handles[C - 1] = (bp_entity){0, 0};
	bulk_values_fill(&a->values);
}

/// The deprecated setter of `attribute` in `form` (0: range, 1: _indexed, 2: _by_handle).
static bp_status old_call(bp_world *w, int attribute, int form, const args *a)
{
	const bulk_values *v = &a->values;
	const bp_sphere_arrays spheres = {v->x, v->x, v->x, v->radius};
	const bp_bounds_arrays bounds = {v->lo, v->lo, v->lo, v->hi, v->hi, v->hi};
	const bp_bounds_arrays_f64 bounds64 = {v->lo64, v->lo64, v->lo64, v->hi64, v->hi64, v->hi64};
	const uint32_t *d = a->dense;
	const bp_entity *h = a->handles;
	switch (attribute * FORMS + form) {
	case 0: return bp_world_set_user_keys(w, a->first, C, v->keys);
	case 1: return bp_world_set_user_keys_indexed(w, C, d, v->keys);
	case 2: return bp_world_set_user_keys_by_handle(w, C, h, v->keys);
	case 3: return bp_world_set_filters(w, a->first, C, v->category, v->mask);
	case 4: return bp_world_set_filters_indexed(w, C, d, v->category, v->mask);
	case 5: return bp_world_set_filters_by_handle(w, C, h, v->category, v->mask);
	case 6: return bp_world_set_kinds(w, a->first, C, v->kinds);
	case 7: return bp_world_set_kinds_indexed(w, C, d, v->kinds);
	case 8: return bp_world_set_kinds_by_handle(w, C, h, v->kinds);
	case 9: return bp_world_set_shapes(w, a->first, C, v->shapes);
	case 10: return bp_world_set_shapes_indexed(w, C, d, v->shapes);
	case 11: return bp_world_set_shapes_by_handle(w, C, h, v->shapes);
	case 12: return bp_world_set_bounds(w, a->first, C, &bounds);
	case 13: return bp_world_set_bounds_indexed(w, C, d, &bounds);
	case 14: return bp_world_set_bounds_by_handle(w, C, h, &bounds);
	case 15: return bp_world_set_bounds_f64(w, a->first, C, &bounds64);
	case 16: return bp_world_set_bounds_f64_indexed(w, C, d, &bounds64);
	case 17: return bp_world_set_bounds_f64_by_handle(w, C, h, &bounds64);
	case 18: return bp_world_set_spheres(w, a->first, C, &spheres);
	case 19: return bp_world_set_spheres_indexed(w, C, d, &spheres);
	default: return bp_world_set_spheres_by_handle(w, C, h, &spheres);
	}
}

/// The same call through bp_entities_set_X.
static bp_status new_call(bp_world *w, int attribute, int form, const args *a)
{
	const bp_target forms[FORMS] = {bp_target_range(a->first, C), bp_target_indices(C, a->dense),
		bp_target_handles(C, a->handles)};
	return bulk_set(w, (bulk_setter)attribute, forms[form], &a->values);
}

static void expect_same_entities(const bp_world *a, const bp_world *b, const char *what)
{
	uint32_t n = bp_world_entity_count(a);
	cr_assert_eq(n, bp_world_entity_count(b), "%s", what);
	for (uint32_t d = 0; d < n; ++d) {
		bp_entity_def x, y;
		cr_assert_eq(bp_entity_get(a, bp_world_entity_at(a, d), &x), BP_OK);
		cr_assert_eq(bp_entity_get(b, bp_world_entity_at(b, d), &y), BP_OK);
		cr_assert(memcmp(x.min, y.min, sizeof x.min) == 0 && memcmp(x.max, y.max, sizeof x.max) == 0 &&
				x.category == y.category && x.mask == y.mask && x.kind == y.kind && x.user_key == y.user_key &&
				x.shape == y.shape,
			"%s: dense %u differs", what, d);
	}
}

/// The old call and the new one on two worlds built alike: same status, message, entities.
static void compare(int attribute, int form, bool bad)
{
	bp_world *old_world = make_world(), *new_world = make_world();
	args old_args, new_args;
	make_args(old_world, bad, &old_args);
	make_args(new_world, bad, &new_args);
	bp_status old_status = old_call(old_world, attribute, form, &old_args);
	bp_status new_status = new_call(new_world, attribute, form, &new_args);
	char what[64];
	snprintf(what, sizeof what, "attribute %d, form %d, %s target", attribute, form, bad ? "bad" : "good");
	cr_assert_eq(old_status, new_status, "%s", what);
	cr_assert_eq(old_status == BP_OK, !bad, "%s: %s", what, bp_world_last_error(old_world));
	cr_assert_str_eq(bp_world_last_error(old_world), bp_world_last_error(new_world), "%s", what);
	expect_same_entities(old_world, new_world, what);
	bp_world_destroy(old_world);
	bp_world_destroy(new_world);
}

Test(deprecated_setters, each_old_setter_does_what_its_new_call_does)
{
	for (int attribute = 0; attribute < ATTRIBUTES; ++attribute)
		for (int form = 0; form < FORMS; ++form) {
			compare(attribute, form, false);
			compare(attribute, form, true);
		}
	cr_assert_eq(bp_allocated_bytes(), 0);
}
