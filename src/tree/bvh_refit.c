// SPDX-License-Identifier: MIT
// Refits a hierarchy (bvh.h): the same shape over the entities' current bounds. Leaves in
// parallel chunks, each entity's box read in the order of the build's list and written into
// its slot; then each subtree's blocks on one thread from its last block back (a child's
// block comes after its parent's), then the few blocks above the subtrees. The cost sums
// per subtree in subtree order, so it too is the same for any thread count.
#include "tree/bvh.h"
#include "parallel/parallel.h"

#include <math.h>
#include <string.h>

/// Leaves per chunk of a refit.
#define REFIT_GRAIN 4096u
/// Entities per chunk of the boxes' placing: the 10K movers of a still world's changed
/// part take three, so a second thread shares the misses of their scattered writes.
#define PLACE_GRAIN 4096u
/// Entities ahead whose leaf block a refit starts loading.
#define PLACE_PREFETCH 16u

typedef struct refit_job {
	bpi_bvh *to;
	const bpi_bvh *from;
	bool copy; ///< `to` does not hold from's shape yet: its layout is copied
	const bpi_bvh_bounds *bounds;
	const uint32_t *members;
	bool summarize;       ///< the summaries are gathered again
	bool copy_summaries;  ///< the summaries are kept, copied from `from`
	int dims;
} refit_job;

/// Leaves [begin, end) of a copy: their order and sizes, and their empty lanes' boxes (and
/// in 2D every lane's z), which place_boxes leaves alone.
static void refit_leaves(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const refit_job *job = ctx;
	bpi_bvh *to = job->to;
	memcpy(to->order.data + (size_t)begin * BPI_BVH_LEAF, job->from->order.data + (size_t)begin * BPI_BVH_LEAF,
		(size_t)(end - begin) * BPI_BVH_LEAF * sizeof *to->order.data);
	memcpy(to->leaf_size.data + begin, job->from->leaf_size.data + begin, end - begin);
	for (uint32_t leaf = begin; leaf < end; ++leaf) {
		float *block = to->leaf_boxes.data + (size_t)leaf * BPI_BVH_LEAF_FLOATS;
		for (uint32_t lane = 0; lane < BPI_BVH_LEAF; ++lane)
			for (int a = 0; a < 3; ++a)
				if (lane >= to->leaf_size.data[leaf] || a >= job->dims) {
					block[(uint32_t)a * BPI_BVH_LEAF + lane] = INFINITY;
					block[(uint32_t)(3 + a) * BPI_BVH_LEAF + lane] = -INFINITY;
				}
	}
}

/// Entities [begin, end) of the build's list: each one's box into its slot.
static void place_boxes(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const refit_job *job = ctx;
	bpi_bvh *to = job->to;
	if (job->copy)
		memcpy(to->slot.data + begin, job->from->slot.data + begin, (size_t)(end - begin) * sizeof *to->slot.data);
	// The pointers in locals and the axes unrolled: a loop over job->dims axes read them again per entity.
	const uint32_t *slots = to->slot.data, *members = job->members;
	float *boxes = to->leaf_boxes.data;
	const float *min_x = job->bounds->min[0], *min_y = job->bounds->min[1], *min_z = job->bounds->min[2];
	const float *max_x = job->bounds->max[0], *max_y = job->bounds->max[1], *max_z = job->bounds->max[2];
	const bool three = job->dims == 3;
	for (uint32_t i = begin; i < end; ++i) {
		// The leaf blocks are written at random: started early, their misses overlap.
		if (i + PLACE_PREFETCH < end) {
			const char *ahead =
				(const char *)(boxes + (size_t)(slots[i + PLACE_PREFETCH] / BPI_BVH_LEAF) * BPI_BVH_LEAF_FLOATS);
			for (size_t line = 0; line < BPI_BVH_LEAF_FLOATS * sizeof(float); line += 64)
				__builtin_prefetch(ahead + line, 1);
		}
		const uint32_t e = members ? members[i] : i, slot = slots[i];
		float *at = boxes + (size_t)(slot / BPI_BVH_LEAF) * BPI_BVH_LEAF_FLOATS + slot % BPI_BVH_LEAF;
		at[0] = min_x[e], at[BPI_BVH_LEAF] = min_y[e];
		at[3 * BPI_BVH_LEAF] = max_x[e], at[4 * BPI_BVH_LEAF] = max_y[e];
		if (three)
			at[2 * BPI_BVH_LEAF] = min_z[e], at[5 * BPI_BVH_LEAF] = max_z[e];
	}
}

/// Boxes node block j of `to`, its references (and kept summaries) first taken from `from`.
static double refit_block(const refit_job *job, uint32_t j)
{
	if (job->copy)
		memcpy(job->to->nodes.data + (size_t)j * BPI_BVH_BLOCK_WORDS + 12,
			job->from->nodes.data + (size_t)j * BPI_BVH_BLOCK_WORDS + 12, 4 * sizeof *job->to->nodes.data);
	if (job->copy_summaries)
		memcpy(job->to->summaries.data + 2 * (size_t)j, job->from->summaries.data + 2 * (size_t)j,
			2 * sizeof *job->to->summaries.data);
	return bpi_bvh_box_block(job->to, j, job->bounds, job->summarize, job->dims);
}

/// Each part's blocks from its last back. A part's blocks lie together, so its references
/// (with the floats the boxing overwrites) and kept summaries are copied in one go each.
static void refit_parts(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const refit_job *job = ctx;
	bpi_bvh *to = job->to;
	for (uint32_t p = begin; p < end; ++p) {
		const uint32_t first = to->part_blocks.data[2 * (size_t)p], blocks = to->part_blocks.data[2 * (size_t)p + 1];
		if (job->copy)
			memcpy(to->nodes.data + (size_t)first * BPI_BVH_BLOCK_WORDS,
				job->from->nodes.data + (size_t)first * BPI_BVH_BLOCK_WORDS,
				(size_t)blocks * BPI_BVH_BLOCK_WORDS * sizeof *to->nodes.data);
		if (job->copy_summaries)
			memcpy(to->summaries.data + 2 * (size_t)first, job->from->summaries.data + 2 * (size_t)first,
				2 * (size_t)blocks * sizeof *to->summaries.data);
		to->part_cost.data[p] = bpi_bvh_box_blocks(to, first, blocks, job->bounds, job->summarize, job->dims);
	}
}

/// Makes `to` as large as `from` and copies its layout.
static bool copy_layout(bpi_bvh *to, const bpi_bvh *from)
{
	if (!bpi_array_reserve(&to->order, (size_t)from->leaves * BPI_BVH_LEAF) ||
		!bpi_array_reserve(&to->leaf_size, BP_MAX(from->leaves, 1u)) ||
		!bpi_array_reserve(&to->leaf_boxes, (size_t)from->leaves * BPI_BVH_LEAF_FLOATS) ||
		!bpi_array_reserve(&to->nodes, (size_t)from->blocks * BPI_BVH_BLOCK_WORDS) ||
		!bpi_array_reserve(&to->part_blocks, 2 * (size_t)BP_MAX(from->parts, 1u)) ||
		!bpi_array_reserve(&to->part_cost, BP_MAX(from->parts, 1u)) ||
		!bpi_array_reserve(&to->top, BP_MAX(from->top_count, 1u)))
		return false;
	to->leaves = from->leaves;
	to->blocks = from->blocks;
	to->parts = from->parts;
	to->top_count = from->top_count;
	to->built_cost = from->built_cost;
	if (!bpi_array_reserve(&to->slot, BP_MAX(from->count, 1u)) ||
		(from->summarized && !bpi_array_reserve(&to->summaries, 2 * (size_t)from->blocks)))
		return false;
	if (from->parts)
		memcpy(to->part_blocks.data, from->part_blocks.data, 2 * (size_t)from->parts * sizeof *to->part_blocks.data);
	if (from->top_count)
		memcpy(to->top.data, from->top.data, from->top_count * sizeof *to->top.data);
	return true;
}

bp_status bpi_bvh_refit_copy(bpi_bvh *to, const bpi_bvh *from, const bpi_bvh_bounds *bounds, const uint32_t *members,
	bool filters_kept, int dims, int threads)
{
	const uint32_t count = from->count;
	// A part retired after a refit of the same shape holds it still (view_hierarchy.c).
	const bool copy = to != from && !(to->shape && to->shape == from->shape);
	to->count = 0;
	to->summarized = from->summarized && bounds->category && bounds->mask && bounds->flags;
	if (copy) {
		to->shape = 0;
		if (!copy_layout(to, from))
			return BP_ERR_OUT_OF_MEMORY;
	}
	// Gathering a leaf's filters reads three arrays at random per entity: most of a refit.
	const bool keep = to->summarized && filters_kept;
	refit_job job = {to, from, copy, bounds, members, to->summarized && !keep, keep && to != from, dims};
	if (copy)
		bpi_parallel_for(from->leaves, REFIT_GRAIN, threads, refit_leaves, &job);
	bpi_parallel_for(count, PLACE_GRAIN, threads, place_boxes, &job);
	bpi_parallel_for(from->parts, 1, threads, refit_parts, &job);
	double cost = 0.0;
	for (uint32_t p = 0; p < from->parts; ++p)
		cost += to->part_cost.data[p];
	for (uint32_t t = 0; t < from->top_count; ++t)
		cost += refit_block(&job, to->top.data[t]);
	cost += refit_block(&job, 0);
	to->cost = cost;
	to->count = count;
	to->shape = from->shape;
	return BP_OK;
}

void bpi_bvh_refit(bpi_bvh *bvh, const bpi_bvh_bounds *bounds, const uint32_t *members, int dims, int threads)
{
	(void)bpi_bvh_refit_copy(bvh, bvh, bounds, members, false, dims, threads); // in place: nothing to allocate
}
