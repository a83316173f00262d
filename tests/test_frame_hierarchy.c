// SPDX-License-Identifier: MIT
// The query hierarchy a reader finds made (bp_world_def.query_hierarchy_frames): a query of
// one frame has the builder make the hierarchy of the next frame and of that many after it,
// however many of them no reader queries; the answers are the same whoever made it.
#include <criterion/criterion.h>
#include <stdlib.h>

#include "oracle.h"
#include "view/view.h"

enum { N = 3000, FRAMES = 14 };

static bool hierarchy_made(const bp_view *v)
{
	return atomic_load(&v->ready) & BPI_VIEW_HIERARCHY;
}

/// Frames 1 .. FRAMES, a box query on frame 1 only (and on `second`, when not 0); which of
/// them the builder made the hierarchy for, into made[frame].
static void run(uint32_t keep, int second, bool made[FRAMES + 1])
{
	bp_world_def def = bp_world_def_default();
	def.query_hierarchy_frames = keep;
	def.thread_count = 2;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	test_rng rng = {.state = 17};
	float *b = malloc(6 * sizeof *b * N);
	for (uint32_t i = 0; i < N; ++i) {
		test_rng_vec(&rng, b + 6 * i, 3, 0, 100, false);
		for (int a = 0; a < 3; ++a)
			b[6 * i + 3 + a] = b[6 * i + a] + 1.0f;
		bp_entity_def d = bp_entity_def_default();
		for (int a = 0; a < 3; ++a)
			d.min[a] = b[6 * i + a], d.max[a] = b[6 * i + 3 + a];
		bp_entity h;
		cr_assert_eq(bp_entity_create(w, &d, &h), BP_OK);
	}
	const float lo[3] = {10, 10, 10}, hi[3] = {30, 30, 30};
	uint32_t want[N], got[N];
	size_t want_count = 0, got_count = 0;
	for (uint32_t i = 0; i < N; ++i)
		if (b[6 * i] <= hi[0] && lo[0] <= b[6 * i + 3] && b[6 * i + 1] <= hi[1] && lo[1] <= b[6 * i + 4] &&
			b[6 * i + 2] <= hi[2] && lo[2] <= b[6 * i + 5])
			want[want_count++] = i;
	for (int frame = 1; frame <= FRAMES; ++frame) {
		bp_view *v = NULL;
		cr_assert_eq(bp_frame_step(w, &v), BP_OK);
		made[frame] = hierarchy_made(v);
		const bp_frame_stats st = bp_view_stats(v);
		cr_assert_eq(st.ns_hierarchy > 0, made[frame], "frame %d: the hierarchy's time is the builder's", frame);
		cr_assert(st.ns_hierarchy <= st.ns_view && st.ns_view <= st.ns_total, "frame %d: stages within the frame", frame);
		if (frame == 1 || frame == second || frame == FRAMES) {
			cr_assert_eq(bp_view_overlap_box(v, lo, hi, NULL, got, N, &got_count), BP_OK);
			cr_assert_eq(got_count, want_count, "frame %d", frame);
			for (size_t k = 0; k < got_count; ++k)
				cr_assert_eq(got[k], want[k], "frame %d, hit %zu", frame, k);
		}
		cr_assert_eq(bp_view_release(v), BP_OK);
	}
	cr_assert_eq(bp_world_step(w), BP_OK);
	const bp_frame_stats step = bp_world_stats(w);
	cr_assert(step.ns_view == 0 && step.ns_hierarchy == 0, "bp_world_step derives no view");
	free(b);
	bp_world_destroy(w);
}

Test(frame_hierarchy, a_query_keeps_the_hierarchy_made_for_the_frames_the_world_says)
{
	bool made[FRAMES + 1];
	for (uint32_t keep = 0; keep <= 4; keep += 2) {
		run(keep, 0, made);
		cr_assert(!made[1], "no reader asked before frame 1");
		for (int frame = 2; frame < FRAMES; ++frame)
			cr_assert_eq(made[frame], frame <= 2 + (int)keep, "keep %u, frame %d", keep, frame);
	}
}

Test(frame_hierarchy, a_later_query_starts_the_count_again)
{
	bool made[FRAMES + 1];
	run(2, 6, made);
	for (int frame = 2; frame < FRAMES; ++frame)
		cr_assert_eq(made[frame], frame <= 4 || (frame >= 7 && frame <= 9), "frame %d", frame);
}

Test(frame_hierarchy, every_frame_after_the_first_query_when_the_world_always_keeps_it)
{
	bool made[FRAMES + 1];
	run(UINT32_MAX, 0, made);
	for (int frame = 2; frame <= FRAMES; ++frame)
		cr_assert(made[frame], "frame %d", frame);
}

/// Shifts every entity by `d` on x (a plain world's snapshot then differs everywhere).
static void shift_all(bp_world *w, const bp_entity *h, float *b, float d)
{
	for (uint32_t i = 0; i < N; ++i) {
		b[6 * i] += d, b[6 * i + 3] += d;
		const float lo[3] = {b[6 * i], b[6 * i + 1], b[6 * i + 2]}, hi[3] = {b[6 * i + 3], b[6 * i + 4], b[6 * i + 5]};
		cr_assert_eq(bp_entity_set_bounds(w, h[i], lo, hi), BP_OK);
	}
}

// A plain world where everything moves refits its hierarchy from the last one, keeping the
// node summaries while only bounds change. A frame where one mover also changes category
// must gather them again: a query for that category finds it, as brute force does.
Test(frame_hierarchy, a_refit_after_a_mover_changed_its_category_finds_it_by_category)
{
	bp_world_def def = bp_world_def_default();
	def.query_hierarchy_frames = UINT32_MAX;
	def.thread_count = 2;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	test_rng rng = {.state = 23};
	float *b = malloc(6 * sizeof *b * N);
	bp_entity *h = malloc(N * sizeof *h);
	for (uint32_t i = 0; i < N; ++i) {
		test_rng_vec(&rng, b + 6 * i, 3, 0, 100, false);
		bp_entity_def d = bp_entity_def_default();
		d.category = 1;
		for (int a = 0; a < 3; ++a)
			b[6 * i + 3 + a] = b[6 * i + a] + 1.0f, d.min[a] = b[6 * i + a], d.max[a] = b[6 * i + 3 + a];
		cr_assert_eq(bp_entity_create(w, &d, &h[i]), BP_OK);
	}
	bp_query_filter second = bp_query_filter_default();
	second.category = 2;
	second.mask = 2;
	const uint32_t changed = N / 2;
	for (int frame = 1; frame <= 4; ++frame) {
		if (frame > 1)
			shift_all(w, h, b, 0.01f);
		if (frame == 3)
			cr_assert_eq(bp_entity_set_filter(w, h[changed], 2, UINT64_MAX), BP_OK);
		bp_view *v = NULL;
		cr_assert_eq(bp_frame_step(w, &v), BP_OK);
		const float lo[3] = {b[6 * changed], b[6 * changed + 1], b[6 * changed + 2]},
			    hi[3] = {b[6 * changed + 3], b[6 * changed + 4], b[6 * changed + 5]};
		uint32_t got[4];
		size_t count = 0;
		cr_assert_eq(bp_view_overlap_box(v, lo, hi, &second, got, 4, &count), BP_OK);
		cr_assert_eq(count, frame >= 3 ? 1u : 0u, "frame %d: %zu of category 2 at the changed entity", frame, count);
		cr_assert(frame < 3 || got[0] == changed);
		cr_assert(frame < 2 || atomic_load(&v->ready) & BPI_VIEW_HIERARCHY, "frame %d: the hierarchy was made", frame);
		cr_assert_eq(bp_view_release(v), BP_OK);
	}
	free(b), free(h);
	bp_world_destroy(w);
}
