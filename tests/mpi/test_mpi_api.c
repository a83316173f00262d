// SPDX-License-Identifier: MIT
// broadphase::mpi through its API on however many ranks mpirun gives it: the union of the
// ranks' pairs equals the brute oracle (tests/common/oracle.c) with filters, statics,
// spheres, periodic worlds, host-owned domains and moving frames; a bad input on one rank
// and settings that differ between ranks fail on every rank. Not a Criterion suite:
// Criterion forks each test, which MPI ranks must not do. Exit 0 iff every check held on
// every rank.
#define _POSIX_C_SOURCE 200809L // posix_memalign for the failing allocator
#include <broadphase/mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

static int rank, ranks, failures;

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			failures++; \
		} \
	} while (0)

/// Global id of box i: not the index, so a rank-local index mistaken for an id shows.
static uint64_t id_of(uint32_t i)
{
	return (uint64_t)i * 7 + 11;
}

/// Entities [first, first + count) of the boxes as bp_mpi_entities, in arrays owned here.
typedef struct slice {
	uint64_t *ids;
	float *bounds; ///< six arrays of count
	uint64_t *filters; ///< category then mask
	uint8_t *kinds;    ///< kind then shape
	bp_mpi_entities entities;
} slice;

static slice slice_make(const oracle_box *boxes, const uint32_t *which, uint32_t count)
{
	size_t room = count ? count : 1;
	slice s = {malloc(room * sizeof(uint64_t)), malloc(room * 6 * sizeof(float)), malloc(room * 2 * sizeof(uint64_t)),
		malloc(room * 2), {0}};
	for (uint32_t i = 0; i < count; ++i) {
		const oracle_box *b = &boxes[which[i]];
		s.ids[i] = id_of(which[i]);
		for (int k = 0; k < 3; ++k) {
			s.bounds[k * room + i] = b->min[k];
			s.bounds[(3 + k) * room + i] = b->max[k];
		}
		s.filters[i] = b->category;
		s.filters[room + i] = b->mask;
		s.kinds[i] = b->is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
		s.kinds[room + i] = b->is_sphere ? BP_SHAPE_SPHERE : BP_SHAPE_BOX;
	}
	float *f = s.bounds;
	s.entities = (bp_mpi_entities){.count = count, .ids = s.ids,
		.bounds = {f, f + room, f + 2 * room, f + 3 * room, f + 4 * room, f + 5 * room}, .category = s.filters,
		.mask = s.filters + room, .kind = s.kinds, .shape = s.kinds + room};
	return s;
}

static void slice_free(slice *s)
{
	free(s->ids);
	free(s->bounds);
	free(s->filters);
	free(s->kinds);
}

/// This rank's contiguous share of n boxes (all of them on rank 0 when `all_on_root`).
static slice slice_of_rank(const oracle_box *boxes, uint32_t n, bool all_on_root)
{
	uint32_t first = all_on_root ? 0 : (uint32_t)((uint64_t)n * rank / ranks);
	uint32_t last = all_on_root ? (rank == 0 ? n : 0) : (uint32_t)((uint64_t)n * (rank + 1) / ranks);
	uint32_t *which = malloc((n ? n : 1) * sizeof *which);
	for (uint32_t i = first; i < last; ++i)
		which[i - first] = i;
	slice s = slice_make(boxes, which, last - first);
	free(which);
	return s;
}

/// Gathers the pairs on rank 0 and compares them with the oracle's, mapped to ids.
static void expect_pairs(bp_mpi *mpi, const oracle_pairs *want, const char *what)
{
	bp_mpi_pair *got = NULL;
	size_t count = 0;
	bp_status status = bp_mpi_gather_pairs(mpi, 0, &got, &count);
	CHECK(status == BP_OK, "%s: gather: %s", what, bp_mpi_last_error(mpi));
	if (rank == 0 && status == BP_OK) {
		CHECK(want->count > 0, "%s: the oracle finds no pairs, so the comparison proves little", what);
		CHECK(count == want->count, "%s: %zu pairs, oracle %zu", what, count, want->count);
		for (size_t i = 0; i < count && i < want->count; ++i)
			if (got[i].lo != id_of(want->data[i].lo) || got[i].hi != id_of(want->data[i].hi)) {
				CHECK(false, "%s: pair %zu is (%llu, %llu), oracle (%llu, %llu)", what, i,
					(unsigned long long)got[i].lo, (unsigned long long)got[i].hi,
					(unsigned long long)id_of(want->data[i].lo), (unsigned long long)id_of(want->data[i].hi));
				break;
			}
	}
	bp_mpi_pairs_free(got, count);
}

static bp_mpi *create(int dims, bool periodic, float period)
{
	bp_mpi_def def = bp_mpi_def_default();
	def.world.dims = dims;
	def.world.thread_count = 1;
	def.world.periodic = periodic;
	for (int k = 0; k < 3; ++k)
		def.world.period[k] = period;
	bp_mpi *mpi = NULL;
	bp_status status = bp_mpi_create(&def, &mpi);
	CHECK(status == BP_OK, "create: %s", bp_status_string(status));
	return mpi;
}

/// Filters, statics and spheres, boxes from one slice per rank or all from rank 0.
static void test_filters_statics_spheres(int dims, bool all_on_root)
{
	enum { N = 2500 };
	oracle_box *boxes = malloc(N * sizeof *boxes);
	test_random_boxes(boxes, N, dims, 100.0f, dims == 2 ? 2.5f : 6.0f, true, 42 + (uint64_t)dims);
	for (uint32_t i = 0; i < N; i += 3)
		boxes[i].is_sphere = true;
	oracle_pairs want = oracle_find_pairs(boxes, N, dims);
	bp_mpi *mpi = create(dims, false, 0.0f);
	slice s = slice_of_rank(boxes, N, all_on_root);
	bp_status status = bp_mpi_step(mpi, &s.entities);
	CHECK(status == BP_OK, "step: %s", bp_mpi_last_error(mpi));
	char what[64];
	snprintf(what, sizeof what, "filters %dD%s", dims, all_on_root ? " from rank 0" : "");
	expect_pairs(mpi, &want, what);
	bp_mpi_stats stats = bp_mpi_last_stats(mpi);
	uint64_t owned = stats.owned, total = 0;
	MPI_Allreduce(&owned, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	CHECK(total == N, "%s: %llu entities owned over the ranks, expected %d", what, (unsigned long long)total, N);
	CHECK(stats.owned <= (uint32_t)(N / ranks + 1), "%s: rank owns %u of %d: bisection is not balanced", what, stats.owned, N);
	slice_free(&s);
	bp_mpi_destroy(mpi);
	oracle_pairs_free(&want);
	free(boxes);
}

/// A periodic world: boxes anywhere (minima in [-P, 2P)), on a 1/64 grid so that the
/// library's float reduction is exact (world.h), extents up to P / 4.
enum { PERIODIC_N = 2000 };
static const float periodic_period = 64.0f;

static oracle_box *periodic_boxes(int dims)
{
	oracle_box *boxes = malloc(PERIODIC_N * sizeof *boxes);
	test_rng rng = {99 + (uint64_t)dims};
	for (uint32_t i = 0; i < PERIODIC_N; ++i) {
		boxes[i] = (oracle_box){.category = 1, .mask = UINT64_MAX, .is_static = test_rng_below(&rng, 5) == 0};
		for (int k = 0; k < dims; ++k) {
			boxes[i].min[k] = (float)((int)test_rng_below(&rng, 3 * 64 * 64) - 64 * 64) / 64.0f;
			boxes[i].max[k] = boxes[i].min[k] + (float)test_rng_below(&rng, dims == 2 ? 64 : 5 * 64) / 64.0f;
		}
	}
	return boxes;
}

static void test_periodic(int dims)
{
	enum { N = PERIODIC_N };
	const float period = periodic_period;
	oracle_box *boxes = periodic_boxes(dims);
	float periods[3] = {period, period, period};
	oracle_pairs want = oracle_find_periodic_pairs(boxes, N, dims, periods);
	bp_mpi *mpi = create(dims, true, period);
	slice s = slice_of_rank(boxes, N, false);
	bp_status status = bp_mpi_step(mpi, &s.entities);
	CHECK(status == BP_OK, "periodic step: %s", bp_mpi_last_error(mpi));
	char what[64];
	snprintf(what, sizeof what, "periodic %dD", dims);
	expect_pairs(mpi, &want, what);
	slice_free(&s);
	bp_mpi_destroy(mpi);
	oracle_pairs_free(&want);
	free(boxes);
}

/// Box i at frame f: everything drifts towards the origin and shrinks into a corner, so
/// entities cross domains every frame and the bisection grows unbalanced.
static void frame_box(oracle_box *b, uint32_t i, int dims, int frame)
{
	test_rng rng = {1000 + i};
	*b = (oracle_box){.category = 1, .mask = UINT64_MAX};
	float squeeze = 1.0f / (1.0f + 0.6f * (float)frame);
	for (int k = 0; k < dims; ++k) {
		float lo = test_rng_float(&rng, 0.0f, 100.0f) * squeeze + 3.0f * (float)frame;
		b->min[k] = lo;
		b->max[k] = lo + test_rng_float(&rng, 0.0f, 3.0f);
	}
}

/// Frames: each rank passes back what it owns with the new bounds; every frame equals the oracle.
static void test_frames(int dims)
{
	enum { N = 2000, FRAMES = 6 };
	oracle_box *boxes = malloc(N * sizeof *boxes);
	bp_mpi *mpi = create(dims, false, 0.0f);
	uint32_t *which = malloc(N * sizeof *which);
	uint64_t migrated = 0, rebalanced = 0;
	for (int frame = 0; frame < FRAMES; ++frame) {
		for (uint32_t i = 0; i < N; ++i)
			frame_box(&boxes[i], i, dims, frame);
		slice s;
		if (frame == 0)
			s = slice_of_rank(boxes, N, false);
		else {
			bp_mpi_entities owned = bp_mpi_owned(mpi);
			for (uint32_t i = 0; i < owned.count; ++i)
				which[i] = (uint32_t)((owned.ids[i] - 11) / 7);
			s = slice_make(boxes, which, owned.count);
		}
		bp_status status = bp_mpi_step(mpi, &s.entities);
		CHECK(status == BP_OK, "frame %d: %s", frame, bp_mpi_last_error(mpi));
		bp_mpi_stats stats = bp_mpi_last_stats(mpi);
		if (frame > 0) {
			migrated += stats.migrated_in;
			rebalanced += stats.rebalanced;
		}
		oracle_pairs want = oracle_find_pairs(boxes, N, dims);
		char what[64];
		snprintf(what, sizeof what, "frames %dD frame %d", dims, frame);
		expect_pairs(mpi, &want, what);
		oracle_pairs_free(&want);
		slice_free(&s);
	}
	uint64_t sums[2] = {migrated, rebalanced}, all[2];
	MPI_Allreduce(sums, all, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (ranks > 1) {
		CHECK(all[0] > 0, "frames %dD: nothing migrated", dims);
		CHECK(all[1] > 0, "frames %dD: never rebalanced", dims);
	}
	free(which);
	bp_mpi_destroy(mpi);
	free(boxes);
}

/// Host-owned domains: slabs along x, outer ones open; each rank passes the boxes whose
/// minimum x lies in its slab. Then overlapping slabs are refused on every rank.
static void test_host_domains(int dims)
{
	enum { N = 2500 };
	oracle_box *boxes = malloc(N * sizeof *boxes);
	test_random_boxes(boxes, N, dims, 100.0f, dims == 2 ? 2.5f : 6.0f, true, 7 + (uint64_t)dims);
	oracle_pairs want = oracle_find_pairs(boxes, N, dims);
	float lo[3] = {-INFINITY, -INFINITY, -INFINITY}, hi[3] = {INFINITY, INFINITY, INFINITY};
	if (rank > 0)
		lo[0] = 100.0f * (float)rank / (float)ranks;
	if (rank < ranks - 1)
		hi[0] = 100.0f * (float)(rank + 1) / (float)ranks;
	uint32_t *which = malloc(N * sizeof *which), count = 0;
	for (uint32_t i = 0; i < N; ++i)
		if (boxes[i].min[0] >= lo[0] && boxes[i].min[0] < hi[0])
			which[count++] = i;
	slice s = slice_make(boxes, which, count);
	bp_mpi *mpi = create(dims, false, 0.0f);
	bp_status status = bp_mpi_step_domain(mpi, &s.entities, lo, hi);
	CHECK(status == BP_OK, "host domains: %s", bp_mpi_last_error(mpi));
	char what[64];
	snprintf(what, sizeof what, "host domains %dD", dims);
	expect_pairs(mpi, &want, what);
	if (ranks > 1) {
		hi[0] = INFINITY; // every slab now reaches the right end: they overlap
		status = bp_mpi_step_domain(mpi, &s.entities, lo, hi);
		CHECK(status == BP_ERR_INVALID_ARGUMENT, "overlapping domains: %s", bp_status_string(status));
		CHECK(strstr(bp_mpi_last_error(mpi), "overlap"), "overlapping domains: '%s'", bp_mpi_last_error(mpi));
	}
	slice_free(&s);
	free(which);
	bp_mpi_destroy(mpi);
	oracle_pairs_free(&want);
	free(boxes);
}

/// Host-owned domains in a periodic world: slabs of [0, period) along y, each rank passing
/// the boxes that start in its slab once reduced; ghosts must cross the seam.
static void test_host_domains_periodic(int dims)
{
	enum { N = PERIODIC_N };
	const float period = periodic_period;
	oracle_box *boxes = periodic_boxes(dims);
	float periods[3] = {period, period, period};
	oracle_pairs want = oracle_find_periodic_pairs(boxes, N, dims, periods);
	float lo[3] = {0.0f, period * (float)rank / (float)ranks, 0.0f};
	float hi[3] = {period, period * (float)(rank + 1) / (float)ranks, period};
	uint32_t *which = malloc(N * sizeof *which), count = 0;
	for (uint32_t i = 0; i < N; ++i) {
		float y = boxes[i].min[1] - floorf(boxes[i].min[1] / period) * period;
		if (y >= lo[1] && y < hi[1])
			which[count++] = i;
	}
	slice s = slice_make(boxes, which, count);
	bp_mpi *mpi = create(dims, true, period);
	bp_status status = bp_mpi_step_domain(mpi, &s.entities, lo, hi);
	CHECK(status == BP_OK, "periodic host domains: %s", bp_mpi_last_error(mpi));
	char what[64];
	snprintf(what, sizeof what, "periodic host domains %dD", dims);
	expect_pairs(mpi, &want, what);
	slice_free(&s);
	free(which);
	bp_mpi_destroy(mpi);
	oracle_pairs_free(&want);
	free(boxes);
}

/// A NaN on the last rank only: every rank returns the same error naming that rank, and
/// the next good step works.
static void test_error_on_one_rank(void)
{
	enum { N = 400 };
	oracle_box *boxes = malloc(N * sizeof *boxes);
	test_random_boxes(boxes, N, 3, 30.0f, 3.0f, false, 5);
	oracle_pairs want = oracle_find_pairs(boxes, N, 3);
	bp_mpi *mpi = create(3, false, 0.0f);
	slice s = slice_of_rank(boxes, N, false);
	float saved = s.bounds[0];
	if (rank == ranks - 1)
		s.bounds[0] = NAN;
	bp_status status = bp_mpi_step(mpi, &s.entities);
	CHECK(status == BP_ERR_NOT_FINITE, "NaN on rank %d: got '%s'", ranks - 1, bp_status_string(status));
	char expected[32];
	snprintf(expected, sizeof expected, "rank %d:", ranks - 1);
	CHECK(strstr(bp_mpi_last_error(mpi), expected), "error text '%s' does not name %s", bp_mpi_last_error(mpi),
		expected);
	s.bounds[0] = saved;
	status = bp_mpi_step(mpi, &s.entities);
	CHECK(status == BP_OK, "step after the error: %s", bp_mpi_last_error(mpi));
	expect_pairs(mpi, &want, "after an error");
	slice_free(&s);
	bp_mpi_destroy(mpi);
	oracle_pairs_free(&want);
	free(boxes);
}

/// The last rank's allocator fails its k-th allocation, for k = 1, 2, ... until a whole
/// create and step go through: every rank must return the same status (out of memory or
/// ok), none may wait forever on the failed one, and nothing may leak.
static uint64_t allocations_left;
static bool allocation_refused;

static void *failing_alloc(size_t size, size_t align, void *user)
{
	(void)user;
	if (allocations_left && --allocations_left == 0) {
		allocation_refused = true;
		return NULL;
	}
	void *p = NULL;
	return posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size ? size : 1) == 0 ? p : NULL;
}

static void failing_free(void *ptr, size_t size, size_t align, void *user)
{
	(void)size, (void)align, (void)user;
	free(ptr);
}

static void test_allocation_failure(void)
{
	enum { N = 300 };
	oracle_box *boxes = malloc(N * sizeof *boxes);
	test_random_boxes(boxes, N, 3, 20.0f, 3.0f, true, 11);
	slice s = slice_of_rank(boxes, N, false);
	bp_mpi_def def = bp_mpi_def_default();
	def.world.thread_count = 1;
	const bp_allocator failing = {failing_alloc, failing_free, NULL};
	int refused_anywhere = 1, failures_seen = 0;
	for (uint64_t k = 1; refused_anywhere && k < 400; ++k) {
		allocation_refused = false;
		if (rank == ranks - 1) {
			allocations_left = k;
			bp_set_allocator(&failing);
		}
		bp_mpi *mpi = NULL;
		bp_status status = bp_mpi_create(&def, &mpi);
		if (status == BP_OK)
			status = bp_mpi_step(mpi, &s.entities);
		int mine = (int)status, lo = 0, hi = 0;
		MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
		MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		CHECK(lo == hi, "allocation %llu refused on rank %d: statuses %d to %d", (unsigned long long)k, ranks - 1,
			lo, hi);
		CHECK(status == BP_OK || status == BP_ERR_OUT_OF_MEMORY, "allocation %llu refused: %s",
			(unsigned long long)k, bp_status_string(status));
		failures_seen += status != BP_OK;
		bp_mpi_destroy(mpi);
		if (rank == ranks - 1)
			bp_set_allocator(NULL);
		CHECK(bp_allocated_bytes() == 0, "allocation %llu refused: %lld bytes leaked", (unsigned long long)k,
			(long long)bp_allocated_bytes());
		int refused = allocation_refused;
		MPI_Allreduce(&refused, &refused_anywhere, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	}
	CHECK(!refused_anywhere, "create and step still allocating after 400 refusals");
	CHECK(failures_seen > 0, "no refused allocation made a step fail");
	slice_free(&s);
	free(boxes);
}

/// Settings that differ between ranks are refused by create on every rank.
static void test_mismatched_settings(void)
{
	if (ranks < 2)
		return;
	bp_mpi_def def = bp_mpi_def_default();
	def.world.dims = rank == ranks - 1 ? 2 : 3;
	bp_mpi *mpi = NULL;
	bp_status status = bp_mpi_create(&def, &mpi);
	CHECK(status == BP_ERR_INVALID_ARGUMENT && mpi == NULL, "dims differ: got %s", bp_status_string(status));
	def = bp_mpi_def_default();
	def.world.algorithm = rank == 0 ? BP_ALGO_SAP : BP_ALGO_GRID;
	status = bp_mpi_create(&def, &mpi);
	CHECK(status == BP_ERR_INVALID_ARGUMENT && mpi == NULL, "algorithms differ: got %s", bp_status_string(status));
}

int main(int argc, char **argv)
{
	int provided = 0;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	for (int dims = 2; dims <= 3; ++dims) {
		test_filters_statics_spheres(dims, false);
		test_filters_statics_spheres(dims, true);
		test_periodic(dims);
		test_frames(dims);
		test_host_domains(dims);
		test_host_domains_periodic(dims);
	}
	test_error_on_one_rank();
	test_allocation_failure();
	test_mismatched_settings();
	CHECK(bp_allocated_bytes() == 0, "%lld bytes still allocated", (long long)bp_allocated_bytes());
	int all = 0;
	MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s: %d failure(s) on %d ranks\n", all ? "FAIL" : "ok", all, ranks);
	MPI_Finalize();
	return all ? 1 : 0;
}
