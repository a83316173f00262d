// SPDX-License-Identifier: MIT
// Builds a hierarchy (view_bvh.h): Morton codes of the entities' centres, a radix sort, the
// tree split top down at the codes' highest differing bit, the bounds gathered into the
// leaves, then node boxes from the leaves up.
#include "view/view_bvh.h"

#include <math.h>
#include <string.h>

#include "parallel/parallel.h"

#define CODE_GRAIN 16384u
#define LEAF_GRAIN 4096u

// Minima and maxima by comparison: finite bounds hold no NaN, and fminf and
// friends are calls into libm on x86-64 without SSE4.1.

/// Moves *array (capacity elements of `size` bytes, `used` of them kept) to storage of
/// exactly `used`; keeps it as it is when that finds no memory.
static void fit(void *array, size_t *capacity, size_t used, size_t size)
{
	void *old, *fresh = NULL;
	memcpy(&old, array, sizeof old);
	if (used >= *capacity || !bpi_array_grow_(&fresh, &(size_t){0}, 0, used, size))
		return;
	memcpy(fresh, old, used * size);
	bpi_array_free_(array, capacity, size);
	memcpy(array, &fresh, sizeof fresh);
	*capacity = BP_MAX(used, (size_t)1);
}

void bpi_view_bvh_drop_scratch(bpi_view_bvh *bvh)
{
	bpi_array_free(&bvh->leaf_first);
	bpi_array_free(&bvh->items);
	bpi_array_free(&bvh->records);
	bpi_radix_sort_free(&bvh->radix);
	fit(&bvh->nodes.data, &bvh->nodes.capacity, (size_t)bvh->blocks * BPI_BVH_BLOCK_WORDS, sizeof *bvh->nodes.data);
	fit(&bvh->leaf_size.data, &bvh->leaf_size.capacity, bvh->leaves, 1);
}

void bpi_view_bvh_free(bpi_view_bvh *bvh)
{
	bpi_view_bvh_drop_scratch(bvh);
	bpi_array_free(&bvh->order);
	bpi_array_free(&bvh->leaf_size);
	bpi_array_free(&bvh->leaf_boxes);
	bpi_array_free(&bvh->nodes);
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

// ---- topology ----------------------------------------------------------------------

/// The leading bits codes x and y share (32 when equal: clz of 0 is undefined).
static int shared_bits(uint32_t x, uint32_t y)
{
	return x == y ? 32 : __builtin_clz(x ^ y);
}

/// The first item of the second half of sorted items [lo, hi) (hi - lo >= 2): where
/// the highest bit in which the range's codes differ turns from 0 to 1, or the middle
/// of a range of equal codes.
static uint32_t split_of(const bpi_sort_item *items, uint32_t lo, uint32_t hi)
{
	const uint32_t first = bpi_sort_item_key(items[lo]), last = bpi_sort_item_key(items[hi - 1]);
	if (first == last)
		return lo + (hi - lo) / 2;
	const int common = shared_bits(first, last);
	uint32_t a = lo, b = hi - 1; // code(a) shares more than `common` bits with first; code(b) does not
	while (b - a > 1) {
		const uint32_t mid = a + (b - a) / 2;
		if (shared_bits(first, bpi_sort_item_key(items[mid])) > common)
			a = mid;
		else
			b = mid;
	}
	return b;
}

/// Lays out the subtree of sorted items [lo, hi) and returns its reference: node
/// blocks in preorder (a parent's before its children's), leaves left to right.
/// Node blocks grow as needed (*room false when they cannot); leaves have room for
/// one per entity.
static uint32_t lay_out(bpi_view_bvh *b, uint32_t lo, uint32_t hi, bool *room)
{
	if (hi - lo <= BPI_BVH_LEAF) {
		const uint32_t k = b->leaves++;
		b->leaf_first.data[k] = lo;
		b->leaf_size.data[k] = (uint8_t)(hi - lo);
		return BPI_BVH_LEAF_BIT | k;
	}
	const uint32_t j = b->blocks++, split = split_of(b->items.data, lo, hi);
	*room = *room && bpi_array_grow(&b->nodes, (size_t)j * BPI_BVH_BLOCK_WORDS, ((size_t)j + 1) * BPI_BVH_BLOCK_WORDS);
	const uint32_t left = lay_out(b, lo, split, room), right = lay_out(b, split, hi, room);
	if (*room) {
		b->nodes.data[(size_t)j * BPI_BVH_BLOCK_WORDS + 12] = left;
		b->nodes.data[(size_t)j * BPI_BVH_BLOCK_WORDS + 13] = right;
	}
	return j;
}

// ---- boxes -------------------------------------------------------------------------

typedef struct gather_job {
	bpi_view_bvh *bvh;
	const uint32_t *members;
	int dims;
} gather_job;

/// Leaf blocks and order from the sorted items; spare lanes hold empty boxes.
static void gather_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const gather_job *job = ctx;
	bpi_view_bvh *b = job->bvh;
	for (uint32_t k = begin; k < end; ++k) {
		float *block = b->leaf_boxes.data + (size_t)k * BPI_BVH_LEAF_FLOATS;
		const uint32_t size = b->leaf_size.data[k], first = b->leaf_first.data[k];
		for (uint32_t lane = 0; lane < BPI_BVH_LEAF; ++lane) {
			const uint32_t i = lane < size ? bpi_sort_item_index(b->items.data[first + lane]) : 0;
			const float *r = b->records.data + (size_t)6 * i;
			b->order.data[(size_t)k * BPI_BVH_LEAF + lane] = lane >= size ? UINT32_MAX : job->members ? job->members[i] : i;
			for (int a = 0; a < 3; ++a) {
				const bool real = lane < size && a < job->dims;
				block[(uint32_t)a * BPI_BVH_LEAF + lane] = real ? r[a] : INFINITY;
				block[(uint32_t)(3 + a) * BPI_BVH_LEAF + lane] = real ? r[3 + a] : -INFINITY;
			}
		}
	}
}

/// Writes into lane `lane` of node block j the box of what `ref` holds.
static void box_of(bpi_view_bvh *b, uint32_t j, uint32_t lane, uint32_t ref, int dims)
{
	float *out = (float *)(void *)(b->nodes.data + (size_t)j * BPI_BVH_BLOCK_WORDS);
	const bool leaf = ref & BPI_BVH_LEAF_BIT;
	const float *from = leaf ? bpi_bvh_leaf(b, ref & ~BPI_BVH_LEAF_BIT) : bpi_bvh_block(b, ref);
	const uint32_t lanes = leaf ? BPI_BVH_LEAF : 2u;
	for (int a = 0; a < 3; ++a) {
		float lo = INFINITY, hi = -INFINITY;
		for (uint32_t l = 0; l < lanes && a < dims; ++l) {
			const float bmin = from[(uint32_t)a * lanes + l], bmax = from[(uint32_t)(3 + a) * lanes + l];
			lo = bmin < lo ? bmin : lo;
			hi = bmax > hi ? bmax : hi;
		}
		out[a * 2 + (int)lane] = lo;
		out[(3 + a) * 2 + (int)lane] = hi;
	}
}

bp_status bpi_view_bvh_build(bpi_view_bvh *b, const bpi_soa *soa, const uint32_t *members, uint32_t count, int dims,
	int threads)
{
	b->count = b->leaves = b->blocks = 0;
	// At most `count` leaves (one a leaf when there is none) and as many blocks.
	// Node blocks: about one per 2.5 entities in uniform scenes; more are grown.
	const size_t most = BP_MAX(count, 1u);
	if (!bpi_array_reserve(&b->items, count) || !bpi_array_reserve(&b->records, 6 * (size_t)count) ||
		!bpi_array_reserve(&b->leaf_first, most) || !bpi_array_reserve(&b->leaf_size, most) ||
		!bpi_array_reserve(&b->nodes, (count / 2 + 1) * (size_t)BPI_BVH_BLOCK_WORDS) ||
		bpi_radix_sort_reserve(&b->radix, count) != BP_OK)
		return BP_ERR_OUT_OF_MEMORY;
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
	b->blocks = 1; // block 0: the root
	bool room = true;
	const uint32_t root = lay_out(b, 0, count, &room);
	if (!room)
		return BP_ERR_OUT_OF_MEMORY;
	b->nodes.data[12] = root;
	b->nodes.data[13] = root; // lane 1 of block 0 is never walked
	if (!bpi_array_reserve(&b->order, (size_t)b->leaves * BPI_BVH_LEAF) ||
		!bpi_array_reserve(&b->leaf_boxes, (size_t)b->leaves * BPI_BVH_LEAF_FLOATS))
		return BP_ERR_OUT_OF_MEMORY;
	gather_job gather = {b, members, dims};
	bpi_parallel_for(b->leaves, LEAF_GRAIN, threads, gather_chunk, &gather);
	// Children's blocks come after their parent's: from the last block back, each
	// box is the exact union of boxes already made. A cast that misses a node misses
	// everything below it (the tests are monotone in the bounds).
	for (uint32_t j = b->blocks; j-- > 1;)
		for (uint32_t lane = 0; lane < 2; ++lane)
			box_of(b, j, lane, bpi_bvh_ref(b, j, lane), dims);
	box_of(b, 0, 0, root, dims);
	box_of(b, 0, 1, root, dims);
	b->count = count;
	return BP_OK;
}
