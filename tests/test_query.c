// SPDX-License-Identifier: MIT
// Queries on a view (docs/design.md "Queries") against brute-force evaluation over the same boxes, for every
// available algorithm, 2D and 3D, plus hand-worked edge cases.
#include <float.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "query_oracle.h"

static bool pair_in(const oracle_pairs *p, uint32_t a, uint32_t b)
{
	bp_pair key = {a < b ? a : b, a < b ? b : a};
	size_t lo = 0, hi = p->count;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const bp_pair *m = &p->data[mid];
		if (m->lo < key.lo || (m->lo == key.lo && m->hi < key.hi))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->count && p->data[lo].lo == key.lo && p->data[lo].hi == key.hi;
}

// ---- random scenes ---------------------------------------------------------------

/// Boxes with integer corners when `snap` (many touching faces, equal boxes,
/// zero-size boxes and exact distance ties), else random floats; 1 in 8 boxes
/// is a point.
static void random_scene(oracle_box *boxes, uint32_t n, int dims, bool snap, uint64_t seed)
{
	float world = dims == 2 ? sqrtf((float)n) * 2.5f : cbrtf((float)n) * 2.5f;
	test_random_boxes(boxes, n, dims, world, 3.0f, true, seed);
	test_rng rng = {seed ^ 0x5eed};
	for (uint32_t i = 0; i < n; ++i) {
		bool point = test_rng_below(&rng, 8) == 0;
		for (int k = 0; k < dims; ++k) {
			if (snap) {
				boxes[i].min[k] = floorf(boxes[i].min[k]);
				boxes[i].max[k] = boxes[i].min[k] + (float)test_rng_below(&rng, 3);
			}
			if (point)
				boxes[i].max[k] = boxes[i].min[k];
		}
	}
}

static double sum_indices(double acc, uint32_t neighbour, void *user)
{
	(void)user;
	return acc + neighbour;
}

typedef struct collected {
	uint32_t *items;
	size_t count;
} collected;

static void collect(uint32_t entity, uint32_t neighbour, void *user)
{
	(void)entity;
	collected *c = user;
	c->items[c->count++] = neighbour;
}

/// Pairs, colliding and neighbour queries against the oracle's pair list.
static void check_pair_queries(const bp_view *v, const oracle_pairs *want, uint32_t n, uint64_t seed)
{
	size_t count;
	const bp_pair *pairs = bp_view_pairs(v, &count);
	cr_assert_eq(count, want->count, "pairs: %zu vs oracle %zu", count, want->count);
	for (size_t i = 0; i < count; ++i) // canonical order, so element-wise equal
		cr_assert(pairs[i].lo == want->data[i].lo && pairs[i].hi == want->data[i].hi, "pair %zu", i);
	for (size_t i = 0; i < count; ++i) {
		cr_assert(bp_view_colliding(v, pairs[i].lo, pairs[i].hi));
		cr_assert(bp_view_colliding(v, pairs[i].hi, pairs[i].lo));
	}
	test_rng rng = {seed};
	for (int q = 0; q < 2000 && n > 1; ++q) {
		uint32_t a = test_rng_below(&rng, n), b = test_rng_below(&rng, n);
		cr_assert_eq(bp_view_colliding(v, a, b), a != b && pair_in(want, a, b), "colliding(%u, %u)", a, b);
	}
	cr_assert(!bp_view_colliding(v, n, 0));

	// Neighbour lists: the oracle's pairs mentioning e, ascending.
	uint32_t *expect = malloc((n + 1) * sizeof *expect), *seen = malloc((n + 1) * sizeof *seen);
	for (uint32_t e = 0; e < n; ++e) {
		size_t m = 0;
		double sum = 0;
		for (size_t i = 0; i < want->count; ++i) {
			if (want->data[i].lo == e)
				expect[m++] = want->data[i].hi;
			else if (want->data[i].hi == e)
				expect[m++] = want->data[i].lo;
		}
		// Pairs (x, e) with x < e come first in sorted order only when grouped by lo;
		// sort expect to be order-agnostic in how it was gathered.
		for (size_t i = 1; i < m; ++i)
			for (size_t j = i; j > 0 && expect[j - 1] > expect[j]; --j) {
				uint32_t t = expect[j];
				expect[j] = expect[j - 1];
				expect[j - 1] = t;
			}
		for (size_t i = 0; i < m; ++i)
			sum += expect[i];
		const uint32_t *list;
		size_t list_n;
		cr_assert_eq(bp_view_neighbours(v, e, &list, &list_n), BP_OK);
		cr_assert_eq(list_n, m, "entity %u: %zu neighbours, oracle %zu", e, list_n, m);
		cr_assert(oracle_same_bytes(list, expect, m * sizeof *list), "entity %u neighbours", e);
		collected c = {seen, 0};
		cr_assert_eq(bp_view_for_each_neighbour(v, e, collect, &c), BP_OK);
		cr_assert_eq(c.count, m);
		cr_assert(oracle_same_bytes(seen, expect, m * sizeof *seen));
		double reduced = -1;
		cr_assert_eq(bp_view_reduce_neighbours(v, e, sum_indices, NULL, 0.5, &reduced), BP_OK);
		cr_assert_eq(reduced, sum + 0.5);
	}
	const uint32_t *list;
	size_t list_n;
	cr_assert_eq(bp_view_neighbours(v, n, &list, &list_n), BP_ERR_OUT_OF_RANGE);
	free(expect);
	free(seen);
}

static void run_random(int dims, bool snap, uint32_t n, uint64_t seed)
{
	oracle_box *boxes = calloc(n, sizeof *boxes);
	random_scene(boxes, n, dims, snap, seed);
	oracle_pairs want = oracle_find_pairs(boxes, n, dims);
	int algorithms = 0;
	for (int a = 0; a < BP_ALGO_COUNT; ++a) {
		if (!bp_algorithm_available((bp_algorithm)a))
			continue;
		algorithms++;
		bp_world *w = test_world_from_boxes(boxes, n, dims, (bp_algorithm)a, 2);
		bp_view *v = NULL;
		cr_assert_eq(bp_frame_step(w, &v), BP_OK, "%s: %s", bp_algorithm_name((bp_algorithm)a), bp_world_last_error(w));
		cr_assert_eq(bp_view_entity_count(v), n);
		cr_assert_eq(bp_view_dims(v), dims);
		bp_frame_stats stats = bp_view_stats(v);
		cr_assert_eq(stats.pair_count, want.count);
		cr_assert(a == BP_ALGO_AUTO || stats.algorithm == (bp_algorithm)a);
		check_pair_queries(v, &want, n, seed + a);
		oracle_check_view_queries(v, boxes, n, dims, snap, seed * 31 + a);
		bp_view_release(v);
		bp_world_destroy(w);
	}
	cr_assert_geq(algorithms, 2); // auto and brute at least
	oracle_pairs_free(&want);
	free(boxes);
	cr_assert_eq(bp_allocated_bytes(), 0, "leaked %lld bytes", (long long)bp_allocated_bytes());
}

Test(query, random_2d_float, .timeout = 120) { run_random(2, false, 400, 11); }
Test(query, random_2d_integer_grid, .timeout = 120) { run_random(2, true, 400, 12); }
Test(query, random_3d_float, .timeout = 120) { run_random(3, false, 500, 13); }
Test(query, random_3d_integer_grid, .timeout = 120) { run_random(3, true, 500, 14); }
Test(query, tiny_scenes, .timeout = 60)
{
	for (uint32_t n = 1; n <= 5; ++n)
		run_random(n % 2 ? 3 : 2, true, n, 100 + n);
}

// ---- pair events -----------------------------------------------------------------

static size_t key_diff(const oracle_pairs *a, const oracle_pairs *b, bp_key_pair *out)
{
	size_t n = 0;
	for (size_t i = 0; i < a->count; ++i)
		if (!pair_in(b, a->data[i].lo, a->data[i].hi))
			out[n++] = (bp_key_pair){a->data[i].lo, a->data[i].hi};
	return n;
}

Test(query, pair_events_follow_the_oracle, .timeout = 120)
{
	// User keys are the dense indices of test_world_from_boxes (e.user_key = i) and
	// no entity is destroyed, so key pairs equal index pairs here.
	const uint32_t n = 300;
	oracle_box *boxes = calloc(n, sizeof *boxes);
	random_scene(boxes, n, 2, false, 77);
	bp_world *w = test_world_from_boxes(boxes, n, 2, BP_ALGO_AUTO, 2);
	oracle_pairs before = {0}, after = oracle_find_pairs(boxes, n, 2);
	bp_key_pair *want_began = malloc(n * n * sizeof *want_began), *want_ended = malloc(n * n * sizeof *want_ended);
	bp_key_pair *began = malloc(n * n * sizeof *began), *ended = malloc(n * n * sizeof *ended);
	test_rng rng = {5};
	for (int frame = 0; frame < 6; ++frame) {
		bp_view *v;
		cr_assert_eq(bp_frame_step(w, &v), BP_OK);
		size_t want_b = key_diff(&after, &before, want_began), want_e = key_diff(&before, &after, want_ended);
		size_t got_b, got_e;
		cr_assert_eq(bp_view_pair_events(v, began, n * n, &got_b, ended, n * n, &got_e), BP_OK);
		cr_assert_eq(got_b, want_b, "frame %d began %zu vs %zu", frame, got_b, want_b);
		cr_assert_eq(got_e, want_e, "frame %d ended %zu vs %zu", frame, got_e, want_e);
		cr_assert(oracle_same_bytes(began, want_began, want_b * sizeof *began));
		cr_assert(oracle_same_bytes(ended, want_ended, want_e * sizeof *ended));
		if (want_b > 1) { // a short buffer reports the full counts
			cr_assert_eq(bp_view_pair_events(v, began, 1, &got_b, NULL, 0, &got_e), BP_ERR_OUT_OF_RANGE);
			cr_assert_eq(got_b, want_b);
			cr_assert_eq(got_e, want_e);
			cr_assert_eq(began[0].a, want_began[0].a);
		}
		bp_view_release(v);
		// Move a third of the boxes by up to 2 units.
		for (uint32_t i = 0; i < n; ++i) {
			if (test_rng_below(&rng, 3))
				continue;
			float d[2] = {test_rng_float(&rng, -2, 2), test_rng_float(&rng, -2, 2)};
			for (int k = 0; k < 2; ++k) {
				boxes[i].min[k] += d[k];
				boxes[i].max[k] += d[k];
			}
			bp_entity e = bp_world_entity_at(w, i);
			cr_assert_eq(bp_entity_set_bounds(w, e, boxes[i].min, boxes[i].max), BP_OK);
		}
		oracle_pairs_free(&before);
		before = after;
		after = oracle_find_pairs(boxes, n, 2);
	}
	oracle_pairs_free(&before);
	oracle_pairs_free(&after);
	free(want_began);
	free(want_ended);
	free(began);
	free(ended);
	bp_world_destroy(w);
	free(boxes);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

// ---- hand-worked edge cases ------------------------------------------------------

static bp_view *hand_view(const oracle_box *boxes, uint32_t n, int dims, bp_world **w)
{
	*w = test_world_from_boxes(boxes, n, dims, BP_ALGO_BRUTE, 1);
	bp_view *v;
	cr_assert_eq(bp_frame_step(*w, &v), BP_OK);
	return v;
}

Test(query, hand_worked_2d, .timeout = 30)
{
	oracle_box boxes[4] = {
		{{0, 0}, {1, 1}, 1, UINT64_MAX, false, false},     // 0: unit square
		{{2, 0}, {3, 1}, 1, UINT64_MAX, false, false},     // 1: unit square, 1 to the right of 0
		{{5, 5}, {5, 5}, 1, UINT64_MAX, false, false},     // 2: a point
		{{1, 1}, {2, 2}, 1, UINT64_MAX, false, false},     // 3: touches 0 at corner (1,1) and 1 at corner (2,1)
	};
	bp_world *w;
	bp_view *v = hand_view(boxes, 4, 2, &w);
	uint32_t out[4];
	size_t total;

	// Pairs: (0,3) and (1,3) by touching corners; 0 and 1 are 1 apart.
	cr_assert(bp_view_colliding(v, 0, 3) && bp_view_colliding(v, 3, 1) && !bp_view_colliding(v, 0, 1));

	// Box [1,2]x[1,1] (zero height) touches 0's corner, 1's corner, and lies on 3's bottom edge.
	cr_assert_eq(bp_view_overlap_box(v, (float[]){1, 1}, (float[]){2, 1}, NULL, out, 4, &total), BP_OK);
	cr_assert(total == 3 && out[0] == 0 && out[1] == 1 && out[2] == 3);
	// Point on the zero-size box 2.
	cr_assert_eq(bp_view_overlap_point(v, (float[]){5, 5}, NULL, out, 4, &total), BP_OK);
	cr_assert(total == 1 && out[0] == 2);
	// Short buffer: three hits, room for one -> the lowest index and the full count.
	cr_assert_eq(bp_view_overlap_box(v, (float[]){1, 1}, (float[]){2, 1}, NULL, out, 1, &total), BP_ERR_OUT_OF_RANGE);
	cr_assert(total == 3 && out[0] == 0);
	// Capacity 0 counts: BP_OK and the full count.
	cr_assert_eq(bp_view_overlap_box(v, (float[]){1, 1}, (float[]){2, 1}, NULL, NULL, 0, &total), BP_OK);
	cr_assert_eq(total, 3);

	// Sphere at (5, 2) radius 3: box 2 at distance 3 (touching), box 1 at distance 2
	// (gap x 2, y 1: sqrt(4 + 1) = 2.24), box 3 at 3 (gap x 3), box 0 at sqrt(17) -> 1, 2, 3.
	cr_assert_eq(bp_view_overlap_sphere(v, (float[]){5, 2}, 3, NULL, out, 4, &total), BP_OK);
	cr_assert(total == 3 && out[0] == 1 && out[1] == 2 && out[2] == 3);

	// Ray along +x at y = 0.5 from inside box 0: hits 0 at t = 0, then 1 at x = 2, t = 1.5;
	// 3 spans y 1..2 and 2 sits at y = 5, so both are missed.
	bp_hit hits[4];
	bool found;
	cr_assert_eq(bp_view_cast_ray(v, (float[]){0.5f, 0.5f}, (float[]){1, 0}, INFINITY, NULL, hits, 4, &total), BP_OK);
	cr_assert(total == 2 && hits[0].index == 0 && hits[0].distance == 0 && hits[1].index == 1);
	cr_assert_eq(hits[1].distance, 1.5f);
	// Axis-parallel ray along y = 1 (on the edges of 0, 1 and 3) from x = -1: enters 0 at
	// t = 1, 3 at t = 2 (x = 1), 1 at t = 3; ties none.
	cr_assert_eq(bp_view_cast_ray(v, (float[]){-1, 1}, (float[]){1, 0}, INFINITY, NULL, hits, 4, &total), BP_OK);
	cr_assert(total == 3 && hits[0].index == 0 && hits[1].index == 3 && hits[2].index == 1);
	cr_assert(hits[0].distance == 1 && hits[1].distance == 2 && hits[2].distance == 3);
	// Max distance: t = 1 reaches 0 exactly (closed), t = 0.999 does not.
	cr_assert_eq(bp_view_cast_ray_closest(v, (float[]){-1, 1}, (float[]){1, 0}, 1.0f, NULL, &hits[0], &found), BP_OK);
	cr_assert(found && hits[0].index == 0);
	cr_assert_eq(bp_view_cast_ray_closest(v, (float[]){-1, 1}, (float[]){1, 0}, 0.999f, NULL, &hits[0], &found), BP_OK);
	cr_assert(!found);
	// Parallel ray just above everything but 2 and 3: y = 2.5 misses all.
	cr_assert_eq(bp_view_cast_ray_closest(v, (float[]){-1, 2.5f}, (float[]){1, 0}, INFINITY, NULL, &hits[0], &found),
		BP_OK);
	cr_assert(!found);

	// Nearest to (1.5, 0.5) with k = 10 > n: 3 is 0.5 away, 0 and 1 both 0.5 (tie ->
	// index order 0, 1, 3), then 2: sqrt(3.5^2 + 4.5^2).
	size_t count;
	cr_assert_eq(bp_view_nearest(v, (float[]){1.5f, 0.5f}, 10, NULL, hits, &count), BP_OK);
	cr_assert_eq(count, 4);
	cr_assert(hits[0].index == 0 && hits[1].index == 1 && hits[2].index == 3 && hits[3].index == 2);
	cr_assert(hits[0].distance == 0.5f && hits[2].distance == 0.5f);
	cr_assert_eq(hits[3].distance, sqrtf(3.5f * 3.5f + 4.5f * 4.5f));

	// Bad input is rejected, never crashes.
	cr_assert_eq(bp_view_overlap_box(v, (float[]){NAN, 0}, (float[]){1, 1}, NULL, out, 4, &total), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_view_overlap_box(v, (float[]){2, 0}, (float[]){1, 1}, NULL, out, 4, &total), BP_ERR_INVERTED_BOUNDS);
	cr_assert_eq(bp_view_overlap_sphere(v, (float[]){0, 0}, -1, NULL, out, 4, &total), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_cast_ray_closest(v, (float[]){0, 0}, (float[]){INFINITY, 0}, 1, NULL, hits, &found),
		BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_view_cast_ray_closest(v, (float[]){0, 0}, (float[]){1, 0}, NAN, NULL, hits, &found),
		BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_overlap_box(v, (float[]){0, 0}, (float[]){1, 1}, NULL, NULL, 4, &total), BP_ERR_INVALID_ARGUMENT);
	bp_view_release(v);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(query, ray_from_inside_3d, .timeout = 30)
{
	oracle_box boxes[2] = {
		{{0, 0, 0}, {4, 4, 4}, 1, UINT64_MAX, false, false},
		{{1, 1, 1}, {2, 2, 2}, 1, UINT64_MAX, false, false},
	};
	bp_world *w;
	bp_view *v = hand_view(boxes, 2, 3, &w);
	bp_hit hits[2];
	size_t total;
	// From (3,3,3) towards -(1,1,1): inside 0 (t = 0); enters 1 at its corner (2,2,2), t = 1.
	cr_assert_eq(bp_view_cast_ray(v, (float[]){3, 3, 3}, (float[]){-1, -1, -1}, INFINITY, NULL, hits, 2, &total), BP_OK);
	cr_assert(total == 2 && hits[0].index == 0 && hits[0].distance == 0 && hits[1].index == 1);
	cr_assert_eq(hits[1].distance, 1.0f);
	// Pointing away from 1: only 0.
	cr_assert_eq(bp_view_cast_ray(v, (float[]){3, 3, 3}, (float[]){1, 0, 0}, INFINITY, NULL, hits, 2, &total), BP_OK);
	cr_assert(total == 1 && hits[0].index == 0);
	// A zero direction hits what contains the origin, at t = 0.
	cr_assert_eq(bp_view_cast_ray(v, (float[]){1.5f, 1.5f, 1.5f}, (float[]){0, 0, 0}, 5, NULL, hits, 2, &total), BP_OK);
	cr_assert(total == 2 && hits[0].index == 0 && hits[1].index == 1);
	bp_view_release(v);
	bp_world_destroy(w);
}

// ---- large views: queries through the view's index --------------------------------

/// A ray whose slab entries are all about FLT_MAX: for box 0 the quotient rounds to FLT_MAX
/// where the product by a rounded 1 / d overflows; the others enter at exactly FLT_MAX (a
/// power of two for d). Every hit ties, so the closest is box 0, the lowest index, wherever
/// the hierarchy puts it.
Test(query, ray_entries_at_float_max_tie_to_the_lowest_index, .timeout = 30)
{
	enum { N = 600 };
	oracle_box boxes[N];
	boxes[0] = (oracle_box){{-1, 0x1.8fe488p+2f, -1}, {1, 10, 10}, 1, UINT64_MAX, false, false};
	for (uint32_t k = 1; k < N; ++k)
		boxes[k] = (oracle_box){{-1, -1, 0x1.fffffep+1f}, {1, 10, 10.0f + (float)k}, 1, UINT64_MAX, false, false};
	bp_world *w = test_world_from_boxes(boxes, N, 3, BP_ALGO_BRUTE, 1);
	bp_view *v;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	const float o[3] = {0, 0, 0}, d[3] = {0, 0x1.8fe48ap-126f, 0x1p-126f};
	bp_hit want[N], got[N + 8];
	cr_assert_eq(oracle_query_ray(boxes, N, 3, o, d, INFINITY, want), N);
	cr_assert(want[0].index == 0 && want[0].distance == FLT_MAX && want[1].distance == FLT_MAX);
	bp_hit closest;
	bool found;
	cr_assert_eq(bp_view_cast_ray_closest(v, o, d, INFINITY, NULL, &closest, &found), BP_OK);
	cr_assert(found && closest.index == 0 && closest.distance == FLT_MAX, "closest %u at %a", closest.index,
		(double)closest.distance);
	size_t total;
	cr_assert_eq(bp_view_cast_ray(v, o, d, INFINITY, NULL, got, N + 8, &total), BP_OK);
	cr_assert(total == N && oracle_same_bytes(got, want, N * sizeof *got));
	bp_view_release(v);
	bp_world_destroy(w);
}

#include "view/view.h" // the view's layout: checks that the index was built and used

/// `n` boxes in a dozen clusters, 95% of extent <= 1 and 5% up to 10, 1 in 16 of
/// size zero; integer corners when `snap` (exact touching faces). With `huge`,
/// box n / 3 spans the whole scene and more.
static void clustered_scene(oracle_box *boxes, uint32_t n, int dims, bool snap, bool huge, uint64_t seed)
{
	test_rng rng = {seed};
	float centre[12][3];
	for (int c = 0; c < 12; ++c)
		test_rng_vec(&rng, centre[c], 3, 0, 200, false);
	for (uint32_t i = 0; i < n; ++i) {
		const float *at = centre[test_rng_below(&rng, 12)];
		float size = test_rng_below(&rng, 20) == 0 ? 10.0f : 1.0f;
		bool point = test_rng_below(&rng, 16) == 0;
		boxes[i] = (oracle_box){.category = 1, .mask = UINT64_MAX};
		for (int k = 0; k < dims; ++k) {
			float spread = test_rng_float(&rng, -1, 1) + test_rng_float(&rng, -1, 1) + test_rng_float(&rng, -1, 1);
			float lo = at[k] + 8.0f * spread, ext = point ? 0.0f : test_rng_float(&rng, 0, size);
			if (snap) {
				lo = floorf(lo);
				ext = floorf(ext);
			}
			boxes[i].min[k] = lo;
			boxes[i].max[k] = lo + ext;
		}
	}
	if (huge)
		for (int k = 0; k < dims; ++k) {
			boxes[n / 3].min[k] = -50;
			boxes[n / 3].max[k] = 300;
		}
}

static void check_sphere_query(const bp_view *v, const oracle_box *boxes, uint32_t n, int dims, const float *c,
	float r, uint32_t *want, uint32_t *got)
{
	size_t want_n = oracle_query_sphere(boxes, n, dims, c, r, want), got_n = 0;
	cr_assert_eq(bp_view_overlap_sphere(v, c, r, NULL, got, n + 1, &got_n), BP_OK);
	cr_assert_eq(got_n, want_n, "sphere r=%g: %zu vs %zu", (double)r, got_n, want_n);
	cr_assert(oracle_same_bytes(got, want, want_n * sizeof *got));
}

static void check_ray_query(const bp_view *v, const oracle_box *boxes, uint32_t n, int dims, const float *o,
	const float *d, float max_t, bp_hit *want, bp_hit *got)
{
	size_t want_n = oracle_query_ray(boxes, n, dims, o, d, max_t, want), got_n = 0;
	cr_assert_eq(bp_view_cast_ray(v, o, d, max_t, NULL, got, n + 8, &got_n), BP_OK);
	cr_assert_eq(got_n, want_n, "ray: %zu vs %zu hits", got_n, want_n);
	for (size_t i = 0; i < want_n; ++i)
		cr_assert(got[i].index == want[i].index && got[i].distance == want[i].distance, "ray hit %zu", i);
	bp_hit closest;
	bool found;
	cr_assert_eq(bp_view_cast_ray_closest(v, o, d, max_t, NULL, &closest, &found), BP_OK);
	cr_assert_eq(found, want_n > 0);
	if (found)
		cr_assert(closest.index == want[0].index && closest.distance == want[0].distance, "closest: %u vs %u",
			closest.index, want[0].index);
}

static void check_nearest_query(const bp_view *v, const oracle_box *boxes, uint32_t n, int dims, const float *p,
	uint32_t k, bp_hit *want, bp_hit *got)
{
	size_t want_n = oracle_query_nearest(boxes, n, dims, p, k, want), got_n = 0;
	cr_assert_eq(bp_view_nearest(v, p, k, NULL, got, &got_n), BP_OK);
	cr_assert_eq(got_n, want_n);
	for (size_t i = 0; i < want_n; ++i)
		cr_assert(got[i].index == want[i].index && got[i].distance == want[i].distance, "nearest %zu of k=%u", i,
			k);
}

static bool count_visit(uint32_t entity, void *user)
{
	(void)entity;
	++*(size_t *)user;
	return true;
}

static void run_large(int dims, bool snap, bool huge, uint64_t seed)
{
	const uint32_t n = 20000;
	oracle_box *boxes = calloc(n, sizeof *boxes);
	clustered_scene(boxes, n, dims, snap, huge, seed);
	bp_world *w = test_world_from_boxes(boxes, n, dims, BP_ALGO_AUTO, 2);
	bp_view *v = NULL;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK, "%s", bp_world_last_error(w));
	cr_assert(!(atomic_load(&v->ready) & BPI_VIEW_HIERARCHY), "a hierarchy before any query asked for one");
	const float nowhere[3] = {-1e5f, -1e5f, -1e5f};
	uint32_t first[1];
	size_t first_n;
	cr_assert_eq(bp_view_overlap_point(v, nowhere, NULL, first, 1, &first_n), BP_OK);
	cr_assert(v->hierarchy.shared && v->hierarchy.shared->bvh.count == n, "the first query made no hierarchy");
	// The visitors walk the same hierarchy.
	cr_assert_eq(bp_view_visit_overlap_box(v, nowhere, nowhere, NULL, count_visit, &first_n), BP_OK);
	uint32_t *want = malloc((n + 1) * sizeof *want), *got = malloc((n + 1) * sizeof *got);
	bp_hit *want_hits = malloc((n + 8) * sizeof *want_hits), *got_hits = malloc((n + 8) * sizeof *got_hits);
	test_rng rng = {seed * 7 + 1};
	for (int q = 0; q < 60; ++q) {
		const oracle_box *e = &boxes[test_rng_below(&rng, n)];
		float lo[3], hi[3], p[3], d[3], ext[3];
		// A box near an entity; then boxes touching it exactly on one face.
		test_rng_vec(&rng, lo, dims, -10, 210, snap);
		test_rng_vec(&rng, ext, dims, 0, 6, snap);
		for (int k = 0; k < dims; ++k)
			hi[k] = lo[k] + ext[k];
		oracle_check_box_query(v, boxes, n, dims, lo, hi, false);
		int face = (int)test_rng_below(&rng, (uint32_t)dims);
		for (int k = 0; k < dims; ++k) {
			lo[k] = e->min[k] - 0.5f;
			hi[k] = e->max[k] + 0.5f;
		}
		float keep_lo = lo[face], keep_hi = hi[face];
		lo[face] = hi[face] = e->max[face]; // touches e's max face (a zero-width slab)
		oracle_check_box_query(v, boxes, n, dims, lo, hi, false);
		lo[face] = keep_lo;
		hi[face] = e->min[face]; // ends exactly on e's min face
		oracle_check_box_query(v, boxes, n, dims, lo, hi, false);
		hi[face] = keep_hi;
		oracle_check_box_query(v, boxes, n, dims, e->max, e->max, true); // a corner is in the closed box
		oracle_check_box_query(v, boxes, n, dims, e->min, e->min, true);

		// Far outside the scene: nothing, and nearest walks in from one end.
		float far = (q % 2 ? 1 : -1) * 1e5f;
		for (int k = 0; k < dims; ++k) {
			lo[k] = far + (float)q;
			hi[k] = lo[k] + 10;
		}
		oracle_check_box_query(v, boxes, n, dims, lo, hi, false);

		check_sphere_query(v, boxes, n, dims, e->max, 0, want, got); // touching at zero radius
		test_rng_vec(&rng, p, dims, -10, 210, snap);
		check_sphere_query(v, boxes, n, dims, p, test_rng_float(&rng, 0, 12), want, got);
		check_sphere_query(v, boxes, n, dims, lo, 1e5f, want, got); // from far away, reaching in

		// Rays: random, axis-parallel, and from far outside aimed at an entity.
		test_rng_vec(&rng, p, dims, -20, 220, false);
		test_rng_vec(&rng, d, dims, -1, 1, false);
		for (int k = 0; k < dims; ++k)
			if (test_rng_below(&rng, 3) == 0)
				d[k] = 0;
		check_ray_query(v, boxes, n, dims, p, d, q % 3 ? INFINITY : test_rng_float(&rng, 0, 60), want_hits,
			got_hits);
		for (int k = 0; k < dims; ++k) {
			p[k] = (q % 4 < 2 ? -1e4f : 1e4f) + (float)k;
			d[k] = 0.5f * (e->min[k] + e->max[k]) - p[k];
		}
		check_ray_query(v, boxes, n, dims, p, d, INFINITY, want_hits, got_hits);
		check_ray_query(v, boxes, n, dims, p, d, 0.999f, want_hits, got_hits); // stops short of the scene
		for (int k = 0; k < dims; ++k)
			d[k] = -d[k]; // pointing away
		check_ray_query(v, boxes, n, dims, p, d, INFINITY, want_hits, got_hits);

		uint32_t ks[] = {1, 10, 100};
		test_rng_vec(&rng, p, dims, -10, 210, snap);
		check_nearest_query(v, boxes, n, dims, p, ks[q % 3], want_hits, got_hits);
		check_nearest_query(v, boxes, n, dims, e->min, ks[q % 3], want_hits, got_hits);
		check_nearest_query(v, boxes, n, dims, lo, ks[q % 3], want_hits, got_hits);
	}
	// Everything, in full and through a short buffer (the lowest indices, ascending).
	float all_lo[3] = {-1e6f, -1e6f, -1e6f}, all_hi[3] = {1e6f, 1e6f, 1e6f};
	oracle_check_box_query(v, boxes, n, dims, all_lo, all_hi, false);
	for (int q = 0; q < 8; ++q) {
		float lo[3], hi[3];
		test_rng_vec(&rng, lo, dims, 0, 200, snap);
		for (int k = 0; k < dims; ++k)
			hi[k] = lo[k] + 30;
		size_t want_n = oracle_query_box(boxes, n, dims, lo, hi, want), got_n = 0;
		if (want_n < 4)
			continue;
		size_t short_n = want_n / 3;
		cr_assert_eq(bp_view_overlap_box(v, lo, hi, NULL, got, short_n, &got_n), BP_ERR_OUT_OF_RANGE);
		cr_assert_eq(got_n, want_n);
		cr_assert(oracle_same_bytes(got, want, short_n * sizeof *got), "short buffer: not the lowest indices");
		cr_assert_eq(bp_view_overlap_sphere(v, lo, 20, NULL, got, short_n, &got_n),
			oracle_query_sphere(boxes, n, dims, lo, 20, want) > short_n ? BP_ERR_OUT_OF_RANGE : BP_OK);
		cr_assert(oracle_same_bytes(got, want, BP_MIN(short_n, got_n) * sizeof *got));
	}
	free(want);
	free(got);
	free(want_hits);
	free(got_hits);
	bp_view_release(v);
	// This frame's hierarchy was asked for: the builder makes the next one's.
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	cr_assert((atomic_load(&v->ready) & BPI_VIEW_HIERARCHY) && v->hierarchy.shared && v->hierarchy.shared->bvh.count == n,
		"the builder made no hierarchy");
	bp_view_release(v);
	bp_world_destroy(w);
	free(boxes);
	cr_assert_eq(bp_allocated_bytes(), 0, "leaked %lld bytes", (long long)bp_allocated_bytes());
}

Test(query, large_clustered_3d, .timeout = 120) { run_large(3, false, false, 21); }
Test(query, large_clustered_3d_integer, .timeout = 120) { run_large(3, true, false, 22); }
Test(query, large_mixed_with_huge_box_3d, .timeout = 120) { run_large(3, false, true, 23); }
Test(query, large_clustered_2d_integer, .timeout = 120) { run_large(2, true, false, 24); }
Test(query, large_mixed_with_huge_box_2d, .timeout = 120) { run_large(2, true, true, 25); }
