// SPDX-License-Identifier: MIT
// Cell machinery behind grid and hash, shared by the build (cells_build.c) and the pair
// finder (cells_find.c): levels of cells, the float->cell function, the bucket of a cell.
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
// The alternative, the lower-corner rule of docs/design.md "Algorithms" (insert an entity in every cell
// it touches, report a pair only in the cell of max(a.min, b.min)), was estimated
// and not built: with cells ~ the median extent an entity touches ~8 cells in 3D,
// so the sorted copy is 8x larger (~230 bytes per entity, over the 80-byte
// budget) and the build moves 8x the data; with cells of 2x the extent it still
// touches ~3.4 cells and tests about as many candidates as one home cell scanning
// its neighbour rows.
#ifndef BP_CELLS_H
#define BP_CELLS_H

#include <math.h>
#include <string.h>
#include "algorithms/index.h"

#define BPI_CELLS_MAX_LEVELS 12
/// Largest |cell coordinate| of a hashed cell; clamping there keeps sums of a
/// coordinate and a span inside int32.
#define BPI_CELLS_LIMIT (1 << 29)
/// Counting-sort partitions (at most; one per thread). The sorted order is the
/// unique stable one, so it does not depend on how many are used, nor on whether the
/// sort runs in two levels (cells_split.c) instead.
#define BPI_CELLS_MAX_PARTS 4
/// Per entity the key pass packs its level and, per axis, its reach into the 16 bits
/// of `meta`: the level in the low bits.
#define BPI_CELLS_LEVEL_BITS 4

/// One level of cells: edge `cell`, coordinates clamped to [lo, hi] per axis.
typedef struct bpi_cell_level {
	float cell;
	float inv;
	int32_t lo[3];
	int32_t hi[3];
	int32_t span[3];    ///< largest cell(max) - cell(min) of an entity on this level
	uint32_t count;     ///< entities on this level this step
	uint32_t first;     ///< grid: first bucket of this level
	uint32_t stride[3]; ///< grid: linear cell index = x*stride0 + y*stride1 + z*stride2
} bpi_cell_level;

/// Record layouts. 3D: {min x, min y, min z, -max x, -max y, -max z, index, reach};
/// 2D: {min x, min y, -max x, -max y}. The maxima are stored negated (exact), so
/// one "record <= query" compare per lane tests both sides of every axis against
/// the query {max x, max y, max z, -min x | -min y, -min z, ...}.
#define BPI_CELLS_REC3 8
#define BPI_CELLS_REC2 4

/// Per entity the key pass packs, per axis, its reach far - home capped at
/// BPI_CELLS_REACH_MAX into BPI_CELLS_REACH_BITS bits; 3D records carry it, and the
/// finder reads it back instead of recomputing far cells.
#define BPI_CELLS_REACH_BITS 2
#define BPI_CELLS_REACH_MAX 3
/// Entities per find chunk: the build counts the chunks, the finder walks them.
#define BPI_CELLS_FIND_GRAIN 1024

/// Forced inline: the callers pass constant `hashed` and `dims`, and the copies
/// specialised on them are much faster than one generic loop
/// (perf/README.md, "Cells: the finder").
#define BPI_CELLS_INLINE static inline __attribute__((always_inline))

/// Per-chunk partial of the key pass: entities and largest span per level.
typedef struct bpi_cells_key_partial {
	uint32_t count[BPI_CELLS_MAX_LEVELS];
	int32_t span[BPI_CELLS_MAX_LEVELS][3];
} bpi_cells_key_partial;

/// Per-chunk partial of the statistics pass.
typedef struct bpi_cells_partial {
	float min[3], max[3];
	float max_extent;
	float pad;
} bpi_cells_partial;

/// The index state of grid or hash. Every array is scratch kept across steps and
/// grown only when N (or the bucket or chunk count) grows.
typedef struct bpi_cells {
	bool hashed;
	int dims;
	float origin[3];
	int level_count;
	bpi_cell_level levels[BPI_CELLS_MAX_LEVELS];
	uint32_t bucket_count;
	uint32_t bucket_mask; ///< hash: bucket_count - 1
	int parts;

	BPI_ARRAY(uint32_t) key;  ///< bucket of each entity, input order
	BPI_ARRAY(uint16_t) meta; ///< level and reach of each entity, input order
	/// Bounds in bucket order, one record per entity (see BPI_CELLS_REC3/2): the
	/// finder reads one record per candidate instead of six SoA arrays.
	BPI_ARRAY(float) rec;
	BPI_ARRAY(uint32_t) order; ///< 2D: entity index, bucket order (3D keeps it in the record)
	BPI_ARRAY(int32_t) hcell;  ///< hash: home cell {x, y, z, level} per entity, bucket order

	BPI_ARRAY(uint32_t) start; ///< bucket_count + 1 offsets into the bucket order
	BPI_ARRAY(uint32_t) hist;  ///< parts x bucket_count counts, then cursors

	BPI_ARRAY(bpi_cells_partial) partials; ///< per chunk of the statistics pass
	BPI_ARRAY(bpi_cells_key_partial) key_partials; ///< per chunk of the key pass
	BPI_ARRAY(uint64_t) sums; ///< per block of buckets: the prefix sum's totals, then non-empty counts

	// The two-level sort (cells_split.c): records, keys (and what else the bucket order
	// keeps) in order of the buckets' high bits, and where each group of buckets starts.
	BPI_ARRAY(float) split_rec;
	BPI_ARRAY(uint32_t) split_key;
	BPI_ARRAY(uint32_t) split_order; ///< 2D
	BPI_ARRAY(uint16_t) split_meta;  ///< hash
	BPI_ARRAY(uint32_t) split_start;
} bpi_cells;

/// The one float->cell function. Monotone in x (a rounded subtract, a multiply by
/// a positive number, a clamp and a floor each are), which is all exactness needs:
/// every range of cells the finder scans is derived from it, never recomputed
/// another way. The floor is a truncation fixed up for negatives: floorf is a
/// libm call without SSE4.1 and made the key pass 3x slower (callgrind).
static inline int32_t bpi_cell_coord(float x, float origin, float inv, int32_t lo, int32_t hi)
{
	float t = (x - origin) * inv;
	if (!(t > (float)lo)) // also catches NaN, which finite bounds never give
		return lo;
	if (t >= (float)hi)
		return hi;
	int32_t c = (int32_t)t; // |t| < 2^30 here: no overflow
	c -= (float)c > t;
	return c < lo ? lo : c;
}

/// Hash of the row (y, z) of cells on a level.
static inline uint32_t bpi_cells_row_hash(int level, int32_t y, int32_t z)
{
	uint32_t h = (uint32_t)y * 0x9E3779B1u ^ (uint32_t)z * 0x85EBCA77u ^ (uint32_t)level * 0xC2B2AE3Du;
	h ^= h >> 16;
	h *= 0x7FEB352Du;
	h ^= h >> 15;
	return h;
}

/// The bucket of cell (x, y, z) on a level: the one function the key pass and the
/// finder share. Hash: consecutive x of one row land in consecutive buckets, so a
/// row of cells is one (or, wrapped, two) bucket ranges.
static inline uint32_t bpi_cells_bucket(const bpi_cell_level *l, int level, bool hashed, uint32_t mask, int32_t x,
	int32_t y, int32_t z)
{
	if (hashed)
		return (bpi_cells_row_hash(level, y, z) + (uint32_t)x) & mask;
	return l->first + (uint32_t)x * l->stride[0] + (uint32_t)y * l->stride[1] + (uint32_t)z * l->stride[2];
}

/// Sorts the entities of `scene` into cells hashed (hash) or laid out densely
/// over the scene bounds (grid), and fills `build`. BP_ERR_UNSUPPORTED when no
/// cell size fits the spans in float.
bp_status bpi_cells_build(bpi_cells *cells, bool hashed, const bpi_scene *scene, bpi_build *build);
/// Finds every accepted pair of the built cells into the chunk buffers.
void bpi_cells_find(const bpi_cells *cells, const bpi_scene *scene, bpi_pair_chunks *chunks);

/// The finder's builds (cells_find.c): the newest the CPU has runs, unless the
/// scene asks for BP_DEBUG_NO_SIMD (the baseline). Outside x86-64 with gcc or
/// clang there is only the baseline.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BPI_CELLS_DISPATCH 1
#else
#define BPI_CELLS_DISPATCH 0
#endif
enum { BPI_CELLS_KERNEL_BASELINE, BPI_CELLS_KERNEL_AVX2, BPI_CELLS_KERNEL_AVX512 };
/// The build the finder runs on this CPU.
int bpi_cells_kernel(void);
/// Its name, for messages.
const char *bpi_cells_kernel_name(int kernel);
/// Test hook: no newer build than `kernel` runs. Warning: call only while no step runs.
void bpi_cells_set_kernel_cap(int kernel);

/// Called once for each entity of the cells whose bounds overlap a query box, with
/// its record (BPI_CELLS_REC3/2 layout: the bounds as they were at the build).
typedef void bpi_cells_hit_fn(uint32_t entity, const float *record, void *ctx);
/// Calls hit for every entity of built grid cells (not hash) whose bounds, as
/// they were at the build, overlap the closed box [lo, hi] (dims floats each),
/// each once, in bucket order. Returns the records it tested. Any thread.
uint64_t bpi_cells_query(const bpi_cells *cells, const float lo[3], const float hi[3], bpi_cells_hit_fn *hit,
	void *ctx);

/// Rows a query plan holds: 3x3 rows per level for the usual span of 1.
#define BPI_CELLS_PLAN_ROWS 32
/// bpi_cells_query in three stages, so that a caller can keep several queries in
/// flight, each a stage ahead of the next, and their cache misses overlap:
/// plan (the rows), fetch (their record ranges), run (the scan, as bpi_cells_query).
typedef struct bpi_cells_query_plan {
	float lo[3], hi[3];
	uint32_t rows;
	bool overflow; ///< more rows than a plan holds: run walks the cells unplanned
	uint32_t from[BPI_CELLS_PLAN_ROWS], to[BPI_CELLS_PLAN_ROWS]; ///< buckets, then records once fetched
} bpi_cells_query_plan;
void bpi_cells_plan_query(const bpi_cells *cells, const float lo[3], const float hi[3], bpi_cells_query_plan *plan);
void bpi_cells_fetch_query(const bpi_cells *cells, bpi_cells_query_plan *plan);
uint64_t bpi_cells_run_query(const bpi_cells *cells, const bpi_cells_query_plan *plan, bpi_cells_hit_fn *hit,
	void *ctx);
/// The entity whose record sits at `position` of the bucket order (< entity count).
uint32_t bpi_cells_entity_at(const bpi_cells *cells, uint32_t position);
/// The bounds of the record at `position` as they were at the build (lo[2] = hi[2] = 0
/// in 2D). Read before hiding it: a hidden record's lower x is gone.
void bpi_cells_bounds_at(const bpi_cells *cells, uint32_t position, float lo[3], float hi[3]);
/// Hides the record at `position` from every later query, until the next build.
/// Warning: the finder must not run on the cells again before a build.
void bpi_cells_hide(bpi_cells *cells, uint32_t position);
void bpi_cells_free(bpi_cells *cells);

/// The index of grid and hash, which differ only in how cells map to buckets.
typedef struct bpi_cells_index {
	bpi_index base; ///< first member: converts to and from bpi_index *
	bpi_cells cells;
} bpi_cells_index;

/// The release and find entries of grid's and hash's tables.
void bpi_cells_index_release(bpi_index *index);
bp_status bpi_cells_index_find(bpi_index *index, const bpi_scene *scene, bpi_build *build);

/// Writes entity i's record (BPI_CELLS_REC3/2) at `at` of rec; 2D puts i in order[at].
BPI_CELLS_INLINE void bpi_cells_put_record(float *rec, uint32_t *order, uint32_t at, const float *const min[3],
	const float *const max[3], uint32_t i, uint16_t meta, int dims)
{
	if (dims == 3) {
		float *r = rec + (size_t)at * BPI_CELLS_REC3;
		r[0] = min[0][i];
		r[1] = min[1][i];
		r[2] = min[2][i];
		r[3] = -max[0][i];
		r[4] = -max[1][i];
		r[5] = -max[2][i];
		memcpy(&r[6], &i, sizeof i);
		uint32_t reach = (uint32_t)meta >> BPI_CELLS_LEVEL_BITS;
		memcpy(&r[7], &reach, sizeof reach);
	} else {
		float *r = rec + (size_t)at * BPI_CELLS_REC2;
		r[0] = min[0][i];
		r[1] = min[1][i];
		r[2] = -max[0][i];
		r[3] = -max[1][i];
		order[at] = i;
	}
}

/// Hash: the home cell {x, y, z, level} of a box with lower corner `lo` and key-pass
/// `meta`, into h: the same function and inputs as the key pass, so the same cell,
/// stored so the finder's collision check is compares, not floors.
BPI_CELLS_INLINE void bpi_cells_put_home(int32_t *h, const bpi_cells *c, const float lo[3], uint16_t meta, int dims)
{
	const int k = meta & ((1 << BPI_CELLS_LEVEL_BITS) - 1);
	const bpi_cell_level *l = &c->levels[k];
	for (int axis = 0; axis < 3; ++axis)
		h[axis] = axis < dims ? bpi_cell_coord(lo[axis], c->origin[axis], l->inv, l->lo[axis], l->hi[axis]) : 0;
	h[3] = k;
}

/// Whether the two-level sort takes the counting sort's place: the threads outnumber its
/// partitions, the entities are many enough to cut, and the buckets few enough for its
/// groups (at most 2^24).
bool bpi_cells_split_fits(const bpi_cells *c, uint32_t n, int threads);
/// Puts the records (and 2D order, hash home cells) in bucket order and sets `start`,
/// from the key pass's keys, on every thread; the order is the counting sort's. Returns
/// the non-empty buckets; false without memory.
bool bpi_cells_split_sort(bpi_cells *c, const bpi_scene *s, uint64_t *nonempty);
/// Test hook: the two-level sort from this many entities and for any thread count
/// (0: the defaults).
void bpi_cells_set_split_min(uint32_t entities);

#endif
