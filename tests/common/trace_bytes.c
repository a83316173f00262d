// SPDX-License-Identifier: MIT
// Header and trailer fields of a trace as bytes (trace_bytes.h), from docs/trace.md alone.
#include "trace_bytes.h"

#include <criterion/criterion.h>
#include <string.h>

const trace_field trace_fields[] = TRACE_FIELDS;
const size_t trace_field_count = sizeof trace_fields / sizeof trace_fields[0];

const trace_field *trace_field_named(const char *name)
{
	for (size_t i = 0; i < trace_field_count; ++i)
		if (strcmp(trace_fields[i].name, name) == 0)
			return &trace_fields[i];
	cr_assert_fail("no trace field %s", name);
	return NULL;
}

static uint8_t *field_at(uint8_t *bytes, size_t size, const trace_field *field)
{
	cr_assert_geq(size, TRACE_HEADER_BYTES + TRACE_TRAILER_BYTES);
	return bytes + field->offset + (field->in_trailer ? size - TRACE_TRAILER_BYTES : 0);
}

uint64_t trace_field_get(const uint8_t *bytes, size_t size, const trace_field *field)
{
	return trace_le_get(field_at((uint8_t *)bytes, size, field), field->width);
}

void trace_field_set(uint8_t *bytes, size_t size, const trace_field *field, uint64_t value)
{
	trace_le_put(field_at(bytes, size, field), value, field->width);
	if (field->checksummed)
		trace_fix_checksum(bytes, size);
}
