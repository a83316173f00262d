// SPDX-License-Identifier: MIT
// Lines of a text scene from a byte source: one buffer, refilled as lines are handed out and
// grown only for a line longer than it, so reading needs the buffer, not the file.
#include "scene_lines.h"

#include <string.h>

#include "scene_format.h"

// Bytes no text file holds: C0 controls other than \t \n \v \f \r, and DEL.
static inline unsigned is_binary_byte(unsigned char c)
{
	return (c < 9u) | ((unsigned char)(c - 14u) < 18u) | (c == 127u);
}

// Notes the first byte no text holds and whether a CR came, over newly read bytes.
// A plain reduction, so the compiler vectorizes it (GB/s, against ~0.3 GB/s for the
// parse).
static void scan(scenefile_lines *lines, size_t from, size_t to)
{
	const unsigned char *u = (const unsigned char *)lines->buf;
	unsigned binary = 0, cr = 0;
	for (size_t i = from; i < to; ++i) {
		binary |= is_binary_byte(u[i]);
		cr |= u[i] == '\r';
	}
	lines->cr = lines->cr || cr;
	if (binary && lines->binary_at == SIZE_MAX) {
		size_t i = from;
		while (!is_binary_byte(u[i]))
			++i;
		lines->binary_at = i;
	}
}

// Moves the unread bytes to the front and reads into the room after them.
static bp_status fill(scenefile_lines *lines)
{
	if (lines->at > 0) {
		memmove(lines->buf, lines->buf + lines->at, lines->end - lines->at);
		if (lines->binary_at != SIZE_MAX)
			lines->binary_at -= lines->at;
		lines->end -= lines->at;
		lines->at = 0;
	}
	const size_t room = lines->cap - lines->end;
	const size_t got = scenefile_source_read(lines->source, lines->buf + lines->end, room);
	if (lines->source->error)
		return scenefile_fail_status(BP_ERR_IO, lines->err, lines->name, 0, "%s", strerror(lines->source->error));
	lines->eof = got < room;
	scan(lines, lines->end, lines->end + got);
	lines->end += got;
	lines->buf[lines->end] = '\0'; // stops a number on a last line with no line end
	return BP_OK;
}

// Doubles the buffer for a line longer than it, or less where the input has less left.
static bp_status grow(scenefile_lines *lines)
{
	uint64_t left = scenefile_source_left(lines->source);
	size_t more = lines->source->size_known && left < lines->cap ? SCENE_MAX((size_t)left, (size_t)65536) : lines->cap;
	char *bigger = more < SIZE_MAX - 1 - lines->cap ? scenefile_realloc(lines->buf, lines->cap + more + 1) : NULL;
	if (!bigger)
		return scenefile_fail_status(BP_ERR_OUT_OF_MEMORY, lines->err, lines->name, lines->line,
			"out of memory for a line of more than %zu bytes", lines->cap);
	lines->buf = bigger;
	lines->cap += more;
	return BP_OK;
}

bp_status scenefile_lines_open(scenefile_lines *lines, scenefile_source *source, size_t buffer, const char *name,
	bp_scene_error *err)
{
	*lines = (scenefile_lines){.source = source, .name = name, .err = err, .binary_at = SIZE_MAX};
	// A small input gets a buffer its size (one more byte shows the end).
	if (source->size_known && scenefile_source_left(source) < buffer)
		buffer = (size_t)scenefile_source_left(source) + 1;
	buffer = SCENE_MAX(buffer, (size_t)4);
	lines->buf = scenefile_malloc(buffer + 1);
	if (!lines->buf)
		return scenefile_fail_status(BP_ERR_OUT_OF_MEMORY, err, name, 0, "out of memory (%zu bytes)", buffer + 1);
	lines->cap = buffer;
	bp_status status = fill(lines);
	if (status == BP_OK && lines->end >= 3 && memcmp(lines->buf, "\xEF\xBB\xBF", 3) == 0)
		lines->at = 3; // a UTF-8 byte-order mark, as some editors write: not part of the text
	if (status != BP_OK)
		scenefile_lines_close(lines);
	return status;
}

void scenefile_lines_close(scenefile_lines *lines)
{
	scenefile_free(lines->buf);
	lines->buf = NULL;
}

// Finds where the line at `at` ends (*eol) and the next begins (*next). False
// when the buffered bytes do not tell yet: no line end, or a CR last, which an
// LF may follow.
static bool find_line_end(const scenefile_lines *lines, size_t *eol, size_t *next)
{
	const char *base = lines->buf + lines->at;
	const size_t len = lines->end - lines->at;
	const char *lf = memchr(base, '\n', len);
	const size_t stop = lf ? (size_t)(lf - base) : len;
	const char *cr = lines->cr ? memchr(base, '\r', stop) : NULL;
	if (cr) {
		size_t i = (size_t)(cr - base);
		if (i + 1 == len && !lines->eof)
			return false;
		*eol = lines->at + i;
		*next = *eol + (i + 1 < len && base[i + 1] == '\n' ? 2 : 1);
		return true;
	}
	if (!lf)
		return false;
	*eol = lines->at + stop;
	*next = *eol + 1;
	return true;
}

bp_status scenefile_lines_fail_binary(const scenefile_lines *lines)
{
	return scenefile_fail(lines->err, lines->name, lines->line, "binary data (byte 0x%02x), not a text scene",
		(unsigned char)lines->buf[lines->binary_at]);
}

static bool only_blanks(const char *p, size_t size)
{
	for (size_t i = 0; i < size; ++i)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\v' && p[i] != '\f')
			return false;
	return true;
}

// The first byte no text holds before `limit`, or NULL.
static const char *binary_before(const scenefile_lines *lines, size_t limit)
{
	return lines->binary_at < limit ? lines->buf + lines->binary_at : NULL;
}

// Hands out the line at `at` when its end is buffered (or the input ended).
static void take_line(scenefile_lines *lines, size_t eol, size_t next, const char **start, const char **end)
{
	*start = lines->buf + lines->at;
	*end = lines->buf + eol;
	lines->at = next;
	lines->partial = false;
}

bp_status scenefile_lines_next(scenefile_lines *lines, const char **start, const char **end, bool *complete,
	const char **binary)
{
	*start = *end = *binary = NULL;
	*complete = true;
	for (;;) {
		size_t eol, next;
		const bool found = find_line_end(lines, &eol, &next);
		if (found || (lines->eof && lines->at < lines->end)) {
			++lines->line;
			*binary = binary_before(lines, found ? eol : lines->end);
			take_line(lines, found ? eol : lines->end, found ? next : lines->end, start, end);
			return BP_OK;
		}
		if (lines->eof)
			return BP_OK; // no more lines
		if (lines->at == 0 && lines->end == lines->cap && only_blanks(lines->buf, lines->end)) {
			// A line's leading blanks say nothing: drop them, but one (the line is
			// still there should the input end), and read on.
			lines->at = lines->end - 1;
		} else if (lines->at == 0 && lines->end == lines->cap) {
			++lines->line;
			lines->partial = true;
			*complete = false;
			*binary = binary_before(lines, lines->end);
			*start = lines->buf;
			*end = lines->buf + lines->end;
			return BP_OK;
		}
		bp_status status = fill(lines);
		if (status != BP_OK)
			return status;
	}
}

/// The rest of a line scenefile_lines_next returned in part: kept whole (the
/// buffer grows to hold it) or dropped as it is read.
static bp_status rest_of_line(scenefile_lines *lines, bool keep, const char **start, const char **end)
{
	for (;;) {
		size_t eol, next;
		const bool found = find_line_end(lines, &eol, &next);
		if (lines->binary_at < (found ? eol : lines->end))
			return scenefile_lines_fail_binary(lines);
		if (found || lines->eof) {
			if (keep) {
				take_line(lines, found ? eol : lines->end, found ? next : lines->end, start, end);
			} else {
				lines->at = found ? next : lines->end;
				lines->partial = false;
			}
			return BP_OK;
		}
		bp_status status = BP_OK;
		if (keep && lines->at == 0 && lines->end == lines->cap)
			status = grow(lines);
		else if (!keep) // drop what is buffered but a last CR: an LF may follow it
			lines->at = lines->end - (lines->end > lines->at && lines->buf[lines->end - 1] == '\r');
		if (status == BP_OK)
			status = fill(lines);
		if (status != BP_OK)
			return status;
	}
}

bp_status scenefile_lines_finish(scenefile_lines *lines, const char **start, const char **end)
{
	return rest_of_line(lines, true, start, end);
}

bp_status scenefile_lines_skip(scenefile_lines *lines)
{
	return rest_of_line(lines, false, NULL, NULL);
}

uint64_t scenefile_lines_bytes_left(const scenefile_lines *lines)
{
	return (lines->end - lines->at) + scenefile_source_left(lines->source);
}

uint64_t scenefile_lines_estimate(const scenefile_lines *lines)
{
	const size_t buffered = lines->end - lines->at;
	if (!lines->source->size_known || buffered == 0)
		return 0;
	size_t lf = 0, cr = 0;
	for (size_t i = lines->at; i < lines->end; ++i) {
		lf += lines->buf[i] == '\n';
		cr += lines->buf[i] == '\r';
	}
	// CRLF files count both; either alone is a file of that line end.
	double per_byte = (double)(SCENE_MAX(lf, cr) + 1) / (double)buffered;
	return (uint64_t)(per_byte * (double)scenefile_lines_bytes_left(lines));
}
