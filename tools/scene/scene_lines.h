// SPDX-License-Identifier: MIT
// The lines of a text scene, read from a source through one buffer: line ends LF, CRLF or
// CR, a UTF-8 byte-order mark skipped, and bytes no text holds found as they are read, so a
// binary file fails on its first buffer.
#ifndef BP_SCENE_LINES_H
#define BP_SCENE_LINES_H

#include "scene_source.h"

/// Buffer size the readers use: large enough that lines of a scene never fill it.
#define SCENEFILE_LINE_BUFFER (1u << 20)

typedef struct scenefile_lines {
	scenefile_source *source;
	const char *name;    ///< for messages
	bp_scene_error *err; ///< may be NULL
	char *buf;
	size_t cap;          ///< bytes buf holds, plus one for a NUL after the last line
	size_t at, end;      ///< [at, end): read, not yet handed out
	size_t binary_at;    ///< first byte no text holds in [at, end); SIZE_MAX when none
	uint64_t line;       ///< number of the line handed out last (1-based)
	bool eof;
	bool cr;             ///< a CR was read, so CR and CRLF end lines too
	bool partial;        ///< the last line handed out was only its beginning
} scenefile_lines;

/// Starts reading source's lines with a buffer of `buffer` bytes (at least 4; less
/// when the whole input is smaller). BP_ERR_OUT_OF_MEMORY without a buffer.
bp_status scenefile_lines_open(scenefile_lines *lines, scenefile_source *source, size_t buffer, const char *name,
	bp_scene_error *err);
void scenefile_lines_close(scenefile_lines *lines);

/// The next line without its end, as [*start, *end); *start is NULL past the last
/// line. The byte at *end stops a number (a line end or a NUL). When the line is
/// longer than the buffer, *complete is false and [*start, *end) is its beginning
/// (from its first byte that is not a blank: blanks that fill the buffer go):
/// the caller then calls scenefile_lines_finish (the buffer grows to hold it) or
/// scenefile_lines_skip before asking for the next line. *binary is the first
/// byte of it no text holds, or NULL: the caller picks which error comes first
/// (a first line is no header by its first byte, whatever follows) and fails,
/// with scenefile_lines_fail_binary for that byte. A read error is BP_ERR_IO.
bp_status scenefile_lines_next(scenefile_lines *lines, const char **start, const char **end, bool *complete,
	const char **binary);
/// "name:line: binary data (byte 0xNN), not a text scene" for the line handed out last.
bp_status scenefile_lines_fail_binary(const scenefile_lines *lines);
/// The whole of the line that scenefile_lines_next gave only the beginning of.
/// Fails (BP_ERR_PARSE) when it holds a byte no text has.
bp_status scenefile_lines_finish(scenefile_lines *lines, const char **start, const char **end);
/// Passes over the rest of that line without keeping it; fails as finish does.
bp_status scenefile_lines_skip(scenefile_lines *lines);

/// Bytes not yet handed out: those buffered and those the source has left (0
/// for a source of unknown size).
uint64_t scenefile_lines_bytes_left(const scenefile_lines *lines);
/// Lines still to come, estimated from the line ends among the buffered bytes and
/// the bytes the source has left; 0 when the source's size is unknown.
uint64_t scenefile_lines_estimate(const scenefile_lines *lines);

#endif
