// SPDX-License-Identifier: MIT
// Cell machinery shared by grid and hash: levels of cells, the float->cell function,
// the parallel counting sort of cell keys ("hash build") and the cell pair finder.
#ifndef BP_CELLS_H
#define BP_CELLS_H

#include <math.h>
#include "index.h"

#define BPI_CELLS_MAX_LEVELS 12
/// Largest |cell coordinate| of a hashed cell; clamping there keeps sums of a
/// coordinate and a span inside int32.
#define BPI_CELLS_LIMIT (1 << 29)
/// Counting-sort partitions (at most; one per thread). The sorted order is the
/// unique stable one, so it does not depend on how many are used.
#define BPI_CELLS_MAX_PARTS 4

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
	BPI_ARRAY(uint64_t) sums; ///< per block of buckets: the prefix sum's totals, then non-empty counts
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

/// Sorts the entities of `scene` into cells hashed (hash) or laid out densely
/// over the scene bounds (grid), and fills `build`. BP_ERR_UNSUPPORTED when no
/// cell size fits the spans in float.
bp_status bpi_cells_build(bpi_cells *cells, bool hashed, const bpi_scene *scene, bpi_build *build);
/// Finds every accepted pair of the built cells into the chunk buffers.
void bpi_cells_find(const bpi_cells *cells, const bpi_scene *scene, bpi_pair_chunks *chunks);
void bpi_cells_free(bpi_cells *cells);

/// The index of grid and hash, which differ only in how cells map to buckets.
typedef struct bpi_cells_index {
	bpi_index base; ///< first member: converts to and from bpi_index *
	bpi_cells cells;
} bpi_cells_index;

/// The release and find entries of grid's and hash's tables.
void bpi_cells_index_release(bpi_index *index);
bp_status bpi_cells_index_find(bpi_index *index, const bpi_scene *scene, bpi_build *build);

#endif
