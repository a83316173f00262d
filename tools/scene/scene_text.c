// SPDX-License-Identifier: MIT
// Scene text format (docs/design.md "Scene and trace formats"): a hand-written tokenizer over lines streamed from the input
// (scene_lines.c) straight into the scene's arrays, and the %.9g writer whose output reads
// back bit-exact.
#include "scene_text.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output_file.h"
#include "scene_format.h"
#include "scene_lines.h"

// Warning: values go through strtof and "%.9g", which follow LC_NUMERIC. A host
// that sets a locale with a decimal comma must keep LC_NUMERIC at "C".

static inline bool is_blank(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r' && c != '\n');
}

static const char *skip_blank(const char *p, const char *eol)
{
	while (p < eol && is_blank((unsigned char)*p))
		++p;
	return p;
}

static const char *token_end(const char *p, const char *eol)
{
	while (p < eol && !is_blank((unsigned char)*p))
		++p;
	return p;
}

static bool has_high_byte(const char *p, const char *e)
{
	for (; p < e; ++p)
		if ((unsigned char)*p >= 0x80)
			return true;
	return false;
}

static unsigned count_tokens(const char *p, const char *eol)
{
	unsigned n = 0;
	for (p = skip_blank(p, eol); p < eol; p = skip_blank(token_end(p, eol), eol))
		++n;
	return n;
}

// Plain decimals ([+-]digits[.digits][e[+-]digits]) with at most 19 significant
// digits and a power of ten within 10^+-22 convert exactly the way strtof does,
// from one correctly rounded double operation (Clinger's fast path: mantissa and
// power are exact doubles). Rounding that double to float could round twice only
// when the double sits exactly on a float midpoint, so that case, subnormal and
// huge results, and the other spellings strtof knows (inf, nan, long mantissas)
// go to strtof. Hexadecimal floats stop this path at the 'x' and are rejected:
// the format's values are decimal, as %.9g writes them. Measured (CPU time, 146 MB
// file of 2M uniform 3D entities): 97 MB/s with strtof for every value, 290 MB/s
// with this path.
static const double pow10_exact[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
	1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static inline bool fast_float(const char *p, float *out, const char **stop)
{
	bool negative = false;
	if (*p == '-' || *p == '+')
		negative = *p++ == '-';
	uint64_t m = 0;
	int digits = 0;
	int64_t exp10 = 0; // one step per zero after the point: as long as the line
	bool seen = false;
	while (*p == '0') { // leading zeros are not significant
		++p;
		seen = true;
	}
	for (; (unsigned)(*p - '0') < 10; ++p, seen = true)
		if (digits < 19) {
			m = m * 10 + (uint64_t)(*p - '0');
			++digits;
		} else {
			return false;
		}
	if (*p == '.') {
		++p;
		if (m == 0)
			for (; *p == '0'; ++p, seen = true)
				--exp10;
		for (; (unsigned)(*p - '0') < 10; ++p, seen = true) {
			if (digits >= 19)
				return false;
			m = m * 10 + (uint64_t)(*p - '0');
			++digits;
			--exp10;
		}
	}
	if (!seen)
		return false;
	if (*p == 'e' || *p == 'E') {
		++p;
		bool eneg = false;
		if (*p == '-' || *p == '+')
			eneg = *p++ == '-';
		if ((unsigned)(*p - '0') >= 10)
			return false;
		// Saturates above any zeros a line can hold, so the sum with exp10 keeps
		// the sign it should have and stays beyond 10^+-22 when it should (a cap
		// of 10^4 read 0.(9999 zeros)1e100005 = 10^90005 as 1).
		int64_t e = 0;
		for (; (unsigned)(*p - '0') < 10; ++p)
			if (e < 100000000000000000)
				e = e * 10 + (*p - '0');
		exp10 += eneg ? -e : e;
	}
	if (m == 0) {
		*out = negative ? -0.0f : 0.0f;
		*stop = p;
		return true;
	}
	if (m > (1ull << 53) || exp10 < -22 || exp10 > 22)
		return false;
	double d = exp10 < 0 ? (double)m / pow10_exact[-exp10] : (double)m * pow10_exact[exp10];
	// Normal float range only, with headroom below FLT_MAX for the rounding.
	if (d < 1.1754943508222875e-38 || d > 1.7e38)
		return false;
	uint64_t bits;
	memcpy(&bits, &d, sizeof bits);
	if ((bits & ((1ull << 29) - 1)) == (1ull << 28))
		return false; // exactly halfway between two floats: let strtof decide
	*out = (float)(negative ? -d : d);
	*stop = p;
	return true;
}

typedef struct text_parser {
	scenefile_lines lines;
	const char *name;
	bp_scene_error *err;
	bp_scene *scene;
	size_t id_capacity;  ///< ids the scene's id array holds
	size_t row_capacity; ///< rows each of its bound arrays holds
	int dims;
	uint64_t header_line;
	bool has_n;
	uint32_t n;
	uint32_t frames;     ///< frames started; rows before any marker start frame 0
	uint64_t rows;       ///< rows stored, all frames
	uint64_t frame_rows; ///< rows in the current frame
	uint32_t count;      ///< entities per frame, fixed when frame 0 ends
} text_parser;

#define TOKEN_SHOWN 40

static bp_status fail_token(text_parser *tp, uint64_t line, const char *what, const char *tok, const char *tok_end)
{
	if (has_high_byte(tok, tok_end))
		return scenefile_fail(tp->err, tp->name, line, "binary data in %s", what);
	int len = (int)SCENE_MIN(tok_end - tok, TOKEN_SHOWN);
	return scenefile_fail(tp->err, tp->name, line, "%s '%.*s%s' is not %s", what, len, tok,
		tok_end - tok > TOKEN_SHOWN ? "..." : "",
		strcmp(what, "id") == 0 || strcmp(what, "n") == 0 ? "an integer" : "a number");
}

// [+-]0x...: C's hexadecimal floats, which strtof would take but the format does not.
static bool is_hexadecimal(const char *tok, const char *tok_end)
{
	if (tok < tok_end && (*tok == '+' || *tok == '-'))
		++tok;
	return tok_end - tok > 2 && tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X');
}

// Unsigned decimal integer filling the whole token. 0 ok, 1 not an integer,
// 2 negative, 3 too large for uint32.
static int parse_u32(const char *tok, const char *tok_end, uint32_t *out)
{
	const char *p = tok;
	bool negative = false;
	if (p < tok_end && *p == '-') {
		negative = true;
		++p;
	}
	if (p == tok_end)
		return 1;
	uint64_t v = 0;
	bool overflow = false;
	for (; p < tok_end; ++p) {
		unsigned d = (unsigned)(unsigned char)*p - '0';
		if (d > 9)
			return 1;
		v = v * 10 + d;
		if (v > UINT32_MAX) {
			overflow = true;
			v = (uint64_t)UINT32_MAX + 1; // keep it bounded while the digits run on
		}
	}
	if (negative)
		return 2;
	if (overflow)
		return 3;
	*out = (uint32_t)v;
	return 0;
}

// A key the reader knows, given twice: which one counts would be a guess
// ('# dims=3 n=1 dims=2' was read as 2D).
static bp_status fail_repeated_key(text_parser *tp, uint64_t line, const char *first, const char *again,
	const char *eol)
{
	const char *first_end = token_end(first, eol), *again_end = token_end(again, eol);
	const int key = (int)((const char *)memchr(first, '=', (size_t)(first_end - first)) - first);
	return scenefile_fail(tp->err, tp->name, line, "header gives %.*s twice ('%.*s', then '%.*s')", key, first,
		(int)SCENE_MIN(first_end - first, TOKEN_SHOWN), first, (int)SCENE_MIN(again_end - again, TOKEN_SHOWN), again);
}

static bp_status parse_header(text_parser *tp, const char *q, const char *eol, uint64_t line)
{
	tp->header_line = line;
	if (*q != '#')
		return scenefile_fail(tp->err, tp->name, line, "missing header (the first line must be '# dims=2|3 ...')");
	const char *dims_word = NULL, *n_word = NULL;
	for (const char *w = skip_blank(q + 1, eol); w < eol;) {
		const char *we = token_end(w, eol);
		const char *eq = memchr(w, '=', (size_t)(we - w));
		if (!eq || eq == w) {
			if (has_high_byte(w, we))
				return scenefile_fail(tp->err, tp->name, line, "binary data in the header");
			int len = (int)SCENE_MIN(we - w, TOKEN_SHOWN);
			return scenefile_fail(tp->err, tp->name, line, "header word '%.*s' is not key=value", len, w);
		}
		const char *v = eq + 1;
		size_t key_len = (size_t)(eq - w);
		if (key_len == 4 && memcmp(w, "dims", 4) == 0) {
			if (dims_word)
				return fail_repeated_key(tp, line, dims_word, w, eol);
			dims_word = w;
			if (we - v != 1 || (*v != '2' && *v != '3')) {
				int len = (int)SCENE_MIN(we - v, TOKEN_SHOWN);
				return scenefile_fail(tp->err, tp->name, line, "dims must be 2 or 3 (got '%.*s')", len, v);
			}
			tp->dims = *v - '0';
		} else if (key_len == 1 && *w == 'n') {
			if (n_word)
				return fail_repeated_key(tp, line, n_word, w, eol);
			n_word = w;
			int bad = parse_u32(v, we, &tp->n);
			if (bad) {
				int len = (int)SCENE_MIN(we - v, TOKEN_SHOWN);
				return scenefile_fail(tp->err, tp->name, line, "n must be an integer in [0, 2^32) (got '%.*s')",
					len, v);
			}
			tp->has_n = true;
		}
		// Other keys are ignored, so headers can grow without breaking readers.
		w = skip_blank(we, eol);
	}
	if (!dims_word)
		return scenefile_fail(tp->err, tp->name, line, "header has no dims=2|3");
	return BP_OK;
}

// Where frame 0's rows a < b are, found by reading the input again from the top:
// the error path of a repeated id only, where keeping a line per row all along
// would cost more than the ids. False when the input cannot be read again (a pipe).
static bool lines_of_rows(text_parser *tp, uint64_t a, uint64_t b, uint64_t *line_a, uint64_t *line_b)
{
	scenefile_lines again;
	if (!scenefile_source_rewind(tp->lines.source) ||
		scenefile_lines_open(&again, tp->lines.source, SCENEFILE_LINE_BUFFER, tp->name, NULL) != BP_OK)
		return false;
	uint64_t row = 0;
	bool found = false;
	for (;;) {
		const char *s, *e, *binary;
		bool complete;
		if (scenefile_lines_next(&again, &s, &e, &complete, &binary) != BP_OK || !s || binary)
			break;
		if (!complete && skip_blank(s, e) == e && scenefile_lines_finish(&again, &s, &e) != BP_OK)
			break;
		const char *q = skip_blank(s, e);
		const bool is_row = again.line > tp->header_line && q < e && *q != '#';
		if (again.partial && scenefile_lines_skip(&again) != BP_OK)
			break;
		if (!is_row)
			continue;
		if (row == a)
			*line_a = again.line;
		if (row++ == b) {
			*line_b = again.line;
			found = true;
			break;
		}
	}
	scenefile_lines_close(&again);
	return found;
}

// Closes the current frame at `line` (a marker, or the last line at end of file).
static bp_status end_frame(text_parser *tp, uint64_t line)
{
	if (tp->frames == 0) {
		tp->frames = 1; // a file with no rows and no marker is one empty frame
		tp->count = 0;
		return BP_OK;
	}
	if (tp->frames == 1) {
		tp->count = (uint32_t)tp->frame_rows;
		bool found;
		uint32_t first, second;
		bp_status status = scenefile_find_duplicate(tp->scene->ids, tp->count, &found, &first, &second);
		if (status != BP_OK)
			return scenefile_fail_status(status, tp->err, tp->name, 0, "out of memory");
		if (found) {
			const uint32_t id = tp->scene->ids[second];
			uint64_t first_line = 0, second_line = 0;
			if (!lines_of_rows(tp, first, second, &first_line, &second_line))
				return scenefile_fail(tp->err, tp->name, 0, "duplicate id %u (entities %u and %u of frame 0)", id,
					first, second);
			return scenefile_fail(tp->err, tp->name, second_line, "duplicate id %u (first on line %llu)", id,
				(unsigned long long)first_line);
		}
		// Only frame 0 has ids: give back what the estimate of the rows reserved.
		if (scenefile_resize(tp->scene, tp->count, tp->row_capacity) == BP_OK)
			tp->id_capacity = tp->count;
		return BP_OK;
	}
	if (tp->frame_rows != tp->count)
		return scenefile_fail(tp->err, tp->name, line, "frame %u has %llu entities but frame 0 has %u",
			tp->frames - 1, (unsigned long long)tp->frame_rows, tp->count);
	return BP_OK;
}

static bp_status parse_marker(text_parser *tp, const char *q, const char *eol, uint64_t line)
{
	const char *r = skip_blank(q + 1, eol);
	const bool is_marker = eol - r >= 5 && memcmp(r, "frame", 5) == 0 && (r + 5 == eol || is_blank((unsigned char)r[5]));
	if (!is_marker)
		return BP_OK; // a comment
	const char *k = skip_blank(r + 5, eol);
	const char *ke = token_end(k, eol);
	uint32_t index;
	if (k == ke || parse_u32(k, ke, &index) != 0 || skip_blank(ke, eol) != eol)
		return scenefile_fail(tp->err, tp->name, line, "bad frame marker (expected '# frame K')");
	uint32_t expected = tp->frames;
	if (index != expected)
		return scenefile_fail(tp->err, tp->name, line, "frame %u out of order (expected frame %u)", index, expected);
	if (tp->frames > 0) {
		bp_status status = end_frame(tp, line);
		if (status != BP_OK)
			return status;
	}
	if (tp->frames == UINT32_MAX)
		return scenefile_fail(tp->err, tp->name, line, "too many frames");
	++tp->frames;
	tp->frame_rows = 0;
	return BP_OK;
}

// Rows the input can still hold: each has 1 + 2 * dims words of at least one
// byte, each word followed by a blank or a line end. No bound for a pipe.
static uint64_t rows_left_at_most(const text_parser *tp)
{
	if (!tp->lines.source->size_known)
		return UINT64_MAX;
	return scenefile_lines_bytes_left(&tp->lines) / (2 + 4 * (uint64_t)tp->dims) + 1;
}

// A capacity half as large again, within what the input can hold (at least one more).
static uint64_t grown(size_t capacity, uint64_t most)
{
	uint64_t want = SCENE_MIN((uint64_t)capacity + capacity / 2 + 1024, most);
	return SCENE_MAX(want, (uint64_t)capacity + 1);
}

// Room for one more row (in frame 0, one more id too). The first capacity comes
// from the input's size, so a file rarely grows; when it does, a growing realloc
// may copy, and growing by half keeps the copies to about the scene once.
static bp_status reserve_row(text_parser *tp, uint64_t line)
{
	const bool more_ids = tp->frames <= 1 && tp->frame_rows == tp->id_capacity;
	if (!more_ids && tp->rows < tp->row_capacity)
		return BP_OK;
	const uint64_t most = SCENE_MAX(tp->rows + rows_left_at_most(tp), tp->rows);
	uint64_t ids = more_ids ? grown(tp->id_capacity, most) : tp->id_capacity;
	uint64_t rows = tp->rows == tp->row_capacity ? grown(tp->row_capacity, most) : tp->row_capacity;
	bp_status status = SCENE_MAX(ids, rows) > SIZE_MAX / sizeof(float)
		? BP_ERR_OUT_OF_MEMORY
		: scenefile_resize(tp->scene, (size_t)ids, (size_t)rows);
	if (status != BP_OK)
		return scenefile_fail_status(status, tp->err, tp->name, line, "out of memory (%llu rows)",
			(unsigned long long)rows);
	tp->id_capacity = (size_t)ids;
	tp->row_capacity = (size_t)rows;
	return BP_OK;
}

// The scene's arrays, once the header gave dims: sized to the rows the input's
// size suggests (ids to n when the header has it: frames repeat the rows, not the
// ids), or a start where the size is unknown (a pipe).
static bp_status start_scene(text_parser *tp)
{
	uint64_t rows = scenefile_lines_estimate(&tp->lines);
	rows = rows ? SCENE_MIN(rows + rows / 32 + 16, rows_left_at_most(tp)) : 4096;
	const uint64_t ids = tp->has_n ? SCENE_MIN((uint64_t)tp->n, rows) : rows;
	bp_status status = rows > SIZE_MAX / sizeof(float) ? BP_ERR_OUT_OF_MEMORY
							   : scenefile_alloc(tp->dims, (size_t)ids, (size_t)rows, &tp->scene);
	if (status != BP_OK)
		return scenefile_fail_status(status, tp->err, tp->name, 0, "out of memory (%llu rows)",
			(unsigned long long)rows);
	tp->id_capacity = (size_t)ids;
	tp->row_capacity = (size_t)rows;
	return BP_OK;
}

static bp_status parse_row(text_parser *tp, const char *line_start, const char *q, const char *eol, uint64_t line)
{
	const int dims = tp->dims;
	const unsigned columns = 1 + 2 * (unsigned)dims;
	const char *te = token_end(q, eol);
	uint32_t id;
	switch (parse_u32(q, te, &id)) {
	case 0: break;
	case 2: return scenefile_fail(tp->err, tp->name, line, "negative id");
	case 3: return scenefile_fail(tp->err, tp->name, line, "id out of range (ids are below 2^32)");
	default: return fail_token(tp, line, "id", q, te);
	}
	float v[6];
	q = te;
	for (int c = 0; c < 2 * dims; ++c) {
		q = skip_blank(q, eol);
		if (q == eol)
			return scenefile_fail(tp->err, tp->name, line, "expected %u columns (id + %d bounds), got %u", columns,
				2 * dims, count_tokens(line_start, eol));
		// strtof stops at the first byte that cannot continue a number: a blank,
		// the line end, or the NUL after the last line, so it never runs past this line.
		const char *stop;
		if (!fast_float(q, &v[c], &stop)) {
			char *slow;
			v[c] = strtof(q, &slow);
			stop = slow;
		}
		if (stop == q || (stop < eol && !is_blank((unsigned char)*stop))) {
			const char *te_value = token_end(q, eol);
			if (is_hexadecimal(q, te_value))
				return scenefile_fail(tp->err, tp->name, line,
					"value %d '%.*s' is a hexadecimal float (values are decimal, as %%.9g writes them)", c + 1,
					(int)SCENE_MIN(te_value - q, TOKEN_SHOWN), q);
			return fail_token(tp, line, "value", q, te_value);
		}
		if (isnan(v[c]))
			return scenefile_fail(tp->err, tp->name, line, "value %d is NaN", c + 1);
		if (isinf(v[c]))
			return scenefile_fail(tp->err, tp->name, line, "value %d is infinite or beyond float range", c + 1);
		q = stop;
	}
	q = skip_blank(q, eol);
	if (q != eol)
		return scenefile_fail(tp->err, tp->name, line, "expected %u columns (id + %d bounds), got %u", columns,
			2 * dims, count_tokens(line_start, eol));
	for (int a = 0; a < dims; ++a)
		if (v[a] > v[dims + a])
			return scenefile_fail(tp->err, tp->name, line, "min_%c > max_%c (%.9g > %.9g)", "xyz"[a], "xyz"[a],
				(double)v[a], (double)v[dims + a]);

	if (tp->frames == 0)
		tp->frames = 1;
	if (tp->frames == 1) {
		if (tp->frame_rows >= UINT32_MAX)
			return scenefile_fail(tp->err, tp->name, line, "too many entities (at most 2^32 - 1)");
	} else {
		uint64_t j = tp->frame_rows;
		if (j >= tp->count)
			return scenefile_fail(tp->err, tp->name, line, "frame %u has more entities than frame 0 (%u)",
				tp->frames - 1, tp->count);
		if (tp->scene->ids[j] != id)
			return scenefile_fail(tp->err, tp->name, line,
				"id %u where frame 0 has id %u (every frame lists the same ids in the same order)", id,
				tp->scene->ids[j]);
	}
	bp_status status = reserve_row(tp, line);
	if (status != BP_OK)
		return status;
	const size_t row = (size_t)tp->rows;
	if (tp->frames == 1)
		tp->scene->ids[row] = id;
	for (int a = 0; a < dims; ++a) {
		tp->scene->min[a][row] = v[a];
		tp->scene->max[a][row] = v[dims + a];
	}
	++tp->rows;
	++tp->frame_rows;
	return BP_OK;
}

// A comment line after the header that is longer than the buffer: passed over
// without being held. A frame marker is short, so only a line that may still be
// one ("#", blanks, then "frame" so far) is read whole.
static bool is_long_comment(const char *q, const char *e)
{
	const char *r = skip_blank(q + 1, e);
	size_t seen = (size_t)SCENE_MIN(e - r, 5);
	return r < e && memcmp(r, "frame", seen) != 0;
}

// The next line that is not blank, whole; but a comment longer than the buffer is
// skipped, and a long first line that is no header comes as its beginning (its
// first byte says so). *q is its first non-blank byte; NULL at the end of the input.
static bp_status next_line(text_parser *tp, bool have_header, const char **line, const char **q, const char **eol)
{
	for (;;) {
		const char *s, *e, *binary;
		bool complete;
		bp_status status = scenefile_lines_next(&tp->lines, &s, &e, &complete, &binary);
		if (status != BP_OK || !s) {
			*line = *q = *eol = NULL;
			return status;
		}
		const char *first = skip_blank(s, e);
		// A first line is no header by its first byte, whatever follows it (so the
		// answer is the same however much of the line the buffer holds).
		const bool no_header = !have_header && first < e && first != binary && *first != '#';
		if (binary && !no_header)
			return scenefile_lines_fail_binary(&tp->lines);
		if (!complete && !no_header) {
			if (have_header && first < e && *first == '#' && is_long_comment(first, e)) {
				status = scenefile_lines_skip(&tp->lines);
				if (status != BP_OK)
					return status;
				continue;
			}
			status = scenefile_lines_finish(&tp->lines, &s, &e);
			if (status != BP_OK)
				return status;
			first = skip_blank(s, e);
		}
		if (first < e) {
			*line = s;
			*q = first;
			*eol = e;
			return BP_OK;
		}
	}
}

static bp_status parse_lines(text_parser *tp)
{
	bool have_header = false;
	for (;;) {
		const char *line_start, *q, *eol;
		bp_status status = next_line(tp, have_header, &line_start, &q, &eol);
		if (status != BP_OK)
			return status;
		if (!line_start)
			break;
		const uint64_t line = tp->lines.line;
		if (!have_header) {
			status = parse_header(tp, q, eol, line);
			if (status == BP_OK)
				status = start_scene(tp);
			have_header = true;
		} else if (*q == '#') {
			status = parse_marker(tp, q, eol, line);
		} else {
			status = parse_row(tp, line_start, q, eol, line);
		}
		if (status != BP_OK)
			return status;
	}
	if (!have_header)
		return scenefile_fail(tp->err, tp->name, 0, "empty file");
	bp_status status = end_frame(tp, tp->lines.line);
	if (status != BP_OK)
		return status;
	if (tp->has_n && tp->n != tp->count)
		return scenefile_fail(tp->err, tp->name, tp->header_line, "header says n=%u but the file has %u entities",
			tp->n, tp->count);
	return BP_OK;
}

bp_status scenefile_read_text(scenefile_source *source, size_t buffer, const char *name, bp_scene **out,
	bp_scene_error *err)
{
	*out = NULL;
	text_parser tp = {.name = name, .err = err};
	bp_status status = scenefile_lines_open(&tp.lines, source, buffer, name, err);
	if (status != BP_OK)
		return status;
	status = parse_lines(&tp);
	scenefile_lines_close(&tp.lines);
	if (status != BP_OK) {
		bp_scene_destroy(tp.scene);
		return status;
	}
	// Give back what the estimate reserved beyond the rows; should a shrink fail,
	// the arrays are only larger than they need be.
	scenefile_resize(tp.scene, tp.count, (size_t)tp.rows);
	tp.scene->count = tp.count;
	tp.scene->frame_count = tp.frames;
	*out = tp.scene;
	return BP_OK;
}

// ---- writer ----

typedef struct text_out {
	FILE *f;
	char *buf;
	size_t len, cap;
	int error; ///< errno of the first failed write, 0 while none failed
} text_out;

static void out_flush(text_out *o)
{
	if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len)
		o->error = errno ? errno : EIO;
	o->len = 0;
}

static void out_float(text_out *o, float v)
{
	o->len += (size_t)scenefile_format_float_g9(v, o->buf + o->len);
}

static void out_u32(text_out *o, uint32_t v)
{
	char tmp[10];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		o->buf[o->len++] = tmp[--n];
}

bp_status scenefile_write_text(const bp_scene *scene, const char *path, bp_scene_error *err)
{
	text_out o = {.cap = 1 << 20};
	o.buf = scenefile_malloc(o.cap);
	if (!o.buf)
		return scenefile_write_fail(BP_ERR_OUT_OF_MEMORY, err, "cannot write '%s': %s (%zu bytes)", path,
			strerror(ENOMEM), o.cap);
	bp_output output;
	if (!bp_output_open(&output, path)) {
		scenefile_free(o.buf);
		return scenefile_write_fail(BP_ERR_IO, err, "%s", output.message);
	}
	o.f = output.file;
	const int dims = scene->dims;
	const size_t count = scene->count;
	o.len = (size_t)snprintf(o.buf, o.cap, "# dims=%d n=%u\n", dims, scene->count);
	for (uint32_t f = 0; f < scene->frame_count && !o.error; ++f) {
		if (scene->frame_count > 1)
			o.len += (size_t)snprintf(o.buf + o.len, 64, "# frame %u\n", f);
		const size_t at = (size_t)f * count;
		for (size_t i = 0; i < count && !o.error; ++i) {
			// A row is at most 11 + 6 * 16 bytes; flush with room to spare.
			if (o.cap - o.len < 256)
				out_flush(&o);
			out_u32(&o, scene->ids[i]);
			for (int a = 0; a < dims; ++a) {
				o.buf[o.len++] = ' ';
				out_float(&o, scene->min[a][at + i]);
			}
			for (int a = 0; a < dims; ++a) {
				o.buf[o.len++] = ' ';
				out_float(&o, scene->max[a][at + i]);
			}
			o.buf[o.len++] = '\n';
		}
	}
	if (!o.error)
		out_flush(&o);
	scenefile_free(o.buf);
	if (o.error)
		bp_output_abort(&output, o.error);
	else if (bp_output_commit(&output))
		return BP_OK;
	return scenefile_write_fail(BP_ERR_IO, err, "%s", output.message);
}
