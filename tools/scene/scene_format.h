// SPDX-License-Identifier: MIT
// What the scene readers, writers and generators share: a scene allocated by capacity,
// "file:line: reason" errors, the duplicate-id check and the %.9g spelling of values.
// It sits below them all and calls none of them.
#ifndef BP_SCENE_FORMAT_H
#define BP_SCENE_FORMAT_H

#include "bp_scene.h"
#include <stdbool.h>
#include <stdlib.h>

#define SCENE_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SCENE_MAX(a, b) ((a) > (b) ? (a) : (b))

/// Every allocation of the scene library, counted in bp_scene_allocated_bytes so
/// tests can assert that nothing leaks. Returns a pointer for 0 bytes too (an
/// empty scene's arrays). Free with scenefile_free; NULL is ignored there.
void *scenefile_malloc(size_t size);
/// Resizes a block from scenefile_malloc (NULL: allocates); keeps the block and
/// returns NULL when it cannot.
void *scenefile_realloc(void *ptr, size_t size);
void scenefile_free(void *ptr);

/// Allocates an empty scene whose id array holds id_capacity entries and whose
/// bound arrays hold row_capacity floats each (count = 0, frame_count = 1). The
/// caller sets count and frame_count, with count <= id_capacity and
/// count * frame_count <= row_capacity. Free with bp_scene_destroy.
bp_status scenefile_alloc(int dims, size_t id_capacity, size_t row_capacity, bp_scene **out);

/// Resizes a scene from scenefile_alloc to hold id_capacity ids and row_capacity
/// rows, keeping what fits. On BP_ERR_OUT_OF_MEMORY every array still holds at
/// least the smaller of its old and new capacity.
bp_status scenefile_resize(bp_scene *scene, size_t id_capacity, size_t row_capacity);

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

/// Fills err (when not NULL) with a writer's failure as given, line 0: writers say
/// "cannot write 'PATH': REASON" (tools/output/output_file.h), not "name:line: reason".
bp_status scenefile_write_fail(bp_status status, bp_scene_error *err, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/// Looks for a repeated id. Returns BP_OK and sets *found; when found, *first and
/// *second are the positions of the earliest repeat in array order (second is the
/// smallest index whose id occurs before it, first that earlier index).
bp_status scenefile_find_duplicate(const uint32_t *ids, uint32_t count, bool *found, uint32_t *first,
	uint32_t *second);

/// Writes v as printf("%.9g") does (NUL-terminated, at most 16 characters) and
/// returns the length: the text writer's formatter, exposed for its test.
int scenefile_format_float_g9(float v, char *out);

#endif
