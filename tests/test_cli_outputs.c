// SPDX-License-Identifier: MIT
// The files `bp` writes (-o of gen, pairs and render, bench's CSV): a failed command leaves an
// existing file, a link and a device as they were and names the path and the reason; links
// stay, FIFOs are written in place; nothing is printed as a result before it is written.
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

// ---- bp pairs and bp render --------------------------------------------------------------

/// A scene of `n` uniform entities written by bp gen (before any file size limit).
static const char *scene_of(const char *n)
{
	const char *path = test_tmp_path("scene.txt");
	cli_result r = BP("gen", "--dist", "uniform", "--n", n, "--dims", "2", "-o", path);
	expect_code(&r, 0, "bp gen");
	result_free(&r);
	return path;
}

/// Boxes 1e38 apart: grid finds no cell size for them, so its step fails (hash and sap do not).
static const char *grid_breaking_scene(void)
{
	const char *path = test_tmp_path("wide.txt");
	test_write_text(path, "# dims=2\n0 0 0 1e-6 1e-6\n1 -3e38 -3e38 -2.9e38 -2.9e38\n2 3e38 3e38 3e38 3e38\n");
	return path;
}

/// What `bp pairs SCENE -o FILE` writes to a plain new file.
static char *pairs_bytes(const char *scene, size_t *size)
{
	const char *path = test_tmp_path("plain.pairs");
	cli_result r = BP("pairs", scene, "-o", path);
	expect_code(&r, 0, "bp pairs to a new file");
	result_free(&r);
	char *data = test_read_file(path, size);
	cr_assert_eq(unlink(path), 0);
	return data;
}

Test(cli_outputs, failed_step_keeps_the_existing_file)
{
	const char *scene = grid_breaking_scene();
	const char *pairs = test_tmp_path("old.pairs");
	const char *image = test_tmp_path("old.png");
	test_write_text(pairs, "precious pairs\n");
	test_write_text(image, "precious image\n");
	cli_result r = BP("pairs", scene, "--algo", "grid", "-o", pairs);
	cr_assert_neq(r.code, 0, "the grid step was expected to fail: %s", r.out);
	cr_assert_str_empty(r.out);
	result_free(&r);
	r = BP("render", scene, "--algo", "grid", "-o", image);
	cr_assert_neq(r.code, 0, "the grid step was expected to fail: %s", r.out);
	cr_assert_str_empty(r.out);
	result_free(&r);
	test_expect_text(pairs, "precious pairs\n");
	test_expect_text(image, "precious image\n");
	// And a scene that does not load.
	const char *bad = test_tmp_path("bad.txt");
	test_write_text(bad, "# dims=2\n1 0 0 x 1\n");
	r = BP("pairs", bad, "-o", pairs);
	expect_code(&r, 2, "a malformed scene");
	result_free(&r);
	test_expect_text(pairs, "precious pairs\n");
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 4);
}

/// Under a 4 KiB file size limit, `bp COMMAND SCENE -o PATH` fails with EFBIG,
/// prints no result and leaves PATH as it was.
static void expect_capped_write_keeps_the_file(const char *command, const char *scene, const char *path)
{
	test_write_text(path, "precious\n");
	test_file_size_limit(4096);
	cli_result r = BP(command, scene, "-o", path);
	test_file_size_unlimit();
	expect_write_failure(&r, 3, command, path, EFBIG);
	result_free(&r);
	test_expect_text(path, "precious\n");
}

// The finding: the summary line was printed, then the write failed part-way and left a
// truncated file behind.
Test(cli_outputs, pairs_write_failure_prints_no_summary_and_keeps_the_file)
{
	// About 3000 pairs, 30 KB.
	expect_capped_write_keeps_the_file("pairs", scene_of("2000"), test_tmp_path("old.pairs"));
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 2);
}

Test(cli_outputs, render_write_failure_prints_nothing_and_keeps_the_file)
{
	// The PNG is about 440 KB, the SVG 140 KB.
	const char *scene = scene_of("2000");
	expect_capped_write_keeps_the_file("render", scene, test_tmp_path("old.png"));
	expect_capped_write_keeps_the_file("render", scene, test_tmp_path("old.svg"));
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 3);
}

Test(cli_outputs, pairs_and_render_to_a_full_device_keep_the_device)
{
	const char *scene = scene_of("500");
	bool own;
	const char *node = full_device(&own);
	cli_result r = BP("pairs", scene, "-o", node);
	expect_write_failure(&r, 3, "pairs", node, ENOSPC);
	result_free(&r);
	expect_full_device_kept(node, own);
	// render picks the format from the name: a link named .svg to the same device.
	const char *svg = test_tmp_path("full.svg");
	cr_assert_eq(symlink("full", svg), 0);
	r = BP("render", scene, "-o", svg);
	expect_write_failure(&r, 3, "render", svg, ENOSPC);
	result_free(&r);
	test_expect_symlink_to(svg, "full");
	expect_full_device_kept(node, own);
}

Test(cli_outputs, pairs_through_a_link_and_into_a_fifo)
{
	const char *scene = scene_of("2000");
	size_t want_size, got_size;
	char *want = pairs_bytes(scene, &want_size);
	const char *target = test_tmp_path("target.pairs");
	const char *link = test_tmp_path("link.pairs");
	test_write_text(target, "old\n");
	cr_assert_eq(symlink("target.pairs", link), 0);
	cli_result r = BP("pairs", scene, "-o", link);
	expect_code(&r, 0, "bp pairs through a link");
	cr_assert_not_null(strstr(r.out, "pairs="));
	result_free(&r);
	test_expect_symlink_to(link, "target.pairs");
	char *got = test_read_file(target, &got_size);
	cr_assert(got_size == want_size && memcmp(got, want, want_size) == 0, "the link's target is not the pairs");
	free(got);

	const char *fifo = test_tmp_path("fifo");
	test_fifo_reader reader;
	test_fifo_reader_start(&reader, fifo, 0);
	r = BP("pairs", scene, "-o", fifo);
	expect_code(&r, 0, "bp pairs into a FIFO");
	result_free(&r);
	test_fifo_reader_join(&reader);
	cr_assert(reader.size == want_size && memcmp(reader.data, want, want_size) == 0, "the FIFO got %zu bytes, want %zu",
		reader.size, want_size);
	test_expect_fifo(fifo);
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 4);
	free(reader.data);
	free(want);
}

/// `-o -` writes the pairs to standard output, the bytes a file would get, with the summary
/// on standard error; no file named "-" appears.
Test(cli_outputs, pairs_to_standard_output)
{
	const char *scene = scene_of("2000");
	size_t want_size;
	char *want = pairs_bytes(scene, &want_size);
	size_t lines = 0;
	for (size_t i = 0; i < want_size; ++i)
		lines += want[i] == '\n';
	cr_assert_gt(lines, 0, "the scene has pairs");
	char home[4096];
	cr_assert_not_null(getcwd(home, sizeof home));
	cr_assert_eq(chdir(test_tmp_dir), 0);
	int entries = test_dir_entry_count(test_tmp_dir);
	cli_result r = BP("pairs", scene, "-o", "-", "--stats");
	expect_code(&r, 0, "bp pairs -o -");
	cr_assert(strlen(r.out) == want_size && memcmp(r.out, want, want_size) == 0,
		"standard output holds %zu bytes, want the %zu of the pairs file", strlen(r.out), want_size);
	char summary[64];
	snprintf(summary, sizeof summary, "pairs=%zu checksum=", lines);
	cr_assert_not_null(strstr(r.err, summary), "the summary goes to standard error: '%s'", r.err);
	cr_assert_not_null(strstr(r.err, "ns_total="), "--stats too: '%s'", r.err);
	result_free(&r);
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), entries, "a file was written instead");
	cr_assert_eq(chdir(home), 0);
	free(want);
}

Test(cli_outputs, missing_directory_fails_before_the_step)
{
	const char *scene = scene_of("100");
	const char *nowhere = test_tmp_path("no-such-dir/out.pairs");
	cli_result r = BP("pairs", scene, "-o", nowhere);
	expect_write_failure(&r, 3, "pairs", nowhere, ENOENT);
	result_free(&r);
	const char *image = test_tmp_path("no-such-dir/out.png");
	r = BP("render", scene, "-o", image);
	expect_write_failure(&r, 3, "render", image, ENOENT);
	result_free(&r);
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 1);
}

// ---- bp bench ----------------------------------------------------------------------------

Test(cli_outputs, bench_csv_write_failure_keeps_the_last_csv)
{
	const char *csv = test_tmp_path("bench-custom.csv");
	test_write_text(csv, "precious\n");
	test_file_size_limit(4096); // 64 rows of about 85 bytes
	cli_result r = BP("bench", "--scenes", "line2,uniform2", "--algos", "sap,brute", "--threads", "1", "--runs", "1",
		"--n", "100,101,102,103,104,105,106,107,108,109,110,111,112,113,114,115", "--out", test_tmp_dir, "--no-plots",
		"--no-progress");
	test_file_size_unlimit();
	expect_write_failure(&r, 3, "bench", csv, EFBIG);
	result_free(&r);
	test_expect_text(csv, "precious\n");
	cr_assert_eq(test_dir_entry_count(test_tmp_dir), 1);
}
