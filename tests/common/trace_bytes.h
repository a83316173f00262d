// SPDX-License-Identifier: MIT
// A trace's header and trailer fields as bytes (docs/trace.md, Layout), and the index checksum
// a reader verifies, so that a test can change one field and still get past the checksum.
#ifndef BP_TEST_TRACE_BYTES_H
#define BP_TEST_TRACE_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRACE_HEADER_BYTES 24u
#define TRACE_TRAILER_BYTES 32u

/// A field: where it lies (from the file's start, or for the trailer from the trailer's),
/// how wide it is, and the word a reader's refusal of it must say.
typedef struct trace_field {
	const char *name;
	bool in_trailer;
	size_t offset;
	int width;         ///< bytes: 4 or 8
	bool checksummed;  ///< the index checksum covers it
	const char *named; ///< what a message refusing it says
} trace_field;

/// magic, version, dims, flags, reserved; index_offset, frame_count, index checksum,
/// max_entities, keyframe_interval, end magic.
extern const trace_field trace_fields[];
extern const size_t trace_field_count;
/// The one named `name`; asserts that there is one.
const trace_field *trace_field_named(const char *name);

uint64_t trace_field_get(const uint8_t *bytes, size_t size, const trace_field *field);
/// Writes the field, then, when the index checksum covers it, the checksum a reader would verify
/// (trace_fix_checksum).
void trace_field_set(uint8_t *bytes, size_t size, const trace_field *field, uint64_t value);
/// Sets the index checksum to what a reader computes from the trailer as it stands: the
/// index_offset and frame_count it names and its counts. When those do not place the index
/// just before the trailer, a reader refuses the file before the checksum: it is left alone.
void trace_fix_checksum(uint8_t *bytes, size_t size);

#endif
