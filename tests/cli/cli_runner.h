// SPDX-License-Identifier: MIT
// Runs the `bp` tool in-process (bp_cli_main) and captures what it prints, for the CLI suites.
#ifndef BP_TEST_CLI_RUNNER_H
#define BP_TEST_CLI_RUNNER_H

typedef struct cli_result {
	int code;
	char *out; ///< everything written to stdout
	char *err; ///< everything written to stderr
} cli_result;

/// bp with argv[1..argc-1] as given (argv[0] is ignored).
cli_result run_bp_args(int argc, const char **argv);
/// bp ARG... (NULL-terminated); use the BP macro.
cli_result run_bp(const char *first, ...);
#define BP(...) run_bp(__VA_ARGS__, (const char *)0)

void result_free(cli_result *r);
/// Asserts the exit code; on failure shows what the tool said.
void expect_code(const cli_result *r, int code, const char *what);

/// In one line [line, end) of the tool's output: the text after " key=" (or "key=" at
/// the start), or NULL.
const char *cli_field(const char *line, const char *end, const char *key);
/// The number after " key=" in line [line, end), which must hold one.
double cli_number(const char *line, const char *end, const char *key);

#endif
