// SPDX-License-Identifier: MIT
// Counting is not an error: every call that fills a caller's buffer returns BP_OK with
// the total when asked with capacity 0, BP_ERR_OUT_OF_RANGE only for a short buffer with
// room, and the conditions that once shared that status have their own.
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

enum { N = 600, QUERIES = 40 };

static bool overlaps(const oracle_box *b, const float *lo, const float *hi)
{
	for (int k = 0; k < 3; ++k)
		if (b->min[k] > hi[k] || lo[k] > b->max[k])
			return false;
	return true;
}

static bool within(const oracle_box *b, const float *c, float r)
{
	double d2 = 0;
	for (int k = 0; k < 3; ++k) {
		double gap = c[k] < b->min[k] ? b->min[k] - c[k] : c[k] > b->max[k] ? c[k] - b->max[k] : 0;
		d2 += gap * gap;
	}
	return d2 <= (double)r * r;
}

/// Entities the filter (category 2, mask 1, dynamic only) accepts.
static bool accepted(const oracle_box *b)
{
	return (2u & b->mask) && (b->category & 1u) && !b->is_static;
}

/// Checks one buffer-filling call three ways against the expected total: capacity
/// 0 (NULL buffer) counts with BP_OK, a buffer of exactly the total is BP_OK, and
/// one short by one (when it still has room) is BP_ERR_OUT_OF_RANGE with the total.
#define CHECK_COUNTS(want, call_with, buffer)                                                                              \
	do {                                                                                                           \
		size_t total_ = SIZE_MAX;                                                                                  \
		cr_assert_eq(call_with(NULL, 0, &total_), BP_OK, "count only");                                            \
		cr_assert_eq(total_, (want), "count only: %zu, want %zu", total_, (size_t)(want));                        \
		cr_assert_eq(call_with(buffer, (want), &total_), BP_OK, "exact buffer");                                   \
		cr_assert_eq(total_, (want));                                                                              \
		if ((want) >= 2) {                                                                                         \
			cr_assert_eq(call_with(buffer, (want) - 1, &total_), BP_ERR_OUT_OF_RANGE, "short buffer");          \
			cr_assert_eq(total_, (want));                                                                          \
		}                                                                                                          \
	} while (0)

Test(counts, count_only_queries_return_ok_with_the_brute_force_total)
{
	oracle_box boxes[N];
	test_random_boxes(boxes, N, 3, 100, 12, true, 7);
	bp_world *w = test_world_from_boxes(boxes, N, 3, BP_ALGO_AUTO, 1);
	bp_view *v = NULL;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	test_rng rng = {11};
	bp_query_filter filter = bp_query_filter_default();
	filter.category = 2, filter.mask = 1, filter.kinds = BP_QUERY_DYNAMIC;
	static uint32_t indices[N];
	static bp_hit hits[N];
	for (int q = 0; q < QUERIES; ++q) {
		float lo[3], hi[3], c[3], dir[3] = {1, 0, 0};
		test_rng_vec(&rng, lo, 3, 0, 90, false);
		for (int k = 0; k < 3; ++k)
			hi[k] = lo[k] + test_rng_float(&rng, 0, 25), c[k] = lo[k];
		float r = test_rng_float(&rng, 0, 15), max_t = test_rng_float(&rng, 0, 40);
		size_t box_n = 0, point_n = 0, sphere_n = 0, filtered_n = 0, ray_n = 0, cast_n = 0;
		for (uint32_t i = 0; i < N; ++i) {
			const oracle_box *b = &boxes[i];
			box_n += overlaps(b, lo, hi);
			point_n += overlaps(b, c, c);
			sphere_n += within(b, c, r);
			filtered_n += overlaps(b, lo, hi) && accepted(b);
			// A ray along +x from c: the box holds c's y and z and meets [c.x, c.x + max_t] in x.
			ray_n += b->min[1] <= c[1] && c[1] <= b->max[1] && b->min[2] <= c[2] && c[2] <= b->max[2] &&
				 b->max[0] >= c[0] && b->min[0] <= c[0] + max_t;
			// The box [lo, hi] swept along +x by up to max_t.
			float swept_hi[3] = {hi[0] + max_t, hi[1], hi[2]};
			cast_n += overlaps(b, lo, swept_hi);
		}
#define BOX(out, cap, total) bp_view_overlap_box(v, lo, hi, NULL, out, cap, total)
#define POINT(out, cap, total) bp_view_overlap_point(v, c, NULL, out, cap, total)
#define SPHERE(out, cap, total) bp_view_overlap_sphere(v, c, r, NULL, out, cap, total)
#define FILTERED(out, cap, total) bp_view_overlap_box(v, lo, hi, &filter, out, cap, total)
		CHECK_COUNTS(box_n, BOX, indices);
		CHECK_COUNTS(point_n, POINT, indices);
		CHECK_COUNTS(sphere_n, SPHERE, indices);
		CHECK_COUNTS(filtered_n, FILTERED, indices);
#define RAY(out, cap, total) bp_view_cast_ray(v, c, dir, max_t, NULL, out, cap, total)
#define CAST(out, cap, total) bp_view_cast_box(v, lo, hi, dir, max_t, NULL, out, cap, total)
		CHECK_COUNTS(ray_n, RAY, hits);
		CHECK_COUNTS(cast_n, CAST, hits);
	}
	cr_assert_eq(bp_view_release(v), BP_OK);
	bp_world_destroy(w);
}

/// Pairs in `a` and not in `b` (both sorted by (lo, hi)).
static size_t missing_from(const oracle_pairs *a, const oracle_pairs *b)
{
	size_t n = 0, j = 0;
	for (size_t i = 0; i < a->count; ++i) {
		while (j < b->count && (b->data[j].lo < a->data[i].lo ||
					       (b->data[j].lo == a->data[i].lo && b->data[j].hi < a->data[i].hi)))
			++j;
		n += !(j < b->count && b->data[j].lo == a->data[i].lo && b->data[j].hi == a->data[i].hi);
	}
	return n;
}

Test(counts, count_only_events_return_ok_with_the_set_differences)
{
	oracle_box boxes[N];
	test_random_boxes(boxes, N, 3, 100, 10, false, 21);
	bp_world *w = test_world_from_boxes(boxes, N, 3, BP_ALGO_AUTO, 1);
	bp_view *first = NULL, *second = NULL;
	cr_assert_eq(bp_frame_step(w, &first), BP_OK);
	oracle_pairs before = oracle_find_pairs(boxes, N, 3);
	// Move a third of the boxes; dense indices stay (no destroys), so pair sets compare by index.
	test_rng rng = {5};
	for (uint32_t i = 0; i < N; i += 3) {
		float shift[3];
		test_rng_vec(&rng, shift, 3, -4, 4, false);
		for (int k = 0; k < 3; ++k)
			boxes[i].min[k] += shift[k], boxes[i].max[k] += shift[k];
		cr_assert_eq(bp_entity_set_bounds(w, bp_world_entity_at(w, i), boxes[i].min, boxes[i].max), BP_OK);
	}
	cr_assert_eq(bp_frame_step(w, &second), BP_OK);
	oracle_pairs after = oracle_find_pairs(boxes, N, 3);
	size_t want_began = missing_from(&after, &before), want_ended = missing_from(&before, &after);
	cr_assert(want_began >= 2 && want_ended >= 2, "the motion must make and break pairs");

	size_t nb = SIZE_MAX, ne = SIZE_MAX;
	cr_assert_eq(bp_view_events(second, NULL, 0, &nb, NULL, 0, &ne), BP_OK);
	cr_assert(nb == want_began && ne == want_ended, "events %zu/%zu, want %zu/%zu", nb, ne, want_began, want_ended);
	cr_assert_eq(bp_view_pair_events(second, NULL, 0, &nb, NULL, 0, &ne), BP_OK);
	cr_assert(nb == want_began && ne == want_ended);
	cr_assert_eq(bp_view_events_since(second, first, NULL, 0, &nb, NULL, 0, &ne), BP_OK);
	cr_assert(nb == want_began && ne == want_ended);
	cr_assert_eq(bp_view_events(first, NULL, 0, &nb, NULL, 0, &ne), BP_OK, "first frame: every pair began");
	cr_assert(nb == before.count && ne == 0);

	bp_pair_event *began = malloc(want_began * sizeof *began), *ended = malloc(want_ended * sizeof *ended);
	bp_key_pair *kb = malloc(want_began * sizeof *kb);
	// One side counted, the other read in full: BP_OK.
	cr_assert_eq(bp_view_events(second, NULL, 0, &nb, ended, want_ended, &ne), BP_OK);
	cr_assert_eq(bp_view_pair_events(second, kb, want_began, &nb, NULL, 0, &ne), BP_OK);
	cr_assert_eq(bp_view_events_since(second, first, began, want_began, &nb, NULL, 0, &ne), BP_OK);
	// A short buffer with room, on either side, is still refused with the totals.
	cr_assert_eq(bp_view_events(second, began, want_began - 1, &nb, NULL, 0, &ne), BP_ERR_OUT_OF_RANGE);
	cr_assert_eq(bp_view_events(second, NULL, 0, &nb, ended, want_ended - 1, &ne), BP_ERR_OUT_OF_RANGE);
	cr_assert_eq(bp_view_pair_events(second, NULL, 0, &nb, NULL, 0, &ne), BP_OK);
	cr_assert_eq(bp_view_events_since(second, first, NULL, 0, &nb, ended, 1, &ne), BP_ERR_OUT_OF_RANGE);
	cr_assert(nb == want_began && ne == want_ended);
	free(began), free(ended), free(kb);
	oracle_pairs_free(&before), oracle_pairs_free(&after);
	cr_assert_eq(bp_view_release(first), BP_OK);
	cr_assert_eq(bp_view_release(second), BP_OK);
	bp_world_destroy(w);
}

Test(counts, cell_grid_count_only_is_ok)
{
	// Four entities in the 2x1 grid of unit cells: cell 0 holds 0 and 1, cell 1 holds 2 and 3.
	oracle_box boxes[4] = {
		{{0.1f, 0.1f, 0}, {0.2f, 0.2f, 0}, 1, UINT64_MAX, false, false},
		{{0.3f, 0.3f, 0}, {0.4f, 0.4f, 0}, 1, UINT64_MAX, false, false},
		{{1.1f, 0.1f, 0}, {1.2f, 0.2f, 0}, 1, UINT64_MAX, false, false},
		{{1.3f, 0.3f, 0}, {1.4f, 0.4f, 0}, 1, UINT64_MAX, false, false},
	};
	bp_world *w = test_world_from_boxes(boxes, 4, 2, BP_ALGO_BRUTE, 1);
	bp_cell_grid_def def = bp_cell_grid_def_default();
	def.dims = 2;
	def.cells[0] = 2, def.cells[1] = 1;
	bp_cell_grid *g = NULL;
	cr_assert_eq(bp_cell_grid_create(&def, &g), BP_OK);
	cr_assert_eq(bp_cell_grid_assign(g, w), BP_OK);
	size_t total = 0;
	uint32_t out[4];
	// The point's cell and its neighbour: all four entities.
	cr_assert_eq(bp_cell_grid_near_point(g, (float[]){0.5f, 0.5f}, NULL, 0, &total), BP_OK);
	cr_assert_eq(total, 4);
	cr_assert_eq(bp_cell_grid_near_point(g, (float[]){0.5f, 0.5f}, out, 3, &total), BP_ERR_OUT_OF_RANGE);
	cr_assert_eq(total, 4);
	cr_assert_eq(bp_cell_grid_near_point(g, (float[]){0.5f, 0.5f}, out, 4, &total), BP_OK);
	bp_cell_grid_destroy(g);
	bp_world_destroy(w);
}

Test(counts, no_frame_not_submitted_and_periodic_extent_have_statuses_of_their_own)
{
	// Appended: the values before keep their numbers.
	cr_assert_eq(BP_ERR_UNSUPPORTED, 10);
	cr_assert(BP_ERR_NO_FRAME == 11 && BP_ERR_NOT_SUBMITTED == 12 && BP_ERR_PERIODIC_EXTENT == 13);
	for (int a = 0; a < BP_STATUS_COUNT; ++a) {
		cr_assert_str_neq(bp_status_string((bp_status)a), "unknown status", "status %d has no text", a);
		for (int b = 0; b < a; ++b)
			cr_assert_str_neq(bp_status_string((bp_status)a), bp_status_string((bp_status)b));
	}

	oracle_box boxes[2] = {
		{{0, 0, 0}, {1, 1, 1}, 1, UINT64_MAX, false, false},
		{{0.5f, 0.5f, 0.5f}, {2, 2, 2}, 1, UINT64_MAX, false, false},
	};
	bp_world *w = test_world_from_boxes(boxes, 2, 3, BP_ALGO_AUTO, 1);
	bp_view *v = NULL;
	cr_assert_eq(bp_frame_acquire(w, &v), BP_ERR_NO_FRAME);
	cr_assert_null(v);
	cr_assert_eq(bp_frame_wait(w, 1), BP_ERR_NOT_SUBMITTED);
	uint64_t frame = 0;
	cr_assert_eq(bp_frame_submit(w, &frame), BP_OK);
	cr_assert_eq(bp_frame_wait(w, frame + 1), BP_ERR_NOT_SUBMITTED);
	cr_assert_eq(bp_frame_wait(w, frame), BP_OK);
	cr_assert_eq(bp_frame_acquire(w, &v), BP_OK);
	cr_assert_eq(bp_view_release(v), BP_OK);
	bp_world_destroy(w);

	// Period 4: an extent of 2 is the most a box may have; 2.5 is too big.
	bp_world_def def = bp_world_def_default();
	def.periodic = true;
	def.period[0] = def.period[1] = def.period[2] = 4;
	boxes[1].max[0] = 3;
	w = test_world_from_def(boxes, 2, &def);
	cr_assert_eq(bp_world_step(w), BP_ERR_PERIODIC_EXTENT);
	cr_assert(strstr(bp_world_last_error(w), "dense index 1") != NULL, "%s", bp_world_last_error(w));
	size_t count = 7;
	bp_world_pairs(w, &count);
	cr_assert_eq(count, 0, "the previous (empty) pairs stay");
	boxes[1].max[0] = 2.5f;
	cr_assert_eq(bp_entity_set_bounds(w, bp_world_entity_at(w, 1), boxes[1].min, boxes[1].max), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK, "extent 2 = period / 2 is allowed");
	bp_world_pairs(w, &count);
	cr_assert_eq(count, 1);
	bp_world_destroy(w);
}
