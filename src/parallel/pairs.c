// SPDX-License-Identifier: MIT
// Per-chunk pair buffers, their merge in chunk order, sorted merges and the checksum
// (the sorts are in pairs_sort.c).
#include "parallel/pairs.h"
#include <broadphase/world.h> // the public calls defined here
#include "parallel/parallel.h"

#include <stdlib.h>
#include <string.h>

bool bpi_pair_buffer_reserve(bpi_pair_buffer *buffer, size_t more)
{
	if (buffer->capacity - buffer->count >= more)
		return true;
	if (buffer->failed)
		return false; // its pairs are void already: asking again would only fail again
	size_t capacity = buffer->capacity ? buffer->capacity : 256;
	while (capacity - buffer->count < more) {
		if (capacity > SIZE_MAX / 2 / sizeof(bp_pair))
			return false;
		capacity *= 2;
	}
	bp_pair *grown = bpi_budget_alloc(buffer->budget, capacity * sizeof(bp_pair));
	if (!grown)
		return false;
	if (buffer->count)
		memcpy(grown, buffer->data, buffer->count * sizeof(bp_pair));
	bpi_budget_free(buffer->budget, buffer->data, buffer->capacity * sizeof(bp_pair));
	buffer->data = grown;
	buffer->capacity = capacity;
	return true;
}

bool bpi_pair_buffer_grow(bpi_pair_buffer *buffer)
{
	// Once failed, never again this step: every later push would otherwise ask
	// for the same large block (16.9M refused mmaps for 72M pairs, 100x the
	// time of a step that succeeds).
	if (!bpi_pair_buffer_stopped(buffer) && bpi_pair_buffer_reserve(buffer, 1))
		return true;
	buffer->failed = true;
	return false;
}

void bpi_pair_buffer_free(bpi_pair_buffer *buffer)
{
	bpi_budget_free(buffer->budget, buffer->data, buffer->capacity * sizeof(bp_pair));
	*buffer = (bpi_pair_buffer){.budget = buffer->budget};
}

void bpi_pair_buffer_adopt(bpi_pair_buffer *buffer, bpi_budget *budget)
{
	bpi_budget_move(buffer->budget, budget, buffer->capacity * sizeof(bp_pair));
	buffer->budget = budget;
}

bool bpi_pair_buffer_may_hold(bpi_pair_buffer *buffer, size_t count)
{
	if (count)
		return bpi_budget_enforce(buffer->budget);
	if (buffer->capacity && bpi_budget_above_limit(buffer->budget))
		bpi_pair_buffer_free(buffer); // holding nothing, it gives its block back
	return true;
}

void bpi_pair_buffer_hand_over(bpi_pair_buffer *result, bpi_pair_buffer *caller)
{
	bpi_pair_buffer old = *caller;
	*caller = *result;
	*result = old;
	if (bpi_budget_above_limit(result->budget))
		bpi_pair_buffer_free(result);
}

bp_status bpi_pair_chunks_reset(bpi_pair_chunks *chunks, uint32_t count)
{
	if (count > chunks->capacity) {
		bpi_pair_buffer *grown = bpi_grow_aligned(chunks->buffers, chunks->capacity, count, sizeof(bpi_pair_buffer));
		if (!grown)
			return BP_ERR_OUT_OF_MEMORY;
		memset(grown + chunks->capacity, 0, (count - chunks->capacity) * sizeof(bpi_pair_buffer));
		chunks->buffers = grown;
		chunks->capacity = count;
	}
	// Above the limit (lowered since), the step starts by giving back the blocks
	// it keeps for reuse: it then holds only what it finds.
	const bool over = bpi_budget_above_limit(chunks->budget);
	for (uint32_t i = 0; i < count; ++i) {
		bpi_pair_buffer_adopt(&chunks->buffers[i], chunks->budget);
		if (over)
			bpi_pair_buffer_free(&chunks->buffers[i]);
		chunks->buffers[i].count = 0;
		chunks->buffers[i].tests = 0;
		chunks->buffers[i].failed = false;
	}
	chunks->count = count;
	return BP_OK;
}

uint64_t bpi_pair_chunks_tests(const bpi_pair_chunks *chunks)
{
	uint64_t tests = 0;
	for (uint32_t i = 0; i < chunks->count; ++i)
		tests += chunks->buffers[i].tests;
	return tests;
}

void bpi_pair_chunks_free(bpi_pair_chunks *chunks)
{
	for (uint32_t i = 0; i < chunks->capacity; ++i)
		bpi_pair_buffer_free(&chunks->buffers[i]);
	bpi_free_aligned(chunks->buffers, chunks->capacity * sizeof(bpi_pair_buffer));
	*chunks = (bpi_pair_chunks){.budget = chunks->budget};
}

/// The parallel merge's copies: buffer i goes to offsets[i].
typedef struct merge_job {
	const bpi_pair_buffer *buffers;
	const size_t *offsets;
	bp_pair *dst;
} merge_job;

static void merge_copy(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const merge_job *job = ctx;
	for (uint32_t i = begin; i < end; ++i)
		if (job->buffers[i].count)
			memcpy(job->dst + job->offsets[i], job->buffers[i].data, job->buffers[i].count * sizeof(bp_pair));
}

bp_status bpi_pair_chunks_merge(const bpi_pair_chunks *chunks, bpi_pair_buffer *out, int threads)
{
	return bpi_pair_chunks_merge_after(chunks, out, 0, threads);
}

bp_status bpi_pair_chunks_merge_after(const bpi_pair_chunks *chunks, bpi_pair_buffer *out, size_t first, int threads)
{
	size_t total = first;
	for (uint32_t i = 0; i < chunks->count; ++i) {
		if (chunks->buffers[i].failed)
			return BP_ERR_OUT_OF_MEMORY;
		total += chunks->buffers[i].count;
	}
	if (bpi_budget_stopped(chunks->budget)) // a finder stopped before it looked at its buffer
		return BP_ERR_OUT_OF_MEMORY;
	if (chunks->budget)
		bpi_pair_buffer_adopt(out, chunks->budget);
	if (!bpi_pair_buffer_may_hold(out, total))
		return BP_ERR_OUT_OF_MEMORY;
	if (total > out->capacity) {
		// Headroom, as pair counts drift frame to frame: the list grows again only
		// for a count 1/16 past its most, so at most a few times over any run.
		// A quarter cost 3 bytes per entity more at 1M uniform (1.5 pairs each).
		size_t capacity = total + total / 16;
		bp_pair *grown = bpi_budget_alloc(out->budget, capacity * sizeof(bp_pair));
		if (!grown)
			return BP_ERR_OUT_OF_MEMORY;
		bpi_budget_free(out->budget, out->data, out->capacity * sizeof(bp_pair));
		out->data = grown;
		out->capacity = capacity;
	}
	// Copy in chunk order from offsets given by a prefix sum; each chunk is
	// independent, so the copies run in parallel.
	const uint32_t n = chunks->count;
	if (threads > 1 && total > 65536) {
		size_t *offsets = bpi_alloc(((size_t)n + 1) * sizeof(size_t));
		if (!offsets)
			return BP_ERR_OUT_OF_MEMORY;
		offsets[0] = first;
		for (uint32_t i = 0; i < n; ++i)
			offsets[i + 1] = offsets[i] + chunks->buffers[i].count;
		merge_job job = {chunks->buffers, offsets, out->data};
		bpi_parallel_for(n, 4, threads, merge_copy, &job);
		bpi_free(offsets, ((size_t)n + 1) * sizeof(size_t));
	} else {
		size_t offset = first;
		for (uint32_t i = 0; i < n; ++i) {
			if (chunks->buffers[i].count)
				memcpy(out->data + offset, chunks->buffers[i].data, chunks->buffers[i].count * sizeof(bp_pair));
			offset += chunks->buffers[i].count;
		}
	}
	out->count = total;
	out->failed = false;
	return BP_OK;
}

uint64_t bp_splitmix64(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

uint64_t bp_pairs_checksum(const bp_pair *pairs, size_t count, const uint32_t *ids)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < count; ++i) {
		uint64_t a = ids ? ids[pairs[i].lo] : pairs[i].lo;
		uint64_t b = ids ? ids[pairs[i].hi] : pairs[i].hi;
		uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
		sum += bp_splitmix64((lo << 32) | hi);
	}
	return sum;
}
