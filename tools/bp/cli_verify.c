// SPDX-License-Identifier: MIT
// `bp verify`: compares each algorithm's pair set with the sweep's (cli_sweep.h), as sorted lists
// of scene-id pairs.
#include "cli.h"
#include "cli_sweep.h"

#include <stdlib.h>
#include <string.h>

enum { OPT_ALGO, OPT_THREADS, OPT_FRAME, OPT_COUNT };

typedef struct id_pairs {
	uint64_t *keys; ///< (lo_id << 32) | hi_id, sorted
	size_t count;
	size_t inverted; ///< pairs the library gave with dense lo >= hi
} id_pairs;

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/// Pairs of dense indices as sorted scene-id keys; false when out of memory.
static bool id_keys(const bp_pair *pairs, size_t count, const uint32_t *ids, id_pairs *out)
{
	*out = (id_pairs){malloc((count ? count : 1) * sizeof(uint64_t)), count, 0};
	if (!out->keys)
		return false;
	for (size_t i = 0; i < count; ++i) {
		uint32_t a = ids[pairs[i].lo], b = ids[pairs[i].hi];
		out->inverted += pairs[i].lo >= pairs[i].hi;
		out->keys[i] = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
	}
	qsort(out->keys, count, sizeof(uint64_t), compare_u64);
	return true;
}

/// The last step's pairs as sorted scene-id keys; false when out of memory.
static bool collect_pairs(const bp_world *world, const uint32_t *ids, id_pairs *out)
{
	size_t count;
	const bp_pair *pairs = bp_world_pairs(world, &count);
	return id_keys(pairs, count, ids, out);
}

/// The sweep's pairs of one frame of the scene (boxes, default settings) as sorted scene-id keys.
static bool sweep_scene(const bp_scene *scene, uint32_t frame, id_pairs *out)
{
	sweep_entities entities = {.dims = scene->dims, .count = scene->count,
		.bounds = bp_scene_frame_bounds(scene, frame)};
	sweep_pairs pairs = {0};
	bool ok = sweep_find_pairs(&entities, &pairs) && id_keys(pairs.data, pairs.count, scene->ids, out);
	sweep_pairs_free(&pairs);
	return ok;
}

/// Prints the algorithm's line; returns true when it matched the sweep.
static bool report(FILE *out, const char *name, const char *ran, const id_pairs *got, const id_pairs *want)
{
	if (got->inverted) {
		fprintf(out, "%s FAIL %zu pairs are not (lo, hi) with lo < hi\n", name, got->inverted);
		return false;
	}
	size_t i = 0, j = 0;
	while (i < got->count && j < want->count && got->keys[i] == want->keys[j])
		++i, ++j;
	if (i == got->count && j == want->count) {
		fprintf(out, "%s ok pairs=%zu", name, got->count);
		if (strcmp(name, ran) != 0)
			fprintf(out, " (ran %s)", ran);
		fprintf(out, "\n");
		return true;
	}
	// Sorted lists: the smaller of the two heads is the first pair only one side has
	// (or a duplicate, which shows as extra).
	bool extra = j == want->count || (i < got->count && got->keys[i] < want->keys[j]);
	uint64_t key = extra ? got->keys[i] : want->keys[j];
	fprintf(out, "%s FAIL pairs=%zu sweep=%zu first difference: %s pair %u %u (scene ids)\n", name, got->count,
		want->count, extra ? "extra" : "missed", (uint32_t)(key >> 32), (uint32_t)key);
	return false;
}

int cli_verify(int argc, char **argv, FILE *out, FILE *err)
{
	cli_option options[OPT_COUNT] = {
		[OPT_ALGO] = CLI_VALUE("--algo"), [OPT_THREADS] = CLI_VALUE("--threads"), [OPT_FRAME] = CLI_VALUE("--frame"),
	};
	const char *positional[1];
	bool help;
	int code = cli_parse_scene_command("verify", argc, argv, options, OPT_COUNT, positional, &help, out, err);
	if (code != CLI_EXIT_OK || help)
		return code;
	bool checked[BP_ALGO_COUNT] = {false};
	const bool all = !options[OPT_ALGO].seen || strcmp(options[OPT_ALGO].value, "all") == 0;
	if (all) {
		// AUTO counts as available: checking it covers the choice as well.
		for (int i = 0; i < BP_ALGO_COUNT; ++i)
			checked[i] = i != BP_ALGO_BRUTE && bp_algorithm_available((bp_algorithm)i);
	} else {
		bp_algorithm one;
		if (!cli_parse_algorithm("verify", options[OPT_ALGO].name, options[OPT_ALGO].value, &one, err))
			return CLI_EXIT_USAGE;
		checked[one] = true;
	}
	int threads = 0;
	uint32_t frame = 0;
	if (!cli_parse_threads("verify", &options[OPT_THREADS], &threads, err) ||
		!cli_parse_frame("verify", &options[OPT_FRAME], &frame, err))
		return CLI_EXIT_USAGE;

	if (cli_is_trace(positional[0]))
		return cli_verify_trace(positional[0], checked, all, threads, options[OPT_FRAME].seen, frame, out, err);
	bp_scene *scene = NULL;
	bp_world *world = NULL;
	id_pairs want = {0};
	code = cli_load_scene(positional[0], &scene, err);
	if (code == CLI_EXIT_OK)
		code = cli_world_from_scene("verify", scene, frame, BP_ALGO_AUTO, threads, &world, err);
	bp_status status = BP_OK;
	if (code == CLI_EXIT_OK && !sweep_scene(scene, frame, &want)) {
		fprintf(err, "bp verify: out of memory\n");
		code = CLI_EXIT_RESOURCE;
	}
	bool all_ok = true;
	FILE *progress = cli_status_stream(err);
	for (int i = 0; i < BP_ALGO_COUNT && code == CLI_EXIT_OK; ++i) {
		if (!checked[i])
			continue;
		const char *name = bp_algorithm_name((bp_algorithm)i);
		cli_status_show(progress, "bp verify: %s", name);
		status = bp_world_set_algorithm(world, (bp_algorithm)i);
		if (status == BP_OK)
			status = bp_world_step(world);
		cli_status_clear(progress); // before this algorithm's line, which may share the terminal
		if (status == BP_ERR_UNSUPPORTED) {
			// Documented (grid and hash on spans beyond float): not a disagreement.
			// Named alone it leaves nothing verified, so the scene is bad input for it.
			fprintf(out, "%s skipped: %s\n", name, bp_world_last_error(world));
			if (!all)
				code = cli_exit_for_status(status);
			continue;
		}
		if (status != BP_OK) {
			fprintf(out, "%s FAIL %s\n", name, bp_world_last_error(world));
			all_ok = false;
			continue;
		}
		id_pairs got;
		if (!collect_pairs(world, scene->ids, &got)) {
			fprintf(err, "bp verify: out of memory\n");
			code = CLI_EXIT_RESOURCE;
			break;
		}
		all_ok &= report(out, name, bp_algorithm_name(bp_world_stats(world).algorithm), &got, &want);
		free(got.keys);
	}
	if (code == CLI_EXIT_OK && !all_ok)
		code = CLI_EXIT_MISMATCH;
	free(want.keys);
	bp_world_destroy(world);
	bp_scene_destroy(scene);
	return code;
}
