// SPDX-License-Identifier: MIT
// An example host: a 2D crowd of two teams walking over static terrain, stepped through the
// frame scheduler while two reader threads query the latest frame and the host thread reads
// each frame's pair events. At the end it checks the last frame against its own brute force.
// Given a path (host TRACE), it also records its motion there as a trace (docs/trace.md), which
// `bp frames --replay TRACE` and `bp verify TRACE` replay.
#define _POSIX_C_SOURCE 200809L // nanosleep
#include <broadphase/broadphase.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { ENTITIES = 20000, TERRAIN = ENTITIES / 10, AGENTS = ENTITIES - TERRAIN, FRAMES = 50, READERS = 2 };
static const float WORLD_SIZE = 1000.0f;

// Filters: a and b pair iff (a.category & b.mask) && (b.category & a.mask), and two static
// entities never pair. Each team pairs with the other team and the terrain, never with itself;
// the terrain's mask takes everything, its kind (static) keeps terrain from pairing with terrain.
// Layers are 64 bits; blue takes a high one to show that any of the 64 works.
#define CAT_TERRAIN (UINT64_C(1) << 0)
#define CAT_RED (UINT64_C(1) << 1)
#define CAT_BLUE (UINT64_C(1) << 40)

// The host's own state, structure-of-arrays in the world's dense order: terrain first, then
// the red agents, then the blue ones. Nothing is ever destroyed, so dense index i stays
// entity i and its user key stays i + 1.
static float min_x[ENTITIES], min_y[ENTITIES], max_x[ENTITIES], max_y[ENTITIES];
static float vel_x[ENTITIES], vel_y[ENTITIES];
static uint64_t category[ENTITIES], mask[ENTITIES];

static float random01(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return (float)(*state >> 40) / (float)(1u << 24);
}

static bp_bounds_arrays bounds_from(uint32_t first)
{
	return (bp_bounds_arrays){min_x + first, min_y + first, NULL, max_x + first, max_y + first, NULL};
}

static void setup_scene(void)
{
	uint64_t rng = 1;
	for (uint32_t i = 0; i < ENTITIES; ++i) {
		bool terrain = i < TERRAIN;
		float size = terrain ? 5 + 20 * random01(&rng) : 1 + 2 * random01(&rng);
		min_x[i] = (WORLD_SIZE - size) * random01(&rng);
		min_y[i] = (WORLD_SIZE - size) * random01(&rng);
		max_x[i] = min_x[i] + size;
		max_y[i] = min_y[i] + size;
		vel_x[i] = terrain ? 0 : 2 * random01(&rng) - 1;
		vel_y[i] = terrain ? 0 : 2 * random01(&rng) - 1;
		bool red = i < TERRAIN + AGENTS / 2;
		category[i] = terrain ? CAT_TERRAIN : red ? CAT_RED : CAT_BLUE;
		mask[i] = terrain ? CAT_TERRAIN | CAT_RED | CAT_BLUE : red ? CAT_TERRAIN | CAT_BLUE : CAT_TERRAIN | CAT_RED;
	}
}

// Agents walk straight and bounce off the edges of the world.
static void move_agents(void)
{
	for (uint32_t i = TERRAIN; i < ENTITIES; ++i) {
		if (min_x[i] + vel_x[i] < 0 || max_x[i] + vel_x[i] > WORLD_SIZE)
			vel_x[i] = -vel_x[i];
		if (min_y[i] + vel_y[i] < 0 || max_y[i] + vel_y[i] > WORLD_SIZE)
			vel_y[i] = -vel_y[i];
		min_x[i] += vel_x[i], max_x[i] += vel_x[i];
		min_y[i] += vel_y[i], max_y[i] += vel_y[i];
	}
}

// Creates every entity in one call from the host's arrays: each gets its own filter, kind
// and user key (pair events name entities by key). Created into an empty world, element i
// becomes dense index i.
static bp_status create_scene(bp_world *world)
{
	bp_status status = BP_ERR_OUT_OF_MEMORY;
	bp_kind *kinds = malloc(ENTITIES * sizeof *kinds);
	uint64_t *keys = malloc(ENTITIES * sizeof *keys);
	if (kinds && keys) {
		for (uint32_t i = 0; i < ENTITIES; ++i) {
			kinds[i] = i < TERRAIN ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
			keys[i] = (uint64_t)i + 1;
		}
		bp_entity_arrays arrays = {
			.bounds = bounds_from(0), .category = category, .mask = mask, .kind = kinds, .user_key = keys};
		status = bp_world_create_entities_from_arrays(world, ENTITIES, &arrays, NULL, NULL);
	}
	free(kinds);
	free(keys);
	return status;
}

// ---- Recording: the crowd as a trace, ids = dense indices ---------------------------------

// Frame 0: every entity with its id, bounds, filter and kind.
static bp_status record_start(bp_trace_writer *trace)
{
	bp_trace_entity *all = malloc(ENTITIES * sizeof *all);
	if (!all)
		return BP_ERR_OUT_OF_MEMORY;
	for (uint32_t i = 0; i < ENTITIES; ++i)
		all[i] = (bp_trace_entity){.id = i, .min = {min_x[i], min_y[i]}, .max = {max_x[i], max_y[i]},
			.category = category[i], .mask = mask[i], .kind = i < TERRAIN ? BP_KIND_STATIC : BP_KIND_DYNAMIC};
	bp_status status = bp_trace_create(trace, ENTITIES, all);
	free(all);
	return status == BP_OK ? bp_trace_end_frame(trace) : status;
}

// Each later frame: the agents' new boxes, the same arrays the world was given.
static bp_status record_moves(bp_trace_writer *trace, const uint32_t *agent_ids)
{
	bp_bounds_arrays agents = bounds_from(TERRAIN);
	bp_status status = bp_trace_move(trace, AGENTS, agent_ids, &agents);
	return status == BP_OK ? bp_trace_end_frame(trace) : status;
}

// ---- Readers: any thread may acquire the latest published frame and query it ----------

typedef struct reader {
	bp_world *world;
	atomic_bool *stop;
	uint64_t rng;
	uint64_t queries;
	uint64_t failures;
} reader;

static bool contains(const uint32_t *sorted, size_t count, uint32_t value)
{
	size_t lo = 0, hi = count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sorted[mid] < value)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < count && sorted[lo] == value;
}

// One reader's query on a view: what is within 10 units of entity e (an AABB query), and
// whom does e touch this frame (its neighbours). Every neighbour overlaps e's box, so it must
// be among the query's hits, and the frame's pair set must say the two collide.
static void query_around(reader *r, const bp_view *view, uint32_t e)
{
	bp_bounds_arrays b = bp_view_bounds(view);
	float lo[2] = {b.min_x[e] - 10, b.min_y[e] - 10};
	float hi[2] = {b.max_x[e] + 10, b.max_y[e] + 10};
	uint32_t hits[1024];
	size_t total = 0;
	// BP_ERR_OUT_OF_RANGE: more than 1024 hits, the first 1024 written; not expected here.
	bp_status status = bp_view_overlap_box(view, lo, hi, NULL, hits, 1024, &total);
	const uint32_t *neighbours = NULL;
	size_t count = 0;
	if (status != BP_OK || bp_view_neighbours(view, e, &neighbours, &count) != BP_OK) {
		r->failures++;
		return;
	}
	for (size_t k = 0; k < count; ++k)
		if (!contains(hits, total, neighbours[k]) || !bp_view_colliding(view, e, neighbours[k]))
			r->failures++;
	r->queries += 2;
}

static void *reader_main(void *arg)
{
	reader *r = arg;
	while (!atomic_load(r->stop)) {
		bp_view *view = NULL;
		if (bp_frame_acquire(r->world, &view) == BP_OK) { // BP_ERR_NO_FRAME before the first frame
			uint32_t n = bp_view_entity_count(view);
			for (int q = 0; q < 64; ++q)
				query_around(r, view, (uint32_t)(random01(&r->rng) * (float)n) % n);
			bp_view_release(view);
		}
		// A reader polls at its own pace (an AI or audio tick); it never waits on the host.
		nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
	}
	return NULL;
}

// ---- The host's own answer for the last frame --------------------------------------------

// Every pair by the rules above, tested on the host's arrays: count and order-independent
// checksum (the sum of bp_splitmix64((lo << 32) | hi), as bp_pairs_checksum computes it).
static void brute_force(size_t *count, uint64_t *checksum)
{
	*count = 0;
	*checksum = 0;
	for (uint32_t a = 0; a < ENTITIES; ++a)
		for (uint32_t b = a + 1; b < ENTITIES; ++b) {
			bool overlap = min_x[a] <= max_x[b] && min_x[b] <= max_x[a] && min_y[a] <= max_y[b] &&
				min_y[b] <= max_y[a]; // closed intervals: touching boxes overlap
			bool accepted = (category[a] & mask[b]) && (category[b] & mask[a]);
			bool both_static = a < TERRAIN && b < TERRAIN;
			if (overlap && accepted && !both_static) {
				++*count;
				*checksum += bp_splitmix64((uint64_t)a << 32 | b);
			}
		}
}

static bool same_team(uint64_t key_a, uint64_t key_b)
{
	return category[key_a - 1] == category[key_b - 1];
}

int main(int argc, char **argv)
{
	setup_scene();
	bp_trace_writer *trace = NULL;
	uint32_t *agent_ids = malloc(AGENTS * sizeof *agent_ids);
	if (!agent_ids)
		return 1;
	for (uint32_t i = 0; i < AGENTS; ++i)
		agent_ids[i] = TERRAIN + i;
	if (argc > 1) {
		bp_trace_writer_def trace_def = bp_trace_writer_def_default();
		trace_def.dims = 2;
		if (bp_trace_writer_open(argv[1], &trace_def, &trace) != BP_OK || record_start(trace) != BP_OK) {
			fprintf(stderr, "host: %s\n", trace ? bp_trace_writer_error(trace) : bp_trace_open_error());
			return 1;
		}
	}
	bp_world_def def = bp_world_def_default();
	def.dims = 2;
	def.capacity = ENTITIES;
	bp_world *world = NULL;
	bp_status status = bp_world_create(&def, &world);
	if (status != BP_OK) {
		fprintf(stderr, "host: bp_world_create: %s\n", bp_status_string(status));
		return 1;
	}
	if ((status = create_scene(world)) != BP_OK) {
		fprintf(stderr, "host: creating entities: %s\n", bp_world_last_error(world));
		bp_world_destroy(world);
		return 1;
	}

	atomic_bool stop = false;
	reader readers[READERS];
	pthread_t threads[READERS];
	int started = 0;
	for (; started < READERS; ++started) {
		readers[started] = (reader){.world = world, .stop = &stop, .rng = (uint64_t)started + 7};
		if (pthread_create(&threads[started], NULL, reader_main, &readers[started]) != 0)
			break;
	}

	// The host thread is the world's writer: it alone changes entities and submits frames.
	uint64_t failures = started < READERS, began_total = 0, ended_total = 0;
	size_t live = 0; // pairs of the last frame, kept up to date from the events alone
	bp_bounds_arrays agents = bounds_from(TERRAIN);
	for (int f = 1; f <= FRAMES && failures == 0; ++f) {
		uint64_t number = 0;
		if ((status = bp_frame_submit(world, &number)) != BP_OK)
			break;
		// Submit copied the world: while this frame builds, the host moves its agents for the
		// next one (terrain never moves, so only the agents' range is set).
		if (f < FRAMES) {
			move_agents();
			if ((status = bp_entities_set_bounds(world, bp_target_range(TERRAIN, AGENTS), &agents)) != BP_OK)
				break;
			if (trace && (status = record_moves(trace, agent_ids)) != BP_OK) {
				fprintf(stderr, "host: %s\n", bp_trace_writer_error(trace));
				break;
			}
		}
		// Wait for this frame, so that every frame is published and its events are read: a
		// submit while the previous frame still waits to build replaces that frame.
		bp_view *view = NULL;
		if ((status = bp_frame_wait(world, number)) != BP_OK || (status = bp_frame_acquire(world, &view)) != BP_OK)
			break;
		size_t began = 0, ended = 0, pairs = 0;
		bp_view_pair_events(view, NULL, 0, &began, NULL, 0, &ended); // count, then fetch
		bp_key_pair *events = malloc((began + ended + 1) * sizeof *events);
		status = events ? bp_view_pair_events(view, events, began, &began, events + began, ended, &ended)
				: BP_ERR_OUT_OF_MEMORY;
		for (size_t k = 0; status == BP_OK && k < began; ++k)
			failures += same_team(events[k].a, events[k].b); // teammates never pair
		free(events);
		bp_view_pairs(view, &pairs);
		live = live + began - ended;
		failures += bp_view_frame(view) != number || live != pairs;
		began_total += began;
		ended_total += ended;
		if (f % 10 == 0)
			printf("frame %2d: %zu pairs, %zu began, %zu ended\n", f, pairs, began, ended);
		bp_view_release(view);
		if (status != BP_OK)
			break;
	}

	atomic_store(&stop, true);
	uint64_t queries = 0;
	for (int i = 0; i < started; ++i) {
		pthread_join(threads[i], NULL);
		queries += readers[i].queries;
		failures += readers[i].failures;
	}

	// The last frame against the host's own brute force, on the bounds it submitted last.
	size_t expected = 0, count = 0;
	uint64_t expected_checksum = 0, checksum = 0;
	bp_view *last = NULL;
	if (status == BP_OK && (status = bp_frame_acquire(world, &last)) == BP_OK) {
		const bp_pair *pairs = bp_view_pairs(last, &count);
		checksum = bp_pairs_checksum(pairs, count, NULL);
		bp_view_release(last);
		brute_force(&expected, &expected_checksum);
	}
	bp_world_destroy(world);
	free(agent_ids);
	if (trace && bp_trace_writer_close(trace) != BP_OK) {
		fprintf(stderr, "host: %s\n", bp_trace_open_error());
		status = BP_ERR_IO;
	}

	bool ok = status == BP_OK && failures == 0 && count == expected && checksum == expected_checksum;
	printf("host: %d entities, %d frames, %llu events, %llu reader queries, %llu failed checks; "
	       "last frame %zu pairs, brute force %zu: %s\n",
		ENTITIES, FRAMES, (unsigned long long)(began_total + ended_total), (unsigned long long)queries,
		(unsigned long long)failures, count, expected, ok ? "ok" : "MISMATCH");
	if (status != BP_OK)
		fprintf(stderr, "host: %s\n", bp_status_string(status));
	return ok ? 0 : 1;
}
