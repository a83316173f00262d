// SPDX-License-Identifier: MIT
// Usage text of the tool and of each command; `bp help [COMMAND]`.
#include "cli.h"

#include <string.h>

static const char tool_usage[] =
	"usage: bp COMMAND [ARGS]\n"
	"\n"
	"commands:\n"
	"  gen     generate a scene file\n"
	"  pairs   find the overlapping pairs of a scene file\n"
	"  verify  check algorithms against the brute-force oracle\n"
	"  frames  run moving frames through the frame scheduler with host work\n"
	"  help    show this text, or 'bp help COMMAND'\n"
	"\n"
	"exit codes: 0 success, 1 usage error, 2 bad input file, 3 resource error\n"
	"            (out of memory, output not writable), 4 verify found a difference\n";

static const char gen_usage[] =
	"usage: bp gen --dist NAME --n N [--dims 2|3] [--seed S] [--frames F] [--binary] [--verbose] -o FILE\n"
	"\n"
	"Writes a generated scene (ids 0..N-1) as text, or in the binary form with --binary.\n"
	"The same arguments always give the same file.\n"
	"  --dist NAME   uniform, clustered, mixed, line or boxprune\n"
	"  --n N         number of entities\n"
	"  --dims D      2 or 3 (default 3)\n"
	"  --seed S      random seed (default 1)\n"
	"  --frames F    frames of motion (default 1)\n"
	"  --verbose     say what was written, on stderr\n";

static const char pairs_usage[] =
	"usage: bp pairs FILE [--algo NAME] [--threads T] [--runs R] [--frame K] [-o PAIRS] [--stats]\n"
	"\n"
	"Prints one line:\n"
	"  pairs=<count> checksum=<16 hex> algo=<algorithm that ran> threads=<T> ms=<median step time>\n"
	"  --algo NAME   auto (default), brute, or another built-in algorithm\n"
	"  --threads T   worker threads, 0 = all cores (default 0)\n"
	"  --runs R      steps to time; ms is their median (default 1). Loading is not timed.\n"
	"  --frame K     frame of a moving scene (default 0)\n"
	"  -o PAIRS      write one \"lo hi\" line of scene ids per pair, in the library's order\n"
	"  --stats       print a second line with the step's statistics as key=value\n";

static const char verify_usage[] =
	"usage: bp verify FILE [--algo NAME|all] [--threads T] [--frame K]\n"
	"\n"
	"Compares each algorithm's pair set with brute force, one line per algorithm:\n"
	"\"<algo> ok pairs=N\" or the first difference. Exits 0 iff every one matched, 4 otherwise.\n"
	"  --algo NAME   one algorithm, or all (default): every built-in one except brute\n"
	"  --threads T   worker threads, 0 = all cores (default 0)\n"
	"  --frame K     frame of a moving scene (default 0)\n";

static const char help_usage[] = "usage: bp help [COMMAND]\n";

bool cli_usage(const char *command, FILE *to)
{
	const char *text = NULL;
	if (!command)
		text = tool_usage;
	else if (strcmp(command, "gen") == 0)
		text = gen_usage;
	else if (strcmp(command, "pairs") == 0)
		text = pairs_usage;
	else if (strcmp(command, "verify") == 0)
		text = verify_usage;
	else if (strcmp(command, "frames") == 0)
		text = cli_frames_usage;
	else if (strcmp(command, "help") == 0)
		text = help_usage;
	if (!text)
		return false;
	fputs(text, to);
	return true;
}

int cli_help(int argc, char **argv, FILE *out, FILE *err)
{
	if (argc <= 2) {
		cli_usage(NULL, out);
		return CLI_EXIT_OK;
	}
	if (argc > 3) {
		fprintf(err, "bp help: unexpected argument '%s'\n", argv[3]);
		return CLI_EXIT_USAGE;
	}
	if (cli_usage(argv[2], out))
		return CLI_EXIT_OK;
	fprintf(err, "bp help: unknown command '%s'\n\n", argv[2]);
	cli_usage(NULL, err);
	return CLI_EXIT_USAGE;
}
