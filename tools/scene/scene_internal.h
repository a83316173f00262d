// SPDX-License-Identifier: MIT
// Shared by the scene readers, writers and generators: allocation of a scene by
// capacity, "file:line: reason" errors, the duplicate-id check and the binary layout.
#ifndef BP_SCENE_INTERNAL_H
#define BP_SCENE_INTERNAL_H

#include "bp_scene.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define SCENE_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SCENE_MAX(a, b) ((a) > (b) ? (a) : (b))

/// malloc that also gives a pointer to free for 0 bytes (an empty scene's arrays),
/// where malloc(0) may return NULL.
static inline void *scenefile_malloc(size_t size)
{
	return malloc(size ? size : 1);
}

/// Binary form: magic, then little-endian uint32 dims, count, frame_count, reserved.
#define SCENEFILE_MAGIC "BPSCENE1"
#define SCENEFILE_MAGIC_SIZE 8
#define SCENEFILE_HEADER_SIZE (SCENEFILE_MAGIC_SIZE + 4 * 4)

/// Allocates an empty scene whose id array holds id_capacity entries and whose
/// bound arrays hold row_capacity floats each (count = 0, frame_count = 1). The
/// caller sets count and frame_count, with count <= id_capacity and
/// count * frame_count <= row_capacity.
bp_status scenefile_alloc(int dims, size_t id_capacity, size_t row_capacity, bp_scene **out);

/// Fills err (when not NULL) with "name:line: reason" and returns BP_ERR_PARSE.
bp_status scenefile_fail(bp_scene_error *err, const char *name, uint64_t line, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;
/// As scenefile_fail with a chosen status (BP_ERR_IO, BP_ERR_OUT_OF_MEMORY).
bp_status scenefile_fail_status(bp_status status, bp_scene_error *err, const char *name, uint64_t line,
	const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 5, 6)))
#endif
	;

/// Looks for a repeated id. Returns BP_OK and sets *found; when found, *first and
/// *second are the positions of the earliest repeat in array order (second is the
/// smallest index whose id occurs before it, first that earlier index).
bp_status scenefile_find_duplicate(const uint32_t *ids, uint32_t count, bool *found, uint32_t *first,
	uint32_t *second);

/// Text parser. buf[size] must be '\0' (the tokenizer leans on it).
bp_status scenefile_parse_text(const char *buf, size_t size, const char *name, bp_scene **out,
	bp_scene_error *err);

/// Writes v as printf("%.9g") does (NUL-terminated, at most 16 characters) and
/// returns the length; the text writer's formatter, exposed for its test.
int scenefile_format_float_g9(float v, char *out);

/// Where the binary reader takes its bytes from: a file or memory.
typedef struct scenefile_byte_source {
	/// Reads exactly size bytes; false on a short read or an IO error (errno set).
	bool (*read)(void *ctx, void *dst, size_t size);
	void *ctx;
	uint64_t total_size; ///< bytes in the whole source, magic included
} scenefile_byte_source;

/// Binary reader; the source is positioned just after the magic.
bp_status scenefile_read_binary(scenefile_byte_source *source, const char *name, bp_scene **out,
	bp_scene_error *err);

#endif
