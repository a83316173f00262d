// SPDX-License-Identifier: MIT
// Seeks: from every position (before frame 0, and after each frame) to every frame and past
// the last (frame_count, frame_count + 1, UINT32_MAX). A seek that succeeds gives the state a
// replay from frame 0 gives (and the writer's own history); one that fails, past the end or on
// a damaged record, leaves the position and the state as they were, and the reader reads on
// from there.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmpfiles.h"
#include "trace_bytes.h"
#include "trace_history.h"

static void make_tmp_dir(void) { test_tmp_dir_make("bp_trace_seek_"); }

TestSuite(trace_seek, .init = make_tmp_dir, .fini = test_tmp_dir_remove, .timeout = 120);

enum { FRAMES = 11, KEYFRAME_INTERVAL = 3 };

/// A state as bytes: count, then every column (ids, filters, kinds, shapes, bounds of `dims`
/// axes), so two states compare with memcmp.
typedef struct snapshot {
	uint8_t *bytes;
	size_t size;
} snapshot;

static void append(snapshot *s, const void *p, size_t n)
{
	s->bytes = realloc(s->bytes, s->size + n + 1);
	cr_assert_not_null(s->bytes);
	if (n)
		memcpy(s->bytes + s->size, p, n);
	s->size += n;
}

static snapshot take(const bp_trace_reader *r, int dims)
{
	const bp_trace_state st = bp_trace_reader_state(r);
	const uint32_t position = bp_trace_reader_position(r);
	const size_t n = st.count;
	snapshot s = {0};
	append(&s, &position, sizeof position);
	append(&s, &st.count, sizeof st.count);
	append(&s, st.ids, n * sizeof *st.ids);
	append(&s, st.category, n * sizeof *st.category);
	append(&s, st.mask, n * sizeof *st.mask);
	append(&s, st.kinds, n * sizeof *st.kinds);
	append(&s, st.shapes, n * sizeof *st.shapes);
	const float *bounds[6] = {st.bounds.min_x, st.bounds.min_y, st.bounds.min_z, st.bounds.max_x, st.bounds.max_y,
		st.bounds.max_z};
	for (int c = 0; c < 6; ++c)
		if (c % 3 < dims)
			append(&s, bounds[c], n * sizeof(float));
	return s;
}

static bool same(const snapshot *a, const snapshot *b)
{
	return a->size == b->size && memcmp(a->bytes, b->bytes, a->size) == 0;
}

static bp_trace_reader *open_reader(const char *path)
{
	bp_trace_reader *r = NULL;
	cr_assert_eq(bp_trace_reader_open(path, &r), BP_OK, "%s", bp_trace_open_error());
	return r;
}

/// The oracle: a replay from frame 0, one snapshot after each frame (position k + 1), and
/// before the first (position 0) at index FRAMES.
static void replay_from_the_start(const char *path, int dims, snapshot *after)
{
	bp_trace_reader *r = open_reader(path);
	after[FRAMES] = take(r, dims);
	bp_trace_frame f;
	for (uint32_t k = 0; k < FRAMES; ++k) {
		cr_assert_eq(bp_trace_reader_next(r, &f), BP_OK, "%s", bp_trace_reader_error(r));
		after[k] = take(r, dims);
	}
	bp_trace_reader_close(r);
}

/// A reader at `start`: before frame 0 when start is FRAMES, else after frame `start`, reached
/// by a seek.
static bp_trace_reader *reader_at(const char *path, uint32_t start)
{
	bp_trace_reader *r = open_reader(path);
	if (start < FRAMES)
		cr_assert_eq(bp_trace_reader_seek(r, start), BP_OK, "%s", bp_trace_reader_error(r));
	return r;
}

/// The reader reads on from where it is: its next frame gives the replay's state.
static void expect_reads_on(bp_trace_reader *r, const snapshot *after, int dims, const char *what)
{
	const uint32_t position = bp_trace_reader_position(r);
	if (position == FRAMES)
		return;
	bp_trace_frame f;
	cr_assert_eq(bp_trace_reader_next(r, &f), BP_OK, "%s: next: %s", what, bp_trace_reader_error(r));
	snapshot now = take(r, dims);
	cr_assert(same(&now, &after[position]), "%s: the next frame (%u) differs from the replay's", what, position);
	free(now.bytes);
}

static void every_seek_from_every_position(int dims)
{
	const char *path = test_tmp_path("seek.bpt");
	trace_history h;
	trace_history_write(path, dims, 12, FRAMES, KEYFRAME_INTERVAL, 5 + (uint64_t)dims, &h);
	snapshot after[FRAMES + 1];
	replay_from_the_start(path, dims, after);
	const uint32_t past[] = {FRAMES, FRAMES + 1, UINT32_MAX};
	for (uint32_t start = 0; start <= FRAMES; ++start) {
		for (uint32_t t = 0; t < FRAMES + 3; ++t) {
			const uint32_t k = t < FRAMES ? t : past[t - FRAMES];
			bp_trace_reader *r = reader_at(path, start);
			snapshot before = take(r, dims);
			char what[64];
			snprintf(what, sizeof what, "dims %d: from %u, seek %u", dims, start, k);
			bp_status status = bp_trace_reader_seek(r, k);
			snapshot now = take(r, dims);
			if (k < FRAMES) {
				cr_assert_eq(status, BP_OK, "%s: %s", what, bp_trace_reader_error(r));
				cr_assert(same(&now, &after[k]), "%s: the state differs from the replay's", what);
				bp_trace_state s = bp_trace_reader_state(r);
				trace_history_expect_state(&h, k, &s);
			} else {
				cr_assert_eq(status, BP_ERR_OUT_OF_RANGE, "%s", what);
				cr_assert(strstr(bp_trace_reader_error(r), "the trace has 11 frames"), "%s: %s", what,
					bp_trace_reader_error(r));
				cr_assert(same(&now, &before), "%s: a failed seek changed the position or the state", what);
			}
			expect_reads_on(r, after, dims, what);
			free(before.bytes);
			free(now.bytes);
			bp_trace_reader_close(r);
		}
	}
	for (uint32_t k = 0; k <= FRAMES; ++k)
		free(after[k].bytes);
	trace_history_free(&h);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(trace_seek, every_frame_and_past_the_end_from_every_position_2d) { every_seek_from_every_position(2); }

Test(trace_seek, every_frame_and_past_the_end_from_every_position_3d) { every_seek_from_every_position(3); }

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 8; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

// Frame DAMAGED's record fails its checksum. A seek to frame k decodes from the last keyframe at
// or before k (or from where the reader is, when nearer): it passes the damage exactly when k
// is at or after DAMAGED with no keyframe between them.
Test(trace_seek, a_seek_that_fails_on_a_damaged_record_changes_nothing)
{
	enum { DAMAGED = 4 };
	const int dims = 3;
	const char *path = test_tmp_path("seek.bpt"), *damaged = test_tmp_path("damaged.bpt");
	trace_history h;
	trace_history_write(path, dims, 12, FRAMES, KEYFRAME_INTERVAL, 17, &h);
	snapshot after[FRAMES + 1];
	replay_from_the_start(path, dims, after);
	size_t size;
	uint8_t *bytes = (uint8_t *)test_read_file(path, &size);
	const uint64_t index = trace_field_get(bytes, size, trace_field_named("index_offset"));
	const uint64_t record = get64(bytes + index + 16 * DAMAGED);
	bytes[record + 4 * 6] ^= 0x40; // the first payload word
	FILE *f = fopen(damaged, "wb");
	cr_assert(f && fwrite(bytes, 1, size, f) == size && fclose(f) == 0);
	for (uint32_t start = 0; start <= FRAMES; ++start) {
		const uint32_t key_of_start = start / KEYFRAME_INTERVAL * KEYFRAME_INTERVAL;
		if (start < FRAMES && start >= DAMAGED && key_of_start < DAMAGED)
			continue; // no seek reaches it
		for (uint32_t k = 0; k < FRAMES; ++k) {
			bp_trace_reader *r = reader_at(damaged, start);
			snapshot before = take(r, dims);
			char what[64];
			snprintf(what, sizeof what, "from %u, seek %u", start, k);
			const bool passes = k >= DAMAGED && k / KEYFRAME_INTERVAL * KEYFRAME_INTERVAL < DAMAGED;
			bp_status status = bp_trace_reader_seek(r, k);
			snapshot now = take(r, dims);
			if (!passes) {
				cr_assert_eq(status, BP_OK, "%s: %s", what, bp_trace_reader_error(r));
				cr_assert(same(&now, &after[k]), "%s: the state differs from the replay's", what);
			} else {
				cr_assert_eq(status, BP_ERR_PARSE, "%s", what);
				cr_assert(strstr(bp_trace_reader_error(r), "frame 4: checksum mismatch"), "%s: %s", what,
					bp_trace_reader_error(r));
				cr_assert(same(&now, &before), "%s: a failed seek changed the position or the state", what);
				if (bp_trace_reader_position(r) != DAMAGED)
					expect_reads_on(r, after, dims, what);
			}
			free(before.bytes);
			free(now.bytes);
			bp_trace_reader_close(r);
		}
	}
	for (uint32_t k = 0; k <= FRAMES; ++k)
		free(after[k].bytes);
	free(bytes);
	trace_history_free(&h);
	cr_assert_eq(bp_allocated_bytes(), 0);
}
