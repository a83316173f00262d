// SPDX-License-Identifier: MIT
// Header and trailer fields of a trace as bytes (trace_bytes.h), from docs/trace.md alone.
#include "trace_bytes.h"

#include <criterion/criterion.h>
#include <string.h>

const trace_field trace_fields[] = {
	{"magic", false, 0, 8, false, "magic"},
	{"version", false, 8, 4, false, "version"},
	{"dims", false, 12, 4, false, "dims"},
	{"flags", false, 16, 4, false, "flags"},
	{"reserved", false, 20, 4, false, "reserved"},
	{"index_offset", true, 0, 8, false, "index_offset"},
	{"frame_count", true, 8, 4, true, "frame_count"},
	{"index checksum", true, 12, 4, false, "checksum"},
	{"max_entities", true, 16, 4, true, "max_entities"},
	{"keyframe_interval", true, 20, 4, true, "keyframe_interval"},
	{"end magic", true, 24, 8, false, "BPTREND1"},
};
const size_t trace_field_count = sizeof trace_fields / sizeof trace_fields[0];

const trace_field *trace_field_named(const char *name)
{
	for (size_t i = 0; i < trace_field_count; ++i)
		if (strcmp(trace_fields[i].name, name) == 0)
			return &trace_fields[i];
	cr_assert_fail("no trace field %s", name);
	return NULL;
}

static uint64_t get_le(const uint8_t *p, int width)
{
	uint64_t v = 0;
	for (int i = width; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static void put_le(uint8_t *p, uint64_t v, int width)
{
	for (int i = 0; i < width; ++i)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint8_t *field_at(uint8_t *bytes, size_t size, const trace_field *field)
{
	cr_assert_geq(size, TRACE_HEADER_BYTES + TRACE_TRAILER_BYTES);
	return bytes + field->offset + (field->in_trailer ? size - TRACE_TRAILER_BYTES : 0);
}

uint64_t trace_field_get(const uint8_t *bytes, size_t size, const trace_field *field)
{
	return get_le(field_at((uint8_t *)bytes, size, field), field->width);
}

void trace_field_set(uint8_t *bytes, size_t size, const trace_field *field, uint64_t value)
{
	put_le(field_at(bytes, size, field), value, field->width);
	if (field->checksummed)
		trace_fix_checksum(bytes, size);
}

static uint32_t fnv(uint32_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; ++i)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

void trace_fix_checksum(uint8_t *bytes, size_t size)
{
	uint8_t *t = bytes + size - TRACE_TRAILER_BYTES;
	const uint64_t index_offset = get_le(t, 8), index_bytes = 16 * get_le(t + 8, 4);
	if (index_bytes > size - TRACE_TRAILER_BYTES || index_offset != size - TRACE_TRAILER_BYTES - index_bytes)
		return;
	uint8_t counts[12];
	memcpy(counts, t + 8, 4);
	memcpy(counts + 4, t + 16, 8);
	put_le(t + 12, fnv(fnv(2166136261u, bytes + index_offset, index_bytes), counts, sizeof counts), 4);
}
