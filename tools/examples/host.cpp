// SPDX-License-Identifier: MIT
// The host of host.c in C++: a 2D crowd of two teams walking over static terrain, stepped
// through the frame scheduler while two reader threads query the latest frame and the host
// thread reads each frame's pair events. At the end it checks the last frame against its own
// brute force. The library is C; its header is usable from C++ as it is.
#include <broadphase/broadphase.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

constexpr uint32_t entities = 20000, terrain = entities / 10, agents = entities - terrain;
constexpr int frames = 50, readers = 2;
constexpr float world_size = 1000.0f;

// Filters: a and b pair iff (a.category & b.mask) && (b.category & a.mask), and two static
// entities never pair. Each team pairs with the other team and the terrain, never with itself;
// the terrain's mask takes everything, its kind (static) keeps terrain from pairing with terrain.
// Layers are 64 bits; blue takes a high one to show that any of the 64 works.
constexpr uint64_t cat_terrain = uint64_t{1} << 0, cat_red = uint64_t{1} << 1, cat_blue = uint64_t{1} << 40;

// The host's own state, structure-of-arrays in the world's dense order: terrain first, then the
// red agents, then the blue ones. Nothing is ever destroyed, so dense index i stays entity i and
// its user key stays i + 1.
struct Scene {
	std::vector<float> min_x, min_y, max_x, max_y, vel_x, vel_y;
	std::vector<uint64_t> category, mask;

	bp_bounds_arrays bounds_from(uint32_t first) const
	{
		return {&min_x[first], &min_y[first], nullptr, &max_x[first], &max_y[first], nullptr};
	}
};

struct Random {
	uint64_t state;
	float next()
	{
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		return float(state >> 40) / float(1u << 24);
	}
};

Scene make_scene()
{
	Scene s;
	for (auto *v : {&s.min_x, &s.min_y, &s.max_x, &s.max_y, &s.vel_x, &s.vel_y})
		v->resize(entities);
	s.category.resize(entities);
	s.mask.resize(entities);
	Random rng{1};
	for (uint32_t i = 0; i < entities; ++i) {
		bool is_terrain = i < terrain, red = i < terrain + agents / 2;
		float size = is_terrain ? 5 + 20 * rng.next() : 1 + 2 * rng.next();
		s.min_x[i] = (world_size - size) * rng.next();
		s.min_y[i] = (world_size - size) * rng.next();
		s.max_x[i] = s.min_x[i] + size;
		s.max_y[i] = s.min_y[i] + size;
		s.vel_x[i] = is_terrain ? 0 : 2 * rng.next() - 1;
		s.vel_y[i] = is_terrain ? 0 : 2 * rng.next() - 1;
		s.category[i] = is_terrain ? cat_terrain : red ? cat_red : cat_blue;
		s.mask[i] = is_terrain ? cat_terrain | cat_red | cat_blue : red ? cat_terrain | cat_blue : cat_terrain | cat_red;
	}
	return s;
}

// Agents walk straight and bounce off the edges of the world.
void move_agents(Scene &s)
{
	for (uint32_t i = terrain; i < entities; ++i) {
		if (s.min_x[i] + s.vel_x[i] < 0 || s.max_x[i] + s.vel_x[i] > world_size)
			s.vel_x[i] = -s.vel_x[i];
		if (s.min_y[i] + s.vel_y[i] < 0 || s.max_y[i] + s.vel_y[i] > world_size)
			s.vel_y[i] = -s.vel_y[i];
		s.min_x[i] += s.vel_x[i], s.max_x[i] += s.vel_x[i];
		s.min_y[i] += s.vel_y[i], s.max_y[i] += s.vel_y[i];
	}
}

// Creates every entity in one call from the host's arrays: each gets its own filter, kind
// and user key (pair events name entities by key). Created into an empty world, element i
// becomes dense index i.
bp_status create_scene(bp_world *world, const Scene &s)
{
	std::vector<bp_kind> kinds(entities);
	std::vector<uint64_t> keys(entities);
	for (uint32_t i = 0; i < entities; ++i) {
		kinds[i] = i < terrain ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
		keys[i] = uint64_t(i) + 1;
	}
	bp_entity_arrays arrays{};
	arrays.bounds = s.bounds_from(0);
	arrays.category = s.category.data();
	arrays.mask = s.mask.data();
	arrays.kind = kinds.data();
	arrays.user_key = keys.data();
	return bp_world_create_entities_from_arrays(world, entities, &arrays, nullptr, nullptr);
}

// ---- Readers: any thread may acquire the latest published frame and query it ----------

struct Reader {
	uint64_t queries = 0, failures = 0;

	// What is within 10 units of entity e (an AABB query), and whom does e touch this frame
	// (its neighbours)? Every neighbour overlaps e's box, so it must be among the query's hits,
	// and the frame's pair set must say the two collide.
	void query_around(const bp_view *view, uint32_t e)
	{
		bp_bounds_arrays b = bp_view_bounds(view);
		float lo[2] = {b.min_x[e] - 10, b.min_y[e] - 10};
		float hi[2] = {b.max_x[e] + 10, b.max_y[e] + 10};
		uint32_t hits[1024];
		size_t total = 0;
		// BP_ERR_OUT_OF_RANGE: more than 1024 hits, the first 1024 written; not expected here.
		bp_status status = bp_view_overlap_box(view, lo, hi, nullptr, hits, 1024, &total);
		const uint32_t *neighbours = nullptr;
		size_t count = 0;
		if (status != BP_OK || bp_view_neighbours(view, e, &neighbours, &count) != BP_OK) {
			failures++;
			return;
		}
		for (size_t k = 0; k < count; ++k)
			if (!std::binary_search(hits, hits + total, neighbours[k]) ||
				!bp_view_colliding(view, e, neighbours[k]))
				failures++;
		queries += 2;
	}

	void run(bp_world *world, const std::atomic<bool> &stop, uint64_t seed)
	{
		Random rng{seed};
		while (!stop.load()) {
			bp_view *view = nullptr;
			if (bp_frame_acquire(world, &view) == BP_OK) { // BP_ERR_NO_FRAME before the first frame
				uint32_t n = bp_view_entity_count(view);
				for (int q = 0; q < 64; ++q)
					query_around(view, uint32_t(rng.next() * float(n)) % n);
				bp_view_release(view);
			}
			// A reader polls at its own pace (an AI or audio tick); it never waits on the host.
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
		}
	}
};

// ---- The host's own answer for the last frame --------------------------------------------

// Every pair by the rules above, tested on the host's arrays: count and order-independent
// checksum (the sum of bp_splitmix64((lo << 32) | hi), as bp_pairs_checksum computes it).
void brute_force(const Scene &s, size_t &count, uint64_t &checksum)
{
	count = 0;
	checksum = 0;
	for (uint32_t a = 0; a < entities; ++a)
		for (uint32_t b = a + 1; b < entities; ++b) {
			bool overlap = s.min_x[a] <= s.max_x[b] && s.min_x[b] <= s.max_x[a] && s.min_y[a] <= s.max_y[b] &&
				s.min_y[b] <= s.max_y[a]; // closed intervals: touching boxes overlap
			bool accepted = (s.category[a] & s.mask[b]) && (s.category[b] & s.mask[a]);
			bool both_static = a < terrain && b < terrain;
			if (overlap && accepted && !both_static) {
				++count;
				checksum += bp_splitmix64(uint64_t(a) << 32 | b);
			}
		}
}

} // namespace

int main()
{
	Scene scene = make_scene();
	bp_world_def def = bp_world_def_default();
	def.dims = 2;
	def.capacity = entities;
	bp_world *world = nullptr;
	bp_status status = bp_world_create(&def, &world);
	if (status != BP_OK) {
		std::fprintf(stderr, "host: bp_world_create: %s\n", bp_status_string(status));
		return 1;
	}
	if ((status = create_scene(world, scene)) != BP_OK) {
		std::fprintf(stderr, "host: creating entities: %s\n", bp_world_last_error(world));
		bp_world_destroy(world);
		return 1;
	}

	std::atomic<bool> stop{false};
	std::vector<Reader> reader_state(readers);
	std::vector<std::thread> threads;
	for (int i = 0; i < readers; ++i)
		threads.emplace_back([&, i] { reader_state[i].run(world, stop, uint64_t(i) + 7); });

	// The host thread is the world's writer: it alone changes entities and submits frames.
	uint64_t failures = 0, events_total = 0;
	size_t live = 0; // pairs of the last frame, kept up to date from the events alone
	bp_bounds_arrays agent_bounds = scene.bounds_from(terrain);
	std::vector<bp_key_pair> events;
	for (int f = 1; f <= frames && failures == 0; ++f) {
		uint64_t number = 0;
		if ((status = bp_frame_submit(world, &number)) != BP_OK)
			break;
		// Submit copied the world: while this frame builds, the host moves its agents for the
		// next one (terrain never moves, so only the agents' range is set).
		if (f < frames) {
			move_agents(scene);
			if ((status = bp_entities_set_bounds(world, bp_target_range(terrain, agents), &agent_bounds)) != BP_OK)
				break;
		}
		// Wait for this frame, so that every frame is published and its events are read: a
		// submit while the previous frame still waits to build replaces that frame.
		bp_view *view = nullptr;
		if ((status = bp_frame_wait(world, number)) != BP_OK || (status = bp_frame_acquire(world, &view)) != BP_OK)
			break;
		size_t began = 0, ended = 0, pairs = 0;
		bp_view_pair_events(view, nullptr, 0, &began, nullptr, 0, &ended); // count, then fetch
		events.resize(began + ended);
		status = bp_view_pair_events(view, events.data(), began, &began, events.data() + began, ended, &ended);
		for (size_t k = 0; status == BP_OK && k < began; ++k) // teammates never pair
			failures += scene.category[events[k].a - 1] == scene.category[events[k].b - 1];
		bp_view_pairs(view, &pairs);
		live = live + began - ended;
		failures += bp_view_frame(view) != number || live != pairs;
		events_total += began + ended;
		if (f % 10 == 0)
			std::printf("frame %2d: %zu pairs, %zu began, %zu ended\n", f, pairs, began, ended);
		bp_view_release(view);
		if (status != BP_OK)
			break;
	}

	stop.store(true);
	uint64_t queries = 0;
	for (int i = 0; i < readers; ++i) {
		threads[i].join();
		queries += reader_state[i].queries;
		failures += reader_state[i].failures;
	}

	// The last frame against the host's own brute force, on the bounds it submitted last.
	size_t expected = 0, count = 0;
	uint64_t expected_checksum = 0, checksum = 0;
	bp_view *last = nullptr;
	if (status == BP_OK && (status = bp_frame_acquire(world, &last)) == BP_OK) {
		const bp_pair *pairs = bp_view_pairs(last, &count);
		checksum = bp_pairs_checksum(pairs, count, nullptr);
		bp_view_release(last);
		brute_force(scene, expected, expected_checksum);
	}
	bp_world_destroy(world);

	bool ok = status == BP_OK && failures == 0 && count == expected && checksum == expected_checksum;
	std::printf("host: %u entities, %d frames, %llu events, %llu reader queries, %llu failed checks; "
		    "last frame %zu pairs, brute force %zu: %s\n",
		entities, frames, (unsigned long long)events_total, (unsigned long long)queries,
		(unsigned long long)failures, count, expected, ok ? "ok" : "MISMATCH");
	if (status != BP_OK)
		std::fprintf(stderr, "host: %s\n", bp_status_string(status));
	return ok ? 0 : 1;
}
