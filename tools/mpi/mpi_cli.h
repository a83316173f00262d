// SPDX-License-Identifier: MIT
// `bp-mpi`: the bp tool's pairs over many processes. What its commands share.
#ifndef BP_MPI_CLI_H
#define BP_MPI_CLI_H

#include <broadphase/mpi.h>
#include <bp_scene.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"

/// Options of both commands.
typedef struct mpi_cli_args {
	const char *scene_path;
	const char *out_path;
	bp_algorithm algorithm;
	int threads;
	uint32_t runs;
	uint32_t frame;
	bool stats;
} mpi_cli_args;

/// A scene on every rank and this rank's share of it: entities [first, first + count).
typedef struct mpi_cli_scene {
	bp_scene *scene;
	uint32_t first, count;
	uint64_t *ids; ///< this rank's ids, widened
} mpi_cli_scene;

/// Parses a command's options as `bp pairs` does; only rank 0 prints usage errors (every
/// rank finds them, so every rank stops).
int mpi_cli_parse(const char *command, int argc, char **argv, mpi_cli_args *a, FILE *out, FILE *err, bool *help);
/// Collective: the worst exit code of all ranks, so every rank stops together.
int mpi_cli_agree(int code);
/// Collective: every rank reads the scene and takes its contiguous slice of entities.
int mpi_cli_load(const char *path, mpi_cli_scene *out, FILE *err);
/// Collective: mpi_cli_parse, then mpi_cli_load of the scene named. CLI_EXIT_OK with
/// *help false: go on (unload the scene after); otherwise return the code.
int mpi_cli_start(const char *command, int argc, char **argv, mpi_cli_args *a, mpi_cli_scene *scene, FILE *out,
	FILE *err, bool *help);
void mpi_cli_unload(mpi_cli_scene *s);
/// This rank's slice of one frame, as bp_mpi_step takes it.
bp_mpi_entities mpi_cli_entities(const mpi_cli_scene *s, uint32_t frame);
/// Collective: creates the decomposition with the scene's dims and the options.
int mpi_cli_create(const mpi_cli_args *a, int dims, bp_mpi **out, FILE *err);
/// Collective: gathers the pairs on rank 0 and writes "lo hi" lines there, sorted by (lo, hi),
/// whole or not at all.
int mpi_cli_write_pairs(bp_mpi *mpi, const char *path, FILE *err);
/// Prints one line per rank (in rank order, from rank 0) of the last step's bp_mpi_stats.
void mpi_cli_print_stats(bp_mpi *mpi, FILE *out);

int mpi_cli_pairs(int argc, char **argv, FILE *out, FILE *err);
int mpi_cli_frames(int argc, char **argv, FILE *out, FILE *err);

#endif
