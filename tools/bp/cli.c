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
	{"bench", cli_bench},
	{"render", cli_render},
	{"record", cli_record},
	{"help", cli_help},
};

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
	fprintf(err, "bp: unknown command '%s'\n\n", name);
	cli_usage(NULL, err);
	return CLI_EXIT_USAGE;
}
