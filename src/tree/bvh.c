// SPDX-License-Identifier: MIT
// Builds a hierarchy (bvh.h): codes of the entities' size classes and the Morton codes of
// their centres, a radix sort, the tree split top down at the codes' highest differing bit,
// the bounds gathered into the leaves, then node boxes from the leaves up. Every step runs
// in parallel in fixed chunks: the top of the tree is split serially down to subtrees, which
// are laid out on their own and then numbered where the serial preorder puts them, so the
// output never depends on the thread count.
#include "tree/bvh.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "parallel/parallel.h"

#define CODE_GRAIN 16384u
/// A subtree holds at most max(count / SUBTREE_SHARE, SUBTREE_GRAIN) items: enough
/// subtrees to share among threads, few enough that the serial top stays small.
#define SUBTREE_SHARE 256u
#define SUBTREE_GRAIN 2048u
/// Bins of size_of: every biased float exponent.
#define SIZE_BINS 256u
/// Size classes, in the codes' top bits above the 30 of the Morton code.
#define SIZE_CLASSES 4u
#define CLASS_SHIFT 30
/// Binary sizes past the typical one that a box is still of class 0, in 3D and in 2D. A class
/// of its own costs every query the walk of one more tree, and pays where the box would widen
/// many nodes by much: a box k cells across widens their volume by k^3 in 3D, their area by
/// only k^2 in 2D.
#define LARGE_STEPS_3D 2
#define LARGE_STEPS_2D 4

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

void bpi_bvh_scratch_free(bpi_bvh_scratch *scratch)
{
	bpi_array_free(&scratch->items);
	bpi_array_free(&scratch->records);
	bpi_array_free(&scratch->spans);
	bpi_array_free(&scratch->sizes);
	bpi_array_free(&scratch->size_counts);
	bpi_array_free(&scratch->subtrees);
	bpi_array_free(&scratch->top);
	bpi_array_free(&scratch->leaf_first);
	bpi_array_free(&scratch->links);
	bpi_radix_sort_free(&scratch->radix);
	*scratch = (bpi_bvh_scratch){0};
}

void bpi_bvh_trim(bpi_bvh *bvh)
{
	fit(&bvh->nodes.data, &bvh->nodes.capacity, (size_t)bvh->blocks * BPI_BVH_BLOCK_WORDS, sizeof *bvh->nodes.data);
	fit(&bvh->leaf_size.data, &bvh->leaf_size.capacity, bvh->leaves, 1);
}

void bpi_bvh_free(bpi_bvh *bvh)
{
	bpi_array_free(&bvh->order);
	bpi_array_free(&bvh->leaf_size);
	bpi_array_free(&bvh->leaf_boxes);
	bpi_array_free(&bvh->nodes);
	bpi_array_free(&bvh->slot);
	bpi_array_free(&bvh->summaries);
	bpi_array_free(&bvh->part_blocks);
	bpi_array_free(&bvh->part_cost);
	bpi_array_free(&bvh->top);
	*bvh = (bpi_bvh){0};
}

/// Spreads the low 10 bits of x three apart (3D) or the low 15 two apart (2D).
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
	x &= 0x7FFF;
	x = (x | x << 8) & 0x00FF00FF;
	x = (x | x << 4) & 0x0F0F0F0F;
	x = (x | x << 2) & 0x33333333;
	return (x | x << 1) & 0x55555555;
}

// ---- codes -------------------------------------------------------------------------

static double centre(const float *record, int axis)
{
	return 0.5 * ((double)record[axis] + record[3 + axis]);
}

typedef struct bounds_job {
	const bpi_bvh_bounds *bounds;
	const uint32_t *members; ///< the entities covered; NULL: all
	int dims;
	float *records; ///< the bounds, 6 floats an entity: the gather then misses once, not 2 * dims times
	double *spans;  ///< per chunk: the least centre on each axis, then the greatest
	uint8_t *sizes;        ///< per entity: its size_of
	uint32_t *size_counts; ///< per chunk: entities by size_of, SIZE_BINS counts
} bounds_job;

/// A box's size: the binary exponent of its largest extent, biased as a float's (0 for none
/// or below the normal range, 255 for an infinite one). Boxes of one size are within twice
/// each other's.
static uint32_t size_of(float largest_extent)
{
	uint32_t bits;
	memcpy(&bits, &largest_extent, sizeof bits);
	return bits >> 23 & 0xFFu;
}

/// Copies a chunk's bounds into records, finds the span of its centres and counts its sizes.
static void bounds_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const bounds_job *job = ctx;
	double *span = job->spans + (size_t)6 * chunk;
	uint32_t *counts = job->size_counts + (size_t)SIZE_BINS * chunk;
	for (int a = 0; a < 3; ++a) {
		span[a] = INFINITY;
		span[3 + a] = -INFINITY;
	}
	memset(counts, 0, SIZE_BINS * sizeof *counts);
	for (uint32_t i = begin; i < end; ++i) {
		const uint32_t e = job->members ? job->members[i] : i;
		float *r = job->records + (size_t)6 * i, largest = 0.0f;
		for (int a = 0; a < job->dims; ++a) {
			r[a] = job->bounds->min[a][e];
			r[3 + a] = job->bounds->max[a][e];
			const double c = centre(r, a);
			span[a] = c < span[a] ? c : span[a];
			span[3 + a] = c > span[3 + a] ? c : span[3 + a];
			const float extent = r[3 + a] - r[a];
			largest = extent > largest ? extent : largest;
		}
		const uint32_t size = size_of(largest);
		job->sizes[i] = (uint8_t)size;
		counts[size]++;
	}
}

typedef struct code_job {
	int dims;
	double lo[3], scale[3];   ///< centre -> cell: (c - lo) * scale, in [0, cells)
	uint32_t rank[SIZE_BINS]; ///< the top bits of the code of each size: SIZE_CLASSES - 1 less its class
	const float *records;
	const uint8_t *sizes;     ///< per entity: its size_of
	bpi_sort_item *items;
} code_job;

/// The Morton code of the centre of `record` (mins, then maxes) on the cells lo + k / scale,
/// clamped to the grid.
static uint32_t morton(const float *record, const double *lo, const double *scale, int dims)
{
	const double top = dims == 3 ? 1023.0 : 32767.0;
	uint32_t code = 0;
	for (int a = 0; a < dims; ++a) {
		double cell = (centre(record, a) - lo[a]) * scale[a];
		cell = cell < 0.0 ? 0.0 : cell > top ? top : cell;
		uint32_t q = (uint32_t)cell;
		code |= (dims == 3 ? spread3(q) : spread2(q)) << a;
	}
	return code;
}

/// The size class of a box of size_of `size`: 0 up to LARGE_STEPS_* binary sizes past the
/// typical one, then one more class per two sizes, at most SIZE_CLASSES - 1.
static uint32_t size_class(uint32_t size, int typical, int dims)
{
	const int past = (int)size - typical - (dims == 3 ? LARGE_STEPS_3D : LARGE_STEPS_2D);
	return past < 0 ? 0u : (uint32_t)BP_MIN(1 + past / 2, (int)SIZE_CLASSES - 1);
}

/// Codes: the size class in the top bits, so the tree's first splits part the sizes and each
/// class has a Morton tree of its own, its nodes not widened by boxes much larger than theirs.
/// Larger classes sort first: a walk takes the first child on a tie, and a ray or a nearest
/// query that starts inside a large box finds it at distance 0 before the many small ones.
static void code_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const code_job *job = ctx;
	for (uint32_t i = begin; i < end; ++i)
		job->items[i] = bpi_sort_item_make(
			morton(job->records + (size_t)6 * i, job->lo, job->scale, job->dims) | job->rank[job->sizes[i]], i);
}

uint32_t bpi_bvh_walk_code(const bpi_bvh *b, const float *record, int dims)
{
	const float *root = bpi_bvh_block(b, 0);
	double lo[3], scale[3];
	for (int a = 0; a < dims; ++a) {
		lo[a] = root[a * 2];
		const double span = (double)root[(3 + a) * 2] - lo[a];
		scale[a] = span > 0.0 ? (dims == 3 ? 1024.0 : 32768.0) / span : 0.0;
	}
	return morton(record, lo, scale, dims);
}

/// The typical size (size_of) of `count` entities, `counts` of each size: the greater of the
/// median entity's and the spacing of the centres, the side of the share of their span's
/// volume each entity has (over the axes the span has: a line of centres has a length). A box
/// not much larger than the space between centres widens no node much; one far larger than
/// most boxes widens every node on the path to its leaf.
static int typical_size(const uint32_t *counts, uint32_t count, const double *span, int dims)
{
	uint32_t median = 0;
	for (uint32_t below = counts[0]; below <= count / 2;)
		below += counts[++median];
	double volume = 1.0;
	int axes = 0;
	for (int a = 0; a < dims; ++a)
		if (span[a] > 0.0) {
			volume *= span[a];
			axes++;
		}
	if (!axes)
		return (int)median;
	int exponent;
	(void)frexp(volume / count, &exponent); // share in [2^(exponent - 1), 2^exponent)
	const int floor_log2 = exponent - 1, spacing = (floor_log2 >= 0 ? floor_log2 : floor_log2 - axes + 1) / axes;
	return BP_MAX((int)median, spacing + 127);
}

/// Records the entities' bounds and sorts them into items by the Morton code of their
/// centres, over cells that span the centres, so the codes use every bit the scene needs,
/// below their size class. Chunk spans and size counts merge in chunk order, and least,
/// greatest and sums of counts are exact in any order.
static bp_status sort_by_code(bpi_bvh_scratch *s, const bpi_bvh_bounds *bounds, const uint32_t *members, uint32_t count,
	int dims, int threads)
{
	bounds_job gather = {bounds, members, dims, s->records.data, s->spans.data, s->sizes.data, s->size_counts.data};
	bpi_parallel_for(count, CODE_GRAIN, threads, bounds_chunk, &gather);
	code_job job = {.dims = dims, .records = s->records.data, .sizes = s->sizes.data, .items = s->items.data};
	double extent[3] = {0, 0, 0};
	for (int a = 0; a < dims; ++a) {
		double lo = INFINITY, hi = -INFINITY;
		for (uint32_t c = 0; c < bpi_chunk_count(count, CODE_GRAIN); ++c) {
			const double *span = s->spans.data + (size_t)6 * c;
			lo = span[a] < lo ? span[a] : lo;
			hi = span[3 + a] > hi ? span[3 + a] : hi;
		}
		job.lo[a] = lo;
		extent[a] = hi > lo ? hi - lo : 0.0;
		job.scale[a] = hi > lo ? (dims == 3 ? 1024.0 : 32768.0) / (hi - lo) : 0.0;
	}
	uint32_t counts[SIZE_BINS] = {0};
	for (uint32_t c = 0; c < bpi_chunk_count(count, CODE_GRAIN); ++c)
		for (uint32_t k = 0; k < SIZE_BINS; ++k)
			counts[k] += s->size_counts.data[(size_t)SIZE_BINS * c + k];
	const int typical = count ? typical_size(counts, count, extent, dims) : 0;
	for (uint32_t k = 0; k < SIZE_BINS; ++k)
		job.rank[k] = (SIZE_CLASSES - 1 - size_class(k, typical, dims)) << CLASS_SHIFT;
	bpi_parallel_for(count, CODE_GRAIN, threads, code_chunk, &job);
	return bpi_radix_sort_items(&s->radix, s->items.data, count, threads);
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

/// The top of the tree: node blocks over more than `most` items, split serially.
typedef struct tree_top {
	bpi_bvh *b;
	bpi_bvh_scratch *s;
	uint32_t most;     ///< items a subtree holds at most
	uint32_t subtrees; ///< found, then numbered
	uint32_t blocks;   ///< node blocks above the subtrees
} tree_top;

/// Lists the subtrees of [lo, hi), left to right, and counts the blocks above them.
static bool find_subtrees(tree_top *t, uint32_t lo, uint32_t hi)
{
	if (hi - lo <= t->most) {
		if (!bpi_array_grow(&t->s->subtrees, t->subtrees, (size_t)t->subtrees + 1))
			return false;
		t->s->subtrees.data[t->subtrees++] = (bpi_bvh_subtree){.lo = lo, .hi = hi};
		return true;
	}
	t->blocks++;
	const uint32_t split = split_of(t->s->items.data, lo, hi);
	return find_subtrees(t, lo, split) && find_subtrees(t, split, hi);
}

/// One subtree laid out on its own: node blocks numbered from 0 in preorder (a
/// parent's before its children's), leaves from 0 left to right.
typedef struct subtree_layout {
	const bpi_sort_item *items;
	uint32_t *leaf_first; ///< each leaf's first item
	uint32_t *links;      ///< each node block's two references
	uint32_t blocks, leaves;
} subtree_layout;

/// Lays out sorted items [lo, hi) and returns their reference within the subtree.
static uint32_t lay_out(subtree_layout *t, uint32_t lo, uint32_t hi)
{
	if (hi - lo <= BPI_BVH_LEAF) {
		t->leaf_first[t->leaves] = lo;
		return BPI_BVH_LEAF_BIT | t->leaves++;
	}
	const uint32_t j = t->blocks++, split = split_of(t->items, lo, hi);
	const uint32_t left = lay_out(t, lo, split);
	t->links[2 * (size_t)j] = left;
	t->links[2 * (size_t)j + 1] = lay_out(t, split, hi);
	return j;
}

/// A subtree of n items has at most n leaves and n - 1 node blocks, so each writes
/// leaf_first and links from its own first item on, clear of the others.
static void lay_out_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	bpi_bvh_scratch *scratch = ctx;
	for (uint32_t s = begin; s < end; ++s) {
		bpi_bvh_subtree *sub = &scratch->subtrees.data[s];
		subtree_layout t = {scratch->items.data, scratch->leaf_first.data + sub->lo, scratch->links.data + 2 * (size_t)sub->lo, 0, 0};
		(void)lay_out(&t, sub->lo, sub->hi);
		sub->blocks = t.blocks;
		sub->leaves = t.leaves;
	}
}

static void set_refs(bpi_bvh *b, uint32_t block, uint32_t left, uint32_t right)
{
	uint32_t *words = b->nodes.data + (size_t)block * BPI_BVH_BLOCK_WORDS;
	words[12] = left;
	words[13] = right;
	words[14] = words[15] = 0; // unused: no build leaves a byte unwritten
}

/// Numbers the top of [lo, hi) as the serial preorder does, and each subtree's blocks
/// and leaves as a run after what comes before it; returns the reference of [lo, hi).
/// Top blocks get their references and are listed children first.
static uint32_t number(tree_top *t, uint32_t lo, uint32_t hi)
{
	bpi_bvh *b = t->b;
	if (hi - lo <= t->most) {
		bpi_bvh_subtree *sub = &t->s->subtrees.data[t->subtrees++];
		sub->first_block = b->blocks;
		sub->first_leaf = b->leaves;
		b->blocks += sub->blocks;
		b->leaves += sub->leaves;
		return sub->blocks ? sub->first_block : BPI_BVH_LEAF_BIT | sub->first_leaf;
	}
	const uint32_t j = b->blocks++, split = split_of(t->s->items.data, lo, hi);
	const uint32_t left = number(t, lo, split), right = number(t, split, hi);
	set_refs(b, j, left, right);
	t->s->top.data[t->blocks++] = j;
	return j;
}

// ---- boxes -------------------------------------------------------------------------

/// Leaf `leaf`'s block and order from sorted items [first, first + size); spare lanes
/// hold empty boxes.
static void gather_leaf(bpi_bvh *b, const bpi_bvh_scratch *s, const uint32_t *members, int dims, uint32_t leaf, uint32_t first,
	uint32_t size)
{
	float *block = b->leaf_boxes.data + (size_t)leaf * BPI_BVH_LEAF_FLOATS;
	b->leaf_size.data[leaf] = (uint8_t)size;
	for (uint32_t lane = 0; lane < BPI_BVH_LEAF; ++lane) {
		const uint32_t i = lane < size ? bpi_sort_item_index(s->items.data[first + lane]) : 0;
		const float *r = s->records.data + (size_t)6 * i;
		b->order.data[(size_t)leaf * BPI_BVH_LEAF + lane] = lane >= size ? UINT32_MAX : members ? members[i] : i;
		if (lane < size)
			b->slot.data[i] = leaf * BPI_BVH_LEAF + lane;
		for (int a = 0; a < 3; ++a) {
			const bool real = lane < size && a < dims;
			block[(uint32_t)a * BPI_BVH_LEAF + lane] = real ? r[a] : INFINITY;
			block[(uint32_t)(3 + a) * BPI_BVH_LEAF + lane] = real ? r[3 + a] : -INFINITY;
		}
	}
}

#if defined(__SSE2__)

/// The scalar least(a, b) and greatest(a, b) lane by lane: b only where it is beyond a, so
/// ties (+0 and -0) keep a as the portable code does, and the bounds come out bit for bit.
static inline __m128 least4(__m128 a, __m128 b)
{
	return _mm_min_ps(b, a);
}

static inline __m128 greatest4(__m128 a, __m128 b)
{
	return _mm_max_ps(b, a);
}

/// Lane k: least(least(rk[0], rk[1]), least(rk[2], rk[3])) of row k, the scalar order.
static inline __m128 rows_least(__m128 r0, __m128 r1, __m128 r2, __m128 r3)
{
	const __m128 t0 = _mm_unpacklo_ps(r0, r1), t1 = _mm_unpackhi_ps(r0, r1);
	const __m128 t2 = _mm_unpacklo_ps(r2, r3), t3 = _mm_unpackhi_ps(r2, r3);
	return least4(least4(_mm_movelh_ps(t0, t2), _mm_movehl_ps(t2, t0)),
		least4(_mm_movelh_ps(t1, t3), _mm_movehl_ps(t3, t1)));
}

static inline __m128 rows_greatest(__m128 r0, __m128 r1, __m128 r2, __m128 r3)
{
	const __m128 t0 = _mm_unpacklo_ps(r0, r1), t1 = _mm_unpackhi_ps(r0, r1);
	const __m128 t2 = _mm_unpacklo_ps(r2, r3), t3 = _mm_unpackhi_ps(r2, r3);
	return greatest4(greatest4(_mm_movelh_ps(t0, t2), _mm_movehl_ps(t2, t0)),
		greatest4(_mm_movelh_ps(t1, t3), _mm_movehl_ps(t3, t1)));
}

/// A box in two registers: lo holds min x, y, z in lanes 0-2, hi max x, y, z in lanes 1-3,
/// the places both a leaf's rows and a node block's pairs reduce into with fewest shuffles.
typedef struct box4 {
	__m128 lo, hi;
} box4;

/// The box of what `ref` holds. Every axis, in 2D too: spare lanes and a 2D tree's z hold
/// empty boxes, whose union stays empty.
static inline box4 box_of(const bpi_bvh *b, uint32_t ref)
{
	_Static_assert(BPI_BVH_LEAF == 4, "a leaf's lanes are read as four");
	if (ref & BPI_BVH_LEAF_BIT) {
		const float *f = bpi_bvh_leaf(b, ref & ~BPI_BVH_LEAF_BIT);
		const __m128 r2 = _mm_loadu_ps(f + 8), r3 = _mm_loadu_ps(f + 12);
		return (box4){rows_least(_mm_loadu_ps(f), _mm_loadu_ps(f + 4), r2, r2),
			rows_greatest(r3, r3, _mm_loadu_ps(f + 16), _mm_loadu_ps(f + 20))};
	}
	// Rows of two lanes: even floats are lane 0's, odd ones lane 1's.
	const float *f = bpi_bvh_block(b, ref);
	const __m128 q0 = _mm_loadu_ps(f), q1 = _mm_loadu_ps(f + 4), q2 = _mm_loadu_ps(f + 8);
	const __m128 even_lo = _mm_shuffle_ps(q0, q1, _MM_SHUFFLE(2, 0, 2, 0));
	const __m128 odd_lo = _mm_shuffle_ps(q0, q1, _MM_SHUFFLE(3, 1, 3, 1));
	const __m128 even_hi = _mm_shuffle_ps(q1, q2, _MM_SHUFFLE(2, 0, 2, 0));
	const __m128 odd_hi = _mm_shuffle_ps(q1, q2, _MM_SHUFFLE(3, 1, 3, 1));
	return (box4){least4(even_lo, odd_lo), greatest4(even_hi, odd_hi)};
}

/// Half the surface (2D: half the perimeter) of both lanes' boxes of a block whose floats
/// are q0, q1, q2; 0 for an empty box. Both lanes at once, in the scalar code's operations
/// and order, so the doubles are the same bit for bit; block 0 counts its root once.
static inline double block_cost(__m128 q0, __m128 q1, __m128 q2, uint32_t j, int dims)
{
	const __m128d zero = _mm_setzero_pd();
	const __m128d dx = _mm_sub_pd(_mm_cvtps_pd(_mm_movehl_ps(q1, q1)), _mm_cvtps_pd(q0));
	const __m128d dy = _mm_sub_pd(_mm_cvtps_pd(q2), _mm_cvtps_pd(_mm_movehl_ps(q0, q0)));
	__m128d ok = _mm_and_pd(_mm_cmpge_pd(dx, zero), _mm_cmpge_pd(dy, zero)), cost = _mm_add_pd(dx, dy);
	if (dims != 2) {
		const __m128d dz = _mm_sub_pd(_mm_cvtps_pd(_mm_movehl_ps(q2, q2)), _mm_cvtps_pd(q1));
		ok = _mm_and_pd(ok, _mm_cmpge_pd(dz, zero));
		cost = _mm_add_pd(_mm_add_pd(_mm_mul_pd(dx, dy), _mm_mul_pd(dy, dz)), _mm_mul_pd(dz, dx));
	}
	cost = _mm_and_pd(cost, ok);
	return _mm_cvtsd_f64(cost) + (j ? _mm_cvtsd_f64(_mm_unpackhi_pd(cost, cost)) : 0.0);
}

/// Node block j's two lanes' boxes from its children's, written as the block's three
/// quads of floats; returns the block's cost.
static inline double box_lanes(bpi_bvh *b, uint32_t j, int dims)
{
	float *out = (float *)(void *)(b->nodes.data + (size_t)j * BPI_BVH_BLOCK_WORDS);
	const box4 l = box_of(b, bpi_bvh_ref(b, j, 0)), r = box_of(b, bpi_bvh_ref(b, j, 1));
	const __m128 q0 = _mm_unpacklo_ps(l.lo, r.lo);
	const __m128 q1 = _mm_shuffle_ps(_mm_unpackhi_ps(l.lo, r.lo), _mm_unpacklo_ps(l.hi, r.hi), _MM_SHUFFLE(3, 2, 1, 0));
	const __m128 q2 = _mm_unpackhi_ps(l.hi, r.hi);
	_mm_storeu_ps(out, q0);
	_mm_storeu_ps(out + 4, q1);
	_mm_storeu_ps(out + 8, q2);
	return block_cost(q0, q1, q2, j, dims);
}

#else

static inline float least(float a, float b)
{
	return b < a ? b : a;
}

static inline float greatest(float a, float b)
{
	return b > a ? b : a;
}

/// Writes into lane `lane` of node block j the box of what `ref` holds. Every axis, in 2D
/// too: spare lanes and a 2D tree's z hold empty boxes, whose union stays empty. A leaf's
/// four lanes and a block's two unroll, so a refit pays no loop or branch per bound.
static void box_of(bpi_bvh *b, uint32_t j, uint32_t lane, uint32_t ref)
{
	_Static_assert(BPI_BVH_LEAF == 4, "a leaf's lanes are read as four");
	float *out = (float *)(void *)(b->nodes.data + (size_t)j * BPI_BVH_BLOCK_WORDS) + lane;
	if (ref & BPI_BVH_LEAF_BIT) {
		const float *from = bpi_bvh_leaf(b, ref & ~BPI_BVH_LEAF_BIT);
		for (uint32_t row = 0; row < 3; ++row) {
			const float *lo = from + row * BPI_BVH_LEAF, *hi = from + (3 + row) * BPI_BVH_LEAF;
			out[row * 2] = least(least(lo[0], lo[1]), least(lo[2], lo[3]));
			out[(3 + row) * 2] = greatest(greatest(hi[0], hi[1]), greatest(hi[2], hi[3]));
		}
	} else {
		const float *from = bpi_bvh_block(b, ref);
		for (uint32_t row = 0; row < 3; ++row) {
			out[row * 2] = least(from[row * 2], from[row * 2 + 1]);
			out[(3 + row) * 2] = greatest(from[(3 + row) * 2], from[(3 + row) * 2 + 1]);
		}
	}
}

/// Half the surface of lane `lane`'s box in node block j (2D: half its perimeter); 0 for
/// the empty box of an empty tree. Without branches: a refit pays it for every lane.
static double lane_cost(const bpi_bvh *b, uint32_t j, uint32_t lane, int dims)
{
	const float *box = bpi_bvh_block(b, j) + lane;
	const double dx = (double)box[6] - box[0], dy = (double)box[8] - box[2];
	if (dims == 2)
		return ((dx >= 0.0) & (dy >= 0.0)) ? dx + dy : 0.0;
	const double dz = (double)box[10] - box[4];
	return ((dx >= 0.0) & (dy >= 0.0) & (dz >= 0.0)) ? dx * dy + dy * dz + dz * dx : 0.0;
}

/// Node block j's two lanes' boxes from its children's; returns the block's cost.
static inline double box_lanes(bpi_bvh *b, uint32_t j, int dims)
{
	box_of(b, j, 0, bpi_bvh_ref(b, j, 0));
	box_of(b, j, 1, bpi_bvh_ref(b, j, 1));
	return lane_cost(b, j, 0, dims) + (j ? lane_cost(b, j, 1, dims) : 0.0);
}

#endif

/// The summary of what `ref` holds: a leaf's entities', or a node block's two lanes'.
static bpi_bvh_summary summary_of(const bpi_bvh *b, uint32_t ref, const bpi_bvh_bounds *f)
{
	bpi_bvh_summary sum = {0, 0, 0};
	if (!(ref & BPI_BVH_LEAF_BIT)) {
		for (uint32_t lane = 0; lane < 2; ++lane) {
			const bpi_bvh_summary *kid = bpi_bvh_summary_of(b, ref, lane);
			sum.category |= kid->category, sum.mask |= kid->mask, sum.kinds |= kid->kinds;
		}
		return sum;
	}
	const uint32_t leaf = ref & ~BPI_BVH_LEAF_BIT;
	for (uint32_t lane = 0; lane < b->leaf_size.data[leaf]; ++lane) {
		const uint32_t e = b->order.data[(size_t)leaf * BPI_BVH_LEAF + lane];
		sum.category |= f->category[e], sum.mask |= f->mask[e];
		sum.kinds |= 1u << (f->flags[e] & BP_FLAG_STATIC ? BP_KIND_STATIC : BP_KIND_DYNAMIC);
	}
	return sum;
}

/// Node block j's boxes from its children's, which must be made. A cast that misses
/// a node misses everything below it (the tests are monotone in the bounds); a filter
/// that no entity under a summary passes passes none of them. Block 0 holds the root
/// twice and counts it once.
double bpi_bvh_box_block(bpi_bvh *b, uint32_t j, const bpi_bvh_bounds *bounds, bool summarize, int dims)
{
	if (summarize)
		for (uint32_t lane = 0; lane < 2; ++lane)
			b->summaries.data[2 * (size_t)j + lane] = summary_of(b, bpi_bvh_ref(b, j, lane), bounds);
	return box_lanes(b, j, dims);
}

double bpi_bvh_box_blocks(bpi_bvh *b, uint32_t first, uint32_t count, const bpi_bvh_bounds *bounds, bool summarize,
	int dims)
{
	double cost = 0.0;
	if (summarize)
		for (uint32_t j = first + count; j-- > first;)
			cost += bpi_bvh_box_block(b, j, bounds, true, dims);
	else
		for (uint32_t j = first + count; j-- > first;)
			cost += box_lanes(b, j, dims);
	return cost;
}

typedef struct place_job {
	bpi_bvh *bvh;
	const bpi_bvh_bounds *bounds;
	const bpi_bvh_scratch *scratch;
	const uint32_t *members;
	int dims;
} place_job;

/// A reference within subtree `sub` as a reference of the whole tree.
static uint32_t placed(const bpi_bvh_subtree *sub, uint32_t ref)
{
	return ref & BPI_BVH_LEAF_BIT ? BPI_BVH_LEAF_BIT | (sub->first_leaf + (ref & ~BPI_BVH_LEAF_BIT))
				      : sub->first_block + ref;
}

/// Puts each subtree where it was numbered: its leaves, then its node blocks from the
/// last back, children's blocks coming after their parent's.
static void place_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const place_job *job = ctx;
	bpi_bvh *b = job->bvh;
	const bpi_bvh_scratch *scratch = job->scratch;
	for (uint32_t s = begin; s < end; ++s) {
		const bpi_bvh_subtree *sub = &scratch->subtrees.data[s];
		const uint32_t *first = scratch->leaf_first.data + sub->lo, *links = scratch->links.data + 2 * (size_t)sub->lo;
		for (uint32_t k = 0; k < sub->leaves; ++k) {
			const uint32_t next = k + 1 < sub->leaves ? first[k + 1] : sub->hi;
			gather_leaf(b, scratch, job->members, job->dims, sub->first_leaf + k, first[k], next - first[k]);
		}
		double cost = 0.0;
		for (uint32_t j = sub->blocks; j-- > 0;) {
			set_refs(b, sub->first_block + j, placed(sub, links[2 * (size_t)j]), placed(sub, links[2 * (size_t)j + 1]));
			cost += bpi_bvh_box_block(b, sub->first_block + j, job->bounds, b->summarized, job->dims);
		}
		b->part_blocks.data[2 * (size_t)s] = sub->first_block;
		b->part_blocks.data[2 * (size_t)s + 1] = sub->blocks;
		b->part_cost.data[s] = cost;
	}
}

// ---- build -------------------------------------------------------------------------

/// Numbers every build's shape (bpi_bvh.shape).
static _Atomic uint64_t shapes_built;

static bool reserve_scratch(bpi_bvh_scratch *s, uint32_t count)
{
	// A subtree of n items writes at most n leaves and 2 (n - 1) links; the
	// empty one, a leaf of none.
	const size_t most = BP_MAX(count, 1u);
	return bpi_array_reserve(&s->items, count) && bpi_array_reserve(&s->records, 6 * (size_t)count) &&
	       bpi_array_reserve(&s->spans, 6 * (size_t)bpi_chunk_count(count, CODE_GRAIN)) &&
	       bpi_array_reserve(&s->sizes, count) &&
	       bpi_array_reserve(&s->size_counts, SIZE_BINS * (size_t)BP_MAX(bpi_chunk_count(count, CODE_GRAIN), 1u)) &&
	       bpi_array_reserve(&s->leaf_first, most) && bpi_array_reserve(&s->links, 2 * most) &&
	       bpi_radix_sort_reserve(&s->radix, count) == BP_OK;
}

/// Room for the tree the subtrees make: their blocks and leaves plus the top's.
static bool reserve_tree(bpi_bvh *b, const tree_top *t)
{
	size_t blocks = 1 + (size_t)t->blocks, leaves = 0; // block 0: the root
	for (uint32_t s = 0; s < t->subtrees; ++s) {
		blocks += t->s->subtrees.data[s].blocks;
		leaves += t->s->subtrees.data[s].leaves;
	}
	return bpi_array_reserve(&t->s->top, t->blocks) && bpi_array_reserve(&b->top, t->blocks) &&
	       (!b->summarized || bpi_array_reserve(&b->summaries, 2 * blocks)) &&
	       bpi_array_reserve(&b->part_blocks, 2 * (size_t)t->subtrees) &&
	       bpi_array_reserve(&b->part_cost, t->subtrees) && bpi_array_reserve(&b->nodes, blocks * BPI_BVH_BLOCK_WORDS) &&
	       bpi_array_reserve(&b->leaf_size, leaves) && bpi_array_reserve(&b->order, leaves * BPI_BVH_LEAF) &&
	       bpi_array_reserve(&b->leaf_boxes, leaves * BPI_BVH_LEAF_FLOATS);
}

bp_status bpi_bvh_build(bpi_bvh *b, bpi_bvh_scratch *s, const bpi_bvh_bounds *bounds, const uint32_t *members,
	uint32_t count, int dims, int threads)
{
	b->count = b->leaves = b->blocks = 0;
	b->shape = 0;
	if (count > BPI_BVH_MAX_COUNT || !bpi_array_reserve(&b->slot, BP_MAX(count, 1u)) ||
		!reserve_scratch(s, count) || sort_by_code(s, bounds, members, count, dims, threads) != BP_OK)
		return BP_ERR_OUT_OF_MEMORY;
	tree_top top = {b, s, BP_MAX(count / SUBTREE_SHARE, SUBTREE_GRAIN), 0, 0};
	if (!find_subtrees(&top, 0, count))
		return BP_ERR_OUT_OF_MEMORY;
	bpi_parallel_for(top.subtrees, 1, threads, lay_out_chunk, s);
	b->summarized = bounds->category && bounds->mask && bounds->flags;
	if (!reserve_tree(b, &top))
		return BP_ERR_OUT_OF_MEMORY;
	const uint32_t subtrees = top.subtrees;
	top.subtrees = top.blocks = 0;
	b->blocks = 1; // block 0: the root in lane 0; lane 1 is never walked
	const uint32_t root = number(&top, 0, count);
	set_refs(b, 0, root, root);
	place_job place = {b, bounds, s, members, dims};
	bpi_parallel_for(subtrees, 1, threads, place_chunk, &place);
	double cost = 0.0;
	for (uint32_t p = 0; p < subtrees; ++p)
		cost += b->part_cost.data[p];
	for (uint32_t t = 0; t < top.blocks; ++t)
		cost += bpi_bvh_box_block(b, s->top.data[t], bounds, b->summarized, dims);
	cost += bpi_bvh_box_block(b, 0, bounds, b->summarized, dims);
	if (top.blocks)
		memcpy(b->top.data, s->top.data, top.blocks * sizeof *b->top.data);
	b->parts = subtrees;
	b->top_count = top.blocks;
	b->cost = b->built_cost = cost;
	b->count = count;
	b->shape = atomic_fetch_add_explicit(&shapes_built, 1u, memory_order_relaxed) + 1u;
	return BP_OK;
}
