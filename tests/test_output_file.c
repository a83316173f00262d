// SPDX-License-Identifier: MIT
// Output files (tools/output): a regular file is replaced whole or not at all; links, devices,
// FIFOs and descriptor links survive every outcome; each failure names the path and the reason.
#define _XOPEN_SOURCE 700 // symlink, mkfifo, pipe
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output_file.h"
#include "outputs.h"
#include "tmpfiles.h"

static void make_tmp_dir(void) { test_tmp_dir_make("bp_output_"); }

TestSuite(output_file, .init = make_tmp_dir, .fini = test_tmp_dir_remove, .timeout = 30);

/// Opens, writes `text`, commits; returns what commit returned.
static bool write_whole(bp_output *o, const char *path, const char *text)
{
	cr_assert(bp_output_open(o, path), "%s", o->message);
	cr_assert_eq(fputs(text, o->file) >= 0, true);
	return bp_output_commit(o);
}

/// What a writer does: writes, then gives up with the write's errno or commits.
static bool write_or_give_up(bp_output *o, const char *text)
{
	if (fputs(text, o->file) < 0) {
		bp_output_abort(o, errno);
		return false;
	}
	return bp_output_commit(o);
}

/// `count` bytes of a repeating pattern, NUL-terminated.
static char *pattern(size_t count)
{
	char *text = malloc(count + 1);
	cr_assert_not_null(text);
	for (size_t i = 0; i < count; ++i)
		text[i] = (char)('a' + i % 26);
	text[count] = '\0';
	return text;
}

/// Asserts "cannot write 'PATH'" and the system's words for `error` in the message.
static void expect_message(const bp_output *o, const char *path, int error)
{
	char want[512];
	snprintf(want, sizeof want, "cannot write '%s'", path);
	cr_assert_eq(strncmp(o->message, want, strlen(want)), 0, "message '%s' does not start with '%s'", o->message,
		want);
	cr_assert_not_null(strstr(o->message, strerror(error)), "message '%s' lacks '%s'", o->message, strerror(error));
	cr_assert_eq(o->error, error, "errno %d (%s), want %d", o->error, strerror(o->error), error);
}

Test(output_file, new_file_is_written_and_nothing_else_is_left)
{
	const char *path = test_tmp_path("new.txt");
	bp_output o;
	cr_assert(write_whole(&o, path, "one two\n"), "%s", o.message);
	test_expect_text(path, "one two\n");
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 1);
	cr_assert_null(o.file);
	cr_assert_str_empty(o.message);
}

Test(output_file, new_file_gets_the_mode_fopen_gives)
{
	mode_t mask = umask(027);
	const char *path = test_tmp_path("new.txt");
	bp_output o;
	cr_assert(write_whole(&o, path, "x"), "%s", o.message);
	umask(mask);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0640, "mode %o", (unsigned)(st.st_mode & 0777));
}

Test(output_file, existing_file_is_replaced_keeping_its_mode)
{
	const char *path = test_tmp_path("old.txt");
	test_write_text(path, "old contents, longer than the new\n");
	cr_assert_eq(chmod(path, 0604), 0);
	bp_output o;
	cr_assert(write_whole(&o, path, "new\n"), "%s", o.message);
	test_expect_text(path, "new\n");
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0604, "mode %o", (unsigned)(st.st_mode & 07777));
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 1);
}

Test(output_file, abort_leaves_the_existing_file_untouched)
{
	const char *path = test_tmp_path("old.txt");
	test_write_text(path, "precious\n");
	bp_output o;
	cr_assert(bp_output_open(&o, path), "%s", o.message);
	fputs("half of a result", o.file);
	fflush(o.file);
	test_expect_text(path, "precious\n"); // nothing reaches the target before the commit
	bp_output_abort(&o, 0);
	test_expect_text(path, "precious\n");
	cr_assert_str_empty(o.message);
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 1);
	cr_assert_null(o.file);
}

Test(output_file, abort_with_an_error_names_path_and_reason)
{
	const char *path = test_tmp_path("out.txt");
	bp_output o;
	cr_assert(bp_output_open(&o, path), "%s", o.message);
	bp_output_abort(&o, ENOSPC);
	expect_message(&o, path, ENOSPC);
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 0);
}

// A full disk, made by a file size limit: writes past it fail with EFBIG.
Test(output_file, full_disk_leaves_the_existing_file_untouched)
{
	const char *path = test_tmp_path("old.txt");
	test_write_text(path, "precious\n");
	char *big = pattern(1 << 20);
	test_file_size_limit(4096);
	bp_output o;
	cr_assert(bp_output_open(&o, path), "%s", o.message);
	bool written = write_or_give_up(&o, big);
	test_file_size_unlimit();
	cr_assert_not(written, "1 MiB went through a 4 KiB limit");
	expect_message(&o, path, EFBIG);
	test_expect_text(path, "precious\n");
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 1);
	free(big);
}

Test(output_file, symlink_stays_and_its_target_is_replaced)
{
	cr_assert_eq(mkdir(test_tmp_path("sub"), 0700), 0);
	const char *target = test_tmp_path("sub/target.txt");
	const char *link = test_tmp_path("link.txt");
	test_write_text(target, "old\n");
	cr_assert_eq(symlink("sub/target.txt", link), 0); // relative: resolved against the link's directory
	bp_output o;
	cr_assert(write_whole(&o, link, "new\n"), "%s", o.message);
	test_expect_symlink_to(link, "sub/target.txt");
	test_expect_text(target, "new\n");
	cr_assert_eq(test_dir_entry_count(test_tmp_path("sub")), 1);
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 2);
}

Test(output_file, chain_of_symlinks_and_dangling_symlink)
{
	const char *target = test_tmp_path("target.txt");
	cr_assert_eq(symlink(target, test_tmp_path("a")), 0);
	cr_assert_eq(symlink("a", test_tmp_path("b")), 0);
	bp_output o;
	// a -> target.txt does not exist yet: the file is created where the link points.
	cr_assert(write_whole(&o, test_tmp_path("b"), "through two links\n"), "%s", o.message);
	test_expect_symlink_to(test_tmp_path("b"), "a");
	test_expect_symlink_to(test_tmp_path("a"), target);
	test_expect_text(target, "through two links\n");
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 3);
}

Test(output_file, failure_through_a_symlink_keeps_link_and_target)
{
	const char *target = test_tmp_path("target.txt");
	const char *link = test_tmp_path("link.txt");
	test_write_text(target, "precious\n");
	cr_assert_eq(symlink("target.txt", link), 0);
	char *big = pattern(1 << 20);
	test_file_size_limit(4096);
	bp_output o;
	cr_assert(bp_output_open(&o, link), "%s", o.message);
	bool written = write_or_give_up(&o, big);
	test_file_size_unlimit();
	cr_assert_not(written);
	test_expect_symlink_to(link, "target.txt");
	test_expect_text(target, "precious\n");
	cr_assert_not_null(strstr(o.message, "(a link to '"), "%s", o.message);
	expect_message(&o, link, EFBIG);
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 2);
	free(big);
}

Test(output_file, symlink_loop_is_refused_creating_nothing)
{
	const char *a = test_tmp_path("a");
	cr_assert_eq(symlink("b", a), 0);
	cr_assert_eq(symlink("a", test_tmp_path("b")), 0);
	bp_output o;
	cr_assert_not(bp_output_open(&o, a));
	expect_message(&o, a, ELOOP);
	cr_assert_not(bp_output_check(&o, a));
	expect_message(&o, a, ELOOP);
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 2);
}

Test(output_file, missing_directory_and_directory_fail_naming_the_path)
{
	const char *nowhere = test_tmp_path("no-such-dir/out.txt");
	bp_output o;
	cr_assert_not(bp_output_check(&o, nowhere));
	expect_message(&o, nowhere, ENOENT);
	cr_assert_not(bp_output_open(&o, nowhere));
	expect_message(&o, nowhere, ENOENT);
	const char *dir = test_tmp_path("dir");
	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_not(bp_output_open(&o, dir));
	expect_message(&o, dir, EISDIR);
	struct stat st;
	cr_assert_eq(stat(dir, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 1);
}

Test(output_file, read_only_file_is_refused_as_fopen_would)
{
	if (geteuid() == 0)
		cr_skip_test("root may write any file");
	const char *path = test_tmp_path("read-only.txt");
	test_write_text(path, "precious\n");
	cr_assert_eq(chmod(path, 0444), 0);
	bp_output o;
	cr_assert_not(bp_output_check(&o, path));
	expect_message(&o, path, EACCES);
	cr_assert_not(bp_output_open(&o, path));
	expect_message(&o, path, EACCES);
	test_expect_text(path, "precious\n");
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 1);
}

Test(output_file, fifo_is_written_in_place_and_stays)
{
	const char *path = test_tmp_path("fifo");
	char *text = pattern(300000); // more than a pipe holds, so the reader must keep up
	test_fifo_reader reader;
	test_fifo_reader_start(&reader, path, 0);
	bp_output o;
	cr_assert(bp_output_check(&o, path), "%s", o.message); // and does not block: nothing is opened
	cr_assert(write_whole(&o, path, text), "%s", o.message);
	test_fifo_reader_join(&reader);
	cr_assert_eq(reader.size, strlen(text));
	cr_assert_str_eq(reader.data, text);
	test_expect_fifo(path);
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 1);
	free(reader.data);
	free(text);
}

Test(output_file, fifo_whose_reader_leaves_early_stays)
{
	const char *path = test_tmp_path("fifo");
	char *text = pattern(1 << 20);
	test_fifo_reader reader;
	test_fifo_reader_start(&reader, path, 1000);
	bp_output o;
	cr_assert(bp_output_open(&o, path), "%s", o.message);
	cr_assert_not(write_or_give_up(&o, text), "1 MiB went into a FIFO read for 1000 bytes");
	expect_message(&o, path, EPIPE);
	test_fifo_reader_join(&reader);
	cr_assert_eq(reader.size, 1000);
	test_expect_fifo(path);
	free(reader.data);
	free(text);
}

// /dev/full is never given to the module itself: only a link to it, which a wrong removal
// would take instead. The device must still be there afterwards.
Test(output_file, link_to_a_full_device_stays_with_the_device)
{
	struct stat st;
	if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode))
		cr_skip_test("no /dev/full here");
	const char *link = test_tmp_path("full");
	cr_assert_eq(symlink("/dev/full", link), 0);
	bp_output o;
	cr_assert(bp_output_open(&o, link), "%s", o.message);
	fputs("x", o.file);
	cr_assert_not(bp_output_commit(&o));
	expect_message(&o, link, ENOSPC);
	test_expect_symlink_to(link, "/dev/full");
	test_expect_char_device("/dev/full");
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 1);
}

Test(output_file, link_to_dev_null_is_written_in_place)
{
	const char *link = test_tmp_path("null");
	cr_assert_eq(symlink("/dev/null", link), 0);
	bp_output o;
	cr_assert(bp_output_check(&o, link), "%s", o.message);
	cr_assert(write_whole(&o, link, "discarded\n"), "%s", o.message);
	test_expect_symlink_to(link, "/dev/null");
	test_expect_char_device("/dev/null");
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 1);
}

// /dev/fd/N leads through /proc to an open descriptor ("pipe:[123]"): written in place, into
// the descriptor itself.
Test(output_file, descriptor_link_is_written_in_place)
{
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	char path[64];
	snprintf(path, sizeof path, "/dev/fd/%d", fds[1]);
	bp_output o;
	cr_assert(write_whole(&o, path, "through the pipe\n"), "%s", o.message);
	close(fds[1]);
	char got[64] = {0};
	cr_assert_eq(read(fds[0], got, sizeof got - 1), 17);
	cr_assert_str_eq(got, "through the pipe\n");
	close(fds[0]);
}

// A descriptor of our own that holds a regular file: written at its offset, in its append mode,
// never truncated (opening /dev/fd/N anew would truncate it and write over its start).
Test(output_file, descriptor_link_to_a_file_writes_at_the_descriptor)
{
	const char *path = test_tmp_path("log.txt");
	test_write_text(path, "first\n");
	int append = open(path, O_WRONLY | O_APPEND);
	cr_assert_geq(append, 0);
	char link[64];
	snprintf(link, sizeof link, "/dev/fd/%d", append);
	bp_output o;
	cr_assert(write_whole(&o, link, "second\n"), "%s", o.message);
	cr_assert_eq(write(append, "third\n", 6), 6); // the descriptor is still ours and open
	close(append);
	test_expect_text(path, "first\nsecond\nthird\n");

	int plain = open(path, O_WRONLY | O_TRUNC);
	cr_assert_geq(plain, 0);
	cr_assert_eq(write(plain, "head\n", 5), 5);
	snprintf(link, sizeof link, "/dev/fd/%d", plain);
	cr_assert(write_whole(&o, link, "tail\n"), "%s", o.message);
	close(plain);
	test_expect_text(path, "head\ntail\n");
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 1);
}
