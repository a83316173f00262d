// SPDX-License-Identifier: MIT
// Test fixtures: one temporary directory per test (Criterion runs each test in
// its own process), paths inside it, and whole-file reads.
#ifndef BP_TEST_TMPFILES_H
#define BP_TEST_TMPFILES_H

#include <stddef.h>

/// The current test's directory, made by test_tmp_dir_make.
extern char test_tmp_dir[64];

/// Makes /tmp/<prefix>XXXXXX; call from a suite's .init.
void test_tmp_dir_make(const char *prefix);
/// Removes the directory and everything under it; call from a suite's .fini.
void test_tmp_dir_remove(void);
/// Path of `name` in the test's directory, valid for the whole test.
const char *test_tmp_path(const char *name);
/// The whole file, NUL-terminated (free it); asserts that it can be read.
char *test_read_file(const char *path, size_t *size);

#endif
