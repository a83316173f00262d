// SPDX-License-Identifier: MIT
// The `bp` tool's limits, run in-process through bp_cli_main: --max-memory on pairs, frames and
// gen (a step past it fails with exit 3; sizes known up front are refused before any work, as
// usage errors), SIZE parsing, and --threads up to BP_MAX_THREADS.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_runner.h"
#include "tmpfiles.h"

static void make_tmp_dir(void) { test_tmp_dir_make("bp_cli_limits_"); }

TestSuite(cli_limits, .init = make_tmp_dir, .fini = test_tmp_dir_remove, .timeout = 120);

/// n entities, ids 0..n-1, all at one point: every pair overlaps.
static const char *write_one_point_scene(uint32_t n)
{
	const char *path = test_tmp_path("one_point.txt");
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "# dims=3 n=%" PRIu32 "\n", n);
	for (uint32_t i = 0; i < n; ++i)
		fprintf(f, "%" PRIu32 " 1 1 1 1 1 1\n", i);
	fclose(f);
	return path;
}

/// docs/design.md "Scene and trace formats" checksum of every pair of ids 0..n-1, written from its definition.
static uint64_t checksum_of_all_pairs(uint32_t n)
{
	uint64_t sum = 0;
	for (uint64_t lo = 0; lo < n; ++lo)
		for (uint64_t hi = lo + 1; hi < n; ++hi) {
			uint64_t z = (lo << 32 | hi) + 0x9E3779B97F4A7C15ull;
			z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
			z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
			sum += z ^ (z >> 31);
		}
	return sum;
}

static void expect_text(const cli_result *r, const char *stream, const char *want)
{
	const char *text = strcmp(stream, "out") == 0 ? r->out : r->err;
	cr_assert(strstr(text, want) != NULL, "no '%s' in %s:\n%s", want, stream, text);
}

// ---- bp pairs --max-memory -------------------------------------------------------

Test(cli_limits, pairs_past_max_memory_exit_3_and_within_it_find_every_pair)
{
	enum { N = 2000 }; // 1,999,000 pairs: 16 MB as they are found
	const char *scene = write_one_point_scene(N);
	const char *algos[] = {"brute", "sap", "grid", "quadtree", "closest"};
	for (size_t i = 0; i < sizeof algos / sizeof algos[0]; ++i) {
		cli_result r = BP("pairs", scene, "--algo", algos[i], "--threads", "2", "--max-memory", "1M");
		expect_code(&r, CLI_EXIT_RESOURCE, algos[i]);
		expect_text(&r, "err", "the pairs need more than memory_limit = 1048576 bytes");
		cr_assert_str_empty(r.out, "a failed step printed a result");
		result_free(&r);
	}
	char want[96];
	snprintf(want, sizeof want, "pairs=%d checksum=%016" PRIx64 " ", N * (N - 1) / 2, checksum_of_all_pairs(N));
	cli_result r = BP("pairs", scene, "--algo", "sap", "--max-memory", "256M");
	expect_code(&r, CLI_EXIT_OK, "within the limit");
	expect_text(&r, "out", want);
	result_free(&r);
	r = BP("pairs", scene, "--algo", "sap", "--max-memory", "0"); // no limit
	expect_code(&r, CLI_EXIT_OK, "--max-memory 0");
	expect_text(&r, "out", want);
	result_free(&r);
}

Test(cli_limits, sizes_are_bytes_or_k_m_g)
{
	const char *scene = write_one_point_scene(3); // 3 pairs: any limit of a few KB holds them
	const char *good[] = {"65536", "64K", "64k", "1M", "1g", "4G"};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
		cli_result r = BP("pairs", scene, "--max-memory", good[i]);
		expect_code(&r, CLI_EXIT_OK, good[i]);
		expect_text(&r, "out", "pairs=3 ");
		result_free(&r);
	}
	const char *bad[] = {"", "M", "-1", "1.5G", "12x", "1KB", " 1", "18446744073709551616", "17179869184G"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
		cli_result r = BP("pairs", scene, "--max-memory", bad[i]);
		expect_code(&r, CLI_EXIT_USAGE, bad[i]);
		expect_text(&r, "err", "bp pairs: --max-memory: expected a size in bytes with an optional K, M or G");
		result_free(&r);
	}
}

// ---- bp gen: the scene's size, checked before any work ------------------------------

Test(cli_limits, gen_refuses_a_scene_larger_than_max_memory)
{
	const char *path = test_tmp_path("scene.txt");
	// 1000 entities x 40 frames x 6 floats + ids: 964,000 + 4,000 bytes, and 3 x 3
	// motion floats per entity: 1,000,000 bytes (976.6 KiB).
	cli_result r = BP("gen", "--dist", "uniform", "--n", "1000", "--frames", "40", "--max-memory", "976K", "-o", path);
	expect_code(&r, CLI_EXIT_USAGE, "past --max-memory");
	expect_text(&r, "err", "needs 976.6 KiB, more than --max-memory (976.0 KiB)");
	cr_assert_neq(access(path, F_OK), 0, "a refused scene was written");
	result_free(&r);
	r = BP("gen", "--dist", "uniform", "--n", "1000", "--frames", "40", "--max-memory", "977K", "-o", path);
	expect_code(&r, CLI_EXIT_OK, "within --max-memory");
	result_free(&r);
	r = BP("gen", "--dist", "uniform", "--n", "10", "--max-memory", "12x", "-o", path);
	expect_code(&r, CLI_EXIT_USAGE, "a bad SIZE");
	expect_text(&r, "err", "bp gen: --max-memory: expected a size in bytes");
	result_free(&r);
}

// ---- bp frames --max-memory ----------------------------------------------------------

Test(cli_limits, frames_past_max_memory_exit_3)
{
	// Clustered 20000: about 200,000 pairs, several MB per frame with the view's arrays.
	cli_result r = BP("frames", "--dist", "clustered", "--n", "20000", "--frames", "3", "--threads", "2",
		"--max-memory", "4M");
	expect_code(&r, CLI_EXIT_RESOURCE, "past --max-memory");
	expect_text(&r, "err", "bp frames: frame 1: out of memory: the pairs need more than --max-memory (4194304 bytes)");
	result_free(&r);
	r = BP("frames", "--dist", "clustered", "--n", "20000", "--frames", "3", "--threads", "2", "--max-memory", "256M");
	expect_code(&r, CLI_EXIT_OK, "within --max-memory");
	expect_text(&r, "out", "frames=3 n=20000 ");
	result_free(&r);
}

Test(cli_limits, frames_refuses_records_larger_than_max_memory_before_frame_1)
{
	// 10^6 frames x 10^5 queries of 8-byte times: 800 GB of records.
	cli_result r = BP("frames", "--n", "1000", "--frames", "1000000", "--queries", "100000");
	expect_code(&r, CLI_EXIT_USAGE, "800 GB of records");
	expect_text(&r, "err", "--n 1000 --frames 1000000 --queries 100000 needs 800040892016 bytes");
	cr_assert_str_empty(r.out, "a frame ran");
	result_free(&r);
	r = BP("frames", "--n", "100000", "--frames", "2", "--max-memory", "1M");
	expect_code(&r, CLI_EXIT_USAGE, "the scene past --max-memory");
	expect_text(&r, "err", "more than --max-memory (1048576 bytes)");
	cr_assert_str_empty(r.out, "a frame ran");
	result_free(&r);
}

// ---- --threads ------------------------------------------------------------------------

Test(cli_limits, threads_up_to_the_maximum)
{
	const char *scene = write_one_point_scene(300);
	char max[16], beyond[16];
	snprintf(max, sizeof max, "%d", BP_MAX_THREADS);
	snprintf(beyond, sizeof beyond, "%d", BP_MAX_THREADS + 1);
	cli_result r = BP("pairs", scene, "--algo", "brute", "--threads", max);
	expect_code(&r, CLI_EXIT_OK, "BP_MAX_THREADS");
	char want[64];
	snprintf(want, sizeof want, "pairs=44850 checksum=%016" PRIx64 " algo=brute threads=%d ", checksum_of_all_pairs(300),
		BP_MAX_THREADS);
	expect_text(&r, "out", want);
	result_free(&r);
	r = BP("pairs", scene, "--threads", beyond);
	expect_code(&r, CLI_EXIT_USAGE, "beyond BP_MAX_THREADS");
	char message[96];
	snprintf(message, sizeof message, "bp pairs: --threads: expected an integer in [0, %d], got '%s'", BP_MAX_THREADS,
		beyond);
	expect_text(&r, "err", message);
	result_free(&r);
}
