// SPDX-License-Identifier: MIT
// Queries on the views of consecutive frames while the world moves, grows and shrinks, against
// brute force: the hierarchy's shared part with its out-of-date entries and the changed part
// (docs/design.md "Queries": the hierarchy that costs what changed), in incremental and plain worlds.
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "query_oracle.h"
#include "view/view.h" // the view's layout: whether its hierarchy shares the last frame's shared part

typedef struct frames_run {
	oracle_box *boxes; ///< the world's entities in dense order
	bp_entity *handles; ///< and their handles
	bp_entity gone[64]; ///< handles destroyed (the latest 64)
	uint32_t gone_count;
	uint32_t n, capacity;
	int dims;
	bool snap;
	float world;
	test_rng rng;
} frames_run;

static void random_box(frames_run *r, oracle_box *b)
{
	float lo[3], ext[3];
	test_rng_vec(&r->rng, lo, r->dims, 0, r->world, r->snap);
	test_rng_vec(&r->rng, ext, r->dims, 0, 3, r->snap);
	*b = (oracle_box){.category = 1, .mask = 1};
	for (int k = 0; k < r->dims; ++k) {
		b->min[k] = lo[k];
		b->max[k] = lo[k] + ext[k];
	}
}

static void set_bounds(bp_world *w, uint32_t e, const oracle_box *b)
{
	cr_assert_eq(bp_entity_set_bounds(w, bp_world_entity_at(w, e), b->min, b->max), BP_OK);
}

/// One frame's changes: `moves` entities get new boxes (near their old ones or anywhere),
/// some are destroyed (the last moves into their index) and some created.
static void change(frames_run *r, bp_world *w, uint32_t moves, uint32_t destroys, uint32_t creates)
{
	for (uint32_t m = 0; m < moves && r->n; ++m) {
		const uint32_t e = test_rng_below(&r->rng, r->n);
		oracle_box *b = &r->boxes[e];
		if (test_rng_below(&r->rng, 4) == 0) {
			random_box(r, b);
		} else {
			const float d = r->snap ? (float)test_rng_below(&r->rng, 3) - 1.0f : test_rng_float(&r->rng, -0.5f, 0.5f);
			for (int k = 0; k < r->dims; ++k)
				b->min[k] += d, b->max[k] += d;
		}
		set_bounds(w, e, b);
	}
	for (uint32_t k = 0; k < destroys && r->n; ++k) {
		const uint32_t e = test_rng_below(&r->rng, r->n);
		cr_assert_eq(bp_entity_destroy(w, r->handles[e]), BP_OK);
		r->gone[r->gone_count++ % 64] = r->handles[e];
		r->boxes[e] = r->boxes[--r->n];
		r->handles[e] = r->handles[r->n];
	}
	for (uint32_t k = 0; k < creates && r->n < r->capacity; ++k) {
		oracle_box *b = &r->boxes[r->n];
		random_box(r, b);
		bp_entity_def d = bp_entity_def_default();
		for (int a = 0; a < r->dims; ++a)
			d.min[a] = b->min[a], d.max[a] = b->max[a];
		cr_assert_eq(bp_entity_create(w, &d, &r->handles[r->n++]), BP_OK);
	}
}

/// Every live handle leads to its dense index, every destroyed one and the null
/// handle to BP_ERR_STALE_HANDLE.
static void check_handles(const frames_run *r, const bp_view *v)
{
	uint32_t dense;
	for (uint32_t i = 0; i < r->n; ++i) {
		cr_assert_eq(bp_view_dense_index(v, r->handles[i], &dense), BP_OK, "entity %u", i);
		cr_assert_eq(dense, i);
	}
	for (uint32_t k = 0; k < r->gone_count && k < 64; ++k)
		cr_assert_eq(bp_view_dense_index(v, r->gone[k], &dense), BP_ERR_STALE_HANDLE);
	cr_assert_eq(bp_view_dense_index(v, (bp_entity){0, 0}, &dense), BP_ERR_STALE_HANDLE);
	cr_assert_eq(bp_view_dense_index(v, r->handles[0], NULL), BP_ERR_INVALID_ARGUMENT);
}

/// A ray from inside an entity, its caster left out by handle: the closest hit is
/// brute force's first hit that is not the caster.
static void check_caster_excluded(const frames_run *r, const bp_view *v)
{
	bp_hit *want = malloc((r->n + 1) * sizeof *want);
	for (int q = 0; q < 20 && r->n; ++q) {
		test_rng rng = {r->rng.state + (uint64_t)q};
		const uint32_t caster = test_rng_below(&rng, r->n);
		float o[3], d[3];
		test_rng_vec(&rng, d, r->dims, -1, 1, false);
		for (int k = 0; k < r->dims; ++k)
			o[k] = 0.5f * (r->boxes[caster].min[k] + r->boxes[caster].max[k]);
		size_t hits = oracle_query_ray(r->boxes, r->n, r->dims, o, d, INFINITY, want), first = 0;
		while (first < hits && want[first].index == caster)
			++first;
		bp_query_filter filter = bp_query_filter_default();
		filter.category = filter.mask = 1;
		filter.exclude_entity = r->handles[caster];
		bp_hit got;
		bool found;
		cr_assert_eq(bp_view_cast_ray_closest(v, o, d, INFINITY, &filter, &got, &found), BP_OK);
		cr_assert_eq(found, first < hits);
		if (found)
			cr_assert_eq(got.index, want[first].index, "caster %u", caster);
	}
	free(want);
}

/// A batch of rays from random points, some from inside entities: each answer is
/// brute force's closest hit.
static void check_ray_batch(const oracle_box *boxes, uint32_t n, int dims, float world, const bp_view *v,
	uint64_t seed)
{
	enum { RAYS = 700 };
	bp_ray *rays = malloc(RAYS * sizeof *rays);
	bp_hit *got = malloc(RAYS * sizeof *got), *want = malloc((n + 1) * sizeof *want);
	test_rng rng = {seed};
	for (int i = 0; i < RAYS; ++i) {
		rays[i] = (bp_ray){.max_t = test_rng_below(&rng, 2) ? INFINITY : test_rng_float(&rng, 0, world / 4)};
		test_rng_vec(&rng, rays[i].origin, dims, -1, world + 1, false);
		test_rng_vec(&rng, rays[i].dir, dims, -1, 1, false);
	}
	cr_assert_eq(bp_view_cast_rays_closest(v, rays, RAYS, NULL, got), BP_OK);
	for (int i = 0; i < RAYS; ++i) {
		const size_t hits = oracle_query_ray(boxes, n, dims, rays[i].origin, rays[i].dir, rays[i].max_t, want);
		cr_assert_eq(got[i].index, hits ? want[0].index : BP_HIT_NONE, "ray %d", i);
		if (hits)
			cr_assert_eq(got[i].distance, want[0].distance, "ray %d", i);
	}
	// Checked in full before any is answered: one bad ray, nothing written.
	rays[RAYS / 2].max_t = NAN;
	got[0].index = 12345;
	cr_assert_eq(bp_view_cast_rays_closest(v, rays, RAYS, NULL, got), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(got[0].index, 12345u);
	rays[RAYS / 2].max_t = 1.0f, rays[RAYS / 3].dir[0] = INFINITY;
	cr_assert_eq(bp_view_cast_rays_closest(v, rays, RAYS, NULL, got), BP_ERR_NOT_FINITE);
	cr_assert_eq(bp_view_cast_rays_closest(v, NULL, 0, NULL, NULL), BP_OK);
	free(rays);
	free(got);
	free(want);
}

/// How run_frames makes its views: frames, world views after world steps, or the two in turn.
typedef enum view_source { BY_FRAMES, BY_WORLD_VIEWS, BY_TURNS } view_source;

/// A world view: no pairs, no events, no frame before it; a frame: the pairs brute force
/// finds, its events counted from the last frame, never from a world view between them.
static void check_view_pairs(const frames_run *r, const bp_view *v, bool world_view, uint64_t last_frame)
{
	size_t count, began, ended;
	const bp_pair *pairs = bp_view_pairs(v, &count);
	cr_assert_eq(bp_view_events(v, NULL, 0, &began, NULL, 0, &ended), BP_OK);
	if (world_view) {
		cr_assert_eq(count, 0u);
		cr_assert_eq(began + ended, 0u);
		cr_assert_eq(bp_view_previous_frame(v), 0u);
		return;
	}
	oracle_pairs want = oracle_find_pairs(r->boxes, r->n, r->dims);
	cr_assert(oracle_same_pair_set(pairs, count, &want));
	oracle_pairs_free(&want);
	cr_assert_eq(bp_view_previous_frame(v), last_frame);
}

static void run_frames(int dims, bool incremental, bool snap, uint64_t seed, view_source source)
{
	frames_run r = {.n = 1500, .capacity = 2500, .dims = dims, .snap = snap, .rng = {seed}};
	r.world = dims == 2 ? sqrtf((float)r.n) * 2.5f : cbrtf((float)r.n) * 2.5f;
	r.boxes = malloc(r.capacity * sizeof *r.boxes);
	r.handles = malloc(r.capacity * sizeof *r.handles);
	for (uint32_t i = 0; i < r.n; ++i)
		random_box(&r, &r.boxes[i]);
	bp_world_def def = bp_world_def_default();
	def.dims = dims;
	def.incremental = incremental;
	def.thread_count = 2;
	bp_world *w = test_world_from_def(r.boxes, r.n, &def);
	for (uint32_t i = 0; i < r.n; ++i)
		r.handles[i] = bp_world_entity_at(w, i);
	bp_view *prev = NULL;
	uint64_t last_frame = 0, last_number = 0;
	int shared = 0, rebuilt = 0;
	// Per frame: entities moved, destroyed, created. Few changes keep the shared part; the
	// frames past an eighth of the world rebuild it; shrinking and growing leave gone
	// and new dense indices.
	static const uint32_t plan[][3] = {{0, 0, 0}, {3, 0, 0}, {20, 0, 0}, {0, 5, 0}, {10, 0, 7}, {0, 0, 0},
		{400, 0, 0}, {5, 40, 0}, {5, 0, 60}, {1, 1, 1}, {60, 10, 10}, {0, 300, 0}, {0, 0, 300}, {2, 0, 0}};
	for (size_t f = 0; f < sizeof plan / sizeof plan[0]; ++f) {
		change(&r, w, plan[f][0], plan[f][1], plan[f][2]);
		bp_view *v = NULL;
		const bool world_view = source == BY_WORLD_VIEWS || (source == BY_TURNS && f % 2);
		if (world_view) {
			cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
			cr_assert_eq(bp_world_view(w, &v), BP_OK, "%s", bp_world_last_error(w));
		} else {
			cr_assert_eq(bp_frame_step(w, &v), BP_OK, "%s", bp_world_last_error(w));
		}
		cr_assert_gt(bp_view_frame(v), last_number, "view numbers rise");
		cr_assert_eq(bp_view_entity_count(v), r.n);
		check_view_pairs(&r, v, world_view, last_frame);
		oracle_check_view_queries(v, r.boxes, r.n, dims, snap, seed + f);
		check_handles(&r, v);
		check_caster_excluded(&r, v);
		check_ray_batch(r.boxes, r.n, dims, r.world, v, seed * 100 + f);
		if (f > 0 && v->hierarchy.shared && prev->hierarchy.shared) {
			shared += v->hierarchy.shared == prev->hierarchy.shared;
			rebuilt += v->hierarchy.shared != prev->hierarchy.shared;
		}
		last_number = bp_view_frame(v);
		last_frame = world_view ? last_frame : last_number;
		bp_view_release(prev);
		prev = v;
	}
	bp_view_release(prev);
	bp_world_destroy(w);
	free(r.boxes);
	free(r.handles);
	cr_assert_geq(shared, 6, "the shared part was kept on %d frames", shared);
	cr_assert_geq(rebuilt, 2, "the shared part was rebuilt on %d frames", rebuilt);
}

// A world view is the caller's alone: never what bp_frame_acquire returns, built by the time
// bp_frame_wait is asked for its number, refused a second release and refused by
// bp_view_events_since (it has no pairs to count from); a NULL world or out is refused.
Test(query_frames, world_view_contract, .timeout = 60)
{
	enum { N = 600 };
	oracle_box *boxes = malloc(N * sizeof *boxes);
	test_random_boxes(boxes, N, 3, 20.0f, 2.0f, false, 39);
	bp_world_def def = bp_world_def_default();
	def.thread_count = 2;
	bp_world *w = test_world_from_def(boxes, N, &def);
	bp_view *v = (bp_view *)boxes, *frame = NULL, *next = NULL, *none = NULL;
	cr_assert_eq(bp_world_view(NULL, &v), BP_ERR_INVALID_ARGUMENT);
	cr_assert_null(v);
	cr_assert_eq(bp_world_view(w, NULL), BP_ERR_INVALID_ARGUMENT);

	cr_assert_eq(bp_world_view(w, &v), BP_OK);
	cr_assert_eq(bp_frame_acquire(w, &none), BP_ERR_NO_FRAME);
	cr_assert_eq(bp_frame_wait(w, bp_view_frame(v)), BP_OK);
	cr_assert_eq(bp_frame_wait(w, bp_view_frame(v) + 1), BP_ERR_NOT_SUBMITTED);
	cr_assert_eq(bp_view_release(v), BP_OK);
	cr_assert_eq(bp_view_release(v), BP_ERR_STALE_HANDLE);

	// The view the pool keeps is still whole: the next world view starts from it.
	cr_assert_eq(bp_world_view(w, &v), BP_OK);
	oracle_check_view_queries(v, boxes, N, 3, false, 40);
	cr_assert_eq(bp_frame_step(w, &frame), BP_OK);
	cr_assert_eq(bp_frame_step(w, &next), BP_OK);
	size_t began, ended;
	cr_assert_eq(bp_view_events_since(next, frame, NULL, 0, &began, NULL, 0, &ended), BP_OK);
	cr_assert_eq(bp_view_events_since(next, v, NULL, 0, &began, NULL, 0, &ended), BP_ERR_INVALID_ARGUMENT);
	bp_view *later = NULL;
	cr_assert_eq(bp_world_view(w, &later), BP_OK);
	cr_assert_eq(bp_view_events_since(later, frame, NULL, 0, &began, NULL, 0, &ended), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_frame_acquire(w, &none), BP_OK);
	cr_assert_eq(bp_view_frame(none), bp_view_frame(next), "a world view is never the latest frame");
	cr_assert_eq(bp_view_release(none), BP_OK);
	cr_assert_eq(bp_view_release(later), BP_OK);
	cr_assert_eq(bp_view_release(v), BP_OK);
	cr_assert_eq(bp_view_release(frame), BP_OK);
	cr_assert_eq(bp_view_release(next), BP_OK);
	bp_world_destroy(w);
	free(boxes);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

/// Entity i's settings as the test made them: what a view of that frame must give.
static void expect_entity(const bp_view *v, uint32_t i, const oracle_box *b, uint64_t key, int dims)
{
	bp_entity_def got;
	cr_assert_eq(bp_view_entity_get(v, i, &got), BP_OK);
	for (int k = 0; k < dims; ++k)
		cr_assert(got.min[k] == b->min[k] && got.max[k] == b->max[k], "entity %u axis %d", i, k);
	cr_assert_eq(got.category, b->category, "entity %u", i);
	cr_assert_eq(got.mask, b->mask, "entity %u", i);
	cr_assert_eq(got.kind, b->is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC, "entity %u", i);
	cr_assert_eq(got.shape, b->is_sphere ? BP_SHAPE_SPHERE : BP_SHAPE_BOX, "entity %u", i);
	cr_assert_eq(got.user_key, key, "entity %u", i);
}

// A view gives each entity's settings as they were at its submit, while the world has
// moved on; the next frame gives the new ones.
Test(query_frames, entity_settings_as_at_submit, .timeout = 60)
{
	const uint32_t n = 3000;
	oracle_box *before = calloc(n, sizeof *before), *after = calloc(n, sizeof *after);
	cr_assert(before && after);
	test_random_spheres(before, n, 3, 40.0f, 2.0f, 30, 5);
	test_random_boxes(after, n, 3, 40.0f, 2.0f, true, 6);
	for (uint32_t i = 0; i < n; ++i) {
		before[i].category = test_layer(i % 3);
		before[i].mask = i % 5 ? UINT64_MAX : test_layers(i % 8);
		before[i].is_static = i % 4 == 0;
		after[i].is_sphere = i % 7 == 0;
	}
	bp_world_def def = bp_world_def_default();
	def.thread_count = 2;
	bp_world *w = test_world_from_def(before, n, &def); // user key i
	bp_view *old = NULL, *next = NULL;
	cr_assert_eq(bp_frame_step(w, &old), BP_OK);
	for (uint32_t i = 0; i < n; ++i) {
		const bp_entity e = bp_world_entity_at(w, i);
		cr_assert_eq(bp_entity_set_bounds(w, e, after[i].min, after[i].max), BP_OK);
		cr_assert_eq(bp_entity_set_filter(w, e, after[i].category, after[i].mask), BP_OK);
		cr_assert_eq(bp_entity_set_kind(w, e, after[i].is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC), BP_OK);
		cr_assert_eq(bp_entity_set_shape(w, e, after[i].is_sphere ? BP_SHAPE_SPHERE : BP_SHAPE_BOX), BP_OK);
		cr_assert_eq(bp_entity_set_user_key(w, e, 10u * i), BP_OK);
	}
	cr_assert_eq(bp_frame_step(w, &next), BP_OK);
	for (uint32_t i = 0; i < n; ++i) {
		expect_entity(old, i, &before[i], i, 3);
		expect_entity(next, i, &after[i], 10u * i, 3);
	}
	bp_entity_def def_out;
	cr_assert_eq(bp_view_entity_get(old, n, &def_out), BP_ERR_OUT_OF_RANGE);
	cr_assert_eq(bp_view_entity_get(old, 0, NULL), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_entity_get(NULL, 0, &def_out), BP_ERR_INVALID_ARGUMENT);
	bp_view_release(old);
	bp_view_release(next);
	bp_world_destroy(w);
	free(before);
	free(after);
}

// Sight lines from agents' centres, each leaving out its own agent by its own filter: the
// first hit brute force finds past the agent, on 1 and 3 threads alike.
Test(query_frames, ray_batch_with_a_filter_each, .timeout = 60)
{
	enum { N = 2000, RAYS = 1000 };
	oracle_box *boxes = calloc(N, sizeof *boxes);
	bp_ray *rays = calloc(RAYS, sizeof *rays);
	bp_query_filter *filters = calloc(RAYS, sizeof *filters);
	bp_hit *got = calloc(RAYS, sizeof *got), *again = calloc(RAYS, sizeof *again),
	       *want = calloc(N + 1, sizeof *want);
	cr_assert(boxes && rays && filters && got && again && want);
	test_random_boxes(boxes, N, 3, 30.0f, 2.0f, false, 41);
	test_rng rng = {42};
	for (int i = 0; i < RAYS; ++i) {
		const uint32_t agent = test_rng_below(&rng, N);
		for (int k = 0; k < 3; ++k)
			rays[i].origin[k] = 0.5f * (boxes[agent].min[k] + boxes[agent].max[k]);
		test_rng_vec(&rng, rays[i].dir, 3, -1, 1, false);
		rays[i].max_t = test_rng_below(&rng, 2) ? INFINITY : 8.0f;
		filters[i] = bp_query_filter_default();
		filters[i].exclude = agent;
	}
	for (int threads = 1; threads <= 3; threads += 2) {
		bp_world_def def = bp_world_def_default();
		def.thread_count = threads;
		bp_world *w = test_world_from_def(boxes, N, &def);
		bp_view *v = NULL;
		cr_assert_eq(bp_frame_step(w, &v), BP_OK);
		cr_assert_eq(bp_view_cast_rays_closest_each(v, rays, RAYS, filters, threads == 1 ? got : again), BP_OK);
		bp_view_release(v);
		bp_world_destroy(w);
	}
	for (int i = 0; i < RAYS; ++i) {
		const size_t hits = oracle_query_ray(boxes, N, 3, rays[i].origin, rays[i].dir, rays[i].max_t, want);
		size_t first = 0;
		while (first < hits && want[first].index == filters[i].exclude)
			++first;
		cr_assert_eq(got[i].index, first < hits ? want[first].index : BP_HIT_NONE, "ray %d", i);
		if (first < hits)
			cr_assert_eq(got[i].distance, want[first].distance, "ray %d", i);
		cr_assert(got[i].index == again[i].index && got[i].distance == again[i].distance, "ray %d on 3 threads", i);
	}
	bp_world *w = test_world_from_boxes(boxes, N, 3, BP_ALGO_AUTO, 2);
	bp_view *v = NULL;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	filters[RAYS / 2].kinds = 1u << 7; // no such kind: the batch is refused and writes nothing
	got[0].index = 777;
	cr_assert_eq(bp_view_cast_rays_closest_each(v, rays, RAYS, filters, got), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(got[0].index, 777u);
	cr_assert_eq(bp_view_cast_rays_closest_each(v, rays, RAYS, NULL, got), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_cast_rays_closest_each(v, NULL, 0, NULL, NULL), BP_OK);
	bp_view_release(v);
	bp_world_destroy(w);
	free(boxes), free(rays), free(filters), free(got), free(again), free(want);
}

Test(query_frames, incremental_3d, .timeout = 120) { run_frames(3, true, false, 31, BY_FRAMES); }
Test(query_frames, incremental_2d_integer, .timeout = 120) { run_frames(2, true, true, 32, BY_FRAMES); }
Test(query_frames, plain_3d_integer, .timeout = 120) { run_frames(3, false, true, 33, BY_FRAMES); }
Test(query_frames, plain_2d, .timeout = 120) { run_frames(2, false, false, 34, BY_FRAMES); }
// World views (bp_world_view) after world steps, and in turn with frames: the same answers,
// and the hierarchy keeps its shared part from one view to the next, whichever kind.
Test(query_frames, world_views_incremental_3d, .timeout = 120) { run_frames(3, true, false, 35, BY_WORLD_VIEWS); }
Test(query_frames, world_views_plain_2d_integer, .timeout = 120) { run_frames(2, false, true, 36, BY_WORLD_VIEWS); }
Test(query_frames, world_views_and_frames_3d, .timeout = 120) { run_frames(3, true, true, 37, BY_TURNS); }
Test(query_frames, world_views_and_frames_plain_2d, .timeout = 120) { run_frames(2, false, false, 38, BY_TURNS); }

/// A batch answers the same on any number of threads and on each executor.
Test(query_frames, batch_on_any_thread_count, .timeout = 120)
{
	enum { N = 3000 };
	oracle_box *boxes = malloc(N * sizeof *boxes);
	const float world = cbrtf((float)N) * 2.5f;
	test_random_boxes(boxes, N, 3, world, 3.0f, false, 41);
	const int threads[] = {1, 2, 3, 8};
	const bp_executor executors[] = {BP_EXECUTOR_WORKERS, BP_EXECUTOR_OPENMP};
	for (int e = 0; e < 2; ++e)
		for (int t = 0; t < 4; ++t) {
			bp_world_def def = bp_world_def_default();
			def.dims = 3, def.thread_count = threads[t], def.executor = executors[e];
			bp_world *w = test_world_from_def(boxes, N, &def);
			bp_view *v = NULL;
			cr_assert_eq(bp_frame_step(w, &v), BP_OK);
			check_ray_batch(boxes, N, 3, world, v, 42);
			bp_view_release(v);
			bp_world_destroy(w);
		}
	free(boxes);
}

/// Brute force of a query that tests spheres as balls: the bounds test, then for a
/// sphere the largest ball in its bounds against the query box or ball, in double.
static bool ball_oracle(const oracle_box *b, int dims, const float *lo, const float *hi, const float *c, float r)
{
	double centre[3], radius = INFINITY, d2 = 0.0;
	for (int k = 0; k < dims; ++k) {
		centre[k] = 0.5 * ((double)b->min[k] + b->max[k]);
		radius = fmin(radius, 0.5 * ((double)b->max[k] - b->min[k]));
	}
	for (int k = 0; k < dims; ++k) {
		double gap;
		if (c)
			gap = (double)c[k] - centre[k];
		else
			gap = centre[k] < lo[k] ? lo[k] - centre[k] : centre[k] > hi[k] ? centre[k] - hi[k] : 0.0;
		d2 += gap * gap;
	}
	const double reach = c ? (double)r + radius : radius;
	return d2 <= reach * reach;
}

static bool collect_visit(uint32_t e, void *user)
{
	uint32_t *seen = user;
	seen[e]++;
	return true;
}

/// Box, point and sphere queries and their visitors with spheres_as_balls, on a
/// world of spheres and boxes, before and after some move: brute force's answers.
Test(query_frames, spheres_as_balls, .timeout = 120)
{
	for (int dims = 2; dims <= 3; ++dims) {
		enum { N = 1500 };
		oracle_box *boxes = malloc(N * sizeof *boxes);
		const float world = dims == 2 ? sqrtf((float)N) * 2.5f : cbrtf((float)N) * 2.5f;
		test_random_spheres(boxes, N, dims, world, 2.0f, 60, 50 + (uint64_t)dims);
		bp_world_def def = bp_world_def_default();
		def.dims = dims;
		bp_world *w = test_world_from_def(boxes, N, &def);
		uint32_t *want = malloc(N * sizeof *want), *got = malloc(N * sizeof *got), *seen = calloc(N, sizeof *seen);
		bp_query_filter balls = bp_query_filter_default();
		balls.spheres_as_balls = true;
		test_rng rng = {70 + (uint64_t)dims};
		int fewer = 0; // queries where the balls answer less than the bounds
		for (int frame = 0; frame < 2; ++frame) {
			bp_view *v = NULL;
			cr_assert_eq(bp_frame_step(w, &v), BP_OK);
			for (int q = 0; q < 120; ++q) {
				float lo[3], hi[3], ext[3], c[3];
				test_rng_vec(&rng, lo, dims, -2, world + 2, q % 2 == 0);
				test_rng_vec(&rng, ext, dims, 0, q % 3 == 0 ? 0 : 4, q % 2 == 0);
				for (int k = 0; k < dims; ++k)
					hi[k] = lo[k] + ext[k], c[k] = lo[k];
				const bool sphere = q % 4 == 3;
				const float r = sphere ? test_rng_float(&rng, 0, 3) : 0.0f;
				size_t want_n = 0, bounds_n = 0, got_n = 0;
				for (uint32_t i = 0; i < N; ++i) {
					bool in = true;
					for (int k = 0; k < dims && in; ++k)
						in = sphere ? true : boxes[i].min[k] <= hi[k] && lo[k] <= boxes[i].max[k];
					if (sphere)
						in = oracle_distance2(&boxes[i], dims, c) <= r * r;
					bounds_n += in;
					if (in && (!boxes[i].is_sphere || ball_oracle(&boxes[i], dims, lo, hi, sphere ? c : NULL, r)))
						want[want_n++] = i;
				}
				fewer += want_n < bounds_n;
				const bp_status s = sphere ? bp_view_overlap_sphere(v, c, r, &balls, got, N, &got_n)
				                           : bp_view_overlap_box(v, lo, hi, &balls, got, N, &got_n);
				cr_assert_eq(s, BP_OK);
				cr_assert_eq(got_n, want_n, "dims %d query %d: %zu hits, brute force %zu", dims, q, got_n, want_n);
				cr_assert(oracle_same_bytes(got, want, want_n * sizeof *got));
				memset(seen, 0, N * sizeof *seen);
				cr_assert_eq(sphere ? bp_view_visit_overlap_sphere(v, c, r, &balls, collect_visit, seen)
				                    : bp_view_visit_overlap_box(v, lo, hi, &balls, collect_visit, seen),
					BP_OK);
				for (size_t k = 0, at = 0; k < N; ++k) {
					const bool wanted = at < want_n && want[at] == k;
					cr_assert_eq(seen[k], wanted ? 1u : 0u, "visited entity %zu %u times", k, seen[k]);
					at += wanted;
				}
			}
			bp_view_release(v);
			for (uint32_t i = 0; i < N; i += 7) { // some spheres and boxes move
				for (int k = 0; k < dims; ++k)
					boxes[i].min[k] += 0.5f, boxes[i].max[k] += 0.5f;
				cr_assert_eq(bp_entity_set_bounds(w, bp_world_entity_at(w, i), boxes[i].min, boxes[i].max), BP_OK);
			}
		}
		cr_assert_gt(fewer, 10, "the balls changed the answer of %d queries only", fewer);
		bp_world_destroy(w);
		free(boxes), free(want), free(got), free(seen);
	}
}
