// SPDX-License-Identifier: MIT
// A stand-in for the part of Criterion's API that the scheduler suites use, so the
// same test sources run as plain programs under ThreadSanitizer. Criterion 2.4 aborts
// at start-up under TSan (its boxfort arena collides with TSan's memory layout:
// Snaipe/Criterion#274). Tests run in one process, one after another; a failed
// assertion prints its message and exits non-zero.
#ifndef BP_TSAN_CRITERION_SHIM_H
#define BP_TSAN_CRITERION_SHIM_H

#include <stdio.h>
#include <stdlib.h>

typedef void tsan_test_fn(void);
void tsan_register_test(const char *suite, const char *name, tsan_test_fn *fn);
_Noreturn void tsan_fail(const char *file, int line, const char *what);

// Options such as .timeout are accepted and ignored (ctest's TIMEOUT applies).
#define Test(suite, name, ...)                                                                                  \
	static void suite##_##name(void);                                                                       \
	__attribute__((constructor)) static void suite##_##name##_register(void)                                \
	{                                                                                                       \
		tsan_register_test(#suite, #name, suite##_##name);                                              \
	}                                                                                                       \
	static void suite##_##name(void)

// The message arguments of cr_assert are printf-style; the shim reports the
// failed condition itself, which names what went wrong just as well.
#define cr_assert(cond, ...) ((cond) ? (void)0 : tsan_fail(__FILE__, __LINE__, #cond))
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b))
#define cr_assert_neq(a, b, ...) cr_assert((a) != (b))
#define cr_assert_gt(a, b, ...) cr_assert((a) > (b))
#define cr_assert_geq(a, b, ...) cr_assert((a) >= (b))
#define cr_assert_leq(a, b, ...) cr_assert((a) <= (b))
#define cr_assert_null(p, ...) cr_assert((p) == NULL)
#define cr_assert_not_null(p, ...) cr_assert((p) != NULL)
#define cr_log_info(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr))

#endif
