// SPDX-License-Identifier: MIT
// Shared by the libFuzzer targets: a byte reader, a malloc-backed allocator (so ASan sees
// every library allocation: mimalloc's own pages hide overflows inside its blocks), and a
// brute-force pair oracle over plain arrays, independent of the library's code.
#ifndef BP_FUZZ_COMMON_H
#define BP_FUZZ_COMMON_H

#define _POSIX_C_SOURCE 200809L // posix_memalign, getpid, unlink

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <broadphase/broadphase.h>

/// Reports and aborts: libFuzzer saves the input that got here as a crash.
#define FUZZ_CHECK(cond, ...)                                                                            \
	do {                                                                                                 \
		if (!(cond)) {                                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                     \
			fprintf(stderr, __VA_ARGS__);                                                                \
			fputc('\n', stderr);                                                                         \
			abort();                                                                                     \
		}                                                                                                \
	} while (0)

/// Input bytes consumed front to back; zeros once exhausted.
typedef struct fuzz_reader {
	const uint8_t *data;
	size_t size, pos;
} fuzz_reader;

static inline bool fuzz_more(const fuzz_reader *r)
{
	return r->pos < r->size;
}

static inline uint8_t fuzz_byte(fuzz_reader *r)
{
	return r->pos < r->size ? r->data[r->pos++] : 0;
}

static inline uint32_t fuzz_u32(fuzz_reader *r)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; ++i)
		v |= (uint32_t)fuzz_byte(r) << (8 * i);
	return v;
}

/// When nonzero, fuzz_alloc refuses a block larger than this: a target that reads counts from
/// its input sets it, so that a count sizing memory fails as a check rather than by overcommit.
static size_t fuzz_block_limit;

static void *fuzz_alloc(size_t size, size_t align, void *user)
{
	(void)user;
	if (fuzz_block_limit && size > fuzz_block_limit)
		return NULL;
	if (align < sizeof(void *))
		align = sizeof(void *);
	void *ptr = NULL;
	return posix_memalign(&ptr, align, size) == 0 ? ptr : NULL;
}

static void fuzz_free(void *ptr, size_t size, size_t align, void *user)
{
	(void)size, (void)align, (void)user;
	free(ptr);
}

/// Installs the malloc-backed allocator; call while no library object exists.
static inline void fuzz_use_malloc(void)
{
	static const bp_allocator allocator = {fuzz_alloc, fuzz_free, NULL};
	bp_set_allocator(&allocator);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

/// Passive OpenMP waits unless the environment says otherwise: spinning workers of several
/// fuzzer processes on 2 cores took 14.7 s wall for 691 inputs, passive 10.5 s.
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	setenv("OMP_WAIT_POLICY", "passive", 0);
	return 0;
}

/// One box of the oracle, with the filter fields the library applies.
typedef struct fuzz_box {
	float min[3], max[3];
	uint64_t category, mask;
	bool is_static;
} fuzz_box;

/// Bits 0-2 of `small` as the layers at bits 0, 33 and 63, so that fuzzed filters reach the
/// high word and the top bit.
static inline uint64_t fuzz_layers(uint32_t small)
{
	return (uint64_t)(small & 1) | (uint64_t)(small >> 1 & 1) << 33 | (uint64_t)(small >> 2 & 1) << 63;
}

/// A filter from one byte: category bits 0-1 plus 1, mask bits 2-4 (0 means all), as layers.
static inline void fuzz_filter(uint8_t f, uint64_t *category, uint64_t *mask)
{
	*category = fuzz_layers((f & 3) + 1u);
	*mask = (f >> 2) & 7 ? fuzz_layers((f >> 2) & 7) : UINT64_MAX;
}

static inline bool fuzz_pair_expected(const fuzz_box *a, const fuzz_box *b, int dims)
{
	for (int k = 0; k < dims; ++k)
		if (!(a->min[k] <= b->max[k] && b->min[k] <= a->max[k]))
			return false;
	if (a->is_static && b->is_static)
		return false;
	return (a->category & b->mask) && (b->category & a->mask);
}

static int fuzz_pair_compare(const void *pa, const void *pb)
{
	const bp_pair *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return (a->hi > b->hi) - (a->hi < b->hi);
}

/// Every expected pair, sorted by (lo, hi); the caller frees. *count gets the number.
static inline bp_pair *fuzz_oracle_pairs(const fuzz_box *boxes, uint32_t n, int dims, size_t *count)
{
	bp_pair *pairs = malloc(((size_t)n * n / 2 + 1) * sizeof *pairs);
	FUZZ_CHECK(pairs, "out of memory");
	size_t c = 0;
	for (uint32_t i = 0; i < n; ++i)
		for (uint32_t j = i + 1; j < n; ++j)
			if (fuzz_pair_expected(&boxes[i], &boxes[j], dims))
				pairs[c++] = (bp_pair){i, j};
	*count = c;
	return pairs;
}

/// Checks that `got` (any order) is exactly the sorted set `want`: lo < hi, in range,
/// no duplicates. `what` names the call in the message.
static inline void fuzz_expect_pairs(const bp_pair *got, size_t got_count, const bp_pair *want, size_t want_count,
	uint32_t n, const char *what)
{
	FUZZ_CHECK(got_count == want_count, "%s: %zu pairs, oracle %zu", what, got_count, want_count);
	if (got_count == 0)
		return;
	bp_pair *sorted = malloc(got_count * sizeof *sorted);
	FUZZ_CHECK(sorted, "out of memory");
	memcpy(sorted, got, got_count * sizeof *sorted);
	qsort(sorted, got_count, sizeof *sorted, fuzz_pair_compare);
	for (size_t i = 0; i < got_count; ++i) {
		FUZZ_CHECK(sorted[i].lo < sorted[i].hi && sorted[i].hi < n, "%s: bad pair (%u, %u) of %u entities", what,
			sorted[i].lo, sorted[i].hi, n);
		FUZZ_CHECK(sorted[i].lo == want[i].lo && sorted[i].hi == want[i].hi,
			"%s: pair %zu is (%u, %u), oracle (%u, %u)", what, i, sorted[i].lo, sorted[i].hi, want[i].lo,
			want[i].hi);
	}
	free(sorted);
}

#endif
