// SPDX-License-Identifier: MIT
// Incremental and frame paths at their edges, each a history that once gave wrong pairs:
// a point on a box's face at decimal coordinates (the active x active sweep's reach), a
// world emptied and filled again (the resting index of no entities), enlarged boxes that
// would pass the float range (a huge margin, a jump across it), and the path choice,
// which must come from counted work so that a history replays the same way. Every step
// is checked against the oracle and, byte for byte, against a world that rebuilds.
#include <criterion/criterion.h>
#include <float.h>
#include <string.h>

#include "oracle.h"

enum { EDGE_MAX = 4096 };

/// A host's shadow of its entities, in dense order, mirrored by an incremental
/// world and by a plain one.
typedef struct edge_host {
	int dims;
	uint32_t n;
	oracle_box boxes[EDGE_MAX];
	bp_entity inc[EDGE_MAX], plain[EDGE_MAX];
	bp_world *world, *full;
} edge_host;

static bp_world *edge_world(int dims, bool incremental, uint32_t debug_flags, float margin)
{
	bp_world_def def = bp_world_def_default();
	def.dims = dims;
	def.canonical_pairs = true;
	def.incremental = incremental;
	def.debug_flags = incremental ? debug_flags : 0;
	def.margin = margin;
	def.thread_count = 1;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	return w;
}

static edge_host *edge_host_new(int dims, uint32_t debug_flags, float margin)
{
	edge_host *h = calloc(1, sizeof *h);
	h->dims = dims;
	h->world = edge_world(dims, true, debug_flags, margin);
	h->full = edge_world(dims, false, 0, 0.0f);
	return h;
}

static void edge_host_free(edge_host *h)
{
	bp_world_destroy(h->world);
	bp_world_destroy(h->full);
	free(h);
}

static oracle_box edge_box(const float *min, const float *max)
{
	oracle_box b = {.category = 1, .mask = UINT64_MAX};
	for (int k = 0; k < 3; ++k) {
		b.min[k] = min[k];
		b.max[k] = max[k];
	}
	return b;
}

static bp_entity_def def_of(const oracle_box *b)
{
	bp_entity_def d = bp_entity_def_default();
	memcpy(d.min, b->min, sizeof d.min);
	memcpy(d.max, b->max, sizeof d.max);
	return d;
}

static void edge_create(edge_host *h, oracle_box b)
{
	cr_assert_lt(h->n, EDGE_MAX);
	bp_entity_def d = def_of(&b);
	cr_assert_eq(bp_entity_create(h->world, &d, &h->inc[h->n]), BP_OK, "%s", bp_world_last_error(h->world));
	cr_assert_eq(bp_entity_create(h->full, &d, &h->plain[h->n]), BP_OK);
	h->boxes[h->n++] = b;
}

static void edge_move(edge_host *h, uint32_t i, oracle_box b)
{
	cr_assert_eq(bp_entity_set_bounds(h->world, h->inc[i], b.min, b.max), BP_OK);
	cr_assert_eq(bp_entity_set_bounds(h->full, h->plain[i], b.min, b.max), BP_OK);
	memcpy(h->boxes[i].min, b.min, sizeof b.min);
	memcpy(h->boxes[i].max, b.max, sizeof b.max);
}

/// Destroys every entity in one call, as the host of the review did.
static void edge_destroy_all(edge_host *h)
{
	cr_assert_eq(bp_world_destroy_entities(h->world, h->n, h->inc), BP_OK);
	cr_assert_eq(bp_world_destroy_entities(h->full, h->n, h->plain), BP_OK);
	h->n = 0;
}

/// Steps both worlds; both equal the oracle, and each other byte for byte.
static bp_frame_stats edge_step(edge_host *h, const char *what)
{
	cr_assert_eq(bp_world_step(h->world), BP_OK, "%s: %s", what, bp_world_last_error(h->world));
	cr_assert_eq(bp_world_step(h->full), BP_OK, "%s: %s", what, bp_world_last_error(h->full));
	cr_assert_eq(bp_world_entity_count(h->world), h->n);
	oracle_pairs want = oracle_find_pairs(h->boxes, h->n, h->dims);
	size_t got_count, full_count;
	const bp_pair *got = bp_world_pairs(h->world, &got_count);
	const bp_pair *full = bp_world_pairs(h->full, &full_count);
	cr_assert(oracle_same_pair_set(got, got_count, &want), "%s: incremental world against the oracle", what);
	cr_assert_eq(got_count, full_count, "%s", what);
	cr_assert(got_count == 0 || memcmp(got, full, got_count * sizeof *got) == 0, "%s: not the plain world's bytes",
		what);
	oracle_pairs_free(&want);
	return bp_world_stats(h->world);
}

// ---- a point on a face at decimal coordinates ----------------------------------------------

/// fl(10.7 - 0.1) rounds down, so a sweep that skips rows below fl(lo - width)
/// and calls a box of width fl(hi - lo) narrow leaves the box out of a point
/// searching exactly at its far face.
static void point_on_far_face(uint32_t debug_flags)
{
	edge_host *h = edge_host_new(2, debug_flags, 0.0f);
	edge_create(h, edge_box((float[3]){500, 500}, (float[3]){501, 501}));
	edge_step(h, "the far box");
	edge_create(h, edge_box((float[3]){0.1f, 0}, (float[3]){10.7f, 10}));
	edge_create(h, edge_box((float[3]){20, 5}, (float[3]){20, 5}));
	edge_step(h, "the box and the point apart");
	edge_move(h, 2, edge_box((float[3]){10.7f, 5}, (float[3]){10.7f, 5}));
	edge_step(h, "the point on the box's face");
	size_t count;
	bp_world_pairs(h->world, &count);
	cr_assert_eq(count, 1, "the point touches the box");
	edge_host_free(h);
}

Test(incremental_edges, point_on_far_face) { point_on_far_face(0); }
Test(incremental_edges, point_on_far_face_incremental_path) { point_on_far_face(BP_DEBUG_ALWAYS_INCREMENTAL); }

/// The same at every decimal face of a row of boxes, the points arriving from
/// both sides, so each box is met at its near and far faces.
Test(incremental_edges, points_on_decimal_faces)
{
	edge_host *h = edge_host_new(2, BP_DEBUG_ALWAYS_INCREMENTAL, 0.0f);
	edge_create(h, edge_box((float[3]){900, 900}, (float[3]){901, 901}));
	edge_step(h, "the far box");
	enum { BOXES = 40 };
	for (uint32_t b = 0; b < BOXES; ++b) {
		float lo = 0.1f + 30.0f * (float)b + 0.1f * (float)(b % 7), hi = lo + 10.6f + 0.3f * (float)(b % 5);
		edge_create(h, edge_box((float[3]){lo, 0}, (float[3]){hi, 10}));
		edge_create(h, edge_box((float[3]){hi + 3.3f, 5}, (float[3]){hi + 3.3f, 5}));
		edge_create(h, edge_box((float[3]){lo - 3.7f, 5}, (float[3]){lo - 3.7f, 5}));
	}
	edge_step(h, "points apart");
	for (uint32_t b = 0; b < BOXES; ++b) {
		const oracle_box *box = &h->boxes[1 + 3 * b];
		float far = box->max[0], near = box->min[0];
		edge_move(h, 2 + 3 * b, edge_box((float[3]){far, 5}, (float[3]){far, 5}));
		edge_move(h, 3 + 3 * b, edge_box((float[3]){near, 5}, (float[3]){near, 5}));
	}
	edge_step(h, "points on the faces");
	size_t count;
	bp_world_pairs(h->world, &count);
	cr_assert_eq(count, 2 * BOXES);
	edge_host_free(h);
}

// ---- a world emptied and filled again ------------------------------------------------------

static void emptied_and_refilled(uint32_t debug_flags)
{
	edge_host *h = edge_host_new(3, debug_flags, 0.0f);
	for (int i = 0; i < 3; ++i)
		edge_create(h, edge_box((float[3]){(float)i, 0, 0}, (float[3]){(float)i + 1.5f, 1, 1}));
	edge_step(h, "three overlapping boxes");
	edge_destroy_all(h);
	edge_step(h, "the empty world");
	edge_step(h, "the empty world again");
	edge_create(h, edge_box((float[3]){0, 0, 0}, (float[3]){1, 1, 1}));
	bp_frame_stats stats = edge_step(h, "one box in the world emptied");
	cr_assert_eq(stats.pair_count, 0);
	edge_create(h, edge_box((float[3]){0.5f, 0.5f, 0.5f}, (float[3]){2, 2, 2}));
	edge_create(h, edge_box((float[3]){5, 5, 5}, (float[3]){6, 6, 6}));
	edge_step(h, "three boxes, one pair");
	edge_host_free(h);
}

Test(incremental_edges, emptied_and_refilled) { emptied_and_refilled(0); }
Test(incremental_edges, emptied_and_refilled_incremental_path) { emptied_and_refilled(BP_DEBUG_ALWAYS_INCREMENTAL); }

/// The same through frames: the view of one box has no pair, no event and no
/// neighbour past its one entity.
Test(incremental_edges, emptied_and_refilled_frames)
{
	bp_world *w = edge_world(3, true, BP_DEBUG_ALWAYS_INCREMENTAL, 0.0f);
	bp_entity e[3];
	for (int i = 0; i < 3; ++i) {
		bp_entity_def d = bp_entity_def_default();
		d.min[0] = (float)i;
		d.max[0] = (float)i + 1.5f;
		d.max[1] = d.max[2] = 1;
		cr_assert_eq(bp_entity_create(w, &d, &e[i]), BP_OK);
	}
	bp_view *v = NULL;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	size_t count;
	bp_view_pairs(v, &count);
	cr_assert_eq(count, 2);
	cr_assert_eq(bp_view_release(v), BP_OK);
	cr_assert_eq(bp_world_destroy_entities(w, 3, e), BP_OK);
	for (int i = 0; i < 2; ++i) {
		cr_assert_eq(bp_frame_step(w, &v), BP_OK);
		cr_assert_eq(bp_view_entity_count(v), 0);
		cr_assert_eq(bp_view_release(v), BP_OK);
	}
	bp_entity_def d = bp_entity_def_default();
	d.max[0] = d.max[1] = d.max[2] = 1;
	cr_assert_eq(bp_entity_create(w, &d, &e[0]), BP_OK);
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	bp_view_pairs(v, &count);
	cr_assert_eq(count, 0, "one entity, %zu pairs", count);
	size_t began, ended;
	cr_assert_eq(bp_view_events(v, NULL, 0, &began, NULL, 0, &ended), BP_OK);
	cr_assert_eq(began, 0);
	const uint32_t *neighbours = NULL;
	size_t degree = 1;
	cr_assert_eq(bp_view_neighbours(v, 0, &neighbours, &degree), BP_OK);
	cr_assert_eq(degree, 0);
	cr_assert_eq(bp_view_release(v), BP_OK);
	bp_world_destroy(w);
}

// ---- enlarged boxes near the float range ---------------------------------------------------

/// A side x side grid of touching boxes of edge `unit` from `at` (many pairs,
/// many ties), more than the 64 entities below which a pass runs brute force.
static void create_grid(edge_host *h, float at, float unit, int side)
{
	for (int i = 0; i < side; ++i)
		for (int j = 0; j < side; ++j) {
			float lo[3] = {at + unit * (float)i, at + unit * (float)j, 0};
			float hi[3] = {lo[0] + unit, lo[1] + unit, unit};
			edge_create(h, edge_box(lo, hi));
		}
}

/// A margin of 1.5e38 around boxes near 2e38 reaches past FLT_MAX.
static void huge_margin(uint32_t debug_flags)
{
	edge_host *h = edge_host_new(3, debug_flags, 1.5e38f);
	create_grid(h, 2e38f, 1e37f, 9);
	edge_step(h, "a grid near 2e38");
	create_grid(h, 2.05e38f, 1e37f, 9);
	edge_step(h, "a second grid over the first");
	create_grid(h, -2.5e38f, 1e37f, 9);
	edge_move(h, 3, edge_box((float[3]){-3e38f, -3e38f, 0}, (float[3]){-3e38f, -3e38f, 1}));
	edge_move(h, 4, edge_box((float[3]){3e38f, 3e38f, 0}, (float[3]){FLT_MAX, FLT_MAX, 1}));
	edge_step(h, "a grid near -2.5e38, two boxes at the ends of the range");
	create_grid(h, 2.1e38f, 1e37f, 9);
	edge_step(h, "a fourth grid");
	edge_host_free(h);
}

Test(incremental_edges, huge_margin) { huge_margin(0); }
Test(incremental_edges, huge_margin_incremental_path) { huge_margin(BP_DEBUG_ALWAYS_INCREMENTAL); }

/// The chosen margin follows the motion seen: a huge box moving by a third of
/// its extent each step, beside a hundred small movers and a box jumping across
/// the float range, must not make any enlarged box infinite.
Test(incremental_edges, motion_across_the_float_range)
{
	edge_host *h = edge_host_new(3, BP_DEBUG_ALWAYS_INCREMENTAL, 0.0f);
	create_grid(h, 0, 1, 10);
	const uint32_t huge = h->n;
	edge_create(h, edge_box((float[3]){-1e38f, -1e38f, -1e38f}, (float[3]){2e38f, 1e38f, 1e38f}));
	edge_step(h, "a grid inside a huge box");
	for (int step = 0; step < 6; ++step) {
		float s = step % 2 ? -1.0f : 1.0f, lo = s > 0 ? -2e38f : -1e38f, hi = s > 0 ? 1e38f : 2e38f;
		edge_move(h, huge, edge_box((float[3]){lo, -1e38f, -1e38f}, (float[3]){hi, 1e38f, 1e38f}));
		edge_move(h, 0, edge_box((float[3]){s * 3e38f, 0, 0}, (float[3]){s * 3e38f, 1, 1}));
		for (uint32_t i = 1; i < 100; ++i) {
			oracle_box b = h->boxes[i];
			b.min[2] = b.max[2] = 0.125f * (float)step;
			b.max[2] += 1;
			edge_move(h, i, b);
		}
		edge_step(h, "the motion");
		create_grid(h, 0.5f + (float)step, 1, 9);
		edge_step(h, "new entities after it");
	}
	edge_host_free(h);
}

/// Movers as large as the float range allows, each moving by its own extent
/// (motion, not a jump): the chosen margin grows to half that extent, and the
/// enlarged boxes of those near the ends would pass FLT_MAX.
Test(incremental_edges, huge_movers_choose_a_huge_margin)
{
	edge_host *h = edge_host_new(2, BP_DEBUG_ALWAYS_INCREMENTAL, 0.0f);
	enum { MOVERS = 100 };
	for (int i = 0; i < MOVERS; ++i) {
		float lo = (float)(-3.3e38 + 5.6e36 * i), y = 1e36f * (float)(i % 10);
		edge_create(h, edge_box((float[3]){lo, y}, (float[3]){lo + 1e38f, y + 1e36f}));
	}
	edge_step(h, "huge boxes");
	for (int step = 0; step < 8; ++step) {
		for (uint32_t i = 0; i < MOVERS; ++i) {
			oracle_box b = h->boxes[i];
			float by = (step + (int)i) % 2 ? -1e38f : 1e38f;
			if (b.max[0] + by > FLT_MAX || b.min[0] + by < -FLT_MAX)
				by = -by;
			b.min[0] += by;
			b.max[0] += by;
			edge_move(h, i, b);
		}
		edge_step(h, "huge motion");
		create_grid(h, -1e38f + 1e37f * (float)step, 1e36f, 3);
		edge_step(h, "new entities after it");
	}
	edge_host_free(h);
}

/// A box near the origin, or (`huge`) one anywhere in +-1e38 with an extent up
/// to 2e38, clipped to the float range.
static oracle_box random_edge_box(test_rng *rng, int dims, bool huge)
{
	oracle_box b = {.category = 1, .mask = UINT64_MAX};
	for (int a = 0; a < dims; ++a) {
		double lo = huge ? test_rng_float(rng, -1e38f, 1e38f) : test_rng_float(rng, -100, 100);
		double hi = lo + (huge ? test_rng_float(rng, 0, 2e38f) : test_rng_float(rng, 0, 5));
		b.min[a] = (float)lo;
		b.max[a] = (float)(hi > FLT_MAX ? FLT_MAX : hi);
	}
	return b;
}

/// Random histories of small and huge boxes under margins up to 3e38, with
/// creates and moves every step: whatever the margin, the pairs are exact.
Test(incremental_edges, huge_boxes_under_huge_margins, .timeout = 120)
{
	const float margins[] = {1e37f, 1e38f, 3e38f};
	for (uint64_t seed = 1; seed <= 24; ++seed) {
		test_rng rng = {seed};
		int dims = 2 + (int)(seed % 2);
		edge_host *h = edge_host_new(dims, BP_DEBUG_ALWAYS_INCREMENTAL, margins[seed % 3]);
		for (int i = 0; i < 150; ++i)
			edge_create(h, random_edge_box(&rng, dims, test_rng_below(&rng, 4) == 0));
		for (int step = 0; step < 6; ++step) {
			edge_step(h, "huge boxes, huge margins");
			for (uint32_t m = test_rng_below(&rng, 60); m > 0; --m)
				edge_move(h, test_rng_below(&rng, h->n), random_edge_box(&rng, dims, test_rng_below(&rng, 3) == 0));
			for (uint32_t c = test_rng_below(&rng, 80); c > 0; --c)
				edge_create(h, random_edge_box(&rng, dims, test_rng_below(&rng, 3) == 0));
		}
		edge_host_free(h);
	}
}

// ---- the path choice comes from counted work -----------------------------------------------

/// A world of 10K whose movers change from its first step: the incremental path
/// is taken (the clock-driven model never came back to it), and two runs of the
/// same history take the same path on every step.
static void movers_from_the_start(uint32_t *paths, int steps)
{
	enum { N = 10000, MOVERS = 625 };
	test_rng rng = {77};
	static oracle_box boxes[N];
	for (uint32_t i = 0; i < N; ++i) {
		boxes[i] = (oracle_box){.category = 1, .mask = UINT64_MAX};
		for (int a = 0; a < 2; ++a) {
			boxes[i].min[a] = test_rng_float(&rng, 0, 400);
			boxes[i].max[a] = boxes[i].min[a] + 1;
		}
	}
	bp_world *w = edge_world(2, true, 0, 0.0f);
	static bp_entity e[N];
	for (uint32_t i = 0; i < N; ++i) {
		bp_entity_def d = def_of(&boxes[i]);
		cr_assert_eq(bp_entity_create(w, &d, &e[i]), BP_OK);
	}
	for (int step = 0; step < steps; ++step) {
		for (uint32_t m = 0; m < MOVERS; ++m) {
			bp_entity_def d;
			cr_assert_eq(bp_entity_get(w, e[m * 16], &d), BP_OK);
			float dx = test_rng_float(&rng, -0.05f, 0.05f), dy = test_rng_float(&rng, -0.05f, 0.05f);
			float lo[2] = {d.min[0] + dx, d.min[1] + dy}, hi[2] = {d.max[0] + dx, d.max[1] + dy};
			cr_assert_eq(bp_entity_set_bounds(w, e[m * 16], lo, hi), BP_OK);
		}
		cr_assert_eq(bp_world_step(w), BP_OK);
		bp_frame_stats s = bp_world_stats(w);
		paths[step] = s.active_count < s.entity_count ? s.active_count : UINT32_MAX;
	}
	bp_world_destroy(w);
}

Test(incremental_edges, path_choice_from_counted_work, .timeout = 120)
{
	enum { STEPS = 40 };
	uint32_t first[STEPS], second[STEPS];
	movers_from_the_start(first, STEPS);
	movers_from_the_start(second, STEPS);
	int incremental = 0;
	for (int step = 0; step < STEPS; ++step) {
		cr_assert_eq(first[step], second[step], "step %d: the two runs took different paths", step);
		incremental += first[step] != UINT32_MAX;
	}
	cr_assert_geq(incremental, STEPS - 2, "only %d of %d steps incremental", incremental, STEPS);
}

// ---- the order of a full step -------------------------------------------------------

static bool pairs_sorted(const bp_pair *p, size_t count)
{
	for (size_t i = 1; i < count; ++i)
		if (p[i - 1].lo > p[i].lo || (p[i - 1].lo == p[i].lo && p[i - 1].hi >= p[i].hi))
			return false;
	return true;
}

static bp_world *order_world(const oracle_box *boxes, uint32_t n, bool incremental, bool canonical)
{
	bp_world_def def = bp_world_def_default();
	def.dims = 3;
	def.algorithm = BP_ALGO_GRID;
	def.thread_count = 1;
	def.incremental = incremental;
	def.canonical_pairs = canonical;
	return test_world_from_def(boxes, n, &def);
}

// A full step that keeps nothing (every entity moved) costs what the plain world's step
// costs: without canonical_pairs its pairs come in the grid's order, byte for byte the
// plain world's; with it, sorted. The steps that keep pairs sort them either way.
Test(incremental_edges, full_step_keeps_the_plain_order_unless_canonical, .timeout = 60)
{
	enum { N = 3000 };
	static oracle_box boxes[N];
	static float arrays[6][N];
	test_random_boxes(boxes, N, 3, 40.0f, 1.5f, false, 97);
	bp_world *plain = order_world(boxes, N, false, false);
	bp_world *loose = order_world(boxes, N, true, false), *sorted = order_world(boxes, N, true, true);
	bp_world *worlds[3] = {plain, loose, sorted};
	for (int step = 0; step < 3; ++step) {
		if (step) { // every box moves: too many changes for the incremental path
			for (uint32_t i = 0; i < N; ++i)
				for (int k = 0; k < 3; ++k) {
					boxes[i].min[k] += 0.25f * (float)step;
					boxes[i].max[k] += 0.25f * (float)step;
					arrays[k][i] = boxes[i].min[k], arrays[3 + k][i] = boxes[i].max[k];
				}
			bp_bounds_arrays b = {arrays[0], arrays[1], arrays[2], arrays[3], arrays[4], arrays[5]};
			for (int w = 0; w < 3; ++w)
				cr_assert_eq(bp_entities_set_bounds(worlds[w], bp_target_range(0, N), &b), BP_OK);
		}
		for (int w = 0; w < 3; ++w)
			cr_assert_eq(bp_world_step(worlds[w]), BP_OK, "%s", bp_world_last_error(worlds[w]));
		size_t n_plain, n_loose, n_sorted;
		const bp_pair *p = bp_world_pairs(plain, &n_plain), *l = bp_world_pairs(loose, &n_loose),
			      *s = bp_world_pairs(sorted, &n_sorted);
		oracle_pairs want = oracle_find_pairs(boxes, N, 3);
		cr_assert(oracle_same_pair_set(p, n_plain, &want), "step %d: the plain world's pairs", step);
		cr_assert(oracle_same_pair_set(l, n_loose, &want), "step %d: the incremental world's pairs", step);
		cr_assert(n_sorted == want.count && memcmp(s, want.data, n_sorted * sizeof *s) == 0,
			"step %d: canonical_pairs gives the oracle's pairs in order", step);
		cr_assert_eq(bp_world_stats(loose).path, BP_PATH_FULL, "step %d", step);
		cr_assert(!pairs_sorted(p, n_plain), "step %d: the grid's own order is not sorted here", step);
		if (step == 0) { // the first full step keeps its index, so sorts
			cr_assert(pairs_sorted(l, n_loose), "the first step's pairs are kept, so sorted");
		} else {
			cr_assert(n_loose == n_plain && memcmp(l, p, n_plain * sizeof *p) == 0,
				"step %d: a full step that keeps nothing gives the plain world's order", step);
		}
		oracle_pairs_free(&want);
	}
	for (int w = 0; w < 3; ++w)
		bp_world_destroy(worlds[w]);
}
