// SPDX-License-Identifier: MIT
// A status line on a terminal, rewritten in place, so a long command shows where it is while
// its output, and anything that reads stderr from a pipe or a file, stays as it was.
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <stdarg.h>
#include <unistd.h>

FILE *cli_status_stream(FILE *err)
{
	int fd = fileno(err);
	return fd >= 0 && isatty(fd) == 1 ? err : NULL;
}

void cli_status_show(FILE *to, const char *format, ...)
{
	if (!to)
		return;
	va_list args;
	va_start(args, format);
	fputc('\r', to);
	vfprintf(to, format, args);
	va_end(args);
	fputs("\033[K", to); // clears what a longer previous line left behind
	fflush(to);
}

void cli_status_clear(FILE *to)
{
	if (!to)
		return;
	fputs("\r\033[K", to);
	fflush(to);
}
