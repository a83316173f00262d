// SPDX-License-Identifier: MIT
// bp-mpi's outputs: the gathered pair file on rank 0 and the per-rank statistics lines.
#include "mpi_cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "output_file.h"

int mpi_cli_write_pairs(bp_mpi *mpi, const char *path, FILE *err)
{
	int rank = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	bp_mpi_pair *pairs = NULL;
	size_t count = 0;
	bp_status status = bp_mpi_gather_pairs(mpi, 0, &pairs, &count);
	if (status != BP_OK) {
		if (rank == 0)
			fprintf(err, "bp-mpi pairs: %s\n", bp_mpi_last_error(mpi));
		return cli_exit_for_status(status);
	}
	int code = CLI_EXIT_OK;
	if (rank == 0) {
		bp_output output;
		bool opened = bp_output_open(&output, path), ok = opened;
		for (size_t i = 0; ok && i < count; ++i)
			ok = fprintf(output.file, "%" PRIu64 " %" PRIu64 "\n", pairs[i].lo, pairs[i].hi) > 0;
		if (opened && !ok)
			bp_output_abort(&output, errno ? errno : EIO);
		else if (opened)
			ok = bp_output_commit(&output);
		if (!ok) {
			fprintf(err, "bp-mpi pairs: %s\n", output.message);
			code = CLI_EXIT_RESOURCE;
		}
	}
	bp_mpi_pairs_free(pairs, count);
	return mpi_cli_agree(code);
}

void mpi_cli_print_stats(bp_mpi *mpi, FILE *out)
{
	int rank = 0, ranks = 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	bp_mpi_stats s = bp_mpi_last_stats(mpi);
	uint64_t mine[8] = {s.owned, s.ghosts, s.bytes_sent, s.bytes_received, s.pair_count, s.ns_decompose,
		s.ns_exchange, s.ns_step};
	uint64_t *all = rank == 0 ? malloc((size_t)ranks * sizeof mine) : NULL;
	int ok = rank != 0 || all, all_ok = 0;
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (!all_ok) {
		fprintf(out, "stats: out of memory\n");
		return;
	}
	MPI_Gather(mine, 8, MPI_UINT64_T, all, 8, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	for (int r = 0; rank == 0 && r < ranks; ++r) {
		const uint64_t *v = &all[r * 8];
		fprintf(out,
			"rank=%d owned=%" PRIu64 " ghosts=%" PRIu64 " bytes_sent=%" PRIu64 " bytes_received=%" PRIu64
			" pairs=%" PRIu64 " ns_decompose=%" PRIu64 " ns_exchange=%" PRIu64 " ns_step=%" PRIu64 "\n",
			r, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
	}
	free(all);
}
