// SPDX-License-Identifier: MIT
// sap's regions ("multi box pruning"): a coarse grid over the axes other than the
// sweep axis, each box inserted into every region it touches, and a stable counting
// sort of the sweep-sorted boxes by region into one region-major sorted SoA.
//
// Exactness. Let cell() be bpi_sap_cell, monotone non-decreasing. Two overlapping
// boxes a, b have on each region axis p = max(a.min, b.min) <= min(a.max, b.max), so
// cell(p) lies in both [cell(a.min), cell(a.max)] and [cell(b.min), cell(b.max)]:
// both are inserted into region R = cell(p), and R's sweep finds the pair. In any
// region R' holding both, cell(a.min) <= R' and cell(b.min) <= R' per axis, and
// cell(p) = max(cell(a.min), cell(b.min)) by monotonicity, so cell(p) == R' iff one
// of the two boxes has R' as its first cell: the corner bits of sap_regions.h. The pair is
// therefore reported in R alone, whatever the clamping, rounding or grid size.
#include "algorithms/sap_regions.h"
#include "parallel/parallel.h"

#include <math.h>
#include <stdlib.h>

// Cell edge = SAP_REGION_SCALE x the median extent on that axis: finer regions add more to
// the region sort than they save in the sweep (perf/README.md, "sap regions").
#ifndef SAP_REGION_SCALE
#define SAP_REGION_SCALE 4.0
#endif
// At least this many boxes per region on average, so each region's sweep has enough
// boxes to pay for its segment setup and sentinels.
#define SAP_BOXES_PER_REGION 32
// Histogram memory is regions x chunks; this keeps it bounded for huge scenes.
#define SAP_MAX_REGIONS (1u << 22)
// Inserted copies at most this many times n: a scene of boxes much larger than the
// median (or a few huge ones) coarsens the grid instead of exploding the items.
#define SAP_COPY_BUDGET 3
// Extents sampled (fixed stride) for the median.
#define SAP_MEDIAN_SAMPLES 1024
// Boxes per chunk of the bounds and copy-count passes, and of the SoA copy.
#define SAP_PASS_GRAIN 16384
// Counting sort chunks: at least this many boxes, at most SAP_SORT_CHUNKS chunks, so
// the (region, chunk) histogram stays within SAP_SORT_CHUNKS x regions.
#define SAP_SORT_GRAIN 16384
#define SAP_SORT_CHUNKS 64

void bpi_sap_layout_free(bpi_sap_layout *layout)
{
	bpi_array_free(&layout->soa);
	bpi_array_free(&layout->index);
	bpi_array_free(&layout->corner);
	bpi_array_free(&layout->seg_bounds);
	bpi_array_free(&layout->histogram);
	bpi_array_free(&layout->chunk_sums);
	bpi_array_free(&layout->ranges);
}

// Region axis k's cell range of box i.
static inline void sap_cell_range(const bpi_sap_grid *g, const bpi_scene *s, int k, uint32_t i, uint32_t *lo,
	uint32_t *hi)
{
	if (k >= g->count) {
		*lo = *hi = 0;
		return;
	}
	*lo = bpi_sap_cell(g, k, s->min[g->axes[k]][i]);
	*hi = bpi_sap_cell(g, k, s->max[g->axes[k]][i]);
}

typedef struct sap_plan_job {
	const bpi_scene *scene;
	const bpi_sap_grid *grid;
	double *bounds;      ///< per chunk: lo0, hi0, lo1, hi1
	uint64_t *copies;    ///< per chunk
	uint32_t *ranges;    ///< per box: lo0, hi0, lo1, hi1
} sap_plan_job;

static void sap_bounds_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const sap_plan_job *job = ctx;
	const bpi_scene *s = job->scene;
	for (int k = 0; k < job->grid->count; ++k) {
		const float *min = s->min[job->grid->axes[k]], *max = s->max[job->grid->axes[k]];
		float lo = min[begin], hi = max[begin];
		for (uint32_t i = begin + 1; i < end; ++i) {
			lo = min[i] < lo ? min[i] : lo;
			hi = max[i] > hi ? max[i] : hi;
		}
		job->bounds[4 * (size_t)chunk + 2 * (size_t)k] = lo;
		job->bounds[4 * (size_t)chunk + 2 * (size_t)k + 1] = hi;
	}
}

static void sap_copies_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const sap_plan_job *job = ctx;
	uint64_t copies = 0;
	for (uint32_t i = begin; i < end; ++i) {
		uint32_t lo0, hi0, lo1, hi1;
		sap_cell_range(job->grid, job->scene, 0, i, &lo0, &hi0);
		sap_cell_range(job->grid, job->scene, 1, i, &lo1, &hi1);
		uint32_t *range = job->ranges + 4 * (size_t)i;
		range[0] = lo0;
		range[1] = hi0;
		range[2] = lo1;
		range[3] = hi1;
		copies += (uint64_t)(hi0 - lo0 + 1) * (hi1 - lo1 + 1);
	}
	job->copies[chunk] = copies;
}

static double sap_median_extent(const bpi_scene *s, int axis)
{
	float sample[SAP_MEDIAN_SAMPLES];
	const uint32_t n = s->count;
	const uint32_t step = n > SAP_MEDIAN_SAMPLES ? n / SAP_MEDIAN_SAMPLES : 1;
	size_t count = 0;
	for (uint32_t i = 0; i < n && count < SAP_MEDIAN_SAMPLES; i += step)
		sample[count++] = s->max[axis][i] - s->min[axis][i];
	return count ? bpi_select_float(sample, count, count / 2) : 0.0;
}

// Cells per axis for the edges, then the product.
static void sap_grid_set(bpi_sap_grid *g, const double *edge, const double *range, uint32_t max_regions)
{
	g->regions = 1;
	for (int k = 0; k < 2; ++k) {
		g->cells[k] = 1;
		g->inv_edge[k] = 0.0f;
		if (k >= g->count || !(range[k] > 0.0) || !(edge[k] > 0.0))
			continue;
		double cells = ceil(range[k] / edge[k]);
		g->cells[k] = cells >= max_regions ? max_regions : cells < 1.0 ? 1u : (uint32_t)cells;
		g->inv_edge[k] = g->cells[k] > 1 ? (float)(1.0 / edge[k]) : 0.0f;
		g->regions *= g->cells[k];
	}
}

bp_status bpi_sap_grid_plan(bpi_sap_layout *layout, const bpi_scene *s, int axis, bpi_sap_grid *grid)
{
	const uint32_t n = s->count;
	*grid = (bpi_sap_grid){.cells = {1, 1}, .regions = 1};
	for (int a = 0; a < s->dims; ++a)
		if (a != axis)
			grid->axes[grid->count++] = a;
	uint32_t max_regions = BP_MIN(n / SAP_BOXES_PER_REGION, SAP_MAX_REGIONS);
	if (max_regions <= 1)
		return BP_OK; // one region: the plain sweep
	const uint32_t chunks = bpi_chunk_count(n, SAP_PASS_GRAIN);
	if (!bpi_array_reserve(&layout->chunk_sums, 5 * (size_t)chunks) ||
		!bpi_array_reserve(&layout->ranges, 4 * (size_t)n))
		return BP_ERR_OUT_OF_MEMORY;
	sap_plan_job job = {.scene = s, .grid = grid, .copies = layout->chunk_sums.data, .ranges = layout->ranges.data,
		.bounds = (double *)(layout->chunk_sums.data + chunks)};
	bpi_parallel_for(n, SAP_PASS_GRAIN, s->threads, sap_bounds_chunk, &job);
	double edge[2] = {0.0, 0.0}, range[2] = {0.0, 0.0};
	for (int k = 0; k < grid->count; ++k) {
		double lo = job.bounds[2 * k], hi = job.bounds[2 * k + 1];
		for (uint32_t c = 1; c < chunks; ++c) {
			lo = BP_MIN(lo, job.bounds[4 * (size_t)c + 2 * (size_t)k]);
			hi = BP_MAX(hi, job.bounds[4 * (size_t)c + 2 * (size_t)k + 1]);
		}
		grid->origin[k] = (float)lo;
		range[k] = hi - lo;
		edge[k] = SAP_REGION_SCALE * sap_median_extent(s, grid->axes[k]);
		if (!(edge[k] > range[k] / max_regions)) // points or tiny boxes: the cap decides
			edge[k] = range[k] / max_regions;
	}
	sap_grid_set(grid, edge, range, max_regions);
	while (grid->regions > max_regions) {
		edge[0] *= 1.25;
		edge[1] *= 1.25;
		sap_grid_set(grid, edge, range, max_regions);
	}
	// Coarsen while the inserted copies exceed the budget.
	while (grid->regions > 1) {
		bpi_parallel_for(n, SAP_PASS_GRAIN, s->threads, sap_copies_chunk, &job);
		uint64_t copies = 0;
		for (uint32_t c = 0; c < chunks; ++c)
			copies += job.copies[c];
		if (copies <= (uint64_t)SAP_COPY_BUDGET * n)
			break;
		edge[0] *= 2.0;
		edge[1] *= 2.0;
		sap_grid_set(grid, edge, range, max_regions);
	}
	return BP_OK;
}

typedef struct sap_sort_job {
	const bpi_scene *scene;
	const bpi_sap_grid *grid;
	const bpi_sort_item *items;
	bpi_sap_layout *layout;
	uint32_t *histogram; ///< [chunk][region]: counts, then next positions
	const uint32_t *ranges; ///< the plan's cell ranges, by box
} sap_sort_job;

/// The region cells box i covers on each region axis (all 0 with one region,
/// where the plan stores no ranges).
static inline void box_cell_range(const sap_sort_job *job, uint32_t i, uint32_t *lo0, uint32_t *hi0, uint32_t *lo1,
	uint32_t *hi1)
{
	if (job->grid->regions <= 1) {
		*lo0 = *hi0 = *lo1 = *hi1 = 0;
		return;
	}
	const uint32_t *range = job->ranges + 4 * (size_t)i;
	*lo0 = range[0], *hi0 = range[1], *lo1 = range[2], *hi1 = range[3];
}

static void sap_count_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const sap_sort_job *job = ctx;
	const bpi_sap_grid *g = job->grid;
	uint32_t *h = job->histogram + (size_t)chunk * g->regions;
	memset(h, 0, g->regions * sizeof *h);
	for (uint32_t k = begin; k < end; ++k) {
		uint32_t i = bpi_sort_item_index(job->items[k]);
		uint32_t lo0, hi0, lo1, hi1;
		box_cell_range(job, i, &lo0, &hi0, &lo1, &hi1);
		for (uint32_t c1 = lo1; c1 <= hi1; ++c1)
			for (uint32_t c0 = lo0; c0 <= hi0; ++c0)
				++h[c0 + g->cells[0] * c1];
	}
}

static void sap_scatter_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const sap_sort_job *job = ctx;
	const bpi_sap_grid *g = job->grid;
	uint32_t *next = job->histogram + (size_t)chunk * g->regions;
	uint32_t *index = job->layout->index.data;
	uint8_t *corner = job->layout->corner.data;
	const uint8_t bit1 = g->count < 2 ? 2 : 0; // no second region axis: always first
	for (uint32_t k = begin; k < end; ++k) {
		uint32_t i = bpi_sort_item_index(job->items[k]);
		uint32_t lo0, hi0, lo1, hi1;
		box_cell_range(job, i, &lo0, &hi0, &lo1, &hi1);
		for (uint32_t c1 = lo1; c1 <= hi1; ++c1) {
			for (uint32_t c0 = lo0; c0 <= hi0; ++c0) {
				uint32_t at = next[c0 + g->cells[0] * c1]++;
				index[at] = i;
				corner[at] = (uint8_t)((c0 == lo0) | (c1 == lo1) << 1 | bit1);
			}
		}
	}
}

typedef struct sap_copy_job {
	const bpi_scene *scene;
	const uint32_t *index;
	float *soa[6];
	int axes[3]; ///< sweep axis first
} sap_copy_job;

static void sap_copy_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const sap_copy_job *job = ctx;
	const bpi_scene *s = job->scene;
	for (int a = 0; a < s->dims; ++a) {
		const float *min = s->min[job->axes[a]], *max = s->max[job->axes[a]];
		float *smin = job->soa[2 * a], *smax = job->soa[2 * a + 1];
		for (uint32_t k = begin; k < end; ++k) {
			uint32_t i = job->index[k];
			smin[k] = min[i];
			smax[k] = max[i];
		}
	}
}

bp_status bpi_sap_layout_build(bpi_sap_layout *layout, const bpi_scene *s, int axis, const bpi_sap_grid *grid,
	const bpi_sort_item *items)
{
	const uint32_t n = s->count;
	const uint32_t regions = grid->regions;
	layout->segments = 0;
	layout->positions = 0;
	if (n == 0)
		return BP_OK;
	const uint32_t grain = BP_MAX(SAP_SORT_GRAIN, (uint32_t)(((uint64_t)n + SAP_SORT_CHUNKS - 1) / SAP_SORT_CHUNKS));
	const uint32_t chunks = bpi_chunk_count(n, grain);
	if (!bpi_array_reserve(&layout->histogram, (size_t)chunks * regions) ||
		!bpi_array_reserve(&layout->seg_bounds, 2 * (size_t)regions))
		return BP_ERR_OUT_OF_MEMORY;
	layout->seg_begin = layout->seg_bounds.data;
	layout->seg_end = layout->seg_bounds.data + regions;
	sap_sort_job job = {.scene = s, .grid = grid, .items = items, .layout = layout,
		.histogram = layout->histogram.data, .ranges = layout->ranges.data};
	bpi_parallel_for(n, grain, s->threads, sap_count_chunk, &job);

	// Positions in (region, chunk) order, SAP_PAD sentinels after each non-empty region.
	uint64_t at = 0;
	for (uint32_t r = 0; r < regions; ++r) {
		uint64_t first = at;
		for (uint32_t c = 0; c < chunks; ++c) {
			uint32_t *h = &job.histogram[(size_t)c * regions + r];
			uint32_t count = *h;
			*h = (uint32_t)at;
			at += count;
		}
		if (at > first) {
			layout->seg_begin[layout->segments] = (uint32_t)first;
			layout->seg_end[layout->segments++] = (uint32_t)at;
			at += SAP_PAD;
		}
		if (at > UINT32_MAX - SAP_PAD)
			return BP_ERR_OUT_OF_MEMORY; // positions are uint32
	}
	layout->positions = (uint32_t)at;
	layout->stride = ((size_t)at + 15) & ~(size_t)15; // whole cache lines
	if (!bpi_array_reserve(&layout->soa, layout->stride * 2 * (size_t)s->dims) ||
		!bpi_array_reserve(&layout->index, layout->stride) || !bpi_array_reserve(&layout->corner, layout->stride))
		return BP_ERR_OUT_OF_MEMORY;
	bpi_parallel_for(n, grain, s->threads, sap_scatter_chunk, &job);
	for (uint32_t seg = 0; seg < layout->segments; ++seg) {
		for (uint32_t p = layout->seg_end[seg]; p < layout->seg_end[seg] + SAP_PAD; ++p) {
			layout->index.data[p] = 0; // any valid box: the copy below reads it
			layout->corner.data[p] = 0;
		}
	}

	sap_copy_job copy = {.scene = s, .index = layout->index.data};
	copy.axes[0] = axis;
	for (int k = 0; k < grid->count; ++k)
		copy.axes[k + 1] = grid->axes[k];
	for (int a = 0; a < 2 * s->dims; ++a)
		copy.soa[a] = layout->soa.data + (size_t)a * layout->stride;
	bpi_parallel_for(layout->positions, SAP_PASS_GRAIN, s->threads, sap_copy_chunk, &copy);
	for (uint32_t seg = 0; seg < layout->segments; ++seg) {
		for (uint32_t p = layout->seg_end[seg]; p < layout->seg_end[seg] + SAP_PAD; ++p) {
			copy.soa[0][p] = INFINITY; // the sentinel: ends every run in the segment
			for (int a = 1; a < 2 * s->dims; ++a)
				copy.soa[a][p] = 0.0f;
		}
	}
	return BP_OK;
}
