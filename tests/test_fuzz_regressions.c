// SPDX-License-Identifier: MIT
// Inputs the libFuzzer targets (tests/fuzz/) found, fed through the same target code
// (compiled in here with renamed entry points; a failed check aborts the test), plus a
// replay of every seed in tests/fuzz/corpus. The targets' own checks are the oracles:
// brute-force pair sets, status predictions from a shadow model, scene round trips.
#define LLVMFuzzerTestOneInput fuzz_scene_one
#include "fuzz/fuzz_scene.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_api_one
#include "fuzz/fuzz_api.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_pairs_one
#include "fuzz/fuzz_pairs.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_trace_one
#include "fuzz/fuzz_trace.c"
#undef LLVMFuzzerTestOneInput

#include <criterion/criterion.h>
#include <dirent.h>

/// Runs `one` over every file of tests/fuzz/corpus/<target>; returns the number of files.
static int replay_corpus(const char *target, int (*one)(const uint8_t *, size_t))
{
	char dir[1024];
	const char *slash = strrchr(__FILE__, '/');
	int prefix = slash ? (int)(slash - __FILE__) : 1;
	snprintf(dir, sizeof dir, "%.*s/fuzz/corpus/%s", prefix, slash ? __FILE__ : ".", target);
	DIR *d = opendir(dir);
	cr_assert(d, "cannot open %s", dir);
	int files = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char path[1400];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		cr_assert(f, "cannot open %s", path);
		static uint8_t buf[1 << 16];
		size_t size = fread(buf, 1, sizeof buf, f);
		fclose(f);
		cr_log_info("%s", path);
		one(buf, size);
		++files;
	}
	closedir(d);
	return files;
}

Test(fuzz_regressions, corpus_scene, .timeout = 120)
{
	cr_assert_geq(replay_corpus("fuzz_scene", fuzz_scene_one), 5);
}

Test(fuzz_regressions, corpus_api, .timeout = 120)
{
	cr_assert_geq(replay_corpus("fuzz_api", fuzz_api_one), 5);
}

Test(fuzz_regressions, corpus_pairs, .timeout = 120)
{
	cr_assert_geq(replay_corpus("fuzz_pairs", fuzz_pairs_one), 5);
}

// Among the seeds: regress-trace-max-entities-ffffffff.bpt, whose trailer says 0xFFFFFFFF
// entities (checksum matched), which the reader opened and a world sized by it could not be
// made; and regress-trace-seek-through-damage.bpt, whose frame 5 is damaged, through which a
// seek failed and left the reader before frame 0 rather than where it was.
Test(fuzz_regressions, corpus_trace, .timeout = 300)
{
	cr_assert_geq(replay_corpus("fuzz_trace", fuzz_trace_one), 5);
}

// fuzz_pairs, the empty input: a world of 0 entities stepped with every algorithm.
// sap built its sweep arrays as offsets from the layout's NULL arrays (NULL + 0 is
// undefined in C; UBSan: src/algorithms/sap.c "applying zero offset to null pointer").
Test(fuzz_regressions, pairs_empty_scene, .timeout = 60)
{
	fuzz_pairs_one((const uint8_t *)"", 0);
	// One dims byte and no boxes: the 2D and 3D empty scenes.
	const uint8_t dims2[] = {0x00}, dims3[] = {0x01};
	fuzz_pairs_one(dims2, sizeof dims2);
	fuzz_pairs_one(dims3, sizeof dims3);
}

// fuzz_api: create a 2D world, then bp_entities_set_bounds(world, bp_target_range(0, 0), ...) while it is
// empty. memcpy to its NULL SoA arrays + 0 was undefined (src/world/world.c, UBSan).
// Bytes: op (no world yet: create), world byte 0 (2D, 1 thread, auto), op 5 (bulk set
// bounds), first 0, count 0.
Test(fuzz_regressions, api_set_bounds_empty_world, .timeout = 60)
{
	const uint8_t input[] = {0x00, 0x00, 0x05, 0x00, 0x00};
	fuzz_api_one(input, sizeof input);
	// The same through the API directly: BP_OK and nothing changes.
	bp_world_def def = bp_world_def_default();
	def.dims = 2;
	bp_world *world;
	cr_assert_eq(bp_world_create(&def, &world), BP_OK);
	float x = 0;
	bp_bounds_arrays arrays = {&x, &x, NULL, &x, &x, NULL};
	cr_assert_eq(bp_entities_set_bounds(world, bp_target_range(0, 0), &arrays), BP_OK);
	cr_assert_eq(bp_entities_set_bounds(world, bp_target_range(0, 1), &arrays), BP_ERR_OUT_OF_RANGE);
	cr_assert_eq(bp_world_entity_count(world), 0);
	bp_world_destroy(world);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

// fuzz_scene (a timeout): a 24-byte binary scene, dims 3, count 0, frame_count
// 0x4ed61800 (1.3e9). The reader looped over every frame and axis with zero-length reads,
// and the bounds check and the binary writer did the same: over 20 s for 24 bytes of input
// (scene_binary.c). With no entities those loops now do nothing.
Test(fuzz_regressions, scene_empty_binary_many_frames, .timeout = 10)
{
	const uint8_t input[] = {'B', 'P', 'S', 'C', 'E', 'N', 'E', '1', 3, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x18, 0xd6, 0x4e,
		0, 0, 0, 0};
	fuzz_scene_one(input, sizeof input);
	bp_scene *scene;
	bp_scene_error err;
	cr_assert_eq(bp_scene_parse((const char *)input, sizeof input, "m", &scene, &err), BP_OK, "%s", err.message);
	// The header, little-endian: count 0, frames 0x4ed61800.
	cr_assert_eq(scene->count, 0);
	cr_assert_eq(scene->frame_count, 0x4ed61800u);
	bp_scene_destroy(scene);
	cr_assert_eq(bp_scene_allocated_bytes(), 0);
}

// fuzz_api (minimized by hand from the finding): grid and hash cannot lay cells over a
// span that overflows float and return BP_ERR_UNSUPPORTED; AUTO picked grid for such a
// sparse scene and so failed a step that sap serves. Now AUTO falls back to sap
// (src/step/step.c). Scene, 2D: 30000 unit boxes on a 200-wide lattice of pitch 10 (no two
// touch: gaps of 9), except that index 0 is the point (-3e38, -3e38), index 1 the box
// [-3e38, -2.9e38]^2 containing it, index 30 the point (3e38, 3e38) and index 31 the box
// [2.9e38, 3e38]^2 containing that. So the pairs are exactly (0, 1) and (30, 31). AUTO's
// sample (every 30th entity) sees both extremes, so the scene looks sparse: grid.
Test(fuzz_regressions, auto_span_beyond_float, .timeout = 120)
{
	enum { N = 30000 };
	static float min_x[N], min_y[N], max_x[N], max_y[N];
	for (uint32_t i = 0; i < N; ++i) {
		min_x[i] = 10.0f * (float)(i % 200);
		min_y[i] = 10.0f * (float)(i / 200);
		max_x[i] = min_x[i] + 1;
		max_y[i] = min_y[i] + 1;
	}
	min_x[0] = min_y[0] = max_x[0] = max_y[0] = -3e38f;
	min_x[1] = min_y[1] = -3e38f;
	max_x[1] = max_y[1] = -2.9e38f;
	min_x[30] = min_y[30] = max_x[30] = max_y[30] = 3e38f;
	min_x[31] = min_y[31] = 2.9e38f;
	max_x[31] = max_y[31] = 3e38f;
	bp_world_def def = bp_world_def_default();
	def.dims = 2;
	def.thread_count = 2;
	def.canonical_pairs = true;
	bp_world *world;
	cr_assert_eq(bp_world_create(&def, &world), BP_OK);
	bp_bounds_arrays arrays = {min_x, min_y, NULL, max_x, max_y, NULL};
	bp_entity_def common = bp_entity_def_default();
	cr_assert_eq(bp_world_create_entities(world, N, &arrays, &common, NULL), BP_OK);
	bp_status s = bp_world_step(world);
	cr_assert_eq(s, BP_OK, "auto step: %s", bp_world_last_error(world));
	size_t count;
	const bp_pair *pairs = bp_world_pairs(world, &count);
	cr_assert_eq(count, 2);
	cr_assert(pairs[0].lo == 0 && pairs[0].hi == 1 && pairs[1].lo == 30 && pairs[1].hi == 31);
	// Through the scheduler too: the builder uses the same step.
	bp_view *view;
	cr_assert_eq(bp_frame_step(world, &view), BP_OK);
	cr_assert_eq(bp_view_pairs(view, &count)[1].hi, 31);
	cr_assert_eq(count, 2);
	bp_view_release(view);
	// Asked for explicitly, grid reports the limit rather than wrong pairs.
	if (bp_algorithm_available(BP_ALGO_GRID)) {
		cr_assert_eq(bp_world_set_algorithm(world, BP_ALGO_GRID), BP_OK);
		s = bp_world_step(world);
		cr_assert(s == BP_OK || s == BP_ERR_UNSUPPORTED, "grid: %s", bp_status_string(s));
	}
	bp_world_destroy(world);
	cr_assert_eq(bp_allocated_bytes(), 0);
}
