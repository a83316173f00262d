// SPDX-License-Identifier: MIT
// bp_perf_mpi: what one step of broadphase::mpi costs on each rank (entities owned, ghosts,
// bytes and messages exchanged, time in exchange against the local step), for the first step
// (bisection and migration from contiguous slices) and for steady steps (each rank passes
// back what it owns; ghosts only). Weak scaling: --n-per-rank N makes the scene N x ranks.
// Run under mpirun; rank 0 writes the CSV (perf/README.md).
#define _POSIX_C_SOURCE 200809L
#include <broadphase/mpi.h>
#include <bp_scene.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../timing.h"

enum { FIELDS = 10 };
static const char *const field_names[FIELDS] = {"owned", "ghosts", "bytes_sent", "bytes_received", "messages_sent",
	"pairs", "ms_decompose", "ms_exchange", "ms_step", "ms_total"};

static void stats_row(const bp_mpi_stats *s, double *row)
{
	double values[FIELDS] = {s->owned, s->ghosts, (double)s->bytes_sent, (double)s->bytes_received, s->messages_sent,
		(double)s->pair_count, s->ns_decompose * 1e-6, s->ns_exchange * 1e-6, s->ns_step * 1e-6, s->ns_total * 1e-6};
	memcpy(row, values, sizeof values);
}

/// Median of each field over `runs` rows.
static void median_rows(double *rows, int runs, double *out)
{
	double *column = malloc((size_t)runs * sizeof *column);
	for (int f = 0; f < FIELDS; ++f) {
		for (int r = 0; r < runs; ++r)
			column[r] = rows[r * FIELDS + f];
		qsort(column, (size_t)runs, sizeof *column, compare_double);
		out[f] = column[runs / 2];
	}
	free(column);
}

typedef struct bench_args {
	const char *scenes, *csv;
	uint32_t n_per_rank;
	int runs, threads;
} bench_args;

/// Gathers one row per rank on rank 0 and writes them.
static void write_rows(FILE *csv, const char *scene, int dims, uint64_t n, int ranks, int threads, const char *phase,
	const double *row)
{
	int rank = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double *all = rank == 0 ? malloc((size_t)ranks * FIELDS * sizeof *all) : NULL;
	MPI_Gather(row, FIELDS, MPI_DOUBLE, all, FIELDS, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	for (int r = 0; rank == 0 && r < ranks; ++r) {
		fprintf(csv, "%s,%d,%llu,%d,%d,%s,%d", scene, dims, (unsigned long long)n, ranks, threads, phase, r);
		for (int f = 0; f < FIELDS; ++f)
			fprintf(csv, f < 6 ? ",%.0f" : ",%.3f", all[r * FIELDS + f]);
		fputc('\n', csv);
	}
	free(all);
}

static int run_scene(const bench_args *a, const char *name, int dims, FILE *csv)
{
	int rank = 0, ranks = 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	bp_gen_def gen = bp_gen_def_default();
	if (bp_distribution_from_name(name, &gen.dist) != BP_OK) {
		fprintf(stderr, "bp_perf_mpi: unknown scene '%s'\n", name);
		return 1;
	}
	gen.n = a->n_per_rank * (uint32_t)ranks;
	gen.dims = dims;
	bp_scene *scene = NULL;
	// Every rank makes the same scene and takes its slice: generation is not timed.
	if (bp_scene_generate(&gen, &scene) != BP_OK) {
		fprintf(stderr, "bp_perf_mpi: cannot generate %s\n", name);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	uint32_t first = (uint32_t)((uint64_t)gen.n * rank / ranks), last = (uint32_t)((uint64_t)gen.n * (rank + 1) / ranks);
	uint64_t *ids = malloc((last - first + 1) * sizeof *ids);
	for (uint32_t i = first; i < last; ++i)
		ids[i - first] = scene->ids[i];
	bp_bounds_arrays all = bp_scene_frame_bounds(scene, 0);
	bp_mpi_entities slice = {.count = last - first, .ids = ids,
		.bounds = {all.min_x + first, all.min_y + first, dims == 3 ? all.min_z + first : NULL, all.max_x + first,
			all.max_y + first, dims == 3 ? all.max_z + first : NULL}};

	bp_mpi_def def = bp_mpi_def_default();
	def.world.dims = dims;
	def.world.thread_count = a->threads;
	double *first_rows = malloc((size_t)a->runs * FIELDS * sizeof(double));
	double *steady_rows = malloc((size_t)a->runs * FIELDS * sizeof(double));
	double row[FIELDS];
	for (int run = 0; run < a->runs; ++run) {
		bp_mpi *mpi = NULL;
		if (bp_mpi_create(&def, &mpi) != BP_OK || bp_mpi_step(mpi, &slice) != BP_OK) {
			fprintf(stderr, "bp_perf_mpi: %s\n", mpi ? bp_mpi_last_error(mpi) : "create failed");
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
		bp_mpi_stats s = bp_mpi_last_stats(mpi);
		stats_row(&s, &first_rows[run * FIELDS]);
		// A steady step: what each rank owns, passed back as it is (copied, since the
		// owned arrays belong to the object until the next step).
		bp_mpi_entities owned = bp_mpi_owned(mpi);
		size_t n = owned.count, room = n ? n : 1;
		uint64_t *oid = malloc(room * sizeof *oid);
		float *ob = malloc(room * 6 * sizeof *ob);
		memcpy(oid, owned.ids, n * sizeof *oid);
		const float *src[6] = {owned.bounds.min_x, owned.bounds.min_y, owned.bounds.min_z, owned.bounds.max_x,
			owned.bounds.max_y, owned.bounds.max_z};
		for (int k = 0; k < 6; ++k)
			memcpy(ob + k * room, src[k], n * sizeof *ob);
		bp_mpi_entities again = {.count = (uint32_t)n, .ids = oid,
			.bounds = {ob, ob + room, ob + 2 * room, ob + 3 * room, ob + 4 * room, ob + 5 * room}};
		MPI_Barrier(MPI_COMM_WORLD);
		if (bp_mpi_step(mpi, &again) != BP_OK) {
			fprintf(stderr, "bp_perf_mpi: %s\n", bp_mpi_last_error(mpi));
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
		s = bp_mpi_last_stats(mpi);
		stats_row(&s, &steady_rows[run * FIELDS]);
		free(oid);
		free(ob);
		bp_mpi_destroy(mpi);
	}
	median_rows(first_rows, a->runs, row);
	write_rows(csv, name, dims, gen.n, ranks, a->threads, "first", row);
	median_rows(steady_rows, a->runs, row);
	write_rows(csv, name, dims, gen.n, ranks, a->threads, "steady", row);
	free(first_rows);
	free(steady_rows);
	free(ids);
	bp_scene_destroy(scene);
	return 0;
}

int main(int argc, char **argv)
{
	int provided = 0;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	bench_args a = {.scenes = "uniform:3,clustered:3,mixed:3", .n_per_rank = 100000, .runs = 3, .threads = 1};
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--scenes") == 0)
			a.scenes = argv[i + 1];
		else if (strcmp(argv[i], "--n-per-rank") == 0)
			a.n_per_rank = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--runs") == 0)
			a.runs = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--threads") == 0)
			a.threads = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--csv") == 0)
			a.csv = argv[i + 1];
		else {
			fprintf(stderr, "usage: mpirun -np R bp_perf_mpi [--scenes uniform:3,...] [--n-per-rank N] [--runs K] "
							"[--threads T] [--csv FILE]\n");
			MPI_Finalize();
			return 1;
		}
	}
	if (a.runs < 1 || a.n_per_rank < 1) {
		fprintf(stderr, "bp_perf_mpi: --runs and --n-per-rank must be >= 1\n");
		MPI_Finalize();
		return 1;
	}
	int rank = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	FILE *csv = stdout;
	if (rank == 0 && a.csv && !(csv = fopen(a.csv, "a"))) {
		perror(a.csv);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	if (rank == 0 && ftell(csv) <= 0) {
		fputs("scene,dims,n,ranks,threads,phase,rank", csv);
		for (int f = 0; f < FIELDS; ++f)
			fprintf(csv, ",%s", field_names[f]);
		fputc('\n', csv);
	}
	char *scenes = strdup(a.scenes);
	int code = 0;
	for (char *save = NULL, *item = strtok_r(scenes, ",", &save); item && !code; item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':');
		int dims = colon ? atoi(colon + 1) : 3;
		if (colon)
			*colon = '\0';
		code = run_scene(&a, item, dims, csv);
	}
	free(scenes);
	if (rank == 0 && csv != stdout)
		fclose(csv);
	MPI_Finalize();
	return code;
}
