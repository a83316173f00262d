// SPDX-License-Identifier: MIT
// Pairs into canonical order, by (lo, hi): the O(count) sort of the library's own steps
// and of bp_pairs_sort, and the in-place comparison sort they fall back on without a
// second buffer. Incremental worlds and views sort every step's
// pairs, so this is on the step's path: 1.5M pairs at 1M entities.
//
// Large lists go by lo's high bits first (one scatter through memory), then each bucket,
// a few KB, is finished in cache: a stable counting pass by hi's high bits, then one by
// lo's low bits, and an insertion pass for the pairs that share lo and hi's high bits
// (rare, so its branch is predicted). Buckets are independent and run in parallel.
// One scatter through memory beats the LSD radix sort's four passes
// (perf/README.md, "Pair buffers and sorting"). Small lists, sparse ones (too few pairs
// per bucket to pay for its counters), and indices too wide for the buckets keep the LSD sort;
// the sparsest of them by lo alone, then by hi within each lo by insertion.
#include "parallel/pairs.h"
#include <broadphase/world.h> // the public calls defined here
#include "parallel/parallel.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t canonical_key(bp_pair p, int hi_bits)
{
	return (uint64_t)p.lo << hi_bits | p.hi;
}

// ---- small lists: LSD radix ------------------------------------------------------

/// At most this many bits per digit: 2,048 counters per pass stay in L1.
#define LSD_DIGIT_BITS 11
#define LSD_MAX_PASSES 6
/// Moves the insertion pass by hi may make per pair (and on top) before the sort by
/// the whole key replaces it.
#define RUN_MOVES(count) ((uint64_t)(count) + 1024)
/// Lists of at most 2^lo_bits >> SPARSE_SHIFT pairs sort by lo first.
#define SPARSE_SHIFT 2

/// A stable radix sort by bits [low_bits, key_bits) of the key (lo << hi_bits) | hi,
/// in passes of at most LSD_DIGIT_BITS bits: the whole key of a million entities has
/// 40 bits, four passes of 10 where bytes took five.
static void radix_by_key_bits(bp_pair *pairs, size_t count, bp_pair *scratch, int key_bits, int low_bits, int hi_bits)
{
	const int bits = key_bits - low_bits;
	const int passes = (bits + LSD_DIGIT_BITS - 1) / LSD_DIGIT_BITS;
	if (passes == 0)
		return; // every pair shares these bits
	const int digit_bits = (bits + passes - 1) / passes;
	const uint64_t digit_mask = ((uint64_t)1 << digit_bits) - 1;
	uint32_t histogram[LSD_MAX_PASSES][1 << LSD_DIGIT_BITS];
	memset(histogram, 0, (size_t)passes * sizeof histogram[0]);
	for (size_t i = 0; i < count; ++i) {
		uint64_t key = canonical_key(pairs[i], hi_bits) >> low_bits;
		for (int k = 0; k < passes; ++k)
			histogram[k][(key >> (k * digit_bits)) & digit_mask]++;
	}
	bp_pair *from = pairs, *to = scratch;
	const uint64_t first = canonical_key(pairs[0], hi_bits) >> low_bits;
	for (int k = 0; k < passes; ++k) {
		uint32_t *h = histogram[k];
		const int shift = low_bits + k * digit_bits;
		if (h[(first >> (k * digit_bits)) & digit_mask] == count)
			continue; // a digit every pair shares
		uint32_t offset = 0;
		for (uint64_t b = 0; b <= digit_mask; ++b) {
			uint32_t n = h[b];
			h[b] = offset;
			offset += n;
		}
		for (size_t i = 0; i < count; ++i)
			to[h[(canonical_key(from[i], hi_bits) >> shift) & digit_mask]++] = from[i];
		bp_pair *t = from;
		from = to;
		to = t;
	}
	if (from != pairs)
		memcpy(pairs, from, count * sizeof *pairs);
}

/// Pairs in order of lo put in order of hi within each lo, by insertion: in order
/// of lo, a pair's key is below the one before it only when they share lo. False
/// when that took more than `most` moves (the pairs still in order of lo).
static bool runs_by_hi(bp_pair *pairs, size_t count, uint64_t most)
{
	uint64_t moves = 0;
	for (size_t i = 1; i < count; ++i) {
		const bp_pair v = pairs[i];
		const uint64_t key = canonical_key(v, 32);
		if (canonical_key(pairs[i - 1], 32) <= key)
			continue;
		size_t j = i;
		do {
			pairs[j] = pairs[j - 1];
			--j;
		} while (j > 0 && canonical_key(pairs[j - 1], 32) > key);
		pairs[j] = v;
		moves += i - j;
		if (moves > most)
			return false;
	}
	return true;
}

/// A sparse list (at most one pair per four values lo can take) sorts by lo alone,
/// then by hi within each lo: the pairs of an incremental step come mostly in order
/// of hi there (each active entity writes its pairs in list order), so the passes
/// over hi are saved. Denser lists, whose insertion pass mispredicts at every pair
/// out of order, and lists past the budget of moves take the whole key.
static void sort_lsd(bp_pair *pairs, size_t count, bp_pair *scratch, int lo_bits, int hi_bits)
{
	const int key_bits = lo_bits + hi_bits;
	if ((uint64_t)count << SPARSE_SHIFT <= (uint64_t)1 << lo_bits) {
		radix_by_key_bits(pairs, count, scratch, key_bits, hi_bits, hi_bits);
		if (runs_by_hi(pairs, count, RUN_MOVES(count)))
			return;
	}
	radix_by_key_bits(pairs, count, scratch, key_bits, 0, hi_bits);
}

// ---- large lists: buckets by lo, finished in cache ------------------------------------

/// From this many pairs on, buckets: below, the LSD passes stay in cache anyway.
#define BUCKETS_MIN_COUNT 65536
/// Bits of lo (and of hi) a bucket is finished on: 1,024 counters each.
#define BUCKET_LOW_BITS 10
/// At most 2^16 buckets (their starts in 256 KB): lo of up to 26 bits.
#define BUCKET_TOP_MAX_BITS 16
/// A bucket where some lo has more pairs than this is sorted by comparison: the
/// insertion pass is quadratic in the pairs that share lo and hi's high bits.
#define BUCKET_RUN_MAX 64
/// Buckets per parallel chunk.
#define BUCKET_GRAIN 16

static _Atomic uint32_t bucket_pairs_min = BPI_PAIRS_BUCKET_PAIRS_MIN;

void bpi_pairs_set_bucket_pairs_min(uint32_t pairs) { atomic_store(&bucket_pairs_min, pairs); }

typedef struct bucket_job {
	bp_pair *pairs;       ///< where the sorted buckets go
	bp_pair *split;       ///< the pairs scattered by lo's high bits
	const uint32_t *end;  ///< per bucket: one past its last pair
	int hi_shift;         ///< hi >> hi_shift: its high bits, below 2^BUCKET_LOW_BITS
} bucket_job;

static int compare_pairs(const void *a, const void *b)
{
	const bp_pair *p = a, *q = b;
	if (p->lo != q->lo)
		return p->lo < q->lo ? -1 : 1;
	return (p->hi > q->hi) - (p->hi < q->hi);
}

/// Turns counts into starts at `base`; returns the largest count.
static uint32_t counts_to_starts(uint32_t *h, uint32_t n, uint32_t base)
{
	uint32_t most = 0;
	for (uint32_t d = 0; d < n; ++d) {
		uint32_t c = h[d];
		most = c > most ? c : most;
		h[d] = base;
		base += c;
	}
	return most;
}

/// Sorts split[begin, end) into pairs[begin, end), with split's part as scratch.
static void sort_bucket(const bucket_job *job, uint32_t begin, uint32_t end)
{
	bp_pair *in = job->split, *out = job->pairs;
	const uint32_t digits = 1u << BUCKET_LOW_BITS, low_mask = digits - 1;
	const int hi_shift = job->hi_shift;
	uint32_t by_hi[1 << BUCKET_LOW_BITS], by_lo[1 << BUCKET_LOW_BITS];
	memset(by_hi, 0, digits * sizeof *by_hi);
	memset(by_lo, 0, digits * sizeof *by_lo);
	for (uint32_t i = begin; i < end; ++i) {
		by_hi[in[i].hi >> hi_shift]++;
		by_lo[in[i].lo & low_mask]++;
	}
	counts_to_starts(by_hi, digits, begin);
	if (counts_to_starts(by_lo, digits, begin) > BUCKET_RUN_MAX) {
		memcpy(out + begin, in + begin, (end - begin) * sizeof *out);
		qsort(out + begin, end - begin, sizeof *out, compare_pairs);
		return;
	}
	// By hi's high bits into out, then stably by lo's low bits back into the
	// split buffer (this bucket's part of it is ours), then into out with the
	// pairs that share lo and hi's high bits put in order.
	bp_pair *mid = in;
	for (uint32_t i = begin; i < end; ++i)
		out[by_hi[in[i].hi >> hi_shift]++] = in[i];
	for (uint32_t i = begin; i < end; ++i)
		mid[by_lo[out[i].lo & low_mask]++] = out[i];
	out[begin] = mid[begin];
	for (uint32_t i = begin + 1; i < end; ++i) {
		bp_pair v = mid[i];
		const uint64_t key = canonical_key(v, 32);
		uint32_t j = i;
		while (j > begin && canonical_key(out[j - 1], 32) > key) {
			out[j] = out[j - 1];
			--j;
		}
		out[j] = v;
	}
}

static void sort_buckets(uint32_t first, uint32_t last, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const bucket_job *job = ctx;
	for (uint32_t b = first; b < last; ++b) {
		uint32_t begin = b ? job->end[b - 1] : 0, end = job->end[b];
		if (end - begin > 1)
			sort_bucket(job, begin, end);
		else if (end > begin)
			job->pairs[begin] = job->split[begin];
	}
}

/// Parts the scatter by lo's high bits is cut into, one per thread: each counts
/// its slice, then writes it after the earlier parts' pairs of each bucket.
#define SPLIT_MAX_PARTS 16
/// Pairs per part at least: below, one thread splits faster than a team starts.
#define SPLIT_PART_MIN 65536

typedef struct split_job {
	const bp_pair *pairs;
	bp_pair *split;
	uint32_t *offsets; ///< [part][bucket]: counts, then where the part's next pair of a bucket goes
	uint32_t count, parts, buckets;
} split_job;

static void split_range(const split_job *job, uint32_t part, uint32_t *begin, uint32_t *end)
{
	*begin = (uint32_t)((uint64_t)job->count * part / job->parts);
	*end = (uint32_t)((uint64_t)job->count * (part + 1) / job->parts);
}

static void split_count(uint32_t first, uint32_t last, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const split_job *job = ctx;
	for (uint32_t part = first; part < last; ++part) {
		uint32_t begin, end, *h = job->offsets + (size_t)part * job->buckets;
		split_range(job, part, &begin, &end);
		memset(h, 0, job->buckets * sizeof *h);
		for (uint32_t i = begin; i < end; ++i)
			h[job->pairs[i].lo >> BUCKET_LOW_BITS]++;
	}
}

static void split_scatter(uint32_t first, uint32_t last, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const split_job *job = ctx;
	for (uint32_t part = first; part < last; ++part) {
		uint32_t begin, end, *at = job->offsets + (size_t)part * job->buckets;
		split_range(job, part, &begin, &end);
		for (uint32_t i = begin; i < end; ++i)
			job->split[at[job->pairs[i].lo >> BUCKET_LOW_BITS]++] = job->pairs[i];
	}
}

/// False (pairs untouched) when the bucket tables cannot be allocated. lo_bits is
/// above BUCKET_LOW_BITS.
static bool sort_buckets_by_lo(bp_pair *pairs, uint32_t count, bp_pair *split, int lo_bits, int hi_bits, int threads)
{
	const uint32_t buckets = 1u << (lo_bits - BUCKET_LOW_BITS);
	const uint32_t parts = BP_MAX(1u, BP_MIN((uint32_t)BP_MIN(threads, SPLIT_MAX_PARTS), count / SPLIT_PART_MIN));
	const size_t table = ((size_t)parts + 1) * buckets * sizeof(uint32_t);
	uint32_t *offsets = bpi_alloc(table);
	if (!offsets)
		return false;
	split_job split_by = {pairs, split, offsets, count, parts, buckets};
	bpi_parallel_for(parts, 1, threads, split_count, &split_by);
	// Offsets in (bucket, part) order; the last row keeps where each bucket ends.
	uint32_t *end = offsets + (size_t)parts * buckets, running = 0;
	for (uint32_t b = 0; b < buckets; ++b) {
		for (uint32_t part = 0; part < parts; ++part) {
			uint32_t *h = offsets + (size_t)part * buckets + b, n = *h;
			*h = running;
			running += n;
		}
		end[b] = running;
	}
	bpi_parallel_for(parts, 1, threads, split_scatter, &split_by);
	bucket_job job = {pairs, split, end, BP_MAX(hi_bits - BUCKET_LOW_BITS, 0)};
	bpi_parallel_for(buckets, BUCKET_GRAIN, threads, sort_buckets, &job);
	bpi_free(offsets, table);
	return true;
}

bool bpi_pairs_sort_canonical(bp_pair *pairs, size_t count, bp_pair *scratch, int threads)
{
	if (count < 2)
		return true;
	if (count > UINT32_MAX)
		return false;
	uint32_t lo_any = 0, hi_any = 0;
	for (size_t i = 0; i < count; ++i) {
		lo_any |= pairs[i].lo;
		hi_any |= pairs[i].hi;
	}
	const int lo_bits = bpi_bit_width(lo_any), hi_bits = bpi_bit_width(hi_any);
	const uint64_t fill = atomic_load_explicit(&bucket_pairs_min, memory_order_relaxed);
	if (count >= BUCKETS_MIN_COUNT && lo_bits > BUCKET_LOW_BITS && lo_bits <= BUCKET_LOW_BITS + BUCKET_TOP_MAX_BITS &&
		(uint64_t)count * (uint64_t)BP_MAX(threads, 1) >= fill << (lo_bits - BUCKET_LOW_BITS))
		return sort_buckets_by_lo(pairs, (uint32_t)count, scratch, lo_bits, hi_bits, threads);
	sort_lsd(pairs, count, scratch, lo_bits, hi_bits);
	return true;
}

/// From this many pairs the public sort takes the linear sort, with a buffer of its
/// own; below, qsort is as fast and needs none.
#define PUBLIC_LINEAR_MIN 4096

void bp_pairs_sort(bp_pair *pairs, size_t count)
{
	if (!pairs || count < 2)
		return;
	bp_pair *scratch = count >= PUBLIC_LINEAR_MIN && count <= SIZE_MAX / sizeof(bp_pair)
				   ? bpi_alloc_aligned(count * sizeof(bp_pair))
				   : NULL;
	if (!scratch || !bpi_pairs_sort_canonical(pairs, count, scratch, 1))
		bpi_pairs_sort_in_place(pairs, count);
	bpi_free_aligned(scratch, count * sizeof(bp_pair));
}

void bpi_pairs_sort_in_place(bp_pair *pairs, size_t count)
{
	if (count > 1)
		qsort(pairs, count, sizeof(bp_pair), compare_pairs);
}
