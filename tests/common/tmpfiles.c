// SPDX-License-Identifier: MIT
// Temporary directories and file reads for the CLI suites.
#define _XOPEN_SOURCE 700 // nftw, mkdtemp
#include "tmpfiles.h"

#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TMP_PATHS 64

char test_tmp_dir[64];

void test_tmp_dir_make(const char *prefix)
{
	snprintf(test_tmp_dir, sizeof test_tmp_dir, "/tmp/%sXXXXXX", prefix);
	cr_assert_not_null(mkdtemp(test_tmp_dir));
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(path);
}

void test_tmp_dir_remove(void)
{
	nftw(test_tmp_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *test_tmp_path(const char *name)
{
	static char paths[TMP_PATHS][256];
	static int next;
	cr_assert_lt(next, TMP_PATHS, "too many temporary paths in one test");
	char *p = paths[next++];
	snprintf(p, sizeof paths[0], "%s/%s", test_tmp_dir, name);
	return p;
}

char *test_read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long length = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *data = malloc((size_t)length + 1);
	cr_assert_not_null(data);
	cr_assert_eq(fread(data, 1, (size_t)length, f), (size_t)length);
	data[length] = '\0';
	fclose(f);
	*size = (size_t)length;
	return data;
}
