// SPDX-License-Identifier: MIT
// `bp record` shared by its motions: the parsed options, and the trace writing every motion
// goes through (open, one frame's changes, close and the summary line).
#ifndef BP_CLI_RECORD_H
#define BP_CLI_RECORD_H

#include "cli_physics.h"

typedef struct record_args {
	bp_gen_def gen; ///< n, dims, frames and seed for every motion; the scene for walk
	const cli_physics_model *model; ///< NULL: the random walk of a generated scene
	double moving, churn;           ///< walk only
	uint32_t keyframes;
	const char *path;
} record_args;

/// What a recording wrote, summed over its frames.
typedef struct record_totals {
	uint64_t creates, destroys, moves;
} record_totals;

/// Opens the trace of `args` with `dims` axes; on failure prints why and returns the exit code.
int cli_record_open(const record_args *args, int dims, bp_trace_writer **out, FILE *err);
/// Writes one frame's changes (destroys, creates, moves) and ends the frame.
bp_status cli_record_frame(bp_trace_writer *writer, const cli_changes *changes, record_totals *totals);
/// Closes the trace after its frames went as `status` said, prints
/// "recorded=FILE frames=F n=N dims=D creates=.. destroys=.. moves=..", then `suffix`, and
/// returns the exit code.
int cli_record_close(bp_trace_writer *writer, bp_status status, const record_args *args, uint32_t n, int dims,
	const record_totals *totals, const char *suffix, FILE *out, FILE *err);

/// `bp record --motion pile|rain|crowd`.
int cli_record_physics(const record_args *args, FILE *out, FILE *err);

#endif
