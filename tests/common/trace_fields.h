// SPDX-License-Identifier: MIT
// A trace's header and trailer fields as bytes (docs/trace.md, Layout) and the index checksum a
// reader verifies, for the tests and the trace fuzzer alike: no Criterion, all inline.
#ifndef BP_TEST_TRACE_FIELDS_H
#define BP_TEST_TRACE_FIELDS_H

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

/// The initializer of a table of every field, in file order.
#define TRACE_FIELDS                                                                                             \
	{                                                                                                            \
		{"magic", false, 0, 8, false, "magic"}, {"version", false, 8, 4, false, "version"},                      \
		{"dims", false, 12, 4, false, "dims"}, {"flags", false, 16, 4, false, "flags"},                          \
		{"reserved", false, 20, 4, false, "reserved"}, {"index_offset", true, 0, 8, false, "index_offset"},      \
		{"frame_count", true, 8, 4, true, "frame_count"}, {"index checksum", true, 12, 4, false, "checksum"},    \
		{"max_entities", true, 16, 4, true, "max_entities"},                                                     \
		{"keyframe_interval", true, 20, 4, true, "keyframe_interval"}, {"end magic", true, 24, 8, false, "BPTREND1"} \
	}

static inline uint64_t trace_le_get(const uint8_t *p, int width)
{
	uint64_t v = 0;
	for (int i = width; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static inline void trace_le_put(uint8_t *p, uint64_t v, int width)
{
	for (int i = 0; i < width; ++i)
		p[i] = (uint8_t)(v >> (8 * i));
}

/// Sets the index checksum to what a reader computes from the trailer as it stands: FNV-1a over
/// the index it names, then its frame_count, max_entities and keyframe_interval. A file too
/// short for a trailer, or one whose trailer does not place the index just before itself, is
/// refused before the checksum: it is left alone.
static inline void trace_fix_checksum(uint8_t *bytes, size_t size)
{
	if (size < TRACE_HEADER_BYTES + TRACE_TRAILER_BYTES)
		return;
	uint8_t *t = bytes + size - TRACE_TRAILER_BYTES;
	const uint64_t index_offset = trace_le_get(t, 8), index_bytes = 16 * trace_le_get(t + 8, 4);
	if (index_bytes > size - TRACE_TRAILER_BYTES || index_offset != size - TRACE_TRAILER_BYTES - index_bytes)
		return;
	uint32_t hash = 2166136261u;
	for (uint64_t i = 0; i < index_bytes; ++i)
		hash = (hash ^ bytes[index_offset + i]) * 16777619u;
	const uint8_t *counts[2] = {t + 8, t + 16};
	const size_t lengths[2] = {4, 8};
	for (int c = 0; c < 2; ++c)
		for (size_t i = 0; i < lengths[c]; ++i)
			hash = (hash ^ counts[c][i]) * 16777619u;
	trace_le_put(t + 12, hash, 4);
}

#endif
