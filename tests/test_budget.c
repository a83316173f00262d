// SPDX-License-Identifier: MIT
// Pair memory budgets (budget.c) and the world's memory_limit: bytes are charged before they
// are allocated and given back exactly; a step that would pass the limit fails with
// BP_ERR_OUT_OF_MEMORY without asking the allocator, names the limit, changes nothing, and
// the next step without the limit finds the oracle's pairs.
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "parallel/budget.h"
#include "oracle.h"
#include "view/view.h"  // src/view/view.h: a frame's arrays and its pool's budget
#include "world/world_data.h" // src/world/world_data.h: the world's budget and indexes, for the exact count

// ---- an allocator that counts, and refuses on request -------------------------

static _Atomic uint64_t calls;
static _Atomic uint64_t asked_bytes;
static _Atomic uint64_t failures;
static _Atomic bool refuse_all;

static void *counting_alloc(size_t size, size_t align, void *user)
{
	(void)user;
	atomic_fetch_add(&calls, 1);
	atomic_fetch_add(&asked_bytes, size);
	if (atomic_load(&refuse_all)) {
		atomic_fetch_add(&failures, 1);
		return NULL;
	}
	size = (size + align - 1) / align * align; // aligned_alloc wants a multiple
	return aligned_alloc(align, size);
}

static void counting_free(void *ptr, size_t size, size_t align, void *user)
{
	(void)size;
	(void)align;
	(void)user;
	free(ptr);
}

static const bp_allocator counting = {counting_alloc, counting_free, NULL};

static void count_from_zero(void)
{
	atomic_store(&calls, 0);
	atomic_store(&asked_bytes, 0);
	atomic_store(&failures, 0);
}

// ---- the budget on its own -----------------------------------------------------

Test(budget, charges_before_allocating_and_refuses_past_the_limit)
{
	bp_set_allocator(&counting);
	bpi_budget b = {0};
	bpi_budget_begin(&b, 1000);
	count_from_zero();
	void *first = bpi_budget_alloc(&b, 600);
	cr_assert_not_null(first);
	cr_assert_eq(atomic_load(&b.held), 600);
	cr_assert_null(bpi_budget_alloc(&b, 401), "600 + 401 bytes passed a limit of 1000");
	cr_assert_eq(atomic_load(&calls), 1, "the allocator was asked for a block the limit refused");
	cr_assert(atomic_load(&b.stopped) && atomic_load(&b.over_limit));
	cr_assert_eq(atomic_load(&b.held), 600, "a refused block stayed charged");
	cr_assert_null(bpi_budget_alloc(&b, 8), "a stopped step allocated again");
	cr_assert_eq(atomic_load(&calls), 1);

	bpi_budget_free(&b, first, 600);
	cr_assert_eq(atomic_load(&b.held), 0);
	bpi_budget_begin(&b, 1000); // the next step
	cr_assert(!atomic_load(&b.stopped) && !atomic_load(&b.over_limit));
	void *all = bpi_budget_alloc(&b, 1000);
	cr_assert_not_null(all, "exactly the limit is within it");
	bpi_budget_free(&b, all, 1000);
	cr_assert_eq(atomic_load(&b.held), 0);

	bpi_budget_begin(&b, 0); // no limit
	void *big = bpi_budget_alloc(&b, 1 << 20);
	cr_assert_not_null(big);
	cr_assert_eq(atomic_load(&b.held), 1 << 20);
	bpi_budget_free(&b, big, 1 << 20);
	cr_assert_eq(bp_allocated_bytes(), 0);
	bp_set_allocator(NULL);
}

Test(budget, an_allocator_failure_stops_the_step_without_blaming_the_limit)
{
	bp_set_allocator(&counting);
	bpi_budget b = {0};
	bpi_budget_begin(&b, 1 << 20);
	count_from_zero();
	atomic_store(&refuse_all, true);
	cr_assert_null(bpi_budget_alloc(&b, 64));
	atomic_store(&refuse_all, false);
	cr_assert(atomic_load(&b.stopped));
	cr_assert_not(atomic_load(&b.over_limit));
	cr_assert_eq(atomic_load(&b.held), 0, "a failed block stayed charged");
	cr_assert_null(bpi_budget_alloc(&b, 64), "a stopped step allocated again");
	cr_assert_eq(atomic_load(&calls), 1);
	bp_set_allocator(NULL);
}

Test(budget, no_budget_charges_nothing_and_never_stops)
{
	void *block = bpi_budget_alloc(NULL, 100);
	cr_assert_not_null(block);
	cr_assert_eq((uintptr_t)block % BP_CACHE_LINE, 0);
	cr_assert_not(bpi_budget_stopped(NULL));
	bpi_budget_free(NULL, block, 100);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(budget, moves_and_arrays_keep_the_count_exact)
{
	bpi_budget a = {0}, b = {0};
	bpi_budget_begin(&a, 0);
	bpi_budget_begin(&b, 100);
	BPI_ARRAY(uint64_t) array = {0};
	cr_assert(bpi_budget_array_reserve(&a, &array, 10));
	cr_assert_eq(atomic_load(&a.held), array.capacity * sizeof(uint64_t));
	cr_assert(bpi_budget_array_reserve(&a, &array, 11)); // grows by half: 15
	cr_assert_eq(array.capacity, 15);
	cr_assert_eq(atomic_load(&a.held), 15 * sizeof(uint64_t), "the old block is given back");
	bpi_budget_move(&a, &b, 15 * sizeof(uint64_t)); // the array changes hands
	cr_assert_eq(atomic_load(&a.held), 0);
	cr_assert_eq(atomic_load(&b.held), 120, "a move may leave the account above its limit");
	cr_assert_not(bpi_budget_array_reserve(&b, &array, 16), "growing past b's limit");
	cr_assert_eq(array.capacity, 15, "a refused growth changed the array");
	// Arrays are made apart from a step's finders (a reader may make one on demand
	// while the builder steps): a refusal must not stop the step under way.
	cr_assert_not(atomic_load(&b.stopped));
	bpi_budget_array_free(&b, &array);
	cr_assert_null(array.data);
	cr_assert_eq(atomic_load(&b.held), 0);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

// ---- the world's memory_limit ------------------------------------------------------

Test(memory_limit, default_setter_and_getter)
{
	bp_world_def def = bp_world_def_default();
	cr_assert_eq(def.memory_limit, 0, "no limit by default");
	def.memory_limit = 12345;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	cr_assert_eq(bp_world_memory_limit(w), 12345);
	cr_assert_eq(bp_world_set_memory_limit(w, 0), BP_OK);
	cr_assert_eq(bp_world_memory_limit(w), 0);
	cr_assert_eq(bp_world_set_memory_limit(NULL, 1), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_world_memory_limit(NULL), 0);
	bp_world_destroy(w);
}

/// The bytes the world's own steps hold for pairs, summed from the buffers themselves.
static size_t pair_bytes_held(const bp_world *w)
{
	size_t bytes = w->pairs.capacity * sizeof(bp_pair);
	for (int a = 0; a < BP_ALGO_COUNT; ++a) {
		const bpi_index *index = w->stepper.indexes.of[a];
		for (uint32_t i = 0; index && i < index->chunks.capacity; ++i)
			bytes += index->chunks.buffers[i].capacity * sizeof(bp_pair);
	}
	return bytes;
}

Test(memory_limit, the_count_is_exact_and_the_limit_holds, .timeout = 60)
{
	enum { N = 4000 };
	static oracle_box boxes[N];
	test_random_boxes(boxes, N, 3, 30.0f, 3.0f, false, 4242);
	oracle_pairs want = oracle_find_pairs(boxes, N, 3);
	bp_world_def def = bp_world_def_default();
	def.thread_count = 2;
	def.memory_limit = 4 << 20; // room for these pairs, several times over
	bp_world *w = test_world_from_def(boxes, N, &def);
	const bp_algorithm algorithms[] = {BP_ALGO_SAP, BP_ALGO_BRUTE, BP_ALGO_GRID, BP_ALGO_QUADTREE};
	for (size_t i = 0; i < sizeof algorithms / sizeof algorithms[0]; ++i) {
		cr_assert_eq(bp_world_set_algorithm(w, algorithms[i]), BP_OK);
		cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
		size_t count;
		const bp_pair *pairs = bp_world_pairs(w, &count);
		cr_assert(oracle_same_pair_set(pairs, count, &want));
		size_t held = atomic_load(&w->budget.held);
		cr_assert_eq(held, pair_bytes_held(w), "%s: the budget counts %zu bytes, the buffers hold %zu",
			bp_algorithm_name(algorithms[i]), held, pair_bytes_held(w));
		cr_assert_leq(held, def.memory_limit);
	}
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
	oracle_pairs_free(&want);
}

// Identical points, every pair overlapping: 1500 make 1,124,250 pairs (9 MB of pairs
// alone), 1 MiB is far too little. The world first steps with the points spread apart,
// so a failed step has pairs to keep.
enum { SAME_N = 1500, CAP = 1 << 20 };

typedef struct capped_scene {
	oracle_box spread[SAME_N], same[SAME_N];
	oracle_pairs spread_pairs, same_pairs;
	float soa[6][SAME_N];
} capped_scene;

static capped_scene *make_capped_scene(void)
{
	static capped_scene s;
	test_random_boxes(s.spread, SAME_N, 3, 30.0f, 1.0f, false, 77);
	for (uint32_t i = 0; i < SAME_N; ++i) {
		s.same[i] = (oracle_box){.min = {5, 5, 5}, .max = {5, 5, 5}, .category = 1, .mask = UINT64_MAX};
		for (int k = 0; k < 3; ++k) {
			s.soa[k][i] = s.same[i].min[k];
			s.soa[3 + k][i] = s.same[i].max[k];
		}
	}
	s.spread_pairs = oracle_find_pairs(s.spread, SAME_N, 3);
	s.same_pairs = oracle_find_pairs(s.same, SAME_N, 3);
	return &s;
}

static void free_capped_scene(capped_scene *s)
{
	oracle_pairs_free(&s->spread_pairs);
	oracle_pairs_free(&s->same_pairs);
}

static void assert_pairs(const bp_world *w, const oracle_pairs *want)
{
	size_t count;
	const bp_pair *pairs = bp_world_pairs(w, &count);
	cr_assert(oracle_same_pair_set(pairs, count, want));
}

/// What the allocator was asked for: by a world's first step (the spread points), and
/// by the step after all of them moved onto one point.
typedef struct asked {
	uint64_t first_bytes;
	uint64_t calls, bytes;
} asked;

/// Steps the spread points, moves them all onto one point and steps again, under CAP
/// when `capped` (the step must fail, change nothing and leave the world usable),
/// else without a limit.
static asked step_onto_one_point(capped_scene *s, bp_world_def def, bool capped)
{
	const char *name = bp_algorithm_name(def.algorithm);
	asked a = {0};
	bp_world *w = test_world_from_def(s->spread, SAME_N, &def);
	count_from_zero();
	cr_assert_eq(bp_world_step(w), BP_OK, "%s: %s", name, bp_world_last_error(w));
	a.first_bytes = atomic_load(&asked_bytes);
	assert_pairs(w, &s->spread_pairs);
	bp_bounds_arrays same = {s->soa[0], s->soa[1], s->soa[2], s->soa[3], s->soa[4], s->soa[5]};
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(0, SAME_N), &same), BP_OK);
	cr_assert_eq(bp_world_set_memory_limit(w, capped ? CAP : 0), BP_OK);

	count_from_zero();
	bp_status status = bp_world_step(w);
	a.calls = atomic_load(&calls);
	a.bytes = atomic_load(&asked_bytes);
	if (!capped) {
		cr_assert_eq(status, BP_OK, "%s: %s", name, bp_world_last_error(w));
		assert_pairs(w, &s->same_pairs);
		bp_world_destroy(w);
		return a;
	}
	cr_assert_eq(status, BP_ERR_OUT_OF_MEMORY, "%s: %s", name, bp_status_string(status));
	cr_assert_eq(atomic_load(&failures), 0, "%s: the allocator was asked past the limit", name);
	const char *why = bp_world_last_error(w);
	cr_assert(strstr(why, "memory_limit = 1048576 bytes") != NULL, "%s: last_error '%s'", name, why);
	cr_assert_eq(bp_world_stats(w).frame, 1, "%s: a failed step counted", name);
	assert_pairs(w, &s->spread_pairs); // the previous step's pairs are kept
	cr_assert_leq(atomic_load(&w->budget.held), CAP, "%s: the world holds more than its limit", name);

	// The world goes on: the next step without the limit finds every pair.
	cr_assert_eq(bp_world_set_memory_limit(w, 0), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK, "%s: %s", name, bp_world_last_error(w));
	assert_pairs(w, &s->same_pairs);
	cr_assert_eq(bp_world_stats(w).frame, 2);
	bp_world_destroy(w);
	return a;
}

static void check_capped(bp_world_def def)
{
	capped_scene *s = make_capped_scene();
	bp_set_allocator(&counting);
	asked capped = step_onto_one_point(s, def, true), free_run = step_onto_one_point(s, def, false);
	bp_set_allocator(NULL);
	cr_assert_eq(bp_allocated_bytes(), 0);
	const char *name = bp_algorithm_name(def.algorithm);
	const char *kind = def.periodic ? " periodic"
			   : !def.incremental ? ""
			   : def.debug_flags & BP_DEBUG_ALWAYS_FULL ? " incremental, full path"
								    : " incremental";
	cr_log_info("%s%s, %d threads: the capped step asked for %llu blocks, %llu bytes; without the limit %llu, %llu",
		name, kind, def.thread_count, (unsigned long long)capped.calls, (unsigned long long)capped.bytes,
		(unsigned long long)free_run.calls, (unsigned long long)free_run.bytes);
	// Pair memory never passes CAP at any moment, and a buffer that grows frees its
	// last block: every block given to a buffer sums to less than twice its last, so
	// the pair memory asked for stays below 2 CAP. The rest is scratch, which the
	// first step (same entities) sized already.
	cr_assert_lt(capped.bytes, capped.first_bytes + 2 * (uint64_t)CAP, "%s: the capped step asked for %llu bytes", name,
		(unsigned long long)capped.bytes);
	cr_assert_gt(free_run.bytes, 8 * (uint64_t)CAP, "%s: the scene has too few pairs to test a cap", name);
	free_capped_scene(s);
}

static bp_world_def capped_def(bp_algorithm algorithm, int threads)
{
	bp_world_def def = bp_world_def_default();
	def.algorithm = algorithm;
	def.thread_count = threads;
	return def;
}

Test(memory_limit, a_capped_step_fails_and_changes_nothing, .timeout = 240)
{
	const bp_algorithm algorithms[] = {BP_ALGO_BRUTE, BP_ALGO_SAP, BP_ALGO_GRID, BP_ALGO_HASH, BP_ALGO_SHIFTS,
		BP_ALGO_BUCKETS, BP_ALGO_QUADTREE, BP_ALGO_CLOSEST, BP_ALGO_AUTO};
	for (size_t i = 0; i < sizeof algorithms / sizeof algorithms[0]; ++i)
		for (int threads = 1; threads <= 2; ++threads)
			check_capped(capped_def(algorithms[i], threads));
}

Test(memory_limit, a_capped_incremental_step_fails_and_changes_nothing, .timeout = 120)
{
	// Both paths, each forced: the choice between them is made from measured times.
	const uint32_t paths[] = {BP_DEBUG_ALWAYS_FULL, BP_DEBUG_ALWAYS_INCREMENTAL};
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; ++i) {
		bp_world_def def = capped_def(BP_ALGO_AUTO, 2);
		def.incremental = true;
		def.debug_flags = paths[i];
		check_capped(def);
	}
}

Test(memory_limit, a_capped_periodic_step_fails_and_changes_nothing, .timeout = 120)
{
	bp_world_def def = capped_def(BP_ALGO_SAP, 2);
	def.periodic = true;
	def.period[0] = def.period[1] = def.period[2] = 100.0f;
	check_capped(def);
}

Test(memory_limit, a_capped_frame_fails_and_the_previous_stays_published, .timeout = 120)
{
	capped_scene *s = make_capped_scene();
	bp_world_def def = capped_def(BP_ALGO_GRID, 2);
	def.memory_limit = CAP;
	bp_world *w = test_world_from_def(s->spread, SAME_N, &def);
	bp_view *view = NULL;
	cr_assert_eq(bp_frame_step(w, &view), BP_OK, "the spread points fit in 1 MiB");
	uint64_t published = bp_view_frame(view);
	size_t count;
	const bp_pair *pairs = bp_view_pairs(view, &count);
	cr_assert(oracle_same_pair_set(pairs, count, &s->spread_pairs));
	bp_view_release(view);

	bp_bounds_arrays same = {s->soa[0], s->soa[1], s->soa[2], s->soa[3], s->soa[4], s->soa[5]};
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(0, SAME_N), &same), BP_OK);
	uint64_t frame = 0;
	cr_assert_eq(bp_frame_submit(w, &frame), BP_OK);
	cr_assert_eq(bp_frame_wait(w, frame), BP_ERR_OUT_OF_MEMORY);
	cr_assert_eq(bp_frame_acquire(w, &view), BP_OK);
	cr_assert_eq(bp_view_frame(view), published, "the failed frame replaced the published one");
	pairs = bp_view_pairs(view, &count);
	cr_assert(oracle_same_pair_set(pairs, count, &s->spread_pairs));
	bp_view_release(view);

	cr_assert_eq(bp_world_set_memory_limit(w, 0), BP_OK);
	cr_assert_eq(bp_frame_step(w, &view), BP_OK);
	pairs = bp_view_pairs(view, &count);
	cr_assert(oracle_same_pair_set(pairs, count, &s->same_pairs));
	bp_view_release(view);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
	free_capped_scene(s);
}

/// A limit lowered below what the world already holds applies to the next step:
/// pair memory kept from earlier steps counts until given back. A world holding
/// about a thousand pairs, limited to 64 bytes, fails its next step and keeps its
/// pairs; once its boxes part it steps to no pairs and holds no more than the
/// limit; when they meet again it fails again; without the limit it is exact.
static void lowered_limit(bp_world_def def, const char *what)
{
	enum { N = 600, LIMIT = 64 };
	static oracle_box boxes[N], apart[N];
	static float soa[6][N];
	test_random_boxes(boxes, N, def.dims, def.dims == 2 ? 12.0f : 5.0f, 1.5f, false, 6464);
	for (uint32_t i = 0; i < N; ++i) {
		apart[i] = boxes[i];
		apart[i].min[0] = apart[i].max[0] = 10.0f * (float)i;
		for (int k = 0; k < 3; ++k) {
			soa[k][i] = apart[i].min[k];
			soa[3 + k][i] = apart[i].max[k];
		}
	}
	oracle_pairs want = oracle_find_pairs(boxes, N, def.dims);
	cr_assert_gt(want.count, 800, "%s: too few pairs to hold", what);
	bp_world *w = test_world_from_def(boxes, N, &def);
	cr_assert_eq(bp_world_step(w), BP_OK, "%s: %s", what, bp_world_last_error(w));
	assert_pairs(w, &want);

	cr_assert_eq(bp_world_set_memory_limit(w, LIMIT), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_ERR_OUT_OF_MEMORY, "%s: the lowered limit was not applied", what);
	cr_assert(strstr(bp_world_last_error(w), "memory_limit") != NULL, "%s: %s", what, bp_world_last_error(w));
	assert_pairs(w, &want); // kept

	bp_bounds_arrays spread = {soa[0], soa[1], soa[2], soa[3], soa[4], soa[5]};
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(0, N), &spread), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK, "%s: no pairs fit any limit: %s", what, bp_world_last_error(w));
	size_t count;
	bp_world_pairs(w, &count);
	cr_assert_eq(count, 0, "%s", what);
	cr_assert_leq(atomic_load(&w->budget.held), LIMIT, "%s: the world still holds the old pairs' memory", what);

	float *back[6];
	static float near[6][N];
	for (uint32_t i = 0; i < N; ++i)
		for (int k = 0; k < 3; ++k) {
			near[k][i] = boxes[i].min[k];
			near[3 + k][i] = boxes[i].max[k];
		}
	for (int k = 0; k < 6; ++k)
		back[k] = near[k];
	bp_bounds_arrays met = {back[0], back[1], back[2], back[3], back[4], back[5]};
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(0, N), &met), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_ERR_OUT_OF_MEMORY, "%s: the pairs met again under 64 bytes", what);
	cr_assert_eq(bp_world_set_memory_limit(w, 0), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK, "%s: %s", what, bp_world_last_error(w));
	assert_pairs(w, &want);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
	oracle_pairs_free(&want);
}

Test(memory_limit, a_lowered_limit_applies_to_the_next_step, .timeout = 60)
{
	const bp_algorithm algorithms[] = {BP_ALGO_SAP, BP_ALGO_BRUTE, BP_ALGO_GRID, BP_ALGO_QUADTREE};
	for (size_t i = 0; i < sizeof algorithms / sizeof algorithms[0]; ++i)
		for (int dims = 2; dims <= 3; ++dims) {
			bp_world_def def = bp_world_def_default();
			def.dims = dims;
			def.algorithm = algorithms[i];
			def.thread_count = 2;
			lowered_limit(def, bp_algorithm_name(algorithms[i]));
		}
}

Test(memory_limit, a_lowered_limit_applies_to_the_next_incremental_step, .timeout = 60)
{
	for (uint32_t flags = 0; flags <= BP_DEBUG_ALWAYS_INCREMENTAL; flags += BP_DEBUG_ALWAYS_INCREMENTAL) {
		bp_world_def def = bp_world_def_default();
		def.incremental = true;
		def.debug_flags = flags;
		lowered_limit(def, flags ? "incremental path" : "incremental");
	}
}

Test(memory_limit, a_lowered_limit_applies_to_the_next_periodic_step, .timeout = 60)
{
	bp_world_def def = bp_world_def_default();
	def.periodic = true;
	def.period[0] = def.period[1] = def.period[2] = 1e5f;
	lowered_limit(def, "periodic");
}

/// Frames the same way: the next frame fails and the last stays published.
Test(memory_limit, a_lowered_limit_applies_to_the_next_frame, .timeout = 60)
{
	enum { N = 600, LIMIT = 64 };
	static oracle_box boxes[N];
	test_random_boxes(boxes, N, 3, 5.0f, 1.5f, false, 6565);
	oracle_pairs want = oracle_find_pairs(boxes, N, 3);
	bp_world_def def = bp_world_def_default();
	def.thread_count = 2;
	bp_world *w = test_world_from_def(boxes, N, &def);
	bp_view *view = NULL;
	cr_assert_eq(bp_frame_step(w, &view), BP_OK);
	uint64_t published = bp_view_frame(view);
	cr_assert_eq(bp_view_release(view), BP_OK);
	cr_assert_eq(bp_world_set_memory_limit(w, LIMIT), BP_OK);
	cr_assert_eq(bp_frame_step(w, &view), BP_ERR_OUT_OF_MEMORY);
	cr_assert_eq(bp_frame_acquire(w, &view), BP_OK);
	cr_assert_eq(bp_view_frame(view), published);
	size_t count;
	const bp_pair *pairs = bp_view_pairs(view, &count);
	cr_assert(oracle_same_pair_set(pairs, count, &want));
	cr_assert_eq(bp_view_release(view), BP_OK);
	cr_assert_eq(bp_world_set_memory_limit(w, 0), BP_OK);
	cr_assert_eq(bp_frame_step(w, &view), BP_OK);
	pairs = bp_view_pairs(view, &count);
	cr_assert(oracle_same_pair_set(pairs, count, &want));
	cr_assert_eq(bp_view_release(view), BP_OK);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
	oracle_pairs_free(&want);
}

/// Bytes of the arrays a frame derives from its pairs, summed from the arrays.
static size_t view_pair_bytes(const bp_view *v)
{
	return v->pairs.capacity * sizeof(bp_pair) + v->scratch.capacity * sizeof(bp_pair) +
	       v->neighbours.capacity * sizeof(uint32_t) + v->names.capacity * sizeof(bpi_named_pair) +
	       (v->began.capacity + v->ended.capacity) * sizeof(bp_pair_event) +
	       (v->began_keys.capacity + v->ended_keys.capacity) * sizeof(bp_key_pair);
}

Test(memory_limit, a_frame_counts_what_it_derives_from_its_pairs, .timeout = 60)
{
	enum { N = 4000 };
	static oracle_box boxes[N];
	test_random_boxes(boxes, N, 3, 30.0f, 3.0f, false, 4343);
	oracle_pairs want = oracle_find_pairs(boxes, N, 3);
	bp_world_def def = capped_def(BP_ALGO_SAP, 2);
	bp_world *w = test_world_from_def(boxes, N, &def);
	bp_view *view = NULL;
	cr_assert_eq(bp_frame_step(w, &view), BP_OK);
	// The pool's account holds this frame's arrays and the builder's chunk buffers.
	size_t held = atomic_load(&view->budget->held), derived = view_pair_bytes(view);
	cr_assert_gt(view->began.capacity, 0, "every pair of a first frame began");
	cr_assert_gt(held, derived, "the frame's %zu bytes of pair arrays are not all counted (%zu)", derived, held);
	bp_view_release(view);
	bp_world_destroy(w);

	// One byte less than the frame ended up holding cannot be enough.
	def.memory_limit = held - 1;
	w = test_world_from_def(boxes, N, &def);
	uint64_t frame;
	cr_assert_eq(bp_frame_submit(w, &frame), BP_OK);
	cr_assert_eq(bp_frame_wait(w, frame), BP_ERR_OUT_OF_MEMORY);
	cr_assert_eq(bp_world_set_memory_limit(w, 2 * held), BP_OK);
	cr_assert_eq(bp_frame_step(w, &view), BP_OK, "twice what the frame holds is not enough");
	size_t count;
	const bp_pair *pairs = bp_view_pairs(view, &count);
	cr_assert(oracle_same_pair_set(pairs, count, &want));
	bp_view_release(view);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
	oracle_pairs_free(&want);
}
