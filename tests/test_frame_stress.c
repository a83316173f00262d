// SPDX-License-Identifier: MIT
// Scheduler stress: the builder, three reader threads querying without pause and the host
// moving, creating and destroying entities and submitting. Every answer a reader gets is
// checked by brute force against that view's own snapshot. Frames from BP_STRESS_FRAMES
// (default 300); run it under ThreadSanitizer (-DBP_SANITIZE=thread, with clang).
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "incremental/incremental.h" // bpi_set_settle_min
#include "oracle.h"

/// memcmp that accepts NULL pointers for zero lengths (views and buffers may hold NULL then).
static bool same_bytes(const void *a, const void *b, size_t n)
{
	return n == 0 || memcmp(a, b, n) == 0;
}

#define READERS 3
#define START_N 400

static uint32_t stress_frames(void)
{
	const char *env = getenv("BP_STRESS_FRAMES");
	long frames = env ? strtol(env, NULL, 10) : 0;
	return frames > 0 ? (uint32_t)frames : 300;
}

typedef struct shared {
	bp_world *world;
	atomic_bool stop;
} shared;

typedef struct reader {
	shared *shared;
	uint64_t seed;
	_Atomic uint64_t frames_checked; ///< distinct frames whose pairs were verified (the host reads it)
	uint64_t queries_checked;
	atomic_bool finished; ///< the reader's loop has ended
	bool ok;
	char failure[200];
} reader;

/// The view's snapshot as oracle boxes (the stress world has no filters or statics).
static oracle_box *snapshot_boxes(const bp_view *v)
{
	uint32_t n = bp_view_entity_count(v);
	bp_bounds_arrays b = bp_view_bounds(v);
	oracle_box *boxes = malloc((n + 1) * sizeof *boxes);
	for (uint32_t i = 0; i < n; ++i) {
		boxes[i] = (oracle_box){{b.min_x[i], b.min_y[i], b.min_z ? b.min_z[i] : 0},
			{b.max_x[i], b.max_y[i], b.max_z ? b.max_z[i] : 0}, 1, UINT64_MAX, false, false};
	}
	return boxes;
}

#define CHECK(r, cond, ...) \
	do { \
		if (!(cond)) { \
			(r)->ok = false; \
			snprintf((r)->failure, sizeof (r)->failure, __VA_ARGS__); \
			return false; \
		} \
	} while (0)

static bool check_pairs(reader *r, const bp_view *v, const oracle_box *boxes, uint32_t n, int dims)
{
	oracle_pairs want = oracle_find_pairs(boxes, n, dims);
	size_t count;
	const bp_pair *pairs = bp_view_pairs(v, &count);
	bool same = count == want.count && same_bytes(pairs, want.data, count * sizeof *pairs);
	size_t want_count = want.count;
	oracle_pairs_free(&want);
	CHECK(r, same, "frame %llu: %zu pairs, brute force %zu", (unsigned long long)bp_view_frame(v), count, want_count);
	for (size_t i = 0; i < count; ++i)
		CHECK(r, bp_view_colliding(v, pairs[i].hi, pairs[i].lo), "colliding misses a pair");
	return true;
}

static float gap(float c, float lo, float hi) { return c < lo ? lo - c : c > hi ? c - hi : 0.0f; }

static float distance2(const oracle_box *b, int dims, const float *p)
{
	float d2 = 0;
	for (int k = 0; k < dims; ++k) {
		float g = gap(p[k], b->min[k], b->max[k]);
		d2 += g * g;
	}
	return d2;
}

/// One random query of each kind, each checked by brute force over the snapshot.
static bool check_queries(reader *r, const bp_view *v, const oracle_box *boxes, uint32_t n, int dims, test_rng *rng,
	uint32_t *ids, bp_hit *hits)
{
	float p[3], d[3], ext[3];
	for (int k = 0; k < dims; ++k) {
		p[k] = test_rng_float(rng, -2, 42);
		d[k] = test_rng_below(rng, 4) ? test_rng_float(rng, -1, 1) : 0.0f;
		ext[k] = p[k] + test_rng_float(rng, 0, 6);
	}
	size_t total;
	// Box.
	CHECK(r, bp_view_overlap_box(v, p, ext, NULL, ids, n + 1, &total) == BP_OK, "aabb status");
	size_t m = 0;
	for (uint32_t i = 0; i < n; ++i) {
		bool hit = true;
		for (int k = 0; k < dims; ++k)
			hit = hit && boxes[i].min[k] <= ext[k] && p[k] <= boxes[i].max[k];
		if (hit) {
			CHECK(r, m < total && ids[m] == i, "aabb hit %zu", m);
			m++;
		}
	}
	CHECK(r, m == total, "aabb: %zu hits, brute force %zu", total, m);
	// Sphere.
	float radius = test_rng_float(rng, 0, 5);
	CHECK(r, bp_view_overlap_sphere(v, p, radius, NULL, ids, n + 1, &total) == BP_OK, "sphere status");
	m = 0;
	for (uint32_t i = 0; i < n; ++i) {
		if (distance2(&boxes[i], dims, p) <= radius * radius) {
			CHECK(r, m < total && ids[m] == i, "sphere hit %zu", m);
			m++;
		}
	}
	CHECK(r, m == total, "sphere: %zu hits, brute force %zu", total, m);
	// Closest ray hit: brute force keeps the smallest (t, index).
	bp_hit got;
	bool found;
	CHECK(r, bp_view_cast_ray_closest(v, p, d, INFINITY, NULL, &got, &found) == BP_OK, "ray status");
	bp_hit best = {UINT32_MAX, INFINITY};
	for (uint32_t i = 0; i < n; ++i) {
		float enter = 0, leave = INFINITY;
		bool hit = true;
		for (int k = 0; k < dims && hit; ++k) {
			if (d[k] == 0) {
				hit = p[k] >= boxes[i].min[k] && p[k] <= boxes[i].max[k];
				continue;
			}
			float ta = (boxes[i].min[k] - p[k]) / d[k], tb = (boxes[i].max[k] - p[k]) / d[k];
			enter = fmaxf(enter, fminf(ta, tb));
			leave = fminf(leave, fmaxf(ta, tb));
			hit = enter <= leave;
		}
		if (hit && (best.index == UINT32_MAX || enter < best.distance))
			best = (bp_hit){i, enter};
	}
	CHECK(r, found == (best.index != UINT32_MAX), "ray found");
	CHECK(r, !found || (got.index == best.index && got.distance == best.distance), "ray closest %u vs %u", got.index,
		best.index);
	// Nearest 5: every reported distance is right and nothing unreported is closer.
	uint32_t k = 5;
	CHECK(r, bp_view_nearest(v, p, k, NULL, hits, &total) == BP_OK, "nearest status");
	CHECK(r, total == (n < k ? n : k), "nearest count");
	// Order is by squared distance (then index), as the reported distance is its sqrt.
	float prev_d2 = 0;
	for (size_t i = 0; i < total; ++i) {
		CHECK(r, hits[i].index < n, "nearest index");
		float d2 = distance2(&boxes[hits[i].index], dims, p);
		CHECK(r, hits[i].distance == sqrtf(d2), "nearest distance");
		CHECK(r, i == 0 || prev_d2 < d2 || (prev_d2 == d2 && hits[i - 1].index < hits[i].index), "nearest order");
		prev_d2 = d2;
	}
	if (total) {
		uint32_t last = hits[total - 1].index;
		size_t closer = 0;
		for (uint32_t i = 0; i < n; ++i) {
			float d2 = distance2(&boxes[i], dims, p);
			closer += d2 < prev_d2 || (d2 == prev_d2 && i <= last);
		}
		CHECK(r, closer == total, "nearest: %zu boxes at or before the k-th, want %zu", closer, total);
	}
	// Neighbours of one entity agree with colliding.
	if (n) {
		uint32_t e = test_rng_below(rng, n);
		const uint32_t *list;
		size_t count;
		CHECK(r, bp_view_neighbours(v, e, &list, &count) == BP_OK, "neighbours status");
		for (size_t i = 0; i < count; ++i)
			CHECK(r, bp_view_colliding(v, e, list[i]) && (i == 0 || list[i - 1] < list[i]), "neighbour list");
	}
	r->queries_checked += 5;
	return true;
}

static void *reader_main(void *arg)
{
	reader *r = arg;
	test_rng rng = {r->seed};
	uint64_t last_frame = 0;
	r->ok = true;
	while (!atomic_load_explicit(&r->shared->stop, memory_order_acquire)) {
		bp_view *v;
		if (bp_frame_acquire(r->shared->world, &v) != BP_OK) {
			r->ok = false;
			snprintf(r->failure, sizeof r->failure, "acquire failed after the first frame");
			break;
		}
		uint64_t frame = bp_view_frame(v);
		if (frame < last_frame) {
			r->ok = false;
			snprintf(r->failure, sizeof r->failure, "frame went back from %llu to %llu",
				(unsigned long long)last_frame, (unsigned long long)frame);
			bp_view_release(v);
			break;
		}
		uint32_t n = bp_view_entity_count(v);
		int dims = bp_view_dims(v);
		oracle_box *boxes = snapshot_boxes(v);
		uint32_t *ids = malloc((n + 1) * sizeof *ids);
		bp_hit *hits = malloc(8 * sizeof *hits);
		bool ok = true;
		if (frame != last_frame) {
			ok = check_pairs(r, v, boxes, n, dims);
			atomic_fetch_add(&r->frames_checked, 1);
		}
		// Hold the view for a few queries while the host and builder move on.
		for (int q = 0; q < 4 && ok; ++q)
			ok = check_queries(r, v, boxes, n, dims, &rng, ids, hits);
		last_frame = frame;
		free(boxes);
		free(ids);
		free(hits);
		bp_view_release(v);
		if (!ok)
			break;
	}
	atomic_store(&r->finished, true);
	return NULL;
}

/// `incremental`: the world steps incrementally, and its builder takes the
/// incremental path on every frame after the first.
/// `movers`: 0, every entity moves every frame; else the first `movers` entities take
/// turns, a quarter of them each frame, and the others rest: in an incremental world
/// the movers that stop settle.
static void run_stress(int dims, uint64_t seed, bool incremental, uint32_t movers)
{
	uint32_t frames = stress_frames();
	bp_world_def def = bp_world_def_default();
	def.dims = dims;
	def.thread_count = 2;
	def.incremental = incremental;
	def.debug_flags = incremental ? BP_DEBUG_ALWAYS_INCREMENTAL : 0;
	bp_world *w;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	test_rng rng = {seed};
	bp_algorithm algorithms[BP_ALGO_COUNT];
	int algorithm_count = 0;
	for (int a = 0; a < BP_ALGO_COUNT; ++a)
		if (bp_algorithm_available((bp_algorithm)a))
			algorithms[algorithm_count++] = (bp_algorithm)a;

	// Entities in [0, 40)^dims, extents up to 3; keys count up and are never reused.
	uint64_t next_key = 0;
	float *soa = malloc(6 * (START_N + 64) * sizeof(float));
	for (uint32_t i = 0; i < START_N; ++i) {
		bp_entity_def e = bp_entity_def_default();
		for (int k = 0; k < dims; ++k) {
			e.min[k] = test_rng_float(&rng, 0, 40);
			e.max[k] = e.min[k] + test_rng_float(&rng, 0, 3);
		}
		e.user_key = next_key++;
		bp_entity h;
		cr_assert_eq(bp_entity_create(w, &e, &h), BP_OK);
	}
	bp_view *first;
	cr_assert_eq(bp_frame_step(w, &first), BP_OK); // readers always find a frame
	bp_view_release(first);

	shared s = {.world = w};
	atomic_init(&s.stop, false);
	reader readers[READERS];
	pthread_t threads[READERS];
	for (int i = 0; i < READERS; ++i) {
		readers[i] = (reader){.shared = &s, .seed = seed * 100 + (uint64_t)i};
		cr_assert_eq(pthread_create(&threads[i], NULL, reader_main, &readers[i]), 0);
	}

	uint64_t last = 1; // the bp_frame_step above
	for (uint32_t f = 0; f < frames; ++f) {
		uint32_t n = bp_world_entity_count(w);
		// Move every entity by a small step in one bulk call.
		bp_bounds_arrays cur = {0};
		for (uint32_t i = 0; i < n; ++i) {
			bp_entity_def e;
			cr_assert_eq(bp_entity_get(w, bp_world_entity_at(w, i), &e), BP_OK);
			for (int k = 0; k < 3; ++k) {
				bool moves = movers == 0 || (i < movers && (i + f) % 4 == 0);
				float step = k < dims && moves ? test_rng_float(&rng, -0.5f, 0.5f) : 0.0f;
				soa[(size_t)k * (START_N + 64) + i] = e.min[k] + step;
				soa[(size_t)(3 + k) * (START_N + 64) + i] = e.max[k] + step;
			}
		}
		size_t stride = START_N + 64;
		cur = (bp_bounds_arrays){soa, soa + stride, soa + 2 * stride, soa + 3 * stride, soa + 4 * stride,
			soa + 5 * stride};
		cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(0, n), &cur), BP_OK, "%s", bp_world_last_error(w));
		// Churn: destroy one (swap-remove) and create one, keeping n within the buffer.
		if (f % 3 == 0 && n > 10)
			cr_assert_eq(bp_entity_destroy(w, bp_world_entity_at(w, test_rng_below(&rng, n))), BP_OK);
		if (f % 3 == 1 && bp_world_entity_count(w) < START_N + 32) {
			bp_entity_def e = bp_entity_def_default();
			for (int k = 0; k < dims; ++k) {
				e.min[k] = test_rng_float(&rng, 0, 40);
				e.max[k] = e.min[k] + test_rng_float(&rng, 0, 3);
			}
			e.user_key = next_key++;
			bp_entity h;
			cr_assert_eq(bp_entity_create(w, &e, &h), BP_OK);
		}
		cr_assert_eq(bp_world_set_algorithm(w, algorithms[f % algorithm_count]), BP_OK);
		uint64_t frame;
		cr_assert_eq(bp_frame_submit(w, &frame), BP_OK);
		cr_assert_eq(frame, last + 1);
		last = frame;
		// Mostly submit without waiting (so submits coalesce), sometimes wait.
		if (f % 4 == 3)
			cr_assert_eq(bp_frame_wait(w, frame), BP_OK);
		// Now and then a world view: it builds the frame just submitted first, takes the
		// next number, and is never what the readers acquire.
		if (f % 5 == 2 && f + 1 < frames) {
			bp_view *view;
			cr_assert_eq(bp_world_view(w, &view), BP_OK, "%s", bp_world_last_error(w));
			cr_assert_eq(bp_view_frame(view), last + 1);
			cr_assert_eq(bp_view_entity_count(view), bp_world_entity_count(w));
			size_t pairs;
			bp_view_pairs(view, &pairs);
			cr_assert_eq(pairs, 0u);
			bp_view *latest;
			cr_assert_eq(bp_frame_acquire(w, &latest), BP_OK);
			cr_assert_eq(bp_view_frame(latest), last, "the frame submitted before the view is published");
			cr_assert_eq(bp_view_release(latest), BP_OK);
			last = bp_view_frame(view);
			cr_assert_eq(bp_view_release(view), BP_OK);
		}
	}
	cr_assert_eq(bp_frame_wait(w, last), BP_OK);
	// Frames may all be built before a reader was first scheduled (a busy machine):
	// the readers are not stopped until each has checked a frame or given up.
	for (int i = 0; i < READERS; ++i)
		while (atomic_load(&readers[i].frames_checked) == 0 && !atomic_load(&readers[i].finished))
			sched_yield();
	atomic_store_explicit(&s.stop, true, memory_order_release);
	for (int i = 0; i < READERS; ++i) {
		pthread_join(threads[i], NULL);
		cr_assert(readers[i].ok, "reader %d: %s", i, readers[i].failure);
		cr_assert_gt(atomic_load(&readers[i].frames_checked), 0);
		cr_assert_gt(readers[i].queries_checked, 0);
		cr_log_info("reader %d: %llu frames, %llu queries checked", i, (unsigned long long)readers[i].frames_checked,
			(unsigned long long)readers[i].queries_checked);
	}
	bp_view *v;
	cr_assert_eq(bp_frame_acquire(w, &v), BP_OK);
	cr_assert_eq(bp_view_frame(v), last);
	bp_view_release(v);
	bp_world_destroy(w);
	free(soa);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(frame_stress, readers_host_builder_3d, .timeout = 600) { run_stress(3, 1, false, 0); }
Test(frame_stress, readers_host_builder_2d, .timeout = 600) { run_stress(2, 2, false, 0); }
Test(frame_stress, readers_host_builder_incremental_3d, .timeout = 600) { run_stress(3, 3, true, 0); }

// 48 entities take turns to move; those that stop settle as soon as they are quiet.
Test(frame_stress, readers_host_builder_incremental_settling_3d, .timeout = 600)
{
	bpi_set_settle_min(1); // set here: the TSan runner's Test() takes no .init
	run_stress(3, 4, true, 48);
	bpi_set_settle_min(1024);
}
