// SPDX-License-Identifier: MIT
// Incremental steps (docs/design.md "Incremental path"): long random histories of moves, teleports, creates,
// destroys and kind, filter and shape changes, one entity at a time and through the bulk
// calls, every step checked against the oracle and against a world that rebuilds in full,
// byte for byte, at several thread counts; refused calls; what marks an entity as changed;
// a static-heavy scene; periodic worlds; frames.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "incremental/incremental.h" // bpi_set_settle_min
#include "view/view.h" // the view's query hierarchy, checked entity by entity

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
	uint32_t last_active; ///< the incremental world's active_count at the last step
	int settled;          ///< incremental steps with fewer active entities than the one before
} history;

static void random_box(history *h, oracle_box *b, bool filters)
{
	float extent = test_rng_float(&h->rng, 0.0f, 2.0f);
	for (int k = 0; k < 3; ++k) {
		b->min[k] = k < h->dims ? test_rng_float(&h->rng, 0.0f, h->size) : 0.0f;
		b->max[k] = k < h->dims ? b->min[k] + extent * test_rng_float(&h->rng, 0.5f, 1.0f) : 0.0f;
	}
	b->category = filters && test_rng_below(&h->rng, 4) == 0 ? 2u : 1u;
	b->mask = filters && test_rng_below(&h->rng, 4) == 0 ? 1u : UINT64_MAX;
	b->is_static = filters && test_rng_below(&h->rng, 3) == 0;
	b->is_sphere = false;
}

/// The incremental world takes the incremental path on every step after the first
/// (BP_DEBUG_ALWAYS_INCREMENTAL): on worlds this small its cost model would often
/// rebuild in full instead, which is right for speed but tests nothing.
static bp_world *new_world(int dims, int threads, bool incremental, float margin)
{
	bp_world_def def = bp_world_def_default();
	def.dims = dims;
	def.thread_count = threads;
	def.incremental = incremental;
	def.margin = margin;
	def.debug_flags = incremental ? BP_DEBUG_ALWAYS_INCREMENTAL : 0;
	def.canonical_pairs = true;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	return w;
}

/// `margin`: the incremental world's (bp_world_def.margin; 0 = from the motion).
static history history_new(int dims, int threads, uint32_t capacity, uint64_t seed, float margin)
{
	history h = {.dims = dims, .capacity = capacity, .rng = {seed}, .size = 40.0f};
	h.boxes = calloc(h.capacity, sizeof *h.boxes);
	h.handles = calloc(h.capacity, sizeof *h.handles);
	h.full_handles = calloc(h.capacity, sizeof *h.full_handles);
	cr_assert(h.boxes && h.handles && h.full_handles);
	h.world = new_world(dims, threads, true, margin);
	h.full = new_world(dims, threads, false, 0.0f);
	return h;
}

static void history_free(history *h)
{
	bp_world_destroy(h->world);
	bp_world_destroy(h->full);
	free(h->boxes);
	free(h->handles);
	free(h->full_handles);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

static void create(history *h, const oracle_box *b)
{
	cr_assert_lt(h->n, h->capacity);
	bp_entity_def e = oracle_entity_def(b);
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
	bp_frame_stats stats = oracle_step_both(h->world, h->full, h->boxes, h->n, h->dims);
	// Between incremental steps the active set shrinks only when entities settle.
	h->settled += stats.active_count < h->last_active && stats.active_count < stats.entity_count;
	h->last_active = stats.active_count < stats.entity_count ? stats.active_count : UINT32_MAX;
	return stats;
}

/// Creates `count` random entities.
static void populate(history *h, uint32_t count, bool filters)
{
	for (uint32_t i = 0; i < count; ++i) {
		oracle_box b;
		random_box(h, &b, filters);
		create(h, &b);
	}
}

/// Returns the steps after which entities had settled (see check_step).
static int history_run(int dims, int threads, uint32_t start, int steps, bool filters, uint64_t seed, float margin)
{
	history h = history_new(dims, threads, start * 2 + 64, seed, margin);
	populate(&h, start, filters);
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
				uint64_t mask = h.boxes[d].mask == UINT64_MAX ? 1u : UINT64_MAX;
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
	history_free(&h);
	return h.settled;
}

Test(incremental, history_3d_1_thread, .timeout = 120) { history_run(3, 1, 1500, 60, false, 1, 0.0f); }
Test(incremental, history_3d_filters_3_threads, .timeout = 120) { history_run(3, 3, 1500, 60, true, 2, 0.0f); }
Test(incremental, history_2d_filters_2_threads, .timeout = 120) { history_run(2, 2, 1500, 60, true, 3, 0.0f); }
Test(incremental, history_2d_8_threads, .timeout = 120) { history_run(2, 8, 800, 60, false, 4, 0.0f); }

// ---- bulk calls: moves by dense index and by handle, bulk creates and destroys, spheres ----

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

static bool same_handle(bp_entity a, bp_entity b) { return a.index1 == b.index1 && a.generation == b.generation; }

/// FNV-1a over a pair list (lo then hi, each little end first).
static uint64_t pairs_hash(const bp_pair *pairs, size_t count)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < count; ++i) {
		const uint32_t words[2] = {pairs[i].lo, pairs[i].hi};
		for (int w = 0; w < 2; ++w)
			for (int byte = 0; byte < 4; ++byte) {
				h ^= (words[w] >> (8 * byte)) & 0xffu;
				h *= 0x100000001b3ull;
			}
	}
	return h;
}

/// Bounds of some shadow boxes as the arrays the bulk calls take; the z arrays are
/// NULL in 2D (the calls must not read them).
typedef struct soa_copy {
	float *v[6]; ///< min_x min_y min_z max_x max_y max_z
} soa_copy;

static bp_bounds_arrays soa_of(soa_copy *s, const oracle_box *boxes, uint32_t count, int dims)
{
	for (int a = 0; a < 6; ++a) {
		s->v[a] = NULL;
		if (dims == 2 && a % 3 == 2)
			continue;
		s->v[a] = malloc(((size_t)count + 1) * sizeof(float));
		cr_assert_not_null(s->v[a]);
		for (uint32_t i = 0; i < count; ++i)
			s->v[a][i] = a < 3 ? boxes[i].min[a] : boxes[i].max[a - 3];
	}
	return (bp_bounds_arrays){s->v[0], s->v[1], s->v[2], s->v[3], s->v[4], s->v[5]};
}

static void soa_free(soa_copy *s)
{
	for (int a = 0; a < 6; ++a)
		free(s->v[a]);
}

/// A sphere as the library stores it (world.h): bounds centre -+ radius, each
/// rounded to float; the other settings from `like`.
static oracle_box sphere_box(const oracle_box *like, const float *centre, float radius, int dims)
{
	oracle_box b = *like;
	for (int k = 0; k < 3; ++k) {
		b.min[k] = k < dims ? centre[k] - radius : 0.0f;
		b.max[k] = k < dims ? centre[k] + radius : 0.0f;
	}
	b.is_sphere = true;
	return b;
}

/// Both worlds hold the shadow's entities in the shadow's dense order.
static void assert_same_dense_order(const history *h)
{
	cr_assert_eq(bp_world_entity_count(h->world), h->n);
	cr_assert_eq(bp_world_entity_count(h->full), h->n);
	for (uint32_t d = 0; d < h->n; ++d) {
		cr_assert(same_handle(bp_world_entity_at(h->world, d), h->handles[d]), "dense %u: not the shadow's entity", d);
		cr_assert(same_handle(bp_world_entity_at(h->full, d), h->full_handles[d]));
	}
}

/// Gives dense entities dense[i] the bounds of boxes[i], in list order (an index
/// listed twice ends with its last bounds): with one bulk call in the incremental
/// world, by dense index or by handle, and one call per element in the full one.
static void bulk_set_bounds(history *h, uint32_t count, const uint32_t *dense, const oracle_box *boxes, bool by_handle)
{
	soa_copy s;
	bp_bounds_arrays arrays = soa_of(&s, boxes, count, h->dims);
	if (by_handle) {
		bp_entity *handles = malloc(((size_t)count + 1) * sizeof *handles);
		cr_assert_not_null(handles);
		for (uint32_t i = 0; i < count; ++i)
			handles[i] = h->handles[dense[i]];
		cr_assert_eq(bp_entities_set_bounds(h->world, bp_target_handles(count, handles), &arrays), BP_OK, "%s",
			bp_world_last_error(h->world));
		free(handles);
	} else {
		cr_assert_eq(bp_entities_set_bounds(h->world, bp_target_indices(count, dense), &arrays), BP_OK, "%s",
			bp_world_last_error(h->world));
	}
	soa_free(&s);
	for (uint32_t i = 0; i < count; ++i) {
		cr_assert_eq(bp_entity_set_bounds(h->full, h->full_handles[dense[i]], boxes[i].min, boxes[i].max), BP_OK);
		memcpy(h->boxes[dense[i]].min, boxes[i].min, sizeof boxes[i].min);
		memcpy(h->boxes[dense[i]].max, boxes[i].max, sizeof boxes[i].max);
	}
}

/// Creates `count` entities with the bounds of boxes[i] and the filter, kind and
/// shape of boxes[0] (forced onto every box: bp_world_create_entities takes one
/// def): one bulk call in the incremental world, one create per box in the full one.
static void bulk_create(history *h, uint32_t count, oracle_box *boxes)
{
	cr_assert_leq(h->n + count, h->capacity);
	for (uint32_t i = 1; i < count; ++i) {
		boxes[i].category = boxes[0].category;
		boxes[i].mask = boxes[0].mask;
		boxes[i].is_static = boxes[0].is_static;
		boxes[i].is_sphere = boxes[0].is_sphere;
	}
	bp_entity_def common = oracle_entity_def(&boxes[0]);
	common.min[0] = 1.0f; // inverted: the common def's bounds are ignored
	common.max[0] = -1.0f;
	soa_copy s;
	bp_bounds_arrays arrays = soa_of(&s, boxes, count, h->dims);
	cr_assert_eq(bp_world_create_entities(h->world, count, &arrays, &common, h->handles + h->n), BP_OK, "%s",
		bp_world_last_error(h->world));
	soa_free(&s);
	for (uint32_t i = 0; i < count; ++i) {
		bp_entity_def e = oracle_entity_def(&boxes[i]);
		cr_assert_eq(bp_entity_create(h->full, &e, &h->full_handles[h->n]), BP_OK);
		h->boxes[h->n++] = boxes[i];
	}
}

/// Destroys the entities at the listed dense indices (distinct, taken before any
/// destroy): one bp_world_destroy_entities in the incremental world, one destroy
/// per entity in the same order in the full one. The shadow replays the library's
/// order: each destroy moves the last dense entity into the hole, in list order.
static void bulk_destroy(history *h, uint32_t count, const uint32_t *dense)
{
	bp_entity *gone = malloc(((size_t)count + 1) * sizeof *gone);
	bp_entity *full_gone = malloc(((size_t)count + 1) * sizeof *full_gone);
	cr_assert(gone && full_gone);
	for (uint32_t i = 0; i < count; ++i) {
		gone[i] = h->handles[dense[i]];
		full_gone[i] = h->full_handles[dense[i]];
	}
	cr_assert_eq(bp_world_destroy_entities(h->world, count, gone), BP_OK, "%s", bp_world_last_error(h->world));
	for (uint32_t i = 0; i < count; ++i) {
		uint32_t d = 0;
		while (d < h->n && !same_handle(h->handles[d], gone[i]))
			++d;
		cr_assert_lt(d, h->n);
		cr_assert(same_handle(h->full_handles[d], full_gone[i]));
		cr_assert_eq(bp_entity_destroy(h->full, full_gone[i]), BP_OK);
		uint32_t last = --h->n;
		h->boxes[d] = h->boxes[last];
		h->handles[d] = h->handles[last];
		h->full_handles[d] = h->full_handles[last];
	}
	for (uint32_t i = 0; i < count; ++i) {
		uint32_t d;
		cr_assert_eq(bp_entity_dense_index(h->world, gone[i], &d), BP_ERR_STALE_HANDLE);
	}
	free(gone);
	free(full_gone);
}

/// Makes dense entity d a sphere with bp_entity_set_sphere in both worlds.
static void set_sphere(history *h, uint32_t d, const float *centre, float radius)
{
	cr_assert_eq(bp_entity_set_sphere(h->world, h->handles[d], centre, radius), BP_OK);
	cr_assert_eq(bp_entity_set_sphere(h->full, h->full_handles[d], centre, radius), BP_OK);
	h->boxes[d] = sphere_box(&h->boxes[d], centre, radius, h->dims);
}

/// Makes dense entities [first, first + count) spheres: bp_entities_set_spheres in the
/// incremental world, bp_entity_set_sphere one by one in the full one.
static void set_spheres(history *h, uint32_t first, uint32_t count, float *const centre[3], const float *radius)
{
	bp_sphere_arrays spheres = {centre[0], centre[1], h->dims == 3 ? centre[2] : NULL, radius};
	cr_assert_eq(bp_entities_set_spheres(h->world, bp_target_range(first, count), &spheres), BP_OK, "%s",
		bp_world_last_error(h->world));
	for (uint32_t i = 0; i < count; ++i) {
		float c[3] = {centre[0][i], centre[1][i], h->dims == 3 ? centre[2][i] : 0.0f};
		cr_assert_eq(bp_entity_set_sphere(h->full, h->full_handles[first + i], c, radius[i]), BP_OK);
		h->boxes[first + i] = sphere_box(&h->boxes[first + i], c, radius[i], h->dims);
	}
}

/// A box moved a little, or (teleport) put anywhere with a new extent.
static oracle_box moved_box(history *h, uint32_t d, bool teleport)
{
	oracle_box b = h->boxes[d];
	if (teleport) {
		oracle_box fresh;
		random_box(h, &fresh, false);
		memcpy(b.min, fresh.min, sizeof b.min);
		memcpy(b.max, fresh.max, sizeof b.max);
		return b;
	}
	float delta = test_rng_float(&h->rng, -0.3f, 0.3f);
	for (int k = 0; k < h->dims; ++k) {
		b.min[k] += delta;
		b.max[k] += delta;
	}
	return b;
}

/// Distinct dense indices, `count` of them (count <= h->n), the last one now and then.
static void pick_distinct(history *h, uint32_t count, uint32_t *out)
{
	for (uint32_t i = 0; i < count; ++i) {
		bool again;
		do {
			out[i] = i == 0 && test_rng_below(&h->rng, 2) ? h->n - 1 : test_rng_below(&h->rng, h->n);
			again = false;
			for (uint32_t j = 0; j < i; ++j)
				again |= out[j] == out[i];
		} while (again);
	}
}

enum { BULK_MAX = 64 };

/// Scratch for the changes of a bulk history.
typedef struct bulk_scratch {
	oracle_box *boxes;
	uint32_t *dense;
	float *centre[3], *radius;
} bulk_scratch;

/// A history of `start` entities created in bulk, in batches that share a filter, kind
/// and shape (a quarter of the batches spheres).
static history bulk_history_new(int dims, int threads, uint32_t start, uint64_t seed, float margin,
	bulk_scratch *s)
{
	history h = history_new(dims, threads, start * 2 + 4 * BULK_MAX, seed, margin);
	s->boxes = calloc(h.capacity, sizeof *s->boxes);
	s->dense = calloc(h.capacity, sizeof *s->dense);
	s->radius = calloc(BULK_MAX, sizeof *s->radius);
	for (int k = 0; k < 3; ++k)
		s->centre[k] = calloc(BULK_MAX, sizeof *s->centre[k]);
	cr_assert(s->boxes && s->dense && s->radius && s->centre[0] && s->centre[1] && s->centre[2]);
	while (h.n < start) {
		uint32_t count = min_u32(start - h.n, 1 + test_rng_below(&h.rng, BULK_MAX));
		for (uint32_t i = 0; i < count; ++i)
			random_box(&h, &s->boxes[i], true);
		s->boxes[0].is_sphere = test_rng_below(&h.rng, 4) == 0;
		bulk_create(&h, count, s->boxes);
	}
	return h;
}

static void bulk_history_free(history *h, bulk_scratch *s)
{
	free(s->boxes);
	free(s->dense);
	free(s->radius);
	for (int k = 0; k < 3; ++k)
		free(s->centre[k]);
	history_free(h);
}

/// The changes between two steps of a bulk history: moves by dense index or by handle
/// (an index listed twice now and then; at step % 8 == 7, most entities), then one of:
/// a bulk create (box or sphere, with filters), a bulk destroy, a sphere set by
/// bp_entity_set_sphere, spheres set by range, a sphere made a box again.
static void bulk_changes(history *h, int step, bulk_scratch *s)
{
	oracle_box *boxes = s->boxes;
	uint32_t *dense = s->dense;
	bool crowd = step % 8 == 7;
	uint32_t movers = crowd ? h->n * 3 / 4 : 1 + test_rng_below(&h->rng, 12);
	for (uint32_t m = 0; m < movers && h->n; ++m) {
		dense[m] = crowd ? (m * 7919u) % h->n : test_rng_below(&h->rng, h->n);
		boxes[m] = moved_box(h, dense[m], test_rng_below(&h->rng, 8) == 0);
	}
	if (h->n && movers >= 2 && !crowd && test_rng_below(&h->rng, 2)) {
		dense[movers - 1] = dense[0]; // listed twice: the last bounds win
		boxes[movers - 1] = moved_box(h, dense[0], true);
	}
	if (h->n)
		bulk_set_bounds(h, movers, dense, boxes, test_rng_below(&h->rng, 2));
	switch (test_rng_below(&h->rng, 6)) {
	case 0:
	case 1:
		if (h->n + BULK_MAX <= h->capacity) {
			uint32_t count = 1 + test_rng_below(&h->rng, 20);
			for (uint32_t i = 0; i < count; ++i)
				random_box(h, &boxes[i], true);
			boxes[0].is_sphere = test_rng_below(&h->rng, 3) == 0;
			bulk_create(h, count, boxes);
		}
		break;
	case 2:
		if (h->n > 8) {
			uint32_t count = 2 + test_rng_below(&h->rng, 6);
			pick_distinct(h, count, dense);
			bulk_destroy(h, count, dense);
		}
		break;
	case 3:
		if (h->n) {
			uint32_t d = test_rng_below(&h->rng, h->n);
			float c[3];
			for (int k = 0; k < 3; ++k)
				c[k] = test_rng_float(&h->rng, 0.0f, h->size);
			set_sphere(h, d, c, test_rng_float(&h->rng, 0.0f, 1.5f));
		}
		break;
	case 4:
		if (h->n) {
			uint32_t first = test_rng_below(&h->rng, h->n);
			uint32_t count = min_u32(h->n - first, 1 + test_rng_below(&h->rng, 8));
			for (uint32_t i = 0; i < count; ++i) {
				// Around the old centre: moved a little, and grown or shrunk.
				const oracle_box *b = &h->boxes[first + i];
				for (int k = 0; k < 3; ++k)
					s->centre[k][i] = (b->min[k] + b->max[k]) * 0.5f + test_rng_float(&h->rng, -0.2f, 0.2f);
				s->radius[i] = test_rng_float(&h->rng, 0.0f, 1.2f);
			}
			set_spheres(h, first, count, s->centre, s->radius);
		}
		break;
	default:
		if (h->n) { // back to a box: the bounds stay, their reading changes
			uint32_t d = test_rng_below(&h->rng, h->n);
			cr_assert_eq(bp_entity_set_shape(h->world, h->handles[d], BP_SHAPE_BOX), BP_OK);
			cr_assert_eq(bp_entity_set_shape(h->full, h->full_handles[d], BP_SHAPE_BOX), BP_OK);
			h->boxes[d].is_sphere = false;
		}
		break;
	}
}

/// A bulk history: every step checked against the oracle and the full world, and the
/// dense order against the shadow. hashes[step] receives the hash of each step's pair
/// list when hashes is not NULL. Both paths must have run.
static int bulk_history_run(int dims, int threads, uint32_t start, int steps, uint64_t seed, float margin,
	uint64_t *hashes)
{
	bulk_scratch s;
	history h = bulk_history_new(dims, threads, start, seed, margin, &s);
	int incremental_steps = 0, full_steps = 0;
	for (int step = 0; step < steps; ++step) {
		bp_frame_stats stats = check_step(&h);
		assert_same_dense_order(&h);
		if (hashes) {
			size_t count;
			const bp_pair *pairs = bp_world_pairs(h.world, &count);
			hashes[step] = pairs_hash(pairs, count);
		}
		if (step > 0) {
			incremental_steps += stats.active_count < stats.entity_count;
			full_steps += stats.active_count == stats.entity_count;
		}
		bulk_changes(&h, step, &s);
		// The step after a crowd of changes rebuilds in full, the others take the
		// incremental path: both paths, in one history, each checked against the other world.
		bool crowd = step % 8 == 7;
		cr_assert_eq(bp_world_set_debug_flags(h.world, crowd ? BP_DEBUG_ALWAYS_FULL : BP_DEBUG_ALWAYS_INCREMENTAL),
			BP_OK);
	}
	int crowds = (steps - 1) / 8; // steps 8, 16, ... follow a crowd
	cr_assert_eq(full_steps, crowds, "%d full steps after the first, want %d", full_steps, crowds);
	cr_assert_eq(incremental_steps, steps - 1 - crowds, "%d incremental steps", incremental_steps);
	bulk_history_free(&h, &s);
	return h.settled;
}

Test(incremental, bulk_history_3d_2_threads, .timeout = 120) { bulk_history_run(3, 2, 1200, 48, 11, 0.0f, NULL); }
Test(incremental, bulk_history_2d_1_thread, .timeout = 120) { bulk_history_run(2, 1, 1200, 48, 12, 0.0f, NULL); }
// Margins set by hand: one far below the motion (nearly every changed entity searches
// every step), one far above it (nearly none searches again, candidates are many).
// ---- settling: quiet active entities join a second resting level ------------------------

/// Entities settle as soon as one is quiet (and no fewer than change): the histories
/// then settle often, through creates, destroys (which move settled entities to other
/// dense indices) and changes of settled entities.
static void settle_early(void) { bpi_set_settle_min(1); }
static void settle_default(void) { bpi_set_settle_min(1024); }

Test(incremental, history_3d_settling_2_threads, .init = settle_early, .fini = settle_default, .timeout = 120)
{
	cr_assert_gt(history_run(3, 2, 1500, 60, true, 7, 0.0f), 0, "nothing settled");
}
Test(incremental, history_2d_settling_8_threads, .init = settle_early, .fini = settle_default, .timeout = 120)
{
	cr_assert_gt(history_run(2, 8, 800, 60, true, 8, 0.0f), 0, "nothing settled");
}
Test(incremental, bulk_history_3d_settling, .init = settle_early, .fini = settle_default, .timeout = 120)
{
	cr_assert_gt(bulk_history_run(3, 2, 1200, 48, 15, 0.0f, NULL), 0, "nothing settled");
}

// ---- churn: many entities destroyed and created in one step ------------------------------

/// Each step destroys `per_step` random entities and creates as many at random, one of
/// each in turn (each destroy moves the last entity, often one just created, into the
/// hole), and moves a few. Resting entities leave by the hundred while the active ones
/// keep candidate lists that name them, and their indices are reused at once.
static void churn_history_run(int dims, int threads, uint32_t start, int steps, uint32_t per_step, bool filters,
	uint64_t seed)
{
	history h = history_new(dims, threads, start + per_step + 64, seed, 0.0f);
	h.size = dims == 3 ? 16.0f : 48.0f; // dense enough that most boxes pair
	populate(&h, start, filters);
	int incremental_steps = 0;
	for (int step = 0; step < steps; ++step) {
		bp_frame_stats stats = check_step(&h);
		incremental_steps += stats.active_count < stats.entity_count;
		for (uint32_t k = 0; k < per_step; ++k) {
			destroy(&h, test_rng_below(&h.rng, h.n));
			oracle_box b;
			random_box(&h, &b, filters);
			create(&h, &b);
		}
		for (uint32_t m = 0; m < 3 && step % 2; ++m) { // every other step, a few movers
			uint32_t d = test_rng_below(&h.rng, h.n);
			oracle_box b = h.boxes[d];
			for (int k = 0; k < dims; ++k) {
				b.min[k] += 0.1f;
				b.max[k] += 0.1f;
			}
			set_bounds(&h, d, &b);
		}
	}
	cr_assert_eq(incremental_steps, steps - 1, "only %d of %d steps took the incremental path", incremental_steps,
		steps);
	history_free(&h);
}

Test(incremental, churn_3d_1_thread, .timeout = 120) { churn_history_run(3, 1, 2000, 30, 100, false, 21); }
Test(incremental, churn_3d_2_threads, .timeout = 120) { churn_history_run(3, 2, 2000, 30, 100, false, 22); }
Test(incremental, churn_3d_filters_4_threads, .timeout = 120) { churn_history_run(3, 4, 2000, 30, 60, true, 23); }
Test(incremental, churn_2d_3_threads, .timeout = 120) { churn_history_run(2, 3, 1500, 30, 150, false, 24); }
Test(incremental, churn_3d_settling_2_threads, .init = settle_early, .fini = settle_default, .timeout = 120)
{
	churn_history_run(3, 2, 2000, 30, 40, true, 25);
}

Test(incremental, history_3d_tiny_margin, .timeout = 120) { history_run(3, 2, 1500, 40, true, 5, 1e-4f); }
Test(incremental, history_2d_wide_margin, .timeout = 120) { history_run(2, 3, 1500, 40, true, 6, 4.0f); }
Test(incremental, bulk_history_3d_wide_margin, .timeout = 120) { bulk_history_run(3, 4, 1200, 40, 13, 3.0f, NULL); }

// ---- a single incremental world against the oracle, for the tests of one change ----

/// An incremental world and its shadow: boxes in dense order, a sixth of them
/// spheres (bounds centre -+ radius, so bp_entity_set_sphere can set them again).
typedef struct probe {
	int dims;
	uint32_t n;
	oracle_box *boxes;
	bp_entity *handles;
	bp_world *w;
	bp_pair *last;   ///< the pairs of the last step, copied
	size_t last_count;
} probe;

enum { PROBE_N = 2000, PROBE_SPHERES = PROBE_N / 6, PROBE_ZERO = PROBE_SPHERES };

/// Centre and radius of probe sphere i (they are dense entities 0 .. PROBE_SPHERES).
static void probe_sphere(uint32_t i, float centre[3], float *radius)
{
	test_rng rng = {1000 + i};
	for (int k = 0; k < 3; ++k)
		centre[k] = test_rng_float(&rng, 0.0f, 40.0f);
	*radius = test_rng_float(&rng, 0.0f, 1.0f);
}

/// Steps the world; its pairs must be the oracle's in (lo, hi) order. Returns the
/// step's active_count.
static uint32_t probe_step(probe *p, const char *what)
{
	cr_assert_eq(bp_world_step(p->w), BP_OK, "%s: %s", what, bp_world_last_error(p->w));
	size_t count;
	const bp_pair *got = bp_world_pairs(p->w, &count);
	oracle_pairs want = oracle_find_pairs(p->boxes, p->n, p->dims);
	bool same = count == want.count && (count == 0 || memcmp(got, want.data, count * sizeof *got) == 0);
	if (!same)
		oracle_same_pair_set(got, count, &want); // prints the first difference
	cr_assert(same, "%s: %zu pairs, oracle %zu (or other pairs, or another order)", what, count, want.count);
	oracle_pairs_free(&want);
	free(p->last);
	p->last = malloc((count + 1) * sizeof *p->last);
	cr_assert_not_null(p->last);
	if (count)
		memcpy(p->last, got, count * sizeof *got);
	p->last_count = count;
	bp_frame_stats stats = bp_world_stats(p->w);
	cr_assert_eq(stats.entity_count, p->n, "%s", what);
	cr_assert_leq(stats.active_count, p->n, "%s", what);
	return stats.active_count;
}

/// A fresh world of PROBE_N entities, stepped once (the full path: every entity active).
static probe probe_new(uint64_t seed)
{
	probe p = {.dims = 3, .n = PROBE_N};
	p.boxes = calloc(PROBE_N + 1, sizeof *p.boxes);
	p.handles = calloc(PROBE_N + 1, sizeof *p.handles);
	cr_assert(p.boxes && p.handles);
	test_random_boxes(p.boxes, PROBE_N, 3, 40.0f, 2.0f, true, seed);
	for (uint32_t i = 0; i < PROBE_SPHERES; ++i) {
		float c[3], r;
		probe_sphere(i, c, &r);
		p.boxes[i] = sphere_box(&p.boxes[i], c, r, 3);
	}
	p.boxes[PROBE_ZERO].min[0] = 0.0f; // +0.0, for the test of -0.0
	p.boxes[PROBE_ZERO].is_sphere = false;
	bp_world_def def = bp_world_def_default();
	def.incremental = true;
	def.thread_count = 2;
	def.debug_flags = BP_DEBUG_ALWAYS_INCREMENTAL; // the counts below follow the incremental path
	cr_assert_eq(bp_world_create(&def, &p.w), BP_OK);
	for (uint32_t i = 0; i < PROBE_N; ++i) {
		bp_entity_def e = oracle_entity_def(&p.boxes[i]);
		cr_assert_eq(bp_entity_create(p.w, &e, &p.handles[i]), BP_OK);
	}
	cr_assert_eq(probe_step(&p, "first step"), PROBE_N, "the first step takes the full path");
	return p;
}

static void probe_free(probe *p)
{
	bp_world_destroy(p->w);
	free(p->boxes);
	free(p->handles);
	free(p->last);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

/// The world holds the shadow's entities, in order, with the shadow's bounds (bit for
/// bit), filter, kind and shape.
static void probe_assert_unchanged(const probe *p, const char *what)
{
	cr_assert_eq(bp_world_entity_count(p->w), p->n, "%s", what);
	for (uint32_t d = 0; d < p->n; ++d) {
		const oracle_box *b = &p->boxes[d];
		cr_assert(same_handle(bp_world_entity_at(p->w, d), p->handles[d]), "%s: dense %u", what, d);
		bp_entity_def e;
		cr_assert_eq(bp_entity_get(p->w, p->handles[d], &e), BP_OK, "%s", what);
		cr_assert(memcmp(e.min, b->min, 3 * sizeof(float)) == 0 && memcmp(e.max, b->max, 3 * sizeof(float)) == 0,
			"%s: dense %u: other bounds", what, d);
		cr_assert(e.category == b->category && e.mask == b->mask &&
				  e.kind == (b->is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC) &&
				  e.shape == (b->is_sphere ? BP_SHAPE_SPHERE : BP_SHAPE_BOX),
			"%s: dense %u: another filter, kind or shape", what, d);
	}
}

// ---- settling beside entities that keep moving -------------------------------------------

/// Dense entities 0 .. MOVERS move every step, as large boxes that overlap others; the
/// next QUIET move once, then stay. Once the quiet ones settle, only the movers change:
/// no entity stops resting, so the kept pairs merge with the step's unpruned, and must
/// hold none of a mover's.
enum { MOVERS = 30, QUIET = 90 };

static void move_movers(probe *p, uint32_t step, bool quiet_too)
{
	for (uint32_t d = 0; d < MOVERS + (quiet_too ? QUIET : 0); ++d) {
		oracle_box *b = &p->boxes[d];
		float shift = d < MOVERS ? 0.35f * (float)((step + d) % 5) - 0.8f : 0.5f; // never 0
		for (int axis = 0; axis < 3; ++axis) {
			float centre = 0.5f * (b->min[axis] + b->max[axis]) + (axis == 0 ? shift : 0.0f);
			float half = d < MOVERS ? 3.0f : 0.5f * (b->max[axis] - b->min[axis]);
			b->min[axis] = centre - half;
			b->max[axis] = centre + half;
		}
		b->is_sphere = false;
		cr_assert_eq(bp_entity_set_shape(p->w, p->handles[d], BP_SHAPE_BOX), BP_OK);
		cr_assert_eq(bp_entity_set_bounds(p->w, p->handles[d], b->min, b->max), BP_OK);
	}
}

Test(incremental, movers_keep_moving_after_others_settle, .init = settle_early, .fini = settle_default, .timeout = 60)
{
	probe p = probe_new(41);
	uint32_t only_movers = 0;
	for (uint32_t step = 0; step < 12; ++step) {
		move_movers(&p, step, step == 0);
		char what[64];
		snprintf(what, sizeof what, "step %u", step);
		only_movers += probe_step(&p, what) == MOVERS;
	}
	cr_assert_geq(only_movers, 5, "the quiet entities settled and the movers stayed active");
	probe_free(&p);
}

// ---- many kept pairs: the merge in chunks on threads ------------------------------------

/// The boxes of dense indices [first, first + count) moved by `shift` on x, in both worlds
/// and the shadow.
static void shift_boxes(bp_world *worlds[2], oracle_box *boxes, uint32_t first, uint32_t count, float shift)
{
	for (uint32_t d = first; d < first + count; ++d) {
		boxes[d].min[0] += shift;
		boxes[d].max[0] += shift;
		for (int w = 0; w < 2; ++w)
			cr_assert_eq(bp_entity_set_bounds(worlds[w], bp_world_entity_at(worlds[w], d), boxes[d].min,
					     boxes[d].max),
				BP_OK);
	}
}

/// 1,500 boxes crowded into a small cube hold hundreds of thousands of kept pairs, many
/// chunks of the merge, which runs on 3 threads. Entities that move stop resting and leave
/// their kept pairs stale: each merge leaves them out, and they are dropped for good past
/// an eighth of the list or at a step where none left: even steps move the entities of
/// the step before again, so no entity stops resting then.
Test(incremental, many_kept_pairs_merge_in_chunks_on_threads, .timeout = 120)
{
	enum { N = 1500 };
	oracle_box *boxes = calloc(N, sizeof *boxes);
	cr_assert_not_null(boxes);
	test_random_boxes(boxes, N, 3, 12.0f, 8.0f, false, 31);
	bp_world *worlds[2] = {new_world(3, 3, true, 0.0f), new_world(3, 3, false, 0.0f)};
	for (int w = 0; w < 2; ++w)
		for (uint32_t i = 0; i < N; ++i) {
			bp_entity_def e = oracle_entity_def(&boxes[i]);
			bp_entity handle;
			cr_assert_eq(bp_entity_create(worlds[w], &e, &handle), BP_OK);
		}
	size_t first_count = 0;
	for (uint32_t step = 0; step < 12; ++step) {
		if (step > 0) {
			uint32_t first = 40 * ((step + 1) / 2); // even steps move the last step's again
			shift_boxes(worlds, boxes, first, 40, step % 2 ? 0.25f : -0.5f);
		}
		bp_frame_stats stats = oracle_step_both(worlds[0], worlds[1], boxes, N, 3);
		if (step == 0)
			first_count = stats.pair_count;
		else
			cr_assert_eq(stats.path, BP_PATH_RESTING, "step %u", step);
	}
	cr_assert_gt(first_count, 2 * 65536, "kept pairs: %zu (three chunks of the merge at least)", first_count);
	for (int w = 0; w < 2; ++w)
		bp_world_destroy(worlds[w]);
	free(boxes);
}

// ---- errors change nothing ---------------------------------------------------------

/// After a call that failed: the status, a message, nothing changed, and the next
/// step searches nothing again and reports the same pairs.
static void expect_refused(probe *p, bp_status got, bp_status want, const char *what)
{
	cr_assert_eq(got, want, "%s: %s, want %s", what, bp_status_string(got), bp_status_string(want));
	cr_assert_str_not_empty(bp_world_last_error(p->w), "%s", what);
	probe_assert_unchanged(p, what);
	size_t before_count = p->last_count;
	bp_pair *before = p->last;
	p->last = NULL;
	cr_assert_eq(probe_step(p, what), 0, "%s: a refused call marked entities as changed", what);
	cr_assert(p->last_count == before_count &&
			  (before_count == 0 || memcmp(p->last, before, before_count * sizeof *before) == 0),
		"%s: the pairs changed", what);
	free(before);
}

Test(incremental, refused_bulk_calls_change_nothing, .timeout = 60)
{
	probe p = probe_new(21);
	// A handle of a destroyed entity: the last one, so nothing moves and nothing is marked.
	bp_entity destroyed = p.handles[p.n - 1];
	cr_assert_eq(bp_world_destroy_entities(p.w, 1, &destroyed), BP_OK);
	--p.n;
	cr_assert_eq(probe_step(&p, "last destroyed"), 0);

	// Bounds for the first three entities, all different from theirs.
	oracle_box boxes[3];
	for (int i = 0; i < 3; ++i) {
		boxes[i] = p.boxes[i];
		for (int k = 0; k < 3; ++k) {
			boxes[i].min[k] += 5.0f;
			boxes[i].max[k] += 5.0f;
		}
	}
	soa_copy s;
	bp_bounds_arrays arrays = soa_of(&s, boxes, 3, 3);
	uint32_t dense[3] = {0, 1, 2};
	bp_entity handles[3] = {p.handles[0], p.handles[1], p.handles[2]};

	uint32_t out_of_range[3] = {0, 1, p.n};
	expect_refused(&p, bp_entities_set_bounds(p.w, bp_target_indices(3, out_of_range), &arrays), BP_ERR_OUT_OF_RANGE,
		"indexed, last index = entity count");
	uint32_t far[3] = {UINT32_MAX, 1, 2};
	expect_refused(&p, bp_entities_set_bounds(p.w, bp_target_indices(3, far), &arrays), BP_ERR_OUT_OF_RANGE,
		"indexed, first index UINT32_MAX");
	expect_refused(&p, bp_entities_set_bounds(p.w, bp_target_indices(3, NULL), &arrays), BP_ERR_INVALID_ARGUMENT,
		"indexed, NULL index array");
	expect_refused(&p, bp_entities_set_bounds(p.w, bp_target_indices(3, dense), NULL), BP_ERR_INVALID_ARGUMENT,
		"indexed, NULL bounds");
	bp_bounds_arrays no_max_y = arrays;
	no_max_y.max_y = NULL;
	expect_refused(&p, bp_entities_set_bounds(p.w, bp_target_indices(3, dense), &no_max_y), BP_ERR_INVALID_ARGUMENT,
		"indexed, NULL max_y array");
	s.v[4][2] = NAN; // max_y of the last element
	expect_refused(&p, bp_entities_set_bounds(p.w, bp_target_indices(3, dense), &arrays), BP_ERR_NOT_FINITE,
		"indexed, NaN in the last element");
	expect_refused(&p, bp_entities_set_bounds(p.w, bp_target_handles(3, handles), &arrays), BP_ERR_NOT_FINITE,
		"by handle, NaN in the last element");
	s.v[4][2] = boxes[2].max[1];
	s.v[0][1] = s.v[3][1] + 1.0f; // min_x > max_x in the middle one
	expect_refused(&p, bp_entities_set_bounds(p.w, bp_target_indices(3, dense), &arrays), BP_ERR_INVERTED_BOUNDS,
		"indexed, inverted bounds in the middle");
	s.v[0][1] = boxes[1].min[0];

	bp_entity other_generation[3] = {p.handles[0], {p.handles[1].index1, p.handles[1].generation + 1}, p.handles[2]};
	expect_refused(&p, bp_entities_set_bounds(p.w, bp_target_handles(3, other_generation), &arrays), BP_ERR_STALE_HANDLE,
		"by handle, a wrong generation in the middle");
	bp_entity with_destroyed[3] = {p.handles[0], p.handles[1], destroyed};
	expect_refused(&p, bp_entities_set_bounds(p.w, bp_target_handles(3, with_destroyed), &arrays), BP_ERR_STALE_HANDLE,
		"by handle, a destroyed entity last");
	bp_entity with_null[3] = {p.handles[0], p.handles[1], {0, 0}};
	expect_refused(&p, bp_entities_set_bounds(p.w, bp_target_handles(3, with_null), &arrays), BP_ERR_STALE_HANDLE,
		"by handle, the null handle last");
	expect_refused(&p, bp_entities_set_bounds(p.w, bp_target_handles(3, NULL), &arrays), BP_ERR_INVALID_ARGUMENT,
		"by handle, NULL handle array");
	expect_refused(&p, bp_entities_set_bounds(p.w, bp_target_handles(3, handles), NULL), BP_ERR_INVALID_ARGUMENT,
		"by handle, NULL bounds");

	bp_entity destroy_with_stale[3] = {p.handles[4], p.handles[p.n - 1], destroyed};
	expect_refused(&p, bp_world_destroy_entities(p.w, 3, destroy_with_stale), BP_ERR_STALE_HANDLE,
		"destroy, a destroyed entity after two live ones");
	// Listed twice: the header names no status, only that nothing is destroyed.
	bp_entity twice[4] = {p.handles[3], p.handles[p.n - 1], p.handles[7], p.handles[3]};
	bp_status status = bp_world_destroy_entities(p.w, 4, twice);
	cr_assert_neq(status, BP_OK, "a handle listed twice was accepted");
	expect_refused(&p, status, status, "destroy, a handle listed twice");
	bp_entity last_twice[2] = {p.handles[p.n - 1], p.handles[p.n - 1]};
	status = bp_world_destroy_entities(p.w, 2, last_twice);
	cr_assert_neq(status, BP_OK, "the last entity listed twice was accepted");
	expect_refused(&p, status, status, "destroy, the last entity listed twice");
	expect_refused(&p, bp_world_destroy_entities(p.w, 2, NULL), BP_ERR_INVALID_ARGUMENT, "destroy, NULL handles");
	soa_free(&s);
	probe_free(&p);
}

// ---- what "changed" means (world.h, "Incremental steps") ------------------------------
//
// Observed through active_count: on a fresh world the first step is full, so after
// one change the next step searches exactly the entities that change marked.

/// Shadow of bp_entity_destroy: the last dense entity moves into the hole.
static void probe_remove(probe *p, uint32_t d)
{
	uint32_t last = --p->n;
	p->boxes[d] = p->boxes[last];
	p->handles[d] = p->handles[last];
}

typedef enum change {
	SAME_BOUNDS_EACH,
	SAME_BOUNDS_RANGE,
	SAME_BOUNDS_INDEXED,
	SAME_BOUNDS_BY_HANDLE,
	SAME_SPHERES,
	USER_KEYS,
	SAME_FILTERS,
	SAME_KINDS,
	SAME_SHAPES,
	NEGATIVE_ZERO,
	OTHER_FILTER,
	OTHER_KIND,
	OTHER_SHAPE,
	CREATE_ONE,
	CREATE_THEN_DESTROY,
	DESTROY_MIDDLE,
	DESTROY_LAST,
	DESTROY_LAST_TWO,
	DESTROY_FIRST_THREE,
	DESTROY_MOVED_ONE,
	MOVE_1,
	MOVE_7,
	MOVE_20,
} change;

/// Moves k distinct entities by +0.5 on every axis, a third each by bp_entity_set_bounds,
/// by dense index (the first one listed twice, first with other bounds) and by handle.
static void probe_move(probe *p, uint32_t k)
{
	oracle_box boxes[24];
	uint32_t dense[24];
	bp_entity handles[24];
	cr_assert_leq(k, 20);
	for (uint32_t i = 0; i < k; ++i) {
		dense[i] = (i * 97 + 11) % p->n;
		boxes[i] = p->boxes[dense[i]];
		for (int axis = 0; axis < 3; ++axis) {
			boxes[i].min[axis] += 0.5f;
			boxes[i].max[axis] += 0.5f;
		}
		handles[i] = p->handles[dense[i]];
	}
	uint32_t single = k / 3, indexed = (k - single) / 2;
	for (uint32_t i = 0; i < single; ++i)
		cr_assert_eq(bp_entity_set_bounds(p->w, handles[i], boxes[i].min, boxes[i].max), BP_OK);
	// By index: dense[single] twice, first with bounds from elsewhere.
	oracle_box listed[24];
	uint32_t listed_dense[24];
	listed[0] = p->boxes[(dense[single] + 1) % p->n];
	listed_dense[0] = dense[single];
	for (uint32_t i = 0; i < indexed; ++i) {
		listed[1 + i] = boxes[single + i];
		listed_dense[1 + i] = dense[single + i];
	}
	soa_copy s;
	bp_bounds_arrays arrays = soa_of(&s, listed, indexed + 1, 3);
	cr_assert_eq(bp_entities_set_bounds(p->w, bp_target_indices(indexed ? indexed + 1 : 0, listed_dense), &arrays), BP_OK);
	soa_free(&s);
	arrays = soa_of(&s, boxes + single + indexed, k - single - indexed, 3);
	bp_target rest = bp_target_handles(k - single - indexed, handles + single + indexed);
	cr_assert_eq(bp_entities_set_bounds(p->w, rest, &arrays), BP_OK);
	soa_free(&s);
	for (uint32_t i = 0; i < k; ++i)
		p->boxes[dense[i]] = boxes[i];
}

static void probe_apply(probe *p, change c)
{
	bp_world *w = p->w;
	const uint32_t n = p->n;
	soa_copy s;
	switch (c) {
	case SAME_BOUNDS_EACH:
		for (uint32_t d = 0; d < n; ++d)
			cr_assert_eq(bp_entity_set_bounds(w, p->handles[d], p->boxes[d].min, p->boxes[d].max), BP_OK);
		break;
	case SAME_BOUNDS_RANGE: {
		bp_bounds_arrays arrays = soa_of(&s, p->boxes, n, 3);
		cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(0, n), &arrays), BP_OK);
		soa_free(&s);
		break;
	}
	case SAME_BOUNDS_INDEXED:
	case SAME_BOUNDS_BY_HANDLE: { // in reverse dense order
		oracle_box *boxes = malloc(n * sizeof *boxes);
		uint32_t *dense = malloc(n * sizeof *dense);
		bp_entity *handles = malloc(n * sizeof *handles);
		cr_assert(boxes && dense && handles);
		for (uint32_t i = 0; i < n; ++i) {
			dense[i] = n - 1 - i;
			boxes[i] = p->boxes[dense[i]];
			handles[i] = p->handles[dense[i]];
		}
		bp_bounds_arrays arrays = soa_of(&s, boxes, n, 3);
		if (c == SAME_BOUNDS_INDEXED)
			cr_assert_eq(bp_entities_set_bounds(w, bp_target_indices(n, dense), &arrays), BP_OK);
		else
			cr_assert_eq(bp_entities_set_bounds(w, bp_target_handles(n, handles), &arrays), BP_OK);
		soa_free(&s);
		free(boxes);
		free(dense);
		free(handles);
		break;
	}
	case SAME_SPHERES: { // the first half one at a time, the second half as a range
		const uint32_t half = PROBE_SPHERES / 2, rest = PROBE_SPHERES - half;
		float *axes[3], *radius = malloc(rest * sizeof *radius);
		for (int k = 0; k < 3; ++k)
			axes[k] = malloc(rest * sizeof *axes[k]);
		for (uint32_t i = 0; i < PROBE_SPHERES; ++i) {
			float centre[3], r;
			probe_sphere(i, centre, &r);
			if (i < half) {
				cr_assert_eq(bp_entity_set_sphere(w, p->handles[i], centre, r), BP_OK);
				continue;
			}
			for (int k = 0; k < 3; ++k)
				axes[k][i - half] = centre[k];
			radius[i - half] = r;
		}
		bp_sphere_arrays spheres = {axes[0], axes[1], axes[2], radius};
		cr_assert_eq(bp_entities_set_spheres(w, bp_target_range(half, rest), &spheres), BP_OK);
		for (int k = 0; k < 3; ++k)
			free(axes[k]);
		free(radius);
		break;
	}
	case USER_KEYS:
		for (uint32_t d = 0; d < n; ++d)
			cr_assert_eq(bp_entity_set_user_key(w, p->handles[d], 7 * (uint64_t)d + 1), BP_OK);
		break;
	case SAME_FILTERS:
		for (uint32_t d = 0; d < n; ++d)
			cr_assert_eq(bp_entity_set_filter(w, p->handles[d], p->boxes[d].category, p->boxes[d].mask), BP_OK);
		break;
	case SAME_KINDS:
		for (uint32_t d = 0; d < n; ++d)
			cr_assert_eq(bp_entity_set_kind(w, p->handles[d], p->boxes[d].is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC),
				BP_OK);
		break;
	case SAME_SHAPES:
		for (uint32_t d = 0; d < n; ++d)
			cr_assert_eq(bp_entity_set_shape(w, p->handles[d], p->boxes[d].is_sphere ? BP_SHAPE_SPHERE : BP_SHAPE_BOX),
				BP_OK);
		break;
	case NEGATIVE_ZERO: { // equal as numbers, another stored value
		oracle_box *b = &p->boxes[PROBE_ZERO];
		cr_assert(b->min[0] == 0.0f && !signbit(b->min[0]));
		b->min[0] = -0.0f;
		cr_assert_eq(bp_entity_set_bounds(w, p->handles[PROBE_ZERO], b->min, b->max), BP_OK);
		break;
	}
	case OTHER_FILTER: {
		oracle_box *b = &p->boxes[n / 2];
		b->mask = b->mask == UINT64_MAX ? 1u : UINT64_MAX;
		cr_assert_eq(bp_entity_set_filter(w, p->handles[n / 2], b->category, b->mask), BP_OK);
		break;
	}
	case OTHER_KIND: {
		oracle_box *b = &p->boxes[n / 2];
		b->is_static = !b->is_static;
		cr_assert_eq(bp_entity_set_kind(w, p->handles[n / 2], b->is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC), BP_OK);
		break;
	}
	case OTHER_SHAPE: {
		oracle_box *b = &p->boxes[n / 2];
		b->is_sphere = !b->is_sphere;
		cr_assert_eq(bp_entity_set_shape(w, p->handles[n / 2], b->is_sphere ? BP_SHAPE_SPHERE : BP_SHAPE_BOX), BP_OK);
		break;
	}
	case CREATE_ONE:
	case CREATE_THEN_DESTROY: {
		oracle_box b = p->boxes[n / 3];
		b.min[1] += 0.25f;
		b.max[1] += 0.25f;
		bp_entity_def e = oracle_entity_def(&b);
		cr_assert_eq(bp_entity_create(w, &e, &p->handles[n]), BP_OK);
		p->boxes[p->n++] = b;
		if (c == CREATE_THEN_DESTROY) {
			cr_assert_eq(bp_entity_destroy(w, p->handles[n]), BP_OK);
			probe_remove(p, n);
		}
		break;
	}
	case DESTROY_MIDDLE:
		cr_assert_eq(bp_entity_destroy(w, p->handles[5]), BP_OK);
		probe_remove(p, 5);
		break;
	case DESTROY_LAST:
		cr_assert_eq(bp_entity_destroy(w, p->handles[n - 1]), BP_OK);
		probe_remove(p, n - 1);
		break;
	case DESTROY_LAST_TWO: {
		bp_entity gone[2] = {p->handles[n - 1], p->handles[n - 2]};
		cr_assert_eq(bp_world_destroy_entities(w, 2, gone), BP_OK);
		probe_remove(p, n - 1);
		probe_remove(p, n - 2);
		break;
	}
	case DESTROY_FIRST_THREE: { // entities n-1, n-2, n-3 move to 0, 1, 2
		bp_entity gone[3] = {p->handles[0], p->handles[1], p->handles[2]};
		cr_assert_eq(bp_world_destroy_entities(w, 3, gone), BP_OK);
		probe_remove(p, 0);
		probe_remove(p, 1);
		probe_remove(p, 2);
		break;
	}
	case DESTROY_MOVED_ONE: // entity n-1 moves to 0, then is destroyed: n-2 moves to 0
		cr_assert_eq(bp_entity_destroy(w, p->handles[0]), BP_OK);
		probe_remove(p, 0);
		cr_assert_eq(bp_entity_destroy(w, p->handles[0]), BP_OK);
		probe_remove(p, 0);
		break;
	case MOVE_1:
		probe_move(p, 1);
		break;
	case MOVE_7:
		probe_move(p, 7);
		break;
	case MOVE_20:
		probe_move(p, 20);
		break;
	}
}

Test(incremental, what_marks_an_entity_as_changed, .timeout = 120)
{
	static const struct {
		change change;
		const char *what;
		uint32_t active;
	} cases[] = {
		{SAME_BOUNDS_EACH, "the same bounds again, one entity at a time", 0},
		{SAME_BOUNDS_RANGE, "the same bounds again, as one range over every entity", 0},
		{SAME_BOUNDS_INDEXED, "the same bounds again, by dense index", 0},
		{SAME_BOUNDS_BY_HANDLE, "the same bounds again, by handle", 0},
		{SAME_SPHERES, "the same spheres again, one at a time and by range", 0},
		{USER_KEYS, "new user keys for every entity", 0},
		{SAME_FILTERS, "the same filter again", 0},
		{SAME_KINDS, "the same kind again", 0},
		{SAME_SHAPES, "the same shape again", 0},
		{NEGATIVE_ZERO, "min_x 0.0 set to -0.0 (bit for bit)", 1},
		{OTHER_FILTER, "another mask for one entity", 1},
		{OTHER_KIND, "another kind for one entity", 1},
		{OTHER_SHAPE, "another shape for one entity", 1},
		{CREATE_ONE, "one entity created", 1},
		{CREATE_THEN_DESTROY, "one entity created and destroyed", 0},
		{DESTROY_MIDDLE, "dense 5 destroyed: the last moves there", 1},
		{DESTROY_LAST, "the last entity destroyed", 0},
		{DESTROY_LAST_TWO, "the last two destroyed in one call", 0},
		{DESTROY_FIRST_THREE, "dense 0, 1, 2 destroyed in one call", 3},
		{DESTROY_MOVED_ONE, "dense 0 destroyed twice over", 1},
		{MOVE_1, "one entity moved", 1},
		{MOVE_7, "seven entities moved, one listed twice", 7},
		{MOVE_20, "twenty entities moved, one listed twice", 20},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
		probe p = probe_new(31);
		probe_apply(&p, cases[i].change);
		probe_assert_unchanged(&p, cases[i].what); // the shadow holds what the world does
		uint32_t active = probe_step(&p, cases[i].what);
		cr_assert_eq(active, cases[i].active, "%s: active_count %u, want %u", cases[i].what, active, cases[i].active);
		probe_free(&p);
	}
}

// By default a few quiet entities stay active: settling would cost more than they do.
Test(incremental, a_few_changed_entities_stay_active_until_a_full_step, .timeout = 60)
{
	probe p = probe_new(32);
	probe_move(&p, 3);
	cr_assert_eq(probe_step(&p, "three moved"), 3);
	cr_assert_eq(probe_step(&p, "no change"), 3, "the three are still out of the resting index");
	oracle_box b = p.boxes[11]; // probe_move's first entity: moved again
	b.max[2] += 0.125f;
	cr_assert_eq(bp_entity_set_bounds(p.w, p.handles[11], b.min, b.max), BP_OK);
	p.boxes[11] = b;
	cr_assert_eq(probe_step(&p, "one of them again"), 3);
	bp_entity_def e = oracle_entity_def(&p.boxes[40]);
	cr_assert_eq(bp_entity_create(p.w, &e, &p.handles[p.n]), BP_OK);
	p.boxes[p.n++] = p.boxes[40];
	cr_assert_eq(probe_step(&p, "one created"), 4);
	// Most entities move: the step still reports every pair (probe_step checks),
	// with at least the movers active.
	for (uint32_t d = 0; d < p.n; d += 2) {
		p.boxes[d].min[0] += 0.75f;
		p.boxes[d].max[0] += 0.75f;
		cr_assert_eq(bp_entity_set_bounds(p.w, p.handles[d], p.boxes[d].min, p.boxes[d].max), BP_OK);
	}
	uint32_t active = probe_step(&p, "half moved");
	cr_assert_geq(active, p.n / 2, "half moved, %u active", active);
	probe_free(&p);
}

// Moved entities that stop changing settle: the next step has only the changing
// entities active; a settled entity that moves again is active again, and every
// step's pairs are the oracle's.
Test(incremental, quiet_entities_settle, .init = settle_early, .fini = settle_default, .timeout = 60)
{
	probe p = probe_new(33);
	probe_move(&p, 6);
	cr_assert_eq(probe_step(&p, "six moved"), 6);
	cr_assert_eq(probe_step(&p, "no change: the six settle after it"), 6);
	cr_assert_eq(probe_step(&p, "settled"), 0, "settled entities are not active");
	oracle_box b = p.boxes[11]; // probe_move's first entity, settled: moved again
	for (int axis = 0; axis < 3; ++axis) {
		b.min[axis] -= 0.25f;
		b.max[axis] -= 0.25f;
	}
	cr_assert_eq(bp_entity_set_bounds(p.w, p.handles[11], b.min, b.max), BP_OK);
	p.boxes[11] = b;
	cr_assert_eq(probe_step(&p, "one settled entity moved"), 1);
	probe_move(&p, 3); // three more, entity 11 among them: it moves on, two join
	cr_assert_eq(probe_step(&p, "three moved"), 3);
	cr_assert_eq(probe_step(&p, "no change"), 3);
	cr_assert_eq(probe_step(&p, "settled again"), 0);
	probe_free(&p);
}

// ---- a static-heavy scene: many static entities, a few movers ---------------------------

static bool quick_run(void) { return getenv("BP_TEST_QUICK") != NULL; }

/// 5000 static entities and 100 movers that take a small step each step, all in one
/// bp_entities_set_bounds by dense index. Every step reports the oracle's pairs in order; the
/// first step is full and every later one searches the movers alone. The world takes
/// the incremental path whenever it can (BP_DEBUG_ALWAYS_INCREMENTAL): the cost model
/// would choose it too, but its choice is timed, and a test must not depend on timing
/// (perf/incremental.c measures that choice on this shape of world).
static void static_heavy_run(void)
{
	const uint32_t statics = quick_run() ? 2000 : 5000, movers = quick_run() ? 50 : 100, n = statics + movers;
	const int steps = quick_run() ? 15 : 30;
	// Static boxes of extent <= 2 in a 30^3 box (a mover touches one or two), movers
	// spread through the dense order (every n / movers-th entity) and through space.
	oracle_box *boxes = calloc(n, sizeof *boxes);
	uint32_t *dense = calloc(movers, sizeof *dense);
	cr_assert(boxes && dense);
	test_random_boxes(boxes, n, 3, 30.0f, 2.0f, false, 41);
	for (uint32_t i = 0; i < n; ++i)
		boxes[i].is_static = true;
	for (uint32_t m = 0; m < movers; ++m) {
		dense[m] = m * (n / movers) + m % 7;
		boxes[dense[m]].is_static = false;
		boxes[dense[m]].is_sphere = m % 4 == 0;
	}
	bp_world_def def = bp_world_def_default();
	def.incremental = true;
	def.thread_count = 2;
	def.debug_flags = BP_DEBUG_ALWAYS_INCREMENTAL;
	bp_world *w = test_world_from_def(boxes, n, &def);
	oracle_box *moved = calloc(movers, sizeof *moved);
	cr_assert_not_null(moved);
	test_rng rng = {42};
	int incremental_steps = 0;
	for (int step = 0; step < steps; ++step) {
		cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
		size_t count;
		const bp_pair *got = bp_world_pairs(w, &count);
		oracle_pairs want = oracle_find_pairs(boxes, n, 3);
		cr_assert(count == want.count && (count == 0 || memcmp(got, want.data, count * sizeof *got) == 0),
			"step %d: %zu pairs, oracle %zu (or other pairs, or another order)", step, count, want.count);
		oracle_pairs_free(&want);
		bp_frame_stats stats = bp_world_stats(w);
		cr_assert_eq(stats.active_count, step == 0 ? n : movers, "step %d: %u entities searched, want %u", step,
			stats.active_count, step == 0 ? n : movers);
		incremental_steps += step > 0 && stats.active_count == movers;
		// Every mover takes a small step (a random walk), all in one call.
		for (uint32_t m = 0; m < movers; ++m) {
			moved[m] = boxes[dense[m]];
			for (int k = 0; k < 3; ++k) {
				float delta = test_rng_float(&rng, -0.4f, 0.4f);
				moved[m].min[k] += delta;
				moved[m].max[k] += delta;
			}
			boxes[dense[m]] = moved[m];
		}
		soa_copy s;
		bp_bounds_arrays arrays = soa_of(&s, moved, movers, 3);
		cr_assert_eq(bp_entities_set_bounds(w, bp_target_indices(movers, dense), &arrays), BP_OK);
		soa_free(&s);
	}
	cr_log_info("static-heavy: %d of %d steps after the first searched the movers alone", incremental_steps, steps - 1);
	bp_world_destroy(w);
	free(boxes);
	free(moved);
	free(dense);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(incremental, static_heavy_scene_searches_only_the_movers, .timeout = 120) { static_heavy_run(); }

// ---- periodic worlds: incremental set, the periodic step runs ---------------------------

static const float test_period[3] = {16.0f, 12.0f, 20.0f};

/// A box on the 1/8 grid (float and double hold every bound exactly, so the seams are
/// decided exactly): minimum anywhere in [-2P, 3P), extent up to P/4, now and then
/// exactly P/2; random filters and kinds.
static void periodic_box(history *h, oracle_box *b)
{
	*b = (oracle_box){.category = 1, .mask = UINT64_MAX};
	for (int k = 0; k < h->dims; ++k) {
		int p8 = (int)(test_period[k] * 8.0f);
		int e8 = test_rng_below(&h->rng, 10) == 0 ? p8 / 2 : (int)test_rng_below(&h->rng, (uint32_t)p8 / 4 + 1);
		int m8 = (int)test_rng_below(&h->rng, 5 * (uint32_t)p8) - 2 * p8;
		b->min[k] = (float)m8 / 8.0f;
		b->max[k] = (float)(m8 + e8) / 8.0f;
	}
	if (test_rng_below(&h->rng, 4) == 0) {
		b->category = test_layer(test_rng_below(&h->rng, 2));
		b->mask = test_rng_below(&h->rng, 2) ? 1u : 2u;
	}
	b->is_static = test_rng_below(&h->rng, 5) == 0;
}

static bp_world *new_periodic_world(int dims, int threads, bool incremental)
{
	bp_world_def def = bp_world_def_default();
	def.dims = dims;
	def.thread_count = threads;
	def.incremental = incremental;
	def.periodic = true;
	memcpy(def.period, test_period, sizeof def.period);
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	return w;
}

/// A history in a periodic world with `incremental` set against one without (in
/// h->full): moves on the 1/8 grid by dense index, bulk creates and destroys, filter
/// changes, and one step in six moves most entities. Both report the oracle's pairs in
/// (lo, hi) order.
static void periodic_history_run(int dims, int threads, uint32_t start, int steps, uint64_t seed)
{
	history h = history_new(dims, threads, start * 2 + 4 * BULK_MAX, seed, 0.0f);
	bp_world_destroy(h.world);
	bp_world_destroy(h.full);
	h.world = new_periodic_world(dims, threads, true);
	h.full = new_periodic_world(dims, threads, false);
	oracle_box *boxes = calloc(h.capacity, sizeof *boxes);
	uint32_t *dense = calloc(h.capacity, sizeof *dense);
	cr_assert(boxes && dense);
	while (h.n < start) {
		uint32_t count = min_u32(start - h.n, 1 + test_rng_below(&h.rng, BULK_MAX));
		for (uint32_t i = 0; i < count; ++i)
			periodic_box(&h, &boxes[i]);
		bulk_create(&h, count, boxes);
	}
	for (int step = 0; step < steps; ++step) {
		cr_assert_eq(bp_world_step(h.world), BP_OK, "step %d: %s", step, bp_world_last_error(h.world));
		cr_assert_eq(bp_world_step(h.full), BP_OK, "step %d: %s", step, bp_world_last_error(h.full));
		size_t count, full_count;
		const bp_pair *got = bp_world_pairs(h.world, &count);
		const bp_pair *plain = bp_world_pairs(h.full, &full_count);
		oracle_pairs want = oracle_find_periodic_pairs(h.boxes, h.n, dims, test_period);
		bool same = count == want.count && (count == 0 || memcmp(got, want.data, count * sizeof *got) == 0);
		if (!same)
			oracle_same_pair_set(got, count, &want);
		cr_assert(same, "step %d: %zu pairs, oracle %zu (or other pairs, or another order)", step, count, want.count);
		oracle_pairs_free(&want);
		cr_assert(full_count == count && (count == 0 || memcmp(got, plain, count * sizeof *got) == 0),
			"step %d: the plain periodic world differs", step);
		cr_assert_eq(bp_world_stats(h.world).entity_count, h.n);
		// world.h: periodic worlds take the full path; active_count is entity_count then.
		cr_assert_eq(bp_world_stats(h.world).active_count, h.n, "step %d: active_count of a periodic world", step);

		bool crowd = step % 6 == 5;
		uint32_t movers = crowd ? h.n * 3 / 4 : 1 + test_rng_below(&h.rng, 10);
		for (uint32_t m = 0; m < movers && h.n; ++m) {
			dense[m] = crowd ? (m * 7919u) % h.n : test_rng_below(&h.rng, h.n);
			boxes[m] = h.boxes[dense[m]];
			if (test_rng_below(&h.rng, 6) == 0) {
				oracle_box fresh;
				periodic_box(&h, &fresh);
				memcpy(boxes[m].min, fresh.min, sizeof fresh.min);
				memcpy(boxes[m].max, fresh.max, sizeof fresh.max);
			} else {
				for (int k = 0; k < dims; ++k) {
					float delta = (float)((int)test_rng_below(&h.rng, 33) - 16) / 8.0f;
					boxes[m].min[k] += delta;
					boxes[m].max[k] += delta;
				}
			}
		}
		if (h.n)
			bulk_set_bounds(&h, movers, dense, boxes, test_rng_below(&h.rng, 2));
		switch (test_rng_below(&h.rng, 4)) {
		case 0:
			if (h.n + BULK_MAX <= h.capacity) {
				uint32_t born = 1 + test_rng_below(&h.rng, 6);
				for (uint32_t i = 0; i < born; ++i)
					periodic_box(&h, &boxes[i]);
				bulk_create(&h, born, boxes);
			}
			break;
		case 1:
			if (h.n > 4) {
				uint32_t dying = 1 + test_rng_below(&h.rng, 3);
				pick_distinct(&h, dying, dense);
				bulk_destroy(&h, dying, dense);
			}
			break;
		case 2:
			if (h.n) {
				uint32_t d = test_rng_below(&h.rng, h.n);
				uint64_t mask = h.boxes[d].mask == UINT64_MAX ? 2u : UINT64_MAX;
				cr_assert_eq(bp_entity_set_filter(h.world, h.handles[d], h.boxes[d].category, mask), BP_OK);
				cr_assert_eq(bp_entity_set_filter(h.full, h.full_handles[d], h.boxes[d].category, mask), BP_OK);
				h.boxes[d].mask = mask;
			}
			break;
		default:
			break; // moves only
		}
	}
	free(boxes);
	free(dense);
	history_free(&h);
}

Test(incremental, periodic_world_matches_a_plain_periodic_world, .timeout = 120)
{
	periodic_history_run(2, 2, 400, 24, 51);
	periodic_history_run(3, 3, 400, 24, 52);
}

// ---- frames: the scheduler's view of an incremental world ----------------------------

Test(incremental, frame_step_reports_the_world_steps_pairs, .timeout = 120)
{
	bulk_scratch s;
	history h = bulk_history_new(3, 2, 800, 61, 0.0f, &s);
	int incremental_builds = 0;
	for (int step = 0; step < 24; ++step) {
		// The two steps in either order: neither may disturb what the other sees as changed.
		bp_view *view = NULL;
		if (step % 2)
			cr_assert_eq(bp_frame_step(h.world, &view), BP_OK, "step %d: %s", step, bp_world_last_error(h.world));
		check_step(&h);
		if (step % 2 == 0)
			cr_assert_eq(bp_frame_step(h.world, &view), BP_OK, "step %d: %s", step, bp_world_last_error(h.world));
		cr_assert_not_null(view);
		cr_assert_eq(bp_view_entity_count(view), h.n, "step %d", step);
		size_t count, view_count;
		const bp_pair *pairs = bp_world_pairs(h.world, &count);
		const bp_pair *view_pairs = bp_view_pairs(view, &view_count);
		cr_assert(view_count == count && (count == 0 || memcmp(view_pairs, pairs, count * sizeof *pairs) == 0),
			"step %d: the frame has %zu pairs, the step %zu (or other pairs, or another order)", step, view_count,
			count);
		// The builder finds what changed by comparing snapshots, and builds incrementally.
		bp_frame_stats stats = bp_view_stats(view);
		incremental_builds += stats.active_count < stats.entity_count;
		bp_view_release(view);
		bulk_changes(&h, step, &s);
	}
	cr_assert_eq(incremental_builds, 23, "%d of 23 frames after the first were built incrementally", incremental_builds);
	bulk_history_free(&h, &s);
}

// ---- thread counts ----------------------------------------------------------------------

Test(incremental, same_pairs_for_every_thread_count, .timeout = 240)
{
	enum { STEPS = 40 };
	static const int threads[] = {1, 2, 3, 8};
	uint64_t hashes[4][STEPS];
	for (int dims = 2; dims <= 3; ++dims) {
		for (int t = 0; t < 4; ++t)
			bulk_history_run(dims, threads[t], 1000, STEPS, 70 + (uint64_t)dims, 0.0f, hashes[t]);
		for (int t = 1; t < 4; ++t)
			for (int step = 0; step < STEPS; ++step)
				cr_assert_eq(hashes[t][step], hashes[0][step], "dims %d step %d: %d threads differ from 1", dims,
					step, threads[t]);
	}
}

// Frames whose only changes are filters, kinds and shapes (no bounds move): the
// builder must see those changes in the snapshots too.
Test(incremental, frames_see_filter_kind_and_shape_changes, .timeout = 120)
{
	history h = history_new(3, 2, 600, 83, 0.0f);
	h.size = 25.0f;
	for (uint32_t i = 0; i < h.capacity; ++i) {
		oracle_box b;
		random_box(&h, &b, true);
		create(&h, &b);
	}
	int incremental_builds = 0;
	for (int step = 0; step < 30; ++step) {
		bp_view *view = NULL;
		cr_assert_eq(bp_frame_step(h.world, &view), BP_OK, "%s", bp_world_last_error(h.world));
		size_t count;
		const bp_pair *got = bp_view_pairs(view, &count);
		oracle_pairs want = oracle_find_pairs(h.boxes, h.n, h.dims);
		cr_assert(count == want.count && (count == 0 || memcmp(got, want.data, count * sizeof *got) == 0),
			"step %d: %zu pairs, oracle %zu (or other pairs, or another order)", step, count, want.count);
		oracle_pairs_free(&want);
		bp_frame_stats stats = bp_view_stats(view);
		incremental_builds += stats.active_count < stats.entity_count;
		bp_view_release(view);
		for (int k = 0; k < 6; ++k) {
			uint32_t d = test_rng_below(&h.rng, h.n);
			oracle_box *b = &h.boxes[d];
			switch (k % 3) {
			case 0:
				b->is_static = !b->is_static;
				cr_assert_eq(bp_entity_set_kind(h.world, h.handles[d], b->is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC),
					BP_OK);
				break;
			case 1:
				b->mask = b->mask == UINT64_MAX ? 2u : UINT64_MAX;
				cr_assert_eq(bp_entity_set_filter(h.world, h.handles[d], b->category, b->mask), BP_OK);
				break;
			default:
				b->is_sphere = !b->is_sphere;
				cr_assert_eq(bp_entity_set_shape(h.world, h.handles[d], b->is_sphere ? BP_SHAPE_SPHERE : BP_SHAPE_BOX),
					BP_OK);
				break;
			}
		}
	}
	cr_assert_eq(incremental_builds, 29);
	history_free(&h);
}

// The builder makes a frame's hierarchy from the last frame's shared part and a changed
// part; together they must hold every entity of the view exactly once, with its bounds of
// this frame, whatever was skipped in the shared part.
static void expect_hierarchy_exact(const bp_view *v)
{
	(void)bpi_view_ensure(v, BPI_VIEW_HIERARCHY); // made by the builder from the last frame's, which was asked for
	bpi_bvh_part parts[2];
	const int part_count = bpi_hierarchy_parts(&v->hierarchy, parts);
	cr_assert_eq(part_count > 0, v->count >= BPI_HIERARCHY_MIN_COUNT);
	uint8_t *seen = calloc(v->count + 1, 1);
	for (int k = 0; k < part_count; ++k) {
		const bpi_bvh *h = parts[k].bvh;
		for (uint32_t leaf = 0; leaf < h->leaves; ++leaf)
			for (uint32_t lane = 0; lane < h->leaf_size.data[leaf]; ++lane) {
				const uint32_t e = h->order.data[(size_t)leaf * BPI_BVH_LEAF + lane];
				if (bpi_part_skips(&parts[k], e))
					continue;
				cr_assert_lt(e, v->count, "frame %llu: entity %u of %u", (unsigned long long)v->number, e, v->count);
				cr_assert(!seen[e], "frame %llu: entity %u twice", (unsigned long long)v->number, e);
				seen[e] = 1;
				const float *block = bpi_bvh_leaf(h, leaf);
				for (int a = 0; a < v->dims; ++a) {
					const float lo = block[(uint32_t)a * BPI_BVH_LEAF + lane];
					const float hi = block[(uint32_t)(3 + a) * BPI_BVH_LEAF + lane];
					cr_assert(memcmp(&lo, &v->soa.min[a][e], sizeof lo) == 0 &&
							memcmp(&hi, &v->soa.max[a][e], sizeof hi) == 0,
						"frame %llu: entity %u's bounds in part %d are not this frame's", (unsigned long long)v->number,
						e, k);
				}
			}
	}
	for (uint32_t e = 0; e < v->count && part_count; ++e)
		cr_assert(seen[e], "frame %llu: entity %u in no part", (unsigned long long)v->number, e);
	free(seen);
}

Test(incremental, frame_query_hierarchy_holds_each_entity_once, .timeout = 120)
{
	for (int dims = 2; dims <= 3; ++dims) {
		bulk_scratch s;
		history h = bulk_history_new(dims, 2, 1200, 90 + (uint64_t)dims, 0.0f, &s);
		for (int step = 0; step < 20; ++step) {
			bp_view *view = NULL;
			cr_assert_eq(bp_frame_step(h.world, &view), BP_OK, "%s", bp_world_last_error(h.world));
			expect_hierarchy_exact(view);
			bp_view_release(view);
			bulk_changes(&h, step, &s);
		}
		bulk_history_free(&h, &s);
	}
}
