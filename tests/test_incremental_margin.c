// SPDX-License-Identifier: MIT
// Enlarged ("fat") boxes of incremental worlds (bp_world_def.margin), worked by hand: which
// steps search again (bp_frame_stats.searched_count) as an entity moves inside and out of
// its margin or changes its filter or kind, and a candidate that stops resting while the
// entity that found it re-tests it. Every step's pairs are the oracle's, in (lo, hi) order.
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "incremental/incremental_margin.h" // bpi_set_margin_lead_steps
#include "oracle.h"

enum { N = 1500 };

typedef struct fixture {
	oracle_box boxes[N];
	bp_world *w;
} fixture;

/// N random boxes in [0, 40)^3 (extents up to 2, half of them static), in a world
/// that takes the incremental path on every step after its first, full, one.
static void fixture_init(fixture *f, float margin, uint64_t seed)
{
	test_random_boxes(f->boxes, N, 3, 40.0f, 2.0f, false, seed);
	for (uint32_t i = 0; i < N; i += 2)
		f->boxes[i].is_static = true;
	bp_world_def def = bp_world_def_default();
	def.incremental = true;
	def.margin = margin;
	def.thread_count = 2;
	def.debug_flags = BP_DEBUG_ALWAYS_INCREMENTAL;
	f->w = test_world_from_def(f->boxes, N, &def);
}

static void fixture_fini(fixture *f)
{
	bp_world_destroy(f->w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

/// Steps; the pairs must be the oracle's, in order. Returns the entities that searched.
static uint32_t step(fixture *f, const char *what)
{
	cr_assert_eq(bp_world_step(f->w), BP_OK, "%s: %s", what, bp_world_last_error(f->w));
	size_t count;
	const bp_pair *got = bp_world_pairs(f->w, &count);
	oracle_pairs want = oracle_find_pairs(f->boxes, N, 3);
	bool same = count == want.count && (count == 0 || memcmp(got, want.data, count * sizeof *got) == 0);
	if (!same)
		oracle_same_pair_set(got, count, &want); // prints the first difference
	cr_assert(same, "%s: %zu pairs, oracle %zu (or other pairs, or another order)", what, count, want.count);
	oracle_pairs_free(&want);
	return bp_world_stats(f->w).searched_count;
}

static void place(fixture *f, uint32_t d, const float min[3], const float max[3])
{
	memcpy(f->boxes[d].min, min, 3 * sizeof(float));
	memcpy(f->boxes[d].max, max, 3 * sizeof(float));
	cr_assert_eq(bp_entity_set_bounds(f->w, bp_world_entity_at(f->w, d), min, max), BP_OK);
}

static void shift_x(fixture *f, uint32_t d, float dx)
{
	float min[3], max[3];
	memcpy(min, f->boxes[d].min, sizeof min);
	memcpy(max, f->boxes[d].max, sizeof max);
	min[0] += dx;
	max[0] += dx;
	place(f, d, min, max);
}

Test(incremental_margin, an_entity_searches_when_it_leaves_its_margin_or_changes_filter)
{
	fixture f;
	fixture_init(&f, 0.5f, 21);
	const uint32_t a = 7; // dynamic
	cr_assert_eq(step(&f, "first"), N, "the first step is full");
	shift_x(&f, a, 0.1f);
	cr_assert_eq(step(&f, "moved 0.1"), 1, "a newly active entity searches");
	shift_x(&f, a, 0.2f);
	cr_assert_eq(step(&f, "0.2 from its search"), 0, "inside its margin: re-tests");
	shift_x(&f, a, 0.25f);
	cr_assert_eq(step(&f, "0.45 from its search"), 0, "still inside");
	shift_x(&f, a, 0.1f);
	uint32_t searched = step(&f, "0.55 from its search");
	cr_assert_eq(searched, 1, "out of its margin: searches, not %u", searched);
	cr_assert_eq(step(&f, "no change"), 0, "active, unchanged: re-tests");

	bp_entity h = bp_world_entity_at(f.w, a);
	cr_assert_eq(bp_entity_set_filter(f.w, h, 1u, 0u), BP_OK);
	f.boxes[a].mask = 0u;
	cr_assert_eq(step(&f, "mask 0"), 1, "a filter change searches");
	cr_assert_eq(step(&f, "mask 0 again"), 0);
	cr_assert_eq(bp_entity_set_filter(f.w, h, 1u, UINT64_MAX), BP_OK);
	f.boxes[a].mask = UINT64_MAX;
	cr_assert_eq(step(&f, "mask back"), 1);
	cr_assert_eq(bp_entity_set_kind(f.w, h, BP_KIND_STATIC), BP_OK);
	f.boxes[a].is_static = true;
	cr_assert_eq(step(&f, "static"), 1, "a kind change searches: static/static pairs go");
	fixture_fini(&f);
}

// With the margin chosen from the motion (0), a new world has seen none when its movers
// first leave rest: their motion from the resting index's records sets the margin of their
// first fat boxes, so a step later they re-test rather than search again.
Test(incremental_margin, the_first_movers_tell_the_margin_of_their_first_boxes)
{
	fixture f;
	fixture_init(&f, 0.0f, 23);
	enum { MOVERS = N / 2 }; // the odd ones, dynamic
	cr_assert_eq(step(&f, "first"), N, "the first step is full");
	for (int k = 1; k <= 3; ++k) {
		for (uint32_t d = 1; d < N; d += 2)
			shift_x(&f, d, 0.02f * (f.boxes[d].max[0] - f.boxes[d].min[0]));
		uint32_t searched = step(&f, "moved by 2% of their extent");
		if (k == 1)
			cr_assert_eq(searched, MOVERS, "newly active entities search, not %u", searched);
		else if (k == 2)
			cr_assert_eq(searched, 0, "inside the margin of their motion: re-test, not %u search", searched);
	}
	fixture_fini(&f);
}

Test(incremental_margin, a_candidate_that_stops_resting_is_dropped)
{
	fixture f;
	fixture_init(&f, 1.0f, 22);
	// Far from the random boxes: a at [100, 101]^3, s 0.5 beyond it on x (inside a's
	// margin, not touching), t overlapping a.
	const uint32_t a = 1, s = 3, t = 5;
	cr_assert_eq(step(&f, "first"), N, "the first step is full");
	place(&f, a, (float[3]){100, 100, 100}, (float[3]){101, 101, 101});
	place(&f, s, (float[3]){101.5f, 100, 100}, (float[3]){102.5f, 101, 101});
	place(&f, t, (float[3]){100.5f, 100.5f, 100.5f}, (float[3]){101.5f, 101.5f, 101.5f});
	uint32_t searched = step(&f, "placed");
	cr_assert_eq(searched, 3, "the three searched, not %u", searched);
	(void)step(&f, "full"); // the three keep re-testing; nothing asserted of the counts
	cr_assert_eq(bp_world_set_debug_flags(f.w, BP_DEBUG_ALWAYS_FULL), BP_OK);
	(void)step(&f, "rebuilt: a, s and t rest now");
	cr_assert_eq(bp_world_set_debug_flags(f.w, BP_DEBUG_ALWAYS_INCREMENTAL), BP_OK);
	shift_x(&f, a, 0.01f);
	cr_assert_eq(step(&f, "a active"), 1, "a searches and keeps s and t as candidates");
	// a moves into s's old place while s leaves: a re-tests (0.61 < 1) a list that
	// holds s's old bounds, which now overlap a's. s no longer rests, so it must go.
	shift_x(&f, a, 0.6f);
	place(&f, s, (float[3]){200, 200, 200}, (float[3]){201, 201, 201});
	cr_assert_eq(step(&f, "s left"), 1, "s searches, a re-tests");
	// s comes back overlapping a: both active, the pair comes from their own pass.
	place(&f, s, (float[3]){101.5f, 100, 100}, (float[3]){102.5f, 101, 101});
	(void)step(&f, "s back");
	fixture_fini(&f);
}

Test(incremental_margin, a_margin_must_be_finite_and_not_negative)
{
	const float bad[] = {-1.0f, -1e-30f, INFINITY, NAN};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
		bp_world_def def = bp_world_def_default();
		def.incremental = true;
		def.margin = bad[i];
		bp_world *w = (bp_world *)&def; // must be set to NULL
		cr_assert_eq(bp_world_create(&def, &w), BP_ERR_INVALID_ARGUMENT, "margin %g", (double)bad[i]);
		cr_assert_null(w);
	}
	bp_world_def def = bp_world_def_default();
	cr_assert_eq(def.margin, 0.0f, "0 by default: chosen from the motion");
}

/// Sets box 0 of the world and of the oracle's copy to [min, max].
static void set_mover(bp_world *w, oracle_box *boxes, const float min[3], const float max[3])
{
	memcpy(boxes[0].min, min, 3 * sizeof(float));
	memcpy(boxes[0].max, max, 3 * sizeof(float));
	cr_assert_eq(bp_entity_set_bounds(w, bp_world_entity_at(w, 0), min, max), BP_OK);
}

/// Steps; the pairs must be the oracle's, in order. Returns the entities that searched.
static uint32_t step_boxes(bp_world *w, const oracle_box *boxes, uint32_t n, size_t *pair_count)
{
	cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
	size_t count;
	const bp_pair *got = bp_world_pairs(w, &count);
	oracle_pairs want = oracle_find_pairs(boxes, n, 3);
	cr_assert(count == want.count && (count == 0 || memcmp(got, want.data, count * sizeof *got) == 0),
		"%zu pairs, oracle %zu (or other pairs)", count, want.count);
	oracle_pairs_free(&want);
	*pair_count = count;
	return bp_world_stats(w).searched_count;
}

// A mover that stays inside its fat box re-tests the candidates its search kept: a
// neighbour touching a face pairs (closed intervals), one a float beyond it does not,
// on each axis and side.
Test(incremental_margin, faces_one_float_apart_are_decided_on_the_floats)
{
	enum { NEIGHBOURS = 4 * 3, COUNT = 1 + NEIGHBOURS };
	oracle_box boxes[COUNT];
	memset(boxes, 0, sizeof boxes);
	boxes[0] = (oracle_box){.min = {0, 0, 0}, .max = {1, 1, 1}, .category = 1, .mask = UINT64_MAX};
	const float moved_min = 0 + 0.01f, moved_max = 1 + 0.01f; // the mover's faces after its move
	for (int axis = 0; axis < 3; ++axis)
		for (int k = 0; k < 4; ++k) {
			oracle_box *b = &boxes[1 + 4 * axis + k];
			*b = (oracle_box){.min = {0.25f, 0.25f, 0.25f}, .max = {0.75f, 0.75f, 0.75f}, .category = 1,
				.mask = UINT64_MAX, .is_static = true};
			if (k == 0) // above, touching
				b->min[axis] = moved_max;
			if (k == 1) // above, one float apart
				b->min[axis] = nextafterf(moved_max, INFINITY);
			if (k == 2) // below, touching
				b->max[axis] = moved_min;
			if (k == 3) // below, one float apart
				b->max[axis] = nextafterf(moved_min, -INFINITY);
			if (k < 2)
				b->max[axis] = b->min[axis] + 0.5f;
			else
				b->min[axis] = b->max[axis] - 0.5f;
		}
	bp_world_def def = bp_world_def_default();
	def.incremental = true;
	def.margin = 0.5f;
	def.debug_flags = BP_DEBUG_ALWAYS_INCREMENTAL;
	bp_world *w = test_world_from_def(boxes, COUNT, &def);
	size_t pairs;
	step_boxes(w, boxes, COUNT, &pairs); // full
	for (int axis = 0; axis < 3; ++axis) {
		// A search at [0.002, 1.002]: the fat box reaches 0.5 beyond.
		set_mover(w, boxes, (float[3]){0.002f, 0.002f, 0.002f}, (float[3]){1.002f, 1.002f, 1.002f});
		step_boxes(w, boxes, COUNT, &pairs);
		float min[3] = {0, 0, 0}, max[3] = {1, 1, 1};
		min[axis] = moved_min;
		max[axis] = moved_max;
		set_mover(w, boxes, min, max);
		cr_assert_eq(step_boxes(w, boxes, COUNT, &pairs), 0, "axis %d: the move stays inside the fat box", axis);
		// What makes the case: by the oracle, the touching ones pair, the others do not.
		size_t count;
		const bp_pair *got = bp_world_pairs(w, &count);
		for (uint32_t k = 0; k < 4; ++k) {
			bool found = false;
			for (size_t i = 0; i < count; ++i)
				found |= got[i].lo == 0 && got[i].hi == 1 + 4 * (uint32_t)axis + k;
			cr_assert_eq(found, k % 2 == 0, "axis %d, neighbour %u", axis, k);
		}
	}
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

/// Moves the odd (dynamic) boxes by their velocities (3 per box), in the world
/// and the oracle's copy, by one bulk call.
static void move_steady(fixture *f, const float *velocity)
{
	static float min[3][N], max[3][N];
	for (uint32_t i = 0; i < N; ++i)
		for (int axis = 0; axis < 3; ++axis) {
			float d = i % 2 ? velocity[3 * i + axis] : 0.0f;
			f->boxes[i].min[axis] += d;
			f->boxes[i].max[axis] += d;
			min[axis][i] = f->boxes[i].min[axis];
			max[axis][i] = f->boxes[i].max[axis];
		}
	bp_bounds_arrays b = {min[0], min[1], min[2], max[0], max[1], max[2]};
	cr_assert_eq(bp_entities_set_bounds(f->w, bp_target_range(0, N), &b), BP_OK);
}

/// Searches over `steps` steps of steady motion (velocities up to 5% of the extent
/// per axis, drawn from `seed`), every step checked against the oracle. `joining`:
/// a resting (static) box moves a little at each step too, so the active list
/// changes at every step.
static uint64_t steady_searches(uint32_t lead_steps, uint32_t steps, uint64_t seed, bool joining)
{
	bpi_set_margin_lead_steps(lead_steps);
	fixture f;
	fixture_init(&f, 0.0f, seed);
	static float velocity[3 * N];
	uint64_t rng = seed;
	for (uint32_t i = 0; i < N; ++i)
		for (int axis = 0; axis < 3; ++axis) {
			rng = bp_splitmix64(rng);
			float u = (float)(rng >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
			velocity[3 * i + axis] = 0.05f * u * (f.boxes[i].max[axis] - f.boxes[i].min[axis]);
		}
	(void)step(&f, "first");
	uint64_t searched = 0;
	for (uint32_t s = 0; s < steps; ++s) {
		move_steady(&f, velocity);
		if (joining)
			shift_x(&f, 2 * s % N, 1e-3f);
		searched += step(&f, "steady");
	}
	fixture_fini(&f);
	bpi_set_margin_lead_steps(8);
	return searched;
}

// An entity moving steadily gets a fat box that reaches further ahead than behind, so
// it leaves it less often; the pairs stay the oracle's either way.
Test(incremental_margin, steady_movers_search_less_with_boxes_that_lead, .timeout = 120)
{
	for (uint64_t seed = 31; seed < 33; ++seed) {
		uint64_t level = steady_searches(0, 150, seed, false), leading = steady_searches(8, 150, seed, false);
		cr_assert_lt(leading, level, "seed %llu: %llu searches with the lead, %llu without",
			(unsigned long long)seed, (unsigned long long)leading, (unsigned long long)level);
	}
}

// How a fat box was grown (its margin, lead and drift) moves with its entity when the
// active list changes; lost, the next search of a steady mover would see no steady
// motion and take no lead. An entity joins the list at every step here.
Test(incremental_margin, leads_survive_entities_joining_the_active_list, .timeout = 120)
{
	for (uint64_t seed = 31; seed < 33; ++seed) {
		uint64_t level = steady_searches(0, 150, seed, true), leading = steady_searches(8, 150, seed, true);
		cr_assert_lt(leading, level, "seed %llu: %llu searches with the lead, %llu without",
			(unsigned long long)seed, (unsigned long long)leading, (unsigned long long)level);
	}
}

// Active entities pair through their fat boxes too: kept while neither searches, found
// again for one that does by a sweep in x order that reaches back a few mean widths,
// and by a pass over the boxes wider than that. Here a long active box never searches
// and a small one lands on its far end.
Test(incremental_margin, a_searcher_finds_a_long_active_box_far_behind_on_x)
{
	fixture f;
	fixture_init(&f, 0.5f, 24);
	const uint32_t long_box = 1, small = 3;
	cr_assert_eq(step(&f, "first"), N, "the first step is full");
	place(&f, long_box, (float[3]){0, 100, 100}, (float[3]){100, 101, 101});
	place(&f, small, (float[3]){200, 100, 100}, (float[3]){201, 101, 101});
	for (uint32_t d = 5; d < 45; d += 2)
		shift_x(&f, d, 0.01f); // 20 more small active boxes: the mean width stays small
	cr_assert_eq(step(&f, "22 active"), 22, "every active entity searches once");
	shift_x(&f, long_box, 0.1f);
	cr_assert_eq(step(&f, "the long box moves inside its margin"), 0, "nobody searches");
	place(&f, small, (float[3]){80, 100.5f, 100.5f}, (float[3]){81, 101.5f, 101.5f});
	cr_assert_eq(step(&f, "the small box lands on the long one's far end"), 1, "the small box searches");
	fixture_fini(&f);
}
