// SPDX-License-Identifier: MIT
// The test oracle: a direct reading of docs/design.md "Pair rules" over an array of structs.
#include "oracle.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool boxes_overlap(const oracle_box *a, const oracle_box *b, int dims)
{
	for (int k = 0; k < dims; ++k) {
		if (a->min[k] > b->max[k])
			return false;
		if (b->min[k] > a->max[k])
			return false;
	}
	return true;
}

// Spheres, from the text of bp_shape: centre (min + max) / 2, radius the least
// half extent, everything in double; a sphere pairs with a sphere when the
// centres are within ra + rb, with a box when the box's closest point is within r.
static double sphere_radius(const oracle_box *s, int dims)
{
	double r = ((double)s->max[0] - s->min[0]) / 2;
	for (int k = 1; k < dims; ++k)
		if (((double)s->max[k] - s->min[k]) / 2 < r)
			r = ((double)s->max[k] - s->min[k]) / 2;
	return r;
}

static double sphere_centre(const oracle_box *s, int k)
{
	return ((double)s->min[k] + s->max[k]) / 2;
}

static bool shapes_overlap(const oracle_box *a, const oracle_box *b, int dims)
{
	if (!a->is_sphere && !b->is_sphere)
		return true;
	if (a->is_sphere && b->is_sphere) {
		double sum = 0;
		for (int k = 0; k < dims; ++k)
			sum += (sphere_centre(a, k) - sphere_centre(b, k)) * (sphere_centre(a, k) - sphere_centre(b, k));
		double reach = sphere_radius(a, dims) + sphere_radius(b, dims);
		return sum <= reach * reach;
	}
	const oracle_box *sphere = a->is_sphere ? a : b, *box = a->is_sphere ? b : a;
	double sum = 0;
	for (int k = 0; k < dims; ++k) {
		double c = sphere_centre(sphere, k);
		double nearest = c < box->min[k] ? box->min[k] : c > box->max[k] ? box->max[k] : c;
		sum += (c - nearest) * (c - nearest);
	}
	double r = sphere_radius(sphere, dims);
	return sum <= r * r;
}

static bool filter_accepts(const oracle_box *a, const oracle_box *b)
{
	if (a->is_static && b->is_static)
		return false;
	return (a->category & b->mask) != 0 && (b->category & a->mask) != 0;
}

oracle_pairs oracle_find_pairs(const oracle_box *boxes, uint32_t n, int dims)
{
	oracle_pairs out = {0};
	size_t capacity = 0;
	for (uint32_t i = 0; i < n; ++i) {
		for (uint32_t j = i + 1; j < n; ++j) {
			if (!boxes_overlap(&boxes[i], &boxes[j], dims) || !filter_accepts(&boxes[i], &boxes[j]) ||
				!shapes_overlap(&boxes[i], &boxes[j], dims))
				continue;
			if (out.count == capacity) {
				capacity = capacity ? capacity * 2 : 64;
				out.data = realloc(out.data, capacity * sizeof(bp_pair));
				cr_assert_not_null(out.data);
			}
			out.data[out.count++] = (bp_pair){i, j};
		}
	}
	return out; // generated in (i, j) order, so already sorted
}

void oracle_pairs_free(oracle_pairs *pairs)
{
	free(pairs->data);
	*pairs = (oracle_pairs){0};
}

static int compare_pairs(const void *a, const void *b)
{
	const bp_pair *p = a, *q = b;
	if (p->lo != q->lo)
		return p->lo < q->lo ? -1 : 1;
	return p->hi < q->hi ? -1 : p->hi > q->hi;
}

oracle_pairs oracle_sorted_copy(const bp_pair *pairs, size_t count)
{
	oracle_pairs out = {malloc((count ? count : 1) * sizeof(bp_pair)), count};
	cr_assert_not_null(out.data);
	if (count)
		memcpy(out.data, pairs, count * sizeof(bp_pair));
	qsort(out.data, count, sizeof(bp_pair), compare_pairs);
	return out;
}

bool oracle_same_pair_set(const bp_pair *got, size_t got_count, const oracle_pairs *want)
{
	oracle_pairs sorted = oracle_sorted_copy(got, got_count);
	size_t i = 0, j = 0;
	bool same = true;
	while (i < sorted.count || j < want->count) {
		if (i < sorted.count && sorted.data[i].lo >= sorted.data[i].hi) {
			fprintf(stderr, "pair (%u, %u) is not lo < hi\n", sorted.data[i].lo, sorted.data[i].hi);
			same = false;
			break;
		}
		int c = i == sorted.count ? 1 : j == want->count ? -1 : compare_pairs(&sorted.data[i], &want->data[j]);
		if (c != 0) {
			const bp_pair *p = c < 0 ? &sorted.data[i] : &want->data[j];
			fprintf(stderr, "pair (%u, %u) %s\n", p->lo, p->hi, c < 0 ? "reported but not overlapping (or duplicated)" : "missed");
			same = false;
			break;
		}
		++i, ++j;
	}
	oracle_pairs_free(&sorted);
	return same && got_count == want->count;
}

uint64_t test_rng_next(test_rng *rng)
{
	uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

float test_rng_float(test_rng *rng, float lo, float hi)
{
	return lo + (hi - lo) * (float)((test_rng_next(rng) >> 40) * (1.0 / 16777216.0));
}

uint32_t test_rng_below(test_rng *rng, uint32_t bound)
{
	return (uint32_t)(test_rng_next(rng) % bound);
}

void test_rng_vec(test_rng *rng, float *v, int dims, float lo, float hi, bool snap)
{
	for (int k = 0; k < dims; ++k) {
		v[k] = test_rng_float(rng, lo, hi);
		if (snap)
			v[k] = floorf(v[k]);
	}
}

int oracle_compare_hits(const void *x, const void *y)
{
	const bp_hit *a = x, *b = y;
	if (a->distance != b->distance)
		return a->distance < b->distance ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

uint64_t test_layer(uint32_t k)
{
	static const int bits[3] = {0, 33, 63};
	return UINT64_C(1) << bits[k % 3];
}

uint64_t test_layers(uint32_t small)
{
	uint64_t layers = 0;
	for (uint32_t k = 0; k < 3; ++k)
		if (small >> k & 1)
			layers |= test_layer(k);
	return layers;
}

void test_random_boxes(oracle_box *boxes, uint32_t n, int dims, float world, float max_extent, bool filters,
	uint64_t seed)
{
	test_rng rng = {seed};
	for (uint32_t i = 0; i < n; ++i) {
		oracle_box *b = &boxes[i];
		*b = (oracle_box){.category = 1, .mask = UINT64_MAX};
		for (int k = 0; k < dims; ++k) {
			b->min[k] = test_rng_float(&rng, 0.0f, world);
			b->max[k] = b->min[k] + test_rng_float(&rng, 0.0f, max_extent);
		}
		if (filters) {
			b->category = test_layer(test_rng_below(&rng, 3));
			b->mask = test_rng_below(&rng, 4) ? UINT64_MAX : test_layers(test_rng_below(&rng, 8));
			b->is_static = test_rng_below(&rng, 4) == 0;
		}
	}
}

void test_random_spheres(oracle_box *boxes, uint32_t n, int dims, float world, float max_radius, int sphere_percent,
	uint64_t seed)
{
	test_rng rng = {seed};
	for (uint32_t i = 0; i < n; ++i) {
		oracle_box *b = &boxes[i];
		*b = (oracle_box){.category = 1, .mask = UINT64_MAX};
		b->is_sphere = (int)test_rng_below(&rng, 100) < sphere_percent;
		float r = test_rng_float(&rng, 0.0f, max_radius);
		for (int k = 0; k < dims; ++k) {
			float c = test_rng_float(&rng, 0.0f, world);
			float half = b->is_sphere ? r : test_rng_float(&rng, 0.0f, max_radius);
			b->min[k] = c - half;
			b->max[k] = c + half;
		}
	}
}

bp_entity_def oracle_entity_def(const oracle_box *box)
{
	bp_entity_def e = bp_entity_def_default();
	memcpy(e.min, box->min, sizeof e.min);
	memcpy(e.max, box->max, sizeof e.max);
	e.category = box->category;
	e.mask = box->mask;
	e.kind = box->is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
	e.shape = box->is_sphere ? BP_SHAPE_SPHERE : BP_SHAPE_BOX;
	return e;
}

bp_world *test_world_from_def(const oracle_box *boxes, uint32_t n, const bp_world_def *def)
{
	bp_world *world = NULL;
	cr_assert_eq(bp_world_create(def, &world), BP_OK);
	for (uint32_t i = 0; i < n; ++i) {
		bp_entity_def e = oracle_entity_def(&boxes[i]);
		e.user_key = i;
		bp_entity handle;
		cr_assert_eq(bp_entity_create(world, &e, &handle), BP_OK, "%s", bp_world_last_error(world));
	}
	return world;
}

bp_world *test_world_from_boxes(const oracle_box *boxes, uint32_t n, int dims, bp_algorithm algorithm, int threads)
{
	bp_world_def def = bp_world_def_default();
	def.dims = dims;
	def.algorithm = algorithm;
	def.thread_count = threads;
	return test_world_from_def(boxes, n, &def);
}

// ---- periodic worlds: the definition, in doubles --------------------------

/// Closed intervals [amin, amax] and [bmin, bmax] overlap for some shift of b
/// by k * period. Positions are first reduced into [0, period) with floor
/// (the library uses fmod), then every k in [-2, 2] is tried: with both
/// reduced minima in [0, period) and extents <= period / 2 no other k can
/// overlap, and trying two more than needed keeps the oracle free of that
/// argument.
static bool periodic_axis_overlap(double amin, double amax, double bmin, double bmax, double period)
{
	double a = amin - floor(amin / period) * period, ea = amax - amin;
	double b = bmin - floor(bmin / period) * period, eb = bmax - bmin;
	for (int k = -2; k <= 2; ++k) {
		double shifted = b + k * period;
		if (a <= shifted + eb && shifted <= a + ea)
			return true;
	}
	return false;
}

oracle_pairs oracle_find_periodic_pairs(const oracle_box *boxes, uint32_t n, int dims, const float period[3])
{
	oracle_pairs out = {0};
	size_t capacity = 0;
	for (uint32_t i = 0; i < n; ++i)
		for (uint32_t j = i + 1; j < n; ++j) {
			const oracle_box *a = &boxes[i], *b = &boxes[j];
			if (!(a->category & b->mask) || !(b->category & a->mask) || (a->is_static && b->is_static))
				continue;
			bool overlap = true;
			for (int axis = 0; axis < dims && overlap; ++axis)
				overlap = periodic_axis_overlap(a->min[axis], a->max[axis], b->min[axis], b->max[axis], period[axis]);
			if (!overlap)
				continue;
			if (out.count == capacity) {
				capacity = capacity ? capacity * 2 : 64;
				out.data = realloc(out.data, capacity * sizeof *out.data);
				cr_assert_not_null(out.data);
			}
			out.data[out.count++] = (bp_pair){i, j};
		}
	return out;
}

/// Steps both worlds and holds each to the oracle; the pairs of both through got and want_plain.
static void step_two(bp_world *world, bp_world *plain, const oracle_box *boxes, uint32_t n, int dims)
{
	cr_assert_eq(bp_world_step(world), BP_OK, "%s", bp_world_last_error(world));
	cr_assert_eq(bp_world_step(plain), BP_OK, "%s", bp_world_last_error(plain));
	size_t count, plain_count;
	const bp_pair *got = bp_world_pairs(world, &count);
	const bp_pair *got_plain = bp_world_pairs(plain, &plain_count);
	oracle_pairs want = oracle_find_pairs(boxes, n, dims);
	cr_assert(oracle_same_pair_set(got, count, &want), "n=%u: %zu pairs, oracle %zu", n, count, want.count);
	cr_assert(oracle_same_pair_set(got_plain, plain_count, &want), "n=%u: the other world differs", n);
	oracle_pairs_free(&want);
}

bp_frame_stats oracle_step_both(bp_world *world, bp_world *plain, const oracle_box *boxes, uint32_t n, int dims)
{
	step_two(world, plain, boxes, n, dims);
	size_t count, plain_count;
	const bp_pair *got = bp_world_pairs(world, &count);
	const bp_pair *want_plain = bp_world_pairs(plain, &plain_count);
	cr_assert_eq(count, plain_count);
	cr_assert(count == 0 || memcmp(got, want_plain, count * sizeof *got) == 0, "order differs from the other world");
	return bp_world_stats(world);
}

bp_frame_stats oracle_step_both_any_order(bp_world *world, bp_world *plain, const oracle_box *boxes, uint32_t n,
	int dims)
{
	step_two(world, plain, boxes, n, dims);
	return bp_world_stats(world);
}

test_step_result test_step_once(const oracle_box *boxes, uint32_t n, int dims, bp_algorithm algorithm, int threads,
	uint32_t debug_flags)
{
	bp_world *w = test_world_from_boxes(boxes, n, dims, algorithm, threads);
	cr_assert_eq(bp_world_set_debug_flags(w, debug_flags), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
	test_step_result r = {0};
	const bp_pair *pairs = bp_world_pairs(w, &r.count);
	r.pairs = malloc((r.count ? r.count : 1) * sizeof *r.pairs);
	cr_assert_not_null(r.pairs);
	if (r.count)
		memcpy(r.pairs, pairs, r.count * sizeof *r.pairs);
	r.stats = bp_world_stats(w);
	bp_world_destroy(w);
	return r;
}
