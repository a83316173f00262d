// SPDX-License-Identifier: MIT
// The world's SoA store and handles (docs/design.md "Data model", "Errors and statuses") against hand-worked cases
// and a shadow model kept by the test; bp_world_step with brute against the oracle.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "world/world_data.h" // src/world/world_data.h: struct bp_world, for the generation-retirement test

static bp_world *new_world(int dims)
{
	bp_world_def def = bp_world_def_default();
	def.dims = dims;
	def.algorithm = BP_ALGO_BRUTE;
	def.thread_count = 1;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	cr_assert_not_null(w);
	return w;
}

static bp_entity_def box_def(float x0, float y0, float z0, float x1, float y1, float z1)
{
	bp_entity_def d = bp_entity_def_default();
	d.min[0] = x0, d.min[1] = y0, d.min[2] = z0;
	d.max[0] = x1, d.max[1] = y1, d.max[2] = z1;
	return d;
}

static bp_entity create(bp_world *w, const bp_entity_def *d)
{
	bp_entity e = {0};
	cr_assert_eq(bp_entity_create(w, d, &e), BP_OK, "%s", bp_world_last_error(w));
	cr_assert_neq(e.index1, 0);
	return e;
}

static bool same_handle(bp_entity a, bp_entity b) { return a.index1 == b.index1 && a.generation == b.generation; }

/// Field by field: bp_entity_def has padding (after kind, and at the end), whose bytes a copy
/// need not keep.
static bool same_def(const bp_entity_def *a, const bp_entity_def *b)
{
	return !memcmp(a->min, b->min, sizeof a->min) && !memcmp(a->max, b->max, sizeof a->max) &&
	       a->category == b->category && a->mask == b->mask && a->kind == b->kind && a->user_key == b->user_key &&
	       a->shape == b->shape;
}

/// True when `text` contains the decimal form of v.
static bool mentions(const char *text, unsigned long long v)
{
	char number[32];
	snprintf(number, sizeof number, "%llu", v);
	return strstr(text, number) != NULL;
}

// ---- a copy of every observable bit of a world, to check "left unchanged" ----

typedef struct snapshot {
	uint32_t count;
	bp_entity *handles;
	bp_entity_def *defs;
} snapshot;

static snapshot take_snapshot(const bp_world *w)
{
	snapshot s = {.count = bp_world_entity_count(w)};
	s.handles = calloc(s.count + 1, sizeof *s.handles);
	s.defs = calloc(s.count + 1, sizeof *s.defs);
	for (uint32_t i = 0; i < s.count; ++i) {
		s.handles[i] = bp_world_entity_at(w, i);
		cr_assert_eq(bp_entity_get(w, s.handles[i], &s.defs[i]), BP_OK);
	}
	return s;
}

static void assert_unchanged(const bp_world *w, snapshot *s)
{
	cr_assert_eq(bp_world_entity_count(w), s->count);
	for (uint32_t i = 0; i < s->count; ++i) {
		cr_assert(same_handle(bp_world_entity_at(w, i), s->handles[i]), "dense %u moved", i);
		bp_entity_def d;
		cr_assert_eq(bp_entity_get(w, s->handles[i], &d), BP_OK);
		cr_assert(same_def(&d, &s->defs[i]), "dense %u changed", i);
	}
	free(s->handles);
	free(s->defs);
}

// ---- defaults and creation ------------------------------------------------

Test(world, def_defaults)
{
	bp_world_def d = bp_world_def_default();
	cr_assert_eq(d.dims, 3);
	cr_assert_eq(d.capacity, 0);
	cr_assert_eq(d.algorithm, BP_ALGO_AUTO);
	cr_assert_eq(d.thread_count, 0);
	cr_assert_eq(d.cell_size, 0.0f);
	cr_assert_eq(d.canonical_pairs, false);

	bp_entity_def e = bp_entity_def_default();
	for (int k = 0; k < 3; ++k) {
		cr_assert_eq(e.min[k], 0.0f);
		cr_assert_eq(e.max[k], 0.0f);
	}
	cr_assert_eq(e.category, 1);
	cr_assert_eq(e.mask, UINT64_MAX);
	cr_assert_eq(e.kind, BP_KIND_DYNAMIC);
	cr_assert_eq(e.user_key, 0);
}

static void expect_create_fails(const bp_world_def *def, bp_status want)
{
	bp_world *w = (bp_world *)&w; // any non-NULL value: create must overwrite it with NULL
	cr_assert_eq(bp_world_create(def, &w), want);
	cr_assert_null(w);
	cr_assert_eq(bp_allocated_bytes(), 0, "a failed create allocated something");
}

Test(world, create_rejects_bad_defs)
{
	bp_world_def zeroed;
	memset(&zeroed, 0, sizeof zeroed);
	zeroed.dims = 3; // every field valid except the marker set by bp_world_def_default
	expect_create_fails(&zeroed, BP_ERR_INVALID_ARGUMENT);
	expect_create_fails(NULL, BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_world_create(&zeroed, NULL), BP_ERR_INVALID_ARGUMENT);

	const int bad_dims[] = {1, 4, 0, -3};
	for (size_t i = 0; i < sizeof bad_dims / sizeof bad_dims[0]; ++i) {
		bp_world_def d = bp_world_def_default();
		d.dims = bad_dims[i];
		expect_create_fails(&d, BP_ERR_INVALID_ARGUMENT);
	}
	bp_world_def d = bp_world_def_default();
	d.thread_count = -1;
	expect_create_fails(&d, BP_ERR_INVALID_ARGUMENT);
	d = bp_world_def_default();
	d.cell_size = NAN;
	expect_create_fails(&d, BP_ERR_INVALID_ARGUMENT);
	d = bp_world_def_default();
	d.cell_size = -1.0f;
	expect_create_fails(&d, BP_ERR_INVALID_ARGUMENT);
	d = bp_world_def_default();
	d.algorithm = BP_ALGO_COUNT;
	expect_create_fails(&d, BP_ERR_UNKNOWN_ALGORITHM);
	d.algorithm = (bp_algorithm)-1;
	expect_create_fails(&d, BP_ERR_UNKNOWN_ALGORITHM);

	// The same def made valid again is accepted: the failures above were about the field.
	d = bp_world_def_default();
	d.dims = 2;
	d.capacity = 100;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&d, &w), BP_OK);
	cr_assert_eq(bp_world_entity_count(w), 0);
	cr_assert_str_empty(bp_world_last_error(w));
	bp_world_destroy(w);
	bp_world_destroy(NULL);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(world, setters_validate)
{
	bp_world *w = new_world(3);
	cr_assert_eq(bp_world_set_thread_count(w, -2), BP_ERR_INVALID_ARGUMENT);
	cr_assert_str_not_empty(bp_world_last_error(w));
	cr_assert_eq(bp_world_set_thread_count(w, 2), BP_OK);
	cr_assert_eq(bp_world_set_algorithm(w, BP_ALGO_COUNT), BP_ERR_UNKNOWN_ALGORITHM);
	cr_assert_eq(bp_world_algorithm(w), BP_ALGO_BRUTE, "a rejected algorithm must not be kept");
	cr_assert_eq(bp_world_set_algorithm(w, BP_ALGO_AUTO), BP_OK);
	cr_assert_eq(bp_world_algorithm(w), BP_ALGO_AUTO);
	bp_world_destroy(w);
}

// ---- single entities ----------------------------------------------------

Test(world, entity_round_trip_3d)
{
	bp_world *w = new_world(3);
	bp_entity_def d = box_def(-1.5f, 2, 3, 4, 5.25f, 6);
	d.category = 0x10;
	d.mask = 0x0f;
	d.kind = BP_KIND_STATIC;
	d.user_key = 0x123456789abcdefull;
	bp_entity e = create(w, &d);
	cr_assert_eq(bp_world_entity_count(w), 1);
	uint32_t dense = 99;
	cr_assert_eq(bp_entity_dense_index(w, e, &dense), BP_OK);
	cr_assert_eq(dense, 0);
	cr_assert(same_handle(bp_world_entity_at(w, 0), e));
	cr_assert(same_handle(bp_world_entity_at(w, 1), (bp_entity){0}), "out of range gives the null handle");
	bp_entity_def got;
	cr_assert_eq(bp_entity_get(w, e, &got), BP_OK);
	cr_assert(same_def(&got, &d));
	cr_assert_eq(bp_world_user_keys(w)[0], d.user_key);

	const float lo[3] = {7, 8, 9}, hi[3] = {7, 10, 9}; // zero extent on x and z is valid
	cr_assert_eq(bp_entity_set_bounds(w, e, lo, hi), BP_OK);
	cr_assert_eq(bp_entity_get(w, e, &got), BP_OK);
	cr_assert_eq(memcmp(got.min, lo, sizeof lo), 0);
	cr_assert_eq(memcmp(got.max, hi, sizeof hi), 0);

	cr_assert_eq(bp_entity_destroy(w, e), BP_OK);
	cr_assert_eq(bp_world_entity_count(w), 0);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(world, entity_round_trip_2d_ignores_z)
{
	bp_world *w = new_world(2);
	bp_entity_def d = box_def(1, 2, NAN, 3, 4, -INFINITY); // z is ignored in 2D, even when not finite
	bp_entity e = create(w, &d);
	bp_entity_def got;
	cr_assert_eq(bp_entity_get(w, e, &got), BP_OK);
	cr_assert_eq(got.min[0], 1.0f);
	cr_assert_eq(got.min[1], 2.0f);
	cr_assert_eq(got.max[0], 3.0f);
	cr_assert_eq(got.max[1], 4.0f);
	cr_assert_eq(got.min[2], 0.0f, "2D worlds store no z; get reports the default");
	cr_assert_eq(got.max[2], 0.0f);
	const float lo[2] = {5, 6}, hi[2] = {7, 8}; // only dims floats are read
	cr_assert_eq(bp_entity_set_bounds(w, e, lo, hi), BP_OK);
	cr_assert_eq(bp_entity_get(w, e, &got), BP_OK);
	cr_assert_eq(got.min[1], 6.0f);
	cr_assert_eq(got.max[0], 7.0f);
	cr_assert_null(w->soa.min[2], "2D pays for no z arrays");
	cr_assert_null(w->soa.max[2]);
	bp_world_destroy(w);
}

// ---- stale handles ------------------------------------------------------

/// Every handle-taking call must answer BP_ERR_STALE_HANDLE, change nothing,
/// and say which handle in bp_world_last_error.
static void expect_stale(bp_world *w, bp_entity e)
{
	snapshot before = take_snapshot(w);
	const float lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
	const float lo_x = 0, lo_y = 0, lo_z = 0, hi_x = 1, hi_y = 1, hi_z = 1;
	const bp_bounds_arrays one = {&lo_x, &lo_y, &lo_z, &hi_x, &hi_y, &hi_z};
	const uint64_t category = 2;
	const bp_kind kind = BP_KIND_STATIC;
	const uint64_t key = 42;
	const bp_shape shape = BP_SHAPE_SPHERE;
	const float radius = 1;
	const bp_sphere_arrays sphere = {&lo_x, &lo_y, &lo_z, &radius};
	bp_entity_def d;
	uint32_t dense;
	bp_status got[] = {
		bp_entity_get(w, e, &d),
		bp_entity_dense_index(w, e, &dense),
		bp_entity_set_bounds(w, e, lo, hi),
		bp_entity_set_filter(w, e, 1, 1),
		bp_entity_set_kind(w, e, BP_KIND_STATIC),
		bp_entity_set_user_key(w, e, 42),
		bp_entity_set_shape(w, e, BP_SHAPE_SPHERE),
		bp_entity_set_sphere(w, e, lo, 1.0f),
		bp_entities_set_bounds(w, bp_target_handles(1, &e), &one),
		bp_entities_set_filters(w, bp_target_handles(1, &e), &category, &category),
		bp_entities_set_kinds(w, bp_target_handles(1, &e), &kind),
		bp_entities_set_user_keys(w, bp_target_handles(1, &e), &key),
		bp_entities_set_shapes(w, bp_target_handles(1, &e), &shape),
		bp_entities_set_spheres(w, bp_target_handles(1, &e), &sphere),
		bp_world_destroy_entities(w, 1, &e),
		bp_entity_destroy(w, e),
	};
	for (int i = 0; i < (int)(sizeof got / sizeof got[0]); ++i)
		cr_assert_eq(got[i], BP_ERR_STALE_HANDLE, "call %d with {%u, %u} returned %d", i, e.index1, e.generation,
			got[i]);
	const char *text = bp_world_last_error(w);
	cr_assert_str_not_empty(text);
	char named[32];
	snprintf(named, sizeof named, "entity {%u, %u}", e.index1, bp_entity_reuse_count(e));
	cr_assert(strstr(text, named) != NULL, "'%s' does not name %s", text, named);
	assert_unchanged(w, &before);
}

Test(world, stale_handles)
{
	bp_world *w = new_world(3);
	bp_entity_def d = box_def(0, 0, 0, 1, 1, 1);
	bp_entity a = create(w, &d);
	bp_entity b = create(w, &d);
	cr_assert_eq(bp_entity_destroy(w, a), BP_OK);
	expect_stale(w, a);                                // destroyed
	expect_stale(w, (bp_entity){0});                   // null
	expect_stale(w, (bp_entity){0, 7});                // null index with some generation
	expect_stale(w, (bp_entity){b.index1 + 5, 1});     // index beyond every slot
	expect_stale(w, (bp_entity){UINT32_MAX, 1});       // far beyond
	expect_stale(w, (bp_entity){b.index1, b.generation + 1}); // live slot, generation from the future

	// Reuse: the freed slot comes back with the next generation; the old handle stays stale.
	bp_entity c = create(w, &d);
	cr_assert_eq(c.index1, a.index1, "the only free slot is reused");
	cr_assert_eq(c.generation, a.generation + 1);
	expect_stale(w, a);
	uint32_t dense;
	cr_assert_eq(bp_entity_dense_index(w, c, &dense), BP_OK);
	cr_assert_eq(dense, 1, "c was appended after b, which moved to dense 0");
	cr_assert_eq(bp_entity_dense_index(w, b, &dense), BP_OK);
	cr_assert_eq(dense, 0);
	bp_world_destroy(w);
}

/// Worlds A and B with entities in the same slots at the same generations:
/// every handle of one must be stale in the other (base.h: "handle of another
/// world"), not an alias of the entity in that slot.
Test(world, handles_of_another_world_are_stale)
{
	enum { WORLDS = 8, PER_WORLD = 3 };
	bp_world *worlds[WORLDS];
	bp_entity handles[WORLDS][PER_WORLD];
	bp_entity_def d = box_def(0, 0, 0, 1, 1, 1);
	for (int k = 0; k < WORLDS; ++k) {
		worlds[k] = new_world(3);
		for (int i = 0; i < PER_WORLD; ++i) {
			d.user_key = (uint64_t)(100 * k + i);
			handles[k][i] = create(worlds[k], &d);
		}
		// Churn one slot, so a slot's generation alone does not tell the worlds apart.
		cr_assert_eq(bp_entity_destroy(worlds[k], handles[k][1]), BP_OK);
		d.user_key = (uint64_t)(100 * k + 1);
		handles[k][1] = create(worlds[k], &d);
	}
	for (int k = 0; k < WORLDS; ++k)
		for (int other = 0; other < WORLDS; ++other)
			for (int i = 0; other != k && i < PER_WORLD; ++i) {
				expect_stale(worlds[k], handles[other][i]);
				cr_assert(strstr(bp_world_last_error(worlds[k]), "another world"), "world %d, handle of %d: '%s'", k,
					other, bp_world_last_error(worlds[k]));
			}
	// Each world still answers to its own handles, with its own entities.
	for (int k = 0; k < WORLDS; ++k) {
		for (int i = 0; i < PER_WORLD; ++i) {
			bp_entity_def got;
			cr_assert_eq(bp_entity_get(worlds[k], handles[k][i], &got), BP_OK);
			cr_assert_eq(got.user_key, (uint64_t)(100 * k + i));
		}
		bp_world_destroy(worlds[k]);
	}
	// Worlds created after those were destroyed do not take their handles either.
	bp_world *later = new_world(3);
	for (int i = 0; i < PER_WORLD; ++i)
		create(later, &d);
	for (int k = 0; k < WORLDS; ++k)
		expect_stale(later, handles[k][0]);
	bp_world_destroy(later);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

// ---- dense arrays -------------------------------------------------------

Test(world, destroy_moves_last_into_hole)
{
	bp_world *w = new_world(2);
	bp_entity h[5];
	for (int i = 0; i < 5; ++i) {
		bp_entity_def d = box_def((float)i, 0, 0, (float)i + 1, 1, 0);
		d.user_key = 100 + (uint64_t)i;
		h[i] = create(w, &d);
	}
	// Dense order 0 1 2 3 4; destroying 1 moves 4 into dense 1: 0 4 2 3.
	cr_assert_eq(bp_entity_destroy(w, h[1]), BP_OK);
	const int want[4] = {0, 4, 2, 3};
	cr_assert_eq(bp_world_entity_count(w), 4);
	const uint64_t *keys = bp_world_user_keys(w);
	for (uint32_t i = 0; i < 4; ++i) {
		cr_assert(same_handle(bp_world_entity_at(w, i), h[want[i]]), "dense %u", i);
		cr_assert_eq(keys[i], 100 + (uint64_t)want[i]);
		uint32_t dense;
		cr_assert_eq(bp_entity_dense_index(w, h[want[i]], &dense), BP_OK);
		cr_assert_eq(dense, i);
		cr_assert_eq(w->soa.min[0][i], (float)want[i], "bounds moved with the entity");
	}
	// Destroying the last dense entity moves nothing: 0 4 2.
	cr_assert_eq(bp_entity_destroy(w, h[3]), BP_OK);
	cr_assert(same_handle(bp_world_entity_at(w, 2), h[2]));
	cr_assert_eq(bp_world_user_keys(w)[1], 104);
	bp_world_destroy(w);
}

/// The shadow model: what the world must hold, in dense order, kept with the
/// same swap-remove rule the API documents.
typedef struct shadow {
	bp_entity handle;
	oracle_box box;
	uint64_t key;
} shadow;

static void shadow_remove(shadow *s, uint32_t *n, uint32_t i)
{
	s[i] = s[*n - 1];
	--*n;
}

static void check_against_shadow(const bp_world *w, const shadow *s, uint32_t n, int dims)
{
	cr_assert_eq(bp_world_entity_count(w), n);
	const uint64_t *keys = bp_world_user_keys(w);
	for (uint32_t i = 0; i < n; ++i) {
		bp_entity at = bp_world_entity_at(w, i);
		cr_assert(same_handle(at, s[i].handle), "dense %u: {%u, %u}, shadow says {%u, %u}", i, at.index1,
			at.generation, s[i].handle.index1, s[i].handle.generation);
		uint32_t dense = UINT32_MAX;
		cr_assert_eq(bp_entity_dense_index(w, s[i].handle, &dense), BP_OK);
		cr_assert_eq(dense, i);
		cr_assert_eq(keys[i], s[i].key);
		bp_entity_def d;
		cr_assert_eq(bp_entity_get(w, s[i].handle, &d), BP_OK);
		for (int k = 0; k < dims; ++k) {
			cr_assert_eq(d.min[k], s[i].box.min[k]);
			cr_assert_eq(d.max[k], s[i].box.max[k]);
		}
	}
}

Test(world, random_create_destroy_matches_shadow)
{
	const bool quick = getenv("BP_TEST_QUICK") != NULL;
	const uint32_t ops = quick ? 20000 : 100000, cap = 2000;
	shadow *live = calloc(cap, sizeof *live);
	bp_entity *dead = calloc(ops, sizeof *dead);
	uint32_t n = 0, n_dead = 0;
	bp_world *w = new_world(3);
	test_rng rng = {12345};
	for (uint32_t op = 0; op < ops; ++op) {
		// Drift between growing and shrinking so the free list is both long and empty at times.
		uint32_t grow_percent = (op / 5000) % 2 ? 35 : 65;
		if (n < cap && (n == 0 || test_rng_below(&rng, 100) < grow_percent)) {
			shadow *s = &live[n];
			test_random_boxes(&s->box, 1, 3, 100.0f, 5.0f, false, test_rng_next(&rng));
			s->key = test_rng_next(&rng);
			bp_entity_def d = box_def(s->box.min[0], s->box.min[1], s->box.min[2], s->box.max[0],
				s->box.max[1], s->box.max[2]);
			d.user_key = s->key;
			s->handle = create(w, &d);
			++n;
		} else {
			uint32_t i = test_rng_below(&rng, n);
			cr_assert_eq(bp_entity_destroy(w, live[i].handle), BP_OK);
			dead[n_dead++] = live[i].handle;
			shadow_remove(live, &n, i);
		}
		if (op % 997 == 0)
			check_against_shadow(w, live, n, 3);
	}
	check_against_shadow(w, live, n, 3);
	// Every destroyed handle stays stale, even though its slot was reused many times.
	for (uint32_t i = 0; i < n_dead; ++i) {
		bp_entity_def d;
		cr_assert_eq(bp_entity_get(w, dead[i], &d), BP_ERR_STALE_HANDLE, "dead handle %u", i);
	}
	// No two live handles share a slot.
	for (uint32_t i = 0; i < n; ++i)
		for (uint32_t j = i + 1; j < n; ++j)
			cr_assert_neq(live[i].handle.index1, live[j].handle.index1);
	bp_world_destroy(w);
	free(live);
	free(dead);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

// ---- bulk create / set --------------------------------------------------

typedef struct soa {
	float *v[6]; // min_x min_y min_z max_x max_y max_z
} soa;

static soa soa_from_boxes(const oracle_box *b, uint32_t n)
{
	soa s;
	for (int k = 0; k < 6; ++k)
		s.v[k] = malloc((n ? n : 1) * sizeof(float));
	for (uint32_t i = 0; i < n; ++i)
		for (int k = 0; k < 3; ++k) {
			s.v[k][i] = b[i].min[k];
			s.v[3 + k][i] = b[i].max[k];
		}
	return s;
}

static void soa_free(soa *s)
{
	for (int k = 0; k < 6; ++k)
		free(s->v[k]);
}

static bp_bounds_arrays arrays_of(const soa *s, int dims)
{
	return (bp_bounds_arrays){s->v[0], s->v[1], dims == 3 ? s->v[2] : NULL, s->v[3], s->v[4],
		dims == 3 ? s->v[5] : NULL};
}

static void check_bulk_create(int dims, bool with_handles)
{
	enum { N0 = 3, N = 500 };
	oracle_box boxes[N0 + N];
	test_random_boxes(boxes, N0 + N, dims, 50.0f, 3.0f, false, 77);
	bp_world *w = new_world(dims);
	// Three entities first, so the bulk ones start at dense index N0.
	for (int i = 0; i < N0; ++i) {
		bp_entity_def d = box_def(boxes[i].min[0], boxes[i].min[1], boxes[i].min[2], boxes[i].max[0],
			boxes[i].max[1], boxes[i].max[2]);
		create(w, &d);
	}
	soa s = soa_from_boxes(boxes + N0, N);
	bp_bounds_arrays arrays = arrays_of(&s, dims);
	bp_entity_def common = bp_entity_def_default();
	common.category = 6;
	common.mask = 3;
	common.kind = BP_KIND_STATIC;
	common.user_key = 9;
	common.min[0] = 1e30f; // ignored: bounds come from the arrays
	bp_entity *handles = with_handles ? calloc(N, sizeof *handles) : NULL;
	cr_assert_eq(bp_world_create_entities(w, N, &arrays, &common, handles), BP_OK, "%s", bp_world_last_error(w));
	cr_assert_eq(bp_world_entity_count(w), N0 + N);
	for (uint32_t i = 0; i < N; ++i) {
		bp_entity e = bp_world_entity_at(w, N0 + i);
		if (handles)
			cr_assert(same_handle(e, handles[i]), "handle %u is not at dense %u", i, N0 + i);
		bp_entity_def d;
		cr_assert_eq(bp_entity_get(w, e, &d), BP_OK);
		for (int k = 0; k < dims; ++k) {
			cr_assert_eq(d.min[k], boxes[N0 + i].min[k]);
			cr_assert_eq(d.max[k], boxes[N0 + i].max[k]);
		}
		cr_assert_eq(d.category, 6);
		cr_assert_eq(d.mask, 3);
		cr_assert_eq(d.kind, BP_KIND_STATIC);
		cr_assert_eq(d.user_key, 9);
	}
	// Zero entities is a no-op that succeeds.
	cr_assert_eq(bp_world_create_entities(w, 0, &arrays, &common, NULL), BP_OK);
	cr_assert_eq(bp_world_entity_count(w), N0 + N);
	free(handles);
	soa_free(&s);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(world, bulk_create_3d_with_handles) { check_bulk_create(3, true); }
Test(world, bulk_create_3d_without_handles) { check_bulk_create(3, false); }
Test(world, bulk_create_2d_null_z) { check_bulk_create(2, true); }

static void check_bulk_set(int dims)
{
	enum { N = 300, FIRST = 100, COUNT = 150 };
	oracle_box before[N], after[N];
	test_random_boxes(before, N, dims, 50.0f, 3.0f, false, 5);
	test_random_boxes(after, N, dims, 50.0f, 3.0f, false, 6);
	bp_world *w = new_world(dims);
	soa s = soa_from_boxes(before, N);
	bp_bounds_arrays arrays = arrays_of(&s, dims);
	bp_entity_def common = bp_entity_def_default();
	cr_assert_eq(bp_world_create_entities(w, N, &arrays, &common, NULL), BP_OK);
	// Element i of the arrays goes to dense FIRST + i; the rest keeps its bounds.
	soa t = soa_from_boxes(after + FIRST, COUNT);
	bp_bounds_arrays update = arrays_of(&t, dims);
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(FIRST, COUNT), &update), BP_OK, "%s", bp_world_last_error(w));
	for (uint32_t i = 0; i < N; ++i) {
		const oracle_box *want = (i >= FIRST && i < FIRST + COUNT) ? &after[i] : &before[i];
		bp_entity_def d;
		cr_assert_eq(bp_entity_get(w, bp_world_entity_at(w, i), &d), BP_OK);
		for (int k = 0; k < dims; ++k) {
			cr_assert_eq(d.min[k], want->min[k], "dense %u axis %d", i, k);
			cr_assert_eq(d.max[k], want->max[k], "dense %u axis %d", i, k);
		}
	}
	// The whole range and an empty range at the end are both in range.
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(0, N), &arrays), BP_OK);
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(N, 0), &arrays), BP_OK);
	cr_assert_eq(w->soa.min[0][FIRST], before[FIRST].min[0]);
	soa_free(&s);
	soa_free(&t);
	bp_world_destroy(w);
}

Test(world, bulk_set_bounds_3d) { check_bulk_set(3); }
Test(world, bulk_set_bounds_2d_null_z) { check_bulk_set(2); }

// ---- bad input leaves the world unchanged ----------------------------------

typedef struct bad_value {
	float min, max;
	bp_status want;
} bad_value;

static const bad_value bad_values[] = {
	{NAN, 1, BP_ERR_NOT_FINITE},
	{0, NAN, BP_ERR_NOT_FINITE},
	{INFINITY, INFINITY, BP_ERR_NOT_FINITE},
	{-INFINITY, 1, BP_ERR_NOT_FINITE},
	{0, INFINITY, BP_ERR_NOT_FINITE},
	{2, 1, BP_ERR_INVERTED_BOUNDS},
	{0, -0x1p-149f, BP_ERR_INVERTED_BOUNDS}, // smallest denormal below zero
};
#define BAD_COUNT (sizeof bad_values / sizeof bad_values[0])

static bp_world *world_with_some_entities(int dims)
{
	bp_world *w = new_world(dims);
	for (int i = 0; i < 5; ++i) {
		bp_entity_def d = box_def((float)i, 0, 0, (float)i + 2, 1, 1);
		d.user_key = (uint64_t)i;
		create(w, &d);
	}
	return w;
}

Test(world, single_calls_reject_bad_bounds)
{
	for (int dims = 2; dims <= 3; ++dims) {
		bp_world *w = world_with_some_entities(dims);
		bp_entity target = bp_world_entity_at(w, 2);
		for (size_t v = 0; v < BAD_COUNT; ++v) {
			for (int axis = 0; axis < dims; ++axis) {
				bp_entity_def d = box_def(0, 0, 0, 1, 1, 1);
				d.min[axis] = bad_values[v].min;
				d.max[axis] = bad_values[v].max;
				snapshot s = take_snapshot(w);
				bp_entity out = {3, 3};
				cr_assert_eq(bp_entity_create(w, &d, &out), bad_values[v].want, "value %zu axis %d", v, axis);
				const char *axis_name = axis == 0 ? "_x" : axis == 1 ? "_y" : "_z";
				cr_assert(strstr(bp_world_last_error(w), axis_name), "'%s' does not name %s",
					bp_world_last_error(w), axis_name);
				assert_unchanged(w, &s);
				s = take_snapshot(w);
				cr_assert_eq(bp_entity_set_bounds(w, target, d.min, d.max), bad_values[v].want);
				cr_assert(strstr(bp_world_last_error(w), axis_name));
				assert_unchanged(w, &s);
			}
		}
		snapshot s = take_snapshot(w);
		const float ok[3] = {0, 0, 0};
		cr_assert_eq(bp_entity_set_bounds(w, target, NULL, ok), BP_ERR_INVALID_ARGUMENT);
		cr_assert_eq(bp_entity_set_bounds(w, target, ok, NULL), BP_ERR_INVALID_ARGUMENT);
		bp_entity_def d = bp_entity_def_default();
		cr_assert_eq(bp_entity_create(w, NULL, &target), BP_ERR_INVALID_ARGUMENT);
		cr_assert_eq(bp_entity_create(w, &d, NULL), BP_ERR_INVALID_ARGUMENT);
		d.kind = (bp_kind)7;
		bp_entity out;
		cr_assert_eq(bp_entity_create(w, &d, &out), BP_ERR_INVALID_ARGUMENT);
		assert_unchanged(w, &s);
		bp_world_destroy(w);
	}
}

/// One bad element at index k on `axis`; everything else valid.
static void check_bulk_rejects(int dims, uint32_t k, int axis, const bad_value *bad)
{
	enum { N = 40 };
	oracle_box boxes[N];
	test_random_boxes(boxes, N, dims, 20.0f, 2.0f, false, 1000 + k);
	boxes[k].min[axis] = bad->min;
	boxes[k].max[axis] = bad->max;
	soa s = soa_from_boxes(boxes, N);
	bp_bounds_arrays arrays = arrays_of(&s, dims);
	bp_world *w = world_with_some_entities(dims);
	const char axis_name[3] = {'_', "xyz"[axis], 0};

	snapshot snap = take_snapshot(w);
	bp_entity_def common = bp_entity_def_default();
	bp_entity handles[N];
	cr_assert_eq(bp_world_create_entities(w, N, &arrays, &common, handles), bad->want);
	const char *text = bp_world_last_error(w);
	cr_assert(mentions(text, k) && strstr(text, axis_name), "'%s' does not name index %u and %s", text, k,
		axis_name);
	assert_unchanged(w, &snap);

	// Bulk set over the 5 existing entities, with the bad element at k % 5.
	uint32_t kk = k % 5;
	soa t = soa_from_boxes(boxes + k - kk, 5);
	bp_bounds_arrays update = arrays_of(&t, dims);
	snap = take_snapshot(w);
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(0, 5), &update), bad->want);
	text = bp_world_last_error(w);
	cr_assert(mentions(text, kk) && strstr(text, axis_name), "'%s' does not name index %u and %s", text, kk,
		axis_name);
	assert_unchanged(w, &snap);
	soa_free(&s);
	soa_free(&t);
	bp_world_destroy(w);
}

Test(world, bulk_calls_reject_bad_bounds_all_or_nothing)
{
	const uint32_t ks[] = {0, 17, 39};
	for (int dims = 2; dims <= 3; ++dims)
		for (size_t ki = 0; ki < 3; ++ki)
			for (int axis = 0; axis < dims; ++axis)
				for (size_t v = 0; v < BAD_COUNT; ++v)
					check_bulk_rejects(dims, ks[ki], axis, &bad_values[v]);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(world, bulk_calls_reject_bad_ranges_and_arrays)
{
	bp_world *w = world_with_some_entities(3);
	oracle_box boxes[8];
	test_random_boxes(boxes, 8, 3, 10.0f, 1.0f, false, 3);
	soa s = soa_from_boxes(boxes, 8);
	bp_bounds_arrays ok = arrays_of(&s, 3);
	bp_entity_def common = bp_entity_def_default();
	snapshot snap = take_snapshot(w);

	// 5 entities: [first, first + count) must lie in [0, 5).
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(6, 0), &ok), BP_ERR_OUT_OF_RANGE);
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(4, 2), &ok), BP_ERR_OUT_OF_RANGE);
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(0, 6), &ok), BP_ERR_OUT_OF_RANGE);
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(1, UINT32_MAX), &ok), BP_ERR_OUT_OF_RANGE,
		"first + count wraps");
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(UINT32_MAX, 1), &ok), BP_ERR_OUT_OF_RANGE);
	cr_assert(mentions(bp_world_last_error(w), UINT32_MAX));
	cr_assert_eq(bp_world_create_entities(w, UINT32_MAX, &ok, &common, NULL), BP_ERR_OUT_OF_RANGE,
		"more than the entity limit");

	// A NULL array, or no arrays at all; z arrays are required in 3D.
	for (int k = 0; k < 6; ++k) {
		bp_bounds_arrays missing = ok;
		const float **fields[6] = {&missing.min_x, &missing.min_y, &missing.min_z, &missing.max_x,
			&missing.max_y, &missing.max_z};
		*fields[k] = NULL;
		cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(0, 5), &missing), BP_ERR_INVALID_ARGUMENT, "array %d", k);
		cr_assert_eq(bp_world_create_entities(w, 5, &missing, &common, NULL), BP_ERR_INVALID_ARGUMENT);
	}
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(0, 5), NULL), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_world_create_entities(w, 5, NULL, &common, NULL), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_world_create_entities(w, 5, &ok, NULL, NULL), BP_ERR_INVALID_ARGUMENT);
	common.kind = (bp_kind)2;
	cr_assert_eq(bp_world_create_entities(w, 5, &ok, &common, NULL), BP_ERR_INVALID_ARGUMENT);
	cr_assert_str_not_empty(bp_world_last_error(w));
	assert_unchanged(w, &snap);

	cr_assert_eq(bp_entities_set_bounds(NULL, bp_target_range(0, 0), &ok), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_world_create_entities(NULL, 1, &ok, &common, NULL), BP_ERR_INVALID_ARGUMENT);
	soa_free(&s);
	bp_world_destroy(w);
}

// ---- handle generations ---------------------------------------------------

Test(world, generation_wrap_retires_slot)
{
	bp_world *w = new_world(2);
	bp_entity_def d = box_def(0, 0, 0, 1, 1, 0);
	bp_entity keep = create(w, &d);
	bp_entity old = create(w, &d);
	uint32_t slot = old.index1 - 1;
	// Pretend the slot was reused until its count reached the last one; the live
	// handle now carries it (the world's tag stays in the bits above).
	uint32_t tag = old.generation & ~BPI_GENERATION_COUNT_MAX;
	cr_assert_eq(old.generation, tag | 1u, "a new slot starts at count 1 under the world's tag");
	w->slots[slot].generation = tag | BPI_GENERATION_COUNT_MAX;
	bp_entity aged = {old.index1, tag | BPI_GENERATION_COUNT_MAX};
	w->soa.entity[w->slots[slot].dense] = aged; // the handle the store keeps by dense index
	expect_stale(w, old);
	uint32_t dense;
	cr_assert_eq(bp_entity_dense_index(w, aged, &dense), BP_OK);
	cr_assert_eq(dense, 1);
	cr_assert_eq(bp_entity_destroy(w, aged), BP_OK);
	expect_stale(w, aged);
	expect_stale(w, (bp_entity){old.index1, tag}); // the retired marker (count 0) is never a live generation
	expect_stale(w, (bp_entity){old.index1, tag | 1u}); // nor does the count start again
	expect_stale(w, (bp_entity){old.index1, 0});
	// A slot freed normally before and after still gets reused, the retired one never.
	bp_entity other = create(w, &d);
	cr_assert_neq(other.index1, old.index1);
	cr_assert_eq(bp_entity_destroy(w, other), BP_OK);
	for (int i = 0; i < 100; ++i) {
		bp_entity e = create(w, &d);
		cr_assert_neq(e.index1, old.index1, "retired slot %u was reused", old.index1);
		cr_assert_neq(e.generation & BPI_GENERATION_COUNT_MAX, 0);
		if (i == 0)
			cr_assert(e.index1 == other.index1 && e.generation == other.generation + 1, "free slot reused first");
	}
	expect_stale(w, aged);
	cr_assert_eq(bp_world_entity_count(w), 101);
	cr_assert_eq(bp_entity_destroy(w, keep), BP_OK);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

// ---- user keys, filters, kinds ----------------------------------------------

Test(world, user_keys_follow_entities)
{
	bp_world *w = new_world(3);
	bp_entity h[4];
	for (int i = 0; i < 4; ++i) {
		bp_entity_def d = bp_entity_def_default();
		d.user_key = 10 + (uint64_t)i;
		h[i] = create(w, &d);
	}
	cr_assert_eq(bp_entity_set_user_key(w, h[2], UINT64_MAX), BP_OK);
	// keys 10 11 MAX 13; destroy h[0]: h[3] moves to dense 0 -> 13 11 MAX.
	cr_assert_eq(bp_entity_destroy(w, h[0]), BP_OK);
	const uint64_t *keys = bp_world_user_keys(w);
	cr_assert_eq(keys[0], 13);
	cr_assert_eq(keys[1], 11);
	cr_assert_eq(keys[2], UINT64_MAX);
	bp_entity_def d;
	cr_assert_eq(bp_entity_get(w, h[2], &d), BP_OK);
	cr_assert_eq(d.user_key, UINT64_MAX);
	bp_world_destroy(w);
}

Test(world, set_kind_and_filter_round_trip)
{
	bp_world *w = new_world(3);
	bp_entity_def d = bp_entity_def_default();
	bp_entity e = create(w, &d);
	cr_assert_eq(bp_entity_set_kind(w, e, BP_KIND_STATIC), BP_OK);
	cr_assert_eq(bp_entity_set_filter(w, e, 0x8, 0x3), BP_OK);
	cr_assert_eq(bp_entity_get(w, e, &d), BP_OK);
	cr_assert_eq(d.kind, BP_KIND_STATIC);
	cr_assert_eq(d.category, 0x8);
	cr_assert_eq(d.mask, 0x3);
	snapshot s = take_snapshot(w);
	cr_assert_eq(bp_entity_set_kind(w, e, (bp_kind)5), BP_ERR_INVALID_ARGUMENT);
	cr_assert_str_not_empty(bp_world_last_error(w));
	assert_unchanged(w, &s);
	cr_assert_eq(bp_entity_set_kind(w, e, BP_KIND_DYNAMIC), BP_OK);
	cr_assert_eq(bp_entity_get(w, e, &d), BP_OK);
	cr_assert_eq(d.kind, BP_KIND_DYNAMIC);
	bp_world_destroy(w);
}

// ---- step vs oracle ---------------------------------------------------------

static bp_entity_def def_of(const oracle_box *b)
{
	bp_entity_def d = box_def(b->min[0], b->min[1], b->min[2], b->max[0], b->max[1], b->max[2]);
	d.category = b->category;
	d.mask = b->mask;
	d.kind = b->is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
	return d;
}

/// Builds a world through every mutation path (bulk create, single create,
/// destroy, bulk set, set_kind/set_filter), keeps the shadow in dense order,
/// then checks the brute step against the oracle.
static void check_step(int dims, int threads, uint64_t seed)
{
	enum { N = 700 };
	shadow *live = calloc(2 * N, sizeof *live);
	oracle_box *boxes = calloc(2 * N, sizeof *boxes);
	uint32_t n = 0;
	test_rng rng = {seed};
	bp_world_def def = bp_world_def_default();
	def.dims = dims;
	def.algorithm = BP_ALGO_BRUTE;
	def.thread_count = threads;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);

	test_random_boxes(boxes, N, dims, 60.0f, 4.0f, false, seed);
	soa s = soa_from_boxes(boxes, N);
	bp_bounds_arrays arrays = arrays_of(&s, dims);
	bp_entity_def common = bp_entity_def_default();
	bp_entity handles[N];
	cr_assert_eq(bp_world_create_entities(w, N, &arrays, &common, handles), BP_OK);
	for (uint32_t i = 0; i < N; ++i)
		live[n++] = (shadow){handles[i], boxes[i], 0};
	test_random_boxes(boxes, N / 2, dims, 60.0f, 4.0f, true, seed + 1);
	for (uint32_t i = 0; i < N / 2; ++i) {
		bp_entity_def d = def_of(&boxes[i]);
		live[n] = (shadow){create(w, &d), boxes[i], 0};
		++n;
	}
	for (uint32_t i = 0; i < N / 3; ++i) {
		uint32_t victim = test_rng_below(&rng, n);
		cr_assert_eq(bp_entity_destroy(w, live[victim].handle), BP_OK);
		shadow_remove(live, &n, victim);
	}
	// New bounds for a middle range, new filters and kinds for some.
	const uint32_t first = n / 4, count = n / 2;
	test_random_boxes(boxes, count, dims, 60.0f, 4.0f, false, seed + 2);
	soa t = soa_from_boxes(boxes, count);
	bp_bounds_arrays update = arrays_of(&t, dims);
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(first, count), &update), BP_OK);
	for (uint32_t i = 0; i < count; ++i)
		memcpy(live[first + i].box.min, boxes[i].min, sizeof boxes[i].min),
			memcpy(live[first + i].box.max, boxes[i].max, sizeof boxes[i].max);
	for (uint32_t i = 0; i < n; i += 3) {
		oracle_box *b = &live[i].box;
		b->category = test_layer(test_rng_below(&rng, 3));
		b->mask = test_rng_below(&rng, 2) ? UINT64_MAX : test_layer(test_rng_below(&rng, 3));
		b->is_static = test_rng_below(&rng, 3) == 0;
		cr_assert_eq(bp_entity_set_filter(w, live[i].handle, b->category, b->mask), BP_OK);
		cr_assert_eq(bp_entity_set_kind(w, live[i].handle, b->is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC), BP_OK);
	}
	check_against_shadow(w, live, n, dims);

	for (uint32_t i = 0; i < n; ++i)
		boxes[i] = live[i].box;
	oracle_pairs want = oracle_find_pairs(boxes, n, dims);
	cr_assert_gt(want.count, 50, "scene too sparse to test anything");
	cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
	size_t got_count;
	const bp_pair *got = bp_world_pairs(w, &got_count);
	cr_assert(oracle_same_pair_set(got, got_count, &want), "dims %d threads %d", dims, threads);
	for (size_t i = 0; i < got_count; ++i)
		cr_assert_lt(got[i].lo, got[i].hi);
	bp_frame_stats stats = bp_world_stats(w);
	cr_assert_eq(stats.pair_count, want.count);
	cr_assert_eq(stats.entity_count, n);
	cr_assert_eq(stats.algorithm, BP_ALGO_BRUTE);
	cr_assert_eq(stats.frame, 1);
	oracle_pairs_free(&want);
	soa_free(&s);
	soa_free(&t);
	free(live);
	free(boxes);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(world, step_brute_matches_oracle_3d_1_thread, .timeout = 60) { check_step(3, 1, 41); }
Test(world, step_brute_matches_oracle_3d_2_threads, .timeout = 60) { check_step(3, 2, 42); }
Test(world, step_brute_matches_oracle_2d_1_thread, .timeout = 60) { check_step(2, 1, 43); }
Test(world, step_brute_matches_oracle_2d_2_threads, .timeout = 60) { check_step(2, 2, 44); }

// ---- canonical_pairs ------------------------------------------------------------------

/// A canonical world's pairs are the oracle's, in the oracle's (lo, hi) order, on
/// 1 and 2 threads: below the bucket sort's 64K pairs and above.
static void check_canonical(uint32_t n, float world_size, size_t least_pairs)
{
	oracle_box *boxes = malloc(n * sizeof *boxes);
	test_random_boxes(boxes, n, 3, world_size, 4.0f, false, 7 + n);
	oracle_pairs want = oracle_find_pairs(boxes, n, 3);
	cr_assert_gt(want.count, least_pairs, "scene too sparse: %zu pairs", want.count);
	for (int threads = 1; threads <= 2; ++threads) {
		bp_world_def def = bp_world_def_default();
		def.algorithm = BP_ALGO_GRID;
		def.thread_count = threads;
		def.canonical_pairs = true;
		bp_world *w = test_world_from_def(boxes, n, &def);
		for (int step = 0; step < 2; ++step) { // the second reuses the sort's buffer
			cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
			size_t count;
			const bp_pair *got = bp_world_pairs(w, &count);
			cr_assert_eq(count, want.count, "n %u threads %d", n, threads);
			for (size_t i = 0; i < count; ++i)
				cr_assert(got[i].lo == want.data[i].lo && got[i].hi == want.data[i].hi,
					"n %u threads %d: pair %zu is (%u, %u), the oracle's (%u, %u)", n, threads, i, got[i].lo,
					got[i].hi, want.data[i].lo, want.data[i].hi);
		}
		bp_world_destroy(w);
	}
	oracle_pairs_free(&want);
	free(boxes);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(world, canonical_pairs_in_oracle_order_few, .timeout = 60) { check_canonical(3000, 60.0f, 1000); }
Test(world, canonical_pairs_in_oracle_order_many, .timeout = 120) { check_canonical(24000, 60.0f, 70000); }

// ---- one vocabulary in messages ------------------------------------------------------

/// last_error contains `text`.
static void expect_error_mentions(const bp_world *w, const char *text)
{
	cr_assert(strstr(bp_world_last_error(w), text) != NULL, "'%s' does not mention '%s'", bp_world_last_error(w),
		text);
}

Test(world, messages_name_entities_by_handle_array_element_or_dense_index)
{
	bp_world *w = new_world(3);
	bp_entity_def d = box_def(0, 0, 0, 1, 1, 1);
	bp_entity a = create(w, &d), b = create(w, &d);
	create(w, &d);
	float lo[3] = {0, 0, 0}, hi[3] = {1, -1, 1};
	cr_assert_eq(bp_entity_set_bounds(w, a, lo, hi), BP_ERR_INVERTED_BOUNDS);
	char handle[96];
	snprintf(handle, sizeof handle, "entity {%u, 1}: min_y > max_y", a.index1);
	expect_error_mentions(w, handle);

	float xs[3] = {0, NAN, 0}, ones[3] = {1, 1, 1};
	bp_bounds_arrays arrays = {xs, xs, xs, ones, ones, ones};
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(0, 3), &arrays), BP_ERR_NOT_FINITE);
	expect_error_mentions(w, "bounds[1]: min_x is nan");

	const uint32_t listed[2] = {0, 99};
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_indices(2, listed), &arrays), BP_ERR_OUT_OF_RANGE);
	expect_error_mentions(w, "dense_indices[1]: dense index 99");

	cr_assert_eq(bp_entity_destroy(w, b), BP_OK);
	const bp_entity handles[3] = {a, a, b};
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_handles(3, handles), &arrays), BP_ERR_STALE_HANDLE);
	snprintf(handle, sizeof handle, "entities[2]: entity {%u, 1}: destroyed (slot now at generation 2)", b.index1);
	expect_error_mentions(w, handle);
	bp_world_destroy(w);
}

/// README and world.h show handles in messages as {index1, count}: the slot's reuse count,
/// never the generation word with the world's tag in it; another world's tag is printed apart.
Test(world, messages_print_handles_as_the_readme_shows_them)
{
	bp_world *w = new_world(3), *other = new_world(3);
	bp_entity_def d = box_def(0, 0, 0, 1, 1, 1);
	bp_entity a = create(w, &d), b = create(w, &d);
	cr_assert_eq(bp_entity_reuse_count(a), 1);
	cr_assert_neq(a.generation, 1u, "the generation word carries the world's tag");
	cr_assert_eq(bp_entity_world_tag(a), a.generation >> 20);
	// Slot 2 reused twice: its third entity has count 3.
	for (int k = 0; k < 2; ++k) {
		cr_assert_eq(bp_entity_destroy(w, b), BP_OK);
		b = create(w, &d);
	}
	cr_assert(b.index1 == 2 && bp_entity_reuse_count(b) == 3);
	float lo[3] = {0, 0, 0}, hi[3] = {1, 1, -1};
	cr_assert_eq(bp_entity_set_bounds(w, b, lo, hi), BP_ERR_INVERTED_BOUNDS);
	expect_error_mentions(w, "entity {2, 3}: min_z > max_z");
	bp_entity old = {2, (b.generation & ~0xFFFFFu) | 1u};
	cr_assert_eq(bp_entity_set_kind(w, old, BP_KIND_STATIC), BP_ERR_STALE_HANDLE);
	expect_error_mentions(w, "entity {2, 1}: destroyed (slot now at generation 3)");
	bp_entity twice[2] = {a, a};
	cr_assert_eq(bp_world_destroy_entities(w, 2, twice), BP_ERR_INVALID_ARGUMENT);
	expect_error_mentions(w, "entity {1, 1} is listed twice");
	// Another world's handle: same slot and count, its tag printed apart.
	bp_entity foreign = create(other, &d);
	char text[96];
	snprintf(text, sizeof text, "entity {1, 1} of world tag %u: a handle of another world",
		bp_entity_world_tag(foreign));
	cr_assert_eq(bp_entity_destroy(w, foreign), BP_ERR_STALE_HANDLE);
	expect_error_mentions(w, text);
	cr_assert_eq(bp_entity_destroy(w, (bp_entity){0, 0}), BP_ERR_STALE_HANDLE);
	expect_error_mentions(w, "entity {0, 0}: null handle");
	bp_world_destroy(other);
	bp_world_destroy(w);
}

Test(world, a_refused_create_says_which_setting)
{
	bp_world_def def = bp_world_def_default();
	def.thread_count = 5000;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_ERR_INVALID_ARGUMENT);
	cr_assert(strstr(bp_world_create_error(), "thread_count 5000") != NULL, "%s", bp_world_create_error());
	def = bp_world_def_default();
	def.dims = 4;
	cr_assert_eq(bp_world_create(&def, &w), BP_ERR_INVALID_ARGUMENT);
	cr_assert(strstr(bp_world_create_error(), "dims 4") != NULL, "%s", bp_world_create_error());
	def = bp_world_def_default();
	def.periodic = true;
	def.period[0] = def.period[1] = 10.0f;
	cr_assert_eq(bp_world_create(&def, &w), BP_ERR_INVALID_ARGUMENT);
	cr_assert(strstr(bp_world_create_error(), "period_z 0") != NULL, "%s", bp_world_create_error());
	cr_assert_null(w);
}
