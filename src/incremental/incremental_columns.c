// SPDX-License-Identifier: MIT
// Columns of fat boxes (incremental_columns.h). A box whose extent on some axis passes
// twice the mean there is "wide" and left to the caller to test against every searcher;
// the others go to the column of the bands their lo y and lo z fall in, in x order. Bands
// are at least that reach high, so a box that meets a searcher starts at most one band
// below the band of the searcher's lo minus the reach.
//
// Why this is exact: the band of a value is monotone in it, a row's box starts within
// the reach below its hi on y and z, and within a column the rows are in x order, so
// the rows a searcher skips (columns out of its bands, rows before the binary search's
// start) cannot reach its box. Double arithmetic and the precision floor below keep
// every rounding far smaller than a band.
#include "incremental/incremental_columns.h"
#include "parallel/parallel.h"

#include <math.h>
#include <string.h>

/// A box beyond this many times the mean extent on an axis is wide.
#define COLUMNS_WIDE_FACTOR 2.0
/// At most one column per this many boxes: a column's binary search then pays.
#define COLUMNS_MIN_ROWS 4u
/// Bands are never thinner than this share of the coordinates' magnitude, so the
/// rounding of a band's bounds stays far below a band.
#define COLUMNS_PRECISION 0x1p-20
/// Boxes per chunk of a layout's parallel passes: a fixed cut, so the widths sum
/// in the same order on any number of threads.
#define COLUMNS_GRAIN 8192u

void bpi_columns_free(bpi_columns *c)
{
	bpi_array_free(&c->rows);
	bpi_array_free(&c->staged);
	bpi_array_free(&c->start);
	bpi_array_free(&c->wide);
	bpi_array_free(&c->column);
	bpi_array_free(&c->widths);
	bpi_array_free(&c->fresh);
	bpi_array_free(&c->fresh_start);
	*c = (bpi_columns){0};
}

/// Monotone in v. Past the first test t is positive, where truncation is the floor:
/// floor() is a libm call on the baseline x86-64, and a layout takes four per box.
static uint32_t band_of(const bpi_columns *c, int axis, double v)
{
	double t = (v - c->origin[axis]) * c->scale[axis];
	if (!(t >= 1))
		return 0;
	return t >= c->bands[axis] - 1 ? c->bands[axis] - 1 : (uint32_t)t;
}

static uint32_t column_of(const bpi_columns *c, const bpi_active_row *r)
{
	return band_of(c, 1, r->rec[1]) * c->bands[2] + band_of(c, 2, r->rec[2]);
}

/// Bands on `axis` from the rows' lo values and mean extent: as many as the span
/// holds bands of the reach, within `most`.
static void plan_axis(bpi_columns *c, int axis, const bpi_active_row *rows, uint32_t n, uint32_t most)
{
	double extent = 0, lo = INFINITY, hi = -INFINITY;
	for (uint32_t k = 0; k < n; ++k) { // compares, not fmin and fmax: calls into libm here
		double v = rows[k].rec[axis];
		extent += -(double)rows[k].rec[3 + axis] - v;
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	double reach = COLUMNS_WIDE_FACTOR * extent / BP_MAX(n, 1u);
	double span = hi - lo, bands = span / reach;
	c->band_reach[axis] = reach;
	c->origin[axis] = lo;
	c->bands[axis] = 1;
	c->scale[axis] = 0;
	if (!(bands >= 2) || reach < COLUMNS_PRECISION * fmax(fabs(lo), fabs(hi)))
		return; // one band: too few boxes across, or too thin to round safely
	c->bands[axis] = (uint32_t)fmin(floor(bands), most);
	c->scale[axis] = c->bands[axis] / span;
}

static bool is_wide(const bpi_columns *c, const bpi_active_row *r, int dims)
{
	if (!(-r->rec[3] <= r->rec[0] + c->reach)) // also a NaN reach
		return true;
	for (int axis = 1; axis < dims; ++axis)
		if (!(-(double)r->rec[3 + axis] - r->rec[axis] <= c->band_reach[axis]))
			return true;
	return false;
}

/// Per column its row count in start[col + 1] (start[0] 0) to, per column, the cursor
/// of a scatter in start[col + 1]: the start of the column, in the slot of the one
/// after it. Placing row r of column col at start[col + 1]++ leaves the starts whole.
static void cursors_from_counts(uint32_t *start, uint32_t columns)
{
	for (uint32_t col = 0; col < columns; ++col)
		start[col + 1] += start[col];
	for (uint32_t col = columns; col > 0; --col)
		start[col] = start[col - 1];
}

typedef struct layout_job {
	bpi_columns *c;
	const bpi_sort_item *by_x;
	const bpi_active_row *rows;
	int dims;
} layout_job;

/// The chunk's rows gathered in x order, their widths summed.
static void gather_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const layout_job *job = ctx;
	bpi_active_row *staged = job->c->staged.data;
	double width = 0;
	for (uint32_t k = begin; k < end; ++k) {
		staged[k] = job->rows[bpi_sort_item_index(job->by_x[k])];
		width += -(double)staged[k].rec[3] - staged[k].rec[0];
	}
	job->c->widths.data[chunk] = width;
}

static void column_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const layout_job *job = ctx;
	const bpi_columns *c = job->c;
	for (uint32_t k = begin; k < end; ++k) {
		const bpi_active_row *r = &c->staged.data[k];
		c->column.data[k] = is_wide(c, r, job->dims) ? UINT32_MAX : column_of(c, r);
	}
}

bp_status bpi_columns_build(bpi_columns *c, const bpi_sort_item *by_x, uint32_t n, const bpi_active_row *rows,
	int dims, int threads)
{
	const uint32_t chunks = bpi_chunk_count(n, COLUMNS_GRAIN);
	if (!bpi_array_reserve(&c->staged, n) || !bpi_array_reserve(&c->widths, BP_MAX(chunks, 1u)))
		return BP_ERR_OUT_OF_MEMORY;
	// One pass gathers the rows in x order; the others read them in turn.
	layout_job job = {c, by_x, rows, dims};
	bpi_parallel_for(n, COLUMNS_GRAIN, threads, gather_chunk, &job);
	const bpi_active_row *staged = c->staged.data;
	double width = 0;
	for (uint32_t chunk = 0; chunk < chunks; ++chunk)
		width += c->widths.data[chunk];
	c->reach = (float)(COLUMNS_WIDE_FACTOR * width / BP_MAX(n, 1u));
	const uint32_t columns_most = BP_MAX(n / COLUMNS_MIN_ROWS, 1u);
	const uint32_t per_axis = dims == 3 ? (uint32_t)sqrt((double)columns_most) : columns_most;
	c->bands[0] = c->bands[1] = c->bands[2] = 1;
	for (int axis = 1; axis < dims; ++axis)
		plan_axis(c, axis, staged, n, BP_MAX(per_axis, 1u));
	const uint32_t columns = c->bands[1] * c->bands[2];
	if (!bpi_array_reserve(&c->rows, n) || !bpi_array_reserve(&c->wide, n) || !bpi_array_reserve(&c->column, n) ||
		!bpi_array_reserve(&c->start, (size_t)columns + 1))
		return BP_ERR_OUT_OF_MEMORY;
	bpi_parallel_for(n, COLUMNS_GRAIN, threads, column_chunk, &job);
	uint32_t *start = c->start.data, *column = c->column.data, wide = 0;
	memset(start, 0, ((size_t)columns + 1) * sizeof *start);
	for (uint32_t k = 0; k < n; ++k) {
		if (column[k] == UINT32_MAX)
			c->wide.data[wide++] = staged[k].at;
		else
			++start[column[k] + 1];
	}
	c->wide_count = wide;
	cursors_from_counts(start, columns);
	for (uint32_t k = 0; k < n; ++k)
		if (column[k] != UINT32_MAX)
			c->rows.data[start[column[k] + 1]++] = staged[k];
	return BP_OK;
}

/// The fresh rows that fit the columns into c->fresh, by column and in x order within
/// one (ties by their place in `fresh`), their column starts into c->fresh_start; the
/// others to the wide list and `down`. Returns how many fit, UINT32_MAX when memory runs out.
static uint32_t place_fresh(bpi_columns *c, const bpi_active_row *fresh, uint32_t count, int dims,
	bpi_radix_scratch *radix, bpi_active_row *down, uint32_t *down_count)
{
	const uint32_t columns = c->bands[1] * c->bands[2];
	if (!bpi_array_grow(&c->wide, c->wide_count, (size_t)c->wide_count + count) ||
		!bpi_array_reserve(&c->fresh, BP_MAX(count, 1u)) || !bpi_array_reserve(&c->column, BP_MAX(count, 1u)) ||
		!bpi_array_reserve(&c->fresh_start, (size_t)columns + 1))
		return UINT32_MAX;
	bpi_sort_item *items = c->fresh.data;
	uint32_t fits = 0, wide = 0;
	for (uint32_t i = 0; i < count; ++i) {
		if (is_wide(c, &fresh[i], dims)) {
			c->wide.data[c->wide_count++] = fresh[i].at;
			if (down)
				down[wide] = fresh[i];
			wide++;
		} else {
			items[fits++] = bpi_sort_item_make(bpi_radix_float_key(fresh[i].rec[0]), i);
		}
	}
	if (down_count)
		*down_count = wide;
	if (bpi_radix_sort_items(radix, items, fits, 1) != BP_OK)
		return UINT32_MAX;
	// Stable by column: x order holds within each.
	uint32_t *start = c->fresh_start.data, *column = c->column.data;
	memset(start, 0, ((size_t)columns + 1) * sizeof *start);
	for (uint32_t j = 0; j < fits; ++j) {
		column[j] = column_of(c, &fresh[bpi_sort_item_index(items[j])]);
		++start[column[j] + 1];
	}
	cursors_from_counts(start, columns);
	bpi_sort_item *placed = radix->items.data; // the sort's own scratch, free again
	for (uint32_t j = 0; j < fits; ++j)
		placed[start[column[j] + 1]++] = items[j];
	memcpy(items, placed, (size_t)fits * sizeof *items);
	return fits;
}

bp_status bpi_columns_merge(bpi_columns *c, const uint64_t *stale, const bpi_active_row *fresh, uint32_t count,
	int dims, bpi_radix_scratch *radix, bpi_active_row *down, uint32_t *down_count)
{
	const uint32_t columns = c->bands[1] * c->bands[2];
	uint32_t kept_wide = 0;
	for (uint32_t w = 0; w < c->wide_count; ++w) {
		uint32_t at = c->wide.data[w];
		c->wide.data[kept_wide] = at;
		kept_wide += !bpi_bit_get(stale, at);
	}
	c->wide_count = kept_wide;
	const uint32_t rows_before = c->start.data[columns];
	if (bpi_radix_sort_reserve(radix, BP_MAX(count, 1u)) != BP_OK ||
		!bpi_array_reserve(&c->staged, (size_t)rows_before + count))
		return BP_ERR_OUT_OF_MEMORY;
	const uint32_t fits = place_fresh(c, fresh, count, dims, radix, down, down_count);
	if (fits == UINT32_MAX)
		return BP_ERR_OUT_OF_MEMORY;
	const bpi_active_row *old = c->rows.data;
	const bpi_sort_item *items = c->fresh.data;
	const uint32_t *fresh_start = c->fresh_start.data;
	bpi_active_row *out = c->staged.data;
	uint32_t *start = c->start.data, written = 0, a = 0;
	for (uint32_t col = 0; col < columns; ++col) {
		const uint32_t a_end = start[col + 1];
		uint32_t f = fresh_start[col];
		const uint32_t f_end = fresh_start[col + 1];
		start[col] = written;
		for (;;) {
			while (a < a_end && bpi_bit_get(stale, old[a].at))
				++a;
			const bpi_active_row *next = f < f_end ? &fresh[bpi_sort_item_index(items[f])] : NULL;
			if (a < a_end && (!next || old[a].rec[0] <= next->rec[0]))
				out[written++] = old[a++];
			else if (next)
				out[written++] = *next, ++f;
			else
				break;
		}
	}
	start[columns] = written;
	bpi_array_swap(&c->rows, &c->staged);
	return BP_OK;
}

bp_status bpi_columns_place(bpi_columns *c, const bpi_columns *on, const bpi_active_row *rows, uint32_t count,
	int dims, bpi_radix_scratch *radix, bpi_active_row *wide, uint32_t *wide_count)
{
	c->reach = on->reach;
	for (int axis = 0; axis < 3; ++axis) {
		c->band_reach[axis] = on->band_reach[axis];
		c->origin[axis] = on->origin[axis];
		c->scale[axis] = on->scale[axis];
		c->bands[axis] = on->bands[axis];
	}
	c->wide_count = 0;
	const uint32_t columns = c->bands[1] * c->bands[2];
	if (bpi_radix_sort_reserve(radix, BP_MAX(count, 1u)) != BP_OK || !bpi_array_reserve(&c->rows, BP_MAX(count, 1u)) ||
		!bpi_array_reserve(&c->start, (size_t)columns + 1))
		return BP_ERR_OUT_OF_MEMORY;
	const uint32_t fits = place_fresh(c, rows, count, dims, radix, wide, wide_count);
	if (fits == UINT32_MAX)
		return BP_ERR_OUT_OF_MEMORY;
	for (uint32_t j = 0; j < fits; ++j)
		c->rows.data[j] = rows[bpi_sort_item_index(c->fresh.data[j])];
	memcpy(c->start.data, c->fresh_start.data, ((size_t)columns + 1) * sizeof *c->start.data);
	return BP_OK;
}

void bpi_columns_reach(const bpi_columns *c, const float lo[3], const float hi[3], uint32_t first[3],
	uint32_t last[3])
{
	for (int axis = 1; axis < 3; ++axis) {
		if (c->bands[axis] == 1) {
			first[axis] = last[axis] = 0;
			continue;
		}
		uint32_t from = band_of(c, axis, (double)lo[axis] - c->band_reach[axis]);
		first[axis] = from ? from - 1 : 0;
		last[axis] = band_of(c, axis, hi[axis]);
	}
}

void bpi_columns_rows(const bpi_columns *c, uint32_t band_y, uint32_t band_z, float lo_x, uint32_t *first,
	uint32_t *end)
{
	const uint32_t col = band_y * c->bands[2] + band_z;
	const bpi_active_row *rows = c->rows.data;
	uint32_t a = c->start.data[col], b = c->start.data[col + 1];
	*end = b;
	// fl(row lo + reach) is monotone in the row's lo, so the rows it leaves
	// below lo_x are a prefix of the column.
	while (a < b) {
		uint32_t mid = a + (b - a) / 2;
		if (rows[mid].rec[0] + c->reach < lo_x)
			a = mid + 1;
		else
			b = mid;
	}
	*first = a;
}
