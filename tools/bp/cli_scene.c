// SPDX-License-Identifier: MIT
// Loading a scene file into a world, and the status -> exit code mapping shared by the commands.
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <stdlib.h>
#include <time.h>

uint64_t cli_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

double cli_median_ms(uint64_t *ns, size_t count)
{
	qsort(ns, count, sizeof ns[0], compare_u64);
	double mid = (double)ns[count / 2];
	if (count % 2 == 0)
		mid = (mid + (double)ns[count / 2 - 1]) / 2;
	return mid / 1e6;
}

int cli_exit_for_status(bp_status status)
{
	switch (status) {
	case BP_OK:
		return CLI_EXIT_OK;
	case BP_ERR_OUT_OF_MEMORY:
		return CLI_EXIT_RESOURCE;
	case BP_ERR_UNKNOWN_ALGORITHM:
		return CLI_EXIT_USAGE;
	default:
		return CLI_EXIT_INPUT;
	}
}

int cli_load_scene(const char *path, bp_scene **out, FILE *err)
{
	bp_scene_error error = {0};
	bp_status status = bp_scene_read(path, out, &error);
	if (status == BP_OK)
		return CLI_EXIT_OK;
	if (error.message[0])
		fprintf(err, "%s: %s\n", cli_program, error.message);
	else
		fprintf(err, "%s: %s:0: %s\n", cli_program, path, bp_status_string(status));
	return cli_exit_for_status(status);
}

int cli_world_from_scene(const char *command, const bp_scene *scene, uint32_t frame, bp_algorithm algorithm,
	int threads, bp_world **out, FILE *err)
{
	bp_world_def def = bp_world_def_default();
	def.algorithm = algorithm;
	def.thread_count = threads;
	return cli_world_from_scene_def(command, scene, frame, &def, out, err);
}

int cli_world_from_scene_def(const char *command, const bp_scene *scene, uint32_t frame, const bp_world_def *settings,
	bp_world **out, FILE *err)
{
	*out = NULL;
	if (frame >= scene->frame_count) {
		fprintf(err, "bp %s: --frame: the scene has %u frame%s, got %u\n", command, scene->frame_count,
			scene->frame_count == 1 ? "" : "s", frame);
		return CLI_EXIT_USAGE;
	}
	bp_world_def def = *settings;
	def.dims = scene->dims;
	def.capacity = scene->count;
	bp_world *world = NULL;
	bp_status status = bp_world_create(&def, &world);
	if (status != BP_OK) {
		fprintf(err, "bp %s: cannot create a world: %s\n", command, bp_status_string(status));
		return cli_exit_for_status(status);
	}
	bp_bounds_arrays bounds = bp_scene_frame_bounds(scene, frame);
	bp_entity_def common = bp_entity_def_default();
	status = bp_world_create_entities(world, scene->count, &bounds, &common, NULL);
	if (status != BP_OK) {
		// The parser rejects bad bounds, so this is a scene built some other way
		// (a binary file, say) or an allocation failure.
		fprintf(err, "bp %s: frame %u: %s\n", command, frame, bp_world_last_error(world));
		bp_world_destroy(world);
		return cli_exit_for_status(status);
	}
	*out = world;
	return CLI_EXIT_OK;
}
