// SPDX-License-Identifier: MIT
// Traces: what a writer records reads back bit-exact, frame by frame and by random access
// (frame K through the index, and the state at K from a keyframe, the same as replaying
// every frame before it); a writer refuses a bad change and writes nothing of it.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_history.h"
#include "tmpfiles.h"

static void make_tmp_dir(void) { test_tmp_dir_make("bp_trace_"); }

TestSuite(trace, .init = make_tmp_dir, .fini = test_tmp_dir_remove, .timeout = 60);

static bp_trace_reader *open_reader(const char *path)
{
	bp_trace_reader *r = NULL;
	cr_assert_eq(bp_trace_reader_open(path, &r), BP_OK, "%s", bp_trace_open_error());
	return r;
}

/// Field by field: bp_trace_entity has padding (after max), whose bytes a copy need not keep.
static bool same_entities(const bp_trace_entity *a, const bp_trace_entity *b, uint32_t count)
{
	for (uint32_t i = 0; i < count; ++i)
		if (a[i].id != b[i].id || memcmp(a[i].min, b[i].min, sizeof a[i].min) ||
			memcmp(a[i].max, b[i].max, sizeof a[i].max) || a[i].category != b[i].category ||
			a[i].mask != b[i].mask || a[i].kind != b[i].kind || a[i].shape != b[i].shape)
			return false;
	return true;
}

/// A copy of the state (the reader's arrays change with it).
typedef struct state_copy {
	uint32_t count;
	uint32_t *ids;
	uint64_t *category, *mask;
	float *bounds[6];
	bp_kind *kinds;
	bp_shape *shapes;
} state_copy;

static void *dup_array(const void *p, size_t bytes)
{
	void *q = malloc(bytes + 1);
	if (bytes)
		memcpy(q, p, bytes);
	return q;
}

static state_copy copy_state(const bp_trace_state *s, int dims)
{
	const size_t n = s->count;
	state_copy c = {.count = s->count, .ids = dup_array(s->ids, n * 4), .category = dup_array(s->category, n * 8),
		.mask = dup_array(s->mask, n * 8), .kinds = dup_array(s->kinds, n * sizeof(bp_kind)),
		.shapes = dup_array(s->shapes, n * sizeof(bp_shape))};
	const float *b[6] = {s->bounds.min_x, s->bounds.min_y, s->bounds.min_z, s->bounds.max_x, s->bounds.max_y,
		s->bounds.max_z};
	for (int k = 0; k < 6; ++k)
		c.bounds[k] = k % 3 < dims ? dup_array(b[k], n * 4) : NULL;
	return c;
}

static void free_copy(state_copy *c)
{
	free(c->ids), free(c->category), free(c->mask), free(c->kinds), free(c->shapes);
	for (int k = 0; k < 6; ++k)
		free(c->bounds[k]);
}

/// The same entities in the same dense order, bit for bit.
static void expect_same_state(const state_copy *a, const bp_trace_state *s, int dims, uint32_t k)
{
	state_copy b = copy_state(s, dims);
	const size_t n = a->count;
	cr_assert_eq(a->count, b.count, "frame %u", k);
	cr_assert(!memcmp(a->ids, b.ids, n * 4) && !memcmp(a->category, b.category, n * 8) &&
			  !memcmp(a->mask, b.mask, n * 8) && !memcmp(a->kinds, b.kinds, n * sizeof(bp_kind)) &&
			  !memcmp(a->shapes, b.shapes, n * sizeof(bp_shape)),
		"frame %u: the state differs", k);
	for (int c = 0; c < 6; ++c)
		cr_assert(c % 3 >= dims || !memcmp(a->bounds[c], b.bounds[c], n * 4), "frame %u: bounds differ", k);
	free_copy(&b);
}

static void round_trip(int dims, uint32_t keyframe_interval)
{
	const char *path = test_tmp_path("t.bpt");
	trace_history h;
	trace_history_write(path, dims, 200, 50, keyframe_interval, 7 + (uint64_t)dims, &h);
	bp_trace_reader *r = open_reader(path);
	bp_trace_info info = bp_trace_reader_info(r);
	cr_assert_eq(info.dims, dims);
	cr_assert_eq(info.frame_count, 50);
	cr_assert_eq(info.keyframe_interval, keyframe_interval);
	uint32_t most = 0;
	state_copy *sequential = calloc(h.frames, sizeof *sequential);
	for (uint32_t k = 0; k < h.frames; ++k) {
		bp_trace_frame f;
		cr_assert_eq(bp_trace_reader_position(r), k);
		cr_assert_eq(bp_trace_reader_next(r, &f), BP_OK, "%s", bp_trace_reader_error(r));
		cr_assert_eq(f.index, k);
		bp_trace_state s = bp_trace_reader_state(r);
		trace_history_expect_state(&h, k, &s);
		sequential[k] = copy_state(&s, dims);
		most = h.counts[k] > most ? h.counts[k] : most;
	}
	cr_assert_eq(info.max_entities, most);
	bp_trace_frame f;
	cr_assert_eq(bp_trace_reader_next(r, &f), BP_ERR_OUT_OF_RANGE);
	cr_assert_neq(bp_trace_reader_error(r)[0], 0);

	// Random access: seek to frames in a scrambled order, backwards and forwards.
	test_rng rng = {99};
	for (int t = 0; t < 60; ++t) {
		uint32_t k = test_rng_below(&rng, h.frames);
		cr_assert_eq(bp_trace_reader_seek(r, k), BP_OK, "%s", bp_trace_reader_error(r));
		bp_trace_state s = bp_trace_reader_state(r);
		trace_history_expect_state(&h, k, &s);
		expect_same_state(&sequential[k], &s, dims, k);
	}
	cr_assert_eq(bp_trace_reader_seek(r, h.frames), BP_ERR_OUT_OF_RANGE);
	for (uint32_t k = 0; k < h.frames; ++k)
		free_copy(&sequential[k]);
	free(sequential);
	bp_trace_reader_close(r);
	trace_history_free(&h);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(trace, round_trip_3d_keyframes) { round_trip(3, 8); }
Test(trace, round_trip_2d_keyframes) { round_trip(2, 5); }
Test(trace, round_trip_without_keyframes) { round_trip(3, 0); }

/// Frame k read alone through the index holds what frame k of a sequential read holds.
Test(trace, read_frame_k_alone)
{
	const char *path = test_tmp_path("t.bpt");
	trace_history h;
	trace_history_write(path, 3, 100, 30, 4, 3, &h);
	bp_trace_reader *seq = open_reader(path), *direct = open_reader(path);
	for (uint32_t k = 0; k < h.frames; ++k) {
		bp_trace_frame a, b;
		cr_assert_eq(bp_trace_reader_next(seq, &a), BP_OK);
		uint32_t j = h.frames - 1 - k; // the direct reader goes backwards: frame j before frame k
		cr_assert_eq(bp_trace_reader_read(direct, j, &b), BP_OK);
		cr_assert_eq(bp_trace_reader_read(direct, k, &b), BP_OK, "%s", bp_trace_reader_error(direct));
		cr_assert_eq(bp_trace_reader_position(direct), 0);
		cr_assert(a.index == b.index && a.destroy_count == b.destroy_count && a.create_count == b.create_count &&
			a.set_count == b.set_count && a.move_count == b.move_count);
		cr_assert(!memcmp(a.destroys, b.destroys, a.destroy_count * 4u));
		cr_assert(same_entities(a.creates, b.creates, a.create_count));
		cr_assert(same_entities(a.sets, b.sets, a.set_count));
		cr_assert(!memcmp(a.move_ids, b.move_ids, a.move_count * 4u));
		cr_assert(!memcmp(a.moves.max_z, b.moves.max_z, a.move_count * 4u));
	}
	bp_trace_reader_close(seq);
	bp_trace_reader_close(direct);
	trace_history_free(&h);
}

/// Writes a small trace, making `bad` calls along the way when asked; each must fail with
/// a message and change nothing, so the file is byte for byte the one written without them.
static void write_with(const char *path, bool bad)
{
	bp_trace_writer_def def = bp_trace_writer_def_default();
	def.keyframe_interval = 2;
	bp_trace_writer *w = NULL;
	cr_assert_eq(bp_trace_writer_open(path, &def, &w), BP_OK);
	bp_trace_entity e[3] = {{.id = 1, .max = {1, 1, 1}, .category = 1, .mask = 1},
		{.id = 2, .min = {0.5f, 0, 0}, .max = {2, 1, 1}, .category = 1, .mask = 3, .kind = BP_KIND_STATIC},
		{.id = 3, .min = {5, 5, 5}, .max = {6, 6, 6}, .category = 2, .mask = 1, .shape = BP_SHAPE_SPHERE}};
	cr_assert_eq(bp_trace_create(w, 3, e), BP_OK);
	if (bad) {
		bp_trace_entity twice[2] = {e[0], e[0]};
		twice[0].id = twice[1].id = 9;
		bp_trace_entity inverted = e[0], nan = e[0], kind = e[0];
		inverted.id = nan.id = kind.id = 10;
		inverted.min[1] = 3;
		nan.max[2] = __builtin_nanf("");
		kind.kind = (bp_kind)5;
		const uint32_t unknown = 77, one = 1;
		const bp_status expect[] = {bp_trace_create(w, 1, &e[1]), bp_trace_create(w, 2, twice),
			bp_trace_create(w, 1, &inverted), bp_trace_create(w, 1, &nan), bp_trace_create(w, 1, &kind),
			bp_trace_destroy(w, 1, &unknown), bp_trace_destroy(w, 1, &one), bp_trace_create(w, 1, NULL)};
		for (size_t i = 0; i < sizeof expect / sizeof expect[0]; ++i) {
			cr_assert_neq(expect[i], BP_OK, "bad call %zu was accepted", i);
			cr_assert_neq(bp_trace_writer_error(w)[0], 0);
		}
	}
	cr_assert_eq(bp_trace_end_frame(w), BP_OK);
	const uint32_t two = 2, ids[2] = {1, 3};
	float lo[2] = {0.25f, 5}, hi[2] = {1.25f, 6}, y0[2] = {0, 5}, y1[2] = {1, 6};
	bp_bounds_arrays moved = {lo, y0, y0, hi, y1, y1};
	cr_assert_eq(bp_trace_destroy(w, 1, &two), BP_OK);
	cr_assert_eq(bp_trace_move(w, 2, ids, &moved), BP_OK);
	if (bad) {
		const uint32_t again = 2, three = 3;
		float nan_x[2] = {__builtin_nanf(""), 0};
		bp_bounds_arrays bad_bounds = {nan_x, y0, y0, hi, y1, y1};
		cr_assert_neq(bp_trace_destroy(w, 1, &again), BP_OK); // destroyed already
		cr_assert_neq(bp_trace_destroy(w, 1, &three), BP_OK); // moved in this frame
		cr_assert_neq(bp_trace_move(w, 2, ids, &bad_bounds), BP_OK);
		cr_assert_neq(bp_trace_move(w, 1, &again, &moved), BP_OK);
		bp_trace_entity gone = e[1];
		cr_assert_neq(bp_trace_set(w, 1, &gone), BP_OK);
		cr_assert_eq(bp_trace_create(w, 1, &e[1]), BP_OK); // id 2 comes back
		cr_assert_neq(bp_trace_destroy(w, 1, ids), BP_OK);  // a create came first
		cr_assert_eq(bp_trace_writer_close(w), BP_OK);
		return;
	}
	cr_assert_eq(bp_trace_create(w, 1, &e[1]), BP_OK);
	cr_assert_eq(bp_trace_writer_close(w), BP_OK);
}

Test(trace, bad_writes_change_nothing)
{
	char good[128], bad[128];
	snprintf(good, sizeof good, "%s", test_tmp_path("good.bpt"));
	snprintf(bad, sizeof bad, "%s", test_tmp_path("bad.bpt"));
	write_with(good, false);
	write_with(bad, true);
	size_t a_size, b_size;
	char *a = test_read_file(good, &a_size), *b = test_read_file(bad, &b_size);
	cr_assert_eq(a_size, b_size);
	cr_assert(!memcmp(a, b, a_size), "a refused call left a trace in the file");
	free(a);
	free(b);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(trace, open_errors_name_the_file)
{
	bp_trace_reader *r = (bp_trace_reader *)1;
	cr_assert_eq(bp_trace_reader_open(test_tmp_path("missing.bpt"), &r), BP_ERR_IO);
	cr_assert_null(r);
	cr_assert(strstr(bp_trace_open_error(), "missing.bpt"));
	bp_trace_writer *w = NULL;
	bp_trace_writer_def def = bp_trace_writer_def_default();
	def.dims = 4;
	cr_assert_eq(bp_trace_writer_open(test_tmp_path("x.bpt"), &def, &w), BP_ERR_INVALID_ARGUMENT);
	cr_assert(strstr(bp_trace_open_error(), "dims 4"));
	def.dims = 3;
	cr_assert_eq(bp_trace_writer_open("/nonexistent-dir/x.bpt", &def, &w), BP_ERR_IO);
	cr_assert(strstr(bp_trace_open_error(), "/nonexistent-dir/x.bpt"));
}
