// SPDX-License-Identifier: MIT
// Option parsing shared by every command: --flag VALUE, --flag=VALUE, checked integers and names.
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *cli_program = "bp";

static cli_option *find_option(cli_option *options, int count, const char *name, size_t length)
{
	for (int i = 0; i < count; ++i)
		if (strlen(options[i].name) == length && strncmp(options[i].name, name, length) == 0)
			return &options[i];
	return NULL;
}

int cli_parse(const char *command, int argc, char **argv, int first, cli_option *options, int option_count,
	const char **positional, int max_positional, int *positional_count, bool *help, FILE *err)
{
	*positional_count = 0;
	*help = false;
	bool options_done = false;
	for (int i = first; i < argc; ++i) {
		const char *arg = argv[i];
		// "-" alone is a positional (a file name by convention); "--" ends the options.
		if (options_done || arg[0] != '-' || arg[1] == '\0') {
			if (*positional_count == max_positional) {
				fprintf(err, "%s %s: unexpected argument '%s'\n", cli_program, command, arg);
				return CLI_EXIT_USAGE;
			}
			positional[(*positional_count)++] = arg;
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			options_done = true;
			continue;
		}
		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			*help = true;
			continue;
		}
		const char *equals = strchr(arg, '=');
		size_t length = equals ? (size_t)(equals - arg) : strlen(arg);
		cli_option *option = find_option(options, option_count, arg, length);
		if (!option) {
			fprintf(err, "%s %s: unknown option '%.*s' (see '%s help %s')\n", cli_program, command, (int)length, arg,
				cli_program, command);
			return CLI_EXIT_USAGE;
		}
		option->seen = true;
		if (!option->takes_value) {
			if (equals) {
				fprintf(err, "%s %s: %s takes no value\n", cli_program, command, option->name);
				return CLI_EXIT_USAGE;
			}
			continue;
		}
		if (equals) {
			option->value = equals + 1;
		} else if (i + 1 < argc) {
			option->value = argv[++i];
		} else {
			fprintf(err, "%s %s: %s needs a value\n", cli_program, command, option->name);
			return CLI_EXIT_USAGE;
		}
	}
	return CLI_EXIT_OK;
}

bool cli_parse_u64(const char *command, const char *flag, const char *text, uint64_t lo, uint64_t hi,
	uint64_t *out, FILE *err)
{
	// By hand rather than strtoull: strtoull accepts leading spaces, '+' and '-'
	// (wrapping "-1" to 2^64-1), which a range check cannot tell apart.
	uint64_t value = 0;
	bool ok = text[0] != '\0';
	for (const char *c = text; ok && *c; ++c) {
		unsigned digit = (unsigned)(*c - '0');
		if (digit > 9 || value > (UINT64_MAX - digit) / 10)
			ok = false;
		else
			value = value * 10 + digit;
	}
	if (!ok || value < lo || value > hi) {
		fprintf(err, "%s %s: %s: expected an integer in [%llu, %llu], got '%s'\n", cli_program, command, flag,
			(unsigned long long)lo, (unsigned long long)hi, text);
		return false;
	}
	*out = value;
	return true;
}

bool cli_parse_decimal(const char *command, const char *flag, const char *text, double lo, double hi, bool lo_open,
	const char *expected, double *out, FILE *err)
{
	// By hand around strtod, which would accept leading spaces, a sign, hex, "nan" and "inf".
	bool ok = (text[0] >= '0' && text[0] <= '9') || text[0] == '.';
	for (const char *c = text; ok && *c; ++c)
		ok = (*c >= '0' && *c <= '9') || *c == '.' || *c == 'e' || *c == 'E' || *c == '-' || *c == '+';
	char *end = NULL;
	errno = 0;
	double value = ok ? strtod(text, &end) : 0;
	bool in_range = (lo_open ? value > lo : value >= lo) && value <= hi;
	if (!ok || errno != 0 || *end != '\0' || !in_range) {
		fprintf(err, "%s %s: %s: expected %s, got '%s'\n", cli_program, command, flag, expected, text);
		return false;
	}
	*out = value;
	return true;
}

bool cli_parse_algorithm(const char *command, const char *flag, const char *text, bp_algorithm *out, FILE *err)
{
	if (bp_algorithm_from_name(text, out) == BP_OK)
		return true;
	fprintf(err, "%s %s: %s: unknown algorithm '%s' (built in:", cli_program, command, flag, text);
	for (int i = 0; i < BP_ALGO_COUNT; ++i)
		if (bp_algorithm_available((bp_algorithm)i))
			fprintf(err, " %s", bp_algorithm_name((bp_algorithm)i));
	fprintf(err, ")\n");
	return false;
}

int cli_parse_scene_command(const char *command, int argc, char **argv, cli_option *options, int option_count,
	const char **scene_path, bool *help, FILE *out, FILE *err)
{
	int positional_count;
	int code = cli_parse(command, argc, argv, 2, options, option_count, scene_path, 1, &positional_count, help, err);
	if (code != CLI_EXIT_OK)
		return code;
	if (*help) {
		cli_usage(command, out);
		return CLI_EXIT_OK;
	}
	if (positional_count == 0) {
		fprintf(err, "%s %s: missing scene FILE (see '%s help %s')\n", cli_program, command, cli_program, command);
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

bool cli_parse_threads(const char *command, const cli_option *option, int *threads, FILE *err)
{
	uint64_t value;
	if (!option->seen)
		return true;
	if (!cli_parse_u64(command, option->name, option->value, 0, BP_MAX_THREADS, &value, err))
		return false;
	*threads = (int)value;
	return true;
}

bool cli_parse_frame(const char *command, const cli_option *option, uint32_t *frame, FILE *err)
{
	uint64_t value;
	if (!option->seen)
		return true;
	if (!cli_parse_u64(command, option->name, option->value, 0, UINT32_MAX - 1, &value, err))
		return false;
	*frame = (uint32_t)value;
	return true;
}
