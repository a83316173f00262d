// SPDX-License-Identifier: MIT
// The active entities' fat boxes as columns for the searchers' sweep (docs/design.md
// "Incremental path"): bands on y (and z) cut the boxes into columns, each kept in x
// order, so a searcher reads the few columns its box reaches, not every box whose x
// range meets it.
#ifndef BP_INCREMENTAL_COLUMNS_H
#define BP_INCREMENTAL_COLUMNS_H

#include "base/bits.h"
#include "incremental/incremental_fat.h"
#include "parallel/sort.h"

/// A fat box as a six-lane record (bpi_rec6_overlap), read in sequence.
typedef struct bpi_active_row {
	float rec[6];
	uint32_t at; ///< its position in the active list
	uint32_t pad;
} bpi_active_row;

/// The row of fat box `f` at position `at`.
static inline bpi_active_row bpi_columns_row(const bpi_fat *f, uint32_t at, int dims)
{
	bpi_active_row r = {.at = at};
	for (int axis = 0; axis < dims; ++axis) {
		r.rec[axis] = f->lo[axis];
		r.rec[3 + axis] = -f->hi[axis];
	}
	return r;
}

/// Zero-initialised is empty.
typedef struct bpi_columns {
	BPI_ARRAY(bpi_active_row) rows; ///< the boxes within reach, column by column, each in x order
	BPI_ARRAY(bpi_active_row) staged; ///< scratch: every box in x order
	BPI_ARRAY(uint32_t) start;      ///< per column its first row, then the row count
	BPI_ARRAY(uint32_t) wide;       ///< positions of the boxes beyond reach on some axis
	BPI_ARRAY(uint32_t) column;     ///< scratch: per box in x order, its column (UINT32_MAX: wide)
	BPI_ARRAY(double) widths;       ///< scratch: per fixed chunk of boxes in x order, their x extents summed
	BPI_ARRAY(bpi_sort_item) fresh; ///< scratch of a merge: the new rows by x, then by column
	BPI_ARRAY(uint32_t) fresh_start; ///< scratch of a merge: per column its first new row
	uint32_t wide_count;
	float reach;                    ///< on x: a row's box holds hi <= fl(lo + reach)
	double band_reach[3];           ///< on y and z: and hi - lo <= band_reach
	double origin[3], scale[3];     ///< band of v on an axis: floor((v - origin) * scale)
	uint32_t bands[3];              ///< bands per axis (1 on x, and on z in 2D)
} bpi_columns;

/// Lays out the fat boxes of the `count` positions in `by_x`, which holds them sorted
/// by fat lo x; `rows` holds every fat box as its row (bpi_columns_row), by position.
/// The same layout on any number of threads.
bp_status bpi_columns_build(bpi_columns *c, const bpi_sort_item *by_x, uint32_t count, const bpi_active_row *rows,
	int dims, int threads);

/// Lays the columns out again on the bands and reach they have: the rows of the positions
/// marked in `stale` (bpi_bit_get) leave, and the `count` rows of `fresh` (rows of stale positions,
/// each position once) join, each column still in x order. A fresh row too wide for the columns
/// joins `wide`, and is copied to `down` (room for `count`) when not NULL, `down_count` rows.
/// The same layout on any number of threads; a build, which plans the bands anew, may differ.
bp_status bpi_columns_merge(bpi_columns *c, const uint64_t *stale, const bpi_active_row *fresh, uint32_t count,
	int dims, bpi_radix_scratch *radix, bpi_active_row *down, uint32_t *down_count);

/// Lays out `count` rows on the bands and reach of `on`, a layout of other rows, into
/// `c`: by column, in x order within one (ties by their place in `rows`). Rows too wide
/// for those bands are copied to `wide` (room for `count`), `wide_count` of them. The
/// same layout on any number of threads.
bp_status bpi_columns_place(bpi_columns *c, const bpi_columns *on, const bpi_active_row *rows, uint32_t count,
	int dims, bpi_radix_scratch *radix, bpi_active_row *wide, uint32_t *wide_count);

/// The columns a box [lo, hi] may meet: bands first[a] .. last[a] on y (a = 1) and z
/// (a = 2). Every row whose box overlaps [lo, hi] lies in them.
void bpi_columns_reach(const bpi_columns *c, const float lo[3], const float hi[3], uint32_t first[3],
	uint32_t last[3]);

/// In column (y band, z band), the rows from the first that may reach x = lo on;
/// the caller scans them while their lo x is <= its hi x. Returns the row range.
void bpi_columns_rows(const bpi_columns *c, uint32_t band_y, uint32_t band_z, float lo_x, uint32_t *first,
	uint32_t *end);

void bpi_columns_free(bpi_columns *c);

#endif
