// SPDX-License-Identifier: MIT
// Memory sizes for --max-memory: parsing SIZE, and how much memory this process may have.
#define _DEFAULT_SOURCE // _SC_PHYS_PAGES
#include "cli.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

bool cli_parse_size(const char *command, const cli_option *option, size_t *bytes, FILE *err)
{
	if (!option->seen)
		return true;
	const char *text = option->value;
	uint64_t value = 0;
	const char *c = text;
	bool ok = *c >= '0' && *c <= '9';
	for (; ok && *c >= '0' && *c <= '9'; ++c) {
		unsigned digit = (unsigned)(*c - '0');
		ok = value <= (UINT64_MAX - digit) / 10;
		value = value * 10 + digit;
	}
	int shift = 0;
	if (ok && *c) {
		static const char suffixes[] = "KMG";
		const char *suffix = strchr(suffixes, toupper((unsigned char)*c++));
		ok = suffix != NULL;
		shift = ok ? 10 * (int)(suffix - suffixes + 1) : 0;
	}
	ok = ok && *c == '\0' && value <= (SIZE_MAX >> shift);
	if (!ok) {
		fprintf(err, "bp %s: %s: expected a size in bytes with an optional K, M or G (powers of 1024), "
			     "such as 800M; got '%s'\n", command, option->name, text);
		return false;
	}
	*bytes = (size_t)value << shift;
	return true;
}

uint64_t cli_memory_available(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t available = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : UINT64_MAX;
	struct rlimit limit;
	if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < available)
		available = limit.rlim_cur;
	return available;
}
