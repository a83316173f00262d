// SPDX-License-Identifier: MIT
// Allocation (alloc.c): BPI_ARRAY's growth, and failure (docs/design.md "Errors and statuses"): fail the k-th allocation for
// every k along a world's life; each failing call must return BP_ERR_OUT_OF_MEMORY, change nothing,
// and leak nothing.
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/core.h"
#include "incremental/incremental.h" // bpi_set_settle_min
#include "oracle.h"
#include "sanitizer_heap.h"

// ---- a counting host allocator that can fail on request ----------------------
// Every block carries a header with the size and alignment that were asked for,
// so frees with the wrong size or alignment are counted as mismatches. The hook
// runs on library worker threads, so it only touches atomics; the test asserts
// on them afterwards.

typedef struct block_header {
	size_t size, align;
} block_header;

static _Atomic uint64_t calls;        // allocations attempted since arming
static _Atomic uint64_t fail_at;      // 1-based allocation that returns NULL; 0 = never
static _Atomic uint64_t fail_from;    // allocations of this many bytes or more return NULL; 0 = none
static _Atomic uint64_t failures;     // allocations refused
static _Atomic int64_t live_bytes;    // as the hook sees them
static _Atomic int64_t live_blocks;
static _Atomic uint64_t mismatches;   // frees whose size/align differ from the allocation

static size_t header_offset(size_t align) { return align < sizeof(block_header) ? sizeof(block_header) : align; }

static void *counting_alloc(size_t size, size_t align, void *user)
{
	(void)user;
	uint64_t n = atomic_fetch_add(&calls, 1) + 1;
	uint64_t large = atomic_load(&fail_from);
	if (n == atomic_load(&fail_at) || (large && size >= large)) {
		atomic_fetch_add(&failures, 1);
		return NULL;
	}
	size_t offset = header_offset(align), base_align = offset;
	size_t total = (offset + size + base_align - 1) / base_align * base_align; // C11 aligned_alloc wants a multiple
	char *base = aligned_alloc(base_align, total);
	if (!base)
		return NULL;
	memset(base, 0xA5, total); // garbage, not what the last free left: lost contents read wrong every time
	char *ptr = base + offset;
	memcpy(ptr - sizeof(block_header), &(block_header){size, align}, sizeof(block_header));
	atomic_fetch_add(&live_bytes, (int64_t)size);
	atomic_fetch_add(&live_blocks, 1);
	return ptr;
}

static void counting_free(void *ptr, size_t size, size_t align, void *user)
{
	(void)user;
	if (!ptr)
		return;
	block_header h;
	memcpy(&h, (char *)ptr - sizeof h, sizeof h);
	if (h.size != size || h.align != align)
		atomic_fetch_add(&mismatches, 1);
	atomic_fetch_sub(&live_bytes, (int64_t)h.size);
	atomic_fetch_sub(&live_blocks, 1);
	free((char *)ptr - header_offset(h.align));
}

static const bp_allocator counting = {counting_alloc, counting_free, NULL};

static void arm(uint64_t k)
{
	atomic_store(&calls, 0);
	atomic_store(&failures, 0);
	atomic_store(&fail_at, k);
}

static void disarm(void) { atomic_store(&fail_at, 0); }

// ---- the life of a world, failing the k-th allocation -----------------------

enum { FIRST_N = 1000, SECOND_N = 200, TOTAL_N = FIRST_N + SECOND_N };

typedef struct scene {
	oracle_box boxes[TOTAL_N];
	float soa[6][TOTAL_N]; // min_x min_y min_z max_x max_y max_z
	oracle_pairs first_pairs, all_pairs;
} scene;

static scene *make_scene(void)
{
	scene *s = calloc(1, sizeof *s);
	// 1200 boxes of extent <= 4 in a 15^3 box: about 14000 pairs, so every
	// chunk's pair buffer allocates and some grow.
	test_random_boxes(s->boxes, TOTAL_N, 3, 15.0f, 4.0f, false, 2024);
	for (uint32_t i = 0; i < TOTAL_N; ++i)
		for (int k = 0; k < 3; ++k) {
			s->soa[k][i] = s->boxes[i].min[k];
			s->soa[3 + k][i] = s->boxes[i].max[k];
		}
	s->first_pairs = oracle_find_pairs(s->boxes, FIRST_N, 3);
	s->all_pairs = oracle_find_pairs(s->boxes, TOTAL_N, 3);
	cr_assert_gt(s->first_pairs.count, 3000, "scene too sparse to grow pair buffers");
	return s;
}

static void free_scene(scene *s)
{
	oracle_pairs_free(&s->first_pairs);
	oracle_pairs_free(&s->all_pairs);
	free(s);
}

static bp_bounds_arrays arrays_from(const scene *s, uint32_t first)
{
	return (bp_bounds_arrays){s->soa[0] + first, s->soa[1] + first, s->soa[2] + first, s->soa[3] + first,
		s->soa[4] + first, s->soa[5] + first};
}

/// The world holds exactly boxes [0, n) in dense order.
static void assert_holds(const bp_world *w, const scene *s, uint32_t n)
{
	cr_assert_eq(bp_world_entity_count(w), n);
	for (uint32_t i = 0; i < n; ++i) {
		bp_entity_def d;
		cr_assert_eq(bp_entity_get(w, bp_world_entity_at(w, i), &d), BP_OK);
		for (int k = 0; k < 3; ++k)
			cr_assert(d.min[k] == s->boxes[i].min[k] && d.max[k] == s->boxes[i].max[k], "dense %u changed", i);
	}
}

static void assert_pairs(const bp_world *w, const oracle_pairs *want, uint64_t k)
{
	size_t count;
	const bp_pair *pairs = bp_world_pairs(w, &count);
	cr_assert(oracle_same_pair_set(pairs, count, want), "k = %llu", (unsigned long long)k);
}

/// A call that may have hit the injected failure: if it did, it must have
/// failed cleanly; then it is retried with the allocator healthy.
#define EXPECT_OK_OR_OOM(w, call, k, unchanged)                                                                \
	do {                                                                                                       \
		uint64_t failures_before_ = atomic_load(&failures);                                                    \
		bp_status status_ = (call);                                                                            \
		if (status_ != BP_OK) {                                                                                \
			cr_assert_eq(status_, BP_ERR_OUT_OF_MEMORY, "k = %llu: %s returned %s", (unsigned long long)(k),   \
				#call, bp_status_string(status_));                                                             \
			cr_assert_eq(atomic_load(&failures), failures_before_ + 1,                                           \
				"k = %llu: %s failed without an injected failure in it",                                       \
				(unsigned long long)(k), #call);                                                               \
			cr_assert_str_not_empty(bp_world_last_error(w));                                                   \
			unchanged;                                                                                         \
			disarm();                                                                                          \
			cr_assert_eq((call), BP_OK, "k = %llu: retry of %s: %s", (unsigned long long)(k), #call,           \
				bp_world_last_error(w));                                                                       \
		}                                                                                                      \
	} while (0)

/// Runs the sequence with allocation k failing. Returns true when the sequence
/// made at least k allocations (so the failure was injected somewhere).
/// Everything the library allocated since arming came back, through the hook,
/// with the size and alignment it was allocated with; the hook is removed.
static void expect_all_freed(uint64_t k)
{
	cr_assert_eq(bp_allocated_bytes(), 0, "k = %llu: leak", (unsigned long long)k);
	cr_assert_eq(atomic_load(&live_blocks), 0, "k = %llu: blocks left", (unsigned long long)k);
	cr_assert_eq(atomic_load(&live_bytes), 0);
	cr_assert_eq(atomic_load(&mismatches), 0, "k = %llu: a free got another size or alignment than its alloc",
		(unsigned long long)k);
	bp_set_allocator(NULL);
}

static bool run_with_failure(const scene *s, uint64_t k, int threads)
{
	bp_set_allocator(&counting);
	arm(k);
	bp_world_def def = bp_world_def_default();
	def.algorithm = BP_ALGO_BRUTE;
	def.thread_count = threads;
	bp_world *w = NULL;
	bp_status status = bp_world_create(&def, &w);
	if (status != BP_OK) {
		cr_assert_eq(status, BP_ERR_OUT_OF_MEMORY, "k = %llu", (unsigned long long)k);
		cr_assert_null(w);
	} else {
		bp_entity_def common = bp_entity_def_default();
		bp_bounds_arrays first = arrays_from(s, 0), second = arrays_from(s, FIRST_N);

		EXPECT_OK_OR_OOM(w, bp_world_create_entities(w, FIRST_N, &first, &common, NULL), k, assert_holds(w, s, 0));
		EXPECT_OK_OR_OOM(w, bp_world_step(w), k, {
			assert_holds(w, s, FIRST_N);
			size_t count = 99;
			bp_world_pairs(w, &count);
			cr_assert_eq(count, 0, "k = %llu: a failed first step reported pairs", (unsigned long long)k);
			cr_assert_eq(bp_world_stats(w).frame, 0);
		});
		assert_pairs(w, &s->first_pairs, k);
		cr_assert_eq(atomic_load(&live_bytes), bp_allocated_bytes(), "the hook sees every counted byte");

		EXPECT_OK_OR_OOM(w, bp_world_create_entities(w, SECOND_N, &second, &common, NULL), k, {
			assert_holds(w, s, FIRST_N);
			assert_pairs(w, &s->first_pairs, k);
		});
		EXPECT_OK_OR_OOM(w, bp_world_step(w), k, {
			assert_holds(w, s, TOTAL_N);
			assert_pairs(w, &s->first_pairs, k); // the previous step's pairs are kept
			cr_assert_eq(bp_world_stats(w).frame, 1);
		});
		assert_pairs(w, &s->all_pairs, k);
		cr_assert_eq(bp_world_stats(w).frame, 2);
		bp_world_destroy(w);
	}
	bool injected = atomic_load(&calls) >= k;
	disarm();
	expect_all_freed(k);
	return injected;
}

static void fail_every_allocation(int threads)
{
	scene *s = make_scene();
	uint64_t k = 1;
	while (run_with_failure(s, k, threads)) {
		++k;
		cr_assert_lt(k, 100000, "the sequence never stops allocating");
	}
	// k - 1 allocations in a clean run; a world with a step must need a few dozen.
	cr_assert_gt(k - 1, 10, "only %llu allocations: is the hook used at all?", (unsigned long long)(k - 1));
	cr_log_info("threads %d: failed each of %llu allocations in turn", threads, (unsigned long long)(k - 1));
	free_scene(s);
}

Test(alloc, fail_each_allocation_1_thread, .timeout = 120) { fail_every_allocation(1); }
Test(alloc, fail_each_allocation_2_threads, .timeout = 120) { fail_every_allocation(2); }

// ---- canonical_pairs: the sort's buffer is optional ------------------------------------

/// The step's k-th allocation fails in a canonical world. A step either fails as
/// any step does, or succeeds with the oracle's pairs in (lo, hi) order: the sort's
/// second buffer, when refused, gives way to the in-place sort. Returns whether the
/// step made k allocations; counts in *fell_back the steps that lost one and
/// still succeeded.
static bool canonical_step_with_failure(const scene *s, uint64_t k, int threads, uint32_t *fell_back)
{
	bp_set_allocator(&counting);
	arm(0);
	bp_world_def def = bp_world_def_default();
	def.algorithm = BP_ALGO_GRID;
	def.thread_count = threads;
	def.canonical_pairs = true;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_entity_def common = bp_entity_def_default();
	bp_bounds_arrays first = arrays_from(s, 0);
	cr_assert_eq(bp_world_create_entities(w, FIRST_N, &first, &common, NULL), BP_OK);
	arm(k);
	bp_status status = bp_world_step(w);
	bool injected = atomic_load(&calls) >= k, refused = atomic_load(&failures) > 0;
	disarm();
	size_t count;
	const bp_pair *pairs = bp_world_pairs(w, &count);
	if (status == BP_OK) {
		*fell_back += refused;
		cr_assert_eq(count, s->first_pairs.count, "k = %llu", (unsigned long long)k);
		for (size_t i = 0; i < count; ++i)
			cr_assert(pairs[i].lo == s->first_pairs.data[i].lo && pairs[i].hi == s->first_pairs.data[i].hi,
				"k = %llu: pair %zu out of (lo, hi) order", (unsigned long long)k, i);
	} else {
		cr_assert_eq(status, BP_ERR_OUT_OF_MEMORY, "k = %llu", (unsigned long long)k);
		cr_assert_eq(count, 0, "k = %llu: a failed first step reported pairs", (unsigned long long)k);
	}
	bp_world_destroy(w);
	expect_all_freed(k);
	return injected;
}

Test(alloc, canonical_sort_falls_back_without_its_buffer, .timeout = 120)
{
	scene *s = make_scene();
	for (int threads = 1; threads <= 2; ++threads) {
		uint32_t fell_back = 0;
		uint64_t k = 1;
		while (canonical_step_with_failure(s, k, threads, &fell_back))
			cr_assert_lt(++k, 100000, "the step never stops allocating");
		cr_assert_gt(fell_back, 0, "%d threads: no refused allocation left the step standing", threads);
		cr_log_info("%d threads: %llu allocations, %u of them refused with the step still sorted", threads,
			(unsigned long long)(k - 1), fell_back);
	}
	free_scene(s);
}

// ---- an incremental step, failing the k-th allocation ----------------------------------
//
// An incremental world steps once (the full path), then entities move, are created and
// destroyed; the next step fails its k-th allocation. It must fail cleanly (the previous
// pairs kept, the changes still pending: a retry reports the new pairs) or succeed, and the
// world must go on giving the oracle's pairs.

enum { INC_N = 3000, INC_CLUSTER = 40, INC_CREATED = 8, INC_MAX = INC_N + INC_CREATED };

typedef struct inc_scene {
	oracle_box first[INC_N];    ///< the world of the first step
	uint32_t moved_count;       ///< entities given new bounds before the failing step
	uint32_t moved[INC_N];      ///< their dense indices
	oracle_box moved_to[INC_N]; ///< and bounds
	oracle_box created[INC_CREATED];
	uint32_t destroyed[2];      ///< creation numbers of the two destroyed, in list order
	uint32_t nudged[5];         ///< dense indices moved before the step after
	oracle_box second[INC_MAX], third[INC_MAX]; ///< the shadow at the failing step and after
	uint32_t second_n;
	oracle_pairs first_pairs, second_pairs, third_pairs;
} inc_scene;

static oracle_box cluster_box(uint32_t i)
{
	float lo = 10.0f + 0.01f * (float)i;
	return (oracle_box){.min = {lo, lo, lo}, .max = {lo + 1.5f, lo + 1.5f, lo + 1.5f}, .category = 1,
		.mask = UINT64_MAX};
}

/// Few changes (the step after takes the incremental path): INC_CLUSTER entities move
/// into one cluster, INC_CREATED are created in it, two are destroyed (one in the middle,
/// then the last). Many changes (the full path): most entities move, 200 into the cluster.
/// Either way the step's pairs outgrow the last step's pair buffer.
static inc_scene *make_inc_scene(bool many)
{
	inc_scene *s = calloc(1, sizeof *s);
	cr_assert_not_null(s);
	test_random_boxes(s->first, INC_N, 3, 40.0f, 2.0f, true, 77);
	s->moved_count = many ? INC_N * 4 / 5 : INC_CLUSTER;
	oracle_box scattered[INC_N];
	test_random_boxes(scattered, s->moved_count, 3, 40.0f, 2.0f, false, 78);
	for (uint32_t i = 0; i < s->moved_count; ++i) {
		s->moved[i] = many ? i * 5 / 4 : 37 * i + 5;
		s->moved_to[i] = i < (many ? 200u : INC_CLUSTER) ? cluster_box(i) : scattered[i];
		s->moved_to[i].category = s->first[s->moved[i]].category; // bounds only move
		s->moved_to[i].mask = s->first[s->moved[i]].mask;
		s->moved_to[i].is_static = s->first[s->moved[i]].is_static;
	}
	for (uint32_t i = 0; i < INC_CREATED; ++i)
		s->created[i] = cluster_box(1000 + i);
	s->destroyed[0] = 100;                    // a middle one: the last moves into its hole
	s->destroyed[1] = INC_N + INC_CREATED - 1; // the last created, now at 100

	// The shadow: creation numbers in dense order, swap-remove as the library.
	uint32_t ids[INC_MAX], n = INC_N;
	memcpy(s->second, s->first, sizeof s->first);
	for (uint32_t i = 0; i < INC_N; ++i)
		ids[i] = i;
	for (uint32_t i = 0; i < s->moved_count; ++i)
		s->second[s->moved[i]] = s->moved_to[i];
	for (uint32_t i = 0; i < INC_CREATED; ++i) {
		s->second[n] = s->created[i];
		ids[n++] = INC_N + i;
	}
	for (int i = 0; i < 2; ++i) {
		uint32_t d = 0;
		while (ids[d] != s->destroyed[i])
			++d;
		--n;
		s->second[d] = s->second[n];
		ids[d] = ids[n];
	}
	s->second_n = n;
	memcpy(s->third, s->second, sizeof s->second);
	static const uint32_t nudged[5] = {3, 50, 500, 1000, 2000};
	for (int i = 0; i < 5; ++i) {
		s->nudged[i] = nudged[i];
		s->third[nudged[i]].min[0] += 0.25f;
		s->third[nudged[i]].max[0] += 0.25f;
	}
	s->first_pairs = oracle_find_pairs(s->first, INC_N, 3);
	s->second_pairs = oracle_find_pairs(s->second, n, 3);
	s->third_pairs = oracle_find_pairs(s->third, n, 3);
	// The first step's buffer holds at most twice its pairs; the second step needs more.
	cr_assert_gt(s->second_pairs.count, 2 * s->first_pairs.count + 256, "the changes do not grow the pairs enough");
	return s;
}

static void free_inc_scene(inc_scene *s)
{
	oracle_pairs_free(&s->first_pairs);
	oracle_pairs_free(&s->second_pairs);
	oracle_pairs_free(&s->third_pairs);
	free(s);
}

static bp_bounds_arrays soa_of(float (*soa)[INC_N], const oracle_box *boxes, uint32_t count)
{
	for (uint32_t i = 0; i < count; ++i)
		for (int k = 0; k < 3; ++k) {
			soa[k][i] = boxes[i].min[k];
			soa[3 + k][i] = boxes[i].max[k];
		}
	return (bp_bounds_arrays){soa[0], soa[1], soa[2], soa[3], soa[4], soa[5]};
}

/// The world's pairs are exactly `want`, in its (lo, hi) order.
static void assert_pairs_in_order(const bp_world *w, const oracle_pairs *want, uint64_t k, const char *what)
{
	size_t count;
	const bp_pair *pairs = bp_world_pairs(w, &count);
	bool same = count == want->count && (count == 0 || memcmp(pairs, want->data, count * sizeof *pairs) == 0);
	if (!same)
		oracle_same_pair_set(pairs, count, want);
	cr_assert(same, "k = %llu, %s: %zu pairs, oracle %zu (or other pairs, or another order)", (unsigned long long)k,
		what, count, want->count);
}

/// Runs the life with the k-th allocation of the second step failing, or with `quiet`,
/// of a third step that changes nothing (the step in which the changed entities settle
/// when settling is on). Returns true when that step made at least k allocations;
/// active[0] receives its active_count, active[1] the last step's. debug_flags pick the
/// path the step takes (BP_DEBUG_ALWAYS_FULL or BP_DEBUG_ALWAYS_INCREMENTAL).
static bool incremental_step_with_failure(inc_scene *s, uint64_t k, int threads, uint32_t debug_flags, bool quiet,
	uint32_t active[2])
{
	static float soa[6][INC_N];
	bp_set_allocator(&counting);
	arm(0);
	bp_world_def def = bp_world_def_default();
	def.incremental = true;
	def.debug_flags = debug_flags; // the path this variant is for, whatever the timings
	def.thread_count = threads;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_entity handles[INC_MAX];
	bp_entity_def common = bp_entity_def_default();
	// The first boxes have filters of their own: created one by one.
	for (uint32_t i = 0; i < INC_N; ++i) {
		bp_entity_def e = common;
		memcpy(e.min, s->first[i].min, sizeof e.min);
		memcpy(e.max, s->first[i].max, sizeof e.max);
		e.category = s->first[i].category;
		e.mask = s->first[i].mask;
		e.kind = s->first[i].is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
		cr_assert_eq(bp_entity_create(w, &e, &handles[i]), BP_OK);
	}
	cr_assert_eq(bp_world_step(w), BP_OK);
	assert_pairs_in_order(w, &s->first_pairs, k, "first step");

	bp_bounds_arrays arrays = soa_of(soa, s->moved_to, s->moved_count);
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_indices(s->moved_count, s->moved), &arrays), BP_OK);
	arrays = soa_of(soa, s->created, INC_CREATED);
	cr_assert_eq(bp_world_create_entities(w, INC_CREATED, &arrays, &common, handles + INC_N), BP_OK);
	bp_entity gone[2] = {handles[s->destroyed[0]], handles[s->destroyed[1]]};
	cr_assert_eq(bp_world_destroy_entities(w, 2, gone), BP_OK);
	cr_assert_eq(bp_world_entity_count(w), s->second_n);

	if (quiet) {
		cr_assert_eq(bp_world_step(w), BP_OK);
		assert_pairs_in_order(w, &s->second_pairs, k, "the step after the changes");
	}
	const uint64_t frame = quiet ? 3 : 2; // of the step that fails
	size_t before_count;
	const bp_pair *before_pairs = bp_world_pairs(w, &before_count);
	bp_pair *before = malloc((before_count + 1) * sizeof *before);
	cr_assert_not_null(before);
	memcpy(before, before_pairs, before_count * sizeof *before);
	arm(k);
	bp_status status = bp_world_step(w);
	bool injected = atomic_load(&calls) >= k;
	uint64_t failed = atomic_load(&failures);
	disarm();
	if (status != BP_OK) {
		cr_assert_eq(status, BP_ERR_OUT_OF_MEMORY, "k = %llu: %s", (unsigned long long)k, bp_status_string(status));
		cr_assert_eq(failed, 1, "k = %llu: failed without an injected failure", (unsigned long long)k);
		cr_assert_str_not_empty(bp_world_last_error(w));
		cr_assert_eq(bp_world_stats(w).frame, frame - 1, "k = %llu", (unsigned long long)k);
		size_t count;
		const bp_pair *pairs = bp_world_pairs(w, &count);
		cr_assert(count == before_count && (count == 0 || memcmp(pairs, before, count * sizeof *pairs) == 0),
			"k = %llu: a failed step changed the pairs (%zu of %zu left)", (unsigned long long)k, count,
			before_count);
		cr_assert_eq(bp_world_step(w), BP_OK, "k = %llu: retry: %s", (unsigned long long)k, bp_world_last_error(w));
	}
	free(before);
	assert_pairs_in_order(w, &s->second_pairs, k, quiet ? "the quiet step" : "the step after the changes");
	cr_assert_eq(bp_world_stats(w).frame, frame);
	active[0] = bp_world_stats(w).active_count;

	// The world goes on: a few more moves, one more step.
	for (int i = 0; i < 5; ++i) {
		uint32_t d = s->nudged[i];
		cr_assert_eq(bp_entity_set_bounds(w, bp_world_entity_at(w, d), s->third[d].min, s->third[d].max), BP_OK);
	}
	cr_assert_eq(bp_world_step(w), BP_OK);
	assert_pairs_in_order(w, &s->third_pairs, k, "the step after");
	active[1] = bp_world_stats(w).active_count;

	bp_world_destroy(w);
	expect_all_freed(k);
	return injected;
}

static void fail_incremental_step(bool many, int threads)
{
	inc_scene *s = make_inc_scene(many);
	uint64_t k = 1;
	uint32_t active[2] = {0, 0};
	uint32_t path = many ? BP_DEBUG_ALWAYS_FULL : BP_DEBUG_ALWAYS_INCREMENTAL;
	while (incremental_step_with_failure(s, k, threads, path, false, active)) {
		++k;
		cr_assert_lt(k, 100000, "the step never stops allocating");
	}
	cr_assert_gt(k - 1, 3, "only %llu allocations in the step", (unsigned long long)(k - 1));
	// The clean run took the path this variant is for.
	if (many)
		cr_assert_eq(active[0], s->second_n, "most entities moved, yet %u were searched", active[0]);
	else
		cr_assert_eq(active[0], INC_CLUSTER + INC_CREATED - 1, "few changed, yet %u were searched", active[0]);
	cr_log_info("%s changes, threads %d: failed each of %llu allocations of the step in turn", many ? "many" : "few",
		threads, (unsigned long long)(k - 1));
	free_inc_scene(s);
}

Test(alloc, incremental_step_few_changes_1_thread, .timeout = 120) { fail_incremental_step(false, 1); }
Test(alloc, incremental_step_few_changes_2_threads, .timeout = 120) { fail_incremental_step(false, 2); }
Test(alloc, incremental_step_many_changes_2_threads, .timeout = 120) { fail_incremental_step(true, 2); }

// The changed entities settle at the end of the quiet step; every allocation of that
// step fails in turn (settling that finds no memory leaves them active, exact too).
Test(alloc, incremental_step_that_settles, .timeout = 120)
{
	bpi_set_settle_min(1);
	inc_scene *s = make_inc_scene(false);
	uint64_t k = 1;
	uint32_t active[2] = {0, 0};
	while (incremental_step_with_failure(s, k, 2, BP_DEBUG_ALWAYS_INCREMENTAL, true, active)) {
		++k;
		cr_assert_lt(k, 100000, "the step never stops allocating");
	}
	cr_assert_gt(k - 1, 3, "only %llu allocations in the step", (unsigned long long)(k - 1));
	// The clean run: the quiet step still had the changed entities active, and they
	// had settled by the step after, which had only the five nudged ones.
	cr_assert_eq(active[0], INC_CLUSTER + INC_CREATED - 1, "%u active in the quiet step", active[0]);
	cr_assert_eq(active[1], 5, "%u active in the step after: nothing settled", active[1]);
	cr_log_info("settling: failed each of %llu allocations of the step in turn", (unsigned long long)(k - 1));
	free_inc_scene(s);
	bpi_set_settle_min(1024);
}

/// Random boxes, and a copy of them where `count` entities (every stride-th from
/// `first`) moved into one cluster, all overlapping, so a lost move loses pairs;
/// moved[] and moved_to[] say which and where.
static void cluster_moves(oracle_box *boxes, oracle_box *expected, uint32_t n, uint64_t seed, uint32_t *moved,
	oracle_box *moved_to, uint32_t count, uint32_t stride, uint32_t first)
{
	test_random_boxes(boxes, n, 3, 40.0f, 2.0f, false, seed);
	memcpy(expected, boxes, n * sizeof *boxes);
	for (uint32_t i = 0; i < count; ++i) {
		moved[i] = stride * i + first;
		moved_to[i] = cluster_box(i);
		expected[moved[i]] = moved_to[i];
	}
}

/// The changes a world records between steps live in a list that grows with them. When
/// it cannot grow, the call still succeeds: nothing is lost, the next step searches every
/// entity. Each allocation of 40 moves fails in turn, in a world whose list is empty
/// (its creation could not record the 2000 entities it created either, so the first
/// step left the list with no room) and whose next step would otherwise search the 40
/// moved entities alone: a move not recorded would leave pairs out.
Test(alloc, incremental_changes_failing_each_allocation, .timeout = 120)
{
	enum { N = 2000, MOVED = 40 };
	static oracle_box boxes[N], expected[N];
	static float soa[6][INC_N];
	uint32_t moved[MOVED];
	oracle_box moved_to[MOVED];
	cluster_moves(boxes, expected, N, 79, moved, moved_to, MOVED, 37, 5);
	oracle_pairs first_pairs = oracle_find_pairs(boxes, N, 3), want = oracle_find_pairs(expected, N, 3);
	bp_entity_def common = bp_entity_def_default();
	bp_bounds_arrays all = soa_of(soa, boxes, N);

	// The first allocation of the creation that fails without failing the call: the
	// list of changes (the arrays of the entities are allocated first, all or nothing).
	uint64_t absorbed = 0;
	bp_set_allocator(&counting);
	for (uint64_t j = 1; !absorbed; ++j) {
		cr_assert_lt(j, 1000, "every failed allocation of the creation failed it");
		bp_world_def def = bp_world_def_default();
		def.incremental = true;
		def.debug_flags = BP_DEBUG_ALWAYS_INCREMENTAL; // the incremental path, whatever the timings
		bp_world *w = NULL;
		arm(0);
		cr_assert_eq(bp_world_create(&def, &w), BP_OK);
		arm(j);
		bp_status status = bp_world_create_entities(w, N, &all, &common, NULL);
		cr_assert(status == BP_OK || status == BP_ERR_OUT_OF_MEMORY);
		if (status == BP_OK && atomic_load(&failures) == 1)
			absorbed = j;
		disarm();
		bp_world_destroy(w);
	}
	bp_set_allocator(NULL);

	uint64_t k = 1;
	for (bool injected = true; injected; ++k) {
		bp_set_allocator(&counting);
		arm(0);
		bp_world_def def = bp_world_def_default();
		def.incremental = true;
		def.debug_flags = BP_DEBUG_ALWAYS_INCREMENTAL; // the incremental path, whatever the timings
		def.thread_count = 2;
		bp_world *w = NULL;
		cr_assert_eq(bp_world_create(&def, &w), BP_OK);
		arm(absorbed);
		all = soa_of(soa, boxes, N);
		cr_assert_eq(bp_world_create_entities(w, N, &all, &common, NULL), BP_OK);
		cr_assert_eq(atomic_load(&failures), 1);
		disarm();
		cr_assert_eq(bp_world_step(w), BP_OK);
		assert_pairs_in_order(w, &first_pairs, k, "the first step");

		arm(k);
		bp_bounds_arrays arrays = soa_of(soa, moved_to, MOVED);
		cr_assert_eq(bp_entities_set_bounds(w, bp_target_indices(MOVED, moved), &arrays), BP_OK, "k = %llu: %s",
			(unsigned long long)k, bp_world_last_error(w));
		injected = atomic_load(&calls) >= k;
		disarm();
		cr_assert_eq(bp_world_step(w), BP_OK, "k = %llu: %s", (unsigned long long)k, bp_world_last_error(w));
		assert_pairs_in_order(w, &want, k, "the step after the moves");
		if (!injected)
			cr_assert_eq(bp_world_stats(w).active_count, MOVED, "with no failure, the moved entities alone");
		cr_assert_eq(bp_world_step(w), BP_OK);
		assert_pairs_in_order(w, &want, k, "a step with no change");

		bp_world_destroy(w);
		expect_all_freed(k);
		cr_assert_lt(k, 100000, "the moves never stop allocating");
	}
	cr_assert_gt(k - 2, 1, "only %llu allocations in the moves", (unsigned long long)(k - 2));
	cr_log_info("incremental changes: failed each of %llu allocations of the moves in turn", (unsigned long long)(k - 2));
	oracle_pairs_free(&first_pairs);
	oracle_pairs_free(&want);
}

// ---- a step out of memory stops at its first failed allocation ----------------------
//
// Identical points, every pair overlapping: 3000 make 4,498,500 pairs (36 MB). Every
// allocation of 256 KiB or more fails, as under an address-space cap, so a chunk's pair
// buffer fails when it grows past 16,384 pairs. The step must fail after that one refused
// allocation (one per thread that reached it at the same moment), not ask again for every
// pair still to come, and must leave the world as it was.

enum { SAME_N = 3000 };

static void failed_growth_stops_the_step(bp_algorithm algorithm, int threads)
{
	static oracle_box points[SAME_N];
	for (uint32_t i = 0; i < SAME_N; ++i)
		points[i] = (oracle_box){.min = {1, 2, 3}, .max = {1, 2, 3}, .category = 1, .mask = UINT64_MAX};
	oracle_pairs all = oracle_find_pairs(points, SAME_N, 3);
	cr_assert_eq(all.count, (size_t)SAME_N * (SAME_N - 1) / 2);

	bp_set_allocator(&counting);
	arm(0);
	bp_world *w = test_world_from_boxes(points, SAME_N, 3, algorithm, threads);
	arm(0);
	atomic_store(&fail_from, 256 * 1024);
	bp_status status = bp_world_step(w);
	uint64_t asked = atomic_load(&calls), refused = atomic_load(&failures);
	atomic_store(&fail_from, 0);
	cr_assert_eq(status, BP_ERR_OUT_OF_MEMORY, "%s: %s", bp_algorithm_name(algorithm), bp_status_string(status));
	cr_assert(refused >= 1 && refused <= (uint64_t)threads,
		"%s, %d threads: %llu allocations refused; the step went on asking after the first",
		bp_algorithm_name(algorithm), threads, (unsigned long long)refused);
	cr_log_info("%s, %d threads: %llu allocations asked for, %llu refused", bp_algorithm_name(algorithm), threads,
		(unsigned long long)asked, (unsigned long long)refused);
	size_t count = 99;
	bp_world_pairs(w, &count);
	cr_assert_eq(count, 0, "a failed first step reported pairs");
	cr_assert_eq(bp_world_stats(w).frame, 0);

	cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
	const bp_pair *pairs = bp_world_pairs(w, &count);
	cr_assert(oracle_same_pair_set(pairs, count, &all));
	bp_world_destroy(w);
	expect_all_freed(0);
	oracle_pairs_free(&all);
}

static const bp_algorithm every_algorithm[] = {BP_ALGO_BRUTE, BP_ALGO_SAP, BP_ALGO_GRID, BP_ALGO_HASH,
	BP_ALGO_SHIFTS, BP_ALGO_BUCKETS, BP_ALGO_QUADTREE, BP_ALGO_CLOSEST, BP_ALGO_AUTO};

Test(alloc, a_failed_growth_stops_the_step_1_thread, .timeout = 120)
{
	for (size_t i = 0; i < sizeof every_algorithm / sizeof every_algorithm[0]; ++i)
		failed_growth_stops_the_step(every_algorithm[i], 1);
}

Test(alloc, a_failed_growth_stops_the_step_2_threads, .timeout = 120)
{
	for (size_t i = 0; i < sizeof every_algorithm / sizeof every_algorithm[0]; ++i)
		failed_growth_stops_the_step(every_algorithm[i], 2);
}

Test(alloc, hook_sees_every_allocation, .timeout = 30)
{
	bp_set_allocator(&counting);
	arm(0);
	scene *s = make_scene();
	bp_world *w = test_world_from_boxes(s->boxes, 200, 3, BP_ALGO_BRUTE, 2);
	cr_assert_eq(bp_world_step(w), BP_OK);
	cr_assert_gt(atomic_load(&calls), 0);
	cr_assert_gt(bp_allocated_bytes(), 0);
	cr_assert_eq(atomic_load(&live_bytes), bp_allocated_bytes());
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
	cr_assert_eq(atomic_load(&live_blocks), 0);
	cr_assert_eq(atomic_load(&mismatches), 0);
	bp_set_allocator(NULL);
	// Back on the default allocator: allocations are counted but no longer reach the hook.
	uint64_t before = atomic_load(&calls);
	w = test_world_from_boxes(s->boxes, 10, 3, BP_ALGO_BRUTE, 1);
	cr_assert_gt(bp_allocated_bytes(), 0);
	cr_assert_eq(atomic_load(&calls), before);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
	free_scene(s);
}

/// A published view holds `want`'s pairs, in order, and its query index finds
/// what a scan of `boxes` finds.
static void assert_view_holds(const bp_view *v, const oracle_pairs *want, const oracle_box *boxes, uint32_t n,
	uint64_t k, const char *what)
{
	size_t count;
	const bp_pair *pairs = bp_view_pairs(v, &count);
	cr_assert(count == want->count && (count == 0 || memcmp(pairs, want->data, count * sizeof *pairs) == 0),
		"k = %llu: %s: %zu pairs, oracle %zu (or another order)", (unsigned long long)k, what, count, want->count);
	const float lo[3] = {8, 8, 8}, hi[3] = {14, 14, 14};
	uint32_t got[64];
	size_t total = 0, expected = 0;
	cr_assert_eq(bp_view_overlap_box(v, lo, hi, NULL, got, 64, &total), total > 64 ? BP_ERR_OUT_OF_RANGE : BP_OK);
	for (uint32_t i = 0; i < n; ++i) {
		bool inside = true;
		for (int a = 0; a < 3; ++a)
			inside = inside && boxes[i].min[a] <= hi[a] && lo[a] <= boxes[i].max[a];
		expected += inside;
	}
	cr_assert_eq(total, expected, "k = %llu: %s: the box query", (unsigned long long)k, what);
}

/// A view of an incremental world after some entities moved, taken as a frame
/// (bp_frame_step) or as a world view (a bp_world_step, then bp_world_view): every
/// allocation of the call fails in turn. It fails cleanly (BP_ERR_OUT_OF_MEMORY, no
/// view) or holds exactly the oracle's pairs (a world view, none) and answers exactly,
/// and the view after it is exact either way: a failed call keeps the world's marks of
/// what changed, which the next snapshot copies.
static void fail_each_allocation_of_a_view(bool world_view)
{
	enum { N = 1500, MOVED = 30 };
	static oracle_box boxes[N], expected[N];
	static float soa[6][INC_N];
	uint32_t moved[MOVED];
	oracle_box moved_to[MOVED];
	cluster_moves(boxes, expected, N, world_view ? 83 : 81, moved, moved_to, MOVED, 41, world_view ? 5 : 3);
	const oracle_pairs none = {NULL, 0};
	oracle_pairs first = world_view ? none : oracle_find_pairs(boxes, N, 3);
	oracle_pairs want = world_view ? none : oracle_find_pairs(expected, N, 3);
	const char *what = world_view ? "world view" : "frame";
	bp_entity_def common = bp_entity_def_default();
	uint64_t k = 1;
	for (bool injected = true; injected; ++k) {
		bp_set_allocator(&counting);
		arm(0);
		bp_world_def def = bp_world_def_default();
		def.incremental = true;
		def.debug_flags = world_view ? 0 : BP_DEBUG_ALWAYS_INCREMENTAL; // a frame's step: the incremental path
		def.thread_count = 2;
		bp_world *w = NULL;
		cr_assert_eq(bp_world_create(&def, &w), BP_OK);
		bp_bounds_arrays all = soa_of(soa, boxes, N);
		cr_assert_eq(bp_world_create_entities(w, N, &all, &common, NULL), BP_OK);
		bp_view *v = NULL;
		cr_assert_eq(world_view ? bp_world_step(w) : BP_OK, BP_OK);
		cr_assert_eq(world_view ? bp_world_view(w, &v) : bp_frame_step(w, &v), BP_OK);
		assert_view_holds(v, &first, boxes, N, k, "the first view"); // asks for its query index
		cr_assert_eq(bp_view_release(v), BP_OK);
		bp_bounds_arrays arrays = soa_of(soa, moved_to, MOVED);
		cr_assert_eq(bp_entities_set_bounds(w, bp_target_indices(MOVED, moved), &arrays), BP_OK);
		cr_assert_eq(world_view ? bp_world_step(w) : BP_OK, BP_OK);

		arm(k);
		bp_status status = world_view ? bp_world_view(w, &v) : bp_frame_step(w, &v);
		injected = atomic_load(&calls) >= k;
		disarm();
		if (status == BP_OK) {
			assert_view_holds(v, &want, expected, N, k, "a view that absorbed the failure");
			cr_assert_eq(bp_view_release(v), BP_OK);
		} else {
			cr_assert_eq(status, BP_ERR_OUT_OF_MEMORY, "k = %llu", (unsigned long long)k);
			cr_assert_null(v);
		}
		status = world_view ? bp_world_view(w, &v) : bp_frame_step(w, &v);
		cr_assert_eq(status, BP_OK, "k = %llu: %s", (unsigned long long)k, bp_world_last_error(w));
		assert_view_holds(v, &want, expected, N, k, "the view after");
		cr_assert_eq(bp_view_release(v), BP_OK);

		bp_world_destroy(w);
		expect_all_freed(k);
		cr_assert_lt(k, 100000, "the %s never stops allocating", what);
	}
	cr_assert_gt(k - 2, world_view ? 3u : 5u, "only %llu allocations in the %s", (unsigned long long)(k - 2), what);
	cr_log_info("%s: failed each of %llu allocations in turn", what, (unsigned long long)(k - 2));
	if (!world_view) {
		oracle_pairs_free(&first);
		oracle_pairs_free(&want);
	}
}

Test(alloc, incremental_frame_failing_each_allocation, .timeout = 120) { fail_each_allocation_of_a_view(false); }
Test(alloc, world_view_failing_each_allocation, .timeout = 120) { fail_each_allocation_of_a_view(true); }

/// The frames after a failed one go on changing the world: an incremental 2D world
/// of 2,000 boxes on 1 thread moves 20 and creates 10 each frame, and the k-th
/// allocation of frame 3 fails (in the submit's copy, the step or the view's derived
/// arrays). Whether frame 3 fails or absorbs it, every later frame equals the oracle
/// exactly: the builder's incremental state must not run ahead of the latest frame.
enum { FRAMES_N = 2000, FRAMES_MOVED = 20, FRAMES_CREATED = 10, FRAMES = 7 };
enum { FRAMES_MAX = FRAMES_N + FRAMES * FRAMES_CREATED };

static oracle_box frames_box(test_rng *rng)
{
	oracle_box b = {.category = 1, .mask = UINT64_MAX};
	for (int a = 0; a < 2; ++a) {
		b.min[a] = test_rng_float(rng, 0, 100);
		b.max[a] = b.min[a] + test_rng_float(rng, 0.5f, 3);
	}
	return b;
}

/// Frames 1 .. FRAMES with the k-th allocation of frame 3 failing; true when
/// frame 3 made at least k allocations.
static bool frames_with_failure(uint64_t k)
{
	static oracle_box boxes[FRAMES_MAX];
	static bp_entity handles[FRAMES_MAX];
	test_rng rng = {2026};
	uint32_t n = FRAMES_N;
	for (uint32_t i = 0; i < n; ++i)
		boxes[i] = frames_box(&rng);
	bp_set_allocator(&counting);
	arm(0);
	bp_world_def def = bp_world_def_default();
	def.dims = 2;
	def.incremental = true;
	def.thread_count = 1;
	bp_world *w = test_world_from_def(boxes, n, &def);
	for (uint32_t i = 0; i < n; ++i)
		handles[i] = bp_world_entity_at(w, i);
	bool injected = false;
	for (int frame = 1; frame <= FRAMES; ++frame) {
		if (frame > 1) {
			for (uint32_t m = 0; m < FRAMES_MOVED; ++m) {
				uint32_t i = test_rng_below(&rng, n);
				boxes[i] = frames_box(&rng);
				cr_assert_eq(bp_entity_set_bounds(w, handles[i], boxes[i].min, boxes[i].max), BP_OK);
			}
			for (uint32_t c = 0; c < FRAMES_CREATED; ++c) {
				boxes[n] = frames_box(&rng);
				bp_entity_def d = bp_entity_def_default();
				memcpy(d.min, boxes[n].min, sizeof d.min);
				memcpy(d.max, boxes[n].max, sizeof d.max);
				cr_assert_eq(bp_entity_create(w, &d, &handles[n]), BP_OK);
				++n;
			}
		}
		if (frame == 3)
			arm(k);
		bp_view *v = NULL;
		bp_status status = bp_frame_step(w, &v);
		if (frame == 3) {
			injected = atomic_load(&calls) >= k;
			disarm();
		}
		if (status != BP_OK) {
			cr_assert_eq(frame, 3, "k = %llu: frame %d: %s", (unsigned long long)k, frame, bp_world_last_error(w));
			cr_assert_eq(status, BP_ERR_OUT_OF_MEMORY, "k = %llu", (unsigned long long)k);
			continue;
		}
		oracle_pairs want = oracle_find_pairs(boxes, n, 2);
		size_t count;
		const bp_pair *pairs = bp_view_pairs(v, &count);
		cr_assert_eq(bp_view_entity_count(v), n);
		cr_assert(count == want.count && (count == 0 || memcmp(pairs, want.data, count * sizeof *pairs) == 0),
			"k = %llu: frame %d: %zu pairs, oracle %zu (or another order)", (unsigned long long)k, frame, count,
			want.count);
		oracle_pairs_free(&want);
		cr_assert_eq(bp_view_release(v), BP_OK);
	}
	bp_world_destroy(w);
	expect_all_freed(k);
	return injected;
}

Test(alloc, frames_after_a_failed_build_change_the_world, .timeout = 240)
{
	uint64_t k = 1;
	while (frames_with_failure(k)) {
		++k;
		cr_assert_lt(k, 100000, "the frame never stops allocating");
	}
	cr_assert_gt(k - 1, 10, "only %llu allocations in frame 3", (unsigned long long)(k - 1));
	cr_log_info("frames after a failed build: failed each of %llu allocations in turn", (unsigned long long)(k - 1));
}

/// A reader used the neighbour lists last frame, so the builder makes them for the
/// next; when their allocation fails the frame still publishes (its pairs are
/// whole), and the first reader to ask once memory is back gets the lists, which
/// equal the oracle's: a failure is not kept as the answer.
Test(alloc, neighbour_lists_that_found_no_memory_are_made_when_asked, .timeout = 120)
{
	enum { N = 600 };
	static oracle_box boxes[N];
	test_random_boxes(boxes, N, 3, 12.0f, 1.5f, false, 909);
	oracle_pairs want = oracle_find_pairs(boxes, N, 3);
	uint32_t degree[N] = {0};
	for (size_t i = 0; i < want.count; ++i)
		++degree[want.data[i].lo], ++degree[want.data[i].hi];
	uint64_t k = 1, published_without = 0;
	for (bool injected = true; injected; ++k) {
		bp_set_allocator(&counting);
		arm(0);
		bp_world_def def = bp_world_def_default();
		def.thread_count = 1;
		bp_world *w = test_world_from_def(boxes, N, &def);
		bp_view *v = NULL;
		cr_assert_eq(bp_frame_step(w, &v), BP_OK);
		const uint32_t *list;
		size_t count;
		cr_assert_eq(bp_view_neighbours(v, 0, &list, &count), BP_OK); // asked: the next frame makes them
		cr_assert_eq(bp_view_release(v), BP_OK);
		arm(k);
		bp_status status = bp_frame_step(w, &v);
		injected = atomic_load(&calls) >= k;
		disarm();
		if (status == BP_OK) {
			published_without += !(atomic_load(&failures) == 0);
			for (uint32_t e = 0; e < N; ++e) {
				cr_assert_eq(bp_view_neighbours(v, e, &list, &count), BP_OK, "k = %llu, entity %u",
					(unsigned long long)k, e);
				cr_assert_eq(count, degree[e], "k = %llu, entity %u", (unsigned long long)k, e);
			}
			cr_assert_eq(bp_view_release(v), BP_OK);
		} else {
			cr_assert_eq(status, BP_ERR_OUT_OF_MEMORY);
		}
		bp_world_destroy(w);
		expect_all_freed(k);
		cr_assert_lt(k, 100000, "the frame never stops allocating");
	}
	cr_assert_gt(published_without, 0, "no frame published past a failed allocation: nothing was tested");
	oracle_pairs_free(&want);
}

/// Algorithms that keep last step's order (sap, closest) or structure (quadtree)
/// across steps: a step that fails after growing their arrays must leave nothing
/// stale behind. One entity, then three with the k-th allocation of their step
/// failing, then one again: that step equals the oracle (no pair), and one more
/// with the three again too.
Test(alloc, a_failed_step_leaves_no_stale_order, .timeout = 120)
{
	static const oracle_box boxes[3] = {
		{.min = {0, 0, 0}, .max = {1, 1, 1}, .category = 1, .mask = UINT64_MAX},
		{.min = {0.5f, 0.5f, 0.5f}, .max = {2, 2, 2}, .category = 1, .mask = UINT64_MAX},
		{.min = {1.5f, 1.5f, 1.5f}, .max = {3, 3, 3}, .category = 1, .mask = UINT64_MAX},
	};
	oracle_pairs none = {0}, all = oracle_find_pairs(boxes, 3, 3);
	for (int a = BP_ALGO_BRUTE; a < BP_ALGO_COUNT; ++a) {
		if (!bp_algorithm_available((bp_algorithm)a))
			continue;
		uint64_t k = 1;
		for (bool injected = true; injected; ++k) {
			bp_set_allocator(&counting);
			arm(0);
			bp_world_def def = bp_world_def_default();
			def.algorithm = (bp_algorithm)a;
			def.thread_count = 1;
			bp_world *w = test_world_from_def(boxes, 1, &def);
			cr_assert_eq(bp_world_step(w), BP_OK);
			bp_entity_def e = bp_entity_def_default();
			bp_entity more[2];
			for (int i = 0; i < 2; ++i) {
				memcpy(e.min, boxes[1 + i].min, sizeof e.min);
				memcpy(e.max, boxes[1 + i].max, sizeof e.max);
				cr_assert_eq(bp_entity_create(w, &e, &more[i]), BP_OK);
			}
			arm(k);
			bp_status status = bp_world_step(w);
			injected = atomic_load(&calls) >= k;
			disarm();
			cr_assert(status == BP_OK || status == BP_ERR_OUT_OF_MEMORY);
			cr_assert_eq(bp_world_destroy_entities(w, 2, more), BP_OK);
			cr_assert_eq(bp_world_step(w), BP_OK, "%s, k = %llu", bp_algorithm_name((bp_algorithm)a),
				(unsigned long long)k);
			assert_pairs(w, &none, k);
			for (int i = 0; i < 2; ++i)
				cr_assert_eq(bp_entity_create(w, &e, &more[i]), BP_OK);
			cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(1, 2), &(bp_bounds_arrays){
				(float[]){0.5f, 1.5f}, (float[]){0.5f, 1.5f}, (float[]){0.5f, 1.5f},
				(float[]){2, 3}, (float[]){2, 3}, (float[]){2, 3}}), BP_OK);
			cr_assert_eq(bp_world_step(w), BP_OK);
			assert_pairs(w, &all, k);
			bp_world_destroy(w);
			expect_all_freed(k);
			cr_assert_lt(k, 10000, "the step never stops allocating");
		}
	}
	oracle_pairs_free(&all);
}

// ---- BPI_ARRAY, the growable scratch array of core.h ---------------------------

typedef struct triple {
	double x, y, z;
} triple; // 24 bytes: element sizes other than a power of two

Test(alloc, array_reserve_grows_to_the_need_and_by_half, .timeout = 30)
{
	BPI_ARRAY(uint32_t) a = {0};
	cr_assert(bpi_array_reserve(&a, 0));
	cr_assert_not_null(a.data, "room for nothing still has storage: data + 0 must not be NULL + 0");
	cr_assert_eq(a.capacity, 1);
	uint32_t *least = a.data;
	cr_assert(bpi_array_reserve(&a, 0));
	cr_assert(a.data == least && a.capacity == 1, "a second reserve of nothing moves nothing");
	cr_assert(bpi_array_reserve(&a, 10));
	cr_assert_geq(a.capacity, 10);
	cr_assert_eq((uintptr_t)a.data % BP_CACHE_LINE, 0, "cache-line aligned");
	uint32_t *data = a.data;
	size_t capacity = a.capacity;
	cr_assert(bpi_array_reserve(&a, 7));
	cr_assert(a.data == data && a.capacity == capacity, "a need within the capacity moves nothing");
	cr_assert(bpi_array_reserve(&a, capacity + 1));
	cr_assert_geq(a.capacity, capacity + capacity / 2, "one more than the capacity grows it by half");
	cr_assert_geq(a.capacity, 15); // 10 * 1.5
	cr_assert(bpi_array_reserve(&a, 1000));
	cr_assert_geq(a.capacity, 1000, "a need beyond half again is met in full");
	a.data[999] = 1; // the room is there (ASan checks)
	bpi_array_free(&a);
}

Test(alloc, array_grow_keeps_the_first_count_elements, .timeout = 30)
{
	BPI_ARRAY(triple) a = {0};
	cr_assert(bpi_array_reserve(&a, 4));
	for (int i = 0; i < 4; ++i)
		a.data[i] = (triple){i, 10.0 * i, -0.5 * i};
	cr_assert(bpi_array_grow(&a, 3, 100));
	cr_assert_geq(a.capacity, 100);
	for (int i = 0; i < 3; ++i)
		cr_assert(a.data[i].x == i && a.data[i].y == 10.0 * i && a.data[i].z == -0.5 * i, "element %d lost", i);
	triple *data = a.data;
	cr_assert(bpi_array_grow(&a, 3, 50));
	cr_assert_eq(a.data, data, "a need within the capacity moves nothing");
	cr_assert(a.data[2].x == 2 && a.data[2].y == 20.0 && a.data[2].z == -1.0);
	bpi_array_free(&a);
}

Test(alloc, array_free_returns_every_byte, .timeout = 30)
{
	const int64_t before = bp_allocated_bytes();
	BPI_ARRAY(triple) a = {0};
	bpi_array_free(&a); // an empty array: nothing to free
	cr_assert_eq(bp_allocated_bytes(), before);
	cr_assert(bpi_array_reserve(&a, 10));
	cr_assert_geq(bp_allocated_bytes() - before, 240); // 10 x 24 bytes at least
	cr_assert_eq(bp_allocated_bytes() - before, (int64_t)(a.capacity * sizeof(triple)));
	cr_assert(bpi_array_grow(&a, 10, 11));
	cr_assert_eq(bp_allocated_bytes() - before, (int64_t)(a.capacity * sizeof(triple)), "the old block is freed");
	bpi_array_free(&a);
	cr_assert_null(a.data);
	cr_assert_eq(a.capacity, 0);
	cr_assert_eq(bp_allocated_bytes(), before);
}

Test(alloc, array_reserve_failure_leaves_the_array_untouched, .timeout = 30)
{
	bp_set_allocator(&counting);
	arm(1); // the next allocation fails
	BPI_ARRAY(uint32_t) a = {0};
	cr_assert_not(bpi_array_reserve(&a, 10));
	cr_assert(a.data == NULL && a.capacity == 0);
	cr_assert_eq(atomic_load(&failures), 1);

	disarm();
	cr_assert(bpi_array_reserve(&a, 10));
	for (uint32_t i = 0; i < 10; ++i)
		a.data[i] = i * i;
	uint32_t *data = a.data;
	size_t capacity = a.capacity;
	arm(1);
	cr_assert_not(bpi_array_grow(&a, 10, 1000));
	arm(1);
	cr_assert_not(bpi_array_reserve(&a, 1000));
	cr_assert_eq(atomic_load(&failures), 1);
	disarm();
	// Bytes beyond size_t fail before the allocator is asked.
	cr_assert_not(bpi_array_reserve(&a, SIZE_MAX / 2));
	cr_assert_eq(atomic_load(&calls), 1, "the overflowing request reached the allocator");
	cr_assert(a.data == data && a.capacity == capacity);
	for (uint32_t i = 0; i < 10; ++i)
		cr_assert_eq(a.data[i], i * i, "element %u changed", i);

	bpi_array_free(&a);
	cr_assert_eq(atomic_load(&live_blocks), 0);
	cr_assert_eq(atomic_load(&mismatches), 0);
	cr_assert_eq(bp_allocated_bytes(), 0);
	bp_set_allocator(NULL);
}

#ifdef TEST_SANITIZER_HEAP
// Sanitizer builds allocate from the C library's heap, which the sanitizer owns:
// every block is the size asked for, to the byte, so under ASan the byte past
// the end is poisoned and an off-by-one access in a library buffer is reported.
// (Through mimalloc the runtime owned none of these blocks.)
Test(alloc, sanitizer_builds_allocate_exact_blocks_the_sanitizer_sees, .timeout = 30)
{
	const size_t sizes[] = {1, 24, 100, 4095, 100000};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
		for (int aligned = 0; aligned < 2; ++aligned) {
			size_t size = sizes[i];
			unsigned char *p = aligned ? bpi_alloc_aligned(size) : bpi_alloc(size);
			cr_assert_not_null(p);
			cr_assert((uintptr_t)p % (aligned ? BP_CACHE_LINE : 2 * sizeof(void *)) == 0);
			cr_assert(__sanitizer_get_ownership(p), "%zu bytes: not a block of the sanitizer's heap", size);
			cr_assert_eq(__sanitizer_get_allocated_size(p), size, "a block of %zu bytes has %zu", size,
				__sanitizer_get_allocated_size(p));
#ifdef TEST_ASAN
			cr_assert(!__asan_address_is_poisoned(p + size - 1));
			cr_assert(__asan_address_is_poisoned(p + size), "the byte past %zu bytes is not poisoned", size);
#endif
			if (aligned)
				bpi_free_aligned(p, size);
			else
				bpi_free(p, size);
		}
	}
	cr_assert_eq(bp_allocated_bytes(), 0);
}
#endif
