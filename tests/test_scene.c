// SPDX-License-Identifier: MIT
// Scene files: text and binary round trips (bit-exact), frames, every malformed input
// rejected with "name:line: reason" and nothing left allocated, writers that leave
// existing files, links, devices and FIFOs as they were when a write fails, and reading
// that streams (memory held, bogus and huge inputs, pipes, lines across buffer boundaries).
#define _XOPEN_SOURCE 700 // mknod, symlink, ftruncate, mkfifo
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "oracle.h"
#include "outputs.h"
#include "scene_format.h"
#include "scene_lines.h"
#include "scene_text.h"
#include "tmpfiles.h"

static uint32_t bits_of(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static float float_of(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static bp_scene *parse_ok_sized(const char *text, size_t size)
{
	bp_scene *s = NULL;
	bp_scene_error err = {0};
	bp_status st = bp_scene_parse(text, size, "t.txt", &s, &err);
	cr_assert_eq(st, BP_OK, "%s", err.message);
	cr_assert_not_null(s);
	return s;
}

static bp_scene *parse_ok(const char *text)
{
	return parse_ok_sized(text, strlen(text));
}

// Parses text that must fail at `line` with a message containing `reason`.
static void expect_parse_error(const char *text, size_t size, uint32_t line, const char *reason)
{
	int64_t before = bp_scene_allocated_bytes();
	bp_scene *s = (bp_scene *)&s; // not NULL, to see it cleared
	bp_scene_error err = {0};
	bp_status st = bp_scene_parse(text, size, "t.txt", &s, &err);
	cr_assert_eq(st, BP_ERR_PARSE, "status %d for %s", st, text);
	cr_assert_null(s);
	char prefix[32];
	snprintf(prefix, sizeof prefix, "t.txt:%u: ", line);
	cr_assert(strncmp(err.message, prefix, strlen(prefix)) == 0, "want prefix '%s', got '%s'", prefix, err.message);
	cr_assert_eq(err.line, line);
	cr_assert_not_null(strstr(err.message, reason), "want '%s' in '%s'", reason, err.message);
	cr_assert_eq(bp_scene_allocated_bytes(), before, "leaked %lld bytes", (long long)(bp_scene_allocated_bytes() - before));
}

#define EXPECT_ERROR(text, line, reason) expect_parse_error(text, sizeof(text) - 1, line, reason)

static char tmp_path[64];

static const char *temp_file(void)
{
	snprintf(tmp_path, sizeof tmp_path, "/tmp/bp_test_scene_%ld", (long)getpid());
	return tmp_path;
}

static bool same_scene(const bp_scene *a, const bp_scene *b)
{
	if (a->dims != b->dims || a->count != b->count || a->frame_count != b->frame_count)
		return false;
	if (memcmp(a->ids, b->ids, a->count * sizeof(uint32_t)) != 0)
		return false;
	size_t rows = (size_t)a->count * a->frame_count;
	for (int k = 0; k < a->dims; ++k) // memcmp: bit-exact, so -0.0 differs from 0.0
		if (memcmp(a->min[k], b->min[k], rows * sizeof(float)) || memcmp(a->max[k], b->max[k], rows * sizeof(float)))
			return false;
	return true;
}

// A scene holding the awkward floats and ids, then random finite bit patterns.
static bp_scene *awkward_scene(int dims, uint32_t n, uint32_t frames)
{
	bp_gen_def def = bp_gen_def_default();
	def.dims = dims;
	def.n = n;
	def.frames = frames;
	bp_scene *s = NULL;
	cr_assert_eq(bp_scene_generate(&def, &s), BP_OK);
	const float special[] = {-0.0f, 0.0f, FLT_TRUE_MIN, -FLT_TRUE_MIN, 1e-45f, FLT_MIN, 1.17549421e-38f /* denormal */,
		-FLT_MAX, FLT_MAX, 0.1f, 16777217.0f, -16777216.0f, 123456789.0f, 1e-7f, 3.14159274f};
	const size_t nspecial = sizeof special / sizeof special[0];
	test_rng rng = {42};
	size_t rows = (size_t)n * frames;
	for (size_t r = 0; r < rows; ++r)
		for (int a = 0; a < dims; ++a) {
			float x, y;
			if (r < nspecial) {
				x = special[r];
				y = special[r]; // min == max, so even FLT_MAX and -0.0 are valid boxes
			} else {
				do
					x = float_of((uint32_t)test_rng_next(&rng));
				while (!isfinite(x));
				do
					y = float_of((uint32_t)test_rng_next(&rng));
				while (!isfinite(y));
				if (x > y) {
					float t = x;
					x = y;
					y = t;
				}
			}
			s->min[a][r] = x;
			s->max[a][r] = y;
		}
	for (uint32_t i = 0; i < n; ++i)
		s->ids[i] = i == 0 ? 4294967295u : i == 1 ? 0u : 4294967295u - 7919u * i; // unique, sparse
	return s;
}

Test(scene, text_round_trip_is_bit_exact)
{
	int64_t before = bp_scene_allocated_bytes();
	for (int dims = 2; dims <= 3; ++dims) {
		bp_scene *s = awkward_scene(dims, 300, 1);
		cr_assert_eq(bits_of(s->min[0][0]), 0x80000000u); // -0.0 really is in there
		cr_assert_eq(bp_scene_write_text(s, temp_file(), NULL), BP_OK);
		bp_scene *back = NULL;
		bp_scene_error err = {0};
		cr_assert_eq(bp_scene_read(temp_file(), &back, &err), BP_OK, "%s", err.message);
		cr_assert(same_scene(s, back));
		cr_assert_eq(back->ids[0], 4294967295u);
		cr_assert_eq(bits_of(back->min[0][2]), 1u); // FLT_TRUE_MIN = 1e-45f, bit pattern 1
		cr_assert_eq(back->max[1][8], FLT_MAX);
		if (dims == 2)
			cr_assert_null(back->min[2]);
		bp_scene_destroy(s);
		bp_scene_destroy(back);
	}
	unlink(temp_file());
	cr_assert_eq(bp_scene_allocated_bytes(), before);
}

Test(scene, binary_round_trip_is_bit_exact)
{
	int64_t before = bp_scene_allocated_bytes();
	for (int dims = 2; dims <= 3; ++dims) {
		bp_scene *s = awkward_scene(dims, 257, 3);
		cr_assert_eq(bp_scene_write_binary(s, temp_file(), NULL), BP_OK);
		FILE *f = fopen(temp_file(), "rb");
		cr_assert_not_null(f);
		fseek(f, 0, SEEK_END);
		// 8 magic + 16 header + 4 per id + frames * dims * 2 arrays * 4 per float.
		cr_assert_eq(ftell(f), 24 + 4 * 257 + 3 * dims * 2 * 4 * 257);
		fclose(f);
		bp_scene *back = NULL;
		bp_scene_error err = {0};
		cr_assert_eq(bp_scene_read(temp_file(), &back, &err), BP_OK, "%s", err.message);
		cr_assert(same_scene(s, back));
		// Text written from the binary copy reads back to the same scene too.
		cr_assert_eq(bp_scene_write_text(back, temp_file(), NULL), BP_OK);
		bp_scene *again = NULL;
		cr_assert_eq(bp_scene_read(temp_file(), &again, &err), BP_OK, "%s", err.message);
		cr_assert(same_scene(s, again));
		bp_scene_destroy(s);
		bp_scene_destroy(back);
		bp_scene_destroy(again);
	}
	unlink(temp_file());
	cr_assert_eq(bp_scene_allocated_bytes(), before);
}

// The binary layout, byte by byte, for a 2D scene of 2 entities and 1 frame.
Test(scene, binary_layout_is_little_endian_as_documented)
{
	bp_scene *s = parse_ok("# dims=2\n7 1 2 3 4\n9 -1 -2 5 6\n");
	cr_assert_eq(bp_scene_write_binary(s, temp_file(), NULL), BP_OK);
	unsigned char got[128];
	FILE *f = fopen(temp_file(), "rb");
	size_t size = fread(got, 1, sizeof got, f);
	fclose(f);
	unsigned char want[64] = "BPSCENE1";
	size_t at = 8;
	const uint32_t words[] = {2, 2, 1, 0, 7, 9};
	for (size_t i = 0; i < 6; ++i, at += 4)
		for (int b = 0; b < 4; ++b)
			want[at + b] = (unsigned char)(words[i] >> (8 * b));
	// frame 0: min_x, max_x, min_y, max_y
	const float floats[] = {1, -1, 3, 5, 2, -2, 4, 6};
	for (size_t i = 0; i < 8; ++i, at += 4)
		for (int b = 0; b < 4; ++b)
			want[at + b] = (unsigned char)(bits_of(floats[i]) >> (8 * b));
	cr_assert_eq(size, at);
	cr_assert_eq(memcmp(got, want, at), 0);
	// The same bytes parse from memory as well.
	bp_scene *back = NULL;
	bp_scene_error err = {0};
	cr_assert_eq(bp_scene_parse((const char *)got, size, "mem", &back, &err), BP_OK, "%s", err.message);
	cr_assert(same_scene(s, back));
	bp_scene_destroy(back);
	bp_scene_destroy(s);
	unlink(temp_file());
}

Test(scene, parses_frames_comments_blank_lines_and_crlf)
{
	const char *text = "\n  \n# dims=3 n=2 note=ignored\r\n"
			   "# a comment\n"
			   "# frame 0\n"
			   "5 0 0 0 1 1 1\n"
			   "\t8  -1.5 2 3e0   4 5 6  \r\n"
			   "\n# frame 1\n"
			   "5 0.5 0 0 1.5 1 1\n"
			   "# frames are moving\n"
			   "8 -1 2 3 4.5 5 6"; // no trailing newline: fine, the line is complete
	bp_scene *s = parse_ok(text);
	cr_assert_eq(s->dims, 3);
	cr_assert_eq(s->count, 2);
	cr_assert_eq(s->frame_count, 2);
	cr_assert_eq(s->ids[0], 5);
	cr_assert_eq(s->ids[1], 8);
	bp_bounds_arrays f0 = bp_scene_frame_bounds(s, 0), f1 = bp_scene_frame_bounds(s, 1);
	cr_assert_eq(f0.min_x[1], -1.5f);
	cr_assert_eq(f0.max_z[1], 6.0f);
	cr_assert_eq(f1.min_x[0], 0.5f);
	cr_assert_eq(f1.max_x[0], 1.5f);
	cr_assert_eq(f1.max_x[1], 4.5f);
	cr_assert_eq(f1.min_x, s->min[0] + 2);
	bp_bounds_arrays none = bp_scene_frame_bounds(s, 2);
	cr_assert_null(none.min_x);
	bp_scene_destroy(s);
}

Test(scene, rows_before_first_marker_are_frame_zero)
{
	bp_scene *s = parse_ok("# dims=2\n1 0 0 1 1\n# frame 1\n1 2 2 3 3\n");
	cr_assert_eq(s->frame_count, 2);
	cr_assert_eq(s->min[0][1], 2.0f);
	bp_scene_destroy(s);
}

Test(scene, empty_scenes)
{
	bp_scene *s = parse_ok("# dims=2 n=0\n");
	cr_assert_eq(s->count, 0);
	cr_assert_eq(s->frame_count, 1);
	cr_assert_eq(bp_scene_write_binary(s, temp_file(), NULL), BP_OK);
	bp_scene *back = NULL;
	bp_scene_error err = {0};
	cr_assert_eq(bp_scene_read(temp_file(), &back, &err), BP_OK, "%s", err.message);
	cr_assert(same_scene(s, back));
	bp_scene_destroy(back);
	bp_scene_destroy(s);
	s = parse_ok("# dims=3\n# frame 0\n# frame 1\n");
	cr_assert_eq(s->count, 0);
	cr_assert_eq(s->frame_count, 2);
	bp_scene_destroy(s);
	unlink(temp_file());
}

Test(scene, malformed_text_is_rejected_with_file_and_line)
{
	EXPECT_ERROR("", 0, "empty file");
	EXPECT_ERROR("\n  \n\n", 0, "empty file");
	EXPECT_ERROR("1 0 0 1 1\n", 1, "missing header");
	EXPECT_ERROR("\n# n=1\n1 0 0 1 1\n", 2, "no dims");
	EXPECT_ERROR("# dims=4\n", 1, "dims must be 2 or 3");
	EXPECT_ERROR("# dims=\n", 1, "dims must be 2 or 3");
	EXPECT_ERROR("# dims=3 hello\n", 1, "'hello' is not key=value");
	EXPECT_ERROR("# =3 dims=3\n", 1, "not key=value");
	EXPECT_ERROR("# dims=2 n=x\n", 1, "n must be an integer");
	EXPECT_ERROR("# dims=2 n=3\n1 0 0 1 1\n2 0 0 1 1\n", 1, "n=3 but the file has 2");
	EXPECT_ERROR("# dims=2\n1 0 0 1 1\n2 0 0 1\n", 3, "expected 5 columns (id + 4 bounds), got 4");
	EXPECT_ERROR("# dims=3\n1 0 0 0 1 1 1 1\n", 2, "expected 7 columns (id + 6 bounds), got 8");
	EXPECT_ERROR("# dims=2\n1 0 0 1 1\n2 0 0", 3, "got 3"); // truncated last line
	EXPECT_ERROR("# dims=2\n1 0 zero 1 1\n", 2, "'zero' is not a number");
	EXPECT_ERROR("# dims=2\n1 0 1x 1 1\n", 2, "'1x' is not a number");
	EXPECT_ERROR("# dims=2\n1 0 0 1 1 # trailing\n", 2, "got 7");
	EXPECT_ERROR("# dims=2\n1 0 nan 1 1\n", 2, "NaN");
	EXPECT_ERROR("# dims=2\n1 0 0 inf 1\n", 2, "infinite");
	EXPECT_ERROR("# dims=2\n1 0 0 1e39 1\n", 2, "infinite");
	EXPECT_ERROR("# dims=2\n1 0 0 -1e39 1\n", 2, "infinite");
	EXPECT_ERROR("# dims=2\n1 0 0 1 1\n\n2 0 3 1 2\n", 4, "min_y > max_y (3 > 2)");
	EXPECT_ERROR("# dims=3\n1 0 0 5 1 1 4\n", 2, "min_z > max_z");
	EXPECT_ERROR("# dims=2\n1 0 0 1 1\n2 0 0 1 1\n# c\n1 0 0 1 1\n", 5, "duplicate id 1 (first on line 2)");
	EXPECT_ERROR("# dims=2\n-1 0 0 1 1\n", 2, "negative id");
	EXPECT_ERROR("# dims=2\n4294967296 0 0 1 1\n", 2, "id out of range");
	EXPECT_ERROR("# dims=2\n99999999999999999999999 0 0 1 1\n", 2, "id out of range");
	EXPECT_ERROR("# dims=2\n1.5 0 0 1 1\n", 2, "id '1.5' is not an integer");
	EXPECT_ERROR("# dims=2\n1 0 0 1 1\n2 0\0 0 1 1\n", 3, "binary data");
	EXPECT_ERROR("\x7f" "ELF\x02\x01\x01", 1, "binary data");
	EXPECT_ERROR("# dims=2\n1 0 0 1 1\n2 \xff\xfe 0 1 1\n", 3, "binary data");
	// Frames.
	EXPECT_ERROR("# dims=2\n# frame 1\n", 2, "frame 1 out of order (expected frame 0)");
	EXPECT_ERROR("# dims=2\n1 0 0 1 1\n# frame 0\n", 3, "out of order");
	EXPECT_ERROR("# dims=2\n# frame x\n", 2, "bad frame marker");
	EXPECT_ERROR("# dims=2\n# frame 0\n1 0 0 1 1\n2 0 0 1 1\n# frame 1\n1 0 0 1 1\n# frame 2\n", 7,
		"frame 1 has 1 entities but frame 0 has 2");
	EXPECT_ERROR("# dims=2\n# frame 0\n1 0 0 1 1\n2 0 0 1 1\n# frame 1\n1 0 0 1 1\n", 6,
		"frame 1 has 1 entities but frame 0 has 2"); // at end of file: the last line
	EXPECT_ERROR("# dims=2\n# frame 0\n1 0 0 1 1\n# frame 1\n1 0 0 1 1\n2 0 0 1 1\n", 6,
		"more entities than frame 0");
	EXPECT_ERROR("# dims=2\n# frame 0\n1 0 0 1 1\n2 0 0 1 1\n# frame 1\n2 0 0 1 1\n1 0 0 1 1\n", 6,
		"id 2 where frame 0 has id 1");
	EXPECT_ERROR("# dims=2 n=1\n# frame 0\n1 0 0 1 1\n1 0 0 1 1\n# frame 1\n", 4, "duplicate id 1");
}

// Findings (issue 15): a UTF-8 byte-order mark gave "missing header", and CR-only
// line ends "header word '0' is not key=value". A mark is skipped; CR, CRLF and LF
// each end a line, mixed too, and error lines count them that way.
Test(scene, byte_order_mark_and_cr_crlf_lf_line_ends)
{
	const char *forms[] = {
		"# dims=2 n=2\n1 0 0 1 1\n2 0.5 0.5 2 2\n",
		"\xEF\xBB\xBF# dims=2 n=2\n1 0 0 1 1\n2 0.5 0.5 2 2\n",
		"# dims=2 n=2\r1 0 0 1 1\r2 0.5 0.5 2 2\r",
		"# dims=2 n=2\r\n1 0 0 1 1\r\n2 0.5 0.5 2 2",
		"\xEF\xBB\xBF\r\n# dims=2 n=2\r1 0 0 1 1\n\r2 0.5 0.5 2 2\r\n",
	};
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; ++i) {
		bp_scene *s = parse_ok(forms[i]);
		cr_assert_eq(s->count, 2, "form %zu", i);
		cr_assert_eq(s->ids[1], 2);
		cr_assert_eq(s->min[0][1], 0.5f);
		cr_assert_eq(s->max[1][1], 2.0f, "form %zu", i);
		bp_scene_destroy(s);
	}
	EXPECT_ERROR("\xEF\xBB\xBF# dims=2\n1 0 0 1 1\n2 0 0 x 1\n", 3, "'x' is not a number");
	EXPECT_ERROR("# dims=2\r1 0 0 1 1\r\r2 0 0 x 1\r", 4, "'x' is not a number");
	EXPECT_ERROR("# dims=2\r\n1 0 0 1 1\r\n\r\n2 0 0 x 1\r\n", 4, "'x' is not a number");
	EXPECT_ERROR("# dims=2\n\r1 0 0 1 1\r\n2 0 0 x 1", 4, "'x' is not a number");
	EXPECT_ERROR("# dims=2\r1 0 0 1 1\r1 0 0 1 1\r", 3, "duplicate id 1 (first on line 2)");
	// Only a mark at the very start is one.
	EXPECT_ERROR("# dims=2\n\xEF\xBB\xBF" "1 0 0 1 1\n", 2, "binary data in id");
}

// Finding (issue 15): '# dims=3 n=1 dims=2' was read as 2D. A key the reader knows
// may come once; other keys are ignored, repeated or not.
Test(scene, a_header_key_given_twice_is_an_error_naming_it)
{
	EXPECT_ERROR("# dims=3 n=1 dims=2\n1 0 0 1 1\n", 1, "header gives dims twice ('dims=3', then 'dims=2')");
	EXPECT_ERROR("# dims=2 dims=2\n", 1, "header gives dims twice ('dims=2', then 'dims=2')");
	EXPECT_ERROR("\n# n=2 dims=2 n=1\n1 0 0 1 1\n", 2, "header gives n twice ('n=2', then 'n=1')");
	bp_scene *s = parse_ok("# dims=2 note=a note=b\n1 0 0 1 1\n");
	cr_assert_eq(s->dims, 2);
	bp_scene_destroy(s);
}

Test(scene, malformed_binary_is_rejected_with_line_zero)
{
	bp_scene *s = parse_ok("# dims=2\n7 1 2 3 4\n9 -1 -2 5 6\n");
	cr_assert_eq(bp_scene_write_binary(s, temp_file(), NULL), BP_OK);
	bp_scene_destroy(s);
	unsigned char good[128];
	FILE *f = fopen(temp_file(), "rb");
	size_t size = fread(good, 1, sizeof good, f);
	fclose(f);
	unlink(temp_file());
	cr_assert_eq(size, 24 + 8 + 32);
	unsigned char bad[128];
	struct {
		size_t at;       // byte to patch
		uint32_t word;   // little-endian word written there
		long size_delta; // bytes cut (negative) or added
		const char *reason;
	} cases[] = {
		{8, 4, 0, "dims must be 2 or 3 (got 4)"},
		{16, 0, 0, "frame_count is 0"},
		{20, 1, 0, "reserved header field is 1"},
		{12, 3, 0, "size mismatch"},
		{0, 0, -1, "size mismatch"},
		{0, 0, 4, "size mismatch"},
		{0, 0, -50, "truncated binary header"},
		{28, 7, 0, "duplicate id 7 (entities 0 and 1)"},
		{32, 0x7fc00000u, 0, "min_x is NaN"},       // entity 0 min_x
		{44, 0x7f800000u, 0, "max_x is infinite"},  // entity 1 max_x
		{48, bits_of(10.0f), 0, "min_y > max_y (10 > 4)"}, // entity 0 min_y
		{12, 0xffffffffu, 0, "size mismatch"},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
		memcpy(bad, good, size);
		for (int b = 0; b < 4 && cases[c].at; ++b)
			bad[cases[c].at + b] = (unsigned char)(cases[c].word >> (8 * b));
		size_t bad_size = (size_t)((long)size + cases[c].size_delta);
		int64_t before = bp_scene_allocated_bytes();
		bp_scene *out = NULL;
		bp_scene_error err = {0};
		cr_assert_eq(bp_scene_parse((const char *)bad, bad_size, "b.bin", &out, &err), BP_ERR_PARSE, "case %zu", c);
		cr_assert_null(out);
		cr_assert(strncmp(err.message, "b.bin:0: ", 9) == 0, "%s", err.message);
		cr_assert_not_null(strstr(err.message, cases[c].reason), "case %zu: want '%s' in '%s'", c, cases[c].reason,
			err.message);
		cr_assert_eq(bp_scene_allocated_bytes(), before);
		// The same through a file.
		f = fopen(temp_file(), "wb");
		fwrite(bad, 1, bad_size, f);
		fclose(f);
		cr_assert_eq(bp_scene_read(temp_file(), &out, &err), BP_ERR_PARSE);
		cr_assert_null(out);
		cr_assert_not_null(strstr(err.message, cases[c].reason), "%s", err.message);
		cr_assert_eq(bp_scene_allocated_bytes(), before);
	}
	unlink(temp_file());
}

Test(scene, io_errors_name_the_file_and_line_zero)
{
	int64_t before = bp_scene_allocated_bytes();
	bp_scene *out = NULL;
	bp_scene_error err = {0};
	cr_assert_eq(bp_scene_read("/nonexistent/dir/x.scene", &out, &err), BP_ERR_IO);
	cr_assert_null(out);
	char want[128];
	snprintf(want, sizeof want, "/nonexistent/dir/x.scene:0: %s", strerror(ENOENT));
	cr_assert_str_eq(err.message, want);
	cr_assert_eq(bp_scene_read("/tmp", &out, &err), BP_ERR_IO);
	cr_assert(strncmp(err.message, "/tmp:0: ", 8) == 0, "%s", err.message);
	bp_scene *s = parse_ok("# dims=2\n1 0 0 1 1\n");
	// Writers have no line to name: "cannot write 'file': reason".
	snprintf(want, sizeof want, "cannot write '/nonexistent/dir/x.scene': %s", strerror(ENOENT));
	err = (bp_scene_error){0};
	cr_assert_eq(bp_scene_write_text(s, "/nonexistent/dir/x.scene", &err), BP_ERR_IO);
	cr_assert_str_eq(err.message, want);
	err = (bp_scene_error){0};
	cr_assert_eq(bp_scene_write_binary(s, "/nonexistent/dir/x.scene", &err), BP_ERR_IO);
	cr_assert_str_eq(err.message, want);
	cr_assert_eq(err.line, 0);
	bp_scene_destroy(s);
	cr_assert_eq(bp_scene_allocated_bytes(), before);
}

Test(scene, text_file_errors_name_the_file)
{
	FILE *f = fopen(temp_file(), "wb");
	fputs("# dims=2\n1 0 0 1 1\n2 0 0 1 one\n", f);
	fclose(f);
	bp_scene *out = NULL;
	bp_scene_error err = {0};
	cr_assert_eq(bp_scene_read(temp_file(), &out, &err), BP_ERR_PARSE);
	char want[128];
	snprintf(want, sizeof want, "%s:3: ", temp_file());
	cr_assert(strncmp(err.message, want, strlen(want)) == 0, "%s", err.message);
	unlink(temp_file());
}

Test(scene, bad_arguments)
{
	bp_scene *out = NULL;
	cr_assert_eq(bp_scene_parse(NULL, 3, "x", &out, NULL), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_scene_parse("# dims=2\n", 9, "x", NULL, NULL), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_scene_read(NULL, &out, NULL), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_scene_write_text(NULL, "x", NULL), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_scene_write_binary(NULL, "x", NULL), BP_ERR_INVALID_ARGUMENT);
	// A NULL error struct is fine on failure.
	cr_assert_eq(bp_scene_parse("junk\n", 5, "x", &out, NULL), BP_ERR_PARSE);
	cr_assert_null(out);
	bp_scene_destroy(NULL);
}

// Scene bounds feed the bulk world API directly, and brute agrees with the oracle.
Test(scene, frame_bounds_feed_the_world)
{
	bp_scene *s = parse_ok("# dims=2\n10 0 0 2 2\n20 1 1 3 3\n30 5 5 6 6\n# frame 1\n10 0 0 2 2\n20 4 4 5 5\n30 5 5 6 6\n");
	cr_assert_eq(s->frame_count, 2);
	bp_world_def def = bp_world_def_default();
	def.dims = 2;
	def.algorithm = BP_ALGO_BRUTE;
	def.thread_count = 1;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_bounds_arrays b = bp_scene_frame_bounds(s, 0);
	bp_entity_def common = bp_entity_def_default();
	cr_assert_eq(bp_world_create_entities(w, s->count, &b, &common, NULL), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK);
	size_t n;
	const bp_pair *p = bp_world_pairs(w, &n);
	// Frame 0: [0,2]^2 and [1,3]^2 overlap; [5,6]^2 is apart -> ids (10, 20).
	cr_assert_eq(n, 1);
	cr_assert_eq(s->ids[p[0].lo] + s->ids[p[0].hi], 30u);
	b = bp_scene_frame_bounds(s, 1);
	cr_assert_eq(bp_entities_set_bounds(w, bp_target_range(0, s->count), &b), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK);
	p = bp_world_pairs(w, &n);
	// Frame 1: 20 moved to [4,5]^2, touching 30 at the corner (5,5) -> ids (20, 30).
	cr_assert_eq(n, 1);
	cr_assert_eq(s->ids[p[0].lo] + s->ids[p[0].hi], 50u);
	bp_world_destroy(w);
	bp_scene_destroy(s);
}

// The writer's own %.9g against the C library's, on special values and on random
// bit patterns of every exponent.
Test(scene, float_formatting_matches_printf)
{
	const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.1f, 1e-4f, 9.99999975e-5f, 1e-5f, 123456789.0f,
		999999999.0f, 1e9f, 4294967296.0f, FLT_MAX, -FLT_MAX, FLT_MIN, FLT_TRUE_MIN, 1e-20f, 1e-21f, 3.0e38f,
		0.5f, 2.5f, 1e8f, 99999999.0f, 16777216.0f, 16777217.0f};
	char got[64], want[64];
	for (size_t i = 0; i < sizeof special / sizeof special[0]; ++i) {
		scenefile_format_float_g9(special[i], got);
		snprintf(want, sizeof want, "%.9g", (double)special[i]);
		cr_assert_str_eq(got, want);
	}
	test_rng rng = {7};
	for (int i = 0; i < 2000000; ++i) {
		float v = float_of((uint32_t)test_rng_next(&rng));
		if (!isfinite(v))
			continue;
		int n = scenefile_format_float_g9(v, got);
		snprintf(want, sizeof want, "%.9g", (double)v);
		cr_assert_str_eq(got, want, "bits 0x%08x", bits_of(v));
		cr_assert_eq((size_t)n, strlen(want));
	}
}

// The tokenizer's fast decimal path against strtof, over many spellings.
Test(scene, number_parsing_matches_strtof)
{
	enum { rows = 20000 };
	const size_t cap = (size_t)rows * 200 + 64;
	char *text = malloc(cap);
	float *want = malloc(sizeof(float) * rows * 4);
	size_t len = (size_t)snprintf(text, cap, "# dims=2 n=%d\n", rows);
	test_rng rng = {99};
	for (uint32_t r = 0; r < rows; ++r) {
		char tok[4][64];
		float val[4];
		for (int c = 0; c < 4; ++c) {
			double x = ldexp(test_rng_float(&rng, -1, 1), (int)test_rng_below(&rng, 120) - 60);
			switch (test_rng_below(&rng, 10)) {
			case 0: snprintf(tok[c], 64, "%.9g", x); break;
			case 1: snprintf(tok[c], 64, "%.3f", x); break;
			case 2: snprintf(tok[c], 64, "%.17g", x); break;
			case 3: snprintf(tok[c], 64, "%.12E", x); break;
			case 4: snprintf(tok[c], 64, "%+.6g", x); break;
			case 5: snprintf(tok[c], 64, "%d", (int)test_rng_below(&rng, 100000) - 50000); break;
			case 6: snprintf(tok[c], 64, "000%.5f", fabs(x)); break;
			case 7: snprintf(tok[c], 64, ".%u", test_rng_below(&rng, 1000000)); break;
			case 8: snprintf(tok[c], 64, "%u.e-%u", test_rng_below(&rng, 1000), test_rng_below(&rng, 50)); break;
			default: snprintf(tok[c], 64, "%.25f", x); break;
			}
			val[c] = strtof(tok[c], NULL);
		}
		for (int a = 0; a < 2; ++a) // order each axis so min <= max
			if (val[a] > val[a + 2]) {
				float t = val[a];
				val[a] = val[a + 2];
				val[a + 2] = t;
				char tt[64];
				memcpy(tt, tok[a], 64);
				memcpy(tok[a], tok[a + 2], 64);
				memcpy(tok[a + 2], tt, 64);
			}
		len += (size_t)snprintf(text + len, cap - len, "%u %s %s %s %s\n", r, tok[0], tok[1], tok[2], tok[3]);
		memcpy(want + 4 * r, val, sizeof val);
	}
	bp_scene *s = NULL;
	bp_scene_error err = {0};
	cr_assert_eq(bp_scene_parse(text, len, "numbers", &s, &err), BP_OK, "%s", err.message);
	for (uint32_t r = 0; r < rows; ++r) {
		const float got[4] = {s->min[0][r], s->min[1][r], s->max[0][r], s->max[1][r]};
		for (int c = 0; c < 4; ++c)
			cr_assert_eq(bits_of(got[c]), bits_of(want[4 * r + c]), "row %u column %d", r, c);
	}
	bp_scene_destroy(s);
	free(text);
	free(want);
}

// A row "1 0 0 <value> <value>" with `value` made of parts repeated: prefix,
// `zeros` zeros, then suffix.
static char *row_with_value(const char *prefix, size_t zeros, const char *suffix, size_t *len)
{
	const size_t value = strlen(prefix) + zeros + strlen(suffix);
	char *text = malloc(2 * value + 64);
	cr_assert_not_null(text);
	size_t n = (size_t)sprintf(text, "# dims=2\n1 0 0");
	for (int k = 0; k < 2; ++k) {
		n += (size_t)sprintf(text + n, " %s", prefix);
		memset(text + n, '0', zeros);
		n += zeros;
		n += (size_t)sprintf(text + n, "%s", suffix);
	}
	text[n++] = '\n';
	text[n] = '\0';
	*len = n;
	return text;
}

// Finding (issue 15): the fast number path capped exponents at 10^4 but counted every
// zero after the point, so 0.(9999 zeros)1e100005 = 10^90005 read as 1. Long spellings
// read as strtof reads them: beyond float range rejected, the rest bit for bit.
Test(scene, long_spellings_read_as_strtof_reads_them)
{
	const struct {
		const char *prefix;
		size_t zeros;
		const char *suffix;
		const char *error; ///< NULL: the value strtof gives
	} cases[] = {
		{"0.", 9999, "1e100005", "infinite or beyond float range"}, // 10^90005
		{"-0.", 9999, "1e100005", "infinite or beyond float range"}, // -10^90005
		{"0.", 9999, "1e10003", NULL},                               // 10^3
		{"0.", 9999, "1e10000", NULL},                               // 1
		{"0.", 100000, "1e100001", NULL},                            // 1
		{"0.", 100000, "1e99990", NULL},                             // 10^-11
		{"1", 30000, "e-30000", NULL},                               // 1
		{"1", 30000, "e-29990", NULL},                               // 10^10
		{"1", 0, "e99999999999999999999999", "infinite or beyond float range"},
		{"1", 0, "e-99999999999999999999999", NULL},                 // 0
		{"4", 0, "e0000000000000000000000000001", NULL},            // 40
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
		size_t len;
		char *text = row_with_value(cases[c].prefix, cases[c].zeros, cases[c].suffix, &len);
		// The value as strtof reads it, from the first value's spelling.
		const char *value = text + strlen("# dims=2\n1 0 0 ");
		const float want = strtof(value, NULL);
		bp_scene *s = NULL;
		bp_scene_error err = {0};
		bp_status st = bp_scene_parse(text, len, "t.txt", &s, &err);
		if (cases[c].error || isinf(want)) {
			cr_assert_eq(st, BP_ERR_PARSE, "case %zu: read as %g", c, st == BP_OK ? (double)s->max[0][0] : 0.0);
			cr_assert_not_null(strstr(err.message, "t.txt:2: value 3 is infinite or beyond float range"),
				"case %zu: %s", c, err.message);
		} else {
			cr_assert_eq(st, BP_OK, "case %zu: %s", c, err.message);
			cr_assert_eq(bits_of(s->max[0][0]), bits_of(want), "case %zu: %.9g, strtof %.9g", c,
				(double)s->max[0][0], (double)want);
			cr_assert_eq(bits_of(s->max[1][0]), bits_of(want));
			bp_scene_destroy(s);
		}
		free(text);
	}
}

// Finding (issue 15): 0x1p3 was rejected as "not a number" while the parser's comment
// said hexadecimal went to strtof. The format's values are decimal (docs/design.md "Scene and trace formats": written
// with %.9g), so hexadecimal floats are rejected, by name.
Test(scene, hexadecimal_floats_are_rejected_by_name)
{
	EXPECT_ERROR("# dims=2\n1 0 0 0x1p3 1\n", 2, "value 3 '0x1p3' is a hexadecimal float (values are decimal");
	EXPECT_ERROR("# dims=2\n1 -0X1.8P1 0 1 1\n", 2, "value 1 '-0X1.8P1' is a hexadecimal float");
	EXPECT_ERROR("# dims=2\n1 0 0 1 +0x10\n", 2, "value 4 '+0x10' is a hexadecimal float");
	EXPECT_ERROR("# dims=2\n1 0 0 1 0x\n", 2, "value '0x' is not a number");
	EXPECT_ERROR("# dims=2\n0x1 0 0 1 1\n", 2, "id '0x1' is not an integer");
}

// Corrupted files (bytes flipped, cut short) either parse or fail cleanly: a parse
// error naming the input, *out NULL, nothing left allocated. Run under ASan too.
Test(scene, corrupted_inputs_fail_cleanly)
{
	bp_scene *s = awkward_scene(3, 40, 2);
	cr_assert_eq(bp_scene_write_text(s, temp_file(), NULL), BP_OK);
	FILE *f = fopen(temp_file(), "rb");
	static char text[65536];
	size_t text_size = fread(text, 1, sizeof text, f);
	fclose(f);
	cr_assert_eq(bp_scene_write_binary(s, temp_file(), NULL), BP_OK);
	f = fopen(temp_file(), "rb");
	static char bin[65536];
	size_t bin_size = fread(bin, 1, sizeof bin, f);
	fclose(f);
	unlink(temp_file());
	bp_scene_destroy(s);
	static char buf[65536];
	test_rng rng = {3};
	int64_t before = bp_scene_allocated_bytes();
	int failures = 0;
	for (int round = 0; round < 4000; ++round) {
		const bool binary = round & 1;
		const char *src = binary ? bin : text;
		size_t size = binary ? bin_size : text_size;
		memcpy(buf, src, size);
		const unsigned flips = 1 + test_rng_below(&rng, 3);
		for (unsigned k = 0; k < flips; ++k) {
			size_t at = binary ? 8 + test_rng_below(&rng, (uint32_t)size - 8) : test_rng_below(&rng, (uint32_t)size);
			const char pool[] = "0123456789 -.e#\nxn\t";
			buf[at] = test_rng_below(&rng, 4) == 0 ? (char)test_rng_below(&rng, 256)
							       : pool[test_rng_below(&rng, sizeof pool - 1)];
		}
		if (test_rng_below(&rng, 4) == 0)
			size = test_rng_below(&rng, (uint32_t)size);
		bp_scene *out = NULL;
		bp_scene_error err = {0};
		bp_status st = bp_scene_parse(buf, size, "c", &out, &err);
		cr_assert(st == BP_OK || st == BP_ERR_PARSE, "status %d", st);
		if (st == BP_OK) {
			cr_assert_not_null(out);
			bp_scene_destroy(out);
		} else {
			cr_assert_null(out);
			cr_assert(strncmp(err.message, "c:", 2) == 0, "%s", err.message);
			++failures;
		}
		cr_assert_eq(bp_scene_allocated_bytes(), before);
	}
	cr_assert_gt(failures, 1000); // most corruptions are caught
}

// ---- writers and what they write to ---------------------------------------------------

static void make_tmp_dir(void) { test_tmp_dir_make("bp_scene_"); }

typedef bp_status (*scene_writer)(const bp_scene *scene, const char *path, bp_scene_error *err);
static const scene_writer writers[] = {bp_scene_write_text, bp_scene_write_binary};
static const char *const writer_names[] = {"text", "binary"};

/// Asserts that a writer said "cannot write 'PATH'" and the system's reason for `error`.
static void expect_write_message(const bp_scene_error *err, const char *path, int error, const char *what)
{
	char want[300];
	snprintf(want, sizeof want, "cannot write '%s'", path);
	cr_assert_eq(strncmp(err->message, want, strlen(want)), 0, "%s: '%s' does not start with '%s'", what,
		err->message, want);
	cr_assert_not_null(strstr(err->message, strerror(error)), "%s: '%s' lacks '%s'", what, err->message,
		strerror(error));
}

// A write that fails part-way (a full disk, made by a file size limit: EFBIG) leaves an
// existing file and a link to one as they were.
Test(scene, failed_write_leaves_existing_file_and_link, .init = make_tmp_dir, .fini = test_tmp_dir_remove)
{
	bp_scene *s = awkward_scene(3, 300, 1); // about 27 KB of text, 8 KB of binary
	const char *file = test_tmp_path("old.scene");
	const char *link = test_tmp_path("link.scene");
	cr_assert_eq(symlink("old.scene", link), 0);
	for (int w = 0; w < 2; ++w) {
		const char *paths[] = {file, link};
		for (int p = 0; p < 2; ++p) {
			test_write_text(file, "precious\n");
			bp_scene_error err = {0};
			test_file_size_limit(4096);
			bp_status status = writers[w](s, paths[p], &err);
			test_file_size_unlimit();
			cr_assert_eq(status, BP_ERR_IO, "%s writer to %s: status %d", writer_names[w], paths[p], status);
			expect_write_message(&err, paths[p], EFBIG, writer_names[w]);
			test_expect_text(file, "precious\n");
			test_expect_symlink_to(link, "old.scene");
			cr_assert_eq(test_dir_entry_count(test_tmp_dir), 2, "%s writer left a file behind", writer_names[w]);
		}
	}
	bp_scene_destroy(s);
}

Test(scene, write_through_a_link_replaces_its_target, .init = make_tmp_dir, .fini = test_tmp_dir_remove)
{
	bp_scene *s = awkward_scene(2, 50, 2);
	const char *target = test_tmp_path("target.scene");
	const char *link = test_tmp_path("link.scene");
	cr_assert_eq(symlink("target.scene", link), 0);
	for (int w = 0; w < 2; ++w) {
		test_write_text(target, "old\n");
		bp_scene_error err = {0};
		cr_assert_eq(writers[w](s, link, &err), BP_OK, "%s", err.message);
		test_expect_symlink_to(link, "target.scene");
		bp_scene *back = NULL;
		cr_assert_eq(bp_scene_read(target, &back, &err), BP_OK, "%s", err.message);
		cr_assert(same_scene(s, back), "%s writer", writer_names[w]);
		bp_scene_destroy(back);
		cr_assert_eq(test_dir_entry_count(test_tmp_dir), 2);
	}
	bp_scene_destroy(s);
}

// The finding: `bp gen -o /dev/full` as root removed /dev/full. A device node of our own (the
// same device, where this process may make one) or else a link to /dev/full stands in for
// it: the real /dev/full is never the path given, and must still be there afterwards.
Test(scene, failed_write_to_a_device_keeps_the_device, .init = make_tmp_dir, .fini = test_tmp_dir_remove)
{
	struct stat st;
	if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode))
		cr_skip_test("no /dev/full here");
	const char *node = test_tmp_path("full");
	bool own_node = mknod(node, S_IFCHR | 0666, st.st_rdev) == 0;
	if (!own_node)
		cr_assert_eq(symlink("/dev/full", node), 0);
	bp_scene *s = awkward_scene(3, 100, 1);
	for (int w = 0; w < 2; ++w) {
		bp_scene_error err = {0};
		cr_assert_eq(writers[w](s, node, &err), BP_ERR_IO, "%s writer", writer_names[w]);
		expect_write_message(&err, node, ENOSPC, writer_names[w]);
		if (own_node)
			test_expect_char_device(node);
		else
			test_expect_symlink_to(node, "/dev/full");
		test_expect_char_device("/dev/full");
		cr_assert_eq(test_dir_entry_count(test_tmp_dir), 1);
	}
	bp_scene_destroy(s);
}

Test(scene, write_to_a_fifo_in_place, .init = make_tmp_dir, .fini = test_tmp_dir_remove, .timeout = 30)
{
	bp_scene *s = awkward_scene(3, 3000, 2); // larger than a pipe holds, in both forms
	const char *fifo = test_tmp_path("fifo");
	for (int w = 0; w < 2; ++w) {
		test_fifo_reader reader;
		test_fifo_reader_start(&reader, fifo, 0);
		bp_scene_error err = {0};
		cr_assert_eq(writers[w](s, fifo, &err), BP_OK, "%s", err.message);
		test_fifo_reader_join(&reader);
		bp_scene *back = NULL;
		cr_assert_eq(bp_scene_parse(reader.data, reader.size, "fifo", &back, &err), BP_OK, "%s", err.message);
		cr_assert(same_scene(s, back), "%s writer", writer_names[w]);
		bp_scene_destroy(back);
		free(reader.data);
		test_expect_fifo(fifo);
		cr_assert_eq(unlink(fifo), 0);
	}
	// A reader that leaves early: the write fails with EPIPE, and the FIFO stays.
	for (int w = 0; w < 2; ++w) {
		test_fifo_reader reader;
		test_fifo_reader_start(&reader, fifo, 100);
		bp_scene_error err = {0};
		cr_assert_eq(writers[w](s, fifo, &err), BP_ERR_IO, "%s writer", writer_names[w]);
		expect_write_message(&err, fifo, EPIPE, writer_names[w]);
		test_fifo_reader_join(&reader);
		free(reader.data);
		test_expect_fifo(fifo);
		cr_assert_eq(unlink(fifo), 0);
	}
	bp_scene_destroy(s);
}

// The peak counts a growing realloc as both blocks (it may copy), and stays after a free.
Test(scene, peak_bytes_record_the_most_held_at_once)
{
	const int64_t before = bp_scene_allocated_bytes();
	bp_scene_reset_peak_bytes();
	cr_assert_eq(bp_scene_peak_bytes(), before);
	char *p = scenefile_malloc(1000);
	cr_assert_not_null(p);
	p = scenefile_realloc(p, 5000);
	cr_assert_not_null(p);
	cr_assert_eq(bp_scene_allocated_bytes(), before + 5000);
	cr_assert_eq(bp_scene_peak_bytes(), before + 6000);
	p = scenefile_realloc(p, 10);
	cr_assert_eq(bp_scene_allocated_bytes(), before + 10);
	scenefile_free(p);
	cr_assert_eq(bp_scene_allocated_bytes(), before);
	cr_assert_eq(bp_scene_peak_bytes(), before + 6000);
	bp_scene_reset_peak_bytes();
	cr_assert_eq(bp_scene_peak_bytes(), before);
}

// ---- reading streams ----------------------------------------------------------------

static void write_file(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(data, 1, size, f), size);
	cr_assert_eq(fclose(f), 0);
}

static char *test_read_whole(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	long length = ftell(f);
	cr_assert_eq(fseek(f, 0, SEEK_SET), 0);
	char *data = malloc((size_t)length + 1);
	cr_assert_not_null(data);
	cr_assert_eq(fread(data, 1, (size_t)length, f), (size_t)length);
	fclose(f);
	*size = (size_t)length;
	return data;
}

static int64_t scene_bytes(const bp_scene *s)
{
	return (int64_t)s->count * 4 + (int64_t)s->count * s->frame_count * s->dims * 2 * 4;
}

// Finding (issue 15): a 2 GB file of zero bytes was read whole, 4.2 GB and 7-15 s,
// before "binary data" (or out of memory, exit 3, instead of bad input).
Test(scene, a_2gb_file_of_zero_bytes_fails_on_its_first_buffer)
{
	const char *path = temp_file();
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)2 << 30), 0, "%s", strerror(errno)); // sparse: no disk, no time
	close(fd);
	const int64_t before = bp_scene_allocated_bytes();
	bp_scene_reset_peak_bytes();
	bp_scene *s = NULL;
	bp_scene_error err = {0};
	cr_assert_eq(bp_scene_read(path, &s, &err), BP_ERR_PARSE, "%s", err.message);
	cr_assert_null(s);
	char want[128];
	snprintf(want, sizeof want, "%s:1: binary data (byte 0x00), not a text scene", path);
	cr_assert_str_eq(err.message, want);
	// One read buffer, not the file.
	cr_assert_leq(bp_scene_peak_bytes() - before, (int64_t)SCENEFILE_LINE_BUFFER + 4096, "held %lld bytes",
		(long long)(bp_scene_peak_bytes() - before));
	cr_assert_eq(bp_scene_allocated_bytes(), before);
	unlink(path);
}

// Finding (issue 15): reading a text scene held the whole file next to the scene
// (twice the file, as its buffer grew), so a 366 MB scene failed under a 1 GB cap.
Test(scene, reading_text_holds_the_scene_and_one_buffer)
{
	const struct {
		uint32_t n, frames;
	} cases[] = {{200000, 1}, {20000, 8}};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
		bp_gen_def def = bp_gen_def_default();
		def.n = cases[c].n;
		def.frames = cases[c].frames;
		bp_scene *s = NULL;
		cr_assert_eq(bp_scene_generate(&def, &s), BP_OK);
		cr_assert_eq(bp_scene_write_text(s, temp_file(), NULL), BP_OK);
		struct stat st;
		cr_assert_eq(stat(temp_file(), &st), 0);
		const int64_t before = bp_scene_allocated_bytes();
		bp_scene_reset_peak_bytes();
		bp_scene *back = NULL;
		bp_scene_error err = {0};
		cr_assert_eq(bp_scene_read(temp_file(), &back, &err), BP_OK, "%s", err.message);
		const int64_t held = bp_scene_peak_bytes() - before, scene = scene_bytes(s);
		// The scene, a few percent the estimate of its rows reserved, the buffer.
		cr_assert_leq(held, scene + scene / 8 + (int64_t)SCENEFILE_LINE_BUFFER + 4096,
			"n=%u frames=%u: held %lld bytes for a scene of %lld from a file of %lld", def.n, def.frames,
			(long long)held, (long long)scene, (long long)st.st_size);
		cr_assert_gt(st.st_size, 2 * scene); // so the whole file would not fit the bound above
		cr_assert(same_scene(s, back));
		cr_assert_eq(bp_scene_allocated_bytes(), before + (int64_t)sizeof(bp_scene) + scene,
			"the scene keeps only its rows");
		bp_scene_destroy(back);
		bp_scene_destroy(s);
	}
	unlink(temp_file());
}

// A line longer than the read buffer: a comment is passed over without being held,
// a value is read whole, and a first line that is no header fails on its first byte.
Test(scene, lines_longer_than_the_buffer)
{
	const size_t long_size = 3 * (size_t)SCENEFILE_LINE_BUFFER;
	char *text = malloc(long_size + 64);
	cr_assert_not_null(text);
	const struct {
		const char *before, *after;
		char fill;
		bp_status status;
		int64_t most_held; ///< beyond the read buffer
		const char *message;
	} cases[] = {
		{"# dims=2\n# ", "\n1 0 0 1 1\n", 'c', BP_OK, 4096, NULL},
		{"# dims=2\n1 0 0 1.", " 1\n", '0', BP_OK, 2 * (int64_t)long_size, NULL},
		{"", "\n# dims=2\n", 'x', BP_ERR_PARSE, 4096, ":1: missing header"},
		{"# dims=2\n1 0 0 1 1", "\n", ' ', BP_OK, 2 * (int64_t)long_size, NULL},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
		size_t len = strlen(cases[c].before);
		memcpy(text, cases[c].before, len);
		memset(text + len, cases[c].fill, long_size);
		len += long_size;
		memcpy(text + len, cases[c].after, strlen(cases[c].after));
		len += strlen(cases[c].after);
		write_file(temp_file(), text, len);
		const int64_t before = bp_scene_allocated_bytes();
		bp_scene_reset_peak_bytes();
		bp_scene *s = NULL;
		bp_scene_error err = {0};
		cr_assert_eq(bp_scene_read(temp_file(), &s, &err), cases[c].status, "case %zu: %s", c, err.message);
		const int64_t held = bp_scene_peak_bytes() - before;
		cr_assert_leq(held, (int64_t)SCENEFILE_LINE_BUFFER + cases[c].most_held, "case %zu: held %lld", c,
			(long long)held);
		if (cases[c].status == BP_OK) {
			cr_assert_eq(s->count, 1, "case %zu", c);
			cr_assert_eq(s->ids[0], 1);
			cr_assert_eq(s->max[0][0], 1.0f, "case %zu", c);
			bp_scene_destroy(s);
		} else {
			cr_assert_not_null(strstr(err.message, cases[c].message), "case %zu: %s", c, err.message);
		}
		cr_assert_eq(bp_scene_allocated_bytes(), before);
	}
	free(text);
	unlink(temp_file());
}

typedef struct fifo_writer {
	const char *path;
	const void *data;
	size_t size;
} fifo_writer;

static void *write_fifo(void *arg)
{
	const fifo_writer *w = arg;
	FILE *f = fopen(w->path, "wb"); // waits for the reader
	if (f) {
		fwrite(w->data, 1, w->size, f);
		fclose(f);
	}
	return NULL;
}

// Reads `size` bytes through a FIFO (a pipe: no size, no rewind).
static bp_status read_through_fifo(const void *data, size_t size, bp_scene **out, bp_scene_error *err)
{
	char path[80];
	snprintf(path, sizeof path, "%s.fifo", temp_file());
	unlink(path);
	cr_assert_eq(mkfifo(path, 0600), 0, "%s", strerror(errno));
	fifo_writer w = {path, data, size};
	pthread_t writer;
	cr_assert_eq(pthread_create(&writer, NULL, write_fifo, &w), 0);
	bp_status status = bp_scene_read(path, out, err);
	pthread_join(writer, NULL);
	unlink(path);
	return status;
}

// Pipes have no size and cannot be read twice: both forms still read, and their
// errors still name what is wrong.
Test(scene, reads_text_and_binary_from_a_pipe, .timeout = 30)
{
	bp_scene *s = awkward_scene(3, 300, 3);
	for (int binary = 0; binary < 2; ++binary) {
		const bp_status written =
			binary ? bp_scene_write_binary(s, temp_file(), NULL) : bp_scene_write_text(s, temp_file(), NULL);
		cr_assert_eq(written, BP_OK);
		size_t size;
		char *data = test_read_whole(temp_file(), &size);
		bp_scene *back = NULL;
		bp_scene_error err = {0};
		cr_assert_eq(read_through_fifo(data, size, &back, &err), BP_OK, "%s", err.message);
		cr_assert(same_scene(s, back));
		bp_scene_destroy(back);
		if (binary) {
			cr_assert_eq(read_through_fifo(data, size - 1, &back, &err), BP_ERR_PARSE);
			cr_assert_not_null(strstr(err.message, "size mismatch"), "%s", err.message);
			char *longer = malloc(size + 1);
			memcpy(longer, data, size);
			longer[size] = 0;
			cr_assert_eq(read_through_fifo(longer, size + 1, &back, &err), BP_ERR_PARSE);
			cr_assert_not_null(strstr(err.message, "the data has more than"), "%s", err.message);
			free(longer);
			cr_assert_eq(read_through_fifo(data, 10, &back, &err), BP_ERR_PARSE);
			cr_assert_not_null(strstr(err.message, "truncated binary header (10 bytes"), "%s", err.message);
		}
		free(data);
	}
	// A repeated id: its lines need a second reading, which a pipe cannot give.
	const char dup[] = "# dims=2\n5 0 0 1 1\n7 0 0 1 1\n5 0 0 1 1\n";
	bp_scene *back = NULL;
	bp_scene_error err = {0};
	cr_assert_eq(read_through_fifo(dup, sizeof dup - 1, &back, &err), BP_ERR_PARSE);
	cr_assert_not_null(strstr(err.message, ":0: duplicate id 5 (entities 0 and 2 of frame 0)"), "%s", err.message);
	write_file(temp_file(), dup, sizeof dup - 1);
	cr_assert_eq(bp_scene_read(temp_file(), &back, &err), BP_ERR_PARSE);
	cr_assert_not_null(strstr(err.message, ":4: duplicate id 5 (first on line 2)"), "%s", err.message);
	bp_scene_destroy(s);
	unlink(temp_file());
}

// The text reader over tiny buffers, so lines, CRLF pairs and numbers fall across
// their refills, against the normal buffer: same status, same message, same scene.
static void expect_same_at_small_buffers(const char *text, size_t size, const char *what, int round)
{
	bp_scene *want = NULL;
	bp_scene_error want_err = {0};
	const bp_status want_status = bp_scene_parse(text, size, "v", &want, &want_err);
	const size_t buffers[] = {4, 5, 7, 16, 61};
	for (size_t b = 0; b < sizeof buffers / sizeof buffers[0]; ++b) {
		scenefile_source source;
		scenefile_source_memory(&source, text, size);
		bp_scene *got = NULL;
		bp_scene_error got_err = {0};
		const bp_status got_status = scenefile_read_text(&source, buffers[b], "v", &got, &got_err);
		cr_assert_eq(got_status, want_status, "%s %d, buffer %zu: '%s', normal buffer '%s'", what, round, buffers[b],
			got_err.message, want_err.message);
		if (want_status == BP_OK) {
			cr_assert(same_scene(want, got), "%s %d, buffer %zu", what, round, buffers[b]);
			bp_scene_destroy(got);
		} else {
			cr_assert_str_eq(got_err.message, want_err.message, "%s %d, buffer %zu", what, round, buffers[b]);
		}
	}
	bp_scene_destroy(want);
}

// Texts whose answer once depended on the buffer: a first line is no header by its
// first byte, however many blanks come first and whatever follows; blanks that fill
// a buffer still make a line, the last one included.
Test(scene, small_buffers_read_what_one_large_buffer_reads_at_the_edges)
{
	const char *texts[] = {
		"BPSCENE2\x03\x00\x00\x00\x06@",
		"                    N4444444444444444444444\x00\x00\01444 \n3 -1", // \014: a form feed
		"                                        # dims=2\n1 0 0 1 1\n",
		"\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t1 0 0 1 1\n",
		"# dims=2\n# frame 0\n1 0 0 1 1\n2 0 0 1 1\n# frame 1\n1 0 0 1 1\n                                      ",
		"# dims=2\n#                                                 frame 0\n1 0 0 1 1\n# frame 1\n2 0 0 1 1\n",
		"# dims=2\n# a comment longer than the small buffers, with a byte \x01 in it\n1 0 0 1 1\n",
		"# dims=2\r\n1 0 0 1 1                                                            \r\n2 0 0 1 x\r",
	};
	const size_t sizes[] = {14, 49, 0, 0, 0, 0, 0, 0};
	for (size_t t = 0; t < sizeof texts / sizeof texts[0]; ++t)
		expect_same_at_small_buffers(texts[t], sizes[t] ? sizes[t] : strlen(texts[t]), "text", (int)t);
}

// The same over many texts: a written scene with LF, CRLF and CR line ends, a
// byte-order mark, comments and runs of blanks, then corrupted copies.
Test(scene, small_buffers_read_what_one_large_buffer_reads)
{
	bp_scene *s = awkward_scene(2, 30, 2);
	cr_assert_eq(bp_scene_write_text(s, temp_file(), NULL), BP_OK);
	bp_scene_destroy(s);
	size_t lf_size;
	char *lf = test_read_whole(temp_file(), &lf_size);
	unlink(temp_file());
	char *text = malloc(64 * lf_size), *variant = malloc(64 * lf_size);
	test_rng rng = {11};
	for (int round = 0; round < 600; ++round) {
		// Line ends: 0 LF, 1 CRLF, 2 CR, 3 a mix; a mark, comment lines, blanks now and then.
		const uint32_t ends = test_rng_below(&rng, 4);
		size_t len = 0;
		if (test_rng_below(&rng, 3) == 0) {
			memcpy(text, "\xEF\xBB\xBF", 3);
			len = 3;
		}
		for (size_t i = 0; i < lf_size; ++i) {
			if (lf[i] != '\n') {
				text[len++] = lf[i];
				continue;
			}
			const uint32_t kind = ends == 3 ? test_rng_below(&rng, 3) : ends;
			if (kind != 0)
				text[len++] = '\r';
			if (kind != 2)
				text[len++] = '\n';
			if (test_rng_below(&rng, 40) == 0) {
				memcpy(text + len, "  # note\n", 9);
				len += 9;
			}
			for (uint32_t blanks = test_rng_below(&rng, 8) == 0 ? test_rng_below(&rng, 80) : 0; blanks > 0; --blanks)
				text[len++] = " \t"[blanks % 2];
		}
		for (uint32_t blanks = test_rng_below(&rng, 4) == 0 ? test_rng_below(&rng, 80) : 0; blanks > 0; --blanks)
			text[len++] = ' ';
		memcpy(variant, text, len);
		size_t size = len;
		if (round >= 100) { // corrupted copies: most fail, each the same way at every buffer size
			const unsigned flips = 1 + test_rng_below(&rng, 3);
			for (unsigned k = 0; k < flips; ++k) {
				const char pool[] = "0123456789 -.e#\n\r\txn";
				variant[test_rng_below(&rng, (uint32_t)size)] = test_rng_below(&rng, 4) == 0
					? (char)test_rng_below(&rng, 256)
					: pool[test_rng_below(&rng, sizeof pool - 1)];
			}
			if (test_rng_below(&rng, 4) == 0)
				size = test_rng_below(&rng, (uint32_t)size);
		} else {
			bp_scene *ok = parse_ok_sized(variant, size);
			bp_scene_destroy(ok);
		}
		expect_same_at_small_buffers(variant, size, "round", round);
	}
	free(text);
	free(variant);
	free(lf);
}
