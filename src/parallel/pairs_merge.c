// SPDX-License-Identifier: MIT
// Two sorted pair lists merged into one, on the step's threads: an incremental step's pairs
// are its kept pairs (1.6M at 1M entities) with the few it found, so the merge copies most of
// a frame's pairs, and on one thread it was a serial tail of every such step.
//
// The first list is cut in fixed chunks; a chunk takes the second list's pairs below its own
// first pair and at or above it (binary searches), so chunks merge independently. Where
// pairs of the first list are left out, a counting pass finds where each chunk's pairs go
// first. The output is that of one serial merge whatever the thread count.
#include "parallel/pairs.h"
#include "base/bits.h"
#include "parallel/parallel.h"

#include <string.h>

/// Pairs of the first list per chunk.
#define MERGE_GRAIN 65536u

static bool before(bp_pair a, bp_pair b)
{
	return a.lo < b.lo || (a.lo == b.lo && a.hi < b.hi);
}

/// The first index of b[0 .. nb) not before p.
static size_t lower_bound(const bp_pair *b, size_t nb, bp_pair p)
{
	size_t lo = 0, hi = nb;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (before(b[mid], p))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool dropped(const uint64_t *drop, bp_pair p)
{
	return drop && bpi_bit_either(drop, p.lo, p.hi);
}

typedef struct merge_job {
	const bp_pair *a, *b;
	size_t na, nb;
	const uint64_t *drop;
	bp_pair *out;
	size_t *before_chunk; ///< per chunk: pairs of a kept before it (counted, then summed)
} merge_job;

/// Chunk c's range of b: from the first pair at or after a's first pair of the chunk,
/// up to the first at or after the next chunk's.
static void b_range(const merge_job *job, uint32_t c, size_t *from, size_t *to)
{
	size_t first = (size_t)c * MERGE_GRAIN, next = first + MERGE_GRAIN;
	*from = c == 0 ? 0 : lower_bound(job->b, job->nb, job->a[first]);
	*to = next >= job->na ? job->nb : lower_bound(job->b, job->nb, job->a[next]);
}

static void count_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const merge_job *job = ctx;
	for (uint32_t c = begin; c < end; ++c) {
		size_t first = (size_t)c * MERGE_GRAIN, last = BP_MIN(first + MERGE_GRAIN, job->na), kept = 0;
		for (size_t i = first; i < last; ++i)
			kept += !dropped(job->drop, job->a[i]);
		job->before_chunk[c] = kept;
	}
}

/// One chunk of `a` with its range of `b`, as a select per pair written: the compiler
/// turns it into branches on which list goes next, nearly always predicted, as the
/// second list is the short one (a step's new pairs among the kept ones). Both merges
/// compare the pairs' fields in place: through before() the compare went by vector
/// registers and the merge took twice as long (perf/README.md, "Incremental: moving worlds").
static size_t merge_all(const bp_pair *a, size_t na, const bp_pair *b, size_t nb, bp_pair *out)
{
	size_t i = 0, j = 0, k = 0;
	while (i < na && j < nb) {
		bool a_first = a[i].lo < b[j].lo || (a[i].lo == b[j].lo && a[i].hi < b[j].hi);
		out[k++] = a_first ? a[i++] : b[j++];
	}
	if (i < na)
		memcpy(out + k, a + i, (na - i) * sizeof *out);
	if (j < nb)
		memcpy(out + k, b + j, (nb - j) * sizeof *out);
	return na + nb;
}

/// The same leaving out the pairs of `a` that `drop` marks. Every pair is written and
/// the cursor steps past it unless dropped, with no branch on it: a world that churns
/// leaves up to an eighth of its kept pairs out (see incremental_rest.c), and a branch
/// on each mispredicted that often. A dropped pair's slot is taken by the next pair
/// written, so the dropped ones at the end are skipped first: their slot lies past
/// this chunk's output, in the next chunk's.
static size_t merge_dropping(const bp_pair *a, size_t na, const bp_pair *b, size_t nb, const uint64_t *drop,
	bp_pair *out)
{
	while (na > 0 && dropped(drop, a[na - 1]))
		--na;
	size_t j = 0, k = 0;
	for (size_t i = 0; i < na; ++i) {
		const uint32_t lo = a[i].lo, hi = a[i].hi;
		const bool keep = !bpi_bit_either(drop, lo, hi);
		while (j < nb && (b[j].lo < lo || (b[j].lo == lo && b[j].hi < hi)))
			out[k++] = b[j++];
		out[k] = (bp_pair){lo, hi};
		k += keep;
	}
	if (j < nb)
		memcpy(out + k, b + j, (nb - j) * sizeof *out);
	return k + (nb - j);
}

static size_t merge_range(const bp_pair *a, size_t na, const bp_pair *b, size_t nb, const uint64_t *drop,
	bp_pair *out)
{
	return drop ? merge_dropping(a, na, b, nb, drop, out) : merge_all(a, na, b, nb, out);
}

static void merge_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const merge_job *job = ctx;
	for (uint32_t c = begin; c < end; ++c) {
		size_t first = (size_t)c * MERGE_GRAIN, last = BP_MIN(first + MERGE_GRAIN, job->na), from, to;
		b_range(job, c, &from, &to);
		bp_pair *out = job->out + job->before_chunk[c] + from;
		merge_range(job->a + first, last - first, job->b + from, to - from, job->drop, out);
	}
}

uint32_t bpi_pairs_merge_chunks(size_t na)
{
	return (uint32_t)BP_MAX((na + MERGE_GRAIN - 1) / MERGE_GRAIN, 1u);
}

size_t bpi_pairs_merge(const bp_pair *a, size_t na, const bp_pair *b, size_t nb, const uint64_t *drop, bp_pair *out,
	size_t *counts, int threads)
{
	const uint32_t chunks = bpi_pairs_merge_chunks(na);
	if (threads <= 1 || chunks == 1) // one pass: no chunk needs to know where the last one ended
		return merge_range(a, na, b, nb, drop, out);
	merge_job job = {a, b, na, nb, drop, out, counts};
	if (drop) {
		bpi_parallel_for(chunks, 1, threads, count_chunk, &job);
	} else {
		for (uint32_t c = 0; c < chunks; ++c)
			counts[c] = BP_MIN(MERGE_GRAIN, na - BP_MIN(na, (size_t)c * MERGE_GRAIN));
	}
	size_t total = 0;
	for (uint32_t c = 0; c < chunks; ++c) { // counts -> pairs of a kept before each chunk
		size_t n = counts[c];
		counts[c] = total;
		total += n;
	}
	bpi_parallel_for(chunks, 1, threads, merge_chunk, &job);
	return total + nb;
}
