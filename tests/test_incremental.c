// SPDX-License-Identifier: MIT
// Incremental steps (DESIGN §10): long random histories of moves, teleports, creates,
// destroys and kind, filter and shape changes, every step checked against the oracle and
// against a world that rebuilds in full, byte for byte, at several thread counts.
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

/// The host's side of a history: a shadow copy of every entity, in dense order,
/// mirrored by an incremental world and by a world that rebuilds in full.
typedef struct history {
	int dims;
	uint32_t n, capacity;
	oracle_box *boxes;
	bp_entity *handles;     ///< in the incremental world
	bp_entity *full_handles; ///< in the full world
	bp_world *world, *full;
	test_rng rng;
	float size; ///< the scene is [0, size)^dims
} history;

static bp_entity_def def_of(const oracle_box *b)
{
	bp_entity_def e = bp_entity_def_default();
	memcpy(e.min, b->min, sizeof e.min);
	memcpy(e.max, b->max, sizeof e.max);
	e.category = b->category;
	e.mask = b->mask;
	e.kind = b->is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
	e.shape = b->is_sphere ? BP_SHAPE_SPHERE : BP_SHAPE_BOX;
	return e;
}

static void random_box(history *h, oracle_box *b, bool filters)
{
	float extent = test_rng_float(&h->rng, 0.0f, 2.0f);
	for (int k = 0; k < 3; ++k) {
		b->min[k] = k < h->dims ? test_rng_float(&h->rng, 0.0f, h->size) : 0.0f;
		b->max[k] = k < h->dims ? b->min[k] + extent * test_rng_float(&h->rng, 0.5f, 1.0f) : 0.0f;
	}
	b->category = filters && test_rng_below(&h->rng, 4) == 0 ? 2u : 1u;
	b->mask = filters && test_rng_below(&h->rng, 4) == 0 ? 1u : UINT32_MAX;
	b->is_static = filters && test_rng_below(&h->rng, 3) == 0;
	b->is_sphere = false;
}

/// The incremental world takes the incremental path on every step after the first
/// (BP_DEBUG_ALWAYS_INCREMENTAL): on worlds this small its cost model would often
/// rebuild in full instead, which is right for speed but tests nothing.
static bp_world *new_world(int dims, int threads, bool incremental)
{
	bp_world_def def = bp_world_def_default();
	def.dims = dims;
	def.thread_count = threads;
	def.incremental = incremental;
	def.debug_flags = incremental ? BP_DEBUG_ALWAYS_INCREMENTAL : 0;
	def.canonical_pairs = true;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	return w;
}

static void create(history *h, const oracle_box *b)
{
	cr_assert_lt(h->n, h->capacity);
	bp_entity_def e = def_of(b);
	cr_assert_eq(bp_entity_create(h->world, &e, &h->handles[h->n]), BP_OK, "%s", bp_world_last_error(h->world));
	cr_assert_eq(bp_entity_create(h->full, &e, &h->full_handles[h->n]), BP_OK);
	h->boxes[h->n++] = *b;
}

/// Destroys dense entity d in both worlds and in the shadow (swap-remove, as the library).
static void destroy(history *h, uint32_t d)
{
	cr_assert_eq(bp_entity_destroy(h->world, h->handles[d]), BP_OK);
	cr_assert_eq(bp_entity_destroy(h->full, h->full_handles[d]), BP_OK);
	uint32_t last = --h->n;
	h->boxes[d] = h->boxes[last];
	h->handles[d] = h->handles[last];
	h->full_handles[d] = h->full_handles[last];
}

static void set_bounds(history *h, uint32_t d, const oracle_box *b)
{
	cr_assert_eq(bp_entity_set_bounds(h->world, h->handles[d], b->min, b->max), BP_OK);
	cr_assert_eq(bp_entity_set_bounds(h->full, h->full_handles[d], b->min, b->max), BP_OK);
	memcpy(h->boxes[d].min, b->min, sizeof b->min);
	memcpy(h->boxes[d].max, b->max, sizeof b->max);
}

/// Steps both worlds and checks the incremental one against the oracle and, byte
/// for byte, against the full one. Returns the incremental world's stats.
static bp_frame_stats check_step(history *h)
{
	cr_assert_eq(bp_world_step(h->world), BP_OK, "%s", bp_world_last_error(h->world));
	cr_assert_eq(bp_world_step(h->full), BP_OK);
	size_t count, full_count;
	const bp_pair *got = bp_world_pairs(h->world, &count);
	const bp_pair *want_full = bp_world_pairs(h->full, &full_count);
	oracle_pairs want = oracle_find_pairs(h->boxes, h->n, h->dims);
	cr_assert(oracle_same_pair_set(got, count, &want), "n=%u: %zu pairs, oracle %zu", h->n, count, want.count);
	oracle_pairs_free(&want);
	cr_assert_eq(count, full_count);
	cr_assert(count == 0 || memcmp(got, want_full, count * sizeof *got) == 0, "order differs from the full world");
	return bp_world_stats(h->world);
}

static void history_run(int dims, int threads, uint32_t start, int steps, bool filters, uint64_t seed)
{
	history h = {.dims = dims, .capacity = start * 2 + 64, .rng = {seed}, .size = 40.0f};
	h.boxes = calloc(h.capacity, sizeof *h.boxes);
	h.handles = calloc(h.capacity, sizeof *h.handles);
	h.full_handles = calloc(h.capacity, sizeof *h.full_handles);
	cr_assert(h.boxes && h.handles && h.full_handles);
	h.world = new_world(dims, threads, true);
	h.full = new_world(dims, threads, false);
	for (uint32_t i = 0; i < start; ++i) {
		oracle_box b;
		random_box(&h, &b, filters);
		create(&h, &b);
	}
	int incremental_steps = 0;
	for (int step = 0; step < steps; ++step) {
		bp_frame_stats stats = check_step(&h);
		incremental_steps += stats.active_count < stats.entity_count;
		// A few entities move a little, one teleports, one is born, one dies, one changes.
		uint32_t movers = 1 + test_rng_below(&h.rng, 8);
		for (uint32_t m = 0; m < movers && h.n; ++m) {
			uint32_t d = test_rng_below(&h.rng, h.n);
			oracle_box b = h.boxes[d];
			float delta = test_rng_float(&h.rng, -0.3f, 0.3f);
			for (int k = 0; k < dims; ++k) {
				b.min[k] += delta;
				b.max[k] += delta;
			}
			set_bounds(&h, d, &b);
		}
		switch (test_rng_below(&h.rng, 6)) {
		case 0:
			if (h.n) {
				oracle_box b;
				random_box(&h, &b, filters);
				set_bounds(&h, test_rng_below(&h.rng, h.n), &b);
			}
			break;
		case 1:
			if (h.n < h.capacity) {
				oracle_box b;
				random_box(&h, &b, filters);
				create(&h, &b);
			}
			break;
		case 2:
			if (h.n)
				destroy(&h, test_rng_below(&h.rng, h.n));
			break;
		case 3:
			if (h.n && filters) {
				uint32_t d = test_rng_below(&h.rng, h.n);
				bool is_static = !h.boxes[d].is_static;
				bp_kind kind = is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
				cr_assert_eq(bp_entity_set_kind(h.world, h.handles[d], kind), BP_OK);
				cr_assert_eq(bp_entity_set_kind(h.full, h.full_handles[d], kind), BP_OK);
				h.boxes[d].is_static = is_static;
			}
			break;
		case 4:
			if (h.n && filters) {
				uint32_t d = test_rng_below(&h.rng, h.n);
				uint32_t mask = h.boxes[d].mask == UINT32_MAX ? 1u : UINT32_MAX;
				cr_assert_eq(bp_entity_set_filter(h.world, h.handles[d], h.boxes[d].category, mask), BP_OK);
				cr_assert_eq(bp_entity_set_filter(h.full, h.full_handles[d], h.boxes[d].category, mask), BP_OK);
				h.boxes[d].mask = mask;
			}
			break;
		default:
			if (h.n) {
				uint32_t d = test_rng_below(&h.rng, h.n);
				bool sphere = !h.boxes[d].is_sphere;
				bp_shape shape = sphere ? BP_SHAPE_SPHERE : BP_SHAPE_BOX;
				cr_assert_eq(bp_entity_set_shape(h.world, h.handles[d], shape), BP_OK);
				cr_assert_eq(bp_entity_set_shape(h.full, h.full_handles[d], shape), BP_OK);
				h.boxes[d].is_sphere = sphere;
			}
			break;
		}
	}
	cr_assert_eq(incremental_steps, steps - 1, "only %d of %d steps took the incremental path", incremental_steps,
		steps);
	bp_world_destroy(h.world);
	bp_world_destroy(h.full);
	free(h.boxes);
	free(h.handles);
	free(h.full_handles);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(incremental, history_3d_1_thread, .timeout = 120) { history_run(3, 1, 1500, 60, false, 1); }
Test(incremental, history_3d_filters_3_threads, .timeout = 120) { history_run(3, 3, 1500, 60, true, 2); }
Test(incremental, history_2d_filters_2_threads, .timeout = 120) { history_run(2, 2, 1500, 60, true, 3); }
Test(incremental, history_2d_8_threads, .timeout = 120) { history_run(2, 8, 800, 60, false, 4); }
