// SPDX-License-Identifier: MIT
// The trace file's layout (docs/trace.md): magics, record sizes, little-endian words and the
// FNV-1a checksum every record ends with. Shared by the writer and the reader.
#ifndef BP_TRACE_FORMAT_H
#define BP_TRACE_FORMAT_H

#include <stdint.h>
#include <string.h>

#define BPI_TRACE_MAGIC "BPTRACE1"
#define BPI_TRACE_END_MAGIC "BPTREND1"
#define BPI_TRACE_HEADER_BYTES 24u
#define BPI_TRACE_TRAILER_BYTES 32u
#define BPI_TRACE_INDEX_ENTRY_BYTES 16u
/// Record tags, the first word of a frame record and of a keyframe record.
#define BPI_TRACE_FRAME_TAG 0x4D415246u    // "FRAM"
#define BPI_TRACE_KEYFRAME_TAG 0x4D52464Bu // "KFRM"
/// Words before a frame record's payload: tag, frame, destroy, create, set and move counts.
#define BPI_TRACE_FRAME_HEAD_WORDS 6u
/// Words before a keyframe's payload: tag, frame, count.
#define BPI_TRACE_KEYFRAME_HEAD_WORDS 3u
/// The least bytes of a record: its head and checksum, with an empty payload.
#define BPI_TRACE_FRAME_LEAST_BYTES (4u * (BPI_TRACE_FRAME_HEAD_WORDS + 1u))
#define BPI_TRACE_KEYFRAME_LEAST_BYTES (4u * (BPI_TRACE_KEYFRAME_HEAD_WORDS + 1u))
/// Entity flags word: bit 0 static, bit 1 sphere; other bits must be 0.
#define BPI_TRACE_FLAG_STATIC 1u
#define BPI_TRACE_FLAG_SPHERE 2u
#define BPI_TRACE_FLAGS_KNOWN 3u
#define BPI_TRACE_FNV_OFFSET 2166136261u
/// The oldest version read: version 1 stores categories and masks in one word each.
#define BPI_TRACE_OLDEST_VERSION 1u

static inline uint32_t bpi_trace_fnv(uint32_t hash, const uint8_t *bytes, size_t count)
{
	for (size_t i = 0; i < count; ++i)
		hash = (hash ^ bytes[i]) * 16777619u;
	return hash;
}

static inline void bpi_trace_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

static inline void bpi_trace_put64(uint8_t *p, uint64_t v)
{
	bpi_trace_put32(p, (uint32_t)v);
	bpi_trace_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t bpi_trace_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t bpi_trace_get64(const uint8_t *p)
{
	return (uint64_t)bpi_trace_get32(p) | (uint64_t)bpi_trace_get32(p + 4) << 32;
}

static inline uint32_t bpi_trace_float_bits(float f)
{
	uint32_t v;
	memcpy(&v, &f, sizeof v);
	return v;
}

static inline float bpi_trace_bits_float(uint32_t v)
{
	float f;
	memcpy(&f, &v, sizeof f);
	return f;
}

/// Words a category or a mask takes in a file of `version`: a low word then, from version 2,
/// a high word, each its own column.
static inline uint32_t bpi_trace_filter_words(uint32_t version)
{
	return version >= 2 ? 2u : 1u;
}

/// Words of an entity's id, category, mask and flags (its bounds apart).
static inline uint64_t bpi_trace_entity_words(uint32_t filter_words)
{
	return 2 + 2 * (uint64_t)filter_words;
}

/// Bytes of one entity created in a frame record: id, category, mask, flags, 2 * dims bounds.
static inline uint64_t bpi_trace_create_bytes(uint64_t dims, uint32_t filter_words)
{
	return 4 * (bpi_trace_entity_words(filter_words) + 2 * dims);
}

/// Words of a frame record's payload: ids of the destroys; per create id, category, mask,
/// flags and 2 * dims bounds; per set id, category, mask, flags; per move id and 2 * dims bounds.
static inline uint64_t bpi_trace_frame_words(uint64_t dims, uint32_t filter_words, uint64_t destroys, uint64_t creates,
	uint64_t sets, uint64_t moves)
{
	const uint64_t entity = bpi_trace_entity_words(filter_words);
	return destroys + creates * (entity + 2 * dims) + sets * entity + moves * (1 + 2 * dims);
}

#endif
