// SPDX-License-Identifier: MIT
// Runs the tests registered through the Criterion stand-in, in registration order.
#include <string.h>

#include "criterion/criterion.h"

#define MAX_TESTS 256

typedef struct registered_test {
	const char *suite, *name;
	tsan_test_fn *fn;
} registered_test;

static registered_test tests[MAX_TESTS];
static int test_count;
static const registered_test *current;

void tsan_register_test(const char *suite, const char *name, tsan_test_fn *fn)
{
	if (test_count == MAX_TESTS) {
		fprintf(stderr, "tsan runner: more than %d tests\n", MAX_TESTS);
		exit(2);
	}
	tests[test_count++] = (registered_test){suite, name, fn};
}

_Noreturn void tsan_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "[FAIL] %s::%s: %s:%d: assertion failed: %s\n", current ? current->suite : "?",
		current ? current->name : "?", file, line, what);
	exit(1);
}

int main(int argc, char **argv)
{
	// Optional argument: run only tests whose name contains it.
	const char *filter = argc > 1 ? argv[1] : NULL;
	int ran = 0;
	for (int i = 0; i < test_count; ++i) {
		if (filter && !strstr(tests[i].name, filter))
			continue;
		current = &tests[i];
		fprintf(stderr, "[RUN ] %s::%s\n", tests[i].suite, tests[i].name);
		tests[i].fn();
		fprintf(stderr, "[PASS] %s::%s\n", tests[i].suite, tests[i].name);
		++ran;
	}
	printf("%d passed, 0 failed\n", ran);
	return ran > 0 ? 0 : 1;
}
