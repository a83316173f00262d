// SPDX-License-Identifier: MIT
// Bit sets over indices: one bit an index, so a set over a million entities (128 KB) stays in
// cache where a byte per index (1 MB) would not.
#ifndef BP_BITS_H
#define BP_BITS_H

#include "base/core.h"

/// Words of a bit set over indices [0, n).
static inline size_t bpi_bit_words(size_t n)
{
	return (n + 63) / 64;
}

static inline bool bpi_bit_get(const uint64_t *bits, uint32_t i)
{
	return (bits[i / 64] >> (i % 64)) & 1;
}

/// Whether i or j is in the set: both bits read and joined as words, with no branch on the
/// first (a pair's two entities, where either may be marked).
static inline bool bpi_bit_either(const uint64_t *bits, uint32_t i, uint32_t j)
{
	return ((bits[i / 64] >> (i % 64)) | (bits[j / 64] >> (j % 64))) & 1;
}

static inline void bpi_bit_set(uint64_t *bits, uint32_t i)
{
	bits[i / 64] |= (uint64_t)1 << (i % 64);
}

static inline void bpi_bit_clear(uint64_t *bits, uint32_t i)
{
	bits[i / 64] &= ~((uint64_t)1 << (i % 64));
}

/// Sets bits [from, to) to `on` (none when from >= to); the others keep their values.
static inline void bpi_bits_fill(uint64_t *bits, uint32_t from, uint32_t to, bool on)
{
	for (; from < to && from % 64; ++from)
		on ? bpi_bit_set(bits, from) : bpi_bit_clear(bits, from);
	for (; from < to && to - from >= 64; from += 64)
		bits[from / 64] = on ? ~(uint64_t)0 : 0;
	for (; from < to; ++from)
		on ? bpi_bit_set(bits, from) : bpi_bit_clear(bits, from);
}

#endif
