// SPDX-License-Identifier: MIT
// The files `bp` writes (-o of gen, pairs and render): a failed command leaves an existing file,
// a link and a device as they were and names the path and the reason; links stay, FIFOs are
// written in place; nothing is printed as a result before the result is written.
#define _XOPEN_SOURCE 700 // mknod, symlink
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_runner.h"
#include "outputs.h"
#include "tmpfiles.h"

static void make_tmp_dir(void) { test_tmp_dir_make("bp_outputs_"); }

TestSuite(cli_outputs, .init = make_tmp_dir, .fini = test_tmp_dir_remove, .timeout = 60);

/// Asserts exit `code`, nothing on stdout, and "bp COMMAND: cannot write 'PATH'" with the
/// system's reason for `error` on stderr.
static void expect_write_failure(const cli_result *r, int code, const char *command, const char *path, int error)
{
	expect_code(r, code, command);
	cr_assert_str_empty(r->out, "%s printed a result it did not write: %s", command, r->out);
	char want[512];
	snprintf(want, sizeof want, "bp %s: cannot write '%s'", command, path);
	cr_assert_not_null(strstr(r->err, want), "stderr lacks \"%s\": %s", want, r->err);
	cr_assert_not_null(strstr(r->err, strerror(error)), "stderr lacks \"%s\": %s", strerror(error), r->err);
}

/// A device node standing in for /dev/full: one of our own where this process may make one
/// (root), else a link to /dev/full. /dev/full itself is never the path given. Sets *own.
static const char *full_device(bool *own)
{
	struct stat st;
	if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode))
		cr_skip_test("no /dev/full here");
	const char *node = test_tmp_path("full");
	*own = mknod(node, S_IFCHR | 0666, st.st_rdev) == 0;
	if (!*own)
		cr_assert_eq(symlink("/dev/full", node), 0);
	return node;
}

static void expect_full_device_kept(const char *node, bool own)
{
	if (own)
		test_expect_char_device(node);
	else
		test_expect_symlink_to(node, "/dev/full");
	test_expect_char_device("/dev/full");
}

/// The two forms of `bp gen`: text (with --verbose, which reports "wrote" only once it has)
/// and binary.
static const char *const gen_forms[] = {"--verbose", "--binary"};

/// What `bp gen` writes for the small scene of these tests, read from a plain new file.
static char *gen_bytes(const char *binary_flag, size_t *size)
{
	const char *path = test_tmp_path("plain.scene");
	cli_result r = BP("gen", "--dist", "uniform", "--n", "2000", binary_flag, "-o", path);
	expect_code(&r, 0, "bp gen to a new file");
	result_free(&r);
	char *data = test_read_file(path, size);
	cr_assert_eq(unlink(path), 0);
	return data;
}

// ---- bp gen ------------------------------------------------------------------------------

Test(cli_outputs, gen_failure_keeps_the_existing_file)
{
	const char *path = test_tmp_path("old.scene");
	for (int f = 0; f < 2; ++f) {
		test_write_text(path, "precious\n");
		test_file_size_limit(4096); // 2000 entities are about 180 KB of text, 56 KB of binary
		cli_result r = BP("gen", "--dist", "uniform", "--n", "2000", gen_forms[f], "-o", path);
		test_file_size_unlimit();
		expect_write_failure(&r, 3, "gen", path, EFBIG);
		cr_assert_null(strstr(r.err, "wrote"), "%s", r.err);
		result_free(&r);
		test_expect_text(path, "precious\n");
		cr_assert_eq(test_dir_entry_count(test_tmp_dir), 1);
	}
}

Test(cli_outputs, gen_to_a_full_device_keeps_the_device)
{
	bool own;
	const char *node = full_device(&own);
	for (int f = 0; f < 2; ++f) {
		cli_result r = BP("gen", "--dist", "uniform", "--n", "100", gen_forms[f], "-o", node);
		expect_write_failure(&r, 3, "gen", node, ENOSPC);
		result_free(&r);
		expect_full_device_kept(node, own);
	}
}

Test(cli_outputs, gen_through_a_link_replaces_its_target)
{
	const char *target = test_tmp_path("target.scene");
	const char *link = test_tmp_path("link.scene");
	cr_assert_eq(symlink("target.scene", link), 0);
	for (int f = 0; f < 2; ++f) {
		size_t want_size, got_size;
		char *want = gen_bytes(gen_forms[f], &want_size);
		test_write_text(target, "old\n");
		cli_result r = BP("gen", "--dist", "uniform", "--n", "2000", gen_forms[f], "-o", link);
		expect_code(&r, 0, "bp gen through a link");
		result_free(&r);
		test_expect_symlink_to(link, "target.scene");
		char *got = test_read_file(target, &got_size);
		cr_assert(got_size == want_size && memcmp(got, want, want_size) == 0, "%s: the target is not the scene",
			gen_forms[f]);
		cr_assert_eq(test_dir_entry_count(test_tmp_dir), 2);
		free(got);
		free(want);
	}
}

Test(cli_outputs, gen_into_a_fifo_writes_in_place)
{
	const char *fifo = test_tmp_path("fifo");
	size_t want_size;
	char *want = gen_bytes("--verbose", &want_size);
	test_fifo_reader reader;
	test_fifo_reader_start(&reader, fifo, 0);
	cli_result r = BP("gen", "--dist", "uniform", "--n", "2000", "-o", fifo);
	expect_code(&r, 0, "bp gen into a FIFO");
	result_free(&r);
	test_fifo_reader_join(&reader);
	cr_assert(reader.size == want_size && memcmp(reader.data, want, want_size) == 0, "the FIFO got %zu bytes, want %zu",
		reader.size, want_size);
	test_expect_fifo(fifo);
	free(reader.data);
	free(want);
}

Test(cli_outputs, gen_into_a_missing_directory_fails_at_once)
{
	const char *nowhere = test_tmp_path("no-such-dir/out.scene");
	cli_result r = BP("gen", "--dist", "uniform", "--n", "10", "-o", nowhere);
	expect_write_failure(&r, 3, "gen", nowhere, ENOENT);
	result_free(&r);
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 0);
}
