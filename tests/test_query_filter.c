// SPDX-License-Identifier: MIT
// Filtered queries, visitors and box casts on a view (frame.h) against brute force over the same
// boxes and the filter rule written out here, 2D and 3D, with and without the view's index.
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

// ---- the filter, from the text of frame.h ----------------------------------------

/// What a test filter's callback saw: each call's entity, to check it is called
/// only on entities that pass everything else, at most once per query.
typedef struct callback_log {
	uint32_t salt;   ///< accepts entity e iff (e * 2654435761 + salt) has bit 20 set
	uint32_t *calls; ///< per entity, calls in this query
	size_t count;
} callback_log;

static bool callback_verdict(uint32_t e, uint32_t salt) { return ((e * 2654435761u + salt) >> 20) & 1u; }

static bool log_accept(uint32_t e, void *user)
{
	callback_log *log = user;
	log->calls[e]++;
	log->count++;
	return callback_verdict(e, log->salt);
}

/// Everything but the callback: the AND rule (none when category and mask are both all
/// bits), the kind and the excluded entity.
static bool bf_checks(const oracle_box *b, uint32_t i, const bp_query_filter *f)
{
	if (!f)
		return true;
	uint32_t kind = b->is_static ? BP_QUERY_STATIC : BP_QUERY_DYNAMIC;
	bool layers = f->category == UINT64_MAX && f->mask == UINT64_MAX;
	if (!layers)
		layers = (f->category & b->mask) != 0 && (b->category & f->mask) != 0;
	return layers && (f->kinds & kind) != 0 && i != f->exclude;
}

static bool bf_accepts(const oracle_box *b, uint32_t i, const bp_query_filter *f)
{
	if (!f || !bf_checks(b, i, f))
		return !f;
	return !f->accept || callback_verdict(i, ((const callback_log *)f->user)->salt);
}

// ---- brute force over the boxes ---------------------------------------------------

static bool bf_overlaps(const oracle_box *b, int dims, const float *lo, const float *hi)
{
	for (int k = 0; k < dims; ++k)
		if (!(b->min[k] <= hi[k] && lo[k] <= b->max[k]))
			return false;
	return true;
}

static bool bf_within(const oracle_box *b, int dims, const float *c, float r)
{
	float d2 = 0;
	for (int k = 0; k < dims; ++k) {
		float g = c[k] < b->min[k] ? b->min[k] - c[k] : c[k] > b->max[k] ? c[k] - b->max[k] : 0.0f;
		d2 += g * g;
	}
	return d2 <= r * r;
}

static size_t bf_box(const oracle_box *b, uint32_t n, int dims, const float *lo, const float *hi,
	const bp_query_filter *f, uint32_t *out)
{
	size_t count = 0;
	for (uint32_t i = 0; i < n; ++i)
		if (bf_overlaps(&b[i], dims, lo, hi) && bf_accepts(&b[i], i, f))
			out[count++] = i;
	return count;
}

static size_t bf_sphere(const oracle_box *b, uint32_t n, int dims, const float *c, float r,
	const bp_query_filter *f, uint32_t *out)
{
	size_t count = 0;
	for (uint32_t i = 0; i < n; ++i)
		if (bf_within(&b[i], dims, c, r) && bf_accepts(&b[i], i, f))
			out[count++] = i;
	return count;
}

/// Every entity the box [lo, hi] meets while moving along d, t in [0, max_t],
/// sorted by (t, index); lo == hi is a ray. On each axis the boxes overlap
/// while lo + t d <= b.max and b.min <= hi + t d: solved for t per sign of d.
static size_t bf_sweep(const oracle_box *b, uint32_t n, int dims, const float *lo, const float *hi, const float *d,
	float max_t, const bp_query_filter *f, bp_hit *out)
{
	size_t count = 0;
	for (uint32_t i = 0; i < n; ++i) {
		float first = 0, last = max_t;
		bool hit = true;
		for (int k = 0; k < dims && hit; ++k) {
			if (d[k] == 0) {
				hit = b[i].min[k] <= hi[k] && lo[k] <= b[i].max[k];
				continue;
			}
			float until = (b[i].max[k] - lo[k]) / d[k]; // lo + t d <= b.max
			float from = (b[i].min[k] - hi[k]) / d[k];  // b.min <= hi + t d
			first = fmaxf(first, d[k] > 0 ? from : until);
			last = fminf(last, d[k] > 0 ? until : from);
			hit = first <= last;
		}
		if (hit && bf_accepts(&b[i], i, f))
			out[count++] = (bp_hit){i, first};
	}
	qsort(out, count, sizeof *out, oracle_compare_hits);
	return count;
}

static size_t bf_nearest(const oracle_box *b, uint32_t n, int dims, const float *p, uint32_t k,
	const bp_query_filter *f, bp_hit *out)
{
	bp_hit *all = malloc((n + 1) * sizeof *all);
	size_t m = 0;
	for (uint32_t i = 0; i < n; ++i) {
		if (!bf_accepts(&b[i], i, f))
			continue;
		float d2 = 0;
		for (int a = 0; a < dims; ++a) {
			float g = p[a] < b[i].min[a] ? b[i].min[a] - p[a] : p[a] > b[i].max[a] ? p[a] - b[i].max[a] : 0.0f;
			d2 += g * g;
		}
		all[m++] = (bp_hit){i, d2};
	}
	qsort(all, m, sizeof *all, oracle_compare_hits);
	size_t count = k < m ? k : m;
	for (size_t i = 0; i < count; ++i)
		out[i] = (bp_hit){all[i].index, sqrtf(all[i].distance)};
	free(all);
	return count;
}

// ---- scenes and filters -------------------------------------------------------------

typedef struct scene {
	oracle_box *boxes;
	uint32_t n;
	int dims;
	float world;
	bool snap;
	bp_world *w;
	bp_view *v;
	callback_log log;
} scene;

/// Random filters and kinds (test_random_boxes), some zero categories; with
/// `snap`, integer corners (touching faces, equal boxes, exact ties); 1 in 8
/// boxes is a point.
/// `crowd` > 1 packs the same boxes into a smaller world (rays then hit hundreds).
static scene make_scene(int dims, uint32_t n, bool snap, float crowd, uint64_t seed)
{
	scene s = {.n = n, .dims = dims, .snap = snap, .boxes = calloc(n + 1, sizeof(oracle_box))};
	s.world = (dims == 2 ? sqrtf((float)n) * 2.5f : cbrtf((float)n) * 2.5f) / crowd;
	test_random_boxes(s.boxes, n, dims, s.world, 3.0f, true, seed);
	test_rng rng = {seed ^ 0xf117e5};
	for (uint32_t i = 0; i < n; ++i) {
		oracle_box *b = &s.boxes[i];
		bool point = test_rng_below(&rng, 8) == 0;
		for (int k = 0; k < dims; ++k) {
			if (snap) {
				b->min[k] = floorf(b->min[k]);
				b->max[k] = b->min[k] + (float)test_rng_below(&rng, 3);
			}
			if (point)
				b->max[k] = b->min[k];
		}
		if (test_rng_below(&rng, 16) == 0)
			b->category = 0;
		if (test_rng_below(&rng, 16) == 0)
			b->mask = 0;
	}
	s.w = test_world_from_boxes(s.boxes, n, dims, BP_ALGO_AUTO, 1);
	cr_assert_eq(bp_frame_step(s.w, &s.v), BP_OK);
	s.log.calls = calloc(n + 1, sizeof *s.log.calls);
	return s;
}

static void free_scene(scene *s)
{
	bp_view_release(s->v);
	bp_world_destroy(s->w);
	free(s->boxes);
	free(s->log.calls);
	cr_assert_eq(bp_allocated_bytes(), 0, "leaked %lld bytes", (long long)bp_allocated_bytes());
}

/// A random filter, or NULL (one in five).
static const bp_query_filter *random_filter(test_rng *rng, scene *s, bp_query_filter *f)
{
	if (test_rng_below(rng, 5) == 0)
		return NULL;
	*f = bp_query_filter_default();
	if (test_rng_below(rng, 2))
		f->category = test_layer(test_rng_below(rng, 3));
	if (test_rng_below(rng, 2))
		f->mask = test_layers(test_rng_below(rng, 8));
	else if (test_rng_below(rng, 4) == 0)
		f->mask = UINT64_MAX & ~test_layer(test_rng_below(rng, 3)); // one layer short of no layer test
	f->kinds = 1 + test_rng_below(rng, 3);
	if (test_rng_below(rng, 2))
		f->exclude = test_rng_below(rng, s->n);
	if (test_rng_below(rng, 2)) {
		s->log.salt = (uint32_t)test_rng_next(rng);
		f->accept = log_accept;
		f->user = &s->log;
	}
	return f;
}

static void log_reset(scene *s)
{
	memset(s->log.calls, 0, s->n * sizeof *s->log.calls);
	s->log.count = 0;
}

/// The callback ran at most once per entity, and only on entities that pass
/// `geometric` (NULL: not checked here) and every other check.
static void check_calls(const scene *s, const bp_query_filter *f, const bool *geometric)
{
	for (uint32_t i = 0; i < s->n; ++i) {
		cr_assert_leq(s->log.calls[i], 1, "callback ran %u times on entity %u", s->log.calls[i], i);
		if (s->log.calls[i]) {
			cr_assert(bf_checks(&s->boxes[i], i, f), "callback saw entity %u, which the filter rejects", i);
			cr_assert(!geometric || geometric[i], "callback saw entity %u, which is not a hit", i);
		}
	}
}

// ---- visitors ----------------------------------------------------------------------

typedef struct visited {
	uint32_t *items;
	bp_hit *hits;
	size_t count, stop_after;
} visited;

static bool visit_entity(uint32_t e, void *user)
{
	visited *v = user;
	v->items[v->count++] = e;
	return v->count < v->stop_after;
}

static bool visit_hit(bp_hit h, void *user)
{
	visited *v = user;
	v->hits[v->count++] = h;
	return v->count < v->stop_after;
}

static bool never_called(uint32_t e, void *user)
{
	(void)e;
	*(bool *)user = true;
	return true;
}

static bool never_called_hit(bp_hit h, void *user)
{
	(void)h;
	*(bool *)user = true;
	return true;
}

static int compare_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return (a > b) - (a < b);
}

static bool same_hits(const bp_hit *a, const bp_hit *b, size_t n)
{
	for (size_t i = 0; i < n; ++i)
		if (a[i].index != b[i].index || a[i].distance != b[i].distance)
			return false;
	return true;
}

// ---- the checks ----------------------------------------------------------------------

/// A box or sphere query in its list and visitor forms against `want` (ascending).
static void check_set_query(scene *s, const bp_query_filter *f, bool sphere, const float *lo, const float *hi,
	const float *c, float r, const uint32_t *want, size_t want_n, bool *geometric)
{
	uint32_t *got = malloc((s->n + 1) * sizeof *got);
	size_t got_n = 0;
	log_reset(s);
	bp_status status = sphere ? bp_view_overlap_sphere(s->v, c, r, f, got, s->n + 1, &got_n)
	                          : bp_view_overlap_box(s->v, lo, hi, f, got, s->n + 1, &got_n);
	cr_assert_eq(status, BP_OK);
	cr_assert_eq(got_n, want_n, "%s: %zu hits, brute force %zu", sphere ? "sphere" : "box", got_n, want_n);
	cr_assert(want_n == 0 || memcmp(got, want, want_n * sizeof *got) == 0);
	for (uint32_t i = 0; i < s->n; ++i)
		geometric[i] = sphere ? bf_within(&s->boxes[i], s->dims, c, r) : bf_overlaps(&s->boxes[i], s->dims, lo, hi);
	if (f && f->accept)
		check_calls(s, f, geometric);
	if (want_n > 1) { // a short buffer: the lowest index and the full count
		status = sphere ? bp_view_overlap_sphere(s->v, c, r, f, got, 1, &got_n)
		                : bp_view_overlap_box(s->v, lo, hi, f, got, 1, &got_n);
		cr_assert_eq(status, BP_ERR_OUT_OF_RANGE);
		cr_assert(got_n == want_n && got[0] == want[0]);
	}
	// Visitor: all of it (as a set), then stopped after k (a subset of exactly k).
	size_t stops[] = {SIZE_MAX, 1, want_n / 2 + 1};
	for (int i = 0; i < 3; ++i) {
		visited vis = {got, NULL, 0, stops[i]};
		log_reset(s);
		status = sphere ? bp_view_visit_overlap_sphere(s->v, c, r, f, visit_entity, &vis)
		                : bp_view_visit_overlap_box(s->v, lo, hi, f, visit_entity, &vis);
		cr_assert_eq(status, BP_OK);
		if (f && f->accept)
			check_calls(s, f, geometric);
		size_t expect = want_n < stops[i] ? want_n : stops[i];
		cr_assert_eq(vis.count, expect, "visitor (stop after %zu) saw %zu of %zu", stops[i], vis.count, want_n);
		qsort(got, vis.count, sizeof *got, compare_u32);
		for (size_t j = 0; j < vis.count; ++j) {
			cr_assert(j == 0 || got[j] != got[j - 1], "visited %u twice", got[j]);
			cr_assert(bsearch(&got[j], want, want_n, sizeof *want, compare_u32), "visited %u, not a hit", got[j]);
		}
	}
	free(got);
}

/// A ray or box cast in its closest, all and visitor forms against `want`.
static void check_sweep(scene *s, const bp_query_filter *f, bool box, const float *lo, const float *hi,
	const float *d, float max_t, const bp_hit *want, size_t want_n, bool *geometric)
{
	bp_hit *got = malloc((s->n + 1) * sizeof *got), closest = {0};
	size_t got_n = 0;
	bool found;
	log_reset(s);
	bp_status status = box ? bp_view_cast_box(s->v, lo, hi, d, max_t, f, got, s->n + 1, &got_n)
	                       : bp_view_cast_ray(s->v, lo, d, max_t, f, got, s->n + 1, &got_n);
	cr_assert_eq(status, BP_OK);
	cr_assert_eq(got_n, want_n, "%s: %zu hits, brute force %zu", box ? "box cast" : "ray", got_n, want_n);
	cr_assert(same_hits(got, want, want_n), "%s hits differ from brute force", box ? "box cast" : "ray");
	bp_hit *geo = malloc((s->n + 1) * sizeof *geo);
	size_t geo_n = bf_sweep(s->boxes, s->n, s->dims, lo, hi, d, max_t, NULL, geo);
	memset(geometric, 0, s->n * sizeof *geometric);
	for (size_t i = 0; i < geo_n; ++i)
		geometric[geo[i].index] = true;
	free(geo);
	if (f && f->accept)
		check_calls(s, f, geometric);

	log_reset(s);
	status = box ? bp_view_cast_box_closest(s->v, lo, hi, d, max_t, f, &closest, &found)
	             : bp_view_cast_ray_closest(s->v, lo, d, max_t, f, &closest, &found);
	cr_assert_eq(status, BP_OK);
	cr_assert_eq(found, want_n > 0);
	if (found)
		cr_assert(same_hits(&closest, want, 1), "closest: %u at %g, brute force %u at %g", closest.index,
			(double)closest.distance, want[0].index, (double)want[0].distance);
	if (f && f->accept)
		check_calls(s, f, geometric);
	if (want_n > 2) { // a short buffer: the first hits and the full count
		status = box ? bp_view_cast_box(s->v, lo, hi, d, max_t, f, got, 2, &got_n)
		             : bp_view_cast_ray(s->v, lo, d, max_t, f, got, 2, &got_n);
		cr_assert(status == BP_ERR_OUT_OF_RANGE && got_n == want_n && same_hits(got, want, 2));
	}
	// Visitor: the whole ordered list, then exactly its first k when stopped after k.
	size_t stops[] = {SIZE_MAX, 1, 3, want_n / 2 + 1};
	for (int i = 0; i < 4; ++i) {
		visited vis = {NULL, got, 0, stops[i]};
		log_reset(s);
		status = box ? bp_view_visit_cast_box(s->v, lo, hi, d, max_t, f, visit_hit, &vis)
		             : bp_view_visit_cast_ray(s->v, lo, d, max_t, f, visit_hit, &vis);
		cr_assert_eq(status, BP_OK);
		size_t expect = want_n < stops[i] ? want_n : stops[i];
		cr_assert_eq(vis.count, expect, "visitor (stop after %zu): %zu of %zu", stops[i], vis.count, want_n);
		cr_assert(same_hits(got, want, vis.count), "visited hits are not the first %zu in order", vis.count);
		if (f && f->accept)
			check_calls(s, f, geometric);
	}
	free(got);
}

static void check_nearest(scene *s, const bp_query_filter *f, const float *p, uint32_t k)
{
	bp_hit *want = malloc((s->n + 4) * sizeof *want), *got = malloc((s->n + 4) * sizeof *got);
	size_t want_n = bf_nearest(s->boxes, s->n, s->dims, p, k, f, want), got_n = 0;
	log_reset(s);
	cr_assert_eq(bp_view_nearest(s->v, p, k, f, got, &got_n), BP_OK);
	cr_assert_eq(got_n, want_n, "nearest k=%u: %zu, brute force %zu", k, got_n, want_n);
	cr_assert(same_hits(got, want, want_n), "nearest k=%u differs from brute force", k);
	if (f && f->accept)
		check_calls(s, f, NULL);
	free(want);
	free(got);
}

static void run_random(int dims, uint32_t n, bool snap, float crowd, uint64_t seed, int queries)
{
	scene s = make_scene(dims, n, snap, crowd, seed);
	test_rng rng = {seed * 7919};
	uint32_t *want = malloc((n + 1) * sizeof *want);
	bp_hit *want_hits = malloc((n + 1) * sizeof *want_hits);
	bool *geometric = malloc((n + 1) * sizeof *geometric);
	for (int q = 0; q < queries; ++q) {
		bp_query_filter storage;
		const bp_query_filter *f = random_filter(&rng, &s, &storage);
		float lo[3], hi[3], ext[3], p[3], d[3];
		test_rng_vec(&rng, lo, dims, -2, s.world + 2, snap);
		test_rng_vec(&rng, ext, dims, 0, 4, snap);
		if (crowd > 1) { // a slab across the world: hundreds of hits, through the index when thin on its axis
			for (int k = 0; k < dims; ++k)
				ext[k] = s.world;
			ext[test_rng_below(&rng, (uint32_t)dims)] = s.world / 5;
		}
		for (int k = 0; k < dims; ++k)
			hi[k] = lo[k] + ext[k];
		size_t want_n = bf_box(s.boxes, n, dims, lo, hi, f, want);
		check_set_query(&s, f, false, lo, hi, NULL, 0, want, want_n, geometric);
		// A point through the point form and the visitor of its box.
		test_rng_vec(&rng, p, dims, -1, s.world + 1, snap);
		want_n = bf_box(s.boxes, n, dims, p, p, f, want);
		uint32_t *got = malloc((n + 1) * sizeof *got);
		size_t got_n;
		cr_assert_eq(bp_view_overlap_point(s.v, p, f, got, n + 1, &got_n), BP_OK);
		cr_assert(got_n == want_n && (want_n == 0 || memcmp(got, want, want_n * sizeof *got) == 0), "point query");
		free(got);
		check_set_query(&s, f, false, p, p, NULL, 0, want, want_n, geometric);
		float r = snap ? (float)test_rng_below(&rng, 4) : test_rng_float(&rng, 0, 4);
		want_n = bf_sphere(s.boxes, n, dims, p, r, f, want);
		check_set_query(&s, f, true, NULL, NULL, p, r, want, want_n, geometric);

		// Rays and box casts: random directions, some components zeroed (axis-parallel).
		test_rng_vec(&rng, p, dims, -3, s.world + 3, false);
		test_rng_vec(&rng, d, dims, -1, 1, false);
		for (int k = 0; k < dims; ++k)
			if (test_rng_below(&rng, 3) == 0)
				d[k] = 0;
		float max_t = test_rng_below(&rng, 2) ? INFINITY : test_rng_float(&rng, 0, s.world);
		want_n = bf_sweep(s.boxes, n, dims, p, p, d, max_t, f, want_hits);
		check_sweep(&s, f, false, p, p, d, max_t, want_hits, want_n, geometric);
		// The same ray as the cast of a zero-size box gives the same hits.
		check_sweep(&s, f, true, p, p, d, max_t, want_hits, want_n, geometric);
		test_rng_vec(&rng, ext, dims, 0, 3, snap);
		for (int k = 0; k < dims; ++k)
			hi[k] = p[k] + ext[k];
		want_n = bf_sweep(s.boxes, n, dims, p, hi, d, max_t, f, want_hits);
		check_sweep(&s, f, true, p, hi, d, max_t, want_hits, want_n, geometric);
		// A box that overlaps an accepted entity at the start hits it at t = 0.
		for (size_t i = 0; i < want_n; ++i)
			cr_assert_eq(want_hits[i].distance == 0, bf_overlaps(&s.boxes[want_hits[i].index], dims, p, hi));

		uint32_t ks[] = {0, 1, 7, n + 3};
		test_rng_vec(&rng, p, dims, -2, s.world + 2, snap);
		check_nearest(&s, f, p, ks[q % 4]);
	}
	free(want);
	free(want_hits);
	free(geometric);
	free_scene(&s);
}

// 400 entities get the view's hierarchy, 120 are scanned.
Test(query_filter, random_2d, .timeout = 300)
{
	for (uint64_t seed = 1; seed <= 24; ++seed)
		run_random(2, seed % 3 ? 400 : 120, seed % 2, 1.0f, seed, 25);
}

Test(query_filter, random_3d, .timeout = 300)
{
	for (uint64_t seed = 101; seed <= 124; ++seed)
		run_random(3, seed % 3 ? 400 : 120, seed % 2, 1.0f, seed, 25);
}

/// Crowded scenes: rays and casts hit far more than the 64 hits a visitor
/// keeps on the stack, and box queries pass the index's sorting limit.
Test(query_filter, crowded, .timeout = 300)
{
	for (uint64_t seed = 201; seed <= 204; ++seed)
		run_random(seed % 2 ? 3 : 2, 3000, seed % 4 < 2, 6.0f, seed, 8);
}

/// Box queries with hundreds of accepted hits through the index, where the
/// unfiltered query would give up on the index and scan: the callback still
/// runs once per entity.
Test(query_filter, callback_once_with_many_hits, .timeout = 120)
{
	scene s = make_scene(2, 3000, false, 6.0f, 31);
	uint32_t *want = malloc(3001 * sizeof *want);
	bool *geometric = malloc(3001 * sizeof *geometric);
	test_rng rng = {32};
	for (int q = 0; q < 16; ++q) {
		bp_query_filter f = bp_query_filter_default();
		f.accept = log_accept;
		f.user = &s.log;
		s.log.salt = (uint32_t)test_rng_next(&rng);
		float lo[2], hi[2];
		const int thin = q % 2; // one of the two is the index's axis
		for (int k = 0; k < 2; ++k) {
			lo[k] = k == thin ? test_rng_float(&rng, 0, s.world * 0.8f) : -1;
			hi[k] = k == thin ? lo[k] + s.world / 5 : s.world + 4;
		}
		size_t want_n = bf_box(s.boxes, s.n, 2, lo, hi, &f, want);
		cr_assert_gt(want_n, 256);
		check_set_query(&s, &f, false, lo, hi, NULL, 0, want, want_n, geometric);
	}
	free(want);
	free(geometric);
	free_scene(&s);
}

Test(query_filter, tiny_scenes, .timeout = 60)
{
	for (uint32_t n = 1; n <= 6; ++n)
		run_random(n % 2 ? 3 : 2, n, true, 1.0f, 100 + n, 10);
}

/// An agent casting from its own centre with itself excluded never sees
/// itself, and sees exactly what brute force sees.
Test(query_filter, exclude_self, .timeout = 60)
{
	for (int dims = 2; dims <= 3; ++dims) {
		scene s = make_scene(dims, 400, dims == 2, 1.0f, 77 + (uint64_t)dims);
		bp_hit *want = malloc(401 * sizeof *want), *got = malloc(401 * sizeof *got);
		test_rng rng = {78};
		for (uint32_t e = 0; e < s.n; e += 7) {
			bp_query_filter f = bp_query_filter_default();
			f.exclude = e;
			float c[3], d[3];
			for (int k = 0; k < dims; ++k)
				c[k] = 0.5f * (s.boxes[e].min[k] + s.boxes[e].max[k]);
			test_rng_vec(&rng, d, dims, -1, 1, false);
			bp_hit h;
			bool found;
			size_t want_n = bf_sweep(s.boxes, s.n, dims, c, c, d, INFINITY, &f, want), got_n;
			cr_assert_eq(bp_view_cast_ray_closest(s.v, c, d, INFINITY, &f, &h, &found), BP_OK);
			cr_assert_eq(found, want_n > 0);
			cr_assert(!found || (h.index != e && same_hits(&h, want, 1)), "ray from %u", e);
			cr_assert_eq(bp_view_cast_ray(s.v, c, d, INFINITY, &f, got, 401, &got_n), BP_OK);
			cr_assert(got_n == want_n && same_hits(got, want, want_n));
			want_n = bf_nearest(s.boxes, s.n, dims, c, 3, &f, want);
			cr_assert_eq(bp_view_nearest(s.v, c, 3, &f, got, &got_n), BP_OK);
			cr_assert(got_n == want_n && same_hits(got, want, want_n), "nearest to %u", e);
			for (size_t i = 0; i < got_n; ++i)
				cr_assert_neq(got[i].index, e);
		}
		free(want);
		free(got);
		free_scene(&s);
	}
}

/// Bad input returns the documented error, writes nothing and calls nothing.
Test(query_filter, bad_input, .timeout = 60)
{
	scene s = make_scene(2, 300, false, 1.0f, 5);
	const float lo[2] = {1, 1}, hi[2] = {4, 4}, nan2[2] = {NAN, 0}, inf2[2] = {INFINITY, 0}, d[2] = {1, 0};
	bp_query_filter good = bp_query_filter_default(), bad = good;
	bad.kinds = 4;
	uint32_t out[4] = {7, 7, 7, 7};
	bp_hit hit = {9, 9}, hits[2] = {{9, 9}, {9, 9}};
	size_t total = 99;
	bool found = true, called = false;
#define UNTOUCHED() \
	cr_assert(out[0] == 7 && out[3] == 7 && total == 99 && found && hit.index == 9 && hits[0].index == 9 && \
		!called, "an error wrote its outputs or called back")
	cr_assert_eq(bp_view_overlap_box(s.v, nan2, hi, &good, out, 4, &total), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_view_overlap_box(s.v, hi, lo, &good, out, 4, &total), BP_ERR_INVERTED_BOUNDS);
	cr_assert_eq(bp_view_overlap_box(s.v, lo, hi, &bad, out, 4, &total), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_overlap_box(s.v, NULL, hi, &good, out, 4, &total), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_overlap_box(NULL, lo, hi, &good, out, 4, &total), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_overlap_box(s.v, lo, hi, &good, NULL, 4, &total), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_overlap_point(s.v, inf2, &good, out, 4, &total), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_view_overlap_sphere(s.v, lo, NAN, &good, out, 4, &total), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_view_overlap_sphere(s.v, lo, -1, &good, out, 4, &total), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_overlap_sphere(s.v, lo, 1, &bad, out, 4, &total), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_nearest(s.v, nan2, 2, &good, hits, &total), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_view_nearest(s.v, lo, 2, &bad, hits, &total), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_nearest(s.v, lo, 2, &good, NULL, &total), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_cast_ray_closest(s.v, nan2, d, 1, &good, &hit, &found), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_view_cast_ray_closest(s.v, lo, inf2, 1, &good, &hit, &found), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_view_cast_ray_closest(s.v, lo, d, NAN, &good, &hit, &found), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_cast_ray_closest(s.v, lo, d, -1, &good, &hit, &found), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_cast_ray_closest(s.v, lo, d, 1, &bad, &hit, &found), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_cast_ray_closest(s.v, lo, d, 1, &good, &hit, NULL), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_cast_ray(s.v, nan2, d, 1, &good, hits, 2, &total), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_view_cast_ray(s.v, lo, d, 1, &good, NULL, 2, &total), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_cast_box_closest(s.v, hi, lo, d, 1, &good, &hit, &found), BP_ERR_INVERTED_BOUNDS);
	cr_assert_eq(bp_view_cast_box_closest(s.v, nan2, hi, d, 1, &good, &hit, &found), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_view_cast_box_closest(s.v, lo, hi, inf2, 1, &good, &hit, &found), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_view_cast_box_closest(s.v, lo, hi, d, NAN, &good, &hit, &found), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_cast_box_closest(s.v, lo, NULL, d, 1, &good, &hit, &found), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_cast_box(s.v, hi, lo, d, 1, &good, hits, 2, &total), BP_ERR_INVERTED_BOUNDS);
	cr_assert_eq(bp_view_cast_box(s.v, lo, hi, d, -1, &good, hits, 2, &total), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_cast_box(s.v, lo, hi, d, 1, &bad, hits, 2, &total), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_visit_overlap_box(s.v, hi, lo, &good, never_called, &called), BP_ERR_INVERTED_BOUNDS);
	cr_assert_eq(bp_view_visit_overlap_box(s.v, lo, hi, &bad, never_called, &called), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_visit_overlap_box(s.v, lo, hi, &good, NULL, &called), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_visit_overlap_sphere(s.v, nan2, 1, &good, never_called, &called), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_view_visit_overlap_sphere(s.v, lo, -1, &good, never_called, &called), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_visit_cast_ray(s.v, lo, nan2, 1, &good, never_called_hit, &called), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_view_visit_cast_ray(s.v, lo, d, NAN, &good, never_called_hit, &called), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_visit_cast_ray(s.v, lo, d, 1, &good, NULL, &called), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_visit_cast_box(s.v, hi, lo, d, 1, &good, never_called_hit, &called),
		BP_ERR_INVERTED_BOUNDS);
	cr_assert_eq(bp_view_visit_cast_box(s.v, lo, hi, d, 1, &bad, never_called_hit, &called),
		BP_ERR_INVALID_ARGUMENT);
	UNTOUCHED();
#undef UNTOUCHED
	free_scene(&s);
}

/// Periodic worlds (frame.h): a box query finds a box across the seam from the other
/// side, through its image; a ray does not wrap. Worked by hand, period 40.
Test(query_filter, periodic_box_queries_wrap_and_rays_do_not, .timeout = 60)
{
	const oracle_box boxes[2] = {{.min = {38.0f, 10.0f}, .max = {39.5f, 12.0f}, .category = 1, .mask = 1},
		{.min = {5.0f, 10.0f}, .max = {6.0f, 12.0f}, .category = 1, .mask = 1}};
	bp_world_def def = bp_world_def_default();
	def.dims = 2;
	def.periodic = true;
	def.period[0] = def.period[1] = 40.0f;
	bp_world *w = test_world_from_def(boxes, 2, &def);
	bp_view *v;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	uint32_t got[2];
	size_t got_n;
	// [-1, 0.5] moved by +40 is [39, 40.5]: it meets box 0 at [38, 39.5].
	const float lo[2] = {-1.0f, 10.0f}, hi[2] = {0.5f, 11.0f};
	cr_assert_eq(bp_view_overlap_box(v, lo, hi, NULL, got, 2, &got_n), BP_OK);
	cr_assert_eq(got_n, 1);
	cr_assert_eq(got[0], 0);
	// The point 79 is 39 two periods back: inside box 0 only.
	const float point[2] = {79.0f, 51.0f};
	cr_assert_eq(bp_view_overlap_point(v, point, NULL, got, 2, &got_n), BP_OK);
	cr_assert(got_n == 1 && got[0] == 0);
	// A ray from 0.5 to the left for 2 units ends at -1.5 in plain space: no hit.
	const float origin[2] = {0.5f, 11.0f}, left[2] = {-1.0f, 0.0f};
	bp_hit hit;
	bool found = true;
	cr_assert_eq(bp_view_cast_ray_closest(v, origin, left, 2.0f, NULL, &hit, &found), BP_OK);
	cr_assert(!found);
	bp_view_release(v);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

/// One meaning for "no filter": bp_query_filter_default() sees what NULL sees, entities in
/// no layer (category or mask 0) included; a filter that names layers applies the pair rule.
Test(query_filter, the_default_filter_sees_what_no_filter_sees)
{
	// Four boxes on one spot: A plain, B category 0, C mask 0, D static.
	oracle_box boxes[4] = {
		{{0, 0, 0}, {1, 1, 1}, 1, UINT64_MAX, false, false},
		{{0, 0, 0}, {1, 1, 1}, 0, UINT32_MAX, false, false},
		{{0, 0, 0}, {1, 1, 1}, 1, 0, false, false},
		{{0, 0, 0}, {1, 1, 1}, 1, UINT64_MAX, true, false},
	};
	bp_world *w = test_world_from_boxes(boxes, 4, 3, BP_ALGO_AUTO, 1);
	bp_view *v = NULL;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	const float lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1}, p[3] = {0.5f, 0.5f, 0.5f}, dir[3] = {1, 0, 0};
	const float from[3] = {-5, 0.5f, 0.5f};
	bp_query_filter f = bp_query_filter_default();
	uint32_t got[4];
	bp_hit hits[4];
	size_t n = 0;
	bool found = false;
	cr_assert_eq(bp_view_overlap_box(v, lo, hi, &f, got, 4, &n), BP_OK);
	cr_assert(n == 4 && got[0] == 0 && got[1] == 1 && got[2] == 2 && got[3] == 3, "default: %zu hits", n);
	cr_assert_eq(bp_view_overlap_point(v, p, &f, got, 4, &n), BP_OK);
	cr_assert_eq(n, 4);
	cr_assert_eq(bp_view_overlap_sphere(v, p, 0.1f, &f, got, 4, &n), BP_OK);
	cr_assert_eq(n, 4);
	cr_assert_eq(bp_view_cast_ray(v, from, dir, 10, &f, hits, 4, &n), BP_OK);
	cr_assert_eq(n, 4);
	cr_assert_eq(bp_view_nearest(v, p, 4, &f, hits, &n), BP_OK);
	cr_assert_eq(n, 4);
	cr_assert_eq(bp_view_cast_box(v, lo, hi, dir, 1, &f, hits, 4, &n), BP_OK);
	cr_assert_eq(n, 4);
	// Changing kinds alone narrows just the kinds: the dynamic three, B and C included.
	f.kinds = BP_QUERY_DYNAMIC;
	cr_assert_eq(bp_view_overlap_box(v, lo, hi, &f, got, 4, &n), BP_OK);
	cr_assert(n == 3 && got[0] == 0 && got[1] == 1 && got[2] == 2);
	f.exclude = 1;
	cr_assert_eq(bp_view_cast_ray_closest(v, from, dir, 10, &f, &hits[0], &found), BP_OK);
	cr_assert(found && hits[0].index == 0);
	// Naming a layer applies the pair rule: B (category 0) and C (mask 0) are never seen.
	f = bp_query_filter_default();
	f.category = 1;
	cr_assert_eq(bp_view_overlap_box(v, lo, hi, &f, got, 4, &n), BP_OK);
	cr_assert(n == 2 && got[0] == 0 && got[1] == 3, "category 1: %zu hits", n);
	f = bp_query_filter_default();
	f.mask = UINT64_MAX - 2; // every layer but bit 1: A's and D's category 1 is in it
	cr_assert_eq(bp_view_overlap_box(v, lo, hi, &f, got, 4, &n), BP_OK);
	cr_assert(n == 2 && got[0] == 0 && got[1] == 3, "mask all but one bit: %zu hits", n);
	cr_assert_eq(bp_view_release(v), BP_OK);
	bp_world_destroy(w);
}

// ---- batches ---------------------------------------------------------------------------

/// A batch's filter: random_filter's without the callback, which the batch calls from
/// several threads at once.
static bp_query_filter batch_filter(test_rng *rng, scene *s)
{
	bp_query_filter f;
	const bp_query_filter *drawn = random_filter(rng, s, &f);
	if (!drawn)
		return bp_query_filter_default();
	f.accept = NULL;
	f.user = NULL;
	return f;
}

/// The first hit of casts[i] and the k nearest of points[i], each through one filter or
/// its own, on `threads` threads, against brute force; the answers into got_* for the
/// caller to compare across thread counts.
static void check_batches(scene *s, int threads, const bp_box_cast *casts, const float *points, size_t count,
	uint32_t k, const bp_query_filter *filters, bp_hit *got_casts, bp_hit *got_nearest, size_t *got_counts)
{
	bp_world_def def = bp_world_def_default();
	def.dims = s->dims;
	def.thread_count = threads;
	bp_world *w = test_world_from_def(s->boxes, s->n, &def);
	bp_view *v = NULL;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	bp_hit *want = malloc((s->n + 1) * sizeof *want);
	for (int each = 0; each < 2; ++each) {
		bp_hit *c = got_casts + (size_t)each * count, *nearest = got_nearest + (size_t)each * count * k;
		size_t *counts = got_counts + (size_t)each * count;
		if (each) {
			cr_assert_eq(bp_view_cast_boxes_closest_each(v, casts, count, filters, c), BP_OK);
			cr_assert_eq(bp_view_nearest_points_each(v, points, count, k, filters, nearest, counts), BP_OK);
		} else {
			cr_assert_eq(bp_view_cast_boxes_closest(v, casts, count, &filters[0], c), BP_OK);
			cr_assert_eq(bp_view_nearest_points(v, points, count, k, &filters[0], nearest, counts), BP_OK);
		}
		for (size_t i = 0; i < count; ++i) {
			const bp_query_filter *f = &filters[each ? i : 0];
			const bp_box_cast *q = &casts[i];
			const size_t hits = bf_sweep(s->boxes, s->n, s->dims, q->min, q->max, q->dir, q->max_t, f, want);
			cr_assert(hits ? c[i].index == want[0].index && c[i].distance == want[0].distance
				       : c[i].index == BP_HIT_NONE && c[i].distance == INFINITY,
				"cast %zu (filter %s, %d threads): %u at %g, brute force %u", i, each ? "each" : "one", threads,
				c[i].index, (double)c[i].distance, hits ? want[0].index : BP_HIT_NONE);
			const size_t near = bf_nearest(s->boxes, s->n, s->dims, points + 3 * i, k, f, want);
			cr_assert_eq(counts[i], near, "point %zu: %zu nearest, brute force %zu", i, counts[i], near);
			cr_assert(same_hits(nearest + i * k, want, near), "point %zu (filter %s, %d threads): other nearest", i,
				each ? "each" : "one", threads);
		}
	}
	free(want);
	bp_view_release(v);
	bp_world_destroy(w);
}

Test(query_filter, box_cast_and_nearest_batches_equal_brute_force_on_any_thread_count, .timeout = 120)
{
	enum { COUNT = 300, K = 4 };
	for (int dims = 2; dims <= 3; ++dims) {
		scene s = make_scene(dims, 3000, dims == 2, 1.0f, 70u + (uint64_t)dims);
		test_rng rng = {91u + (uint64_t)dims};
		bp_box_cast *casts = calloc(COUNT, sizeof *casts);
		float *points = calloc(3 * COUNT, sizeof *points);
		bp_query_filter *filters = calloc(COUNT, sizeof *filters);
		for (size_t i = 0; i < COUNT; ++i) {
			test_rng_vec(&rng, casts[i].min, dims, 0, s.world, s.snap);
			float extent[3] = {0, 0, 0};
			test_rng_vec(&rng, extent, dims, 0, 2, s.snap);
			for (int a = 0; a < dims; ++a)
				casts[i].max[a] = casts[i].min[a] + extent[a];
			test_rng_vec(&rng, casts[i].dir, dims, -1, 1, false);
			casts[i].max_t = test_rng_below(&rng, 2) ? INFINITY : s.world / 4;
			test_rng_vec(&rng, points + 3 * i, dims, 0, s.world, s.snap);
			filters[i] = batch_filter(&rng, &s);
		}
		bp_hit *got[2], *nearest[2];
		size_t *counts[2];
		for (int t = 0; t < 2; ++t) {
			got[t] = calloc(2 * COUNT, sizeof *got[t]);
			nearest[t] = calloc(2 * COUNT * K, sizeof *nearest[t]);
			counts[t] = calloc(2 * COUNT, sizeof *counts[t]);
			check_batches(&s, t ? 3 : 1, casts, points, COUNT, K, filters, got[t], nearest[t], counts[t]);
		}
		cr_assert(same_hits(got[0], got[1], 2 * COUNT), "casts differ between 1 and 3 threads");
		cr_assert_eq(memcmp(counts[0], counts[1], 2 * COUNT * sizeof *counts[0]), 0);
		cr_assert(same_hits(nearest[0], nearest[1], 2 * COUNT * K), "nearest differ between 1 and 3 threads");

		// Every query is checked before any is answered: one bad one, and nothing is written.
		got[0][0] = (bp_hit){777, 1};
		counts[0][0] = 777;
		casts[COUNT / 2].max[0] = casts[COUNT / 2].min[0] - 1;
		cr_assert_eq(bp_view_cast_boxes_closest(s.v, casts, COUNT, NULL, got[0]), BP_ERR_INVERTED_BOUNDS);
		points[3 * (COUNT / 2) + 1] = NAN;
		cr_assert_eq(bp_view_nearest_points(s.v, points, COUNT, K, NULL, nearest[0], counts[0]), BP_ERR_NOT_FINITE);
		cr_assert(got[0][0].index == 777 && counts[0][0] == 777, "a refused batch wrote an answer");
		cr_assert_eq(bp_view_cast_boxes_closest_each(s.v, casts, COUNT, NULL, got[0]), BP_ERR_INVALID_ARGUMENT);
		cr_assert_eq(bp_view_nearest_points_each(s.v, points, COUNT, K, NULL, nearest[0], counts[0]),
			BP_ERR_INVALID_ARGUMENT);
		cr_assert_eq(bp_view_nearest_points(s.v, points, COUNT, K, NULL, nearest[0], NULL), BP_ERR_INVALID_ARGUMENT);
		cr_assert_eq(bp_view_nearest_points(s.v, NULL, 0, K, NULL, NULL, NULL), BP_OK);
		cr_assert_eq(bp_view_cast_boxes_closest_each(s.v, NULL, 0, NULL, NULL), BP_OK);
		for (int t = 0; t < 2; ++t)
			free(got[t]), free(nearest[t]), free(counts[t]);
		free(casts), free(points), free(filters);
		free_scene(&s);
	}
}
