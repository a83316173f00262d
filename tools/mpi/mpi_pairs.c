// SPDX-License-Identifier: MIT
// `bp-mpi pairs`: the scene decomposed over the ranks, stepped R times; the summary line of
// `bp pairs` with the count and checksum of the union over ranks.
#include "mpi_cli.h"

#include <inttypes.h>
#include <stdlib.h>

enum { OPT_ALGO, OPT_THREADS, OPT_RUNS, OPT_OUT, OPT_FRAME, OPT_STATS, OPT_COUNT };

/// Options as `bp pairs` reads them; only rank 0 prints usage errors (all ranks find them).
static int parse_args(const char *command, int argc, char **argv, mpi_cli_args *a, FILE *out, FILE *err,
	bool *help)
{
	cli_option options[OPT_COUNT] = {
		[OPT_ALGO] = CLI_VALUE("--algo"), [OPT_THREADS] = CLI_VALUE("--threads"), [OPT_RUNS] = CLI_VALUE("--runs"),
		[OPT_OUT] = CLI_VALUE("-o"), [OPT_FRAME] = CLI_VALUE("--frame"), [OPT_STATS] = CLI_FLAG("--stats"),
	};
	const char *scene_path = NULL;
	int code = cli_parse_scene_command(command, argc, argv, options, OPT_COUNT, &scene_path, help, out, err);
	if (code != CLI_EXIT_OK || *help)
		return code;
	*a = (mpi_cli_args){.scene_path = scene_path, .out_path = options[OPT_OUT].value, .algorithm = BP_ALGO_AUTO,
		.runs = 1, .stats = options[OPT_STATS].seen};
	uint64_t value;
	if (options[OPT_ALGO].seen &&
		!cli_parse_algorithm(command, options[OPT_ALGO].name, options[OPT_ALGO].value, &a->algorithm, err))
		return CLI_EXIT_USAGE;
	if (!cli_parse_threads(command, &options[OPT_THREADS], &a->threads, err))
		return CLI_EXIT_USAGE;
	if (options[OPT_RUNS].seen) {
		if (!cli_parse_u64(command, "--runs", options[OPT_RUNS].value, 1, 100000, &value, err))
			return CLI_EXIT_USAGE;
		a->runs = (uint32_t)value;
	}
	if (!cli_parse_frame(command, &options[OPT_FRAME], &a->frame, err))
		return CLI_EXIT_USAGE;
	return CLI_EXIT_OK;
}

int mpi_cli_parse(const char *command, int argc, char **argv, mpi_cli_args *a, FILE *out, FILE *err, bool *help)
{
	int rank = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	FILE *quiet = fopen("/dev/null", "w");
	int code = parse_args(command, argc, argv, a, out, rank == 0 || !quiet ? err : quiet, help);
	if (quiet)
		fclose(quiet);
	return code;
}

int mpi_cli_start(const char *command, int argc, char **argv, mpi_cli_args *a, mpi_cli_scene *scene, FILE *out,
	FILE *err, bool *help)
{
	*help = false;
	int code = mpi_cli_parse(command, argc, argv, a, out, err, help);
	if (code != CLI_EXIT_OK || *help)
		return code;
	return mpi_cli_load(a->scene_path, scene, err);
}

int mpi_cli_pairs(int argc, char **argv, FILE *out, FILE *err)
{
	mpi_cli_args args;
	mpi_cli_scene scene;
	bool help;
	int code = mpi_cli_start("pairs", argc, argv, &args, &scene, out, err, &help);
	if (code != CLI_EXIT_OK || help)
		return code;
	if (args.frame >= scene.scene->frame_count) {
		fprintf(err, "bp-mpi pairs: --frame: the scene has %u frames, got %u\n", scene.scene->frame_count, args.frame);
		mpi_cli_unload(&scene);
		return CLI_EXIT_USAGE; // every rank read the same scene, so every rank stops here
	}
	bp_mpi *mpi = NULL;
	uint64_t *ns = malloc(args.runs * sizeof *ns);
	code = mpi_cli_agree(ns ? CLI_EXIT_OK : CLI_EXIT_RESOURCE);
	bp_mpi_entities local = mpi_cli_entities(&scene, args.frame);
	for (uint32_t run = 0; code == CLI_EXIT_OK && run < args.runs; ++run) {
		// Each run starts from the rank slices, so it times decomposition and migration too.
		bp_mpi_destroy(mpi);
		mpi = NULL;
		code = mpi_cli_create(&args, scene.scene->dims, &mpi, err);
		if (code != CLI_EXIT_OK)
			break;
		MPI_Barrier(MPI_COMM_WORLD);
		uint64_t t0 = cli_now_ns();
		bp_status status = bp_mpi_step(mpi, &local);
		MPI_Barrier(MPI_COMM_WORLD);
		ns[run] = cli_now_ns() - t0;
		if (status != BP_OK) {
			fprintf(err, "bp-mpi pairs: %s\n", bp_mpi_last_error(mpi));
			code = cli_exit_for_status(status);
		}
	}
	if (code == CLI_EXIT_OK && args.out_path)
		code = mpi_cli_write_pairs(mpi, args.out_path, err);
	if (code == CLI_EXIT_OK) {
		uint64_t count = 0, checksum = 0;
		bp_mpi_pairs_summary(mpi, &count, &checksum);
		int ranks = 1;
		MPI_Comm_size(MPI_COMM_WORLD, &ranks);
		// algo and threads are rank 0's local world's, as `bp pairs` prints its world's.
		bp_mpi_stats stats = bp_mpi_last_stats(mpi);
		fprintf(out, "pairs=%" PRIu64 " checksum=%016" PRIx64 " algo=%s threads=%d ms=%.3f ranks=%d\n", count, checksum,
			bp_algorithm_name(stats.algorithm), stats.thread_count, cli_median_ms(ns, args.runs), ranks);
		if (args.stats)
			mpi_cli_print_stats(mpi, out);
	}
	free(ns);
	bp_mpi_destroy(mpi);
	mpi_cli_unload(&scene);
	return code;
}
