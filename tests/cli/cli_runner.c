// SPDX-License-Identifier: MIT
// In-process runs of the `bp` tool with stdout and stderr captured in memory.
#define _POSIX_C_SOURCE 200809L
#include "cli_runner.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

cli_result run_bp_args(int argc, const char **argv)
{
	cli_result r = {0};
	size_t out_size, err_size;
	FILE *out = open_memstream(&r.out, &out_size);
	FILE *err = open_memstream(&r.err, &err_size);
	cr_assert(out && err);
	r.code = bp_cli_main(argc, (char **)argv, out, err);
	fclose(out);
	fclose(err);
	return r;
}

cli_result run_bp(const char *first, ...)
{
	const char *argv[64] = {"bp"};
	int argc = 1;
	va_list args;
	va_start(args, first);
	for (const char *arg = first; arg; arg = va_arg(args, const char *)) {
		cr_assert_lt(argc, 63);
		argv[argc++] = arg;
	}
	va_end(args);
	return run_bp_args(argc, argv);
}

void result_free(cli_result *r)
{
	free(r->out);
	free(r->err);
}

void expect_code(const cli_result *r, int code, const char *what)
{
	cr_assert_eq(r->code, code, "%s: exit %d, want %d\nstdout: %s\nstderr: %s", what, r->code, code, r->out, r->err);
}

const char *cli_field(const char *line, const char *end, const char *key)
{
	size_t k = strlen(key);
	for (const char *p = line; p + k < end; ++p) {
		if ((p == line || p[-1] == ' ') && strncmp(p, key, k) == 0 && p[k] == '=')
			return p + k + 1;
	}
	return NULL;
}

double cli_number(const char *line, const char *end, const char *key)
{
	const char *v = cli_field(line, end, key);
	cr_assert_not_null(v, "no %s= in: %.*s", key, (int)(end - line), line);
	char *stop;
	double x = strtod(v, &stop);
	cr_assert(stop != v && (*stop == ' ' || *stop == '\n' || *stop == '\0'), "%s: not a number", key);
	return x;
}
