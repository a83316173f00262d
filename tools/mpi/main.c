// SPDX-License-Identifier: MIT
// `bp-mpi`: run under mpirun; `bp-mpi pairs SCENE` prints the line `bp pairs SCENE` prints.
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "mpi_cli.h"

static const char usage[] =
	"usage: mpirun -np R bp-mpi pairs  FILE [--algo NAME] [--threads T] [--runs N] [--frame K] [--stats] [-o PAIRS]\n"
	"       mpirun -np R bp-mpi frames FILE [--algo NAME] [--threads T] [--stats]\n"
	"pairs prints pairs=<count> checksum=<16 hex> algo= threads= ms= ranks=: the count and checksum of the\n"
	"union over ranks (equal to `bp pairs FILE`); -o writes every pair, gathered on rank 0, one \"lo hi\"\n"
	"line each in (lo, hi) order; algo and threads are rank 0's. frames steps every frame of a moving\n"
	"scene, entities migrating between ranks, and prints one line per frame. --threads is per rank.\n";

int main(int argc, char **argv)
{
	// Only this thread calls MPI; the local step's OpenMP threads never do.
	int provided = 0;
	cli_program = "bp-mpi";
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	int rank = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	// Only rank 0 prints results; every rank prints its own errors.
	FILE *out = rank == 0 ? stdout : fopen("/dev/null", "w");
	int code = CLI_EXIT_USAGE;
	if (provided < MPI_THREAD_FUNNELED)
		fprintf(stderr, "bp-mpi: the MPI library does not provide MPI_THREAD_FUNNELED\n");
	else if (argc > 1 && strcmp(argv[1], "pairs") == 0)
		code = mpi_cli_pairs(argc, argv, out ? out : stdout, stderr);
	else if (argc > 1 && strcmp(argv[1], "frames") == 0)
		code = mpi_cli_frames(argc, argv, out ? out : stdout, stderr);
	else if (argc > 1 && (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0)) {
		fputs(usage, out ? out : stdout);
		code = CLI_EXIT_OK;
	} else if (rank == 0)
		fputs(usage, stderr);
	if (out && out != stdout)
		fclose(out);
	MPI_Finalize();
	return code;
}
