// SPDX-License-Identifier: MIT
// Output files that never destroy what is not ours, for every writer of bp and bp_scene: a
// regular file (or a new path) is written to a temporary file beside it and renamed over it only
// once everything is written; anything else (a device, a FIFO, a terminal, /dev/stdout) is
// written in place and never removed.
#ifndef BP_OUTPUT_FILE_H
#define BP_OUTPUT_FILE_H

#include <stdbool.h>
#include <stdio.h>

#define BP_OUTPUT_MESSAGE_MAX 1024

/// One output file between bp_output_open and bp_output_commit or bp_output_abort.
///
/// A path that is a regular file or does not exist yet is replaced whole: the bytes go to a
/// new temporary file in the same directory (so the rename is atomic), created with the
/// target's mode (and owner, where allowed) or as fopen would create it. A symlink is followed
/// to the name it leads to, so the link stays and what it points to is replaced. A regular
/// file we may not write is refused, as fopen would refuse it.
///
/// Anything else is written in place, as fopen(path, "wb") opens it: character and block
/// devices, FIFOs and sockets. A descriptor link of /proc (/dev/stdout, /dev/fd/N) names an
/// open file rather than a place: one of this process's own descriptors is written through a
/// copy of it, at its offset and in its append mode, so `-o /dev/stdout >> log` appends.
///
/// The only name ever removed is the temporary file this module created.
typedef struct bp_output {
	FILE *file; ///< write here between open and commit/abort; NULL otherwise
	int error;  ///< errno of the last failure, 0 when none
	/// After a failure: "cannot write 'PATH': REASON", with " (a link to 'TARGET')" after
	/// PATH when a symlink led elsewhere. Empty when nothing failed.
	char message[BP_OUTPUT_MESSAGE_MAX];
	// Private to output_file.c.
	const char *path; ///< as given (not copied: it must outlive the output)
	char *target;     ///< the name the temporary file is renamed to; NULL when in place
	char *temp;       ///< the temporary file; NULL when in place
} bp_output;

/// Checks, creating and opening nothing, that bp_output_open(path) would find a writable
/// place: for a fast failure before long work. False with out->message set otherwise.
/// `out` holds nothing afterwards either way.
bool bp_output_check(bp_output *out, const char *path);

/// Opens `path` for output. Blocks on a FIFO until a reader opens it. On success write to
/// out->file, then call bp_output_commit or bp_output_abort exactly once. On failure returns
/// false with out->message set, has created nothing, and `out` holds nothing.
bool bp_output_open(bp_output *out, const char *path);

/// Flushes and closes the file, then renames the temporary file over the target. False (with
/// out->message) when any of it fails: the temporary file is removed and the target is as it
/// was; a file written in place keeps what reached it. `out` holds nothing afterwards.
bool bp_output_commit(bp_output *out);

/// Gives the output up: closes the file and removes the temporary file, so the target is as it
/// was. `error` (an errno value, such as a failed fwrite's) fills out->message; 0 leaves it empty
/// for a failure that lies elsewhere. `out` holds nothing afterwards.
void bp_output_abort(bp_output *out, int error);

#endif
