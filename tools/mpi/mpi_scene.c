// SPDX-License-Identifier: MIT
// bp-mpi's scene: read on every rank, sliced by rank; the decomposition made from the options.
#include "mpi_cli.h"

#include <stdlib.h>

int mpi_cli_agree(int code)
{
	int worst = code;
	MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return worst;
}

int mpi_cli_load(const char *path, mpi_cli_scene *out, FILE *err)
{
	*out = (mpi_cli_scene){0};
	int rank = 0, ranks = 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	int code = cli_load_scene(path, &out->scene, err);
	if (code == CLI_EXIT_OK) {
		uint64_t n = out->scene->count;
		out->first = (uint32_t)(n * (uint64_t)rank / (uint64_t)ranks);
		out->count = (uint32_t)(n * (uint64_t)(rank + 1) / (uint64_t)ranks) - out->first;
		out->ids = malloc((out->count ? out->count : 1) * sizeof *out->ids);
		if (!out->ids) {
			fprintf(err, "bp-mpi: out of memory\n");
			code = CLI_EXIT_RESOURCE;
		}
		for (uint32_t i = 0; out->ids && i < out->count; ++i)
			out->ids[i] = out->scene->ids[out->first + i];
	}
	code = mpi_cli_agree(code);
	if (code != CLI_EXIT_OK)
		mpi_cli_unload(out);
	return code;
}

void mpi_cli_unload(mpi_cli_scene *s)
{
	free(s->ids);
	bp_scene_destroy(s->scene);
	*s = (mpi_cli_scene){0};
}

bp_mpi_entities mpi_cli_entities(const mpi_cli_scene *s, uint32_t frame)
{
	bp_bounds_arrays all = bp_scene_frame_bounds(s->scene, frame);
	uint32_t f = s->first;
	bp_mpi_entities e = {.count = s->count, .ids = s->ids};
	e.bounds = (bp_bounds_arrays){all.min_x + f, all.min_y + f, all.min_z ? all.min_z + f : NULL, all.max_x + f,
		all.max_y + f, all.max_z ? all.max_z + f : NULL};
	return e;
}

int mpi_cli_create(const mpi_cli_args *a, int dims, bp_mpi **out, FILE *err)
{
	bp_mpi_def def = bp_mpi_def_default();
	def.world.dims = dims;
	def.world.algorithm = a->algorithm;
	def.world.thread_count = a->threads;
	bp_status status = bp_mpi_create(&def, out);
	if (status != BP_OK) {
		int rank = 0;
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		if (rank == 0)
			fprintf(err, "bp-mpi: cannot create the decomposition: %s\n", bp_status_string(status));
		return cli_exit_for_status(status);
	}
	return CLI_EXIT_OK;
}
