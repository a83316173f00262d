// SPDX-License-Identifier: MIT
// The frame scheduler (docs/design.md "Frame protocol"): submit/acquire/release, frame numbers, coalescing, views
// held across frames, the buffer pool, destroy with views held, wait.
#define _POSIX_C_SOURCE 200809L // nanosleep
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "world/world_frames.h" // bpi_world_pause_frames / bpi_world_live_frames test hooks
#include "oracle.h"
#include "sanitizer_heap.h"

/// memcmp that accepts NULL pointers for zero lengths (views and buffers may hold NULL then).
static bool same_bytes(const void *a, const void *b, size_t n)
{
	return n == 0 || memcmp(a, b, n) == 0;
}

#define N 300

/// What a view showed when it was taken, deep-copied, to compare later.
typedef struct view_copy {
	uint64_t frame;
	uint32_t count;
	bp_pair *pairs;
	size_t pair_count;
	float *bounds; ///< 6 arrays of count floats (z unused in 2D)
	uint64_t *keys;
	bp_frame_stats stats;
} view_copy;

static view_copy copy_view(const bp_view *v)
{
	view_copy c = {.frame = bp_view_frame(v), .count = bp_view_entity_count(v), .stats = bp_view_stats(v)};
	const bp_pair *pairs = bp_view_pairs(v, &c.pair_count);
	c.pairs = malloc((c.pair_count + 1) * sizeof *c.pairs);
	if (c.pair_count)
		memcpy(c.pairs, pairs, c.pair_count * sizeof *pairs);
	c.bounds = malloc((6 * (size_t)c.count + 1) * sizeof(float));
	bp_bounds_arrays b = bp_view_bounds(v);
	const float *arrays[6] = {b.min_x, b.min_y, b.min_z, b.max_x, b.max_y, b.max_z};
	for (int a = 0; a < 6; ++a)
		if (arrays[a])
			memcpy(c.bounds + (size_t)a * c.count, arrays[a], c.count * sizeof(float));
	c.keys = malloc((c.count + 1) * sizeof *c.keys);
	memcpy(c.keys, bp_view_user_keys(v), c.count * sizeof *c.keys);
	return c;
}

static void check_same(const bp_view *v, const view_copy *c)
{
	cr_assert_eq(bp_view_frame(v), c->frame);
	cr_assert_eq(bp_view_entity_count(v), c->count);
	size_t pair_count;
	const bp_pair *pairs = bp_view_pairs(v, &pair_count);
	cr_assert_eq(pair_count, c->pair_count);
	cr_assert(same_bytes(pairs, c->pairs, pair_count * sizeof *pairs), "pairs of frame %llu changed",
		(unsigned long long)c->frame);
	bp_bounds_arrays b = bp_view_bounds(v);
	const float *arrays[6] = {b.min_x, b.min_y, b.min_z, b.max_x, b.max_y, b.max_z};
	for (int a = 0; a < 6; ++a)
		if (arrays[a])
			cr_assert(same_bytes(arrays[a], c->bounds + (size_t)a * c->count, c->count * sizeof(float)));
	cr_assert(same_bytes(bp_view_user_keys(v), c->keys, c->count * sizeof *c->keys));
	bp_frame_stats s = bp_view_stats(v);
	cr_assert(same_bytes(&s, &c->stats, sizeof s));
}

static void free_copy(view_copy *c)
{
	free(c->pairs);
	free(c->bounds);
	free(c->keys);
}

/// The view's pairs equal the oracle's for `boxes` (both sorted by (lo, hi)).
static void check_pairs(const bp_view *v, const oracle_box *boxes, uint32_t n, int dims)
{
	oracle_pairs want = oracle_find_pairs(boxes, n, dims);
	size_t count;
	const bp_pair *pairs = bp_view_pairs(v, &count);
	cr_assert_eq(count, want.count, "frame %llu: %zu pairs, oracle %zu", (unsigned long long)bp_view_frame(v), count,
		want.count);
	cr_assert(same_bytes(pairs, want.data, count * sizeof *pairs));
	cr_assert_eq(bp_view_stats(v).pair_count, want.count);
	oracle_pairs_free(&want);
}

/// Moves every box by up to 1.5 units, in the oracle copy and (in one bulk call) in the world.
static void move_boxes(bp_world *w, oracle_box *boxes, uint32_t n, int dims, test_rng *rng)
{
	float *soa = malloc(6 * (size_t)n * sizeof(float));
	for (uint32_t i = 0; i < n; ++i) {
		for (int k = 0; k < dims; ++k) {
			float d = test_rng_float(rng, -1.5f, 1.5f);
			boxes[i].min[k] += d;
			boxes[i].max[k] += d;
			soa[(size_t)k * n + i] = boxes[i].min[k];
			soa[(size_t)(3 + k) * n + i] = boxes[i].max[k];
		}
	}
	bp_bounds_arrays b = {soa, soa + n, soa + 2 * (size_t)n, soa + 3 * (size_t)n, soa + 4 * (size_t)n,
		soa + 5 * (size_t)n};
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(0, n), &b), BP_OK, "%s", bp_world_last_error(w));
	free(soa);
}

static bp_world *make_world(oracle_box *boxes, uint32_t n, int dims, uint64_t seed)
{
	float world = dims == 2 ? 40.0f : 14.0f;
	test_random_boxes(boxes, n, dims, world, 3.0f, true, seed);
	return test_world_from_boxes(boxes, n, dims, BP_ALGO_AUTO, 2);
}

Test(frame, nothing_published_yet, .timeout = 30)
{
	oracle_box boxes[N];
	bp_world *w = make_world(boxes, N, 3, 1);
	bp_view *v = (bp_view *)boxes; // any non-NULL value: acquire must clear it
	cr_assert_eq(bp_frame_acquire(w, &v), BP_ERR_NO_FRAME);
	cr_assert_null(v);
	cr_assert_eq(bp_frame_wait(w, 1), BP_ERR_NOT_SUBMITTED, "frame 1 was never submitted");
	cr_assert_eq(bp_frame_wait(w, 0), BP_OK);
	cr_assert_eq(bp_frame_submit(NULL, NULL), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_frame_acquire(w, NULL), BP_ERR_INVALID_ARGUMENT);
	bp_view_release(NULL);
	bp_world_destroy(w); // no thread was started
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(frame, submit_wait_acquire, .timeout = 30)
{
	oracle_box boxes[N];
	bp_world *w = make_world(boxes, N, 3, 2);
	test_rng rng = {2};
	for (uint64_t expect = 1; expect <= 4; ++expect) {
		uint64_t frame = 0;
		cr_assert_eq(bp_frame_submit(w, &frame), BP_OK);
		cr_assert_eq(frame, expect, "frame numbers count submits");
		cr_assert_eq(bp_frame_wait(w, frame), BP_OK);
		bp_view *v;
		cr_assert_eq(bp_frame_acquire(w, &v), BP_OK);
		cr_assert_eq(bp_view_frame(v), frame, "only this thread submits, so the latest is ours");
		cr_assert_eq(bp_view_stats(v).frame, frame);
		cr_assert_eq(bp_view_entity_count(v), N);
		cr_assert_eq(bp_view_dims(v), 3);
		check_pairs(v, boxes, N, 3);
		bp_bounds_arrays b = bp_view_bounds(v);
		for (uint32_t i = 0; i < N; ++i) {
			cr_assert(b.min_x[i] == boxes[i].min[0] && b.max_z[i] == boxes[i].max[2]);
			cr_assert_eq(bp_view_user_keys(v)[i], i);
		}
		// bp_world_step is independent and reports the same pair set.
		cr_assert_eq(bp_world_step(w), BP_OK);
		size_t count;
		const bp_pair *world_pairs = bp_world_pairs(w, &count);
		oracle_pairs want = oracle_find_pairs(boxes, N, 3);
		cr_assert(oracle_same_pair_set(world_pairs, count, &want));
		oracle_pairs_free(&want);
		bp_view_release(v);
		move_boxes(w, boxes, N, 3, &rng);
	}
	cr_assert_eq(bp_frame_wait(w, 2), BP_OK, "an older frame is done at once");
	cr_assert_eq(bp_frame_wait(w, 5), BP_ERR_NOT_SUBMITTED);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(frame, submits_coalesce_to_the_newest, .timeout = 30)
{
	oracle_box boxes[N];
	bp_world *w = make_world(boxes, N, 2, 3);
	test_rng rng = {3};
	// Paused before the first submit, the builder takes nothing: every submit
	// lands on a pending snapshot and replaces it.
	bpi_world_pause_frames(w, true);
	uint64_t frame = 0;
	for (uint64_t i = 1; i <= 5; ++i) {
		move_boxes(w, boxes, N, 2, &rng);
		cr_assert_eq(bp_frame_submit(w, &frame), BP_OK);
		cr_assert_eq(frame, i);
	}
	bp_view *v;
	cr_assert_eq(bp_frame_acquire(w, &v), BP_ERR_NO_FRAME, "nothing built while paused");
	// Only the pending snapshot and spares: replaced snapshots went back to the pool.
	cr_assert_leq(bpi_world_live_frames(w), 3);
	bpi_world_pause_frames(w, false);
	cr_assert_eq(bp_frame_wait(w, 1), BP_OK, "frame 1 is covered by frame 5");
	cr_assert_eq(bp_frame_acquire(w, &v), BP_OK);
	cr_assert_eq(bp_view_frame(v), 5, "frames 1-4 were coalesced away");
	check_pairs(v, boxes, N, 2); // the newest state, not an older one
	// Every pair began: it is the first published frame.
	size_t began, ended;
	cr_assert_eq(bp_view_pair_events(v, NULL, 0, &began, NULL, 0, &ended), BP_OK, "a count is not an error");
	cr_assert_eq(began, bp_view_stats(v).pair_count);
	cr_assert_eq(ended, 0);
	bp_view_release(v);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(frame, view_held_across_frames_is_unchanged, .timeout = 60)
{
	oracle_box boxes[N], first[N];
	bp_world *w = make_world(boxes, N, 3, 4);
	memcpy(first, boxes, sizeof first);
	test_rng rng = {4};
	bp_view *held;
	cr_assert_eq(bp_frame_step(w, &held), BP_OK);
	view_copy copy = copy_view(held);
	check_pairs(held, first, N, 3);
	for (int f = 0; f < 8; ++f) {
		move_boxes(w, boxes, N, 3, &rng);
		bp_view *v;
		cr_assert_eq(bp_frame_step(w, &v), BP_OK);
		cr_assert_neq(v, held, "a held buffer is never reused");
		check_pairs(v, boxes, N, 3);
		check_same(held, &copy);
		// Queries on the held view still answer for the first snapshot.
		uint32_t got[N];
		size_t total;
		float lo[3] = {2, 2, 2}, hi[3] = {8, 8, 8};
		cr_assert_eq(bp_view_overlap_box(held, lo, hi, NULL, got, N, &total), BP_OK);
		size_t want = 0;
		for (uint32_t i = 0; i < N; ++i) {
			bool hit = true;
			for (int k = 0; k < 3; ++k)
				hit = hit && first[i].min[k] <= hi[k] && lo[k] <= first[i].max[k];
			if (hit)
				cr_assert_eq(got[want++], i);
		}
		cr_assert_eq(total, want);
		bp_view_release(v);
	}
	check_same(held, &copy);
	bp_view_release(held);
	free_copy(&copy);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(frame, pool_grows_when_every_buffer_is_held, .timeout = 60)
{
	enum { HELD = 7 };
	oracle_box boxes[N], states[HELD][N];
	bp_world *w = make_world(boxes, N, 2, 5);
	test_rng rng = {5};
	bp_view *views[HELD];
	view_copy copies[HELD];
	for (int f = 0; f < HELD; ++f) {
		memcpy(states[f], boxes, sizeof boxes);
		cr_assert_eq(bp_frame_step(w, &views[f]), BP_OK, "submit never blocks or fails for lack of buffers");
		copies[f] = copy_view(views[f]);
		move_boxes(w, boxes, N, 2, &rng);
	}
	// Every held view, plus the latest reference on the last one: one buffer each.
	cr_assert_geq(bpi_world_live_frames(w), HELD);
	for (int f = 0; f < HELD; ++f) {
		check_same(views[f], &copies[f]);
		check_pairs(views[f], states[f], N, 2);
	}
	for (int f = 0; f < HELD; ++f) {
		bp_view_release(views[f]);
		free_copy(&copies[f]);
	}
	// Released buffers beyond the spares are freed: the latest frame plus two spares.
	cr_assert_leq(bpi_world_live_frames(w), 3);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(frame, destroy_with_views_held, .timeout = 60)
{
	oracle_box boxes[N], first[N];
	bp_world *w = make_world(boxes, N, 3, 6);
	memcpy(first, boxes, sizeof first);
	test_rng rng = {6};
	bp_view *a, *b;
	cr_assert_eq(bp_frame_step(w, &a), BP_OK);
	move_boxes(w, boxes, N, 3, &rng);
	cr_assert_eq(bp_frame_step(w, &b), BP_OK); // b is also the latest frame
	view_copy ca = copy_view(a), cb = copy_view(b);
	cr_assert_eq(bp_frame_submit(w, NULL), BP_OK); // and a build possibly in flight
	bp_world_destroy(w);
	// The views own their memory: contents and queries still work.
	check_same(a, &ca);
	check_same(b, &cb);
	check_pairs(a, first, N, 3);
	check_pairs(b, boxes, N, 3);
	cr_assert(ca.pair_count == 0 || bp_view_colliding(a, ca.pairs[0].lo, ca.pairs[0].hi));
	cr_assert_gt(bp_allocated_bytes(), 0);
	bp_view_release(b);
	check_same(a, &ca);
	bp_view_release(a); // the last buffer out frees the pool
	cr_assert_eq(bp_allocated_bytes(), 0, "leaked %lld bytes", (long long)bp_allocated_bytes());
	free_copy(&ca);
	free_copy(&cb);
}

Test(frame, destroy_during_a_build, .timeout = 60)
{
	// A scene big enough that brute takes a while: destroy joins the builder
	// mid-frame or drops the pending snapshot, and leaks nothing.
	enum { BIG = 6000 };
	oracle_box *boxes = calloc(BIG, sizeof *boxes);
	test_random_boxes(boxes, BIG, 2, 100.0f, 2.0f, false, 7);
	bp_world *w = test_world_from_boxes(boxes, BIG, 2, BP_ALGO_BRUTE, 2);
	for (int i = 0; i < 3; ++i)
		cr_assert_eq(bp_frame_submit(w, NULL), BP_OK);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
	free(boxes);
}

typedef struct waiter {
	bp_world *world;
	uint64_t frame;
	bp_status status;
	uint64_t seen;
} waiter;

static void *wait_then_acquire(void *arg)
{
	waiter *t = arg;
	t->status = bp_frame_wait(t->world, t->frame);
	bp_view *v;
	if (t->status == BP_OK && bp_frame_acquire(t->world, &v) == BP_OK) {
		t->seen = bp_view_frame(v);
		bp_view_release(v);
	}
	return NULL;
}

Test(frame, wait_from_other_threads, .timeout = 60)
{
	oracle_box boxes[N];
	bp_world *w = make_world(boxes, N, 3, 8);
	test_rng rng = {8};
	bpi_world_pause_frames(w, true); // so the waiters really block
	uint64_t frame = 0;
	for (int i = 0; i < 3; ++i) {
		move_boxes(w, boxes, N, 3, &rng);
		cr_assert_eq(bp_frame_submit(w, &frame), BP_OK);
	}
	waiter t[3] = {{w, 1, -1, 0}, {w, 2, -1, 0}, {w, 3, -1, 0}};
	pthread_t threads[3];
	for (int i = 0; i < 3; ++i)
		cr_assert_eq(pthread_create(&threads[i], NULL, wait_then_acquire, &t[i]), 0);
	bpi_world_pause_frames(w, false);
	for (int i = 0; i < 3; ++i) {
		pthread_join(threads[i], NULL);
		cr_assert_eq(t[i].status, BP_OK);
		cr_assert_eq(t[i].seen, 3, "frames 1 and 2 were coalesced into 3");
	}
	bp_view *v;
	cr_assert_eq(bp_frame_acquire(w, &v), BP_OK);
	check_pairs(v, boxes, N, 3);
	bp_view_release(v);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(frame, entities_created_and_destroyed_between_frames, .timeout = 60)
{
	// Snapshots follow the world's size; keys name entities across swap-removes.
	oracle_box boxes[N];
	bp_world *w = make_world(boxes, N, 2, 9);
	// The last entity (it moves on the destroy below) covers everything, so it has
	// pairs whose key order flips from (k, N - 1) to dense order (0, k): the events
	// must still see them as unchanged.
	boxes[N - 1] = (oracle_box){{0, 0}, {45, 45}, 1, UINT64_MAX, false, false};
	bp_entity last = bp_world_entity_at(w, N - 1);
	cr_assert_eq(bp_entity_set_bounds(w, last, boxes[N - 1].min, boxes[N - 1].max), BP_OK);
	cr_assert_eq(bp_entity_set_filter(w, last, 1, UINT64_MAX), BP_OK);
	cr_assert_eq(bp_entity_set_kind(w, last, BP_KIND_DYNAMIC), BP_OK);
	bp_view *v1, *v2;
	cr_assert_eq(bp_frame_step(w, &v1), BP_OK);
	const uint32_t *moved;
	size_t moved_count;
	cr_assert_eq(bp_view_neighbours(v1, N - 1, &moved, &moved_count), BP_OK);
	cr_assert_gt(moved_count, 1);
	// Destroy entity 0: the last one (key N - 1) moves into dense index 0.
	cr_assert_eq(bp_entity_destroy(w, bp_world_entity_at(w, 0)), BP_OK);
	cr_assert_eq(bp_frame_step(w, &v2), BP_OK);
	cr_assert_eq(bp_view_entity_count(v1), N);
	cr_assert_eq(bp_view_entity_count(v2), N - 1);
	cr_assert_eq(bp_view_user_keys(v2)[0], N - 1);
	oracle_box after[N];
	memcpy(after, boxes, sizeof after);
	after[0] = boxes[N - 1];
	check_pairs(v2, after, N - 1, 2);
	// Ended events are exactly the pairs that involved key 0; none began.
	size_t began, ended;
	bp_key_pair events[N];
	cr_assert_eq(bp_view_pair_events(v2, NULL, 0, &began, events, N, &ended), BP_OK);
	cr_assert_eq(began, 0);
	const uint32_t *list;
	size_t with_zero;
	cr_assert_eq(bp_view_neighbours(v1, 0, &list, &with_zero), BP_OK);
	cr_assert_eq(ended, with_zero);
	for (size_t i = 0; i < ended; ++i)
		cr_assert(events[i].a == 0 && events[i].b == list[i]); // keys = v1's dense indices
	bp_view_release(v1);
	bp_view_release(v2);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(frame, empty_world, .timeout = 30)
{
	bp_world_def def = bp_world_def_default();
	def.dims = 2;
	bp_world *w;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_view *v;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	size_t count = 1, total = 1;
	bp_view_pairs(v, &count);
	cr_assert_eq(count, 0);
	cr_assert_eq(bp_view_entity_count(v), 0);
	cr_assert_eq(bp_view_overlap_box(v, (float[]){-1e30f, -1e30f}, (float[]){1e30f, 1e30f}, NULL, NULL, 0, &total), BP_OK);
	cr_assert_eq(total, 0);
	bp_hit hit;
	cr_assert_eq(bp_view_nearest(v, (float[]){0, 0}, 3, NULL, &hit, &count), BP_OK);
	cr_assert_eq(count, 0);
	cr_assert(!bp_view_colliding(v, 0, 1));
	bp_view_release(v);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

// An allocator that fails every request while `failing` is set.
static atomic_bool failing;

static void *flaky_alloc(size_t size, size_t align, void *user)
{
	(void)user;
	if (atomic_load(&failing))
		return NULL;
	return aligned_alloc(align, (size + align - 1) / align * align);
}

static void flaky_free(void *ptr, size_t size, size_t align, void *user)
{
	(void)size, (void)align, (void)user;
	free(ptr);
}

Test(frame, failed_build_keeps_the_previous_frame, .timeout = 30)
{
	static const bp_allocator flaky = {flaky_alloc, flaky_free, NULL};
	bp_set_allocator(&flaky);
	oracle_box boxes[N];
	bp_world *w = make_world(boxes, N, 2, 10);
	bp_view *v;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	bp_view_release(v);
	// Frame 2's snapshot is taken, then every allocation fails while it builds
	// (the fresh buffer needs a pair array; the builder's brute index does not exist yet).
	bpi_world_pause_frames(w, true);
	uint64_t frame;
	cr_assert_eq(bp_world_set_algorithm(w, BP_ALGO_BRUTE), BP_OK);
	cr_assert_eq(bp_frame_submit(w, &frame), BP_OK);
	cr_assert_eq(frame, 2);
	atomic_store(&failing, true);
	cr_assert_eq(bp_frame_submit(w, NULL), BP_ERR_OUT_OF_MEMORY, "no buffer: nothing submitted");
	bpi_world_pause_frames(w, false);
	bp_status status = bp_frame_wait(w, 2);
	atomic_store(&failing, false);
	cr_assert_eq(status, BP_ERR_OUT_OF_MEMORY, "got %s", bp_status_string(status));
	cr_assert_eq(bp_frame_acquire(w, &v), BP_OK);
	cr_assert_eq(bp_view_frame(v), 1, "the previous frame stays published");
	check_pairs(v, boxes, N, 2);
	bp_view_release(v);
	// And the scheduler recovers.
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	cr_assert_eq(bp_view_frame(v), 3);
	check_pairs(v, boxes, N, 2);
	bp_view_release(v);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
	bp_set_allocator(NULL);
}

// ---- incremental worlds: snapshots copy only what changed -----------------------

/// The host's side of an incremental world: boxes and user keys in dense order.
typedef struct shadow {
	oracle_box boxes[N + 8];
	uint64_t keys[N + 8];
	uint32_t n;
	bp_world *w;
	test_rng rng;
} shadow;

/// The view holds exactly the shadow's entities (bounds bit for bit, keys) and
/// the oracle's pairs.
static void check_snapshot(const bp_view *v, const shadow *s, int dims)
{
	cr_assert_eq(bp_view_entity_count(v), s->n);
	bp_bounds_arrays b = bp_view_bounds(v);
	const float *arrays[6] = {b.min_x, b.min_y, b.min_z, b.max_x, b.max_y, b.max_z};
	for (uint32_t i = 0; i < s->n; ++i) {
		for (int k = 0; k < dims; ++k)
			cr_assert(same_bytes(&arrays[k][i], &s->boxes[i].min[k], sizeof(float)) &&
					  same_bytes(&arrays[3 + k][i], &s->boxes[i].max[k], sizeof(float)),
				"frame %llu: entity %u, axis %d", (unsigned long long)bp_view_frame(v), i, k);
		cr_assert_eq(bp_view_user_keys(v)[i], s->keys[i], "frame %llu: key of %u",
			(unsigned long long)bp_view_frame(v), i);
	}
	check_pairs(v, s->boxes, s->n, dims);
}

/// Moves a few entities, re-keys a few, and now and then destroys and creates some.
static void shadow_change(shadow *s, int dims, int frame)
{
	for (int m = 0; m < 12; ++m) {
		uint32_t d = test_rng_below(&s->rng, s->n);
		float delta = test_rng_float(&s->rng, -0.5f, 0.5f);
		for (int k = 0; k < dims; ++k) {
			s->boxes[d].min[k] += delta;
			s->boxes[d].max[k] += delta;
		}
		cr_assert_eq(bp_entity_set_bounds(s->w, bp_world_entity_at(s->w, d), s->boxes[d].min, s->boxes[d].max),
			BP_OK);
	}
	// Odd frames change no keys; those 3 mod 4 change bounds alone, and their
	// snapshots copy only bounds.
	for (int m = 0; frame % 2 == 0 && m < 3; ++m) {
		uint32_t d = test_rng_below(&s->rng, s->n);
		s->keys[d] = test_rng_next(&s->rng);
		cr_assert_eq(bp_entity_set_user_key(s->w, bp_world_entity_at(s->w, d), s->keys[d]), BP_OK);
	}
	if (frame % 4 == 1) { // a filter and a kind, on a frame without new keys
		uint32_t d = test_rng_below(&s->rng, s->n);
		s->boxes[d].category = test_layer(test_rng_below(&s->rng, 3));
		s->boxes[d].mask = test_layer(test_rng_below(&s->rng, 3));
		cr_assert_eq(bp_entity_set_filter(s->w, bp_world_entity_at(s->w, d), s->boxes[d].category,
				     s->boxes[d].mask),
			BP_OK);
		d = test_rng_below(&s->rng, s->n);
		s->boxes[d].is_static = !s->boxes[d].is_static;
		cr_assert_eq(bp_entity_set_kind(s->w, bp_world_entity_at(s->w, d),
				     s->boxes[d].is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC),
			BP_OK);
	}
	if (frame % 3 == 0 && frame % 4 != 3) { // frames 3 mod 4 stay bounds alone
		uint32_t d = test_rng_below(&s->rng, s->n);
		cr_assert_eq(bp_entity_destroy(s->w, bp_world_entity_at(s->w, d)), BP_OK);
		s->boxes[d] = s->boxes[--s->n]; // the library's swap-remove
		s->keys[d] = s->keys[s->n];
		oracle_box b;
		test_random_boxes(&b, 1, dims, 14.0f, 3.0f, false, test_rng_next(&s->rng));
		bp_entity_def e = bp_entity_def_default();
		memcpy(e.min, b.min, sizeof e.min);
		memcpy(e.max, b.max, sizeof e.max);
		e.user_key = test_rng_next(&s->rng);
		bp_entity h;
		cr_assert_eq(bp_entity_create(s->w, &e, &h), BP_OK);
		s->boxes[s->n] = b;
		s->keys[s->n++] = e.user_key;
	}
}

// An incremental world's submit copies only the entities marked since the buffer
// it reuses was last written, and of those only the bounds when nothing else
// changed: across coalesced submits, views held for several frames (older
// buffers), destroys, creates, user keys, filters and kinds, every view must
// still hold the world's exact state and the oracle's pairs.
Test(frame, incremental_snapshots_copy_only_what_changed, .timeout = 60)
{
	for (int dims = 2; dims <= 3; ++dims) {
		shadow *s = calloc(1, sizeof *s);
		cr_assert_not_null(s);
		s->n = N;
		s->rng = (test_rng){40 + (uint64_t)dims};
		test_random_boxes(s->boxes, N, dims, 14.0f, 3.0f, true, 41);
		bp_world_def def = bp_world_def_default();
		def.dims = dims;
		def.incremental = true;
		def.thread_count = 2;
		s->w = test_world_from_def(s->boxes, N, &def);
		for (uint32_t i = 0; i < N; ++i)
			s->keys[i] = i; // test_world_from_def's keys
		bp_view *held[3] = {NULL, NULL, NULL};
		for (int frame = 0; frame < 40; ++frame) {
			shadow_change(s, dims, frame);
			if (frame % 7 == 3) { // coalesce: three submits, one build
				bpi_world_pause_frames(s->w, true);
				for (int k = 0; k < 2; ++k) {
					cr_assert_eq(bp_frame_submit(s->w, NULL), BP_OK);
					shadow_change(s, dims, frame + k + 1);
				}
				cr_assert_eq(bp_frame_submit(s->w, NULL), BP_OK);
				bpi_world_pause_frames(s->w, false);
				bp_view *v = NULL;
				uint64_t last = 0;
				cr_assert_eq(bp_frame_submit(s->w, &last), BP_OK);
				cr_assert_eq(bp_frame_wait(s->w, last), BP_OK);
				cr_assert_eq(bp_frame_acquire(s->w, &v), BP_OK);
				check_snapshot(v, s, dims);
				bp_view_release(v);
				continue;
			}
			bp_view *v = NULL;
			cr_assert_eq(bp_frame_step(s->w, &v), BP_OK, "%s", bp_world_last_error(s->w));
			check_snapshot(v, s, dims);
			bp_view_release(held[frame % 3]); // views held three frames: buffers age
			held[frame % 3] = v;
		}
		for (int k = 0; k < 3; ++k)
			bp_view_release(held[k]);
		bp_world_destroy(s->w);
		free(s);
	}
	cr_assert_eq(bp_allocated_bytes(), 0);
}

// A build skips comparing the active entities' filters when only bounds changed since the
// frame it follows. A filter change in a submit that a later submit of bounds alone
// replaced (coalesced) is still a change of more than bounds: its build must compare
// filters, or the mover keeps the pairs its new mask refuses.
Test(frame, filter_change_in_a_coalesced_submit_reaches_the_build, .timeout = 30)
{
	enum { ROW = 600, MOVER = ROW };
	oracle_box boxes[ROW + 1];
	for (uint32_t i = 0; i < ROW; ++i)
		boxes[i] = (oracle_box){.min = {2.0f * (float)i, 0, 0}, .max = {2.0f * (float)i + 1, 1, 0}, .category = 1,
			.mask = UINT64_MAX};
	boxes[MOVER] = (oracle_box){.min = {0.5f, 0.25f, 0}, .max = {2.5f, 0.75f, 0}, .category = 2, .mask = UINT64_MAX};
	bp_world_def def = bp_world_def_default();
	def.dims = 2;
	def.incremental = true;
	def.thread_count = 2;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_entity mover = {0};
	for (uint32_t i = 0; i <= ROW; ++i) {
		bp_entity_def e = oracle_entity_def(&boxes[i]);
		cr_assert_eq(bp_entity_create(w, &e, &mover), BP_OK);
	}
	// The mover jitters inside its enlarged box, frame after frame: it keeps its candidates.
	for (int frame = 0; frame < 12; ++frame) {
		float d = frame % 2 ? 0.001f : -0.001f;
		boxes[MOVER].min[1] += d;
		boxes[MOVER].max[1] += d;
		cr_assert_eq(bp_entity_set_bounds(w, mover, boxes[MOVER].min, boxes[MOVER].max), BP_OK);
		bp_view *v = NULL;
		cr_assert_eq(bp_frame_step(w, &v), BP_OK, "%s", bp_world_last_error(w));
		check_pairs(v, boxes, ROW + 1, 2);
		cr_assert_eq(bp_view_stats(v).pair_count, 2, "the mover overlaps two boxes");
		bp_view_release(v);
	}
	// Paused, the builder takes nothing: the second submit replaces the first.
	bpi_world_pause_frames(w, true);
	boxes[MOVER].mask = 0;
	cr_assert_eq(bp_entity_set_filter(w, mover, boxes[MOVER].category, 0), BP_OK);
	cr_assert_eq(bp_frame_submit(w, NULL), BP_OK);
	boxes[MOVER].min[1] += 0.001f;
	boxes[MOVER].max[1] += 0.001f;
	cr_assert_eq(bp_entity_set_bounds(w, mover, boxes[MOVER].min, boxes[MOVER].max), BP_OK);
	uint64_t last = 0;
	cr_assert_eq(bp_frame_submit(w, &last), BP_OK);
	bpi_world_pause_frames(w, false);
	cr_assert_eq(bp_frame_wait(w, last), BP_OK);
	bp_view *v = NULL;
	cr_assert_eq(bp_frame_acquire(w, &v), BP_OK);
	cr_assert_eq(bp_view_frame(v), last);
	check_pairs(v, boxes, ROW + 1, 2);
	cr_assert_eq(bp_view_stats(v).pair_count, 0, "a mask of 0 accepts nothing");
	bp_view_release(v);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

// ---- releasing a view more often than it was acquired (a contract violation) ----

Test(frame, double_release_of_the_latest_frame_is_refused, .timeout = 30)
{
	oracle_box boxes[N], first[N];
	bp_world *w = make_world(boxes, N, 3, 11);
	memcpy(first, boxes, sizeof first);
	test_rng rng = {11};
	bp_view *v;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	view_copy copy = copy_view(v);
	cr_assert_eq(bp_view_release(v), BP_OK);
	// The second one must not take the latest pointer's reference.
	cr_assert_eq(bp_view_release(v), BP_ERR_STALE_HANDLE);
	// The frame is still the latest: a reader takes it and holds it across the next frame,
	// whose snapshot must go to another buffer.
	bp_view *held;
	cr_assert_eq(bp_frame_acquire(w, &held), BP_OK);
	cr_assert_eq(held, v);
	move_boxes(w, boxes, N, 3, &rng);
	bp_view *next;
	cr_assert_eq(bp_frame_step(w, &next), BP_OK);
	cr_assert_neq(next, held, "a held buffer is never reused");
	check_same(held, &copy);
	check_pairs(held, first, N, 3);
	check_pairs(next, boxes, N, 3);
	bp_view_release(held);
	bp_view_release(next);
	free_copy(&copy);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(frame, extra_releases_are_refused_while_the_buffer_lives, .timeout = 30)
{
	oracle_box boxes[N];
	bp_world *w = make_world(boxes, N, 2, 12);
	test_rng rng = {12};
	cr_assert_eq(bp_view_release(NULL), BP_OK, "NULL is ignored");
	// Two references by one reader on the latest frame: a third release is one too many.
	bp_view *a, *again;
	cr_assert_eq(bp_frame_step(w, &a), BP_OK);
	cr_assert_eq(bp_frame_acquire(w, &again), BP_OK);
	cr_assert_eq(again, a);
	cr_assert_eq(bp_view_release(a), BP_OK);
	cr_assert_eq(bp_view_release(again), BP_OK);
	cr_assert_eq(bp_view_release(a), BP_ERR_STALE_HANDLE);
	// A frame no longer the latest goes back to the pool's spares on its last
	// release (so it is still allocated): a further release is refused too, and
	// the pool hands the buffer out again intact.
	cr_assert_eq(bp_frame_acquire(w, &a), BP_OK);
	move_boxes(w, boxes, N, 2, &rng);
	bp_view *b;
	cr_assert_eq(bp_frame_step(w, &b), BP_OK);
	cr_assert_eq(bp_view_release(a), BP_OK);
	cr_assert_eq(bpi_world_live_frames(w), 2, "frame 1 is a spare, frame 2 the latest");
	cr_assert_eq(bp_view_release(a), BP_ERR_STALE_HANDLE);
	cr_assert_eq(bp_view_release(b), BP_OK);
	for (int f = 0; f < 4; ++f) {
		move_boxes(w, boxes, N, 2, &rng);
		cr_assert_eq(bp_frame_step(w, &b), BP_OK);
		check_pairs(b, boxes, N, 2);
		cr_assert_eq(bp_view_release(b), BP_OK);
		cr_assert_eq(bp_view_release(b), BP_ERR_STALE_HANDLE);
	}
	cr_assert_leq(bpi_world_live_frames(w), 3);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

#ifdef TEST_SANITIZER_HEAP
// The builder's buffers (pairs, snapshot, query index) come from the heap the
// sanitizer watches, so TSan orders a buffer freed on a reader's release before
// its reuse by the builder, and ASan sees overflows and uses after free in them.
Test(frame, views_live_on_the_sanitizer_heap, .timeout = 30)
{
	oracle_box boxes[N];
	bp_world *w = make_world(boxes, N, 3, 13);
	bp_view *v;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	size_t count;
	const bp_pair *pairs = bp_view_pairs(v, &count);
	cr_assert_gt(count, 0);
	cr_assert(__sanitizer_get_ownership(pairs));
	cr_assert_geq(__sanitizer_get_allocated_size(pairs), count * sizeof *pairs);
	bp_bounds_arrays b = bp_view_bounds(v);
	const float *arrays[6] = {b.min_x, b.min_y, b.min_z, b.max_x, b.max_y, b.max_z};
	for (int a = 0; a < 6; ++a) {
		cr_assert(__sanitizer_get_ownership(arrays[a]));
		cr_assert_geq(__sanitizer_get_allocated_size(arrays[a]), N * sizeof(float));
	}
	cr_assert(__sanitizer_get_ownership(bp_view_user_keys(v)));
	cr_assert_eq(bp_view_release(v), BP_OK);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}
#endif

// ---- readers of one view's events at once ---------------------------------------------

typedef struct events_reader {
	const bp_view *view;
	bool with_room; ///< asks for the key pairs (built on first use), or only counts
	size_t began, ended;
	bp_status status;
} events_reader;

static void *read_pair_events(void *arg)
{
	events_reader *r = arg;
	bp_key_pair began[4], ended[4];
	size_t room = r->with_room ? 4 : 0;
	r->status = bp_view_pair_events(r->view, r->with_room ? began : NULL, room, &r->began,
		r->with_room ? ended : NULL, room, &r->ended);
	return NULL;
}

/// frame.h lets readers call bp_view_pair_events at once: a count-only call beside
/// the first call that builds the key pairs reads nothing the builder writes (the
/// TSan configuration runs this suite and fails on a race).
Test(frame, count_only_pair_events_beside_a_reader_that_builds_them)
{
	enum { BOXES = 64, ROUNDS = 40 };
	bp_world_def def = bp_world_def_default();
	def.dims = 2;
	def.thread_count = 1;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_entity e[BOXES];
	for (int i = 0; i < BOXES; ++i) {
		bp_entity_def d = bp_entity_def_default();
		d.min[0] = (float)i;
		d.max[0] = (float)i + 1.5f;
		d.max[1] = 1;
		d.user_key = (uint64_t)i;
		cr_assert_eq(bp_entity_create(w, &d, &e[i]), BP_OK);
	}
	bp_view *v = NULL;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	test_rng rng = {31};
	size_t began, ended;
	cr_assert_eq(bp_view_events(v, NULL, 0, &began, NULL, 0, &ended), BP_OK, "a count is not an error");
	cr_assert_gt(began, 0, "every pair began");
	cr_assert_eq(bp_view_release(v), BP_OK);
	for (int round = 0; round < ROUNDS; ++round) {
		// Every other box shifts by up to two units: some pairs end, others begin.
		for (int i = round % 2; i < BOXES; i += 2) {
			float lo[2] = {(float)i + test_rng_float(&rng, 0, 2), 0}, hi[2] = {lo[0] + 1.5f, 1};
			cr_assert_eq(bp_entity_set_bounds(w, e[i], lo, hi), BP_OK);
		}
		cr_assert_eq(bp_frame_step(w, &v), BP_OK);
		events_reader r[2] = {{v, false, 0, 0, BP_OK}, {v, true, 0, 0, BP_OK}};
		pthread_t threads[2];
		for (int t = 0; t < 2; ++t)
			cr_assert_eq(pthread_create(&threads[t], NULL, read_pair_events, &r[t]), 0);
		for (int t = 0; t < 2; ++t)
			cr_assert_eq(pthread_join(threads[t], NULL), 0);
		// A count with no room is a count, not an error, whatever there is to count.
		bp_status counted = bp_view_events(v, NULL, 0, &began, NULL, 0, &ended);
		cr_assert_eq(counted, BP_OK);
		cr_assert_gt(began + ended, 0, "round %d: no events to read", round);
		cr_assert_eq(r[0].status, counted);
		cr_assert_eq(r[1].status, began > 4 || ended > 4 ? BP_ERR_OUT_OF_RANGE : BP_OK);
		cr_assert(r[0].began == began && r[1].began == began && r[0].ended == ended && r[1].ended == ended);
		cr_assert_eq(bp_view_release(v), BP_OK);
	}
	bp_world_destroy(w);
}

/// Where a world's pair filter ran last, and how often: it runs on the thread that builds.
typedef struct filter_thread {
	pthread_t last;
	_Atomic int calls;
} filter_thread;

static bool note_thread(bp_entity a, bp_entity b, uint64_t key_a, uint64_t key_b, void *user)
{
	(void)a, (void)b, (void)key_a, (void)key_b;
	filter_thread *seen = user;
	seen->last = pthread_self();
	atomic_fetch_add(&seen->calls, 1);
	return true;
}

Test(frame, frame_step_builds_on_the_calling_thread_and_submit_on_the_builder, .timeout = 30)
{
	oracle_box boxes[N];
	test_random_boxes(boxes, N, 3, 14.0f, 3.0f, false, 12);
	filter_thread seen = {0};
	bp_world_def def = bp_world_def_default();
	def.dims = 3;
	def.thread_count = 2;
	def.pair_filter = note_thread;
	def.pair_filter_user = &seen;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	for (uint32_t i = 0; i < N; ++i) {
		bp_entity_def d = bp_entity_def_default();
		memcpy(d.min, boxes[i].min, sizeof d.min);
		memcpy(d.max, boxes[i].max, sizeof d.max);
		bp_entity e;
		cr_assert_eq(bp_entity_create(w, &d, &e), BP_OK);
	}
	oracle_pairs want = oracle_find_pairs(boxes, N, 3);
	cr_assert_gt(want.count, 0, "the filter must be asked");
	for (int round = 0; round < 3; ++round) {
		bp_view *v = NULL;
		atomic_store(&seen.calls, 0);
		cr_assert_eq(bp_frame_step(w, &v), BP_OK);
		cr_assert_gt(atomic_load(&seen.calls), 0);
		cr_assert(pthread_equal(seen.last, pthread_self()), "round %d: bp_frame_step built on another thread", round);
		check_pairs(v, boxes, N, 3);
		cr_assert_eq(bp_view_release(v), BP_OK);

		uint64_t frame = 0;
		atomic_store(&seen.calls, 0);
		cr_assert_eq(bp_frame_submit(w, &frame), BP_OK);
		cr_assert_eq(bp_frame_wait(w, frame), BP_OK);
		cr_assert_gt(atomic_load(&seen.calls), 0);
		cr_assert(!pthread_equal(seen.last, pthread_self()), "round %d: a submit's frame built by its waiter", round);
		cr_assert_eq(bp_frame_acquire(w, &v), BP_OK);
		check_pairs(v, boxes, N, 3);
		cr_assert_eq(bp_view_release(v), BP_OK);
	}
	oracle_pairs_free(&want);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

/// Unpauses the world's frames after a moment, from another thread.
static void *unpause_later(void *arg)
{
	struct timespec pause = {0, 20 * 1000 * 1000};
	nanosleep(&pause, NULL);
	bpi_world_pause_frames(arg, false);
	return NULL;
}

Test(frame, frame_step_while_paused_builds_once_unpaused, .timeout = 30)
{
	oracle_box boxes[N];
	bp_world *w = make_world(boxes, N, 3, 13);
	bpi_world_pause_frames(w, true);
	pthread_t other;
	cr_assert_eq(pthread_create(&other, NULL, unpause_later, w), 0);
	bp_view *v = NULL;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	cr_assert_eq(pthread_join(other, NULL), 0);
	cr_assert_eq(bp_view_frame(v), 1);
	check_pairs(v, boxes, N, 3);
	cr_assert_eq(bp_view_release(v), BP_OK);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}
