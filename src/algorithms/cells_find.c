// SPDX-License-Identifier: MIT
// The pair finder behind grid and hash: walks the bucket order cells_build.c sorted, a group
// of entities sharing a home cell at a time, testing records against neighbour rows.
#include "algorithms/cells.h"

#include <string.h>

#include "parallel/parallel.h"

// Pair finding, cell by cell, per fixed chunk of the bucket order.
//
// The finder walks the bucket order in fixed chunks of entities and takes each
// run of entities sharing a home cell (a "group") at once: the bucket offsets of
// the neighbour rows on the group's own level are read once into a small table,
// then each member scans, per row, one contiguous [start, end) slice of it cut
// to its own far cell. The candidates are exactly those of the per-entity rule
// in cells.h; only the lookups are shared. Coarse members then probe the finer
// levels one by one (rows computed per entity: those are 5% of the entities in
// the mixed scene and none in the others).
//
// Groups and records cut the find to a fraction of per-entity rows; four members of a cell
// in SSE lanes against the whole half neighbourhood (no per-member cut) was tried and
// dropped, as its extra tests cost more than the lanes saved (perf/README.md, "Cells: the finder").

#if defined(__SSE2__)
#include <emmintrin.h>
#define CELLS_SSE 1
#else
#define CELLS_SSE 0
#endif

static inline uint32_t cell_bucket(const bpi_cells *c, int level, int32_t x, int32_t y, int32_t z)
{
	return bpi_cells_bucket(&c->levels[level], level, c->hashed, c->bucket_mask, x, y, z);
}

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

BPI_CELLS_INLINE const float *rec_at(const bpi_cells *c, uint32_t j, int dims)
{
	return c->rec.data + (size_t)j * (dims == 3 ? BPI_CELLS_REC3 : BPI_CELLS_REC2);
}

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
#define CELLS_TABLE_SPAN BPI_CELLS_REACH_MAX
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
				uint32_t base = (bpi_cells_row_hash(k, y, z) + (uint32_t)t->x0) & c->bucket_mask;
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
		// every span, hence every reach, fits BPI_CELLS_REACH_MAX).
		uint32_t reach;
		memcpy(&reach, c->rec.data + (size_t)at * BPI_CELLS_REC3 + 7, sizeof reach);
		for (int axis = 0; axis < 3; ++axis)
			d[axis] = (int32_t)(reach >> (BPI_CELLS_REACH_BITS * axis)) & BPI_CELLS_REACH_MAX;
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
	for (uint32_t at = g0; at < g1 && !q->out->failed; ++at) {
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

// The finder is compiled three times, for the x86-64 baseline (SSE2), for AVX2 machines
// (x86-64-v3) and for AVX-512 ones (v4), and each step runs the newest its CPU has. The
// code is the same; the compiler's encodings and registers differ, which makes the find a
// little faster. The cell build gained nothing from the wider units and is built once
// (perf/README.md, "Cells: the finder").
BPI_CELLS_INLINE void find_chunk_on(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const find_job *job = ctx;
	const bpi_cells *c = job->cells;
	probe q = {.out = &job->chunks->buffers[chunk]};
	if (bpi_pair_buffer_stopped(q.out))
		return; // the step ran out of memory in another chunk
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

#define FIND_CHUNK(name, target) \
	static target void name(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx) \
	{ \
		find_chunk_on(begin, end, chunk, ctx); \
	}

FIND_CHUNK(find_chunk_baseline, )
#if BPI_CELLS_DISPATCH
FIND_CHUNK(find_chunk_avx2, __attribute__((target("avx2,fma,bmi,bmi2,lzcnt,popcnt,movbe"))))
FIND_CHUNK(find_chunk_avx512,
	__attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx512cd,avx2,fma,bmi,bmi2,lzcnt,popcnt,movbe"))))
#endif

static _Atomic int kernel_cap = BPI_CELLS_KERNEL_AVX512;

int bpi_cells_kernel(void)
{
	int best = BPI_CELLS_KERNEL_BASELINE;
#if BPI_CELLS_DISPATCH
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2"))
		best = BPI_CELLS_KERNEL_AVX2;
	if (best == BPI_CELLS_KERNEL_AVX2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
		__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
		best = BPI_CELLS_KERNEL_AVX512;
#endif
	int cap = atomic_load_explicit(&kernel_cap, memory_order_relaxed);
	return best < cap ? best : cap;
}

void bpi_cells_set_kernel_cap(int kernel) { atomic_store(&kernel_cap, kernel); }

const char *bpi_cells_kernel_name(int kernel)
{
	static const char *const names[] = {"x86-64 baseline", "AVX2 (x86-64-v3)", "AVX-512 (x86-64-v4)"};
	return kernel >= 0 && kernel <= BPI_CELLS_KERNEL_AVX512 ? names[kernel] : "?";
}

void bpi_cells_find(const bpi_cells *c, const bpi_scene *s, bpi_pair_chunks *chunks)
{
	find_job fj = {c, s, chunks};
	bpi_range_fn *find_chunk = find_chunk_baseline;
#if BPI_CELLS_DISPATCH
	int kernel = s->debug_flags & BP_DEBUG_NO_SIMD ? BPI_CELLS_KERNEL_BASELINE : bpi_cells_kernel();
	if (kernel == BPI_CELLS_KERNEL_AVX512)
		find_chunk = find_chunk_avx512;
	else if (kernel == BPI_CELLS_KERNEL_AVX2)
		find_chunk = find_chunk_avx2;
#endif
	bpi_parallel_for(s->count, BPI_CELLS_FIND_GRAIN, s->threads, find_chunk, &fj);
}

bp_status bpi_cells_index_find(bpi_index *index, const bpi_scene *scene, bpi_build *build)
{
	(void)build;
	bpi_cells_find(&((bpi_cells_index *)index)->cells, scene, &index->chunks);
	return BP_OK;
}

// ---- queries by an outside box ------------------------------------------------------
//
// A query walks every level in full, as the finder walks a finer level for a member: the
// box is not in the cells, so no half of the neighbourhood is left to anyone else. Its
// cost is memory latency: a resting index of 1M entities is far larger than the caches,
// and each row of cells costs a miss on its bucket start and one on its first record.
// So a query runs in three stages (plan: the rows, prefetching their starts; fetch: the
// record ranges, prefetching their first records; run: the scan), and a caller with many
// queries keeps a few in flight, one stage apart.

static inline probe plan_probe(const bpi_cells *c, const float lo[3], const float hi[3])
{
	probe q = {.lo = {lo[0], lo[1], c->dims == 3 ? lo[2] : 0}, .hi = {hi[0], hi[1], c->dims == 3 ? hi[2] : 0}};
#if CELLS_SSE
	if (c->dims == 3) {
		q.q1 = _mm_setr_ps(q.hi[0], q.hi[1], q.hi[2], -q.lo[0]);
		q.q2 = _mm_setr_ps(-q.lo[1], -q.lo[2], 0, 0);
	} else {
		q.q1 = _mm_setr_ps(q.hi[0], q.hi[1], -q.lo[0], -q.lo[1]);
	}
#endif
	return q;
}

void bpi_cells_plan_query(const bpi_cells *c, const float lo[3], const float hi[3], bpi_cells_query_plan *plan)
{
	BP_ASSERT(!c->hashed);
	probe q = plan_probe(c, lo, hi);
	memcpy(plan->lo, q.lo, sizeof plan->lo);
	memcpy(plan->hi, q.hi, sizeof plan->hi);
	plan->rows = 0;
	plan->overflow = false;
	for (int m = 0; m < c->level_count; ++m) {
		if (!c->levels[m].count)
			continue;
		int32_t home[3], far[3], low[3];
		level_range(c, &q, m, c->dims, home, far, low);
		for (int32_t z = low[2]; z <= far[2]; ++z)
			for (int32_t y = low[1]; y <= far[1]; ++y) {
				if (plan->rows == BPI_CELLS_PLAN_ROWS) {
					plan->overflow = true; // a huge box: bpi_cells_run_query scans it unplanned
					return;
				}
				uint32_t b0 = cell_bucket(c, m, low[0], y, z), r = plan->rows++;
				plan->from[r] = b0;
				plan->to[r] = b0 + (uint32_t)(far[0] - low[0]) + 1;
				__builtin_prefetch(c->start.data + plan->from[r]);
				__builtin_prefetch(c->start.data + plan->to[r]);
			}
	}
}

void bpi_cells_fetch_query(const bpi_cells *c, bpi_cells_query_plan *plan)
{
	if (plan->overflow)
		return;
	const size_t width = c->dims == 3 ? BPI_CELLS_REC3 : BPI_CELLS_REC2;
	for (uint32_t r = 0; r < plan->rows; ++r) {
		plan->from[r] = c->start.data[plan->from[r]];
		plan->to[r] = c->start.data[plan->to[r]];
		__builtin_prefetch(c->rec.data + (size_t)plan->from[r] * width);
	}
}

BPI_CELLS_INLINE uint64_t scan_plan(const bpi_cells *c, const probe *q, const bpi_cells_query_plan *plan, int dims,
	bpi_cells_hit_fn *hit, void *ctx)
{
	uint64_t tests = 0;
	for (uint32_t r = 0; r < plan->rows; ++r) {
		tests += plan->to[r] - plan->from[r];
		for (uint32_t j = plan->from[r]; j < plan->to[r]; ++j)
			if (rec_hit(c, q, j, dims))
				hit(rec_id(c, j, dims), rec_at(c, j, dims), ctx);
	}
	return tests;
}

// The unplanned walk, for boxes with more rows than a plan holds.
BPI_CELLS_INLINE uint64_t scan_levels(const bpi_cells *c, const probe *q, int dims, bpi_cells_hit_fn *hit, void *ctx)
{
	uint64_t tests = 0;
	for (int m = 0; m < c->level_count; ++m) {
		if (!c->levels[m].count)
			continue;
		int32_t home[3], far[3], low[3];
		level_range(c, q, m, dims, home, far, low);
		for (int32_t z = low[2]; z <= far[2]; ++z)
			for (int32_t y = low[1]; y <= far[1]; ++y) {
				uint32_t b0 = cell_bucket(c, m, low[0], y, z);
				uint32_t from = c->start.data[b0], to = c->start.data[b0 + (uint32_t)(far[0] - low[0]) + 1];
				tests += to - from;
				for (uint32_t j = from; j < to; ++j)
					if (rec_hit(c, q, j, dims))
						hit(rec_id(c, j, dims), rec_at(c, j, dims), ctx);
			}
	}
	return tests;
}

uint64_t bpi_cells_run_query(const bpi_cells *c, const bpi_cells_query_plan *plan, bpi_cells_hit_fn *hit, void *ctx)
{
	probe q = plan_probe(c, plan->lo, plan->hi);
	if (plan->overflow)
		return c->dims == 3 ? scan_levels(c, &q, 3, hit, ctx) : scan_levels(c, &q, 2, hit, ctx);
	return c->dims == 3 ? scan_plan(c, &q, plan, 3, hit, ctx) : scan_plan(c, &q, plan, 2, hit, ctx);
}

uint64_t bpi_cells_query(const bpi_cells *c, const float lo[3], const float hi[3], bpi_cells_hit_fn *hit, void *ctx)
{
	bpi_cells_query_plan plan;
	bpi_cells_plan_query(c, lo, hi, &plan);
	bpi_cells_fetch_query(c, &plan);
	return bpi_cells_run_query(c, &plan, hit, ctx);
}

uint32_t bpi_cells_entity_at(const bpi_cells *c, uint32_t position)
{
	return rec_id(c, position, c->dims);
}

void bpi_cells_bounds_at(const bpi_cells *c, uint32_t position, float lo[3], float hi[3])
{
	probe q;
	load_probe(c, &q, position, c->dims);
	memcpy(lo, q.lo, sizeof q.lo);
	memcpy(hi, q.hi, sizeof q.hi);
}

void bpi_cells_hide(bpi_cells *c, uint32_t position)
{
	// A lower corner at +inf on x fails "record min <= query max" for every finite query.
	c->rec.data[(size_t)position * (c->dims == 3 ? BPI_CELLS_REC3 : BPI_CELLS_REC2)] = INFINITY;
}
