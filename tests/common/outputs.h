// SPDX-License-Identifier: MIT
// Test fixtures for output files: a full disk made by a file size limit, a FIFO with a reader
// thread, small files written and compared, and the names left in a directory.
#ifndef BP_TEST_OUTPUTS_H
#define BP_TEST_OUTPUTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/// Lowers this process's file size limit (RLIMIT_FSIZE) to `bytes` with SIGXFSZ ignored, so a
/// write past it fails with EFBIG like a write to a full disk. Criterion runs each test in its
/// own process, so the limit ends with the test; test_file_size_unlimit lifts it earlier.
/// At least TEST_MIN_FILE_SIZE_LIMIT: LLVM's OpenMP runtime sizes a 1 KiB registration file in
/// /dev/shm when it starts, and exits when that fails.
#define TEST_MIN_FILE_SIZE_LIMIT 4096

void test_file_size_limit(size_t bytes);
void test_file_size_unlimit(void);

/// Writes `text` to `path` (replacing it) and asserts that it worked.
void test_write_text(const char *path, const char *text);
/// Asserts that `path` is a regular file holding exactly `text`.
void test_expect_text(const char *path, const char *text);
/// Number of names in `dir` besides "." and "..".
int test_dir_entry_count(const char *dir);

/// A thread that opens a FIFO for reading and reads from it: everything until the writer
/// closes, or only `keep` bytes before it closes its end early (0 = everything).
typedef struct test_fifo_reader {
	pthread_t thread;
	const char *path;
	size_t keep;
	char *data; ///< what was read, NUL-terminated (free it)
	size_t size;
} test_fifo_reader;

/// Makes a FIFO at `path` and starts its reader; SIGPIPE is ignored so that a writer whose
/// reader left early sees EPIPE.
void test_fifo_reader_start(test_fifo_reader *r, const char *path, size_t keep);
void test_fifo_reader_join(test_fifo_reader *r);

/// Asserts that `path` is (itself, not through a link) a FIFO, a character device or a symlink.
void test_expect_fifo(const char *path);
void test_expect_char_device(const char *path);
void test_expect_symlink_to(const char *path, const char *target);

#endif
