// SPDX-License-Identifier: MIT
// Output-file fixtures (outputs.h): a file size limit, FIFO readers, file and directory checks.
#define _XOPEN_SOURCE 700 // readlink, lstat, mkfifo
#include "outputs.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tmpfiles.h"

void test_file_size_limit(size_t bytes)
{
	cr_assert_geq(bytes, TEST_MIN_FILE_SIZE_LIMIT);
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit limit;
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &limit), 0);
	limit.rlim_cur = (rlim_t)bytes;
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0, "setrlimit: %s", strerror(errno));
}

void test_file_size_unlimit(void)
{
	struct rlimit limit;
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &limit), 0);
	limit.rlim_cur = limit.rlim_max;
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0, "setrlimit: %s", strerror(errno));
}

void test_write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f, "cannot write %s: %s", path, strerror(errno));
	cr_assert_eq(fputs(text, f) >= 0 && fclose(f) == 0, true, "cannot write %s", path);
}

void test_expect_text(const char *path, const char *text)
{
	struct stat st;
	cr_assert_eq(lstat(path, &st), 0, "%s is gone: %s", path, strerror(errno));
	cr_assert(S_ISREG(st.st_mode), "%s is no longer a regular file (mode %o)", path, (unsigned)st.st_mode);
	size_t size;
	char *data = test_read_file(path, &size);
	cr_assert_eq(size, strlen(text), "%s holds %zu bytes, want %zu", path, size, strlen(text));
	cr_assert_str_eq(data, text, "%s changed", path);
	free(data);
}

int test_dir_entry_count(const char *dir)
{
	DIR *d = opendir(dir);
	cr_assert_not_null(d, "opendir %s: %s", dir, strerror(errno));
	int count = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		count += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return count;
}

static void *read_fifo(void *arg)
{
	test_fifo_reader *r = arg;
	int fd = open(r->path, O_RDONLY);
	if (fd < 0)
		return NULL;
	size_t cap = 1 << 16;
	r->data = malloc(cap + 1);
	while (r->data) {
		size_t want = cap - r->size;
		if (r->keep && r->size + want > r->keep)
			want = r->keep - r->size;
		if (want == 0)
			break;
		ssize_t got = read(fd, r->data + r->size, want);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		r->size += (size_t)got;
		if (r->size == cap) {
			cap *= 2;
			char *bigger = realloc(r->data, cap + 1);
			if (!bigger)
				free(r->data);
			r->data = bigger;
		}
	}
	if (r->data)
		r->data[r->size] = '\0';
	close(fd);
	return NULL;
}

void test_fifo_reader_start(test_fifo_reader *r, const char *path, size_t keep)
{
	signal(SIGPIPE, SIG_IGN);
	*r = (test_fifo_reader){.path = path, .keep = keep};
	cr_assert_eq(mkfifo(path, 0600), 0, "mkfifo %s: %s", path, strerror(errno));
	cr_assert_eq(pthread_create(&r->thread, NULL, read_fifo, r), 0);
}

void test_fifo_reader_join(test_fifo_reader *r)
{
	cr_assert_eq(pthread_join(r->thread, NULL), 0);
	cr_assert_not_null(r->data, "the reader of %s could not open or read it", r->path);
}

static struct stat lstat_ok(const char *path)
{
	struct stat st;
	cr_assert_eq(lstat(path, &st), 0, "%s is gone: %s", path, strerror(errno));
	return st;
}

void test_expect_fifo(const char *path)
{
	cr_assert(S_ISFIFO(lstat_ok(path).st_mode), "%s is no longer a FIFO", path);
}

void test_expect_char_device(const char *path)
{
	cr_assert(S_ISCHR(lstat_ok(path).st_mode), "%s is no longer a character device", path);
}

void test_expect_symlink_to(const char *path, const char *target)
{
	cr_assert(S_ISLNK(lstat_ok(path).st_mode), "%s is no longer a symlink", path);
	char link[4096];
	ssize_t length = readlink(path, link, sizeof link - 1);
	cr_assert_geq(length, 0);
	link[length] = '\0';
	cr_assert_str_eq(link, target, "%s now leads elsewhere", path);
}
