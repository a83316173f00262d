// SPDX-License-Identifier: MIT
// `bp` entry point: picks the command and hands it the rest of the arguments.
#include "cli.h"

#include <string.h>

typedef struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv, FILE *out, FILE *err);
} cli_command;

static const cli_command commands[] = {
	{"gen", cli_gen},
	{"pairs", cli_pairs},
	{"verify", cli_verify},
	{"frames", cli_frames},
	{"help", cli_help},
};

/// Named in DESIGN §8 but not in this build yet: a clear message instead of "unknown command".
static const char *const planned_commands[] = {"bench", "render"};

int bp_cli_main(int argc, char **argv, FILE *out, FILE *err)
{
	if (argc < 2) {
		cli_usage(NULL, err);
		return CLI_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		cli_usage(NULL, out);
		return CLI_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i)
		if (strcmp(name, commands[i].name) == 0)
			return commands[i].run(argc, argv, out, err);
	for (size_t i = 0; i < sizeof planned_commands / sizeof planned_commands[0]; ++i) {
		if (strcmp(name, planned_commands[i]) == 0) {
			fprintf(err, "bp: '%s' is not built yet\n", name);
			return CLI_EXIT_USAGE;
		}
	}
	fprintf(err, "bp: unknown command '%s'\n\n", name);
	cli_usage(NULL, err);
	return CLI_EXIT_USAGE;
}
