// SPDX-License-Identifier: MIT
// A trace replayed into worlds: each frame's pairs in a plain world equal brute force over the
// reader's state (an independent oracle), and an incremental world and a world stepped through
// the frame scheduler give, byte for byte, the plain world's pairs; a world loaded from the
// state at frame K (read through a keyframe) pairs as the world replayed from frame 0.
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "trace_history.h"
#include "tmpfiles.h"

static void make_tmp_dir(void) { test_tmp_dir_make("bp_trace_replay_"); }

TestSuite(trace_replay, .init = make_tmp_dir, .fini = test_tmp_dir_remove, .timeout = 120);

static bp_world *new_world(int dims, bool incremental)
{
	bp_world_def def = bp_world_def_default();
	def.dims = dims;
	def.canonical_pairs = true;
	def.incremental = incremental;
	def.thread_count = 2;
	bp_world *world = NULL;
	cr_assert_eq(bp_world_create(&def, &world), BP_OK, "%s", bp_world_create_error());
	return world;
}

static const bp_pair *step(bp_world *world, size_t *count)
{
	cr_assert_eq(bp_world_step(world), BP_OK, "%s", bp_world_last_error(world));
	return bp_world_pairs(world, count);
}

/// The world holds the state's entities in its dense order: user key i is state id i.
static void expect_dense_order(bp_world *world, const bp_trace_state *s)
{
	cr_assert_eq(bp_world_entity_count(world), s->count);
	const uint64_t *keys = bp_world_user_keys(world);
	for (uint32_t i = 0; i < s->count; ++i)
		cr_assert_eq(keys[i], s->ids[i], "dense %u: key %llu, id %u", i, (unsigned long long)keys[i], s->ids[i]);
}

static void replay(int dims, uint32_t keyframe_interval, uint64_t seed)
{
	const char *path = test_tmp_path("replay.bpt");
	trace_history h;
	trace_history_write(path, dims, 300, 40, keyframe_interval, seed, &h);
	bp_trace_reader *r = NULL;
	cr_assert_eq(bp_trace_reader_open(path, &r), BP_OK, "%s", bp_trace_open_error());
	bp_world *plain = new_world(dims, false), *incremental = new_world(dims, true), *scheduled = new_world(dims, false);
	bp_pair **kept = calloc(h.frames, sizeof *kept);
	size_t *kept_count = calloc(h.frames, sizeof *kept_count);
	for (uint32_t k = 0; k < h.frames; ++k) {
		bp_trace_frame f;
		cr_assert_eq(bp_trace_reader_next(r, &f), BP_OK, "%s", bp_trace_reader_error(r));
		bp_world *worlds[3] = {plain, incremental, scheduled};
		for (int w = 0; w < 3; ++w)
			cr_assert_eq(bp_trace_reader_apply(r, worlds[w]), BP_OK, "%s", bp_trace_reader_error(r));
		bp_trace_state s = bp_trace_reader_state(r);
		trace_history_expect_state(&h, k, &s);
		expect_dense_order(plain, &s);
		expect_dense_order(incremental, &s);

		oracle_box *boxes = trace_history_boxes(&s, dims);
		oracle_pairs want = oracle_find_pairs(boxes, s.count, dims);
		size_t n_plain, n_incremental, n_view;
		const bp_pair *p_plain = step(plain, &n_plain), *p_incremental = step(incremental, &n_incremental);
		cr_assert(oracle_same_pair_set(p_plain, n_plain, &want), "frame %u: plain world against brute force", k);
		cr_assert_eq(n_incremental, n_plain, "frame %u", k);
		cr_assert(!memcmp(p_incremental, p_plain, n_plain * sizeof(bp_pair)), "frame %u: incremental differs", k);
		uint64_t number;
		bp_view *view = NULL;
		cr_assert_eq(bp_frame_submit(scheduled, &number), BP_OK);
		cr_assert_eq(bp_frame_wait(scheduled, number), BP_OK);
		cr_assert_eq(bp_frame_acquire(scheduled, &view), BP_OK);
		const bp_pair *p_view = bp_view_pairs(view, &n_view);
		cr_assert_eq(n_view, n_plain, "frame %u", k);
		cr_assert(n_plain == 0 || !memcmp(p_view, p_plain, n_plain * sizeof(bp_pair)), "frame %u: scheduler differs", k);
		bp_view_release(view);
		kept[k] = malloc((n_plain + 1) * sizeof(bp_pair));
		memcpy(kept[k], p_plain, n_plain * sizeof(bp_pair));
		kept_count[k] = n_plain;
		oracle_pairs_free(&want);
		free(boxes);
	}
	// Frame K on its own: seek, load into a new world; the same pairs, byte for byte.
	bp_trace_frame f;
	cr_assert_eq(bp_trace_reader_apply(r, plain), BP_ERR_INVALID_ARGUMENT); // that frame is in already
	cr_assert_eq(bp_trace_reader_next(r, &f), BP_ERR_OUT_OF_RANGE);
	cr_assert_eq(bp_trace_reader_apply(r, plain), BP_ERR_INVALID_ARGUMENT);
	for (uint32_t k = h.frames; k-- > 0;) {
		cr_assert_eq(bp_trace_reader_seek(r, k), BP_OK, "%s", bp_trace_reader_error(r));
		bp_world *alone = new_world(dims, false);
		cr_assert_eq(bp_trace_reader_load(r, alone), BP_OK, "%s", bp_trace_reader_error(r));
		cr_assert_eq(bp_trace_reader_load(r, alone), BP_ERR_INVALID_ARGUMENT); // not empty
		size_t n;
		const bp_pair *p = step(alone, &n);
		cr_assert_eq(n, kept_count[k], "frame %u", k);
		cr_assert(!memcmp(p, kept[k], n * sizeof(bp_pair)), "frame %u: loaded alone differs", k);
		bp_world_destroy(alone);
		free(kept[k]);
	}
	free(kept);
	free(kept_count);
	bp_world_destroy(plain);
	bp_world_destroy(incremental);
	bp_world_destroy(scheduled);
	bp_trace_reader_close(r);
	trace_history_free(&h);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(trace_replay, every_frame_3d) { replay(3, 6, 11); }
Test(trace_replay, every_frame_2d) { replay(2, 7, 12); }
Test(trace_replay, every_frame_no_keyframes) { replay(3, 0, 13); }

/// A world that does not hold the state before the frame is refused and left as it was.
Test(trace_replay, apply_refuses_a_world_out_of_step)
{
	const char *path = test_tmp_path("replay.bpt");
	trace_history h;
	trace_history_write(path, 3, 50, 3, 0, 5, &h);
	bp_trace_reader *r = NULL;
	cr_assert_eq(bp_trace_reader_open(path, &r), BP_OK);
	bp_world *world = new_world(3, false);
	bp_trace_frame f;
	cr_assert_eq(bp_trace_reader_next(r, &f), BP_OK);
	cr_assert_eq(bp_trace_reader_apply(r, world), BP_OK);
	cr_assert_eq(bp_trace_reader_next(r, &f), BP_OK);
	bp_world *empty = new_world(3, false);
	cr_assert_eq(bp_trace_reader_apply(r, empty), BP_ERR_INVALID_ARGUMENT);
	cr_assert(strstr(bp_trace_reader_error(r), "the world holds 0 entities"), "%s", bp_trace_reader_error(r));
	cr_assert_eq(bp_world_entity_count(empty), 0);
	cr_assert_eq(bp_trace_reader_apply(r, world), BP_OK);
	bp_world_destroy(world);
	bp_world_destroy(empty);
	bp_trace_reader_close(r);
	trace_history_free(&h);
}
