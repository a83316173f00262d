// SPDX-License-Identifier: MIT
// Damaged traces: every truncation and every single flipped byte of a small trace is refused
// with a message (on open, or on reading the frame it hits), never a crash; and records that
// pass their checksums but say impossible things (docs/trace.md, built here byte by byte from
// the document) are refused with the frame and the id named, the reader's state unchanged.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_history.h"
#include "tmpfiles.h"

static void make_tmp_dir(void) { test_tmp_dir_make("bp_trace_corrupt_"); }

TestSuite(trace_corrupt, .init = make_tmp_dir, .fini = test_tmp_dir_remove, .timeout = 120);

static void write_bytes(const char *path, const uint8_t *bytes, size_t size)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(bytes, 1, size, f), size);
	cr_assert_eq(fclose(f), 0);
}

/// Opens and reads everything: every frame in order, then every state by seeking. Returns the
/// first failure's status (with its message checked to name the file), BP_OK when all passed.
static bp_status read_all(const char *path)
{
	bp_trace_reader *r = NULL;
	bp_status status = bp_trace_reader_open(path, &r);
	if (status != BP_OK) {
		cr_assert_null(r);
		cr_assert(strstr(bp_trace_open_error(), path), "%s", bp_trace_open_error());
		return status;
	}
	bp_trace_frame f;
	const uint32_t frames = bp_trace_reader_info(r).frame_count;
	for (uint32_t k = 0; status == BP_OK && k < frames; ++k)
		status = bp_trace_reader_next(r, &f);
	for (uint32_t k = frames; status == BP_OK && k-- > 0;)
		status = bp_trace_reader_seek(r, k);
	if (status != BP_OK)
		cr_assert(strstr(bp_trace_reader_error(r), path), "%s", bp_trace_reader_error(r));
	bp_trace_reader_close(r);
	return status;
}

static uint8_t *small_trace(size_t *size)
{
	const char *path = test_tmp_path("small.bpt");
	trace_history h;
	trace_history_write(path, 3, 6, 6, 2, 21, &h);
	trace_history_free(&h);
	uint8_t *bytes = (uint8_t *)test_read_file(path, size);
	cr_assert_eq(read_all(path), BP_OK);
	return bytes;
}

Test(trace_corrupt, every_truncation_is_refused)
{
	size_t size;
	uint8_t *bytes = small_trace(&size);
	const char *path = test_tmp_path("cut.bpt");
	for (size_t cut = 0; cut < size; ++cut) {
		write_bytes(path, bytes, cut);
		bp_status status = read_all(path);
		cr_assert(status == BP_ERR_PARSE, "cut at %zu of %zu: %s", cut, size, bp_status_string(status));
	}
	free(bytes);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(trace_corrupt, every_flipped_byte_is_refused)
{
	size_t size;
	uint8_t *bytes = small_trace(&size);
	const char *path = test_tmp_path("flip.bpt");
	for (size_t at = 0; at < size; ++at) {
		for (int bit = 0; bit < 8; bit += 3) {
			bytes[at] ^= (uint8_t)(1u << bit);
			write_bytes(path, bytes, size);
			bp_status status = read_all(path);
			cr_assert(status == BP_ERR_PARSE, "bit %d of byte %zu of %zu: %s", bit, at, size, bp_status_string(status));
			bytes[at] ^= (uint8_t)(1u << bit);
		}
	}
	free(bytes);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

// ---- traces built from docs/trace.md ---------------------------------------------------

typedef struct builder {
	uint8_t bytes[4096];
	size_t size;
	uint64_t offsets[8][2];
	uint32_t frames;
	size_t record;    ///< where the record being built starts
	uint32_t version; ///< 1: a category or mask is one word; 2: a low and a high word
} builder;

static void word(builder *b, uint32_t v)
{
	for (int i = 0; i < 4; ++i)
		b->bytes[b->size++] = (uint8_t)(v >> (8 * i));
}

static uint32_t fnv(const uint8_t *p, size_t n, uint32_t h)
{
	for (size_t i = 0; i < n; ++i)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/// The category or mask column of n entities: the low words, then from version 2 the high words.
static void layers(builder *b, uint32_t n, const uint64_t *v)
{
	for (uint32_t i = 0; i < n; ++i)
		word(b, (uint32_t)v[i]);
	for (uint32_t i = 0; b->version >= 2 && i < n; ++i)
		word(b, (uint32_t)(v[i] >> 32));
}

static void begin(builder *b, int dims, uint32_t version)
{
	memcpy(b->bytes, "BPTRACE1", 8);
	b->size = 8;
	b->version = version;
	word(b, version);
	word(b, (uint32_t)dims);
	word(b, 0);
	word(b, 0);
}

static void frame_head(builder *b, uint32_t destroys, uint32_t creates, uint32_t sets, uint32_t moves)
{
	b->record = b->size;
	b->offsets[b->frames][0] = b->size;
	b->offsets[b->frames][1] = 0;
	word(b, 0x4D415246u);
	word(b, b->frames);
	word(b, destroys);
	word(b, creates);
	word(b, sets);
	word(b, moves);
}

static void frame_end(builder *b)
{
	word(b, fnv(b->bytes + b->record, b->size - b->record, 2166136261u));
	b->frames++;
}

/// A 2D create: id, category, mask, flags, then min_x, min_y, max_x, max_y, as columns of one entity.
static void create_2d(builder *b, uint32_t id, float x)
{
	word(b, id);
	layers(b, 1, (uint64_t[]){1});
	layers(b, 1, (uint64_t[]){UINT64_MAX});
	word(b, 0);
	float v[4] = {x, 0, x + 1, 1};
	for (int i = 0; i < 4; ++i) {
		uint32_t u;
		memcpy(&u, &v[i], 4);
		word(b, u);
	}
}

static void finish(builder *b, const char *path)
{
	const uint64_t index_offset = b->size;
	const size_t index_at = b->size;
	for (uint32_t k = 0; k < b->frames; ++k)
		for (int j = 0; j < 2; ++j) {
			word(b, (uint32_t)b->offsets[k][j]);
			word(b, (uint32_t)(b->offsets[k][j] >> 32));
		}
	uint8_t counts[12];
	const uint32_t c[3] = {b->frames, 2, 0}; // frame_count, max_entities, keyframe_interval
	for (int i = 0; i < 12; ++i)
		counts[i] = (uint8_t)(c[i / 4] >> (8 * (i % 4)));
	uint32_t hash = fnv(counts, 12, fnv(b->bytes + index_at, b->size - index_at, 2166136261u));
	word(b, (uint32_t)index_offset);
	word(b, (uint32_t)(index_offset >> 32));
	word(b, b->frames);
	word(b, hash);
	word(b, 2);
	word(b, 0);
	memcpy(b->bytes + b->size, "BPTREND1", 8);
	b->size += 8;
	write_bytes(path, b->bytes, b->size);
}

/// The filters of the two entities two_frames creates: in version 2 with bits past the low word.
static const uint64_t built_category[2][2] = {{5, 1}, {5 | UINT64_C(1) << 40, UINT64_C(1) << 63}};
static const uint64_t built_mask[2][2] = {{UINT32_MAX, 0x80000001u}, {UINT64_MAX, UINT64_MAX & ~(UINT64_C(1) << 62)}};

/// Frame 0 creates ids 1 and 2; frame 1 is whatever `second` writes.
static void two_frames(const char *path, uint32_t version, void (*second)(builder *b))
{
	builder b = {0};
	begin(&b, 2, version);
	frame_head(&b, 0, 2, 0, 0);
	word(&b, 1), word(&b, 2);                          // ids
	layers(&b, 2, built_category[version - 1]);
	layers(&b, 2, built_mask[version - 1]);
	word(&b, 0), word(&b, 1);                          // flags: id 2 static
	word(&b, 0), word(&b, 0x3f000000u);                // min_x: 0, 0.5
	word(&b, 0), word(&b, 0);                          // min_y
	word(&b, 0x3f800000u), word(&b, 0x40000000u);      // max_x: 1, 2
	word(&b, 0x3f800000u), word(&b, 0x3f800000u);      // max_y: 1, 1
	frame_end(&b);
	second(&b);
	finish(&b, path);
}

static void destroy_unknown(builder *b)
{
	frame_head(b, 1, 0, 0, 0);
	word(b, 5);
	frame_end(b);
}

static void destroy_twice(builder *b)
{
	frame_head(b, 2, 0, 0, 0);
	word(b, 1), word(b, 1);
	frame_end(b);
}

static void create_live(builder *b)
{
	frame_head(b, 0, 1, 0, 0);
	create_2d(b, 2, 3);
	frame_end(b);
}

static void move_destroyed(builder *b)
{
	frame_head(b, 1, 0, 0, 1);
	word(b, 1);
	word(b, 1), word(b, 0), word(b, 0), word(b, 0x3f800000u), word(b, 0x3f800000u);
	frame_end(b);
}

static void set_unknown_flags(builder *b)
{
	frame_head(b, 0, 0, 1, 0);
	word(b, 1);
	layers(b, 1, (uint64_t[]){1});
	layers(b, 1, (uint64_t[]){1});
	word(b, 8);
	frame_end(b);
}

static void inverted_move(builder *b)
{
	frame_head(b, 0, 0, 0, 1);
	word(b, 2);
	word(b, 0x40000000u), word(b, 0), word(b, 0x3f800000u), word(b, 0x3f800000u); // min_x 2 > max_x 1
	frame_end(b);
}

static void recreate(builder *b)
{
	frame_head(b, 1, 1, 0, 0); // id 1 destroyed, then created again: allowed
	word(b, 1);
	create_2d(b, 1, 0.5f);
	frame_end(b);
}

static void expect_refused(uint32_t version, void (*second)(builder *b), const char *says)
{
	const char *path = test_tmp_path("built.bpt");
	two_frames(path, version, second);
	bp_trace_reader *r = NULL;
	cr_assert_eq(bp_trace_reader_open(path, &r), BP_OK, "%s", bp_trace_open_error());
	bp_trace_frame f;
	cr_assert_eq(bp_trace_reader_next(r, &f), BP_OK, "%s", bp_trace_reader_error(r));
	cr_assert_eq(bp_trace_reader_next(r, &f), BP_ERR_PARSE);
	cr_assert(strstr(bp_trace_reader_error(r), says), "'%s' does not say '%s'", bp_trace_reader_error(r), says);
	bp_trace_state s = bp_trace_reader_state(r);
	cr_assert_eq(bp_trace_reader_position(r), 1);
	cr_assert(s.count == 2 && s.ids[0] == 1 && s.ids[1] == 2 && s.kinds[1] == BP_KIND_STATIC);
	bp_trace_reader_close(r);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(trace_corrupt, impossible_frames_are_refused)
{
	for (uint32_t version = 1; version <= BP_TRACE_VERSION; ++version) {
		expect_refused(version, destroy_unknown, "frame 1: destroys[0]: id 5 is not live");
		expect_refused(version, destroy_twice, "frame 1: destroys[1]: id 1 is listed twice");
		expect_refused(version, create_live, "frame 1: creates[0]: id 2 is already live");
		expect_refused(version, move_destroyed, "frame 1: moves[0]: id 1 is not live");
		expect_refused(version, set_unknown_flags, "frame 1: sets[0]: id 1: unknown flag bits");
		expect_refused(version, inverted_move, "frame 1: moves[0]: id 2: min_x > max_x");
	}
}

/// The document's layout, written by hand in `version`, reads back as written; version 1's
/// filters widened (all bits stay all bits, the rest zero-extended).
static void built_reads(uint32_t version, const uint64_t category[2], const uint64_t mask[2])
{
	const char *path = test_tmp_path("built.bpt");
	two_frames(path, version, recreate);
	bp_trace_reader *r = NULL;
	cr_assert_eq(bp_trace_reader_open(path, &r), BP_OK, "%s", bp_trace_open_error());
	cr_assert_eq(bp_trace_reader_info(r).dims, 2);
	bp_trace_frame f;
	cr_assert_eq(bp_trace_reader_next(r, &f), BP_OK, "%s", bp_trace_reader_error(r));
	cr_assert(f.create_count == 2);
	for (int i = 0; i < 2; ++i)
		cr_assert(f.creates[i].category == category[i] && f.creates[i].mask == mask[i],
			"version %u: creates[%d]: category %#llx, mask %#llx", version, i,
			(unsigned long long)f.creates[i].category, (unsigned long long)f.creates[i].mask);
	cr_assert_eq(bp_trace_reader_seek(r, 1), BP_OK, "%s", bp_trace_reader_error(r));
	bp_trace_state s = bp_trace_reader_state(r);
	// id 1 destroyed (id 2 moves into dense 0), then created again at dense 1.
	cr_assert(s.count == 2 && s.ids[0] == 2 && s.ids[1] == 1);
	cr_assert(s.bounds.min_x[0] == 0.5f && s.bounds.max_x[0] == 2 && s.kinds[0] == BP_KIND_STATIC);
	cr_assert(s.bounds.min_x[1] == 0.5f && s.bounds.max_x[1] == 1.5f && s.kinds[1] == BP_KIND_DYNAMIC);
	cr_assert(s.category[0] == category[1] && s.mask[0] == mask[1], "version %u: id 2's filter", version);
	cr_assert(s.category[1] == 1 && s.mask[1] == UINT64_MAX, "version %u: id 1's new filter", version);
	bp_trace_reader_close(r);
}

Test(trace_corrupt, a_trace_built_from_the_document_reads)
{
	built_reads(2, built_category[1], built_mask[1]);
}

Test(trace_corrupt, a_version_1_trace_reads_with_its_filters_widened)
{
	built_reads(1, (const uint64_t[]){5, 1}, (const uint64_t[]){UINT64_MAX, 0x80000001u});
}

Test(trace_corrupt, a_later_version_is_refused_by_name)
{
	builder b = {0};
	begin(&b, 2, BP_TRACE_VERSION + 1);
	finish(&b, test_tmp_path("later.bpt"));
	bp_trace_reader *r = NULL;
	cr_assert_eq(bp_trace_reader_open(test_tmp_path("later.bpt"), &r), BP_ERR_PARSE);
	cr_assert(strstr(bp_trace_open_error(), "trace format version 3; this library reads versions 1 to 2"), "%s",
		bp_trace_open_error());
}
