// SPDX-License-Identifier: MIT
// The build behind grid and hash: scene statistics, levels, and a parallel counting sort
// of the entities into cell (bucket) order, writing the records cells_find.c reads.
#include "algorithms/cells.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "parallel/parallel.h"
#include "parallel/sort.h"

// Level k has cells CELLS_LEVEL_FACTOR^k times the base edge; the base edge is
// CELLS_BASE_SCALE times the median of the entities' largest extents. The median is robust
// to a few huge boxes, factor 2 keeps a level's cells at most 2x its entities, and 1.25 lets
// the mixed scene's big boxes land on levels that fit them better at no cost to the other
// scenes (perf/README.md, "Cells: levels and probing").
#define CELLS_LEVEL_FACTOR 2.0f
#define CELLS_BASE_SCALE 1.25f
#define CELLS_BASE_QUANTILE 0.5f
/// At most this many cells per entity (plus a constant) over the scene bounds and
/// all levels; beyond it the base edge doubles (the fallback for tiny cells over a
/// big or sparse scene; for hash the cells are only counted, never stored).
#define CELLS_GRID_PER_ENTITY 2.0
#define CELLS_SAMPLE 2048
/// Entities per chunk of the statistics and key passes: small enough that 100K entities
/// make chunks for every thread to share evenly; their partials merge in chunk order.
#define CELLS_STATS_GRAIN 16384
#define CELLS_KEY_GRAIN 8192
#define CELLS_PREFIX_GRAIN 65536
/// Below this many entities the counting sort runs as one partition: each more
/// partition costs a zeroed histogram of every bucket.
#define CELLS_PARTS_MIN_ENTITIES 16384
/// How far ahead the random histogram and scatter accesses are prefetched.
#define CELLS_PREFETCH 16
_Static_assert(BPI_CELLS_MAX_LEVELS <= (1 << BPI_CELLS_LEVEL_BITS) &&
		       BPI_CELLS_LEVEL_BITS + 3 * BPI_CELLS_REACH_BITS <= 16 && BPI_CELLS_REACH_MAX < (1 << BPI_CELLS_REACH_BITS),
	"level and reach fit a uint16_t");

void bpi_cells_free(bpi_cells *c)
{
	bpi_array_free(&c->key);
	bpi_array_free(&c->meta);
	bpi_array_free(&c->rec);
	bpi_array_free(&c->order);
	bpi_array_free(&c->hcell);
	bpi_array_free(&c->start);
	bpi_array_free(&c->hist);
	bpi_array_free(&c->partials);
	bpi_array_free(&c->key_partials);
	bpi_array_free(&c->sums);
	bpi_array_free(&c->split_rec);
	bpi_array_free(&c->split_key);
	bpi_array_free(&c->split_order);
	bpi_array_free(&c->split_meta);
	bpi_array_free(&c->split_start);
}

void bpi_cells_index_release(bpi_index *index)
{
	bpi_cells_free(&((bpi_cells_index *)index)->cells);
}

static size_t rec_floats(int dims)
{
	return dims == 3 ? BPI_CELLS_REC3 : BPI_CELLS_REC2;
}

// Per-entity scratch, grown only when N grows (by half, so a slowly growing world
// does not reallocate every step). 2D keeps the entity index in `order`, 3D in the
// record; only hash stores home cells.
static bool reserve_entities(bpi_cells *c, uint32_t n, int dims)
{
	return bpi_array_reserve(&c->key, n) && bpi_array_reserve(&c->meta, n) &&
	       bpi_array_reserve(&c->rec, (size_t)n * rec_floats(dims)) && (dims == 3 || bpi_array_reserve(&c->order, n)) &&
	       (!c->hashed || bpi_array_reserve(&c->hcell, 4 * (size_t)n));
}
// ---- statistics: scene bounds and largest extent, per fixed chunk -------------

typedef struct stats_job {
	const bpi_scene *scene;
	bpi_cells_partial *partials;
} stats_job;

static void stats_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const stats_job *job = ctx;
	const bpi_scene *s = job->scene;
	bpi_cells_partial p = {.max_extent = 0};
	for (int axis = 0; axis < 3; ++axis) {
		p.min[axis] = FLT_MAX;
		p.max[axis] = -FLT_MAX;
	}
	for (int axis = 0; axis < s->dims; ++axis) {
		const float *lo = s->min[axis], *hi = s->max[axis];
		float mn = FLT_MAX, mx = -FLT_MAX, ext = 0;
		for (uint32_t i = begin; i < end; ++i) {
			mn = lo[i] < mn ? lo[i] : mn;
			mx = hi[i] > mx ? hi[i] : mx;
			float e = hi[i] - lo[i];
			ext = e > ext ? e : ext;
		}
		p.min[axis] = mn;
		p.max[axis] = mx;
		p.max_extent = ext > p.max_extent ? ext : p.max_extent;
	}
	job->partials[chunk] = p;
}

static float entity_extent(const bpi_scene *s, uint32_t i)
{
	float e = 0;
	for (int axis = 0; axis < s->dims; ++axis) {
		float d = s->max[axis][i] - s->min[axis][i];
		e = d > e ? d : e;
	}
	return e;
}

// Median of the largest extent over an evenly strided sample: ~2k entities tell
// the typical size well, and cost microseconds at any N.
static float sample_extent(const bpi_scene *s, float quantile)
{
	float sample[CELLS_SAMPLE];
	uint32_t step = s->count / CELLS_SAMPLE + 1, m = 0;
	for (uint32_t i = 0; i < s->count && m < CELLS_SAMPLE; i += step)
		sample[m++] = entity_extent(s, i);
	return m ? bpi_select_float(sample, m, (uint32_t)(quantile * (float)(m - 1))) : 0;
}

// ---- levels -----------------------------------------------------------------

// Sets up the levels from a base edge. Returns false when the grid would need
// too many cells or a coordinate would leave the clamp range: then the caller
// doubles the edge.
static bool setup_levels(bpi_cells *c, float base, float max_extent, const float *smin, const float *smax,
	uint32_t n)
{
	int dims = c->dims;
	double cap = BP_MIN(CELLS_GRID_PER_ENTITY * n + 4096.0, (double)(1u << 31));
	double total = 0;
	c->level_count = 0;
	float edge = base;
	for (int k = 0; k < BPI_CELLS_MAX_LEVELS; ++k) {
		bpi_cell_level *l = &c->levels[k];
		*l = (bpi_cell_level){.cell = edge, .inv = 1.0f / edge};
		if (!(l->inv > 0) || l->inv > FLT_MAX)
			return false;
		bool single = true;
		double cells = 1;
		for (int axis = 0; axis < 3; ++axis) {
			if (axis >= dims) {
				l->lo[axis] = l->hi[axis] = 0;
				continue;
			}
			if (c->hashed) {
				float far = BP_MAX(fabsf(smin[axis]), fabsf(smax[axis]));
				if ((double)far * l->inv >= BPI_CELLS_LIMIT / 2)
					return false;
				l->lo[axis] = -BPI_CELLS_LIMIT;
				l->hi[axis] = BPI_CELLS_LIMIT;
				// The table does not depend on the bounds, but the edge does: a
				// probe visits buckets per cell, and in a sparse scene with tiny
				// cells nearly every bucket it visits holds only other cells'
				// entries (mixed 3D 200K: 10x slower than the grid before this).
				cells *= floor(((double)smax[axis] - smin[axis]) * l->inv) + 1;
			} else {
				int32_t top = bpi_cell_coord(smax[axis], c->origin[axis], l->inv, 0, BPI_CELLS_LIMIT);
				if (top >= BPI_CELLS_LIMIT / 2)
					return false;
				l->lo[axis] = 0;
				l->hi[axis] = top;
				single = single && top == 0;
			}
			if (!c->hashed)
				cells *= (double)l->hi[axis] - l->lo[axis] + 1;
		}
		total += cells;
		if (total > cap)
			return false;
		if (!c->hashed) {
			l->first = (uint32_t)(total - cells);
			l->stride[0] = 1;
			l->stride[1] = (uint32_t)(l->hi[0] + 1);
			l->stride[2] = l->stride[1] * (uint32_t)(l->hi[1] + 1);
		}
		c->level_count = k + 1;
		// Enough levels: the largest entity fits a cell, or (grid) one cell holds
		// the whole scene.
		if (edge >= max_extent || (!c->hashed && single))
			break;
		edge *= CELLS_LEVEL_FACTOR;
	}
	if (c->hashed) {
		uint32_t t = 64;
		while (t < n && t < (1u << 31))
			t <<= 1;
		c->bucket_count = t;
		c->bucket_mask = t - 1;
	} else {
		c->bucket_count = (uint32_t)total;
		c->bucket_mask = 0;
	}
	return true;
}

static bool choose_levels(bpi_cells *c, const bpi_scene *s, const bpi_cells_partial *whole)
{
	float base = s->cell_size > 0 ? s->cell_size : sample_extent(s, CELLS_BASE_QUANTILE) * CELLS_BASE_SCALE;
	if (!(base > 0)) {
		// Points (or mostly points): cells of the scene size over ~n^(1/dims).
		float span = 0;
		for (int axis = 0; axis < s->dims; ++axis)
			span = BP_MAX(span, whole->max[axis] - whole->min[axis]);
		double per = s->dims == 2 ? sqrt((double)s->count) : cbrt((double)s->count);
		base = (float)(span / BP_MAX(per, 1.0));
		if (!(base > 0))
			base = 1;
	}
	if (base < 1e-30f)
		base = 1e-30f;
	for (int attempt = 0; attempt < 256; ++attempt) {
		if (setup_levels(c, base, whole->max_extent, whole->min, whole->max, s->count))
			return true;
		base *= 2;
	}
	return false;
}
// ---- keys: level, home cell and bucket of each entity, per fixed chunk -------
// Computing the keys is a map over the entities: it runs in fixed chunks on every thread.
// Counting them into the partitions' histograms, below, runs per partition: the keys are
// most of the work, which per partition only BPI_CELLS_MAX_PARTS threads would share
// (perf/README.md, "Cells: the key pass").
typedef struct key_job {
	bpi_cells *cells;
	const bpi_scene *scene;
	bpi_cells_key_partial *partials; ///< per chunk: level counts and spans
} key_job;

static inline uint32_t part_begin(uint32_t n, int parts, uint32_t p)
{
	return (uint32_t)((uint64_t)n * p / (uint32_t)parts);
}

BPI_CELLS_INLINE void key_block(const bpi_cell_level *levels, int top, const float origin[3], const float *const min[3],
	const float *const max[3], uint32_t *key, uint16_t *meta, int32_t (*span)[3], uint32_t *counts, bool hashed,
	uint32_t mask, uint32_t begin, uint32_t end, int dims)
{
	for (uint32_t i = begin; i < end; ++i) {
		float ext = max[0][i] - min[0][i];
		for (int axis = 1; axis < dims; ++axis)
			ext = BP_MAX(ext, max[axis][i] - min[axis][i]);
		int k = 0;
		while (k < top && ext > levels[k].cell)
			++k;
		const bpi_cell_level *l = &levels[k];
		int32_t home[3] = {0, 0, 0};
		uint32_t reach = 0;
		for (int axis = 0; axis < dims; ++axis) {
			home[axis] = bpi_cell_coord(min[axis][i], origin[axis], l->inv, l->lo[axis], l->hi[axis]);
			int32_t far = bpi_cell_coord(max[axis][i], origin[axis], l->inv, l->lo[axis], l->hi[axis]);
			span[k][axis] = BP_MAX(span[k][axis], far - home[axis]);
			reach |= (uint32_t)BP_MIN(far - home[axis], BPI_CELLS_REACH_MAX) << (BPI_CELLS_REACH_BITS * axis);
		}
		uint32_t b = bpi_cells_bucket(l, k, hashed, mask, home[0], home[1], home[2]);
		key[i] = b;
		meta[i] = (uint16_t)((unsigned)k | reach << BPI_CELLS_LEVEL_BITS);
		counts[k]++;
	}
}

// Specialised on dims: the generic axis loop cost 1.3 mispredicted branches per
// entity (cachegrind, uniform 3D 100K).
BPI_CELLS_INLINE void key_range(key_job *job, uint32_t begin, uint32_t end, uint32_t chunk, int dims_const)
{
	bpi_cells *c = job->cells;
	const bpi_scene *s = job->scene;
	bpi_cells_key_partial *partial = &job->partials[chunk];
	memset(partial, 0, sizeof *partial);
	// Everything the loop reads lives in locals: the uint16_t stores may
	// alias anything, and would otherwise reload the level table every entity.
	const int top = c->level_count - 1, dims = dims_const;
	bpi_cell_level levels[BPI_CELLS_MAX_LEVELS];
	memcpy(levels, c->levels, sizeof levels);
	const float origin[3] = {c->origin[0], c->origin[1], c->origin[2]};
	const float *min[3] = {s->min[0], s->min[1], s->min[2]};
	const float *max[3] = {s->max[0], s->max[1], s->max[2]};
	key_block(levels, top, origin, min, max, c->key.data, c->meta.data, partial->span, partial->count, c->hashed,
		c->bucket_mask, begin, end, dims);
}

static void key_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	key_job *job = ctx;
	if (job->scene->dims == 3)
		key_range(job, begin, end, chunk, 3);
	else
		key_range(job, begin, end, chunk, 2);
}

// The histogram is bucket_count words (8 MB for the 1M mixed scene), hit at
// random: counting inside the key loop left 79% of the key pass's samples on the
// increment (perf, mixed 1M). A loop of its own keeps many misses in flight,
// and a prefetch a few keys ahead starts them earlier.
static void count_part(uint32_t p, uint32_t p_end, uint32_t chunk, void *ctx)
{
	(void)p_end;
	(void)chunk;
	const key_job *job = ctx;
	const bpi_cells *c = job->cells;
	uint32_t *hist = c->hist.data + (size_t)p * c->bucket_count;
	memset(hist, 0, (size_t)c->bucket_count * sizeof(uint32_t));
	const uint32_t *key = c->key.data;
	const uint32_t n = job->scene->count, end = part_begin(n, c->parts, p + 1);
	for (uint32_t i = part_begin(n, c->parts, p); i < end; ++i) {
		if (i + CELLS_PREFETCH < end)
			__builtin_prefetch(&hist[key[i + CELLS_PREFETCH]], 1);
		hist[key[i]]++;
	}
}

// ---- prefix sum over buckets x partitions, in fixed blocks of buckets --------

typedef struct prefix_job {
	bpi_cells *cells;
	uint64_t *sums; ///< per block: items, then the block's first offset
	uint64_t *nonempty;
	int pass;
} prefix_job;

static void prefix_block(uint32_t begin, uint32_t end, uint32_t block, void *ctx)
{
	prefix_job *job = ctx;
	bpi_cells *c = job->cells;
	const size_t stride = c->bucket_count;
	const int parts = c->parts;
	if (job->pass == 0) {
		uint64_t sum = 0, filled = 0;
		for (uint32_t b = begin; b < end; ++b) {
			uint32_t cell = 0;
			for (int p = 0; p < parts; ++p)
				cell += c->hist.data[p * stride + b];
			sum += cell;
			filled += cell != 0;
		}
		job->sums[block] = sum;
		job->nonempty[block] = filled;
		return;
	}
	uint32_t running = (uint32_t)job->sums[block];
	for (uint32_t b = begin; b < end; ++b) {
		c->start.data[b] = running;
		for (int p = 0; p < parts; ++p) {
			uint32_t n = c->hist.data[p * stride + b];
			c->hist.data[p * stride + b] = running;
			running += n;
		}
	}
}

// ---- scatter: records straight into bucket order ------------------------------

// Each entity's record is stored once, at its place in bucket order: one random
// 32-byte store per entity while the scene is read in order. Before, the index
// was scattered and then six SoA arrays gathered in bucket order: six random
// loads per entity, and the gather alone was 16% of a 1M uniform step (perf).
typedef struct scatter_job {
	bpi_cells *cells;
	const bpi_scene *scene;
	int parts;
} scatter_job;

BPI_CELLS_INLINE void scatter_range(bpi_cells *c, const bpi_scene *s, uint32_t *cursor, uint32_t begin, uint32_t end,
	bool hashed, int dims)
{
	// Locals: the float stores may alias anything the loop would otherwise reload.
	const uint32_t *key = c->key.data;
	const uint16_t *meta = c->meta.data;
	float *rec = c->rec.data;
	uint32_t *order = c->order.data;
	int32_t *hcell = c->hcell.data;
	const float *min[3] = {s->min[0], s->min[1], s->min[2]};
	const float *max[3] = {s->max[0], s->max[1], s->max[2]};
	const size_t stride = dims == 3 ? BPI_CELLS_REC3 : BPI_CELLS_REC2;
	for (uint32_t i = begin; i < end; ++i) {
		// Two stages ahead: the cursor of a later entity, then (once that has
		// arrived) the record it will be stored to.
		if (i + 2 * CELLS_PREFETCH < end)
			__builtin_prefetch(&cursor[key[i + 2 * CELLS_PREFETCH]], 1);
		if (i + CELLS_PREFETCH < end)
			__builtin_prefetch(rec + (size_t)cursor[key[i + CELLS_PREFETCH]] * stride, 1);
		uint32_t at = cursor[key[i]]++;
		bpi_cells_put_record(rec, order, at, min, max, i, meta[i], dims);
		if (hashed) {
			const float lo[3] = {min[0][i], min[1][i], dims == 3 ? min[2][i] : 0.0f};
			bpi_cells_put_home(hcell + (size_t)at * 4, c, lo, meta[i], dims);
		}
	}
}

static void scatter_part(uint32_t p, uint32_t p_end, uint32_t chunk, void *ctx)
{
	(void)p_end;
	(void)chunk;
	const scatter_job *job = ctx;
	bpi_cells *c = job->cells;
	const bpi_scene *s = job->scene;
	uint32_t *cursor = c->hist.data + (size_t)p * c->bucket_count;
	uint32_t begin = part_begin(s->count, job->parts, p), end = part_begin(s->count, job->parts, p + 1);
	if (c->hashed)
		s->dims == 3 ? scatter_range(c, s, cursor, begin, end, true, 3)
			     : scatter_range(c, s, cursor, begin, end, true, 2);
	else
		s->dims == 3 ? scatter_range(c, s, cursor, begin, end, false, 3)
			     : scatter_range(c, s, cursor, begin, end, false, 2);
}
/// The counting sort of the keys into bucket order: per-partition histograms, their prefix
/// sum, the scatter; *nonempty: the buckets with entities. False without memory.
static bool counting_sort(bpi_cells *c, const bpi_scene *s, uint64_t *nonempty_out)
{
	const int threads = s->threads;
	int parts = BP_MIN(BP_MAX(threads, 1), BPI_CELLS_MAX_PARTS);
	if (s->count < CELLS_PARTS_MIN_ENTITIES)
		parts = 1;
	c->parts = parts;
	// Per-partition histograms, for this step's counts; grown only.
	uint32_t blocks = bpi_chunk_count(c->bucket_count, CELLS_PREFIX_GRAIN);
	if (!bpi_array_reserve(&c->hist, (size_t)c->bucket_count * (size_t)parts) ||
		!bpi_array_reserve(&c->sums, 2 * (size_t)blocks))
		return false;
	key_job key = {.cells = c, .scene = s};
	bpi_parallel_for((uint32_t)parts, 1, threads, count_part, &key);
	uint64_t *sums = c->sums.data;
	prefix_job pj = {c, sums, sums + blocks, 0};
	bpi_parallel_for(c->bucket_count, CELLS_PREFIX_GRAIN, threads, prefix_block, &pj);
	uint64_t running = 0, nonempty = 0;
	for (uint32_t b = 0; b < blocks; ++b) {
		uint64_t items = sums[b];
		sums[b] = running;
		running += items;
		nonempty += pj.nonempty[b];
	}
	pj.pass = 1;
	bpi_parallel_for(c->bucket_count, CELLS_PREFIX_GRAIN, threads, prefix_block, &pj);
	c->start.data[c->bucket_count] = s->count;
	scatter_job xj = {c, s, parts};
	bpi_parallel_for((uint32_t)parts, 1, threads, scatter_part, &xj);
	*nonempty_out = nonempty;
	return true;
}

// ---- the pipeline -------------------------------------------------------------

bp_status bpi_cells_build(bpi_cells *c, bool hashed, const bpi_scene *s, bpi_build *build)
{
	const uint32_t n = s->count;
	const int threads = s->threads;
	c->hashed = hashed; // fixed per index: grid and hash never share one
	uint32_t stat_chunks = bpi_chunk_count(n, CELLS_STATS_GRAIN);
	uint32_t find_chunks = bpi_chunk_count(n, BPI_CELLS_FIND_GRAIN);
	if (!reserve_entities(c, n, s->dims) || !bpi_array_reserve(&c->partials, BP_MAX(stat_chunks, 1)))
		return BP_ERR_OUT_OF_MEMORY;
	c->dims = s->dims;
	if (n == 0) {
		// An empty index, not the last one: a caller may keep it as its resting index.
		if (!bpi_array_reserve(&c->start, 1))
			return BP_ERR_OUT_OF_MEMORY;
		c->level_count = 0;
		c->bucket_count = 0;
		c->start.data[0] = 0;
		build->chunks = 0;
		build->cell_count = 0;
		return BP_OK;
	}

	// Statistics and levels.
	stats_job sj = {s, c->partials.data};
	bpi_parallel_for(n, CELLS_STATS_GRAIN, threads, stats_chunk, &sj);
	bpi_cells_partial whole = c->partials.data[0];
	for (uint32_t i = 1; i < stat_chunks; ++i) {
		const bpi_cells_partial *p = &c->partials.data[i];
		for (int axis = 0; axis < 3; ++axis) {
			whole.min[axis] = BP_MIN(whole.min[axis], p->min[axis]);
			whole.max[axis] = BP_MAX(whole.max[axis], p->max[axis]);
		}
		whole.max_extent = BP_MAX(whole.max_extent, p->max_extent);
	}
	for (int axis = 0; axis < 3; ++axis)
		c->origin[axis] = hashed || axis >= s->dims ? 0 : whole.min[axis];
	if (!choose_levels(c, s, &whole))
		return BP_ERR_UNSUPPORTED;
	// Keys, then the sort into bucket order: a counting sort, or with more threads than it
	// has partitions one in two levels. Bucket offsets grow only.
	uint32_t key_chunks = bpi_chunk_count(n, CELLS_KEY_GRAIN);
	if (!bpi_array_reserve(&c->start, (size_t)c->bucket_count + 1) ||
		!bpi_array_reserve(&c->key_partials, key_chunks))
		return BP_ERR_OUT_OF_MEMORY;
	key_job key = {.cells = c, .scene = s, .partials = c->key_partials.data};
	bpi_parallel_for(n, CELLS_KEY_GRAIN, threads, key_chunk, &key);
	for (int k = 0; k < c->level_count; ++k) {
		bpi_cell_level *l = &c->levels[k];
		l->count = 0;
		for (int axis = 0; axis < 3; ++axis)
			l->span[axis] = 0;
		for (uint32_t chunk = 0; chunk < key_chunks; ++chunk) {
			const bpi_cells_key_partial *partial = &key.partials[chunk];
			l->count += partial->count[k];
			for (int axis = 0; axis < 3; ++axis)
				l->span[axis] = BP_MAX(l->span[axis], partial->span[k][axis]);
		}
	}

	uint64_t nonempty = 0;
	if (!(bpi_cells_split_fits(c, n, threads) ? bpi_cells_split_sort(c, s, &nonempty) : counting_sort(c, s, &nonempty)))
		return BP_ERR_OUT_OF_MEMORY;

	// Pairs are found per fixed chunk of the bucket order.
	build->chunks = find_chunks;
	// Hash: non-empty buckets; cells that collide in a bucket count once.
	build->cell_count = nonempty;
	build->cell_size = c->level_count ? c->levels[0].cell : 0.0f;
	for (int axis = 0; axis < 3; ++axis)
		build->cell_origin[axis] = c->origin[axis];
	return BP_OK;
}
