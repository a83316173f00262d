// SPDX-License-Identifier: MIT
// The cell pipeline behind grid and hash: scene statistics, levels, a parallel
// counting sort of entities into cell order, and the pair finder over cell rows.
//
// Exactness. Each entity lives in exactly one cell: the cell of its lower corner
// (its "home") on the coarsest-needed level for its size. For boxes a and b with
// b on level m, overlap implies, per axis and with c() the monotone cell function
// of level m:  b.min <= a.max  =>  c(b.min) <= c(a.max), and
// a.min <= b.max  =>  c(a.min) <= c(b.max) <= c(b.min) + span_m. So b's home lies
// in [c(a.min) - span_m, c(a.max)], where span_m is the largest c(max) - c(min)
// measured on level m this step. Nothing else is assumed (no rounding argument),
// so clamped or overflowing coordinates only cost speed, never pairs.
// Each pair is tested once: an entity scans its own level only at cells after its
// home in (z, y, x) order (and its home cell only after its own position), then
// every finer level in full; it never scans coarser levels. Coarse probing fine,
// not fine probing coarse: a small box probing a coarse level scans 2^dims cells
// of the coarse edge, mostly empty of overlaps (mixed scene: 104 candidate tests
// per entity that way, 12 this way).
//
// The alternative, DESIGN §4's lower-corner rule (insert an entity in every cell
// it touches, report a pair only in the cell of max(a.min, b.min)), was estimated
// and not built: with cells ~ the median extent an entity touches ~8 cells in 3D,
// so the sorted copy is 8x larger (~230 bytes per entity, over the 80-byte
// budget) and the build moves 8x the data; with cells of 2x the extent it still
// touches ~3.4 cells and tests about as many candidates as one home cell scanning
// its neighbour rows.
#include "cells.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "probes.h"

// Forced inline: the callers pass constant `hashed` and `dims`, and the copies
// specialised on them were ~2x faster than one generic loop (measured, uniform 3D).
#define BPI_CELLS_INLINE static inline __attribute__((always_inline))

#if defined(__SSE2__)
#include <emmintrin.h>
#define CELLS_SSE 1
#else
#define CELLS_SSE 0
#endif

// Level k has cells CELLS_LEVEL_FACTOR^k times the base edge; the base edge is
// CELLS_BASE_SCALE times the median of the entities' largest extents.
// Measured (grid, 1 thread, 200K, bp_scene_generate 3D, candidate tests per
// entity; CPU ms are noisy on this shared machine):
//   base = 1.2 x p90, factor 2: uniform 12.5, mixed 23.2, clustered 36.4
//   base = 1.2 x p90, factor 4: uniform 12.5, mixed 23.6, clustered 36.4
//   base = 1.5 x p50, factor 2: uniform 14.8, mixed 12.3, clustered 39.4
//   base = 1.0 x p50, factor 2: uniform 13.2, mixed 15.4, clustered 36.7 (more cells, slower build)
// The median is robust to a few huge boxes; factor 2 keeps a level's cells at
// most 2x its entities. Before coarse entities probed the finer levels (rather
// than fine ones probing coarse), mixed took 104 tests per entity.
// With the cell-by-cell finder (1M 3D, 1 thread, best of 3-5 on a loaded
// 2-core machine, ms build+find and tests per entity):
//   base = 1.5 x p50:  uniform 134 (15.2), mixed 208-227 (13.0), clustered 161 (39.0)
//   base = 1.25 x p50: uniform 152 (11.1), mixed 158-159 (21.5), clustered 161 (33.5)
// 100K: uniform 11.8 vs 12.3, mixed 15.0 vs 11.6, clustered 15.7 vs 15.6. Mixed
// gains (its big boxes land on levels that fit them better) and the others stay
// within the noise, so 1.25.
#define CELLS_LEVEL_FACTOR 2.0f
#define CELLS_BASE_SCALE 1.25f
#define CELLS_BASE_QUANTILE 0.5f
/// At most this many cells per entity (plus a constant) over the scene bounds and
/// all levels; beyond it the base edge doubles (the fallback for tiny cells over a
/// big or sparse scene; for hash the cells are only counted, never stored).
#define CELLS_GRID_PER_ENTITY 2.0
#define CELLS_SAMPLE 2048
#define CELLS_STATS_GRAIN 65536
#define CELLS_PREFIX_GRAIN 65536
/// Below this many entities the counting sort runs as one partition: each more
/// partition costs a zeroed histogram of every bucket.
#define CELLS_PARTS_MIN_ENTITIES 16384
#define CELLS_FIND_GRAIN 1024
/// Per entity the key pass packs its level and, per axis, its reach far - home
/// (capped at CELLS_REACH_MAX) into 16 bits; 3D records carry the reach.
#define CELLS_LEVEL_BITS 4
/// Key pass blocks (keys of a block stay in L1 for its counting loop) and how
/// far ahead the random histogram and scatter accesses are prefetched.
#define CELLS_KEY_BLOCK 2048
#define CELLS_PREFETCH 16
#define CELLS_REACH_BITS 2
#define CELLS_REACH_MAX 3
_Static_assert(BPI_CELLS_MAX_LEVELS <= (1 << CELLS_LEVEL_BITS) && CELLS_LEVEL_BITS + 3 * CELLS_REACH_BITS <= 16 &&
		       CELLS_REACH_MAX < (1 << CELLS_REACH_BITS),
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
	bpi_array_free(&c->sums);
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
	       bpi_array_reserve(&c->rec, (size_t)n * rec_floats(dims)) &&
	       (dims == 3 || bpi_array_reserve(&c->order, n)) && (!c->hashed || bpi_array_reserve(&c->hcell, 4 * (size_t)n));
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

static int compare_floats(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
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
	qsort(sample, m, sizeof(float), compare_floats);
	return m ? sample[(uint32_t)(quantile * (float)(m - 1))] : 0;
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

// ---- keys: level, home cell and bucket of each entity, per partition ---------

static inline uint32_t row_hash(int level, int32_t y, int32_t z)
{
	uint32_t h = (uint32_t)y * 0x9E3779B1u ^ (uint32_t)z * 0x85EBCA77u ^ (uint32_t)level * 0xC2B2AE3Du;
	h ^= h >> 16;
	h *= 0x7FEB352Du;
	h ^= h >> 15;
	return h;
}

// The bucket of cell (x, y, z) on a level: the one function the key pass and the
// finder share. Hash: consecutive x of one row land in consecutive buckets, so a
// row of cells is one (or, wrapped, two) bucket ranges.
static inline uint32_t bucket_of(const bpi_cell_level *l, int level, bool hashed, uint32_t mask, int32_t x, int32_t y,
	int32_t z)
{
	if (hashed)
		return (row_hash(level, y, z) + (uint32_t)x) & mask;
	return l->first + (uint32_t)x * l->stride[0] + (uint32_t)y * l->stride[1] + (uint32_t)z * l->stride[2];
}

static inline uint32_t cell_bucket(const bpi_cells *c, int level, int32_t x, int32_t y, int32_t z)
{
	return bucket_of(&c->levels[level], level, c->hashed, c->bucket_mask, x, y, z);
}

typedef struct key_job {
	bpi_cells *cells;
	const bpi_scene *scene;
	int parts;
	uint32_t level_count[BPI_CELLS_MAX_PARTS][BPI_CELLS_MAX_LEVELS];
	int32_t span[BPI_CELLS_MAX_PARTS][BPI_CELLS_MAX_LEVELS][3];
} key_job;

static inline uint32_t part_begin(uint32_t n, int parts, uint32_t p)
{
	return (uint32_t)((uint64_t)n * p / (uint32_t)parts);
}

// The histogram is bucket_count words (8 MB for the 1M mixed scene), hit at
// random: counting inside the key loop left 79% of key_part's samples on the
// increment (perf, mixed 1M). A separate loop over a block's keys keeps many
// misses in flight, and a prefetch a few keys ahead starts them earlier.
static inline void count_block(uint32_t *hist, const uint32_t *key, uint32_t begin, uint32_t end)
{
	for (uint32_t i = begin; i < end; ++i) {
		if (i + CELLS_PREFETCH < end)
			__builtin_prefetch(&hist[key[i + CELLS_PREFETCH]], 1);
		hist[key[i]]++;
	}
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
			reach |= (uint32_t)BP_MIN(far - home[axis], CELLS_REACH_MAX) << (CELLS_REACH_BITS * axis);
		}
		uint32_t b = bucket_of(l, k, hashed, mask, home[0], home[1], home[2]);
		key[i] = b;
		meta[i] = (uint16_t)((unsigned)k | reach << CELLS_LEVEL_BITS);
		counts[k]++;
	}
}

// Specialised on dims: the generic axis loop cost 1.3 mispredicted branches per
// entity (cachegrind, uniform 3D 100K).
BPI_CELLS_INLINE void key_range(key_job *job, uint32_t p, int dims_const)
{
	bpi_cells *c = job->cells;
	const bpi_scene *s = job->scene;
	uint32_t *hist = c->hist.data + (size_t)p * c->bucket_count;
	memset(hist, 0, (size_t)c->bucket_count * sizeof(uint32_t));
	uint32_t *counts = job->level_count[p];
	int32_t(*span)[3] = job->span[p];
	memset(counts, 0, sizeof job->level_count[p]);
	memset(span, 0, sizeof job->span[p]);
	// Everything the loop reads lives in locals: the uint16_t stores may
	// alias anything, and would otherwise reload the level table every entity.
	const int top = c->level_count - 1, dims = dims_const;
	bpi_cell_level levels[BPI_CELLS_MAX_LEVELS];
	memcpy(levels, c->levels, sizeof levels);
	const float origin[3] = {c->origin[0], c->origin[1], c->origin[2]};
	const float *min[3] = {s->min[0], s->min[1], s->min[2]};
	const float *max[3] = {s->max[0], s->max[1], s->max[2]};
	uint32_t *key = c->key.data;
	uint16_t *meta = c->meta.data;
	const uint32_t mask = c->bucket_mask;
	const bool hashed = c->hashed;
	uint32_t end = part_begin(s->count, job->parts, p + 1);
	for (uint32_t block = part_begin(s->count, job->parts, p); block < end; block += CELLS_KEY_BLOCK) {
		uint32_t block_end = BP_MIN(end - block, CELLS_KEY_BLOCK) + block;
		key_block(levels, top, origin, min, max, key, meta, span, counts, hashed, mask, block, block_end, dims);
		count_block(hist, key, block, block_end);
	}
}

static void key_part(uint32_t p, uint32_t p_end, uint32_t chunk, void *ctx)
{
	(void)p_end;
	(void)chunk;
	key_job *job = ctx;
	if (job->scene->dims == 3)
		key_range(job, p, 3);
	else
		key_range(job, p, 2);
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
	const bpi_cell_level *levels = c->levels;
	const float origin[3] = {c->origin[0], c->origin[1], c->origin[2]};
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
		if (dims == 3) {
			float *r = rec + (size_t)at * BPI_CELLS_REC3;
			r[0] = min[0][i];
			r[1] = min[1][i];
			r[2] = min[2][i];
			r[3] = -max[0][i];
			r[4] = -max[1][i];
			r[5] = -max[2][i];
			memcpy(&r[6], &i, sizeof i);
			uint32_t reach = (uint32_t)meta[i] >> CELLS_LEVEL_BITS;
			memcpy(&r[7], &reach, sizeof reach);
		} else {
			float *r = rec + (size_t)at * BPI_CELLS_REC2;
			r[0] = min[0][i];
			r[1] = min[1][i];
			r[2] = -max[0][i];
			r[3] = -max[1][i];
			order[at] = i;
		}
		if (hashed) {
			// The same function and inputs as the key pass, so the same cell;
			// stored so the finder's collision check is compares, not floors.
			int k = meta[i] & ((1 << CELLS_LEVEL_BITS) - 1);
			const bpi_cell_level *l = &levels[k];
			int32_t *h = hcell + (size_t)at * 4;
			for (int axis = 0; axis < 3; ++axis)
				h[axis] = axis < dims ? bpi_cell_coord(min[axis][i], origin[axis], l->inv, l->lo[axis], l->hi[axis])
						      : 0;
			h[3] = k;
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

// ---- pair finding, cell by cell, per fixed chunk of the bucket order ---------
//
// The finder walks the bucket order in fixed chunks of entities and takes each
// run of entities sharing a home cell (a "group") at once: the bucket offsets of
// the neighbour rows on the group's own level are read once into a small table,
// then each member scans, per row, one contiguous [start, end) slice of it cut
// to its own far cell. The candidates are exactly those of the per-entity rule
// in the header comment; only the lookups are shared. Coarse members then probe
// the finer levels one by one (rows computed per entity: those are 5% of the
// entities in the mixed scene and none in the others).
//
// Measured (uniform 3D 1M, 1 thread, best of 3 on a loaded 2-core machine):
// per-entity rows as before 300 ms find, these groups with SoA bounds 130 ms
// (16 ns per candidate); records and the unrolled span-1 rows 66-77 ms.
// Tried and dropped: four members of a cell in SSE lanes against every record of
// the half neighbourhood (no per-member cut; exact, since |home(b) - home(a)| <=
// span per axis): 2.4x the tests and find 109-131 ms against 84-90 ms.
// Cachegrind (uniform 3D 100K): 457 instructions and 5.3 mispredicted branches
// per entity in the finder; the branches left are mostly the row loops' exits.

typedef struct find_job {
	const bpi_cells *cells;
	const bpi_scene *scene;
	bpi_pair_chunks *chunks;
} find_job;

typedef struct probe {
	uint32_t a;         ///< entity index of the prober
	float lo[3], hi[3]; ///< its bounds
#if CELLS_SSE
	__m128 q1, q2; ///< the query the records are compared against (BPI_CELLS_REC3/2)
#endif
	bpi_pair_buffer *out;
	uint64_t tests;
} probe;

BPI_CELLS_INLINE uint32_t rec_id(const bpi_cells *c, uint32_t j, int dims)
{
	if (dims == 3) {
		uint32_t id;
		memcpy(&id, c->rec.data + (size_t)j * BPI_CELLS_REC3 + 6, sizeof id);
		return id;
	}
	return c->order.data[j];
}

BPI_CELLS_INLINE void load_probe(const bpi_cells *c, probe *q, uint32_t at, int dims)
{
	if (dims == 3) {
		const float *r = c->rec.data + (size_t)at * BPI_CELLS_REC3;
		for (int axis = 0; axis < 3; ++axis) {
			q->lo[axis] = r[axis];
			q->hi[axis] = -r[3 + axis];
		}
#if CELLS_SSE
		q->q1 = _mm_setr_ps(q->hi[0], q->hi[1], q->hi[2], -q->lo[0]);
		q->q2 = _mm_setr_ps(-q->lo[1], -q->lo[2], 0, 0);
#endif
	} else {
		const float *r = c->rec.data + (size_t)at * BPI_CELLS_REC2;
		q->lo[0] = r[0];
		q->lo[1] = r[1];
		q->hi[0] = -r[2];
		q->hi[1] = -r[3];
		q->lo[2] = q->hi[2] = 0;
#if CELLS_SSE
		q->q1 = _mm_setr_ps(q->hi[0], q->hi[1], -q->lo[0], -q->lo[1]);
#endif
	}
	q->a = rec_id(c, at, dims);
}

// Closed-interval overlap of the prober with record j: b.min <= a.max and
// -b.max <= -a.min on every axis, negation being exact.
BPI_CELLS_INLINE bool rec_hit(const bpi_cells *c, const probe *q, uint32_t j, int dims)
{
#if CELLS_SSE
	if (dims == 3) {
		const float *r = c->rec.data + (size_t)j * BPI_CELLS_REC3;
		int m = _mm_movemask_ps(_mm_cmple_ps(_mm_load_ps(r), q->q1)) |
			_mm_movemask_ps(_mm_cmple_ps(_mm_load_ps(r + 4), q->q2)) << 4;
		return (m & 0x3F) == 0x3F;
	}
	return _mm_movemask_ps(_mm_cmple_ps(_mm_load_ps(c->rec.data + (size_t)j * BPI_CELLS_REC2), q->q1)) == 0xF;
#else
	if (dims == 3) {
		const float *r = c->rec.data + (size_t)j * BPI_CELLS_REC3;
		return (r[0] <= q->hi[0]) & (r[1] <= q->hi[1]) & (r[2] <= q->hi[2]) & (r[3] <= -q->lo[0]) &
		       (r[4] <= -q->lo[1]) & (r[5] <= -q->lo[2]);
	}
	const float *r = c->rec.data + (size_t)j * BPI_CELLS_REC2;
	return (r[0] <= q->hi[0]) & (r[1] <= q->hi[1]) & (r[2] <= -q->lo[0]) & (r[3] <= -q->lo[1]);
#endif
}

BPI_CELLS_INLINE void report(const bpi_cells *c, const bpi_scene *s, probe *q, uint32_t j, int dims)
{
	uint32_t b = rec_id(c, j, dims);
	if (s->unfiltered || bpi_scene_accepts(s, q->a, b))
		bpi_pair_push(q->out, q->a, b);
}

// Room for `need` more pairs. On failure the caller's branchy loop pushes,
// which records the failure.
BPI_CELLS_INLINE bool reserve_pairs(bpi_pair_buffer *out, size_t need)
{
	return out->capacity - out->count >= need || bpi_pair_buffer_reserve(out, need);
}

// Grid: every entry of [from, to) is a candidate (the caller counts them).
// Unfiltered, a hit is appended without a branch (the pair is always stored,
// the count advances by the test's outcome): about one in ten candidates hits,
// at random, and that branch was 20% of the finder's mispredictions
// (cachegrind, uniform 3D 100K).
// The branchless append, with room for to - from more pairs reserved.
BPI_CELLS_INLINE void append_span(const bpi_cells *c, const probe *q, uint32_t from, uint32_t to, int dims)
{
	bpi_pair_buffer *out = q->out;
	bp_pair *data = out->data;
	size_t count = out->count;
	const uint32_t a = q->a;
	for (uint32_t j = from; j < to; ++j) {
		bool hit = rec_hit(c, q, j, dims);
		uint32_t b = rec_id(c, j, dims);
		data[count] = (bp_pair){a < b ? a : b, a < b ? b : a};
		count += hit;
	}
	out->count = count;
}

BPI_CELLS_INLINE void test_span(const bpi_cells *c, const bpi_scene *s, probe *q, uint32_t from, uint32_t to, int dims)
{
	if (s->unfiltered && from < to && reserve_pairs(q->out, to - from)) {
		append_span(c, q, from, to, dims);
		return;
	}
	for (uint32_t j = from; j < to; ++j)
		if (rec_hit(c, q, j, dims))
			report(c, s, q, j, dims);
}

// Hash: buckets are shared by colliding cells, so keep only the entries of
// cells x0..x1 of row (y, z) on `level`; with `self` set, x0 is the prober's
// home and its entries up to the prober are skipped.
BPI_CELLS_INLINE void test_filtered(const bpi_cells *c, const bpi_scene *s, probe *q, uint32_t from, uint32_t to,
	int dims, int level, int32_t x0, int32_t x1, int32_t y, int32_t z, uint32_t self)
{
	for (uint32_t j = from; j < to; ++j) {
		const int32_t *h = c->hcell.data + (size_t)j * 4;
		if (h[1] != y || h[2] != z || h[3] != level || h[0] < x0 || h[0] > x1)
			continue;
		if (self != UINT32_MAX && h[0] == x0 && j <= self)
			continue;
		q->tests++;
		if (rec_hit(c, q, j, dims))
			report(c, s, q, j, dims);
	}
}

// Tests the prober against the cells x0..x1 of row (y, z) on `level`. `self` is
// the prober's own position when the row starts at its home cell (then only
// entries after it in that cell count), else UINT32_MAX.
BPI_CELLS_INLINE void scan_row(const bpi_cells *c, const bpi_scene *s, probe *q, bool hashed, int dims, int level,
	int32_t x0, int32_t x1, int32_t y, int32_t z, uint32_t self)
{
	if (!hashed) {
		uint32_t b0 = cell_bucket(c, level, x0, y, z);
		uint32_t from = self != UINT32_MAX ? self + 1 : c->start.data[b0];
		uint32_t to = c->start.data[b0 + (uint32_t)(x1 - x0) + 1];
		q->tests += to > from ? to - from : 0;
		test_span(c, s, q, from, to, dims);
		return;
	}
	uint64_t len = (uint64_t)((int64_t)x1 - x0 + 1);
	if (len >= c->bucket_count) {
		test_filtered(c, s, q, 0, c->start.data[c->bucket_count], dims, level, x0, x1, y, z, self);
		return;
	}
	uint32_t b0 = cell_bucket(c, level, x0, y, z);
	uint32_t b1 = b0 + (uint32_t)len; // one past the row, maybe past the table
	if (b1 <= c->bucket_count) {
		test_filtered(c, s, q, c->start.data[b0], c->start.data[b1], dims, level, x0, x1, y, z, self);
	} else {
		test_filtered(c, s, q, c->start.data[b0], c->start.data[c->bucket_count], dims, level, x0, x1, y, z, self);
		test_filtered(c, s, q, 0, c->start.data[b1 - c->bucket_count], dims, level, x0, x1, y, z, self);
	}
}

// The prober's cell range on level m: home - span .. far per axis.
BPI_CELLS_INLINE void level_range(const bpi_cells *c, const probe *q, int m, int dims, int32_t home[3],
	int32_t far[3], int32_t low[3])
{
	const bpi_cell_level *l = &c->levels[m];
	for (int axis = 0; axis < 3; ++axis)
		home[axis] = far[axis] = low[axis] = 0;
	for (int axis = 0; axis < dims; ++axis) {
		home[axis] = bpi_cell_coord(q->lo[axis], c->origin[axis], l->inv, l->lo[axis], l->hi[axis]);
		far[axis] = bpi_cell_coord(q->hi[axis], c->origin[axis], l->inv, l->lo[axis], l->hi[axis]);
		low[axis] = BP_MAX(home[axis] - l->span[axis], l->lo[axis]);
	}
}

// Own level, one entity at a time (spans too wide for the row table, or a hash
// row that wraps around the table): cells after home in (z, y, x) order, and
// home itself from the prober's position `at` on.
BPI_CELLS_INLINE void own_level_rows(const bpi_cells *c, const bpi_scene *s, probe *q, uint32_t at, int k, bool hashed,
	int dims)
{
	int32_t home[3], far[3], low[3];
	level_range(c, q, k, dims, home, far, low);
	for (int32_t z = home[2]; z <= far[2]; ++z)
		for (int32_t y = z == home[2] ? home[1] : low[1]; y <= far[1]; ++y) {
			bool first = z == home[2] && y == home[1];
			scan_row(c, s, q, hashed, dims, k, first ? home[0] : low[0], far[0], y, z, first ? at : UINT32_MAX);
		}
}

// A finer level m, in full.
BPI_CELLS_INLINE void finer_level_rows(const bpi_cells *c, const bpi_scene *s, probe *q, int m, bool hashed, int dims)
{
	int32_t home[3], far[3], low[3];
	level_range(c, q, m, dims, home, far, low);
	for (int32_t z = low[2]; z <= far[2]; ++z)
		for (int32_t y = low[1]; y <= far[1]; ++y)
			scan_row(c, s, q, hashed, dims, m, low[0], far[0], y, z, UINT32_MAX);
}

// Row table of a group: spans up to CELLS_TABLE_SPAN (uniform, mixed and
// clustered all measure span 1 on every level).
#define CELLS_TABLE_SPAN CELLS_REACH_MAX
#define CELLS_TABLE_ROWS ((CELLS_TABLE_SPAN + 1) * (2 * CELLS_TABLE_SPAN + 1))
#define CELLS_TABLE_COLS (2 * CELLS_TABLE_SPAN + 2)

typedef struct row_table {
	int32_t x0; ///< cell x of column 0: home x - span x
	int32_t y[CELLS_TABLE_ROWS], z[CELLS_TABLE_ROWS];
	/// Row r, column t: bucket-order start of cell x0 + t of the row (grid:
	/// clamped into the row, so columns left of it are empty and the one past
	/// its end is its end).
	uint32_t off[CELLS_TABLE_ROWS][CELLS_TABLE_COLS];
} row_table;

// Rows, in (z, y) order: dz = 0 with dy = 0 .. span y, then dz = 1 .. span z
// with dy = -span y .. span y. Row index of (dz, dy):
static inline int table_row(int32_t dz, int32_t dy, int32_t sy)
{
	return dz == 0 ? dy : (sy + 1) + (dz - 1) * (2 * sy + 1) + (dy + sy);
}

BPI_CELLS_INLINE bool fill_table(const bpi_cells *c, row_table *t, int k, const int32_t h[3], bool hashed, int32_t sx,
	int32_t sy, int32_t sz)
{
	const bpi_cell_level *l = &c->levels[k];
	const uint32_t cols = (uint32_t)(2 * sx + 2);
	t->x0 = h[0] - sx;
	// Grid: a block away from the edges needs no clamping (84% of the cells
	// of a 70^3 grid with span 1).
	const bool inside = !hashed && t->x0 >= l->lo[0] && h[0] + sx <= l->hi[0] && h[1] - sy >= l->lo[1] &&
			    h[1] + sy <= l->hi[1] && h[2] + sz <= l->hi[2];
#pragma GCC unroll 4
	for (int32_t dz = 0; dz <= sz; ++dz)
#pragma GCC unroll 8
		for (int32_t dy = dz == 0 ? 0 : -sy; dy <= sy; ++dy) {
			int r = table_row(dz, dy, sy);
			int32_t y = h[1] + dy, z = h[2] + dz;
			uint32_t *off = t->off[r];
			t->y[r] = y;
			t->z[r] = z;
			if (!inside && (y < l->lo[1] || y > l->hi[1] || z < l->lo[2] || z > l->hi[2])) {
				for (uint32_t col = 0; col < cols; ++col)
					off[col] = 0;
				continue;
			}
			if (hashed) {
				uint32_t base = (row_hash(k, y, z) + (uint32_t)t->x0) & c->bucket_mask;
				if (base + cols - 1 > c->bucket_count)
					return false; // the row wraps around the table
				for (uint32_t col = 0; col < cols; ++col)
					off[col] = c->start.data[base + col];
			} else if (inside) {
				const uint32_t *row = c->start.data + l->first + (uint32_t)y * l->stride[1] +
						      (uint32_t)z * l->stride[2] + (uint32_t)t->x0;
				for (uint32_t col = 0; col < cols; ++col)
					off[col] = row[col];
			} else {
				uint32_t row = l->first + (uint32_t)y * l->stride[1] + (uint32_t)z * l->stride[2];
				for (uint32_t col = 0; col < cols; ++col) {
					int32_t x = BP_MIN(BP_MAX(t->x0 + (int32_t)col, l->lo[0]), l->hi[0] + 1);
					off[col] = c->start.data[row + (uint32_t)x];
				}
			}
		}
	return true;
}

// Own level from the table: the rows and columns up to the prober's far cell.
BPI_CELLS_INLINE void own_level_table(const bpi_cells *c, const bpi_scene *s, probe *q, const row_table *t, uint32_t at,
	int k, const int32_t h[3], bool hashed, int dims, int32_t sx, int32_t sy, int32_t sz)
{
	const bpi_cell_level *l = &c->levels[k];
	int32_t d[3] = {0, 0, 0};
	if (dims == 3) {
		// Stored by the key pass (exact there; the table is only used while
		// every span, hence every reach, fits CELLS_REACH_MAX).
		uint32_t reach;
		memcpy(&reach, c->rec.data + (size_t)at * BPI_CELLS_REC3 + 7, sizeof reach);
		for (int axis = 0; axis < 3; ++axis)
			d[axis] = (int32_t)(reach >> (CELLS_REACH_BITS * axis)) & CELLS_REACH_MAX;
	} else {
		for (int axis = 0; axis < dims; ++axis)
			d[axis] = bpi_cell_coord(q->hi[axis], c->origin[axis], l->inv, l->lo[axis], l->hi[axis]) - h[axis];
	}
	for (int axis = 0; axis < dims; ++axis)
		BP_ASSERT(d[axis] >= 0 && d[axis] <= l->span[axis]);
	const uint32_t end = (uint32_t)(sx + d[0] + 1);
	uint64_t tests = 0; // a local: q->tests may alias the pair stores
	uint32_t row_from[CELLS_TABLE_ROWS], row_to[CELLS_TABLE_ROWS];
	// Every row of the table, those beyond the prober's reach made empty: with
	// the spans constant the loops unroll into straight code, where loops over
	// the reach cost 3.5 mispredicted branches per entity (cachegrind, uniform
	// 3D 100K).
#pragma GCC unroll 4
	for (int32_t dz = 0; dz <= sz; ++dz)
#pragma GCC unroll 8
		for (int32_t dy = dz == 0 ? 0 : -sy; dy <= sy; ++dy) {
			int r = table_row(dz, dy, sy);
			bool home = dz == 0 && dy == 0;
			uint32_t used = 0u - (uint32_t)((dz <= d[2]) & (dy <= d[1])); // all ones or zero
			uint32_t from = home ? at + 1 : t->off[r][0];
			// from <= to: the table's rows are bucket-order starts, increasing
			// along a row, and the home row starts inside the home cell.
			uint32_t to = from + ((t->off[r][end] - from) & used);
			if (hashed) {
				test_filtered(c, s, q, from, to, dims, k, home ? h[0] : t->x0, h[0] + d[0], t->y[r], t->z[r],
					UINT32_MAX);
			} else {
				tests += to - from;
				row_from[r] = from;
				row_to[r] = to;
			}
		}
	if (!hashed) {
		// Grid: room for every candidate's pair reserved once per entity, not
		// per row (that check mispredicted 1.5 times per entity).
		const int rows = table_row(sz, sy, sy) + 1;
		if (s->unfiltered && reserve_pairs(q->out, tests)) {
#pragma GCC unroll 8
			for (int r = 0; r < rows; ++r)
				append_span(c, q, row_from[r], row_to[r], dims);
		} else {
#pragma GCC unroll 8
			for (int r = 0; r < rows; ++r)
				test_span(c, s, q, row_from[r], row_to[r], dims);
		}
	}
	q->tests += tests;
}

// Entities [g0, g1) of bucket order, all with home cell h on level k.
BPI_CELLS_INLINE void find_group_spans(const bpi_cells *c, const bpi_scene *s, probe *q, int k, const int32_t h[3],
	uint32_t g0, uint32_t g1, bool hashed, int dims, int32_t sx, int32_t sy, int32_t sz)
{
	row_table t;
	bool table = sx <= CELLS_TABLE_SPAN && sy <= CELLS_TABLE_SPAN && sz <= CELLS_TABLE_SPAN;
	if (table) {
		// Only for the compiler, which cannot see that a table left half filled
		// (a hash row that wraps) is never read: 160 bytes for span 1.
		memset(t.off, 0, (size_t)(table_row(sz, sy, sy) + 1) * sizeof t.off[0]);
		table = fill_table(c, &t, k, h, hashed, sx, sy, sz);
	}
	for (uint32_t at = g0; at < g1; ++at) {
		load_probe(c, q, at, dims);
		if (table)
			own_level_table(c, s, q, &t, at, k, h, hashed, dims, sx, sy, sz);
		else
			own_level_rows(c, s, q, at, k, hashed, dims);
		for (int m = k - 1; m >= 0; --m)
			if (c->levels[m].count != 0)
				finer_level_rows(c, s, q, m, hashed, dims);
	}
}

// Span 1 on every axis (uniform, mixed and clustered on every level) gets its
// own copy with the spans constant.
BPI_CELLS_INLINE void find_group(const bpi_cells *c, const bpi_scene *s, probe *q, int k, const int32_t h[3], uint32_t g0,
	uint32_t g1, bool hashed, int dims)
{
	const bpi_cell_level *l = &c->levels[k];
	const int32_t sz = dims > 2 ? l->span[2] : 0;
	if (l->span[0] == 1 && l->span[1] == 1 && sz == (dims > 2))
		find_group_spans(c, s, q, k, h, g0, g1, hashed, dims, 1, 1, dims > 2);
	else
		find_group_spans(c, s, q, k, h, g0, g1, hashed, dims, l->span[0], l->span[1], sz);
}

BPI_CELLS_INLINE void find_range(const bpi_cells *c, const bpi_scene *s, probe *q, uint32_t begin, uint32_t end,
	bool hashed, int dims)
{
	if (hashed) {
		// Groups: runs of one cell (a bucket shared by colliding cells may hold
		// a cell as several runs; each is a group of its own).
		for (uint32_t at = begin; at < end;) {
			const int32_t *h = c->hcell.data + (size_t)at * 4;
			uint32_t g = at + 1;
			while (g < end && memcmp(c->hcell.data + (size_t)g * 4, h, 4 * sizeof(int32_t)) == 0)
				++g;
			find_group(c, s, q, h[3], h, at, g, true, dims);
			at = g;
		}
		return;
	}
	// Grid: the bucket holding `begin` (start[b] <= begin < start[b + 1]), its
	// level and cell, then bucket by bucket with the cell stepped along.
	uint32_t lo = 0, hi = c->bucket_count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (c->start.data[mid] > begin)
			hi = mid;
		else
			lo = mid + 1;
	}
	uint32_t b = lo - 1; // start[0] = 0 <= begin < n = start[bucket_count]
	int k = 0;
	while (k + 1 < c->level_count && c->levels[k + 1].first <= b)
		++k;
	const bpi_cell_level *l = &c->levels[k];
	uint32_t r = b - l->first;
	int32_t h[3];
	h[2] = (int32_t)(r / l->stride[2]);
	r -= (uint32_t)h[2] * l->stride[2];
	h[1] = (int32_t)(r / l->stride[1]);
	h[0] = (int32_t)(r - (uint32_t)h[1] * l->stride[1]);
	for (uint32_t at = begin;;) {
		uint32_t g1 = BP_MIN(c->start.data[b + 1], end);
		if (g1 > at) {
			find_group(c, s, q, k, h, at, g1, false, dims);
			at = g1;
		}
		if (at >= end)
			break;
		++b;
		if (++h[0] > l->hi[0]) {
			h[0] = 0;
			if (++h[1] > l->hi[1]) {
				h[1] = 0;
				if (++h[2] > l->hi[2]) {
					h[2] = 0;
					l = &c->levels[++k];
				}
			}
		}
	}
}

static void find_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const find_job *job = ctx;
	const bpi_cells *c = job->cells;
	probe q = {.out = &job->chunks->buffers[chunk]};
	// Four copies of the loop, so the grid's has no hash filter in it and
	// the axis loops unroll.
	if (c->hashed)
		c->dims == 3 ? find_range(c, job->scene, &q, begin, end, true, 3)
			     : find_range(c, job->scene, &q, begin, end, true, 2);
	else
		c->dims == 3 ? find_range(c, job->scene, &q, begin, end, false, 3)
			     : find_range(c, job->scene, &q, begin, end, false, 2);
	q.out->tests = q.tests;
}

// ---- the pipeline -------------------------------------------------------------

bp_status bpi_cells_build(bpi_cells *c, bool hashed, const bpi_scene *s, bpi_build *build)
{
	const uint32_t n = s->count;
	const int threads = s->threads;
	c->hashed = hashed; // fixed per index: grid and hash never share one
	uint32_t stat_chunks = bpi_chunk_count(n, CELLS_STATS_GRAIN);
	uint32_t find_chunks = bpi_chunk_count(n, CELLS_FIND_GRAIN);
	if (!reserve_entities(c, n, s->dims) || !bpi_array_reserve(&c->partials, BP_MAX(stat_chunks, 1)))
		return BP_ERR_OUT_OF_MEMORY;
	c->dims = s->dims;
	if (n == 0)
		return BP_OK;

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
	// Counting sort: keys and per-partition histograms, prefix sum, scatter.
	int parts = BP_MIN(BP_MAX(threads, 1), BPI_CELLS_MAX_PARTS);
	if (n < CELLS_PARTS_MIN_ENTITIES)
		parts = 1;
	c->parts = parts;
	// Bucket offsets and per-partition histograms, for this step's counts; grown only.
	if (!bpi_array_reserve(&c->start, (size_t)c->bucket_count + 1) ||
		!bpi_array_reserve(&c->hist, (size_t)c->bucket_count * (size_t)parts))
		return BP_ERR_OUT_OF_MEMORY;
	key_job key = {.cells = c, .scene = s, .parts = parts};
	key_job *kj = &key;
	bpi_parallel_for((uint32_t)parts, 1, threads, key_part, kj);
	for (int k = 0; k < c->level_count; ++k) {
		bpi_cell_level *l = &c->levels[k];
		l->count = 0;
		for (int axis = 0; axis < 3; ++axis)
			l->span[axis] = 0;
		for (int p = 0; p < parts; ++p) {
			l->count += kj->level_count[p][k];
			for (int axis = 0; axis < 3; ++axis)
				l->span[axis] = BP_MAX(l->span[axis], kj->span[p][k][axis]);
		}
	}

	uint32_t blocks = bpi_chunk_count(c->bucket_count, CELLS_PREFIX_GRAIN);
	if (!bpi_array_reserve(&c->sums, 2 * (size_t)blocks))
		return BP_ERR_OUT_OF_MEMORY;
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
	c->start.data[c->bucket_count] = n;
	scatter_job xj = {c, s, parts};
	bpi_parallel_for((uint32_t)parts, 1, threads, scatter_part, &xj);

	// Pairs are found per fixed chunk of the bucket order.
	build->chunks = find_chunks;
	// Hash: non-empty buckets; cells that collide in a bucket count once.
	build->cell_count = nonempty;
	build->cell_size = c->level_count ? c->levels[0].cell : 0.0f;
	for (int axis = 0; axis < 3; ++axis)
		build->cell_origin[axis] = c->origin[axis];
	return BP_OK;
}

void bpi_cells_find(const bpi_cells *c, const bpi_scene *s, bpi_pair_chunks *chunks)
{
	find_job fj = {c, s, chunks};
	bpi_parallel_for(s->count, CELLS_FIND_GRAIN, s->threads, find_chunk, &fj);
}

void bpi_cells_index_release(bpi_index *index)
{
	bpi_cells_free(&((bpi_cells_index *)index)->cells);
}

bp_status bpi_cells_index_find(bpi_index *index, const bpi_scene *scene, bpi_build *build)
{
	(void)build;
	bpi_cells_find(&((bpi_cells_index *)index)->cells, scene, &index->chunks);
	return BP_OK;
}
