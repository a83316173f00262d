// SPDX-License-Identifier: MIT
// The query hierarchy's build (src/tree/bvh.c): on 1, 2, 3 and 8 threads every array is
// the same, and the same as a plain serial build written here (Morton order by a comparison
// sort, the tree split top down by a linear scan, each node box the union of the bounds under
// it, computed from the entities themselves, the codes under each box's size class). Scenes:
// uniform, clustered, all centres equal, lines, mixed sizes up to thousands of times the
// typical one; 2D and 3D; from no entity to 100K; all entities or a members list; one scratch for
// every build, left over from builds of other sizes. A refit keeps the shape and holds the
// moved bounds, checked against unions computed here, and over the unmoved bounds is the
// build bit for bit, its cost included. Failed allocations return
// BP_ERR_OUT_OF_MEMORY and leak nothing.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel/parallel.h"
#include "parallel/threads.h"
#include "tree/bvh.h"

enum { KINDS_OF_SCENE = 5, THREAD_COUNTS = 4 };
typedef enum scene_kind { UNIFORM, CLUSTERED, EQUAL_CENTRES, LINES, MIXED } scene_kind;

static const int thread_counts[THREAD_COUNTS] = {1, 2, 3, 8};
static const uint32_t sizes[] = {0, 1, 5, 4097, 100000};

typedef struct scene {
	uint32_t entities; ///< in the soa
	uint32_t count;    ///< in the hierarchy
	uint32_t *members; ///< NULL: the first `count`
	int dims;
	float *bounds;     ///< min x, y, z, max x, y, z arrays of `entities`
	bpi_soa soa;
} scene;

static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static float uniform(uint64_t *state, float lo, float hi)
{
	return lo + (hi - lo) * (float)(next_random(state) >> 40) / (float)(1u << 24);
}

/// Entity e's centre and half extent on axis a. Mixed: boxes up to 4 across, one in ten up to 20,
/// one in a hundred up to 1000, one in a thousand up to 6000, in a world of 1000.
static void place(scene_kind kind, uint32_t e, int a, uint64_t *rng, float *centre, float *half)
{
	*half = uniform(rng, 0.01f, kind == UNIFORM || kind == MIXED ? 2.0f : 0.5f);
	if (kind == MIXED)
		*half *= e % 1000 == 999 ? 1500.0f : e % 100 == 99 ? 250.0f : e % 10 == 9 ? 5.0f : 1.0f;
	switch (kind) {
	case MIXED:
	case UNIFORM: *centre = uniform(rng, -500.0f, 500.0f); break;
	case CLUSTERED: *centre = (float)(e % 7) * 300.0f + uniform(rng, -1.0f, 1.0f) * uniform(rng, 0.0f, 1.0f); break;
	case EQUAL_CENTRES: *centre = 12.5f; break;
	case LINES: *centre = a == 0 ? (float)e * 0.25f : (float)(e % 3) * 40.0f; break;
	}
}

/// A scene of `count` entities in the hierarchy; with members, they are a shuffled
/// half of twice as many in the soa.
static scene make_scene(scene_kind kind, uint32_t count, int dims, bool with_members, uint64_t seed)
{
	scene s = {.entities = with_members ? 2 * count : count, .count = count, .dims = dims};
	uint64_t rng = seed;
	s.bounds = malloc(sizeof(float) * 6 * (s.entities + 1u));
	for (int a = 0; a < dims; ++a) {
		s.soa.min[a] = s.bounds + (size_t)a * s.entities;
		s.soa.max[a] = s.bounds + (size_t)(3 + a) * s.entities;
	}
	for (uint32_t e = 0; e < s.entities; ++e)
		for (int a = 0; a < dims; ++a) {
			float centre, half;
			place(kind, e, a, &rng, &centre, &half);
			s.soa.min[a][e] = centre - half;
			s.soa.max[a][e] = centre + half;
		}
	if (with_members) {
		uint32_t *all = malloc(sizeof *all * (s.entities + 1u));
		for (uint32_t e = 0; e < s.entities; ++e)
			all[e] = e;
		for (uint32_t e = s.entities; e > 1; --e) {
			const uint32_t pick = (uint32_t)(next_random(&rng) % e), keep = all[e - 1];
			all[e - 1] = all[pick];
			all[pick] = keep;
		}
		s.members = all;
	}
	return s;
}

static void free_scene(scene *s)
{
	free(s->bounds);
	free(s->members);
}

// ---- the serial reference ----------------------------------------------------------------------

typedef struct ref_item {
	uint32_t code, index;
} ref_item;

typedef struct ref_tree {
	const scene *s;
	ref_item *items;
	uint32_t large; ///< entities of a size class above 0
	uint32_t leaves, blocks;
	uint32_t *order;
	uint8_t *leaf_size;
	float *leaf_boxes;
	uint32_t *nodes;
} ref_tree;

static int by_code_then_index(const void *x, const void *y)
{
	const ref_item *a = x, *b = y;
	if (a->code != b->code)
		return a->code < b->code ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

static uint32_t entity_of(const scene *s, uint32_t i)
{
	return s->members ? s->members[i] : i;
}

static double centre_of(const scene *s, uint32_t i, int a)
{
	const uint32_t e = entity_of(s, i);
	return 0.5 * ((double)s->soa.min[a][e] + s->soa.max[a][e]);
}

/// The binary exponent of entity i's largest extent, biased as a float's: 0 below the normal
/// floats, 255 infinite.
static int ref_size(const scene *s, uint32_t i)
{
	const uint32_t e = entity_of(s, i);
	float largest = 0.0f;
	for (int a = 0; a < s->dims; ++a)
		largest = fmaxf(largest, s->soa.max[a][e] - s->soa.min[a][e]);
	return largest < FLT_MIN ? 0 : isinf(largest) ? 255 : ilogbf(largest) + 127;
}

static int by_int(const void *x, const void *y)
{
	const int a = *(const int *)x, b = *(const int *)y;
	return (a > b) - (a < b);
}

/// The typical size: the greater of the median entity's and the spacing of the centres (the
/// side of a cube, square or segment holding each entity's share of the centres' span over the
/// axes it has).
static int ref_typical(const scene *s, const double *span)
{
	int *by_size = malloc(sizeof *by_size * s->count);
	for (uint32_t i = 0; i < s->count; ++i)
		by_size[i] = ref_size(s, i);
	qsort(by_size, s->count, sizeof *by_size, by_int);
	const int median = by_size[s->count / 2];
	free(by_size);
	double volume = 1.0;
	int axes = 0;
	for (int a = 0; a < s->dims; ++a)
		if (span[a] > 0.0) {
			volume *= span[a];
			axes++;
		}
	if (!axes)
		return median;
	const double share = volume / s->count;
	int spacing = 0; // the greatest with 2^(spacing * axes) <= share
	while (ldexp(1.0, spacing * axes) > share)
		spacing--;
	while (ldexp(1.0, (spacing + 1) * axes) <= share)
		spacing++;
	return median > spacing + 127 ? median : spacing + 127;
}

/// Morton codes over the span of the centres, bit by bit: bit b of axis a's cell is
/// bit b * dims + a of the code; above them, in bits 30 and 31, 3 less the size class: 0 up
/// to two binary sizes past the typical (3D; four in 2D), then one more per two sizes, at most 3.
static void ref_codes(ref_tree *t)
{
	const scene *s = t->s;
	const int bits = s->dims == 3 ? 10 : 15;
	const double cells = (double)(1u << bits);
	double span[3] = {0, 0, 0};
	for (uint32_t i = 0; i < s->count; ++i)
		t->items[i] = (ref_item){0, i};
	for (int a = 0; a < s->dims; ++a) {
		double lo = INFINITY, hi = -INFINITY;
		for (uint32_t i = 0; i < s->count; ++i) {
			lo = fmin(lo, centre_of(s, i, a));
			hi = fmax(hi, centre_of(s, i, a));
		}
		span[a] = hi > lo ? hi - lo : 0.0;
		const double scale = hi > lo ? cells / (hi - lo) : 0.0;
		for (uint32_t i = 0; i < s->count; ++i) {
			const double cell = fmin(fmax((centre_of(s, i, a) - lo) * scale, 0.0), cells - 1.0);
			const uint32_t q = (uint32_t)cell;
			for (int b = 0; b < bits; ++b)
				t->items[i].code |= ((q >> b) & 1u) << (b * s->dims + a);
		}
	}
	const int typical = s->count ? ref_typical(s, span) : 0;
	for (uint32_t i = 0; i < s->count; ++i) {
		const int past = ref_size(s, i) - typical - (s->dims == 3 ? 2 : 4);
		const uint32_t size_class = past < 0 ? 0u : past >= 4 ? 3u : 1u + (uint32_t)past / 2;
		t->items[i].code |= (3u - size_class) << 30;
		t->large += size_class > 0;
	}
	qsort(t->items, s->count, sizeof *t->items, by_code_then_index);
}

/// Where [lo, hi) splits: the first item with the highest bit in which the range's
/// codes differ, or the middle of equal codes.
static uint32_t ref_split(const ref_tree *t, uint32_t lo, uint32_t hi)
{
	const uint32_t differ = t->items[lo].code ^ t->items[hi - 1].code;
	if (!differ)
		return lo + (hi - lo) / 2;
	uint32_t bit = 1u << 31;
	while (!(differ & bit))
		bit >>= 1;
	uint32_t split = lo;
	while (!(t->items[split].code & bit))
		++split;
	return split;
}

/// The box of sorted items [lo, hi), from the entities themselves.
static void ref_union(const ref_tree *t, uint32_t lo, uint32_t hi, float box[6])
{
	for (int a = 0; a < 3; ++a) {
		box[a] = INFINITY;
		box[3 + a] = -INFINITY;
	}
	for (uint32_t p = lo; p < hi; ++p)
		for (int a = 0; a < t->s->dims; ++a) {
			const uint32_t e = entity_of(t->s, t->items[p].index);
			box[a] = fminf(box[a], t->s->soa.min[a][e]);
			box[3 + a] = fmaxf(box[3 + a], t->s->soa.max[a][e]);
		}
}

static void ref_lane(ref_tree *t, uint32_t block, uint32_t lane, uint32_t lo, uint32_t hi, uint32_t ref)
{
	float box[6], *out = (float *)(void *)(t->nodes + (size_t)block * BPI_BVH_BLOCK_WORDS);
	ref_union(t, lo, hi, box);
	for (int a = 0; a < 6; ++a)
		out[a * 2 + (int)lane] = box[a];
	t->nodes[(size_t)block * BPI_BVH_BLOCK_WORDS + 12 + lane] = ref;
}

/// Preorder: a node's block, then its left subtree's blocks, then its right's.
static uint32_t ref_lay_out(ref_tree *t, uint32_t lo, uint32_t hi)
{
	if (hi - lo <= BPI_BVH_LEAF) {
		const uint32_t k = t->leaves++;
		t->leaf_size[k] = (uint8_t)(hi - lo);
		float *block = t->leaf_boxes + (size_t)k * BPI_BVH_LEAF_FLOATS;
		for (uint32_t lane = 0; lane < BPI_BVH_LEAF; ++lane) {
			float box[6];
			ref_union(t, lo + lane, lane < hi - lo ? lo + lane + 1 : lo + lane, box);
			for (int a = 0; a < 6; ++a)
				block[a * BPI_BVH_LEAF + lane] = box[a];
			t->order[(size_t)k * BPI_BVH_LEAF + lane] =
				lane < hi - lo ? entity_of(t->s, t->items[lo + lane].index) : UINT32_MAX;
		}
		return BPI_BVH_LEAF_BIT | k;
	}
	const uint32_t j = t->blocks++, split = ref_split(t, lo, hi);
	ref_lane(t, j, 0, lo, split, ref_lay_out(t, lo, split));
	ref_lane(t, j, 1, split, hi, ref_lay_out(t, split, hi));
	return j;
}

static ref_tree ref_build(const scene *s)
{
	const size_t most = s->count + 1u;
	ref_tree t = {.s = s,
		.items = malloc(sizeof(ref_item) * most),
		.order = malloc(sizeof(uint32_t) * most * BPI_BVH_LEAF),
		.leaf_size = malloc(most),
		.leaf_boxes = malloc(sizeof(float) * most * BPI_BVH_LEAF_FLOATS),
		.nodes = calloc((most + 1) * BPI_BVH_BLOCK_WORDS, sizeof(uint32_t))};
	ref_codes(&t);
	t.blocks = 1;
	const uint32_t root = ref_lay_out(&t, 0, s->count);
	ref_lane(&t, 0, 0, 0, s->count, root);
	ref_lane(&t, 0, 1, 0, s->count, root);
	return t;
}

static void ref_free(ref_tree *t)
{
	free(t->items);
	free(t->order);
	free(t->leaf_size);
	free(t->leaf_boxes);
	free(t->nodes);
}

// ---- checks -------------------------------------------------------------------------------------

static bp_status build_on(bpi_bvh *bvh, bpi_bvh_scratch *scratch, const scene *s, int threads)
{
	const bpi_executor workers = {.kind = BP_EXECUTOR_WORKERS};
	bpi_team_failure failure;
	cr_assert_eq(bpi_executor_enter(&workers, threads, &failure), BP_OK);
	const bpi_bvh_bounds bounds = bpi_bvh_bounds_of(&s->soa);
	const bp_status status = bpi_bvh_build(bvh, scratch, &bounds, s->members, s->count, s->dims, threads);
	bpi_executor_leave();
	return status;
}

static void expect_same(const bpi_bvh *bvh, const ref_tree *ref, const char *what)
{
	cr_assert_eq(bvh->count, ref->s->count, "%s: count", what);
	cr_assert_eq(bvh->leaves, ref->leaves, "%s: leaves", what);
	cr_assert_eq(bvh->blocks, ref->blocks, "%s: blocks", what);
	cr_assert_eq(memcmp(bvh->order.data, ref->order, sizeof(uint32_t) * ref->leaves * BPI_BVH_LEAF), 0,
		"%s: order", what);
	cr_assert_eq(memcmp(bvh->leaf_size.data, ref->leaf_size, ref->leaves), 0, "%s: leaf sizes", what);
	cr_assert_eq(memcmp(bvh->leaf_boxes.data, ref->leaf_boxes, sizeof(float) * ref->leaves * BPI_BVH_LEAF_FLOATS), 0,
		"%s: leaf boxes", what);
	const size_t block_bytes = sizeof(uint32_t) * BPI_BVH_BLOCK_WORDS;
	for (uint32_t j = 0; j < ref->blocks; ++j)
		cr_assert_eq(memcmp(bvh->nodes.data + (size_t)j * BPI_BVH_BLOCK_WORDS,
				     ref->nodes + (size_t)j * BPI_BVH_BLOCK_WORDS, block_bytes),
			0, "%s: node block %u", what, j);
}

/// Every size, dims, members or not, and thread count of one kind of scene; one
/// hierarchy per thread count, reused across scenes as a view reuses its arrays, and
/// one scratch for all, as the frame builder keeps it.
static void check_kind(scene_kind kind)
{
	bpi_bvh built[THREAD_COUNTS] = {0};
	bpi_bvh_scratch scratch = {0};
	for (size_t n = 0; n < sizeof sizes / sizeof *sizes; ++n)
		for (int dims = 2; dims <= 3; ++dims)
			for (int with_members = 0; with_members < 2; ++with_members) {
				scene s = make_scene(kind, sizes[n], dims, with_members, 1000u * kind + n);
				ref_tree ref = ref_build(&s);
				// Mixed sizes reach the large classes, which no other scene has.
				cr_assert_eq(ref.large > 0, kind == MIXED && s.count >= 1000, "kind %d, n %u: %u large", kind,
					s.count, ref.large);
				for (int t = 0; t < THREAD_COUNTS; ++t) {
					char what[96];
					snprintf(what, sizeof what, "kind %d, n %u, %dD, members %d, %d threads", kind, s.count, dims,
						with_members, thread_counts[t]);
					cr_assert_eq(build_on(&built[t], &scratch, &s, thread_counts[t]), BP_OK, "%s", what);
					expect_same(&built[t], &ref, what);
				}
				ref_free(&ref);
				free_scene(&s);
			}
	for (int t = 0; t < THREAD_COUNTS; ++t)
		bpi_bvh_free(&built[t]);
	bpi_bvh_scratch_free(&scratch);
}

// ---- refit ---------------------------------------------------------------------------------------

/// Moves every entity of the scene by up to `reach` and grows or shrinks it a little.
static void move_scene(scene *s, uint64_t seed, float reach)
{
	uint64_t rng = seed;
	for (uint32_t e = 0; e < s->entities; ++e)
		for (int a = 0; a < s->dims; ++a) {
			const float d = uniform(&rng, -reach, reach), grow = uniform(&rng, 0.0f, reach / 4);
			s->soa.min[a][e] += d - grow;
			s->soa.max[a][e] += d + grow;
		}
}

/// The union of the current bounds of the entities under `ref`, from the scene itself.
static void union_under(const bpi_bvh *t, const scene *s, uint32_t ref, float box[6])
{
	for (int a = 0; a < 3; ++a) {
		box[a] = INFINITY;
		box[3 + a] = -INFINITY;
	}
	if (ref & BPI_BVH_LEAF_BIT) {
		const uint32_t leaf = ref & ~BPI_BVH_LEAF_BIT;
		for (uint32_t lane = 0; lane < t->leaf_size.data[leaf]; ++lane)
			for (int a = 0; a < s->dims; ++a) {
				const uint32_t e = t->order.data[(size_t)leaf * BPI_BVH_LEAF + lane];
				box[a] = fminf(box[a], s->soa.min[a][e]);
				box[3 + a] = fmaxf(box[3 + a], s->soa.max[a][e]);
			}
		return;
	}
	for (uint32_t lane = 0; lane < 2; ++lane) {
		float child[6];
		union_under(t, s, bpi_bvh_ref(t, ref, lane), child);
		for (int a = 0; a < 3; ++a) {
			box[a] = fminf(box[a], child[a]);
			box[3 + a] = fmaxf(box[3 + a], child[3 + a]);
		}
	}
}

/// A refit tree keeps the built one's shape and holds the moved bounds: each leaf lane the
/// entity's own box, each node lane the union of the entities under it, and its cost the
/// sum of its node boxes' half surfaces (the root once).
static void expect_refit(const bpi_bvh *refit, const bpi_bvh *built, const scene *moved, const char *what)
{
	cr_assert_eq(refit->count, built->count, "%s: count", what);
	cr_assert_eq(refit->blocks, built->blocks, "%s: blocks", what);
	cr_assert_eq(memcmp(refit->order.data, built->order.data, sizeof(uint32_t) * built->leaves * BPI_BVH_LEAF), 0,
		"%s: order", what);
	for (uint32_t leaf = 0; leaf < refit->leaves; ++leaf) {
		const float *block = bpi_bvh_leaf(refit, leaf);
		for (uint32_t lane = 0; lane < refit->leaf_size.data[leaf]; ++lane)
			for (int a = 0; a < moved->dims; ++a) {
				const uint32_t e = refit->order.data[(size_t)leaf * BPI_BVH_LEAF + lane];
				cr_assert(block[a * BPI_BVH_LEAF + lane] == moved->soa.min[a][e] &&
						  block[(3 + a) * BPI_BVH_LEAF + lane] == moved->soa.max[a][e],
					"%s: leaf %u lane %u", what, leaf, lane);
			}
	}
	double cost = 0.0;
	for (uint32_t j = 0; j < refit->blocks && refit->count; ++j)
		for (uint32_t lane = 0; lane < (j ? 2u : 1u); ++lane) {
			cr_assert_eq(bpi_bvh_ref(refit, j, lane), bpi_bvh_ref(built, j, lane), "%s: block %u refs", what, j);
			float box[6];
			union_under(refit, moved, bpi_bvh_ref(refit, j, lane), box);
			const float *node = bpi_bvh_block(refit, j);
			double d[3] = {0, 0, 0};
			for (int a = 0; a < moved->dims; ++a) {
				cr_assert(node[a * 2 + (int)lane] == box[a] && node[(3 + a) * 2 + (int)lane] == box[3 + a],
					"%s: block %u lane %u box", what, j, lane);
				d[a] = (double)box[3 + a] - box[a];
			}
			cost += moved->dims == 3 ? d[0] * d[1] + d[1] * d[2] + d[2] * d[0] : d[0] + d[1];
		}
	cr_assert(fabs(refit->cost - cost) <= 1e-9 * fabs(cost), "%s: cost %g, the boxes say %g", what, refit->cost, cost);
	cr_assert_eq(refit->built_cost, built->built_cost, "%s: built cost", what);
}

static void refit_on(bpi_bvh *to, const bpi_bvh *from, const scene *s, bool filters_kept, int threads)
{
	const bpi_executor workers = {.kind = BP_EXECUTOR_WORKERS};
	bpi_team_failure failure;
	cr_assert_eq(bpi_executor_enter(&workers, threads, &failure), BP_OK);
	const bpi_bvh_bounds bounds = bpi_bvh_bounds_of(&s->soa);
	if (to == from)
		bpi_bvh_refit(to, &bounds, s->members, s->dims, threads);
	else
		cr_assert_eq(bpi_bvh_refit_copy(to, from, &bounds, s->members, filters_kept, s->dims, threads), BP_OK);
	bpi_executor_leave();
}

Test(bvh, refit_keeps_the_shape_and_holds_the_moved_bounds_for_any_thread_count, .timeout = 300)
{
	bpi_bvh_scratch scratch = {0};
	for (size_t n = 0; n < sizeof sizes / sizeof *sizes; ++n)
		for (int dims = 2; dims <= 3; ++dims)
			for (int with_members = 0; with_members < 2; ++with_members) {
				scene s = make_scene(n % 2 ? MIXED : CLUSTERED, sizes[n], dims, with_members, 77u + n);
				bpi_bvh built = {0}, first = {0};
				cr_assert_eq(build_on(&built, &scratch, &s, 2), BP_OK);
				move_scene(&s, 5u + n, 3.0f);
				for (int t = 0; t < THREAD_COUNTS; ++t) {
					char what[96];
					snprintf(what, sizeof what, "n %u, %dD, members %d, %d threads", s.count, dims, with_members,
						thread_counts[t]);
					bpi_bvh copy = {0};
					refit_on(&copy, &built, &s, false, thread_counts[t]);
					expect_refit(&copy, &built, &s, what);
					if (t == 0)
						first = copy;
					else {
						cr_assert_eq(copy.cost, first.cost, "%s: cost differs from 1 thread", what);
						bpi_bvh_free(&copy);
					}
				}
				bpi_bvh in_place = built;
				refit_on(&in_place, &in_place, &s, false, 3);
				expect_refit(&in_place, &first, &s, "in place");
				cr_assert_eq(memcmp(in_place.leaf_boxes.data, first.leaf_boxes.data,
						     sizeof(float) * first.leaves * BPI_BVH_LEAF_FLOATS), 0);
				bpi_bvh_free(&in_place);
				bpi_bvh_free(&first);
				free_scene(&s);
			}
	bpi_bvh_scratch_free(&scratch);
}

/// Random categories, masks and kinds for every entity of s, into `filters` (freed by the caller).
static void add_filters(scene *s, uint64_t seed, uint64_t **filters, uint8_t **flags)
{
	uint64_t rng = seed;
	*filters = malloc(sizeof(uint64_t) * 2 * (s->entities + 1u));
	*flags = malloc(s->entities + 1u);
	for (uint32_t e = 0; e < s->entities; ++e) {
		(*filters)[e] = 1ull << (next_random(&rng) % 64);
		(*filters)[s->entities + e] = next_random(&rng) | 1ull << (next_random(&rng) % 64);
		(*flags)[e] = next_random(&rng) % 3 == 0 ? BP_FLAG_STATIC : 0;
	}
	s->soa.category = *filters;
	s->soa.mask = *filters + s->entities;
	s->soa.flags = *flags;
}

/// What the entities under `ref` can pass, from the scene itself.
static bpi_bvh_summary summary_under(const bpi_bvh *t, const scene *s, uint32_t ref)
{
	bpi_bvh_summary sum = {0, 0, 0};
	if (ref & BPI_BVH_LEAF_BIT) {
		const uint32_t leaf = ref & ~BPI_BVH_LEAF_BIT;
		for (uint32_t lane = 0; lane < t->leaf_size.data[leaf]; ++lane) {
			const uint32_t e = t->order.data[(size_t)leaf * BPI_BVH_LEAF + lane];
			sum.category |= s->soa.category[e], sum.mask |= s->soa.mask[e];
			sum.kinds |= 1u << (s->soa.flags[e] & BP_FLAG_STATIC ? BP_KIND_STATIC : BP_KIND_DYNAMIC);
		}
		return sum;
	}
	for (uint32_t lane = 0; lane < 2; ++lane) {
		const bpi_bvh_summary kid = summary_under(t, s, bpi_bvh_ref(t, ref, lane));
		sum.category |= kid.category, sum.mask |= kid.mask, sum.kinds |= kid.kinds;
	}
	return sum;
}

static void expect_summaries(const bpi_bvh *t, const scene *s, const char *what)
{
	cr_assert(t->summarized, "%s: summarized", what);
	for (uint32_t j = 0; j < t->blocks; ++j)
		for (uint32_t lane = 0; lane < (j ? 2u : 1u); ++lane) {
			const bpi_bvh_summary want = summary_under(t, s, bpi_bvh_ref(t, j, lane)),
					      *got = bpi_bvh_summary_of(t, j, lane);
			cr_assert(got->category == want.category && got->mask == want.mask && got->kinds == want.kinds,
				"%s: block %u lane %u summary", what, j, lane);
		}
}

/// Two trees alike in everything a walk reads.
static void expect_equal_trees(const bpi_bvh *a, const bpi_bvh *b, const char *what)
{
	cr_assert(a->count == b->count && a->leaves == b->leaves && a->blocks == b->blocks, "%s: sizes", what);
	cr_assert_eq(memcmp(a->order.data, b->order.data, sizeof(uint32_t) * a->leaves * BPI_BVH_LEAF), 0, "%s", what);
	cr_assert_eq(memcmp(a->leaf_size.data, b->leaf_size.data, a->leaves), 0, "%s", what);
	cr_assert_eq(memcmp(a->leaf_boxes.data, b->leaf_boxes.data, sizeof(float) * a->leaves * BPI_BVH_LEAF_FLOATS), 0,
		"%s: leaf boxes", what);
	cr_assert_eq(memcmp(a->nodes.data, b->nodes.data, sizeof(uint32_t) * a->blocks * BPI_BVH_BLOCK_WORDS), 0,
		"%s: node blocks", what);
	cr_assert_eq(memcmp(a->slot.data, b->slot.data, sizeof(uint32_t) * a->count), 0, "%s: slots", what);
	for (size_t k = 0; k < 2 * (size_t)a->blocks; ++k) { // field by field: the struct has padding
		const bpi_bvh_summary *x = &a->summaries.data[k], *y = &b->summaries.data[k];
		cr_assert(x->category == y->category && x->mask == y->mask && x->kinds == y->kinds, "%s: summary %zu", what, k);
	}
	cr_assert(a->cost == b->cost && a->built_cost == b->built_cost, "%s: cost", what);
}

Test(bvh, a_refit_that_keeps_the_filters_or_the_shape_equals_one_that_copies_and_gathers_them, .timeout = 120)
{
	bpi_bvh_scratch scratch = {0};
	for (int dims = 2; dims <= 3; ++dims)
		for (int with_members = 0; with_members < 2; ++with_members) {
			char what[64];
			snprintf(what, sizeof what, "%dD, members %d", dims, with_members);
			scene s = make_scene(CLUSTERED, 4097, dims, with_members, 31u + (uint64_t)dims);
			uint64_t *filters;
			uint8_t *flags;
			add_filters(&s, 9u, &filters, &flags);
			bpi_bvh built = {0}, other = {0}, gathered = {0}, kept = {0};
			cr_assert_eq(build_on(&built, &scratch, &s, 2), BP_OK);
			expect_summaries(&built, &s, what);
			move_scene(&s, 3u, 2.0f);
			refit_on(&gathered, &built, &s, false, 2);
			refit_on(&kept, &built, &s, true, 3);
			expect_refit(&kept, &built, &s, what);
			expect_summaries(&gathered, &s, what);
			expect_summaries(&kept, &s, what);
			expect_equal_trees(&kept, &gathered, what);
			cr_assert_eq(kept.shape, built.shape, "%s: a refit keeps the shape", what);

			// Into a tree of the built shape (a retired refit), of another shape, and a fresh one.
			scene t = make_scene(UNIFORM, 3000, dims, false, 5u);
			cr_assert_eq(build_on(&other, &scratch, &t, 1), BP_OK);
			cr_assert_neq(other.shape, built.shape, "%s: every build its own shape", what);
			move_scene(&s, 4u, 2.0f);
			bpi_bvh fresh = {0};
			refit_on(&fresh, &kept, &s, true, 2);
			refit_on(&gathered, &kept, &s, true, 2); // holds the shape: copies none of it
			refit_on(&other, &kept, &s, true, 2);    // another shape: copies all of it
			expect_refit(&fresh, &built, &s, what);
			expect_summaries(&fresh, &s, what);
			expect_equal_trees(&gathered, &fresh, what);
			expect_equal_trees(&other, &fresh, what);
			bpi_bvh_free(&fresh);
			bpi_bvh_free(&other);
			bpi_bvh_free(&gathered);
			bpi_bvh_free(&kept);
			bpi_bvh_free(&built);
			free_scene(&t);
			free_scene(&s);
			free(filters);
			free(flags);
		}
	bpi_bvh_scratch_free(&scratch);
}

/// A refit over the bounds a tree was built on is that build bit for bit, its cost and its
/// parts' costs included: a refit's cost against built_cost measures drift alone.
Test(bvh, a_refit_over_the_bounds_of_its_build_is_the_build_bit_for_bit, .timeout = 120)
{
	bpi_bvh_scratch scratch = {0};
	for (int dims = 2; dims <= 3; ++dims)
		for (int with_members = 0; with_members < 2; ++with_members)
			for (int kind = 0; kind < 2; ++kind) {
				char what[64];
				snprintf(what, sizeof what, "%dD, members %d, %s", dims, with_members, kind ? "equal centres" : "mixed");
				scene s = make_scene(kind ? EQUAL_CENTRES : MIXED, 20000, dims, with_members, 11u + (uint64_t)dims);
				uint64_t *filters;
				uint8_t *flags;
				add_filters(&s, 13u, &filters, &flags);
				bpi_bvh built = {0}, copy = {0};
				cr_assert_eq(build_on(&built, &scratch, &s, 2), BP_OK);
				refit_on(&copy, &built, &s, false, 3);
				expect_equal_trees(&copy, &built, what);
				cr_assert_eq(memcmp(copy.part_cost.data, built.part_cost.data, sizeof(double) * built.parts), 0,
					"%s: part costs", what);
				refit_on(&built, &built, &s, false, 1);
				expect_equal_trees(&built, &copy, what);
				bpi_bvh_free(&copy);
				bpi_bvh_free(&built);
				free_scene(&s);
				free(filters);
				free(flags);
			}
	bpi_bvh_scratch_free(&scratch);
}

Test(bvh, uniform_same_for_any_thread_count_and_as_serial, .timeout = 300) { check_kind(UNIFORM); }
Test(bvh, clustered_same_for_any_thread_count_and_as_serial, .timeout = 300) { check_kind(CLUSTERED); }
Test(bvh, equal_centres_same_for_any_thread_count_and_as_serial, .timeout = 300) { check_kind(EQUAL_CENTRES); }
Test(bvh, lines_same_for_any_thread_count_and_as_serial, .timeout = 300) { check_kind(LINES); }
Test(bvh, mixed_sizes_same_for_any_thread_count_and_as_serial, .timeout = 300) { check_kind(MIXED); }

// ---- failed allocations ------------------------------------------------------------------------

static _Atomic uint64_t allocations, fail_at;

static void *failing_alloc(size_t size, size_t align, void *user)
{
	(void)user;
	if (atomic_fetch_add(&allocations, 1) + 1 == atomic_load(&fail_at))
		return NULL;
	void *p = NULL;
	return posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size ? size : 1) ? NULL : p;
}

static void failing_free(void *ptr, size_t size, size_t align, void *user)
{
	(void)size, (void)align, (void)user;
	free(ptr);
}

Test(bvh, failed_allocation_is_out_of_memory_and_leaks_nothing, .timeout = 120)
{
	scene s = make_scene(CLUSTERED, 20000, 3, true, 7);
	ref_tree ref = ref_build(&s);
	bpi_bvh empty = {0}; // starts the workers before the count begins
	bpi_bvh_scratch empty_scratch = {0};
	cr_assert_eq(build_on(&empty, &empty_scratch, &(scene){.dims = 3}, 2), BP_OK);
	bpi_bvh_free(&empty);
	bpi_bvh_scratch_free(&empty_scratch);
	bp_set_allocator(&(bp_allocator){failing_alloc, failing_free, NULL});
	bool failed = true;
	for (uint64_t k = 1; failed; ++k) {
		bpi_bvh bvh = {0};
		bpi_bvh_scratch scratch = {0};
		atomic_store(&allocations, 0);
		atomic_store(&fail_at, k);
		const bp_status status = build_on(&bvh, &scratch, &s, 2);
		failed = atomic_load(&allocations) >= k;
		if (failed) {
			cr_assert_eq(status, BP_ERR_OUT_OF_MEMORY, "allocation %llu failed", (unsigned long long)k);
			cr_assert_eq(bvh.count, 0u);
		} else {
			expect_same(&bvh, &ref, "after every failure");
		}
		bpi_bvh_free(&bvh);
		bpi_bvh_scratch_free(&scratch);
		cr_assert_eq(bp_allocated_bytes(), 0, "allocation %llu failed: bytes left", (unsigned long long)k);
	}
	bp_set_allocator(NULL);
	ref_free(&ref);
	free_scene(&s);
}
