// SPDX-License-Identifier: MIT
// `bp render` (docs/design.md "Command line"): PNG files checked by an independent decoder written here (chunk CRCs,
// stored and fixed-Huffman inflate, Adler-32, unfiltering), pixel colours at hand-worked places,
// the SVG's elements, 3D projections, and the exit codes.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_runner.h"
#include "oracle.h"
#include "png.h"
#include "render.h"
#include "tmpfiles.h"

static void make_tmp_dir(void) { test_tmp_dir_make("bp_render_"); }

TestSuite(cli_render, .init = make_tmp_dir, .fini = test_tmp_dir_remove, .timeout = 120);


typedef struct box2 {
	uint32_t id;
	float min[2], max[2];
} box2;

static void write_scene2(const char *path, const box2 *boxes, uint32_t n)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "# dims=2 n=%u\n", n);
	for (uint32_t i = 0; i < n; ++i)
		fprintf(f, "%u %.9g %.9g %.9g %.9g\n", boxes[i].id, boxes[i].min[0], boxes[i].min[1], boxes[i].max[0],
			boxes[i].max[1]);
	fclose(f);
}

// ---- an independent PNG decoder (8-bit RGB, not interlaced) ---------------------------

/// Bit by bit, straight from the definition (reflected polynomial 0xEDB88320),
/// unlike the table-driven writer.
static uint32_t slow_crc32(const uint8_t *data, size_t size)
{
	uint32_t crc = 0xFFFFFFFFu;
	for (size_t i = 0; i < size; ++i) {
		crc ^= data[i];
		for (int k = 0; k < 8; ++k)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

static uint32_t slow_adler32(const uint8_t *data, size_t size)
{
	uint32_t a = 1, b = 0;
	for (size_t i = 0; i < size; ++i) {
		a = (a + data[i]) % 65521;
		b = (b + a) % 65521;
	}
	return (b << 16) | a;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

typedef struct bit_reader {
	const uint8_t *data;
	size_t size, pos; ///< pos in bits
} bit_reader;

static uint32_t get_bits(bit_reader *r, int count)
{
	uint32_t v = 0;
	for (int i = 0; i < count; ++i) {
		cr_assert_lt(r->pos / 8, r->size, "deflate stream ends early");
		v |= (uint32_t)((r->data[r->pos / 8] >> (r->pos % 8)) & 1u) << i;
		++r->pos;
	}
	return v;
}

/// Fixed literal/length code (RFC 1951 §3.2.6), read one code bit at a time.
static uint32_t get_fixed_symbol(bit_reader *r)
{
	uint32_t code = 0;
	for (int length = 1; length <= 9; ++length) {
		code = code << 1 | get_bits(r, 1);
		if (length == 7 && code <= 23)
			return 256 + code;
		if (length == 8 && code >= 0x30 && code <= 0xBF)
			return code - 0x30;
		if (length == 8 && code >= 0xC0 && code <= 0xC7)
			return 280 + code - 0xC0;
		if (length == 9 && code >= 0x190)
			return 144 + code - 0x190;
	}
	cr_assert_fail("bad fixed Huffman code");
	return 0;
}

typedef struct byte_buffer {
	uint8_t *data;
	size_t size, capacity;
} byte_buffer;

static void push(byte_buffer *b, uint8_t byte)
{
	if (b->size == b->capacity) {
		b->capacity = b->capacity ? 2 * b->capacity : 4096;
		b->data = realloc(b->data, b->capacity);
		cr_assert_not_null(b->data);
	}
	b->data[b->size++] = byte;
}

/// Inflates stored and fixed-Huffman blocks; a dynamic block fails the test.
static byte_buffer inflate(const uint8_t *data, size_t size)
{
	static const uint16_t len_base[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59,
		67, 83, 99, 115, 131, 163, 195, 227, 258};
	static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4,
		5, 5, 5, 5, 0};
	static const uint16_t dist_base[30] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513,
		769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
	static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10,
		11, 11, 12, 12, 13, 13};
	byte_buffer out = {0};
	bit_reader r = {data, size, 0};
	for (bool last = false; !last;) {
		last = get_bits(&r, 1);
		uint32_t type = get_bits(&r, 2);
		if (type == 0) {
			r.pos = (r.pos + 7) / 8 * 8;
			uint32_t len = get_bits(&r, 16), nlen = get_bits(&r, 16);
			cr_assert_eq(len ^ 0xFFFFu, nlen, "stored block LEN/NLEN mismatch");
			for (uint32_t i = 0; i < len; ++i)
				push(&out, (uint8_t)get_bits(&r, 8));
			continue;
		}
		cr_assert_eq(type, 1, "block type %u is not stored or fixed Huffman", type);
		for (;;) {
			uint32_t symbol = get_fixed_symbol(&r);
			if (symbol < 256) {
				push(&out, (uint8_t)symbol);
				continue;
			}
			if (symbol == 256)
				break;
			cr_assert_leq(symbol, 285);
			uint32_t length = len_base[symbol - 257] + get_bits(&r, len_extra[symbol - 257]);
			uint32_t dcode = 0;
			for (int i = 0; i < 5; ++i)
				dcode = dcode << 1 | get_bits(&r, 1);
			cr_assert_lt(dcode, 30);
			uint32_t distance = dist_base[dcode] + get_bits(&r, dist_extra[dcode]);
			cr_assert_leq(distance, out.size, "match reaches before the stream");
			for (uint32_t i = 0; i < length; ++i)
				push(&out, out.data[out.size - distance]);
		}
	}
	cr_assert_leq((r.pos + 7) / 8 + 4, size, "no room for the Adler-32");
	return out;
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

typedef struct image {
	uint32_t width, height;
	uint8_t *rgb;
} image;

/// Decodes a PNG file, checking every chunk CRC and the zlib Adler-32.
static image decode_png(const char *path)
{
	size_t size;
	uint8_t *file = (uint8_t *)test_read_file(path, &size);
	static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
	cr_assert(size >= 8 && memcmp(file, signature, 8) == 0, "no PNG signature");
	image img = {0};
	byte_buffer idat = {0};
	bool seen_end = false;
	for (size_t at = 8; !seen_end;) {
		cr_assert_leq(at + 12, size, "truncated chunk");
		uint32_t length = be32(file + at);
		cr_assert_leq(at + 12 + length, size, "chunk runs past the file");
		const uint8_t *type = file + at + 4, *body = file + at + 8;
		cr_assert_eq(slow_crc32(type, length + 4), be32(body + length), "bad CRC in chunk %.4s", (const char *)type);
		if (memcmp(type, "IHDR", 4) == 0) {
			cr_assert_eq(length, 13);
			img.width = be32(body);
			img.height = be32(body + 4);
			cr_assert(body[8] == 8 && body[9] == 2 && body[10] == 0 && body[11] == 0 && body[12] == 0,
				"not 8-bit RGB, deflate, not interlaced");
		} else if (memcmp(type, "IDAT", 4) == 0) {
			for (uint32_t i = 0; i < length; ++i)
				push(&idat, body[i]);
		} else if (memcmp(type, "IEND", 4) == 0) {
			seen_end = true;
			cr_assert_eq(at + 12, size, "data after IEND");
		}
		at += 12 + length;
	}
	cr_assert(img.width > 0 && img.height > 0, "no IHDR");
	cr_assert_geq(idat.size, 6);
	cr_assert_eq(idat.data[0] & 0x0F, 8, "zlib method is not deflate");
	cr_assert_eq((idat.data[0] * 256u + idat.data[1]) % 31, 0, "zlib header check");
	cr_assert_eq(idat.data[1] & 0x20, 0, "preset dictionary");
	byte_buffer raw = inflate(idat.data + 2, idat.size - 2);
	cr_assert_eq(slow_adler32(raw.data, raw.size), be32(idat.data + idat.size - 4), "bad Adler-32");
	size_t stride = (size_t)img.width * 3;
	cr_assert_eq(raw.size, (stride + 1) * img.height, "inflated size");
	img.rgb = malloc(stride * img.height);
	cr_assert_not_null(img.rgb);
	for (uint32_t y = 0; y < img.height; ++y) {
		const uint8_t *in = raw.data + (stride + 1) * y;
		uint8_t *row = img.rgb + stride * y, *up = y ? row - stride : NULL;
		for (size_t i = 0; i < stride; ++i) {
			int a = i >= 3 ? row[i - 3] : 0, b = up ? up[i] : 0, c = i >= 3 && up ? up[i - 3] : 0;
			int predictor;
			switch (in[0]) {
			case 0: predictor = 0; break;
			case 1: predictor = a; break;
			case 2: predictor = b; break;
			case 3: predictor = (a + b) / 2; break;
			case 4: predictor = paeth(a, b, c); break;
			default: cr_assert_fail("bad filter type %u", in[0]); predictor = 0;
			}
			row[i] = (uint8_t)(in[1 + i] + predictor);
		}
	}
	free(raw.data);
	free(idat.data);
	free(file);
	return img;
}

static bool pixel_is(const image *img, long x, long y, raster_rgb c)
{
	cr_assert(x >= 0 && y >= 0 && (uint32_t)x < img->width && (uint32_t)y < img->height, "(%ld, %ld) outside", x, y);
	const uint8_t *p = img->rgb + ((size_t)y * img->width + (size_t)x) * 3;
	return p[0] == c.r && p[1] == c.g && p[2] == c.b;
}

static void expect_pixel(const image *img, long x, long y, raster_rgb c, const char *what)
{
	const uint8_t *p = img->rgb + ((size_t)y * img->width + (size_t)x) * 3;
	cr_assert(pixel_is(img, x, y, c), "%s: pixel (%ld, %ld) is %u,%u,%u, want %u,%u,%u", what, x, y, p[0], p[1], p[2],
		c.r, c.g, c.b);
}

// ---- the hand-made scene ----------------------------------------------------------------

/// A (id 1) and B (id 2) overlap on [20, 30]^2; C (id 3) touches nothing.
/// Bounding box [10, 90]^2, so with --size 512 the margin is 512/32 = 16 px
/// and the scale (512 - 2 * 16) / 80 = 6 px per unit: world (x, y) lands on
/// pixel (16 + 6 (x - 10), 512 - 16 - 6 (y - 10)), +y up.
static const box2 scene_abc[3] = {
	{1, {10, 10}, {30, 30}},
	{2, {20, 20}, {40, 40}},
	{3, {70, 70}, {90, 90}},
};

static long to_px(double x)
{
	return (long)floor(16 + 6 * (x - 10));
}

static long to_py(double y)
{
	return (long)floor(512 - 16 - 6 * (y - 10));
}

Test(cli_render, png_highlights_the_overlapping_pair)
{
	const char *scene = test_tmp_path("abc.txt"), *png = test_tmp_path("abc.png");
	write_scene2(scene, scene_abc, 3);
	cli_result r = BP("render", scene, "-o", png, "--algo", "brute", "--size", "512");
	expect_code(&r, 0, "render abc");
	char want[512];
	snprintf(want, sizeof want, "rendered=%s entities=3 pairs=1 algo=brute cell=0\n", png);
	cr_assert_str_eq(r.out, want);
	result_free(&r);

	image img = decode_png(png);
	cr_assert_eq(img.width, 512);
	cr_assert_eq(img.height, 512);
	expect_pixel(&img, 0, 0, RENDER_BACKGROUND, "top-left corner");
	expect_pixel(&img, 511, 511, RENDER_BACKGROUND, "bottom-right corner");
	expect_pixel(&img, to_px(15), to_py(15), RENDER_OVERLAP_FILL, "A's own part");
	expect_pixel(&img, to_px(35), to_py(35), RENDER_OVERLAP_FILL, "B's own part");
	expect_pixel(&img, to_px(25), to_py(25), RENDER_OVERLAP_FILL, "A and B's common part");
	expect_pixel(&img, to_px(10), to_py(15), RENDER_OVERLAP_EDGE, "A's left edge");
	expect_pixel(&img, to_px(80), to_py(80), RENDER_BACKGROUND, "inside lone C");
	expect_pixel(&img, to_px(70), to_py(80), RENDER_ENTITY, "C's left edge");
	expect_pixel(&img, to_px(80), to_py(90), RENDER_ENTITY, "C's top edge");
	expect_pixel(&img, to_px(55), to_py(55), RENDER_BACKGROUND, "between the boxes");
	free(img.rgb);
}

/// Parses "cell=<g>" from the summary line.
static double summary_cell(const char *out)
{
	const char *c = strstr(out, " cell=");
	cr_assert_not_null(c, "no cell= in '%s'", out);
	return strtod(c + 6, NULL);
}

Test(cli_render, png_draws_the_grid_cells)
{
	const char *scene = test_tmp_path("abc.txt"), *png = test_tmp_path("grid.png");
	write_scene2(scene, scene_abc, 3);
	cli_result r = BP("render", scene, "-o", png, "--algo", "grid", "--size", "512");
	expect_code(&r, 0, "render grid");
	cr_assert_not_null(strstr(r.out, " algo=grid "), "%s", r.out);
	double cell = summary_cell(r.out);
	cr_assert_gt(cell, 0);
	result_free(&r);

	// The grid anchors its cells at the scene's lower corner (10, 10). The
	// lines cross the empty band 40 < y < 70 and 40 < x < 70 everywhere.
	image img = decode_png(png);
	int lines = 0;
	for (int j = 0; 10 + j * cell <= 90; ++j, ++lines) {
		expect_pixel(&img, to_px(10 + j * cell), to_py(55), RENDER_GRID, "vertical cell line");
		expect_pixel(&img, to_px(55), to_py(10 + j * cell), RENDER_GRID, "horizontal cell line");
	}
	cr_assert_gt(lines, 1);
	expect_pixel(&img, to_px(15), to_py(15), RENDER_OVERLAP_FILL, "A's own part over the grid");

	// --no-cells: the same picture without the lines.
	r = BP("render", scene, "-o", png, "--algo", "grid", "--size", "512", "--no-cells");
	expect_code(&r, 0, "render --no-cells");
	result_free(&r);
	free(img.rgb);
	img = decode_png(png);
	for (int j = 0; 10 + j * cell <= 90; ++j) {
		// Skip lines that fall on a box edge (x = 10, 30, 40, 70, 90 are box edges, y = 55 is not).
		long x = to_px(10 + j * cell);
		bool on_edge = x == to_px(10) || x == to_px(30) || x == to_px(40) || x == to_px(70) || x == to_px(90);
		if (!on_edge)
			expect_pixel(&img, x, to_py(55), RENDER_BACKGROUND, "no cell line");
	}
	free(img.rgb);
}

static size_t count_of(const char *text, const char *needle)
{
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		++n;
	return n;
}

Test(cli_render, svg_has_a_rect_per_entity_and_the_cell_lines)
{
	const char *scene = test_tmp_path("abc.txt"), *svg = test_tmp_path("abc.svg");
	write_scene2(scene, scene_abc, 3);
	cli_result r = BP("render", scene, "-o", svg, "--algo", "grid");
	expect_code(&r, 0, "render svg");
	double cell = summary_cell(r.out);
	result_free(&r);
	// Cell lines at 10 + j * cell for 10 + j * cell <= 90, on each axis.
	size_t per_axis = 0;
	while (10 + per_axis * cell <= 90)
		++per_axis;

	size_t size;
	char *text = test_read_file(svg, &size);
	cr_assert_eq(strncmp(text, "<svg", 4), 0, "does not start with <svg");
	cr_assert(size > 7 && strcmp(text + size - 7, "</svg>\n") == 0, "does not end with </svg>");
	cr_assert_eq(count_of(text, "<rect "), 3, "one rect per entity");
	cr_assert_eq(count_of(text, "<rect class=\"o\""), 2, "A and B highlighted");
	cr_assert_eq(count_of(text, "<rect class=\"e\""), 1, "C plain");
	cr_assert_eq(count_of(text, "<line "), 2 * per_axis, "cell lines");
	cr_assert_eq(count_of(text, "<svg"), 1);
	cr_assert_eq(count_of(text, "</svg>"), 1);
	// Every element that opens is closed: self-closing or a matching end tag.
	cr_assert_eq(count_of(text, "<g>"), count_of(text, "</g>"));
	cr_assert_eq(count_of(text, "<text"), count_of(text, "</text>"));
	cr_assert_eq(count_of(text, "<"), 2 * count_of(text, "</") + count_of(text, "/>"), "unbalanced tags");
	free(text);
}

// ---- a random scene against the oracle ----------------------------------------------

/// Every entity in a pair (by the oracle) shows a highlight colour at its
/// centre: highlights are drawn last, and only highlights can cover them.
Test(cli_render, random_scene_highlights_match_the_oracle)
{
	enum { N = 3000 };
	oracle_box *boxes = calloc(N, sizeof *boxes);
	box2 *scene_boxes = calloc(N, sizeof *scene_boxes);
	cr_assert(boxes && scene_boxes);
	test_random_boxes(boxes, N, 2, 1000, 12, false, 7);
	for (uint32_t i = 0; i < N; ++i) {
		boxes[i].category = 1;
		boxes[i].mask = UINT64_MAX;
		scene_boxes[i] = (box2){i, {boxes[i].min[0], boxes[i].min[1]}, {boxes[i].max[0], boxes[i].max[1]}};
	}
	const char *scene = test_tmp_path("random.txt"), *png = test_tmp_path("random.png");
	write_scene2(scene, scene_boxes, N);
	oracle_pairs want = oracle_find_pairs(boxes, N, 2);
	cr_assert_gt(want.count, 10, "the scene should have pairs");
	bool *in_pair = calloc(N, sizeof *in_pair);
	for (size_t i = 0; i < want.count; ++i)
		in_pair[want.data[i].lo] = in_pair[want.data[i].hi] = true;

	const char *algos[] = {"auto", "brute", "sap", "grid", "hash"};
	for (size_t a = 0; a < sizeof algos / sizeof algos[0]; ++a) {
		cli_result r = BP("render", scene, "-o", png, "--algo", algos[a], "--threads", "2");
		expect_code(&r, 0, algos[a]);
		char pairs[64];
		snprintf(pairs, sizeof pairs, " pairs=%zu ", want.count);
		cr_assert_not_null(strstr(r.out, pairs), "%s: %s, want%s", algos[a], r.out, pairs);
		result_free(&r);
		image img = decode_png(png);
		// Bounding box from the boxes; the view fits it as the help text says.
		double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
		for (uint32_t i = 0; i < N; ++i)
			for (int k = 0; k < 2; ++k) {
				lo[k] = fmin(lo[k], boxes[i].min[k]);
				hi[k] = fmax(hi[k], boxes[i].max[k]);
			}
		double margin = 1024 / 32, scale = (1024 - 2 * margin) / fmax(hi[0] - lo[0], hi[1] - lo[1]);
		size_t lone_centres_plain = 0, lone = 0;
		for (uint32_t i = 0; i < N; ++i) {
			double cx = (boxes[i].min[0] + boxes[i].max[0]) / 2, cy = (boxes[i].min[1] + boxes[i].max[1]) / 2;
			long x = (long)floor(margin + (cx - lo[0]) * scale);
			long y = (long)floor(img.height - margin - (cy - lo[1]) * scale);
			bool highlighted = pixel_is(&img, x, y, RENDER_OVERLAP_FILL) || pixel_is(&img, x, y, RENDER_OVERLAP_EDGE);
			if (in_pair[i])
				cr_assert(highlighted, "%s: entity %u is in a pair but its centre is not highlighted", algos[a], i);
			else if (++lone, !highlighted)
				++lone_centres_plain;
		}
		// A lone box may lie under a highlighted neighbour's pixels, but most do not.
		cr_assert_gt(lone_centres_plain, lone / 2, "%s: %zu of %zu lone entities plain", algos[a],
			lone_centres_plain, lone);
		free(img.rgb);
	}
	free(in_pair);
	oracle_pairs_free(&want);
	free(boxes);
	free(scene_boxes);
}

// ---- the writer on its own: both deflate forms round-trip ------------------------------

Test(cli_render, png_writer_round_trips_stored_and_rle)
{
	// Random rectangles on a background, plus a noisy band: long runs and none.
	const uint32_t w = 300, h = 170;
	uint8_t *rgb = malloc((size_t)w * h * 3);
	cr_assert_not_null(rgb);
	test_rng rng = {42};
	memset(rgb, 200, (size_t)w * h * 3);
	for (int k = 0; k < 40; ++k) {
		uint32_t x0 = test_rng_below(&rng, w), y0 = test_rng_below(&rng, h);
		uint32_t x1 = x0 + test_rng_below(&rng, w - x0), y1 = y0 + test_rng_below(&rng, h - y0);
		uint8_t c[3] = {(uint8_t)test_rng_next(&rng), (uint8_t)test_rng_next(&rng), (uint8_t)test_rng_next(&rng)};
		for (uint32_t y = y0; y <= y1; ++y)
			for (uint32_t x = x0; x <= x1; ++x)
				memcpy(rgb + ((size_t)y * w + x) * 3, c, 3);
	}
	for (uint32_t y = 100; y < 120; ++y)
		for (size_t i = 0; i < (size_t)w * 3; ++i)
			rgb[(size_t)y * w * 3 + i] = (uint8_t)test_rng_next(&rng);
	const png_deflate forms[2] = {PNG_DEFLATE_STORED, PNG_DEFLATE_RLE};
	for (int f = 0; f < 2; ++f) {
		const char *path = test_tmp_path(f ? "rle.png" : "stored.png");
		FILE *file = fopen(path, "wb");
		cr_assert_not_null(file);
		cr_assert(png_write_rgb(file, rgb, w, h, forms[f]));
		cr_assert_eq(fclose(file), 0);
		image img = decode_png(path);
		cr_assert_eq(img.width, w);
		cr_assert_eq(img.height, h);
		cr_assert_eq(memcmp(img.rgb, rgb, (size_t)w * h * 3), 0, "form %d: pixels differ", f);
		free(img.rgb);
	}
	free(rgb);
}

// ---- 3D, frames, errors -----------------------------------------------------------------

Test(cli_render, projects_a_3d_scene)
{
	const char *scene = test_tmp_path("u3.txt");
	cli_result r = BP("gen", "--dist", "uniform", "--n", "2000", "--dims", "3", "--frames", "2", "-o", scene);
	expect_code(&r, 0, "gen 3d");
	result_free(&r);
	const char *axes[] = {"xy", "xz", "yz"};
	for (int a = 0; a < 3; ++a) {
		const char *png = test_tmp_path(a == 0 ? "xy.png" : a == 1 ? "xz.png" : "yz.png");
		r = BP("render", scene, "-o", png, "--axes", axes[a], "--frame", "1", "--size", "300");
		expect_code(&r, 0, axes[a]);
		cr_assert_not_null(strstr(r.out, " entities=2000 "), "%s", r.out);
		result_free(&r);
		image img = decode_png(png);
		cr_assert_eq(img.width > img.height ? img.width : img.height, 300);
		expect_pixel(&img, 0, 0, RENDER_BACKGROUND, axes[a]);
		free(img.rgb);
	}
	const char *svg = test_tmp_path("xz.svg");
	r = BP("render", scene, "-o", svg, "--axes", "xz");
	expect_code(&r, 0, "svg xz");
	result_free(&r);
	size_t size;
	char *text = test_read_file(svg, &size);
	cr_assert_eq(count_of(text, "<rect "), 2000);
	free(text);
}

static void expect_error(cli_result r, int code, const char *what, const char *needle)
{
	expect_code(&r, code, what);
	cr_assert_not_null(strstr(r.err, needle), "%s: stderr lacks '%s': %s", what, needle, r.err);
	cr_assert_str_empty(r.out, "%s: nothing on stdout", what);
	result_free(&r);
}

Test(cli_render, exit_codes)
{
	const char *scene = test_tmp_path("abc.txt"), *png = test_tmp_path("x.png");
	write_scene2(scene, scene_abc, 3);
	expect_error(BP("render", scene), 1, "no -o", "-o");
	expect_error(BP("render", "-o", png), 1, "no scene", "missing scene FILE");
	expect_error(BP("render", scene, "-o", test_tmp_path("x.jpg")), 1, "bad extension", ".png or .svg");
	expect_error(BP("render", scene, "-o", png, "--size", "10"), 1, "size too small", "--size");
	expect_error(BP("render", scene, "-o", png, "--size", "100000"), 1, "size too large", "--size");
	expect_error(BP("render", scene, "-o", png, "--axes", "xw"), 1, "bad axes", "--axes");
	expect_error(BP("render", scene, "-o", png, "--axes", "xz"), 1, "z of a 2D scene", "no z axis");
	expect_error(BP("render", scene, "-o", png, "--algo", "nope"), 1, "bad algo", "'nope'");
	expect_error(BP("render", scene, "-o", png, "--frame", "1"), 1, "frame past the end", "--frame");
	expect_error(BP("render", scene, "-o", png, "--bogus"), 1, "unknown option", "--bogus");
	expect_error(BP("render", test_tmp_path("missing.txt"), "-o", png), 2, "missing file", "missing.txt");
	const char *bad = test_tmp_path("bad.txt");
	FILE *f = fopen(bad, "w");
	cr_assert_not_null(f);
	fputs("# dims=2 n=2\n1 0 0 1 1\n2 0 0 oops 1\n", f);
	fclose(f);
	expect_error(BP("render", bad, "-o", png), 2, "malformed file", "bad.txt:3");
	expect_error(BP("render", scene, "-o", "/nonexistent-dir/x.png"), 3, "unwritable", "/nonexistent-dir/x.png");
	cli_result r = BP("help", "render");
	expect_code(&r, 0, "help render");
	cr_assert_not_null(strstr(r.out, "usage: bp render"));
	result_free(&r);
}
