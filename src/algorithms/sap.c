// SPDX-License-Identifier: MIT
// sap: sort-and-sweep with regions. Radix sort of the min bounds along the chosen
// axis (reusing last frame's order when it is still sorted), a stable counting sort
// of those boxes into a coarse grid of regions over the other axes
// (sap_regions.c), then a parallel sweep of every region's segment over fixed
// chunks of the region-major sorted range (sap_sweep.c).
//
// Regions cut the sweep's tests by orders of magnitude on all but one-long-axis scenes; at
// large n the region sort (random reads of each box's cells) dominates, and finer regions add
// more there than they save in the sweep (perf/README.md, "sap regions").
// The temporal-coherence reuse below still applies to the sweep-axis sort, which
// is unchanged; the region sort runs every frame.
#include "parallel/parallel.h"
#include "algorithms/sap_regions.h"
#include "algorithms/sap_sweep.h"

// Sorted positions per sweep chunk. Chunk costs vary with local density, so chunks
// are small enough for dynamic scheduling to even them out, large enough that a
// chunk's pair buffer and scheduling overhead stay small.
#define SAP_GRAIN 2048
// Items per chunk of the key rebuild.
#define SAP_COPY_GRAIN 16384
// Axis statistics are taken on at most this many items (a fixed stride), so
// choosing the axis costs nothing next to the sort.
#define SAP_AXIS_SAMPLES 4096


typedef struct sap_index {
	bpi_index base;
	bpi_radix_scratch radix;
	// Last frame's sorted order (key, dense index). Valid when order_count is
	// the scene's count and order_axis its sweep axis.
	BPI_ARRAY(bpi_sort_item) items;
	uint32_t order_count;
	int order_axis;
	uint32_t reuse_backoff; ///< full sorts left before the next attempt to reuse the order
	bpi_sap_layout layout;
	BPI_ARRAY(uint32_t) descents; ///< per chunk of the key rebuild: where last frame's order broke
} sap_index;

// The axis with the largest variance of box centres, from a fixed sample. Ties go
// to the lower axis. A pure function of the scene, so the pair order is too.
static int sap_choose_axis(const bpi_scene *s)
{
	const uint32_t n = s->count;
	const uint32_t stride = n > SAP_AXIS_SAMPLES ? n / SAP_AXIS_SAMPLES : 1;
	int best = 0;
	double best_variance = -1.0;
	for (int axis = 0; axis < s->dims; ++axis) {
		double sum = 0.0, sum2 = 0.0;
		uint32_t samples = 0;
		for (uint32_t i = 0; i < n; i += stride, ++samples) {
			double c = 0.5 * ((double)s->min[axis][i] + (double)s->max[axis][i]);
			sum += c;
			sum2 += c * c;
		}
		double variance = samples ? sum2 / samples - (sum / samples) * (sum / samples) : 0.0;
		if (variance > best_variance) {
			best_variance = variance;
			best = axis;
		}
	}
	return best;
}

typedef struct sap_keys_job {
	const float *min;
	bpi_sort_item *items;
	uint32_t count;
	uint32_t *descents; ///< per chunk: k with items[k] > items[k + 1]
} sap_keys_job;

static void sap_keys_fresh(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const sap_keys_job *job = ctx;
	for (uint32_t i = begin; i < end; ++i)
		job->items[i] = bpi_sort_item_make(bpi_radix_float_key(job->min[i]), i);
}

// New keys in last frame's order, counting where the order is now broken.
static void sap_keys_reuse(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const sap_keys_job *job = ctx;
	bpi_sort_item *items = job->items;
	for (uint32_t k = begin; k < end; ++k) {
		uint32_t i = bpi_sort_item_index(items[k]);
		items[k] = bpi_sort_item_make(bpi_radix_float_key(job->min[i]), i);
	}
	uint32_t descents = 0;
	for (uint32_t k = begin + 1; k < end; ++k)
		descents += items[k - 1] > items[k];
	job->descents[chunk] = descents;
}


// Sorts the scene's mins on `axis` into sap->items. With last frame's order on
// the same axis and entity count, the new keys are laid in that order: when
// still sorted nothing moves, and a few inversions are fixed by an insertion
// sort; otherwise (or past the move budget) a full radix sort from index order.
// Either way the result is the unique (key, index) order, so pairs do not depend
// on history.
//
// On a scene all moving the reuse attempt nearly always fails and costs more than it saves;
// on a still one it skips the radix sort. So after a failed attempt the next SAP_REUSE_BACKOFF frames
// sort from scratch: a moving scene pays the attempt once in 8 frames, a still scene keeps
// the fast path (perf/README.md, "sap: reusing last frame's order").
#define SAP_REUSE_BACKOFF 8
static bp_status sap_sort(sap_index *sap, const bpi_scene *s, int axis, uint32_t *descent_counts, uint32_t chunks)
{
	const uint32_t n = s->count;
	bpi_sort_item *items = sap->items.data;
	sap_keys_job job = {.min = s->min[axis], .items = items, .count = n, .descents = descent_counts};
	bool reuse = bpi_scene_coherent(s) && sap->order_count == n && sap->order_axis == axis && n > 1;
	if (reuse && sap->reuse_backoff > 0) {
		--sap->reuse_backoff;
		reuse = false;
	}
	if (reuse) {
		bpi_parallel_for(n, SAP_COPY_GRAIN, s->threads, sap_keys_reuse, &job);
		uint64_t descents = 0;
		for (uint32_t c = 0; c < chunks; ++c) {
			descents += descent_counts[c];
			if (c > 0)
				descents += items[(size_t)c * SAP_COPY_GRAIN - 1] > items[(size_t)c * SAP_COPY_GRAIN];
		}
		if (descents == 0)
			return BP_OK;
		if (descents <= n / 64 && bpi_insertion_sort_items(items, n, 8 * (uint64_t)n))
			return BP_OK;
		sap->reuse_backoff = SAP_REUSE_BACKOFF;
	}
	sap->order_count = 0;
	bpi_parallel_for(n, SAP_COPY_GRAIN, s->threads, sap_keys_fresh, &job);
	return bpi_radix_sort_items(&sap->radix, items, n, s->threads);
}

static bp_status sap_build(bpi_index *index, const bpi_scene *s, bpi_build *build)
{
	sap_index *sap = (sap_index *)index;
	const uint32_t n = s->count;
	const uint32_t copy_chunks = bpi_chunk_count(n, SAP_COPY_GRAIN);
	// Scratch, all reused across frames: items, the layout, the descent counts.
	const size_t old_items = sap->items.capacity;
	if (!bpi_array_reserve(&sap->items, (size_t)n + 1) || !bpi_array_reserve(&sap->descents, (size_t)copy_chunks + 1) ||
		bpi_radix_sort_reserve(&sap->radix, n) != BP_OK) {
		sap->order_count = 0;
		return BP_ERR_OUT_OF_MEMORY;
	}
	if (sap->items.capacity != old_items)
		sap->order_count = 0; // the old order went with the old array

	const int axis = sap_choose_axis(s);
	bp_status status = sap_sort(sap, s, axis, sap->descents.data, copy_chunks);
	if (status != BP_OK) {
		sap->order_count = 0;
		return status;
	}
	sap->order_count = n;
	sap->order_axis = axis;

	bpi_sap_grid grid;
	status = bpi_sap_grid_plan(&sap->layout, s, axis, &grid);
	if (status == BP_OK)
		status = bpi_sap_layout_build(&sap->layout, s, axis, &grid, sap->items.data);
	build->chunks = bpi_chunk_count(sap->layout.positions, SAP_GRAIN);
	build->cell_count = sap->layout.segments;
	return status;
}

static bp_status sap_find(bpi_index *index, const bpi_scene *s, bpi_build *build)
{
	(void)build;
	const bpi_sap_layout *layout = &((sap_index *)index)->layout;
	// An empty scene has no layout (soa NULL): offsetting NULL, even by 0, is undefined in C.
	if (!layout->soa.data)
		return BP_OK;
	const float *soa = layout->soa.data;
	const size_t stride = layout->stride;
	bpi_sap_sweep sw = {
		.scene = s,
		.layout = layout,
		.min0 = soa, .max0 = soa + stride, .min1 = soa + 2 * stride, .max1 = soa + 3 * stride,
		.min2 = s->dims == 3 ? soa + 4 * stride : NULL, .max2 = s->dims == 3 ? soa + 5 * stride : NULL,
		.chunks = &index->chunks,
		.dims = s->dims,
		.filtered = !s->unfiltered,
		.simd = bpi_sap_simd_enabled(s),
	};
	bpi_parallel_for(layout->positions, SAP_GRAIN, s->threads, bpi_sap_sweep_chunk, &sw);
	return BP_OK;
}

static void sap_release(bpi_index *index)
{
	sap_index *sap = (sap_index *)index;
	bpi_radix_sort_free(&sap->radix);
	bpi_array_free(&sap->items);
	bpi_sap_layout_free(&sap->layout);
	bpi_array_free(&sap->descents);
}

const bpi_algorithm bpi_sap_algorithm = {
	.name = "sap",
	.index_size = sizeof(sap_index),
	.release = sap_release,
	.build = sap_build,
	.find = sap_find,
};
