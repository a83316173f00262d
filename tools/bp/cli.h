// SPDX-License-Identifier: MIT
// The `bp` command-line tool as a library (bp_cli), so tests drive it in-process.
// Shared pieces: exit codes, option parsing, scene loading into a world.
#ifndef BP_CLI_H
#define BP_CLI_H

#include <broadphase/broadphase.h>
#include <bp_scene.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/// Exit codes (docs/design.md "Command line"). Scripts depend on them; append only.
enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_USAGE = 1,    ///< unknown command/flag, missing value, bad number or name
	CLI_EXIT_INPUT = 2,    ///< scene file unreadable or malformed
	CLI_EXIT_RESOURCE = 3, ///< out of memory, output file not writable
	CLI_EXIT_MISMATCH = 4, ///< `bp verify`, `bp bench`, `bp frames --replay`: pairs that differ
};

/// The program named at the start of every diagnostic of the shared pieces below:
/// "bp" unless a tool built on them (bp-mpi) sets its own, once, before parsing.
extern const char *cli_program;

/// Runs `bp` with argv[0] = "bp". Writes results to `out` and diagnostics to
/// `err`; returns the exit code. Never exits the process.
int bp_cli_main(int argc, char **argv, FILE *out, FILE *err);

int cli_gen(int argc, char **argv, FILE *out, FILE *err);
int cli_pairs(int argc, char **argv, FILE *out, FILE *err);
int cli_verify(int argc, char **argv, FILE *out, FILE *err);
int cli_frames(int argc, char **argv, FILE *out, FILE *err);
int cli_bench(int argc, char **argv, FILE *out, FILE *err);
int cli_render(int argc, char **argv, FILE *out, FILE *err);
int cli_record(int argc, char **argv, FILE *out, FILE *err);
extern const char cli_frames_usage[]; ///< `bp help frames`, kept next to the command
/// `bp help [COMMAND]`.
int cli_help(int argc, char **argv, FILE *out, FILE *err);
/// Usage of one command ("gen", "pairs", ...), or of the whole tool for NULL.
/// Returns false when the command is unknown.
bool cli_usage(const char *command, FILE *to);

// ---- option parsing (cli_args.c) ------------------------------------------

/// One option of a command. `name` is "--long" or "-s". Flags take no value;
/// the others take the next argument or the text after '='.
typedef struct cli_option {
	const char *name;
	bool takes_value;
	bool seen;         ///< set by cli_parse
	const char *value; ///< set by cli_parse for value options (last one wins)
} cli_option;

#define CLI_VALUE(option_name) {.name = (option_name), .takes_value = true}
#define CLI_FLAG(option_name) {.name = (option_name)}

/// Parses argv[first..argc) of `command` into `options` and positional
/// arguments (at most max_positional). "--help"/"-h" set *help. On a usage
/// error prints "PROGRAM COMMAND: ..." to err and returns CLI_EXIT_USAGE.
/// cli_parse for a command that takes one scene FILE: `--help` prints the
/// command's usage to out and sets *help; no FILE is a usage error.
int cli_parse_scene_command(const char *command, int argc, char **argv, cli_option *options, int option_count,
	const char **scene_path, bool *help, FILE *out, FILE *err);
int cli_parse(const char *command, int argc, char **argv, int first, cli_option *options, int option_count,
	const char **positional, int max_positional, int *positional_count, bool *help, FILE *err);

/// Parses a decimal integer in [lo, hi]; on failure prints
/// "PROGRAM COMMAND: FLAG: expected an integer in [lo, hi], got 'TEXT'" and returns false.
bool cli_parse_u64(const char *command, const char *flag, const char *text, uint64_t lo, uint64_t hi,
	uint64_t *out, FILE *err);

/// Parses a plain decimal number (digits, '.', an exponent; no sign, spaces, hex, inf or
/// nan) in [lo, hi], or in (lo, hi] when lo_open. On failure prints
/// "PROGRAM COMMAND: FLAG: expected EXPECTED, got 'TEXT'" and returns false.
bool cli_parse_decimal(const char *command, const char *flag, const char *text, double lo, double hi, bool lo_open,
	const char *expected, double *out, FILE *err);

/// Parses an algorithm name given to `flag`; on failure prints
/// "PROGRAM COMMAND: FLAG: unknown algorithm 'TEXT'" and the known names.
bool cli_parse_algorithm(const char *command, const char *flag, const char *text, bp_algorithm *out, FILE *err);
/// `--threads T` (0 = all cores, at most BP_MAX_THREADS) into *threads when the option was given.
bool cli_parse_threads(const char *command, const cli_option *option, int *threads, FILE *err);
/// `--frame K` (a frame of a moving scene) into *frame when the option was given.
bool cli_parse_frame(const char *command, const cli_option *option, uint32_t *frame, FILE *err);

// ---- memory sizes (cli_memory.c) ------------------------------------------

/// `--max-memory SIZE` into *bytes when the option was given: a decimal count of
/// bytes with an optional K, M or G suffix (powers of 1024); 0 = no limit.
bool cli_parse_size(const char *command, const cli_option *option, size_t *bytes, FILE *err);
/// The most memory this process may have: physical memory, or less under ulimit -v.
uint64_t cli_memory_available(void);

// ---- scenes and worlds (cli_scene.c) --------------------------------------

/// Reads a scene; on failure prints "PROGRAM: file:line: reason" and returns the exit code.
int cli_load_scene(const char *path, bp_scene **out, FILE *err);

/// Creates a world holding frame `frame` of the scene: dense index i is scene
/// entity i (nothing is ever destroyed), so scene->ids maps dense -> scene id.
int cli_world_from_scene(const char *command, const bp_scene *scene, uint32_t frame, bp_algorithm algorithm,
	int threads, bp_world **out, FILE *err);

/// As cli_world_from_scene, with the settings of `def` (bp_world_def_default() and
/// changes); its dims and capacity are taken from the scene.
int cli_world_from_scene_def(const char *command, const bp_scene *scene, uint32_t frame, const bp_world_def *def,
	bp_world **out, FILE *err);

// ---- traces (cli_trace.c) -------------------------------------------------

/// True when the file starts with the trace magic (docs/trace.md); false for scenes and
/// for files that cannot be read (the scene reader then says why).
bool cli_is_trace(const char *path);
/// Opens a trace; on failure prints "PROGRAM COMMAND: <why>" and returns the exit code.
int cli_open_trace(const char *command, const char *path, bp_trace_reader **out, FILE *err);
/// The world settings `def`, dims taken from the trace and capacity from the entities the
/// reader holds now (none before the first frame), never from a count the trailer claims.
bp_world_def cli_trace_world_def(const bp_trace_reader *reader, const bp_world_def *def);
/// A world holding frame `frame` of a trace, read through its index and nearest keyframe;
/// *ids (free it) maps the world's dense indices to trace ids.
int cli_world_from_trace(const char *command, const char *path, uint32_t frame, const bp_world_def *def,
	bp_world **out, uint32_t **ids, FILE *err);
/// `bp frames --replay FILE` (cli_replay.c): the trace through a plain world, an incremental
/// world and the frame scheduler, every frame checked to agree byte for byte.
int cli_replay(const char *path, bp_algorithm algorithm, int threads, float skin, bool verbose, FILE *out, FILE *err);
/// `bp verify` on a trace (cli_verify_trace.c): every frame, or frame `frame` when `one`,
/// of each checked algorithm's world and an incremental world against the sweep of cli_sweep.h.
int cli_verify_trace(const char *path, const bool *checked, bool all, int threads, bool one, uint32_t frame,
	FILE *out, FILE *err);

// ---- a status line on a terminal (cli_status.c) ---------------------------

/// `err` when it is a terminal, else NULL: where a long command shows its progress.
FILE *cli_status_stream(FILE *err);
/// Rewrites the status line on `to` (printf format); nothing when `to` is NULL.
void cli_status_show(FILE *to, const char *format, ...) __attribute__((format(printf, 2, 3)));
/// Clears the status line, before the command prints its results.
void cli_status_clear(FILE *to);

/// Exit code for a library status from loading or stepping.
int cli_exit_for_status(bp_status status);

/// Monotonic clock in nanoseconds.
uint64_t cli_now_ns(void);
/// Median of `count` (> 0) nanosecond times, in ms; sorts the array.
double cli_median_ms(uint64_t *ns, size_t count);

#endif
