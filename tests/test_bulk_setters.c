// SPDX-License-Identifier: MIT
// bp_entities_set_* over the three target kinds (dense range, dense index list, handle list)
// for keys, filters, kinds, shapes and spheres, and mixed batches from
// bp_world_create_entities_from_arrays: checked against a model the test keeps by handle and
// the brute-force pair oracle, after swap-removes have moved dense indices; bad input and an
// unknown target kind change nothing.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bulk_values.h"
#include "oracle.h"

enum { N = 300, DESTROYED = 70, ROUNDS = 12 };

/// The test's own record of one entity, kept by handle slot: what the world must hold.
typedef struct model_entity {
	oracle_box box;
	uint64_t key;
	bool live;
} model_entity;

typedef struct model {
	bp_world *w;
	model_entity e[N];
	bp_entity handles[N];
	test_rng rng;
} model;

static uint32_t slot_of(bp_entity e) { return e.index1 - 1; }

static model *make_model(uint64_t seed, bool incremental)
{
	model *m = calloc(1, sizeof *m);
	m->rng.state = seed;
	bp_world_def def = bp_world_def_default();
	def.thread_count = 1;
	def.incremental = incremental;
	cr_assert_eq(bp_world_create(&def, &m->w), BP_OK);
	oracle_box boxes[N];
	test_random_boxes(boxes, N, 3, 60, 8, true, seed);
	for (uint32_t i = 0; i < N; ++i) {
		bp_entity_def d = bp_entity_def_default();
		memcpy(d.min, boxes[i].min, sizeof d.min);
		memcpy(d.max, boxes[i].max, sizeof d.max);
		d.category = boxes[i].category, d.mask = boxes[i].mask;
		d.kind = boxes[i].is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
		d.user_key = 1000 + i;
		bp_entity h;
		cr_assert_eq(bp_entity_create(m->w, &d, &h), BP_OK);
		cr_assert_eq(slot_of(h), i, "a fresh world hands out slots in order");
		m->handles[i] = h;
		m->e[i] = (model_entity){boxes[i], 1000 + i, true};
	}
	// Swap-removes: every destroy moves the last dense entity into the hole.
	for (uint32_t k = 0; k < DESTROYED; ++k) {
		uint32_t i;
		do
			i = test_rng_below(&m->rng, N);
		while (!m->e[i].live);
		cr_assert_eq(bp_entity_destroy(m->w, m->handles[i]), BP_OK);
		m->e[i].live = false;
	}
	return m;
}

static void free_model(model *m)
{
	bp_world_destroy(m->w);
	free(m);
}

/// `count` distinct live entities picked at random.
static uint32_t pick(model *m, uint32_t count, uint32_t *slots)
{
	bool taken[N] = {false};
	for (uint32_t k = 0; k < count; ++k) {
		uint32_t i;
		do
			i = test_rng_below(&m->rng, N);
		while (!m->e[i].live || taken[i]);
		taken[i] = true;
		slots[k] = i;
	}
	return count;
}

/// Every live entity reads back as the model holds it, and the pairs of a step are the
/// oracle's over the world's dense order.
static void check_world(model *m)
{
	uint32_t n = bp_world_entity_count(m->w);
	cr_assert_eq(n, N - DESTROYED);
	const bp_entity *dense = bp_world_entities(m->w);
	oracle_box *boxes = calloc(n, sizeof *boxes);
	for (uint32_t d = 0; d < n; ++d) {
		const model_entity *e = &m->e[slot_of(dense[d])];
		cr_assert(e->live);
		bp_entity_def got;
		cr_assert_eq(bp_entity_get(m->w, dense[d], &got), BP_OK);
		cr_assert(got.category == e->box.category && got.mask == e->box.mask, "dense %u: filter", d);
		cr_assert_eq(got.kind, e->box.is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC, "dense %u: kind", d);
		cr_assert_eq(got.shape, e->box.is_sphere ? BP_SHAPE_SPHERE : BP_SHAPE_BOX, "dense %u: shape", d);
		cr_assert_eq(got.user_key, e->key, "dense %u: key", d);
		cr_assert_eq(bp_world_user_keys(m->w)[d], e->key);
		cr_assert(memcmp(got.min, e->box.min, sizeof got.min) == 0 && memcmp(got.max, e->box.max, sizeof got.max) == 0,
			"dense %u: bounds", d);
		boxes[d] = e->box;
	}
	cr_assert_eq(bp_world_step(m->w), BP_OK, "%s", bp_world_last_error(m->w));
	size_t count = 0;
	const bp_pair *pairs = bp_world_pairs(m->w, &count);
	oracle_pairs want = oracle_find_pairs(boxes, n, 3);
	cr_assert(oracle_same_pair_set(pairs, count, &want));
	oracle_pairs_free(&want);
	free(boxes);
}

enum { K = 40 };

/// A random target of `kind` over `count` live entities: their slots, for the model, and
/// the lists the target reads.
typedef struct picked {
	uint32_t count;
	uint32_t slots[K], dense[K];
	bp_entity handles[K];
	bp_target target;
} picked;

static void pick_target(model *m, bp_target_kind kind, uint32_t count, picked *p)
{
	p->count = count;
	if (kind == BP_TARGET_RANGE) {
		uint32_t first = test_rng_below(&m->rng, bp_world_entity_count(m->w) - count + 1);
		for (uint32_t k = 0; k < count; ++k)
			p->dense[k] = first + k, p->slots[k] = slot_of(bp_world_entity_at(m->w, first + k));
	} else {
		pick(m, count, p->slots);
		for (uint32_t k = 0; k < count; ++k)
			cr_assert_eq(bp_entity_dense_index(m->w, m->handles[p->slots[k]], &p->dense[k]), BP_OK);
	}
	for (uint32_t k = 0; k < count; ++k)
		p->handles[k] = m->handles[p->slots[k]];
	if (kind == BP_TARGET_RANGE)
		p->target = bp_target_range(p->dense[0], count);
	else if (kind == BP_TARGET_INDICES)
		p->target = bp_target_indices(count, p->dense);
	else
		p->target = bp_target_handles(count, p->handles);
}

/// One round: each setting changed for a random target of the round's kind, then spheres
/// for a target of the next kind, the whole world checked after each.
static void round_of_changes(model *m, int round)
{
	static picked p;
	pick_target(m, (bp_target_kind)(round % 3), K, &p);
	uint64_t category[K], mask[K];
	uint64_t keys[K];
	bp_kind kinds[K];
	bp_shape shapes[K];
	for (uint32_t k = 0; k < p.count; ++k) {
		category[k] = test_layer(test_rng_below(&m->rng, 3));
		mask[k] = test_rng_below(&m->rng, 4) == 0 ? 0 : test_rng_next(&m->rng) | 1u;
		keys[k] = test_rng_next(&m->rng);
		kinds[k] = test_rng_below(&m->rng, 3) == 0 ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
		shapes[k] = test_rng_below(&m->rng, 3) == 0 ? BP_SHAPE_SPHERE : BP_SHAPE_BOX;
	}
	cr_assert_eq(bp_entities_set_filters(m->w, p.target, category, mask), BP_OK);
	cr_assert_eq(bp_entities_set_user_keys(m->w, p.target, keys), BP_OK);
	cr_assert_eq(bp_entities_set_kinds(m->w, p.target, kinds), BP_OK);
	cr_assert_eq(bp_entities_set_shapes(m->w, p.target, shapes), BP_OK);
	for (uint32_t k = 0; k < p.count; ++k) {
		oracle_box *b = &m->e[p.slots[k]].box;
		b->category = category[k], b->mask = mask[k];
		b->is_static = kinds[k] == BP_KIND_STATIC;
		b->is_sphere = shapes[k] == BP_SHAPE_SPHERE;
		m->e[p.slots[k]].key = keys[k];
	}
	check_world(m);

	pick_target(m, (bp_target_kind)((round + 1) % 3), K / 2, &p);
	float x[K], y[K], z[K], radius[K];
	for (uint32_t k = 0; k < p.count; ++k) {
		x[k] = test_rng_float(&m->rng, 0, 60), y[k] = test_rng_float(&m->rng, 0, 60);
		z[k] = test_rng_float(&m->rng, 0, 60), radius[k] = test_rng_float(&m->rng, 0, 5);
	}
	bp_sphere_arrays spheres = {x, y, z, radius};
	cr_assert_eq(bp_entities_set_spheres(m->w, p.target, &spheres), BP_OK);
	for (uint32_t k = 0; k < p.count; ++k) {
		oracle_box *b = &m->e[p.slots[k]].box;
		const float c[3] = {x[k], y[k], z[k]};
		for (int a = 0; a < 3; ++a)
			b->min[a] = c[a] - radius[k], b->max[a] = c[a] + radius[k];
		b->is_sphere = true;
	}
	check_world(m);
}

Test(bulk_setters, every_target_kind_after_swap_removes_matches_brute_force, .timeout = 120)
{
	for (int incremental = 0; incremental < 2; ++incremental) {
		model *m = make_model(41 + (uint64_t)incremental, incremental);
		check_world(m);
		for (int round = 0; round < ROUNDS; ++round)
			round_of_changes(m, round);
		free_model(m);
	}
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(bulk_setters, an_entity_listed_twice_takes_its_last_values)
{
	model *m = make_model(9, false);
	bp_entity h = bp_world_entity_at(m->w, 3);
	bp_entity twice[2] = {h, h};
	uint64_t category[2] = {4, 8}, mask[2] = {1, 2};
	bp_kind kinds[2] = {BP_KIND_STATIC, BP_KIND_DYNAMIC};
	uint64_t keys[2] = {11, 22};
	cr_assert_eq(bp_entities_set_filters(m->w, bp_target_handles(2, twice), category, mask), BP_OK);
	cr_assert_eq(bp_entities_set_kinds(m->w, bp_target_indices(2, (uint32_t[]){3, 3}), kinds), BP_OK);
	cr_assert_eq(bp_entities_set_user_keys(m->w, bp_target_handles(2, twice), keys), BP_OK);
	bp_entity_def got;
	cr_assert_eq(bp_entity_get(m->w, h, &got), BP_OK);
	cr_assert(got.category == 8 && got.mask == 2 && got.kind == BP_KIND_DYNAMIC && got.user_key == 22);
	m->e[slot_of(h)].box.category = 8, m->e[slot_of(h)].box.mask = 2;
	m->e[slot_of(h)].box.is_static = false, m->e[slot_of(h)].key = 22;
	check_world(m); // the world's static and filtered counts survived the double write
	free_model(m);
}

/// Every entity's settings, in dense order, to compare before and after a refused call.
typedef struct snapshot {
	uint32_t n;
	bp_entity_def defs[N];
	bp_entity handles[N];
} snapshot;

static void take(const bp_world *w, snapshot *s)
{
	s->n = bp_world_entity_count(w);
	for (uint32_t d = 0; d < s->n; ++d) {
		s->handles[d] = bp_world_entity_at(w, d);
		cr_assert_eq(bp_entity_get(w, s->handles[d], &s->defs[d]), BP_OK);
	}
}

static bool same_snapshot(const snapshot *a, const snapshot *b)
{
	if (a->n != b->n)
		return false;
	for (uint32_t d = 0; d < a->n; ++d) {
		const bp_entity_def *x = &a->defs[d], *y = &b->defs[d];
		if (a->handles[d].index1 != b->handles[d].index1 || a->handles[d].generation != b->handles[d].generation ||
			memcmp(x->min, y->min, sizeof x->min) || memcmp(x->max, y->max, sizeof x->max) ||
			x->category != y->category || x->mask != y->mask || x->kind != y->kind || x->user_key != y->user_key ||
			x->shape != y->shape)
			return false;
	}
	return true;
}

/// The call was refused with `want`, its message names `names`, and the world is as `before`.
static void expect_refused(model *m, const snapshot *before, bp_status got, bp_status want, const char *names,
	const char *what)
{
	static snapshot after;
	cr_assert_eq(got, want, "%s: %s, want %s (%s)", what, bp_status_string(got), bp_status_string(want),
		bp_world_last_error(m->w));
	cr_assert(strstr(bp_world_last_error(m->w), names) != NULL, "%s: message '%s' does not name '%s'", what,
		bp_world_last_error(m->w), names);
	take(m->w, &after);
	cr_assert(same_snapshot(before, &after), "%s: a refused call changed the world", what);
}

enum { BAD = 4 }; // targets of BAD entities, each with its fault last

Test(bulk_setters, a_bad_target_is_refused_whole_and_named_by_every_setter)
{
	model *m = make_model(17, false);
	static snapshot before;
	take(m->w, &before);
	bulk_values v;
	bulk_values_fill(&v);
	uint32_t dead = 0;
	while (m->e[dead].live)
		++dead;
	bp_entity stale[BAD] = {bp_world_entity_at(m->w, 0), bp_world_entity_at(m->w, 5), bp_world_entity_at(m->w, 9),
		m->handles[dead]};
	uint32_t far[BAD] = {0, 5, 9, N - DESTROYED};
	bp_target unknown = bp_target_range(0, BAD);
	unknown.kind = (bp_target_kind)3;
	// Each bad part last, after good targets: nothing of the first three may change.
	const struct {
		bp_target target;
		bp_status want;
		const char *names, *what;
	} bad[] = {
		{bp_target_handles(BAD, stale), BP_ERR_STALE_HANDLE, "entities[3]: entity", "a destroyed handle"},
		{bp_target_indices(BAD, far), BP_ERR_OUT_OF_RANGE, "dense_indices[3]: dense index 230", "an index past the end"},
		{bp_target_range(N - DESTROYED - 3, BAD), BP_ERR_OUT_OF_RANGE, "dense range [227, 231)", "a range past the end"},
		{bp_target_range(1, UINT32_MAX), BP_ERR_OUT_OF_RANGE, "dense range", "a range whose end wraps"},
		{bp_target_handles(BAD, NULL), BP_ERR_INVALID_ARGUMENT, "NULL", "a NULL handle list"},
		{bp_target_indices(BAD, NULL), BP_ERR_INVALID_ARGUMENT, "NULL", "a NULL index list"},
		{unknown, BP_ERR_INVALID_ARGUMENT, "target kind 3", "an unknown target kind"},
	};
	for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b)
		for (bulk_setter setter = 0; setter < BULK_SETTERS; ++setter) {
			char what[96];
			snprintf(what, sizeof what, "%s: %s", bulk_setter_name(setter), bad[b].what);
			expect_refused(m, &before, bulk_set(m->w, setter, bad[b].target, &v), bad[b].want, bad[b].names, what);
		}
	unknown.count = 0;
	expect_refused(m, &before, bp_entities_set_kinds(m->w, unknown, NULL), BP_ERR_INVALID_ARGUMENT, "target kind",
		"an unknown kind of nothing");
	for (bulk_setter setter = 0; setter < BULK_SETTERS; ++setter)
		cr_assert_eq(bulk_set(NULL, setter, bp_target_range(0, BAD), &v), BP_ERR_INVALID_ARGUMENT);
	check_world(m);
	free_model(m);
}

Test(bulk_setters, bad_values_are_refused_whole_and_named)
{
	model *m = make_model(19, false);
	static snapshot before;
	take(m->w, &before);
	uint32_t dense[BAD] = {0, 5, 9, 2};
	bp_entity handles[BAD];
	for (uint32_t k = 0; k < BAD; ++k)
		handles[k] = bp_world_entity_at(m->w, dense[k]);
	const bp_target targets[3] = {bp_target_range(7, BAD), bp_target_indices(BAD, dense), bp_target_handles(BAD, handles)};
	for (int t = 0; t < 3; ++t) {
		// Bad values last in the arrays.
		bulk_values v;
		bulk_values_fill(&v);
		v.kinds[3] = (bp_kind)7, v.shapes[3] = (bp_shape)9, v.radius[3] = -1, v.hi[3] = v.lo[3] - 1;
		v.hi64[3] = (double)NAN;
		expect_refused(m, &before, bulk_set(m->w, BULK_KINDS, targets[t], &v), BP_ERR_INVALID_ARGUMENT, "kinds[3]",
			"bad kind");
		expect_refused(m, &before, bulk_set(m->w, BULK_SHAPES, targets[t], &v), BP_ERR_INVALID_ARGUMENT, "shapes[3]",
			"bad shape");
		expect_refused(m, &before, bulk_set(m->w, BULK_SPHERES, targets[t], &v), BP_ERR_INVALID_ARGUMENT, "spheres[3]",
			"negative radius");
		expect_refused(m, &before, bulk_set(m->w, BULK_BOUNDS, targets[t], &v), BP_ERR_INVERTED_BOUNDS, "bounds[3]",
			"inverted bounds");
		expect_refused(m, &before, bulk_set(m->w, BULK_BOUNDS_F64, targets[t], &v), BP_ERR_NOT_FINITE, "bounds[3]",
			"NaN bound");
		// NULL value arrays.
		expect_refused(m, &before, bp_entities_set_filters(m->w, targets[t], v.category, NULL), BP_ERR_INVALID_ARGUMENT,
			"NULL", "NULL mask");
		expect_refused(m, &before, bp_entities_set_user_keys(m->w, targets[t], NULL), BP_ERR_INVALID_ARGUMENT, "NULL",
			"NULL keys");
		expect_refused(m, &before, bp_entities_set_spheres(m->w, targets[t], NULL), BP_ERR_INVALID_ARGUMENT, "NULL",
			"NULL spheres");
	}
	// Count 0 with NULL lists (and NULL arrays, for the setters of one array each) is a no-op.
	bulk_values v;
	bulk_values_fill(&v);
	cr_assert_eq(bp_entities_set_kinds(m->w, bp_target_handles(0, NULL), NULL), BP_OK);
	cr_assert_eq(bp_entities_set_user_keys(m->w, bp_target_indices(0, NULL), NULL), BP_OK);
	for (bulk_setter setter = 0; setter < BULK_SETTERS; ++setter)
		cr_assert_eq(bulk_set(m->w, setter, (bp_target){0}, &v), BP_OK, "a zeroed target is the empty range");
	check_world(m);
	free_model(m);
}

Test(bulk_setters, create_entities_from_arrays_makes_a_mixed_batch_in_dense_order, .timeout = 60)
{
	model *m = make_model(23, false);
	enum { B = 50 };
	uint32_t n = bp_world_entity_count(m->w);
	float lo[3][B], hi[3][B];
	uint64_t category[B], mask[B];
	bp_kind kinds[B];
	uint64_t keys[B];
	bp_shape shapes[B];
	oracle_box boxes[N];
	for (uint32_t i = 0; i < B; ++i) {
		float c[3];
		test_rng_vec(&m->rng, c, 3, 0, 60, false);
		float r = test_rng_float(&m->rng, 0, 6);
		for (int a = 0; a < 3; ++a)
			lo[a][i] = c[a] - r, hi[a][i] = c[a] + r;
		category[i] = i % 2 ? 1u : test_layer(2); // two teams, one in the high word
		mask[i] = i % 2 ? test_layer(2) : 1u;     // each sees the other
		kinds[i] = i % 5 == 0 ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
		keys[i] = 5000 + i;
		shapes[i] = i % 3 == 0 ? BP_SHAPE_SPHERE : BP_SHAPE_BOX;
	}
	bp_entity_arrays arrays = {
		.bounds = {lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]},
		.category = category,
		.mask = mask,
		.kind = kinds,
		.user_key = keys,
		.shape = shapes,
	};
	// A bad kind at the end creates nothing.
	kinds[B - 1] = (bp_kind)3;
	bp_entity made[B];
	cr_assert_eq(bp_world_create_entities_from_arrays(m->w, B, &arrays, NULL, made), BP_ERR_INVALID_ARGUMENT);
	cr_assert(strstr(bp_world_last_error(m->w), "kind[49]") != NULL, "%s", bp_world_last_error(m->w));
	shapes[B - 1] = (bp_shape)4;
	kinds[B - 1] = BP_KIND_DYNAMIC;
	cr_assert_eq(bp_world_create_entities_from_arrays(m->w, B, &arrays, NULL, made), BP_ERR_INVALID_ARGUMENT);
	cr_assert(strstr(bp_world_last_error(m->w), "shape[49]") != NULL, "%s", bp_world_last_error(m->w));
	shapes[B - 1] = BP_SHAPE_BOX;
	hi[1][B - 2] = lo[1][B - 2] - 1;
	cr_assert_eq(bp_world_create_entities_from_arrays(m->w, B, &arrays, NULL, made), BP_ERR_INVERTED_BOUNDS);
	cr_assert(strstr(bp_world_last_error(m->w), "bounds[48]") != NULL, "%s", bp_world_last_error(m->w));
	cr_assert_eq(bp_world_entity_count(m->w), n, "refused batches created nothing");
	hi[1][B - 2] = lo[1][B - 2] + 1;

	// Mask from the common def: every other array given.
	bp_entity_def common = bp_entity_def_default();
	common.mask = 3;
	arrays.mask = NULL;
	cr_assert_eq(bp_world_create_entities_from_arrays(m->w, B, &arrays, &common, made), BP_OK);
	cr_assert_eq(bp_world_entity_count(m->w), n + B);
	for (uint32_t i = 0; i < B; ++i) {
		bp_entity at = bp_world_entity_at(m->w, n + i);
		cr_assert(at.index1 == made[i].index1 && at.generation == made[i].generation, "element %u is dense %u", i,
			n + i);
		bp_entity_def got;
		cr_assert_eq(bp_entity_get(m->w, made[i], &got), BP_OK);
		cr_assert(got.category == category[i] && got.mask == 3 && got.kind == kinds[i] && got.user_key == keys[i] &&
			  got.shape == shapes[i]);
	}
	// The pairs of the whole world against brute force over its dense order.
	const bp_entity *dense = bp_world_entities(m->w);
	for (uint32_t d = 0; d < n; ++d)
		boxes[d] = m->e[slot_of(dense[d])].box;
	for (uint32_t i = 0; i < B; ++i) {
		oracle_box *b = &boxes[n + i];
		for (int a = 0; a < 3; ++a)
			b->min[a] = lo[a][i], b->max[a] = hi[a][i];
		b->category = category[i], b->mask = 3;
		b->is_static = kinds[i] == BP_KIND_STATIC;
		b->is_sphere = shapes[i] == BP_SHAPE_SPHERE;
	}
	cr_assert_eq(bp_world_step(m->w), BP_OK);
	size_t count = 0;
	const bp_pair *pairs = bp_world_pairs(m->w, &count);
	oracle_pairs want = oracle_find_pairs(boxes, n + B, 3);
	cr_assert(oracle_same_pair_set(pairs, count, &want));
	oracle_pairs_free(&want);

	// No arrays but bounds and no common def: bp_entity_def_default() for all.
	bp_entity_arrays plain = {.bounds = arrays.bounds};
	cr_assert_eq(bp_world_create_entities_from_arrays(m->w, 2, &plain, NULL, made), BP_OK);
	bp_entity_def got, want_def = bp_entity_def_default();
	cr_assert_eq(bp_entity_get(m->w, made[1], &got), BP_OK);
	cr_assert(got.category == want_def.category && got.mask == want_def.mask && got.kind == want_def.kind &&
		  got.user_key == 0 && got.shape == BP_SHAPE_BOX);
	cr_assert_eq(bp_world_create_entities_from_arrays(m->w, 2, NULL, NULL, made), BP_ERR_INVALID_ARGUMENT);
	free_model(m);
}
