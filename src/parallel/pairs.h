// SPDX-License-Identifier: MIT
// Per-chunk pair buffers and their deterministic merge.
#ifndef BP_PAIRS_H
#define BP_PAIRS_H

#include <broadphase/types.h>
#include "parallel/budget.h"
#include "base/core.h"

/// A growable pair array. A push that cannot grow sets `failed` instead of
/// dropping the pair silently; the merge turns that into BP_ERR_OUT_OF_MEMORY.
/// Padded to a cache line: chunk buffers sit side by side in a 64-byte-aligned
/// array and every push writes `count`, so at 32 bytes two threads on
/// neighbouring chunks would share a line (perf/README.md, "Pair buffers and sorting").
/// Padding rather than _Alignas, so structs that embed one need no alignment.
typedef struct bpi_pair_buffer {
	bp_pair *data;
	size_t count;
	size_t capacity;
	/// Candidate pairs the chunk tested (bp_frame_stats.candidate_tests): every
	/// algorithm writes its count here once per chunk, and the step sums them.
	uint64_t tests;
	/// The account `data` is charged to (NULL: none). A buffer moved by struct
	/// copy takes its account along; freeing keeps it.
	bpi_budget *budget;
	/// A growth failed, here or (seen through the budget) in another chunk of
	/// the step: the pairs are incomplete and no push asks for memory again.
	/// Finders test it once per entity (a line their pushes keep hot) and stop.
	bool failed;
	char padding[BP_CACHE_LINE - 3 * sizeof(size_t) - sizeof(uint64_t) - sizeof(void *) - sizeof(bool)];
} bpi_pair_buffer;
_Static_assert(sizeof(bpi_pair_buffer) == BP_CACHE_LINE, "bpi_pair_buffer is one cache line");

/// One buffer per chunk, kept across steps so steady state allocates nothing.
typedef struct bpi_pair_chunks {
	bpi_pair_buffer *buffers;
	uint32_t count;     ///< buffers in use this step
	uint32_t capacity;  ///< buffers allocated
	bpi_budget *budget; ///< the account of every buffer in use (set before the reset)
} bpi_pair_chunks;

/// Room for `more` pairs past `count`, keeping the pairs. False (buffer
/// untouched, `failed` not set, the budget's step stopped) when memory runs out,
/// and at once for a buffer that failed.
bool bpi_pair_buffer_reserve(bpi_pair_buffer *buffer, size_t more);
/// Room for one more pair; on failure sets `failed` (the push then drops it).
/// A buffer that failed, or whose budget stopped, asks for no memory again.
bool bpi_pair_buffer_grow(bpi_pair_buffer *buffer);
/// Frees the pairs; the buffer stays in its account.
void bpi_pair_buffer_free(bpi_pair_buffer *buffer);
/// Whether a step may write `count` pairs into the buffer under its account:
/// false, the step stopped as over its limit, when the account holds more than
/// its limit (lowered since it was filled). No pairs always fit, and then a
/// buffer above the limit gives its block back.
bool bpi_pair_buffer_may_hold(bpi_pair_buffer *buffer, size_t count);
/// Makes `result` the caller's pairs, and the caller's old buffer `result`, the
/// next step's scratch; when the account is above its limit the scratch gives
/// its block back.
void bpi_pair_buffer_hand_over(bpi_pair_buffer *result, bpi_pair_buffer *caller);
/// Charges the buffer's memory to `budget` from now on.
void bpi_pair_buffer_adopt(bpi_pair_buffer *buffer, bpi_budget *budget);

/// True when the finder writing this buffer should stop: a growth failed here
/// or in another chunk of the step. Marks the buffer failed in the second case,
/// so a chunk that stops early is never taken as complete. Finders check it when
/// a chunk starts; a growth checks it too, so a chunk under way stops at its
/// next growth (checked per entity, it cost 2-4% more instructions in sap,
/// quadtree, shifts and the closest-pair finder).
static inline bool bpi_pair_buffer_stopped(bpi_pair_buffer *buffer)
{
	if (!buffer->failed && bpi_budget_stopped(buffer->budget))
		buffer->failed = true;
	return buffer->failed;
}

/// Appends (a, b) as (min, max). a != b.
static inline void bpi_pair_push(bpi_pair_buffer *buffer, uint32_t a, uint32_t b)
{
	if (buffer->count == buffer->capacity && !bpi_pair_buffer_grow(buffer))
		return;
	bp_pair *pair = &buffer->data[buffer->count++];
	pair->lo = a < b ? a : b;
	pair->hi = a < b ? b : a;
}

/// Makes `count` empty buffers (no pairs, no tests), charged to chunks->budget, available.
bp_status bpi_pair_chunks_reset(bpi_pair_chunks *chunks, uint32_t count);
/// The candidate tests of every buffer in use.
uint64_t bpi_pair_chunks_tests(const bpi_pair_chunks *chunks);
void bpi_pair_chunks_free(bpi_pair_chunks *chunks);

/// Concatenates the chunk buffers in chunk order into `out` (prefix sum, then a
/// parallel copy); `out` joins the chunks' budget when they have one. Fails with
/// BP_ERR_OUT_OF_MEMORY if any push failed or `out` cannot grow; `out` then
/// keeps its pairs.
bp_status bpi_pair_chunks_merge(const bpi_pair_chunks *chunks, bpi_pair_buffer *out, int threads);
/// The same after `first` pairs left for the caller to write: `out` ends with first + the
/// chunks' pairs, the chunks' from index `first` on, the first `first` unspecified.
bp_status bpi_pair_chunks_merge_after(const bpi_pair_chunks *chunks, bpi_pair_buffer *out, size_t first, int threads);

/// Sorts pairs by (lo, hi) in O(count): large lists by buckets of lo finished in
/// cache, on up to `threads` threads; small ones by an LSD radix sort of the key
/// cut to the bits the indices use (pairs_sort.c). `scratch` holds count pairs.
/// False (pairs untouched) when a small table cannot be allocated or count >
/// UINT32_MAX.
bool bpi_pairs_sort_canonical(bp_pair *pairs, size_t count, bp_pair *scratch, int threads);
/// The buckets take a list once a bucket holds, per thread, this many pairs on average:
/// each bucket clears and sums two tables of 1,024 counters, which sparser lists (a
/// step's pairs of a few active entities among a million) do not pay for; LSD sorts
/// those (perf/README.md, "Pair buffers and sorting").
#define BPI_PAIRS_BUCKET_PAIRS_MIN 768
/// Test hook: the buckets take lists down to `pairs` per bucket and thread (0: every
/// list they can; UINT32_MAX: none). Warning: call only while no sort runs.
void bpi_pairs_set_bucket_pairs_min(uint32_t pairs);
/// The same order by comparison, in place: O(count log count), and needs no memory.
void bpi_pairs_sort_in_place(bp_pair *pairs, size_t count);

/// Merges two lists sorted by (lo, hi) with no pair in common into `out` (room for
/// na + nb), sorted, leaving out the pairs of `a` that the bit set `drop` (when not NULL,
/// base/bits.h) marks at lo or hi. Runs on up to `threads` threads in fixed chunks of `a` (pairs_merge.c);
/// `counts` holds bpi_pairs_merge_chunks(na) entries of scratch. Returns the pairs
/// written to `out`.
size_t bpi_pairs_merge(const bp_pair *a, size_t na, const bp_pair *b, size_t nb, const uint64_t *drop, bp_pair *out,
	size_t *counts, int threads);
/// The scratch entries bpi_pairs_merge needs for `na` pairs in its first list.
uint32_t bpi_pairs_merge_chunks(size_t na);

#endif
