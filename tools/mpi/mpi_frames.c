// SPDX-License-Identifier: MIT
// `bp-mpi frames`: every frame of a moving scene through one decomposition. The first frame
// comes from the rank slices; each later frame from what each rank owns after the last, with
// that frame's bounds, so entities migrate as they move and domains rebalance when needed.
#include "mpi_cli.h"

#include <inttypes.h>
#include <stdlib.h>

/// Entity position in the scene by id, for looking up the next frame's bounds of what a
/// rank owns (scene ids are unique; a sorted index keeps the lookup O(log n)).
typedef struct id_index {
	uint64_t *sorted; ///< id << 32 | position
	uint32_t count;
} id_index;

static int compare_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static bool index_build(id_index *index, const bp_scene *scene)
{
	index->count = scene->count;
	index->sorted = malloc((scene->count ? scene->count : 1) * sizeof *index->sorted);
	if (!index->sorted)
		return false;
	for (uint32_t i = 0; i < scene->count; ++i)
		index->sorted[i] = (uint64_t)scene->ids[i] << 32 | i;
	qsort(index->sorted, scene->count, sizeof *index->sorted, compare_u64);
	return true;
}

static uint32_t index_find(const id_index *index, uint64_t id)
{
	uint32_t lo = 0, hi = index->count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if ((index->sorted[mid] >> 32) < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (uint32_t)index->sorted[lo];
}

/// The owned entities with frame `frame`'s bounds, in six arrays of `room` floats.
static bp_mpi_entities next_frame(const bp_mpi *mpi, const bp_scene *scene, uint32_t frame, const id_index *index,
	uint64_t *ids, float *bounds, size_t room)
{
	bp_mpi_entities owned = bp_mpi_owned(mpi);
	bp_bounds_arrays all = bp_scene_frame_bounds(scene, frame);
	const float *src[6] = {all.min_x, all.min_y, all.min_z, all.max_x, all.max_y, all.max_z};
	for (uint32_t i = 0; i < owned.count; ++i) {
		uint32_t at = index_find(index, owned.ids[i]);
		ids[i] = owned.ids[i];
		for (int k = 0; k < 6; ++k)
			bounds[k * room + i] = src[k] ? src[k][at] : 0.0f;
	}
	bp_mpi_entities e = {.count = owned.count, .ids = ids};
	e.bounds = (bp_bounds_arrays){bounds, bounds + room, bounds + 2 * room, bounds + 3 * room, bounds + 4 * room,
		bounds + 5 * room};
	return e;
}

int mpi_cli_frames(int argc, char **argv, FILE *out, FILE *err)
{
	mpi_cli_args args;
	mpi_cli_scene scene;
	bool help;
	int code = mpi_cli_start("frames", argc, argv, &args, &scene, out, err, &help);
	if (code != CLI_EXIT_OK || help)
		return code;
	bp_mpi *mpi = NULL;
	id_index index = {0};
	size_t room = scene.scene->count ? scene.scene->count : 1;
	uint64_t *ids = malloc(room * sizeof *ids);
	float *bounds = malloc(room * 6 * sizeof *bounds);
	code = mpi_cli_agree(ids && bounds && index_build(&index, scene.scene) ? CLI_EXIT_OK : CLI_EXIT_RESOURCE);
	if (code == CLI_EXIT_OK)
		code = mpi_cli_create(&args, scene.scene->dims, &mpi, err);
	for (uint32_t frame = 0; code == CLI_EXIT_OK && frame < scene.scene->frame_count; ++frame) {
		bp_mpi_entities local =
			frame == 0 ? mpi_cli_entities(&scene, 0) : next_frame(mpi, scene.scene, frame, &index, ids, bounds, room);
		bp_status status = bp_mpi_step(mpi, &local);
		if (status != BP_OK) {
			fprintf(err, "bp-mpi frames: frame %u: %s\n", frame, bp_mpi_last_error(mpi));
			code = cli_exit_for_status(status);
			break;
		}
		uint64_t count = 0, checksum = 0, migrated = 0, rebalanced = 0;
		bp_mpi_pairs_summary(mpi, &count, &checksum);
		bp_mpi_stats stats = bp_mpi_last_stats(mpi);
		uint64_t mine[2] = {stats.migrated_in, stats.rebalanced}, all[2];
		MPI_Reduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
		migrated = all[0];
		rebalanced = all[1] != 0;
		fprintf(out, "frame=%u pairs=%" PRIu64 " checksum=%016" PRIx64 " migrated=%" PRIu64 " rebalanced=%" PRIu64 "\n",
			frame, count, checksum, frame == 0 ? 0 : migrated, rebalanced);
		if (args.stats)
			mpi_cli_print_stats(mpi, out);
	}
	free(index.sorted);
	free(ids);
	free(bounds);
	bp_mpi_destroy(mpi);
	mpi_cli_unload(&scene);
	return code;
}
