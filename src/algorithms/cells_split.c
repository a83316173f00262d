// SPDX-License-Identifier: MIT
// The cell build's sort in two levels, for more threads than the counting sort has
// partitions: the entities go, with their records, into groups of buckets sharing their
// high bits, each fixed chunk of entities on its own thread; then each group is
// counted and placed by its low bits on its own thread, within the group's few lines.
// Both levels are stable, so the bucket order is the counting sort's (cells_build.c).
#include "algorithms/cells.h"
#include "parallel/parallel.h"

#include <stdatomic.h>

/// Entities per chunk of the first level: fixed, so its counts are the same for any
/// thread count.
#define SPLIT_GRAIN 65536u
/// At most 2^this groups: the first level keeps a count per group and chunk.
#define SPLIT_GROUP_BITS_MAX 12
/// Each group spans at least 2^this buckets.
#define SPLIT_LOW_BITS_MIN 9
/// At most 2^this buckets per group: the second level's counts live on the stack.
#define SPLIT_LOW_BITS_MAX 12
/// Groups per task of the second level.
#define SPLIT_GROUPS_PER_TASK 8u
/// From this many entities by default (below, the one-partition counting sort runs on one
/// thread as fast as a team starts).
#define SPLIT_MIN_ENTITIES 65536u

static _Atomic uint32_t split_min = 0; // 0: the defaults

void bpi_cells_set_split_min(uint32_t entities) { atomic_store(&split_min, entities); }

/// The bits of a bucket below its group's.
static int low_bits(uint32_t bucket_count)
{
	return BP_MAX(SPLIT_LOW_BITS_MIN, bpi_bit_width(bucket_count) - SPLIT_GROUP_BITS_MAX);
}

bool bpi_cells_split_fits(const bpi_cells *c, uint32_t n, int threads)
{
	const uint32_t forced = atomic_load_explicit(&split_min, memory_order_relaxed);
	if (low_bits(c->bucket_count) > SPLIT_LOW_BITS_MAX)
		return false;
	return forced ? n >= forced : threads > BPI_CELLS_MAX_PARTS && n >= SPLIT_MIN_ENTITIES;
}

typedef struct split_job {
	bpi_cells *c;
	const bpi_scene *s;
	int shift;        ///< bucket >> shift: its group
	uint32_t groups;
	uint32_t *counts; ///< [chunk][group]: counts, then where the chunk's next entity of a group goes
	uint64_t *nonempty; ///< per task of the second level
} split_job;

static void count_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const split_job *job = ctx;
	uint32_t *h = job->counts + (size_t)chunk * job->groups;
	memset(h, 0, job->groups * sizeof *h);
	const uint32_t *key = job->c->key.data;
	for (uint32_t i = begin; i < end; ++i)
		h[key[i] >> job->shift]++;
}

BPI_CELLS_INLINE void group_range(const split_job *job, uint32_t *cursor, uint32_t begin, uint32_t end, bool hashed,
	int dims)
{
	bpi_cells *c = job->c;
	const bpi_scene *s = job->s;
	const uint32_t *key = c->key.data;
	const uint16_t *meta = c->meta.data;
	const float *min[3] = {s->min[0], s->min[1], s->min[2]};
	const float *max[3] = {s->max[0], s->max[1], s->max[2]};
	float *rec = c->split_rec.data;
	uint32_t *to_key = c->split_key.data, *order = c->split_order.data;
	for (uint32_t i = begin; i < end; ++i) {
		const uint32_t at = cursor[key[i] >> job->shift]++;
		bpi_cells_put_record(rec, order, at, min, max, i, meta[i], dims);
		to_key[at] = key[i];
		if (hashed)
			c->split_meta.data[at] = meta[i];
	}
}

static void group_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const split_job *job = ctx;
	uint32_t *cursor = job->counts + (size_t)chunk * job->groups;
	if (job->c->hashed)
		job->s->dims == 3 ? group_range(job, cursor, begin, end, true, 3) : group_range(job, cursor, begin, end, true, 2);
	else
		job->s->dims == 3 ? group_range(job, cursor, begin, end, false, 3)
				  : group_range(job, cursor, begin, end, false, 2);
}

/// Group g: its buckets' starts, then each record at its place among them.
BPI_CELLS_INLINE uint64_t place_group(const split_job *job, uint32_t g, bool hashed, int dims)
{
	bpi_cells *c = job->c;
	const uint32_t first = g << job->shift, buckets = BP_MIN(1u << job->shift, c->bucket_count - first);
	const uint32_t begin = c->split_start.data[g], end = c->split_start.data[g + 1];
	uint32_t cursor[1u << SPLIT_LOW_BITS_MAX];
	memset(cursor, 0, buckets * sizeof *cursor);
	const uint32_t *key = c->split_key.data;
	for (uint32_t at = begin; at < end; ++at)
		cursor[key[at] - first]++;
	uint64_t filled = 0;
	for (uint32_t b = 0, running = begin; b < buckets; ++b) {
		const uint32_t n = cursor[b];
		c->start.data[first + b] = running;
		cursor[b] = running;
		running += n;
		filled += n != 0;
	}
	const size_t stride = dims == 3 ? BPI_CELLS_REC3 : BPI_CELLS_REC2;
	for (uint32_t at = begin; at < end; ++at) {
		const uint32_t to = cursor[key[at] - first]++;
		const float *r = c->split_rec.data + at * stride;
		memcpy(c->rec.data + (size_t)to * stride, r, stride * sizeof *r);
		if (dims == 2)
			c->order.data[to] = c->split_order.data[at];
		if (hashed) {
			const float lo[3] = {r[0], r[1], dims == 3 ? r[2] : 0.0f};
			bpi_cells_put_home(c->hcell.data + (size_t)to * 4, c, lo, c->split_meta.data[at], dims);
		}
	}
	return filled;
}

static void place_task(uint32_t begin, uint32_t end, uint32_t task, void *ctx)
{
	const split_job *job = ctx;
	uint64_t filled = 0;
	const bool hashed = job->c->hashed;
	for (uint32_t g = begin; g < end; ++g) {
		if (hashed)
			filled += job->s->dims == 3 ? place_group(job, g, true, 3) : place_group(job, g, true, 2);
		else
			filled += job->s->dims == 3 ? place_group(job, g, false, 3) : place_group(job, g, false, 2);
	}
	job->nonempty[task] = filled;
}

bool bpi_cells_split_sort(bpi_cells *c, const bpi_scene *s, uint64_t *nonempty)
{
	const uint32_t n = s->count;
	const int shift = low_bits(c->bucket_count);
	const uint32_t groups = ((c->bucket_count - 1) >> shift) + 1, chunks = bpi_chunk_count(n, SPLIT_GRAIN);
	const uint32_t tasks = bpi_chunk_count(groups, SPLIT_GROUPS_PER_TASK);
	const size_t floats = s->dims == 3 ? BPI_CELLS_REC3 : BPI_CELLS_REC2;
	if (!bpi_array_reserve(&c->split_rec, (size_t)n * floats) || !bpi_array_reserve(&c->split_key, n) ||
		(s->dims == 2 && !bpi_array_reserve(&c->split_order, n)) ||
		(c->hashed && !bpi_array_reserve(&c->split_meta, n)) || !bpi_array_reserve(&c->split_start, groups + 1) ||
		!bpi_array_reserve(&c->hist, (size_t)chunks * groups) || !bpi_array_reserve(&c->sums, tasks))
		return false;
	split_job job = {c, s, shift, groups, c->hist.data, c->sums.data};
	bpi_parallel_for(n, SPLIT_GRAIN, s->threads, count_chunk, &job);
	uint32_t running = 0;
	for (uint32_t g = 0; g < groups; ++g) {
		c->split_start.data[g] = running;
		for (uint32_t k = 0; k < chunks; ++k) {
			uint32_t *h = &job.counts[(size_t)k * groups + g], count = *h;
			*h = running;
			running += count;
		}
	}
	c->split_start.data[groups] = running;
	bpi_parallel_for(n, SPLIT_GRAIN, s->threads, group_chunk, &job);
	bpi_parallel_for(groups, SPLIT_GROUPS_PER_TASK, s->threads, place_task, &job);
	*nonempty = 0;
	for (uint32_t t = 0; t < tasks; ++t)
		*nonempty += job.nonempty[t];
	c->start.data[c->bucket_count] = n;
	return true;
}
