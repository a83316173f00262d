// SPDX-License-Identifier: MIT
// Builds a frame's hierarchy for casts (view_bvh.h): Morton codes of the entities' centres,
// a radix sort, the bounds gathered into that order, then node boxes from the leaves up.
#include "view_bvh.h"

#include <math.h>
#include <string.h>

#include "parallel.h"

#define CODE_GRAIN 16384u

// Minima and maxima by comparison: finite bounds hold no NaN, and fminf and
// friends are calls into libm on x86-64 without SSE4.1.

void bpi_view_bvh_free(bpi_view_bvh *bvh)
{
	bpi_array_free(&bvh->order);
	bpi_array_free(&bvh->leaves);
	bpi_array_free(&bvh->nodes);
	bpi_array_free(&bvh->items);
	bpi_array_free(&bvh->records);
	bpi_radix_sort_free(&bvh->radix);
	*bvh = (bpi_view_bvh){0};
}

/// Spreads the low 10 bits of x three apart (3D) or the low 16 two apart (2D).
static uint32_t spread3(uint32_t x)
{
	x &= 0x3FF;
	x = (x | x << 16) & 0x030000FF;
	x = (x | x << 8) & 0x0300F00F;
	x = (x | x << 4) & 0x030C30C3;
	return (x | x << 2) & 0x09249249;
}

static uint32_t spread2(uint32_t x)
{
	x &= 0xFFFF;
	x = (x | x << 8) & 0x00FF00FF;
	x = (x | x << 4) & 0x0F0F0F0F;
	x = (x | x << 2) & 0x33333333;
	return (x | x << 1) & 0x55555555;
}

typedef struct code_job {
	const bpi_soa *soa;
	const uint32_t *members; ///< the entities covered; NULL: all
	int dims;
	double lo[3], scale[3]; ///< centre -> cell: (c - lo) * scale, in [0, cells)
	bpi_sort_item *items;
	float *records; ///< the bounds it reads, 6 floats an entity: the gather then misses once, not 2 * dims times
} code_job;

static void code_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const code_job *job = ctx;
	const double top = job->dims == 3 ? 1023.0 : 65535.0;
	for (uint32_t i = begin; i < end; ++i) {
		uint32_t code = 0;
		const uint32_t e = job->members ? job->members[i] : i;
		float *r = job->records + (size_t)6 * i;
		for (int a = 0; a < job->dims; ++a) {
			r[a] = job->soa->min[a][e];
			r[3 + a] = job->soa->max[a][e];
			double c = 0.5 * ((double)r[a] + r[3 + a]);
			double cell = (c - job->lo[a]) * job->scale[a];
			cell = cell < 0.0 ? 0.0 : cell > top ? top : cell;
			uint32_t q = (uint32_t)cell;
			code |= (job->dims == 3 ? spread3(q) : spread2(q)) << a;
		}
		job->items[i] = bpi_sort_item_make(code, i);
	}
}

typedef struct gather_job {
	bpi_view_bvh *bvh;
	const uint32_t *members;
	int dims;
} gather_job;

static void gather_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const gather_job *job = ctx;
	bpi_view_bvh *b = job->bvh;
	for (uint32_t p = begin; p < end; ++p) {
		const uint32_t i = bpi_sort_item_index(b->items.data[p]);
		const float *r = b->records.data + (size_t)6 * i;
		float *block = b->leaves.data + (size_t)(p / BPI_BVH_LEAF) * BPI_BVH_LEAF_FLOATS;
		const uint32_t lane = p % BPI_BVH_LEAF;
		b->order.data[p] = job->members ? job->members[i] : i;
		for (int a = 0; a < job->dims; ++a) {
			block[(uint32_t)a * BPI_BVH_LEAF + lane] = r[a];
			block[(uint32_t)(3 + a) * BPI_BVH_LEAF + lane] = r[3 + a];
		}
	}
}

/// Bound `bound` (min x, y, z, max x, y, z) of node i's box, in its block.
static float *node_bound(bpi_view_bvh *b, size_t node, int bound)
{
	return b->nodes.data + (node >> 1) * BPI_BVH_PAIR_FLOATS + (size_t)bound * 2 + (node & 1);
}

/// The box of leaf k: the union of its entities' bounds, or empty.
static void leaf_box(bpi_view_bvh *b, int dims, uint32_t k)
{
	const uint32_t first = k * BPI_BVH_LEAF, last = BP_MIN(first + BPI_BVH_LEAF, b->count);
	const float *block = first < b->count ? bpi_bvh_leaf(b, k) : NULL;
	for (int a = 0; a < dims; ++a) {
		float lo = INFINITY, hi = -INFINITY;
		for (uint32_t p = first; p < last; ++p) {
			const float bmin = block[(uint32_t)a * BPI_BVH_LEAF + p - first];
			const float bmax = block[(uint32_t)(3 + a) * BPI_BVH_LEAF + p - first];
			lo = bmin < lo ? bmin : lo;
			hi = bmax > hi ? bmax : hi;
		}
		*node_bound(b, b->first_leaf + k, a) = lo;
		*node_bound(b, b->first_leaf + k, 3 + a) = hi;
	}
}

bp_status bpi_view_bvh_build(bpi_view_bvh *b, const bpi_soa *soa, const uint32_t *members, uint32_t count, int dims,
	int threads)
{
	b->count = 0;
	const uint32_t leaves = (count + BPI_BVH_LEAF - 1) / BPI_BVH_LEAF;
	uint32_t first_leaf = 1;
	while (first_leaf < leaves)
		first_leaf *= 2;
	const size_t leaf_floats = (size_t)BP_MAX(leaves, 1u) * BPI_BVH_LEAF_FLOATS;
	const size_t node_floats = (size_t)first_leaf * BPI_BVH_PAIR_FLOATS;
	if (!bpi_array_reserve(&b->order, count) || !bpi_array_reserve(&b->leaves, leaf_floats) ||
		!bpi_array_reserve(&b->nodes, node_floats) || !bpi_array_reserve(&b->items, count) ||
		!bpi_array_reserve(&b->records, 6 * (size_t)count) ||
		bpi_radix_sort_reserve(&b->radix, count) != BP_OK)
		return BP_ERR_OUT_OF_MEMORY;
	// The last leaf's spare lanes and node 0 (no node) hold empty boxes.
	for (size_t f = 0; f < BPI_BVH_LEAF_FLOATS; ++f)
		b->leaves.data[leaf_floats - BPI_BVH_LEAF_FLOATS + f] = f < 3 * BPI_BVH_LEAF ? INFINITY : -INFINITY;
	for (size_t f = 0; f < BPI_BVH_PAIR_FLOATS; ++f)
		b->nodes.data[f] = f < 6 ? INFINITY : -INFINITY;
	// Cells over the span of the centres, so the codes use every bit the scene needs.
	code_job job = {
		.soa = soa, .members = members, .dims = dims, .items = b->items.data, .records = b->records.data};
	for (int a = 0; a < dims; ++a) {
		double lo = INFINITY, hi = -INFINITY;
		for (uint32_t i = 0; i < count; ++i) {
			const uint32_t e = members ? members[i] : i;
			double c = 0.5 * ((double)soa->min[a][e] + soa->max[a][e]);
			lo = c < lo ? c : lo;
			hi = c > hi ? c : hi;
		}
		job.lo[a] = lo;
		job.scale[a] = hi > lo ? (dims == 3 ? 1024.0 : 65536.0) / (hi - lo) : 0.0;
	}
	bpi_parallel_for(count, CODE_GRAIN, threads, code_chunk, &job);
	if (bpi_radix_sort_items(&b->radix, b->items.data, count, threads) != BP_OK)
		return BP_ERR_OUT_OF_MEMORY;
	b->count = count;
	b->first_leaf = first_leaf;
	gather_job gather = {b, members, dims};
	bpi_parallel_for(count, CODE_GRAIN, threads, gather_chunk, &gather);
	for (uint32_t k = 0; k < first_leaf; ++k)
		leaf_box(b, dims, k);
	// Each inner node is the exact union of its two children: a cast that misses
	// it misses everything below (the cast's slab arithmetic is monotone in the bounds).
	for (size_t node = first_leaf - 1; node >= 1; --node)
		for (int a = 0; a < dims; ++a) {
			const float *kids = b->nodes.data + node * BPI_BVH_PAIR_FLOATS;
			const float lo0 = kids[2 * a], lo1 = kids[2 * a + 1];
			const float hi0 = kids[2 * (3 + a)], hi1 = kids[2 * (3 + a) + 1];
			*node_bound(b, node, a) = lo1 < lo0 ? lo1 : lo0;
			*node_bound(b, node, 3 + a) = hi1 > hi0 ? hi1 : hi0;
		}
	return BP_OK;
}

void bpi_view_bvh_drop_scratch(bpi_view_bvh *bvh)
{
	bpi_array_free(&bvh->items);
	bpi_array_free(&bvh->records);
	bpi_radix_sort_free(&bvh->radix);
}
