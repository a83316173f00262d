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
#define CELLS_LEVEL_FACTOR 2.0f
#define CELLS_BASE_SCALE 1.5f
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

static void free_entities(bpi_cells *c);

void bpi_cells_free(bpi_cells *c)
{
	free_entities(c);
	bpi_free_aligned(c->start, ((size_t)c->bucket_capacity + 1) * sizeof(uint32_t));
	bpi_free_aligned(c->hist, c->hist_capacity * sizeof(uint32_t));
	bpi_free_aligned(c->partials, c->chunk_capacity * sizeof(bpi_cells_partial));
	bpi_free_aligned(c->tests, c->chunk_capacity * sizeof(uint64_t));
	*c = (bpi_cells){0};
}

// Grows one array to `count` elements without keeping its contents (scratch).
static bool regrow(void **array, size_t old_count, size_t count, size_t elem)
{
	void *grown = bpi_alloc_aligned(count * elem);
	if (!grown)
		return false;
	bpi_free_aligned(*array, old_count * elem);
	*array = grown;
	return true;
}

static void free_entities(bpi_cells *c)
{
	size_t n = c->capacity;
	bpi_free_aligned(c->key, n * sizeof(uint32_t));
	bpi_free_aligned(c->level_of, n);
	bpi_free_aligned(c->order, n * sizeof(uint32_t));
	bpi_free_aligned(c->sorted_level, n);
	for (int axis = 0; axis < c->alloc_dims; ++axis) {
		bpi_free_aligned(c->min[axis], n * sizeof(float));
		bpi_free_aligned(c->max[axis], n * sizeof(float));
		bpi_free_aligned(c->cell[axis], c->hashed ? n * sizeof(int32_t) : 0);
	}
	c->key = c->order = NULL;
	c->level_of = c->sorted_level = NULL;
	for (int axis = 0; axis < 3; ++axis) {
		c->min[axis] = c->max[axis] = NULL;
		c->cell[axis] = NULL;
	}
	c->capacity = 0;
	c->alloc_dims = 0;
}

// Per-entity scratch grows only when N grows (by an eighth more, so a slowly
// growing world does not reallocate every step). All-or-nothing.
static bp_status reserve_entities(bpi_cells *c, uint32_t n, int dims)
{
	if (n <= c->capacity && c->alloc_dims == dims)
		return BP_OK;
	size_t want = BP_MAX((size_t)n + n / 8, 64);
	if (want > UINT32_MAX)
		want = UINT32_MAX;
	free_entities(c);
	c->capacity = (uint32_t)want;
	c->alloc_dims = dims;
	c->key = bpi_alloc_aligned(want * sizeof(uint32_t));
	c->order = bpi_alloc_aligned(want * sizeof(uint32_t));
	c->level_of = bpi_alloc_aligned(want);
	c->sorted_level = bpi_alloc_aligned(want);
	bool ok = c->key && c->order && c->level_of && c->sorted_level;
	for (int axis = 0; axis < dims; ++axis) {
		c->min[axis] = bpi_alloc_aligned(want * sizeof(float));
		c->max[axis] = bpi_alloc_aligned(want * sizeof(float));
		ok = ok && c->min[axis] && c->max[axis];
		if (c->hashed) {
			c->cell[axis] = bpi_alloc_aligned(want * sizeof(int32_t));
			ok = ok && c->cell[axis];
		}
	}
	if (!ok) {
		free_entities(c);
		return BP_ERR_OUT_OF_MEMORY;
	}
	return BP_OK;
}

// Bucket offsets and the per-partition histograms, sized for this step's bucket
// and partition counts; grown only.
static bp_status reserve_buckets(bpi_cells *c, uint32_t buckets, int parts)
{
	size_t hist = (size_t)buckets * (size_t)parts;
	if (buckets > c->bucket_capacity) {
		if (!regrow((void **)&c->start, (size_t)c->bucket_capacity + 1, (size_t)buckets + 1, sizeof(uint32_t)))
			return BP_ERR_OUT_OF_MEMORY; // the old array and size stay
		c->bucket_capacity = buckets;
	}
	if (hist > c->hist_capacity) {
		if (!regrow((void **)&c->hist, c->hist_capacity, hist, sizeof(uint32_t)))
			return BP_ERR_OUT_OF_MEMORY;
		c->hist_capacity = hist;
	}
	return BP_OK;
}

static bp_status reserve_chunks(bpi_cells *c, uint32_t chunks)
{
	if (chunks <= c->chunk_capacity)
		return BP_OK;
	size_t old = c->chunk_capacity;
	if (!regrow((void **)&c->partials, old, chunks, sizeof(bpi_cells_partial)))
		return BP_ERR_OUT_OF_MEMORY;
	if (!regrow((void **)&c->tests, old, chunks, sizeof(uint64_t))) {
		bpi_free_aligned(c->partials, (size_t)chunks * sizeof(bpi_cells_partial));
		bpi_free_aligned(c->tests, old * sizeof(uint64_t));
		c->partials = NULL;
		c->tests = NULL;
		c->chunk_capacity = 0;
		return BP_ERR_OUT_OF_MEMORY;
	}
	c->chunk_capacity = chunks;
	return BP_OK;
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

static void key_part(uint32_t p, uint32_t p_end, uint32_t chunk, void *ctx)
{
	(void)p_end;
	(void)chunk;
	key_job *job = ctx;
	bpi_cells *c = job->cells;
	const bpi_scene *s = job->scene;
	uint32_t *hist = c->hist + (size_t)p * c->bucket_count;
	memset(hist, 0, (size_t)c->bucket_count * sizeof(uint32_t));
	uint32_t *counts = job->level_count[p];
	int32_t(*span)[3] = job->span[p];
	memset(counts, 0, sizeof job->level_count[p]);
	memset(span, 0, sizeof job->span[p]);
	// Everything the loop reads lives in locals: the uint8_t stores below may
	// alias anything, and would otherwise reload the level table every entity.
	const int top = c->level_count - 1, dims = s->dims;
	bpi_cell_level levels[BPI_CELLS_MAX_LEVELS];
	memcpy(levels, c->levels, sizeof levels);
	const float origin[3] = {c->origin[0], c->origin[1], c->origin[2]};
	const float *min[3] = {s->min[0], s->min[1], s->min[2]};
	const float *max[3] = {s->max[0], s->max[1], s->max[2]};
	uint32_t *key = c->key;
	uint8_t *level_of = c->level_of;
	const uint32_t mask = c->bucket_mask;
	const bool hashed = c->hashed;
	uint32_t end = part_begin(s->count, job->parts, p + 1);
	for (uint32_t i = part_begin(s->count, job->parts, p); i < end; ++i) {
		float ext = max[0][i] - min[0][i];
		for (int axis = 1; axis < dims; ++axis)
			ext = BP_MAX(ext, max[axis][i] - min[axis][i]);
		int k = 0;
		while (k < top && ext > levels[k].cell)
			++k;
		const bpi_cell_level *l = &levels[k];
		int32_t home[3] = {0, 0, 0};
		for (int axis = 0; axis < dims; ++axis) {
			home[axis] = bpi_cell_coord(min[axis][i], origin[axis], l->inv, l->lo[axis], l->hi[axis]);
			int32_t far = bpi_cell_coord(max[axis][i], origin[axis], l->inv, l->lo[axis], l->hi[axis]);
			span[k][axis] = BP_MAX(span[k][axis], far - home[axis]);
		}
		uint32_t b = bucket_of(l, k, hashed, mask, home[0], home[1], home[2]);
		key[i] = b;
		level_of[i] = (uint8_t)k;
		hist[b]++;
		counts[k]++;
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
				cell += c->hist[p * stride + b];
			sum += cell;
			filled += cell != 0;
		}
		job->sums[block] = sum;
		job->nonempty[block] = filled;
		return;
	}
	uint32_t running = (uint32_t)job->sums[block];
	for (uint32_t b = begin; b < end; ++b) {
		c->start[b] = running;
		for (int p = 0; p < parts; ++p) {
			uint32_t n = c->hist[p * stride + b];
			c->hist[p * stride + b] = running;
			running += n;
		}
	}
}

// ---- scatter: entity indices into bucket order, then a gather of their data ---

// Scattering only the index and then gathering the bounds in output order
// (sequential writes, independent random reads) beat scattering all seven
// arrays: scatter_part was 25% of a 1M uniform step that way (perf).
typedef struct scatter_job {
	bpi_cells *cells;
	const bpi_scene *scene;
	int parts;
} scatter_job;

static void scatter_part(uint32_t p, uint32_t p_end, uint32_t chunk, void *ctx)
{
	(void)p_end;
	(void)chunk;
	const scatter_job *job = ctx;
	bpi_cells *c = job->cells;
	const bpi_scene *s = job->scene;
	uint32_t *cursor = c->hist + (size_t)p * c->bucket_count;
	const uint32_t *key = c->key;
	uint32_t *order = c->order;
	uint32_t end = part_begin(s->count, job->parts, p + 1);
	for (uint32_t i = part_begin(s->count, job->parts, p); i < end; ++i)
		order[cursor[key[i]]++] = i;
}

static void gather_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const scatter_job *job = ctx;
	bpi_cells *c = job->cells;
	const bpi_scene *s = job->scene;
	const int dims = s->dims;
	for (uint32_t at = begin; at < end; ++at) {
		uint32_t i = c->order[at];
		int k = c->level_of[i];
		c->sorted_level[at] = (uint8_t)k;
		for (int axis = 0; axis < dims; ++axis) {
			c->min[axis][at] = s->min[axis][i];
			c->max[axis][at] = s->max[axis][i];
		}
		if (c->hashed) {
			// The same function and inputs as the key pass, so the same cell;
			// stored so the finder's collision check is compares, not floors.
			const bpi_cell_level *l = &c->levels[k];
			for (int axis = 0; axis < dims; ++axis)
				c->cell[axis][at] =
					bpi_cell_coord(s->min[axis][i], c->origin[axis], l->inv, l->lo[axis], l->hi[axis]);
		}
	}
}

// ---- pair finding over rows of cells, per fixed chunk of the bucket order ----

// Forced inline: the callers pass constant `hashed` and `dims`, and the copies
// specialised on them were ~2x faster than one generic loop (measured, uniform 3D).
#define BPI_CELLS_INLINE static inline __attribute__((always_inline))

typedef struct find_job {
	const bpi_cells *cells;
	const bpi_scene *scene;
	bpi_pair_chunks *chunks;
	uint64_t *tests;
} find_job;

typedef struct probe {
	uint32_t a;       ///< entity index of the prober
	float lo[3], hi[3];
	bpi_pair_buffer *out;
	uint64_t tests;
} probe;

BPI_CELLS_INLINE void test_range(const bpi_cells *c, const bpi_scene *s, probe *q, uint32_t from, uint32_t to, bool hashed,
	int dims, int level, int32_t x0, int32_t x1, int32_t y, int32_t z, uint32_t self)
{
	for (uint32_t j = from; j < to; ++j) {
		if (hashed) {
			// Buckets are shared by colliding cells: keep only this row's cells.
			if (c->sorted_level[j] != level)
				continue;
			int32_t cz = dims > 2 ? c->cell[2][j] : 0;
			if (c->cell[1][j] != y || cz != z)
				continue;
			int32_t cx = c->cell[0][j];
			if (cx < x0 || cx > x1 || (cx == x0 && j <= self && self != UINT32_MAX))
				continue;
		}
		q->tests++;
		// Non-short-circuit &: one hard-to-predict branch per candidate, not six.
		bool hit = (q->lo[0] <= c->max[0][j]) & (c->min[0][j] <= q->hi[0]) & (q->lo[1] <= c->max[1][j]) &
			(c->min[1][j] <= q->hi[1]);
		if (dims > 2)
			hit = hit & (q->lo[2] <= c->max[2][j]) & (c->min[2][j] <= q->hi[2]);
		if (!hit)
			continue;
		uint32_t b = c->order[j];
		if (s->unfiltered || bpi_scene_accepts(s, q->a, b))
			bpi_pair_push(q->out, q->a, b);
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
		uint32_t from = self != UINT32_MAX ? self + 1 : c->start[b0];
		test_range(c, s, q, from, c->start[b0 + (uint32_t)(x1 - x0) + 1], false, dims, level, x0, x1, y, z, self);
		return;
	}
	uint64_t len = (uint64_t)((int64_t)x1 - x0 + 1);
	if (len >= c->bucket_count) {
		test_range(c, s, q, 0, c->start[c->bucket_count], true, dims, level, x0, x1, y, z, self);
		return;
	}
	uint32_t b0 = cell_bucket(c, level, x0, y, z);
	uint32_t b1 = b0 + (uint32_t)len; // one past the row, maybe past the table
	if (b1 <= c->bucket_count) {
		test_range(c, s, q, c->start[b0], c->start[b1], true, dims, level, x0, x1, y, z, self);
	} else {
		test_range(c, s, q, c->start[b0], c->start[c->bucket_count], true, dims, level, x0, x1, y, z, self);
		test_range(c, s, q, 0, c->start[b1 - c->bucket_count], true, dims, level, x0, x1, y, z, self);
	}
}

BPI_CELLS_INLINE void find_one(const bpi_cells *c, const bpi_scene *s, probe *q, uint32_t at, bool hashed, int dims)
{
	const int k = c->sorted_level[at];
	int32_t home[3] = {0, 0, 0}, far[3] = {0, 0, 0};
	for (int axis = 0; axis < 3; ++axis) {
		q->lo[axis] = axis < dims ? c->min[axis][at] : 0;
		q->hi[axis] = axis < dims ? c->max[axis][at] : 0;
	}
	// Own level first, then every finer level (coarse entities probe fine ones).
	for (int m = k; m >= 0; --m) {
		const bpi_cell_level *l = &c->levels[m];
		if (l->count == 0)
			continue;
		int32_t low[3] = {0, 0, 0};
		for (int axis = 0; axis < dims; ++axis) {
			home[axis] = bpi_cell_coord(q->lo[axis], c->origin[axis], l->inv, l->lo[axis], l->hi[axis]);
			far[axis] = bpi_cell_coord(q->hi[axis], c->origin[axis], l->inv, l->lo[axis], l->hi[axis]);
			low[axis] = BP_MAX(home[axis] - l->span[axis], l->lo[axis]);
		}
		if (m == k) {
			// Own level: cells after home in (z, y, x) order, and home itself
			// from the prober's position on.
			for (int32_t z = home[2]; z <= far[2]; ++z)
				for (int32_t y = z == home[2] ? home[1] : low[1]; y <= far[1]; ++y) {
					bool first = z == home[2] && y == home[1];
					scan_row(c, s, q, hashed, dims, m, first ? home[0] : low[0], far[0], y, z,
						first ? at : UINT32_MAX);
				}
		} else {
			for (int32_t z = low[2]; z <= far[2]; ++z)
				for (int32_t y = low[1]; y <= far[1]; ++y)
					scan_row(c, s, q, hashed, dims, m, low[0], far[0], y, z, UINT32_MAX);
		}
	}
}

static void find_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const find_job *job = ctx;
	const bpi_cells *c = job->cells;
	probe q = {.out = &job->chunks->buffers[chunk]};
	for (uint32_t at = begin; at < end; ++at) {
		q.a = c->order[at];
		// Four copies of the loop, so the grid's has no hash filter in it and
		// the axis loops unroll.
		if (c->hashed)
			c->dims == 3 ? find_one(c, job->scene, &q, at, true, 3) : find_one(c, job->scene, &q, at, true, 2);
		else
			c->dims == 3 ? find_one(c, job->scene, &q, at, false, 3) : find_one(c, job->scene, &q, at, false, 2);
	}
	job->tests[chunk] = q.tests;
}

// ---- the pipeline -------------------------------------------------------------

bp_status bpi_cells_find_pairs(bpi_cells *c, bool hashed, const bpi_scene *s, bpi_pair_chunks *chunks,
	bpi_pair_buffer *out, bp_frame_stats *stats)
{
	uint64_t t0 = bpi_now_ns();
	const uint32_t n = s->count;
	const int threads = s->threads;
	stats->candidate_tests = 0;
	stats->cell_count = 0;
	c->hashed = hashed; // fixed per index: grid and hash never share one
	bp_status status = reserve_entities(c, n, s->dims);
	uint32_t stat_chunks = bpi_chunk_count(n, CELLS_STATS_GRAIN);
	uint32_t find_chunks = bpi_chunk_count(n, CELLS_FIND_GRAIN);
	if (status == BP_OK)
		status = reserve_chunks(c, BP_MAX(BP_MAX(stat_chunks, find_chunks), 1));
	if (status != BP_OK)
		return status;
	c->dims = s->dims;
	if (n == 0) {
		status = bpi_pair_chunks_reset(chunks, 0);
		if (status == BP_OK)
			status = bpi_pair_chunks_merge(chunks, out, threads);
		stats->ns_build = stats->ns_find = 0;
		stats->ns_merge = bpi_now_ns() - t0;
		return status;
	}

	// Statistics and levels.
	stats_job sj = {s, c->partials};
	bpi_parallel_for(n, CELLS_STATS_GRAIN, threads, stats_chunk, &sj);
	bpi_cells_partial whole = c->partials[0];
	for (uint32_t i = 1; i < stat_chunks; ++i) {
		const bpi_cells_partial *p = &c->partials[i];
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
	status = reserve_buckets(c, c->bucket_count, parts);
	if (status != BP_OK)
		return status;
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
	status = reserve_chunks(c, 2 * blocks);
	if (status != BP_OK)
		return status;
	uint64_t *sums = c->tests; // free until the finder runs
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
	c->start[c->bucket_count] = n;
	scatter_job xj = {c, s, parts};
	bpi_parallel_for((uint32_t)parts, 1, threads, scatter_part, &xj);
	bpi_parallel_for(n, CELLS_FIND_GRAIN * 16, threads, gather_chunk, &xj);
	uint64_t t1 = bpi_now_ns();

	// Pairs, per fixed chunk of the bucket order.
	status = bpi_pair_chunks_reset(chunks, find_chunks);
	if (status != BP_OK)
		return status;
	find_job fj = {c, s, chunks, c->tests};
	bpi_parallel_for(n, CELLS_FIND_GRAIN, threads, find_chunk, &fj);
	uint64_t tests = 0;
	for (uint32_t i = 0; i < find_chunks; ++i)
		tests += c->tests[i];
	uint64_t t2 = bpi_now_ns();
	status = bpi_pair_chunks_merge(chunks, out, threads);
	uint64_t t3 = bpi_now_ns();
	stats->candidate_tests = tests;
	// Hash: non-empty buckets; cells that collide in a bucket count once.
	stats->cell_count = nonempty;
	stats->ns_build = t1 - t0;
	stats->ns_find = t2 - t1;
	stats->ns_merge = t3 - t2;
	return status;
}
