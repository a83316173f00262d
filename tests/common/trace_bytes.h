// SPDX-License-Identifier: MIT
// A trace's header and trailer fields as bytes (docs/trace.md, Layout), and the index checksum
// a reader verifies, so that a test can change one field and still get past the checksum.
#ifndef BP_TEST_TRACE_BYTES_H
#define BP_TEST_TRACE_BYTES_H

#include "trace_fields.h"

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

#endif
