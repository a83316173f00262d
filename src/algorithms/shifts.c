// SPDX-License-Identifier: MIT
// shifts: four-shifts sectors. Each entity sits in the sector of its lower corner;
// pairs are tested only inside a sector, once per shift of the sector grid by half
// a sector in every axis combination (4 passes in 2D, 8 in 3D).
//
// Exactness. Let E be the largest extent of any entity on any axis and H >= E the
// half-sector edge (sector S = 2H). Per axis an entity gets the half-sector index
// q = floor((min - lo) / H), lo the smallest lower corner; its sector coordinate
// under shift h (0 or 1) is (q + h) >> 1, i.e. floor((min - lo + h H) / S). For
// overlapping a and b, a.min <= b.max <= b.min + E and the other way round, so
// |a.min - b.min| <= E <= H and their q differ by at most 1. If the q are equal
// both shifts share a slab; if they are q and q + 1, shift 0 shares it when q is
// even and shift 1 when q is odd. Taking on each axis a shift that shares the
// slab gives a pass that puts a and b in one sector, where the sweep tests them.
// Rounding: q is computed in double from float inputs, monotone in min (a
// subtract and a multiply by a positive number each are), with |q| < 2^25, so
// the computed (b.min - a.min) / H is off by under 2^-25; H is at least
// E (1 + 2^-16), so it stays below 1 and the q still differ by at most 1. Any
// larger H keeps the argument, which is what makes the fallbacks below exact.
//
// Each pair once, without a set. The passes run in the order p = sum h_k << k.
// On axis k, let A_k be the shifts that share a slab for a and b; the passes that
// share a sector are the product of the A_k, and the smallest p in a product of
// per-bit choices takes the smallest allowed bit on every axis. So pass p reports
// a pair iff, on every axis it shifts (h_k = 1), shift 0 does NOT share the slab:
// (q_a >> 1) != (q_b >> 1). One integer compare per shifted axis.
//
// Sector size: the smallest exact one, S = 2 E (1 + 2^-16), or scene->cell_size
// when larger. If that would give more than SHIFTS_SECTORS_PER_ENTITY sectors per
// entity over the span of lower corners (sparse scenes, 1e7 coordinates, +-FLT_MAX
// boxes), S doubles until it fits: fewer, larger sectors stay exact. One giant box
// makes S giant: every entity shares one sector per pass and the sweep inside it
// degenerates toward sap on x alone (toward brute force when x does not separate
// either). Correct, just slow; grid or sap suit such scenes better.
//
// Per pass: sector keys of the entities in x order, a stable radix sort by key
// (so each sector comes out sorted by min x), a gather of the records into that
// order, then a sweep of each sector in fixed chunks of the sorted items; pairs go
// to per-chunk buffers merged in (pass, chunk) order, so the output does not
// depend on the thread count. Memory: 96 bytes per entity (sort item and radix
// scratch 16, records in x order and in sector order 40 each).
// The records are gathered into sector order before the sweep, so its x compares read
// them in order instead of missing the cache; the passes still cost several times grid's
// step (perf/README.md, "shifts").
#include <float.h>
#include <math.h>

#include "algorithms/index.h"
#include "parallel/parallel.h"
#include "parallel/sort.h"

#define SHIFTS_STATS_GRAIN 65536
#define SHIFTS_FILL_GRAIN 16384
#define SHIFTS_FIND_GRAIN 1024
/// Sector count (over the span of lower corners, per pass) at most this many per
/// entity plus SHIFTS_SECTORS_MIN: bounds the sort keys (two 11-bit radix digits
/// below ~1M entities) and the integer ranges.
#define SHIFTS_SECTORS_PER_ENTITY 4.0
#define SHIFTS_SECTORS_MIN 4096.0
/// Half-sector indices per axis at most 2^24: keeps the rounding bound above.
#define SHIFTS_Q_LIMIT 16777216.0

/// An entity in x order: bounds, half-sector indices, dense index. 40 bytes; 2D
/// leaves the z fields zero and never reads them.
typedef struct shifts_record {
	float min[3];
	float max[3];
	int32_t q[3];
	uint32_t entity;
} shifts_record;
_Static_assert(sizeof(shifts_record) == 40, "shifts_record is 40 bytes");

typedef struct shifts_partial {
	double lo[3], hi[3]; ///< range of lower corners
	double extent;       ///< largest max - min on any axis
} shifts_partial;

/// The sector grid of one step.
typedef struct shifts_grid {
	double lo[3];
	double inv_half; ///< 1 / H
	int32_t q_max[3];
	uint32_t stride[3]; ///< key = sum c_k * stride[k]
	double half;        ///< H
} shifts_grid;

typedef struct shifts_index {
	bpi_index base; // first member: converts to and from bpi_index *
	bpi_radix_scratch sort;
	BPI_ARRAY(bpi_sort_item) items;
	BPI_ARRAY(shifts_record) rec;    ///< x order
	BPI_ARRAY(shifts_record) sorted; ///< this pass's sector order
	BPI_ARRAY(shifts_partial) partials;
	BPI_ARRAY(uint64_t) sectors; ///< per find chunk of every pass: sectors it swept
	shifts_grid grid; ///< the last build's
} shifts_index;


typedef struct shifts_job {
	const bpi_scene *scene;
	shifts_index *index;
	shifts_grid grid;
	int pass;
	uint32_t chunk_base; ///< first pair buffer of this pass
} shifts_job;

static void shifts_stats(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const shifts_job *job = ctx;
	const bpi_scene *s = job->scene;
	shifts_partial p = {.extent = 0};
	for (int k = 0; k < 3; ++k) {
		p.lo[k] = DBL_MAX;
		p.hi[k] = -DBL_MAX;
	}
	for (int k = 0; k < s->dims; ++k) {
		const float *mn = s->min[k], *mx = s->max[k];
		double lo = p.lo[k], hi = p.hi[k], extent = p.extent;
		for (uint32_t i = begin; i < end; ++i) {
			double a = mn[i];
			lo = a < lo ? a : lo;
			hi = a > hi ? a : hi;
			double e = (double)mx[i] - a;
			extent = e > extent ? e : extent;
		}
		p.lo[k] = lo;
		p.hi[k] = hi;
		p.extent = extent;
	}
	job->index->partials.data[chunk] = p;
}

static void shifts_x_keys(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const shifts_job *job = ctx;
	const float *mn = job->scene->min[0];
	bpi_sort_item *items = job->index->items.data;
	for (uint32_t i = begin; i < end; ++i)
		items[i] = bpi_sort_item_make(bpi_radix_float_key(mn[i]), i);
}

/// Half-sector index of a lower corner: monotone in x, in [0, q_max].
static inline int32_t shifts_q(float x, double lo, double inv_half, int32_t q_max)
{
	double u = ((double)x - lo) * inv_half; // >= 0: x >= lo
	int32_t q = u < (double)q_max ? (int32_t)u : q_max;
	return q;
}

static void shifts_records(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const shifts_job *job = ctx;
	const bpi_scene *s = job->scene;
	const shifts_grid *g = &job->grid;
	const bpi_sort_item *items = job->index->items.data;
	shifts_record *rec = job->index->rec.data;
	for (uint32_t r = begin; r < end; ++r) {
		uint32_t i = bpi_sort_item_index(items[r]);
		shifts_record e = {.entity = i};
		for (int k = 0; k < s->dims; ++k) {
			e.min[k] = s->min[k][i];
			e.max[k] = s->max[k][i];
			e.q[k] = shifts_q(e.min[k], g->lo[k], g->inv_half, g->q_max[k]);
		}
		rec[r] = e;
	}
}

static void shifts_sector_keys(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const shifts_job *job = ctx;
	const shifts_grid *g = &job->grid;
	const shifts_record *rec = job->index->rec.data;
	bpi_sort_item *items = job->index->items.data;
	int dims = job->scene->dims;
	int32_t h[3] = {job->pass & 1, job->pass >> 1 & 1, job->pass >> 2 & 1};
	for (uint32_t r = begin; r < end; ++r) {
		uint32_t key = 0;
		for (int k = 0; k < dims; ++k)
			key += (uint32_t)((rec[r].q[k] + h[k]) >> 1) * g->stride[k];
		items[r] = bpi_sort_item_make(key, r);
	}
}

static void shifts_gather(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const shifts_job *job = ctx;
	const bpi_sort_item *items = job->index->items.data;
	const shifts_record *rec = job->index->rec.data;
	shifts_record *sorted = job->index->sorted.data;
	for (uint32_t i = begin; i < end; ++i)
		sorted[i] = rec[bpi_sort_item_index(items[i])];
}

/// First item after i whose key differs from `key` (items[i]'s), or count.
/// Galloping, then binary search: a chunk inside one giant sector (one huge box
/// makes the sector span the scene) must not scan to the sector's end linearly,
/// which would cost n / grain scans of n items.
static uint32_t shifts_sector_end(const bpi_sort_item *items, uint32_t i, uint32_t count, uint32_t key)
{
	uint32_t lo = i, step = 1; // items[lo] has the key
	uint32_t hi = i + 1;       // first index not yet known to have it
	while (hi < count && bpi_sort_item_key(items[hi]) == key) {
		lo = hi;
		hi = count - hi > step ? hi + step : count;
		step *= 2;
	}
	// items[lo] has the key; items[hi] (or count) does not.
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (bpi_sort_item_key(items[mid]) == key)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/// Sweeps items [begin, end) of the sector order: each tests the later items of
/// its sector whose min x is within its max x. Inlined per dims so 2D skips z.
static inline __attribute__((always_inline)) void shifts_sweep(const shifts_job *job, uint32_t begin, uint32_t end,
	uint32_t chunk, const int dims)
{
	const bpi_scene *s = job->scene;
	const shifts_index *index = job->index;
	const bpi_sort_item *items = index->items.data;
	const shifts_record *rec = index->sorted.data;
	bpi_pair_buffer *out = &index->base.chunks.buffers[job->chunk_base + chunk];
	if (bpi_pair_buffer_stopped(out))
		return; // the step ran out of memory in another chunk
	const uint32_t count = s->count;
	const int pass = job->pass;
	const bool filtered = !s->unfiltered;
	uint64_t tests = 0, sectors = 0;
	uint32_t sector_end = begin; // end of the sector holding item i
	for (uint32_t i = begin; i < end && !out->failed; ++i) {
		if (i == sector_end) {
			// A new sector (or the chunk's first item): find where it ends once, so
			// the sweep below compares no keys.
			uint32_t key = bpi_sort_item_key(items[i]);
			sectors += i == 0 || bpi_sort_item_key(items[i - 1]) != key;
			sector_end = shifts_sector_end(items, i, count, key);
		}
		const shifts_record *a = &rec[i];
		float max_x = a->max[0];
		for (uint32_t j = i + 1; j < sector_end; ++j) {
			const shifts_record *b = &rec[j];
			// Sorted by min x inside the sector, and a.min x <= b.min x <= b.max x.
			if (b->min[0] > max_x)
				break;
			++tests;
			if (!(a->min[1] <= b->max[1] && b->min[1] <= a->max[1]))
				continue;
			if (dims == 3 && !(a->min[2] <= b->max[2] && b->min[2] <= a->max[2]))
				continue;
			// Reported by an earlier pass iff shift 0 shares the slab on an axis this
			// pass shifts (see the top of the file).
			bool earlier = false;
			for (int k = 0; k < dims; ++k)
				earlier |= (pass >> k & 1) && (a->q[k] >> 1) == (b->q[k] >> 1);
			if (earlier)
				continue;
			if (filtered && !bpi_scene_accepts(s, a->entity, b->entity))
				continue;
			bpi_pair_push(out, a->entity, b->entity);
		}
	}
	out->tests = tests;
	index->sectors.data[job->chunk_base + chunk] = sectors;
}

static void shifts_find2(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	shifts_sweep(ctx, begin, end, chunk, 2);
}

static void shifts_find3(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	shifts_sweep(ctx, begin, end, chunk, 3);
}

/// Chooses H from the statistics: the smallest exact half sector (or the
/// requested one when larger), doubled until the sector count is bounded.
static shifts_grid shifts_choose_grid(const bpi_scene *s, const shifts_partial *p)
{
	shifts_grid g = {.stride = {0, 0, 0}};
	double span_max = 0;
	for (int k = 0; k < s->dims; ++k) {
		g.lo[k] = p->lo[k];
		span_max = BP_MAX(span_max, p->hi[k] - p->lo[k]);
	}
	double half = p->extent * (1.0 + 0x1p-16);
	if (s->cell_size > 0)
		half = BP_MAX(half, 0.5 * (double)s->cell_size);
	half = BP_MAX(half, span_max / SHIFTS_Q_LIMIT);
	if (!(half > 0))
		half = 1.0; // every lower corner is the same point: any sector works
	// Keys are uint32: the product of the per-axis sector counts must fit.
	double limit = BP_MIN(SHIFTS_SECTORS_PER_ENTITY * s->count + SHIFTS_SECTORS_MIN, (double)UINT32_MAX);
	for (;;) {
		double sectors = 1;
		double inv = 1.0 / half;
		for (int k = 0; k < s->dims; ++k) {
			// The same expression as shifts_q, so no lower corner exceeds q_max.
			double q = floor((p->hi[k] - p->lo[k]) * inv);
			g.q_max[k] = (int32_t)q;
			sectors *= (double)((g.q_max[k] + 1) / 2 + 1);
		}
		if (sectors <= limit) {
			g.half = half;
			g.inv_half = inv;
			break;
		}
		half *= 2;
	}
	uint32_t stride = 1;
	for (int k = 0; k < s->dims; ++k) {
		g.stride[k] = stride;
		stride *= (uint32_t)((g.q_max[k] + 1) / 2 + 1);
	}
	return g;
}

static bp_status shifts_reserve(shifts_index *index, uint32_t n, uint32_t stats_chunks, uint32_t find_chunks)
{
	if (!bpi_array_reserve(&index->items, n) || !bpi_array_reserve(&index->rec, n) ||
		!bpi_array_reserve(&index->sorted, n) || !bpi_array_reserve(&index->partials, BP_MAX(stats_chunks, 1)) ||
		!bpi_array_reserve(&index->sectors, find_chunks))
		return BP_ERR_OUT_OF_MEMORY;
	return bpi_radix_sort_reserve(&index->sort, n);
}

// The sector grid and the entities in x order once; each pass's stable sort by
// sector (in find) keeps that order inside a sector.
static bp_status shifts_build(bpi_index *base, const bpi_scene *scene, bpi_build *build)
{
	shifts_index *index = (shifts_index *)base;
	const uint32_t n = scene->count;
	const uint32_t stats_chunks = bpi_chunk_count(n, SHIFTS_STATS_GRAIN);
	const uint32_t chunks = bpi_chunk_count(n, SHIFTS_FIND_GRAIN) << scene->dims;
	bp_status status = shifts_reserve(index, n, stats_chunks, chunks);
	if (status != BP_OK)
		return status;

	shifts_job job = {.scene = scene, .index = index};
	bpi_parallel_for(n, SHIFTS_STATS_GRAIN, scene->threads, shifts_stats, &job);
	shifts_partial all = n ? index->partials.data[0] : (shifts_partial){.extent = 0};
	for (uint32_t c = 1; c < stats_chunks; ++c) {
		const shifts_partial *p = &index->partials.data[c];
		for (int k = 0; k < 3; ++k) {
			all.lo[k] = BP_MIN(all.lo[k], p->lo[k]);
			all.hi[k] = BP_MAX(all.hi[k], p->hi[k]);
		}
		all.extent = BP_MAX(all.extent, p->extent);
	}
	job.grid = shifts_choose_grid(scene, &all);
	bpi_parallel_for(n, SHIFTS_FILL_GRAIN, scene->threads, shifts_x_keys, &job);
	status = bpi_radix_sort_items(&index->sort, index->items.data, n, scene->threads);
	if (status != BP_OK)
		return status;
	bpi_parallel_for(n, SHIFTS_FILL_GRAIN, scene->threads, shifts_records, &job);
	index->grid = job.grid;
	build->chunks = chunks;
	build->cell_size = (float)fmin(2.0 * job.grid.half, FLT_MAX);
	for (int k = 0; k < 3; ++k)
		build->cell_origin[k] = (float)job.grid.lo[k]; // pass 0's sectors
	return BP_OK;
}

// Every pass sorts the entities by its sectors, then sweeps each sector; the
// sort belongs to the pass, so it is timed as find.
static bp_status shifts_find(bpi_index *base, const bpi_scene *scene, bpi_build *build)
{
	shifts_index *index = (shifts_index *)base;
	const uint32_t n = scene->count;
	const uint32_t pass_chunks = bpi_chunk_count(n, SHIFTS_FIND_GRAIN);
	shifts_job job = {.scene = scene, .index = index, .grid = index->grid};
	for (int pass = 0; pass < 1 << scene->dims; ++pass) {
		job.pass = pass;
		job.chunk_base = (uint32_t)pass * pass_chunks;
		bpi_parallel_for(n, SHIFTS_FILL_GRAIN, scene->threads, shifts_sector_keys, &job);
		bp_status status = bpi_radix_sort_items(&index->sort, index->items.data, n, scene->threads);
		if (status != BP_OK)
			return status;
		bpi_parallel_for(n, SHIFTS_FILL_GRAIN, scene->threads, shifts_gather, &job);
		bpi_parallel_for(n, SHIFTS_FIND_GRAIN, scene->threads, scene->dims == 3 ? shifts_find3 : shifts_find2, &job);
		if (bpi_budget_stopped(scene->budget))
			return BP_ERR_OUT_OF_MEMORY; // the next passes would stop at their first entity
	}
	for (uint32_t c = 0; c < build->chunks; ++c)
		build->cell_count += index->sectors.data[c];
	return BP_OK;
}

static void shifts_release(bpi_index *base)
{
	shifts_index *index = (shifts_index *)base;
	bpi_radix_sort_free(&index->sort);
	bpi_array_free(&index->items);
	bpi_array_free(&index->rec);
	bpi_array_free(&index->sorted);
	bpi_array_free(&index->partials);
	bpi_array_free(&index->sectors);
}

const bpi_algorithm bpi_shifts_algorithm = {
	.name = "shifts",
	.index_size = sizeof(shifts_index),
	.release = shifts_release,
	.build = shifts_build,
	.find = shifts_find,
};
