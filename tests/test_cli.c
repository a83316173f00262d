// SPDX-License-Identifier: MIT
// The `bp` tool (docs/design.md "Command line"), run in-process through bp_cli_main: exit codes, the summary line, and
// pair sets and checksums against the oracle for generated and hand-written degenerate scenes.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"
#include "cli_runner.h"
#include "tmpfiles.h"
#include "oracle.h"

static void make_tmp_dir(void) { test_tmp_dir_make("bp_cli_"); }

TestSuite(cli, .init = make_tmp_dir, .fini = test_tmp_dir_remove, .timeout = 60);


static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

// ---- hand-written scenes ---------------------------------------------------------

typedef struct scene_box {
	uint32_t id;
	float min[3], max[3];
} scene_box;

/// Writes the docs/design.md "Scene and trace formats" text form by hand (not through the library's writer).
static void write_scene(const char *path, const scene_box *boxes, uint32_t n, int dims)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "# dims=%d n=%u\n# written by test_cli\n", dims, n);
	for (uint32_t i = 0; i < n; ++i) {
		fprintf(f, "%" PRIu32, boxes[i].id);
		for (int k = 0; k < dims; ++k)
			fprintf(f, " %.9g", boxes[i].min[k]);
		for (int k = 0; k < dims; ++k)
			fprintf(f, " %.9g", boxes[i].max[k]);
		fputc('\n', f);
	}
	fclose(f);
}

// ---- the independent answer: oracle pairs as scene ids, and the checksum of docs/design.md

static uint64_t test_splitmix64(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

typedef struct expected {
	uint64_t *keys; ///< (lo_id << 32) | hi_id, sorted
	size_t count;
	uint64_t checksum;
	uint32_t entities;
} expected;

/// Reads the scene with bp_scene_read and runs the oracle on frame `frame`.
static expected oracle_for_file(const char *path, uint32_t frame)
{
	bp_scene *scene = NULL;
	bp_scene_error error = {0};
	cr_assert_eq(bp_scene_read(path, &scene, &error), BP_OK, "%s", error.message);
	cr_assert_lt(frame, scene->frame_count);
	uint32_t n = scene->count;
	oracle_box *boxes = calloc(n ? n : 1, sizeof *boxes);
	cr_assert_not_null(boxes);
	for (uint32_t i = 0; i < n; ++i) {
		boxes[i].category = 1;
		boxes[i].mask = UINT64_MAX;
		for (int k = 0; k < scene->dims; ++k) {
			boxes[i].min[k] = scene->min[k][(size_t)frame * n + i];
			boxes[i].max[k] = scene->max[k][(size_t)frame * n + i];
		}
	}
	oracle_pairs pairs = oracle_find_pairs(boxes, n, scene->dims);
	expected e = {malloc((pairs.count ? pairs.count : 1) * sizeof(uint64_t)), pairs.count, 0, n};
	cr_assert_not_null(e.keys);
	for (size_t i = 0; i < pairs.count; ++i) {
		uint64_t a = scene->ids[pairs.data[i].lo], b = scene->ids[pairs.data[i].hi];
		e.keys[i] = a < b ? a << 32 | b : b << 32 | a;
		e.checksum += test_splitmix64(e.keys[i]);
	}
	qsort(e.keys, e.count, sizeof(uint64_t), compare_u64);
	oracle_pairs_free(&pairs);
	free(boxes);
	bp_scene_destroy(scene);
	return e;
}

// ---- parsing what the tool printed -------------------------------------------------

typedef struct summary {
	size_t pairs;
	uint64_t checksum;
	char algo[32];
	int threads;
	double ms;
} summary;

/// Parses the summary line and checks it is printed exactly in the form of docs/design.md "Command line", by
/// printing the parsed fields back in that form and comparing the text.
static summary parse_summary(const char *text)
{
	summary s = {0};
	char checksum[17] = {0};
	int end = 0;
	int fields = sscanf(text, "pairs=%zu checksum=%16[0-9a-f] algo=%31[a-z] threads=%d ms=%lf%n", &s.pairs, checksum,
		s.algo, &s.threads, &s.ms, &end);
	cr_assert_eq(fields, 5, "summary line not in the documented form: '%s'", text);
	cr_assert_eq(strlen(checksum), 16, "checksum not 16 hex digits: '%s'", text);
	s.checksum = strtoull(checksum, NULL, 16);
	const char *ms = strstr(text, " ms=") + 4;
	char canonical[256];
	snprintf(canonical, sizeof canonical, "pairs=%zu checksum=%s algo=%s threads=%d ms=%.*s", s.pairs, checksum,
		s.algo, s.threads, (int)(text + end - ms), ms);
	cr_assert_eq(strncmp(text, canonical, (size_t)end), 0, "summary line not in the documented form: '%s'", text);
	const char *dot = strchr(ms, '.');
	cr_assert(dot && dot - ms >= 1 && text + end - dot == 4, "ms not printed with 3 decimals: '%s'", text);
	cr_assert_eq(text[end], '\n', "summary line not terminated: '%s'", text);
	cr_assert_geq(s.ms, 0.0);
	return s;
}

/// Parses a -o file: one "lo hi\n" line per pair, lo < hi, as sorted keys.
static uint64_t *parse_pairs_file(const char *data, size_t size, size_t *count)
{
	size_t lines = 0;
	for (size_t i = 0; i < size; ++i)
		lines += data[i] == '\n';
	uint64_t *keys = malloc((lines ? lines : 1) * sizeof(uint64_t));
	cr_assert_not_null(keys);
	const char *p = data;
	for (size_t i = 0; i < lines; ++i) {
		char *end;
		unsigned long long lo = strtoull(p, &end, 10);
		cr_assert_eq(*end, ' ', "pairs line %zu is not 'lo hi'", i + 1);
		unsigned long long hi = strtoull(end + 1, &end, 10);
		cr_assert_eq(*end, '\n', "pairs line %zu is not 'lo hi'", i + 1);
		cr_assert(lo < hi && hi <= UINT32_MAX, "pairs line %zu: %llu %llu is not lo < hi", i + 1, lo, hi);
		keys[i] = (uint64_t)lo << 32 | hi;
		p = end + 1;
	}
	cr_assert_eq(p, data + size, "pairs file does not end with a newline");
	qsort(keys, lines, sizeof(uint64_t), compare_u64);
	*count = lines;
	return keys;
}

static void expect_same_keys(const uint64_t *got, size_t got_count, const expected *want, const char *what)
{
	cr_assert_eq(got_count, want->count, "%s: %zu pairs, oracle %zu", what, got_count, want->count);
	for (size_t i = 0; i < got_count; ++i)
		cr_assert_eq(got[i], want->keys[i], "%s: pair %zu is %u %u, oracle %u %u", what, i, (uint32_t)(got[i] >> 32),
			(uint32_t)got[i], (uint32_t)(want->keys[i] >> 32), (uint32_t)want->keys[i]);
}

// ---- `bp pairs` against the oracle ------------------------------------------------

static const int thread_counts[] = {1, 2, 3, 5, 8};

/// Runs `bp pairs` over the scene for every thread count and every built-in
/// algorithm (and auto), checking the summary, the checksum and the -o file
/// against the oracle, and that the -o file is byte-identical for every thread
/// count (docs/design.md "Pair rules": same pairs in the same order).
static void check_scene(const char *path, uint32_t frame)
{
	expected want = oracle_for_file(path, frame);
	char frame_text[16];
	snprintf(frame_text, sizeof frame_text, "%u", frame);
	const char *pairs_path = test_tmp_path("pairs.txt");
	for (int algo = 0; algo < BP_ALGO_COUNT; ++algo) {
		if (!bp_algorithm_available((bp_algorithm)algo))
			continue;
		const char *algo_name = bp_algorithm_name((bp_algorithm)algo);
		char *first_file = NULL;
		size_t first_size = 0;
		for (size_t t = 0; t < sizeof thread_counts / sizeof thread_counts[0]; ++t) {
			char threads[16], what[128];
			snprintf(threads, sizeof threads, "%d", thread_counts[t]);
			snprintf(what, sizeof what, "%s frame %u --algo %s --threads %s", path, frame, algo_name, threads);
			cli_result r = BP("pairs", path, "--algo", algo_name, "--threads", threads, "--frame", frame_text, "-o",
				pairs_path);
			expect_code(&r, 0, what);
			summary s = parse_summary(r.out);
			cr_assert_eq(strchr(r.out, '\n')[1], '\0', "%s: more than one line: %s", what, r.out);
			cr_assert_eq(s.pairs, want.count, "%s: pairs=%zu, oracle %zu", what, s.pairs, want.count);
			cr_assert_eq(s.checksum, want.checksum, "%s: checksum %016" PRIx64 ", oracle %016" PRIx64, what,
				s.checksum, want.checksum);
			cr_assert_eq(s.threads, thread_counts[t], "%s: threads=%d", what, s.threads);
			bp_algorithm ran;
			cr_assert_eq(bp_algorithm_from_name(s.algo, &ran), BP_OK, "%s: algo=%s", what, s.algo);
			cr_assert_neq(ran, BP_ALGO_AUTO, "%s: algo= must name the algorithm that ran", what);
			if (algo != BP_ALGO_AUTO)
				cr_assert_eq(ran, (bp_algorithm)algo, "%s: algo=%s", what, s.algo);

			size_t size, count;
			char *data = test_read_file(pairs_path, &size);
			uint64_t *keys = parse_pairs_file(data, size, &count);
			expect_same_keys(keys, count, &want, what);
			free(keys);
			if (!first_file) {
				first_file = data;
				first_size = size;
			} else {
				cr_assert(size == first_size && memcmp(data, first_file, size) == 0,
					"%s: -o output differs from --threads 1", what);
				free(data);
			}
			result_free(&r);
		}
		free(first_file);
	}
	free(want.keys);
}

/// `bp gen` into the test directory; returns the path.
static const char *gen_scene(const char *name, const char *dist, const char *n, const char *dims, const char *frames)
{
	const char *path = test_tmp_path(name);
	cli_result r = BP("gen", "--dist", dist, "--n", n, "--dims", dims, "--seed", "7", "--frames", frames, "-o", path);
	expect_code(&r, 0, "bp gen");
	cr_assert_str_empty(r.out, "bp gen must keep stdout clean");
	result_free(&r);
	return path;
}

Test(cli, generated_scenes_match_oracle)
{
	static const struct {
		const char *dist, *n, *dims;
	} scenes[] = {
		{"uniform", "1500", "3"}, {"uniform", "1500", "2"}, {"clustered", "1200", "3"}, {"clustered", "1200", "2"},
		{"mixed", "1000", "3"}, {"line", "800", "2"}, {"boxprune", "1000", "3"},
	};
	for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; ++i)
		check_scene(gen_scene("scene.txt", scenes[i].dist, scenes[i].n, scenes[i].dims, "1"), 0);
}

Test(cli, moving_scene_frames_match_oracle)
{
	const char *path = gen_scene("moving.txt", "uniform", "600", "3", "3");
	check_scene(path, 0);
	check_scene(path, 2);
	cli_result r = BP("pairs", path, "--frame", "3");
	expect_code(&r, 1, "--frame past the last frame");
	result_free(&r);
}

Test(cli, binary_scene_matches_text_scene)
{
	const char *text = gen_scene("scene.txt", "clustered", "900", "3", "1");
	const char *binary = test_tmp_path("scene.bin");
	cli_result r = BP("gen", "--dist", "clustered", "--n", "900", "--dims", "3", "--seed", "7", "--binary", "-o", binary);
	expect_code(&r, 0, "bp gen --binary");
	result_free(&r);
	check_scene(binary, 0);
	cli_result a = BP("pairs", text, "--threads", "2");
	cli_result b = BP("pairs", binary, "--threads", "2");
	expect_code(&a, 0, "text");
	expect_code(&b, 0, "binary");
	summary sa = parse_summary(a.out), sb = parse_summary(b.out);
	cr_assert_eq(sa.pairs, sb.pairs);
	cr_assert_eq(sa.checksum, sb.checksum);
	result_free(&a);
	result_free(&b);
}

Test(cli, gen_is_deterministic)
{
	const char *a = gen_scene("a.txt", "mixed", "500", "2", "2");
	const char *b = gen_scene("b.txt", "mixed", "500", "2", "2");
	size_t size_a, size_b;
	char *data_a = test_read_file(a, &size_a), *data_b = test_read_file(b, &size_b);
	cr_assert(size_a == size_b && memcmp(data_a, data_b, size_a) == 0, "same arguments, different files");
	free(data_a);
	free(data_b);
}

// Every entity at one point: all n(n-1)/2 pairs. 2D and 3D.
Test(cli, all_entities_at_one_point)
{
	scene_box boxes[50];
	for (int dims = 2; dims <= 3; ++dims) {
		for (uint32_t i = 0; i < 50; ++i)
			boxes[i] = (scene_box){i * 3 + 1, {7.5f, -2.0f, 3.0f}, {7.5f, -2.0f, 3.0f}};
		const char *path = test_tmp_path("point.txt");
		write_scene(path, boxes, 50, dims);
		check_scene(path, 0);
		expected e = oracle_for_file(path, 0);
		cr_assert_eq(e.count, 50 * 49 / 2); // sanity of the scene itself
		free(e.keys);
	}
}

// Unit cells of an integer lattice: neighbours share faces, edges or corners exactly.
Test(cli, exactly_touching_lattice)
{
	scene_box boxes[125];
	uint32_t n = 0;
	for (int i = 0; i < 10; ++i)
		for (int j = 0; j < 10; ++j, ++n)
			boxes[n] = (scene_box){n, {(float)i, (float)j}, {(float)i + 1, (float)j + 1}};
	const char *path = test_tmp_path("lattice2.txt");
	write_scene(path, boxes, n, 2);
	// 10x10 cells touching their 8 neighbours: 2*(9*10) edge pairs + 2*(9*9) diagonal pairs = 342.
	expected e = oracle_for_file(path, 0);
	cr_assert_eq(e.count, 342);
	free(e.keys);
	check_scene(path, 0);

	n = 0;
	for (int i = 0; i < 5; ++i)
		for (int j = 0; j < 5; ++j)
			for (int k = 0; k < 5; ++k, ++n)
				boxes[n] = (scene_box){1000 + n, {(float)i, (float)j, (float)k}, {(float)i + 1, (float)j + 1, (float)k + 1}};
	path = test_tmp_path("lattice3.txt");
	write_scene(path, boxes, n, 3);
	check_scene(path, 0);
}

// Zero-size boxes on a coarse integer grid: pairs only between exact duplicates.
Test(cli, zero_size_points)
{
	scene_box boxes[300];
	test_rng rng = {11};
	for (int dims = 2; dims <= 3; ++dims) {
		for (uint32_t i = 0; i < 300; ++i) {
			boxes[i].id = 299 - i;
			for (int k = 0; k < 3; ++k)
				boxes[i].min[k] = boxes[i].max[k] = (float)test_rng_below(&rng, 6);
		}
		const char *path = test_tmp_path("points.txt");
		write_scene(path, boxes, 300, dims);
		check_scene(path, 0);
	}
}

// One box covering everything over many small ones: it pairs with all of them.
Test(cli, one_huge_box_over_many_small)
{
	scene_box boxes[401];
	test_rng rng = {12};
	for (int dims = 2; dims <= 3; ++dims) {
		for (uint32_t i = 0; i < 401; ++i) {
			boxes[i].id = i;
			for (int k = 0; k < 3; ++k) {
				boxes[i].min[k] = test_rng_float(&rng, 0.0f, 100.0f);
				boxes[i].max[k] = boxes[i].min[k] + test_rng_float(&rng, 0.0f, 1.0f);
			}
		}
		for (int k = 0; k < 3; ++k) { // the huge one sits in the middle of the file
			boxes[200].min[k] = -1000.0f;
			boxes[200].max[k] = 1000.0f;
		}
		const char *path = test_tmp_path("huge.txt");
		write_scene(path, boxes, 401, dims);
		check_scene(path, 0);
	}
}

// Around -3e6 floats are 0.25 apart: corners on that grid make many exact touches
// far from the origin, where cell arithmetic loses precision.
Test(cli, coordinates_near_minus_three_million)
{
	scene_box boxes[400];
	test_rng rng = {13};
	for (int dims = 2; dims <= 3; ++dims) {
		for (uint32_t i = 0; i < 400; ++i) {
			boxes[i].id = i;
			for (int k = 0; k < 3; ++k) {
				boxes[i].min[k] = -3.0e6f + 0.25f * (float)test_rng_below(&rng, 80);
				boxes[i].max[k] = boxes[i].min[k] + 0.25f * (float)test_rng_below(&rng, 5);
			}
		}
		const char *path = test_tmp_path("far.txt");
		write_scene(path, boxes, 400, dims);
		check_scene(path, 0);
	}
}

// Sparse ids up to 2^32-1, descending in the file, so dense order and id order
// disagree: the tool must report lo < hi by scene id, and checksum by scene id.
Test(cli, large_sparse_ids)
{
	scene_box boxes[300];
	test_rng rng = {14};
	for (int dims = 2; dims <= 3; ++dims) {
		for (uint32_t i = 0; i < 300; ++i) {
			boxes[i].id = i < 297 ? UINT32_MAX - 977u * i : (uint32_t[]){0, 1, 1u << 31}[i - 297];
			for (int k = 0; k < 3; ++k) {
				boxes[i].min[k] = test_rng_float(&rng, 0.0f, 30.0f);
				boxes[i].max[k] = boxes[i].min[k] + test_rng_float(&rng, 0.0f, 4.0f);
			}
		}
		const char *path = test_tmp_path("ids.txt");
		write_scene(path, boxes, 300, dims);
		check_scene(path, 0);
	}
}

// ---- other outputs of `bp pairs` -----------------------------------------------------

Test(cli, stats_line_and_runs)
{
	const char *path = gen_scene("scene.txt", "uniform", "700", "2", "1");
	expected want = oracle_for_file(path, 0);
	cli_result r = BP("pairs", path, "--stats", "--runs=5", "--threads=2");
	expect_code(&r, 0, "--stats --runs=5");
	summary s = parse_summary(r.out);
	cr_assert_eq(s.pairs, want.count);
	cr_assert_eq(s.threads, 2);
	const char *second = strchr(r.out, '\n') + 1;
	char key[64];
	snprintf(key, sizeof key, " pair_count=%zu ", want.count);
	cr_assert_not_null(strstr(second, key), "stats line lacks%s: %s", key, second);
	snprintf(key, sizeof key, " entity_count=%u ", want.entities);
	cr_assert_not_null(strstr(second, key), "stats line lacks%s: %s", key, second);
	cr_assert_not_null(strstr(second, " candidate_tests="));
	cr_assert_not_null(strstr(second, " ns_total="));
	// frame= counts every step, so five runs leave frame=5.
	cr_assert_eq(strncmp(second, "frame=5 ", 8), 0, "%s", second);
	cr_assert_eq(strchr(second, '\n')[1], '\0', "more than two lines: %s", r.out);
	result_free(&r);
	free(want.keys);
}

Test(cli, default_threads_resolve_to_a_count)
{
	const char *path = gen_scene("scene.txt", "uniform", "300", "3", "1");
	cli_result r = BP("pairs", path);
	expect_code(&r, 0, "defaults");
	summary s = parse_summary(r.out);
	cr_assert_geq(s.threads, 1, "threads=0 must print the resolved count");
	cr_assert_str_neq(s.algo, "auto");
	result_free(&r);
}

// ---- `bp verify` ------------------------------------------------------------

Test(cli, verify_good_scene)
{
	const char *path = gen_scene("scene.txt", "clustered", "800", "3", "1");
	expected want = oracle_for_file(path, 0);
	char ok[64];
	snprintf(ok, sizeof ok, " ok pairs=%zu", want.count);
	const char *algos[] = {"all", "brute", "auto"};
	for (size_t i = 0; i < 3; ++i) {
		cli_result r = BP("verify", path, "--algo", algos[i], "--threads", "3");
		expect_code(&r, 0, algos[i]);
		// One line per algorithm, each reporting the oracle's count.
		size_t lines = 0;
		for (const char *line = r.out; *line; line = strchr(line, '\n') + 1, ++lines) {
			const char *end = strchr(line, '\n');
			cr_assert_not_null(end);
			cr_assert_not_null(strstr(line, ok), "verify line lacks '%s': %s", ok, line);
			cr_assert(strstr(line, ok) < end);
		}
		cr_assert_geq(lines, 1);
		result_free(&r);
	}
	free(want.keys);
}

// Finding (issue 15): 'bp verify --algo all' exited 4 ("found algorithms that disagree")
// when grid and hash refused a span beyond float range, a documented limit, and said only
// "grid step: not supported". They are reported as skipped, with the reason, and the
// others are still checked; named alone, such an algorithm makes the scene bad input.
Test(cli, verify_skips_algorithms_that_do_not_support_the_scene)
{
	const scene_box boxes[] = {
		{10, {-3e38f, 0, 0}, {3e38f, 1, 0}}, // x spans 6e38: beyond float range
		{20, {0, 0, 0}, {1, 1, 0}},
		{30, {5, 5, 0}, {6, 6, 0}},
	};
	const char *path = test_tmp_path("wide.txt");
	write_scene(path, boxes, 3, 2);
	cli_result r = BP("verify", path, "--algo", "all");
	expect_code(&r, 0, "verify all");
	char span[96];
	snprintf(span, sizeof span, " step: not supported: x spans %.9g to %.9g,", (double)-3e38f, (double)3e38f);
	int skipped = 0, ok = 0;
	for (const char *p = r.out; *p; p = strchr(p, '\n') + 1) {
		char line[512];
		snprintf(line, sizeof line, "%.*s", (int)(strchr(p, '\n') - p), p);
		if (strstr(line, " skipped: ")) {
			cr_assert(strncmp(line, "grid skipped: grid", 18) == 0 || strncmp(line, "hash skipped: hash", 18) == 0,
				"%s", line);
			cr_assert_not_null(strstr(line, span), "%s", line);
			++skipped;
		} else {
			cr_assert_not_null(strstr(line, " ok pairs=1"), "%s", line); // (10, 20) only
			++ok;
		}
	}
	cr_assert_eq(skipped, bp_algorithm_available(BP_ALGO_GRID) + bp_algorithm_available(BP_ALGO_HASH), "%s", r.out);
	cr_assert_geq(ok, 3, "%s", r.out); // auto, sap and the others ran
	result_free(&r);
	r = BP("verify", path, "--algo", "grid");
	expect_code(&r, 2, "verify --algo grid");
	cr_assert_eq(strncmp(r.out, "grid skipped: grid step: not supported: x spans", 47), 0, "%s", r.out);
	result_free(&r);
}

// ---- exit codes ---------------------------------------------------------------

static void expect_usage_error(cli_result r, const char *what, const char *needle)
{
	expect_code(&r, 1, what);
	if (needle)
		cr_assert_not_null(strstr(r.err, needle), "%s: stderr lacks '%s': %s", what, needle, r.err);
	cr_assert_str_empty(r.out, "%s: usage errors go to stderr", what);
	result_free(&r);
}

Test(cli, usage_errors_exit_1)
{
	const char *path = gen_scene("scene.txt", "uniform", "100", "3", "1");
	expect_usage_error(run_bp_args(1, (const char *[]){"bp"}), "no arguments", "usage:");
	expect_usage_error(BP("frobnicate"), "unknown command", "usage:");
	expect_usage_error(BP("pairs", path, "--bogus"), "unknown flag", "'--bogus'");
	expect_usage_error(BP("pairs", path, "--threads"), "missing value", "--threads");
	expect_usage_error(BP("pairs"), "missing file", "FILE");
	expect_usage_error(BP("pairs", path, "--threads", "x"), "bad int",
		"bp pairs: --threads: expected an integer in [0, 1024], got 'x'");
	expect_usage_error(BP("pairs", path, "--threads=-2"), "negative int", "got '-2'");
	expect_usage_error(BP("pairs", path, "--threads", "4x"), "trailing garbage", "got '4x'");
	expect_usage_error(BP("pairs", path, "--threads", "99999999999999999999999"), "overflow", "--threads");
	expect_usage_error(BP("pairs", path, "--runs", "0"), "zero runs", "--runs");
	expect_usage_error(BP("pairs", path, "--algo", "nope"), "unknown algo",
		"bp pairs: --algo: unknown algorithm 'nope'");
	expect_usage_error(BP("pairs", path, "--stats=1"), "flag with value", "--stats");
	expect_usage_error(BP("verify", path, "--algo", "nope"), "verify unknown algo", "'nope'");
	expect_usage_error(BP("gen", "--dist", "nope", "--n", "10", "-o", test_tmp_path("x.txt")), "unknown dist", "'nope'");
	expect_usage_error(BP("gen", "--dist", "uniform", "--n", "10", "--dims", "4", "-o", test_tmp_path("x.txt")), "bad dims",
		"--dims");
	expect_usage_error(BP("gen", "--dist", "uniform", "--n", "10"), "gen without -o", "-o");
	expect_usage_error(BP("help", "nope"), "help of unknown command", "'nope'");
	expect_usage_error(BP("bench", "--runs", "0"), "bench", "bp bench: --runs");
	expect_usage_error(BP("frames"), "frames", "bp frames: --n is required");
	expect_usage_error(BP("render"), "render", "bp render: missing scene FILE");
}

Test(cli, help_exits_0_on_stdout)
{
	const char *forms[][2] = {{"help", NULL}, {"--help", NULL}, {"-h", NULL}, {"help", "pairs"}, {"pairs", "--help"},
		{"gen", "-h"}, {"verify", "--help"}};
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; ++i) {
		cli_result r = BP(forms[i][0], forms[i][1]);
		expect_code(&r, 0, forms[i][0]);
		cr_assert_eq(strncmp(r.out, "usage: bp", 9), 0, "%s %s: %s", forms[i][0], forms[i][1], r.out);
		cr_assert_str_empty(r.err);
		result_free(&r);
	}
}

static void expect_bad_input(const char *text, const char *what, int line)
{
	const char *path = test_tmp_path("bad.txt");
	write_text(path, text);
	char where[300];
	snprintf(where, sizeof where, "%s:%d:", path, line);
	const char *commands[] = {"pairs", "verify"};
	for (int i = 0; i < 2; ++i) {
		cli_result r = BP(commands[i], path);
		expect_code(&r, 2, what);
		cr_assert_eq(strncmp(r.err, "bp: ", 4), 0, "%s: %s", what, r.err);
		cr_assert_not_null(strstr(r.err, where), "%s: stderr lacks '%s': %s", what, where, r.err);
		cr_assert_str_empty(r.out);
		result_free(&r);
	}
}

Test(cli, bad_input_exits_2_naming_file_and_line)
{
	expect_bad_input("# dims=3\n0 0 0 0 1 1 1\n1 0 0 zero 1 1 1\n", "not a number", 3);
	expect_bad_input("# dims=2\n# comment\n\n0 0 0 1 1\n1 0 0 1\n", "missing column", 5);
	expect_bad_input("# dims=2\n7 0 0 1 1\n7 2 2 3 3\n", "duplicate id", 3);
	cli_result r = BP("pairs", test_tmp_path("does-not-exist.txt"));
	expect_code(&r, 2, "missing file");
	cr_assert_eq(strncmp(r.err, "bp: ", 4), 0, "%s", r.err);
	result_free(&r);
}

#if defined(__SANITIZE_ADDRESS__)
#define CLI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CLI_ASAN 1
#endif
#endif

/// Caps this test process's address space at what it has mapped plus `extra`
/// bytes. Not under ASan, whose shadow memory is terabytes of address space.
static void cap_address_space(uint64_t extra)
{
#ifndef CLI_ASAN
	FILE *f = fopen("/proc/self/statm", "r");
	cr_assert_not_null(f);
	unsigned long long pages = 0;
	cr_assert_eq(fscanf(f, "%llu", &pages), 1);
	fclose(f);
	const rlim_t cap = (rlim_t)(pages * (uint64_t)sysconf(_SC_PAGESIZE) + extra);
	const struct rlimit limit = {cap, cap};
	cr_assert_eq(setrlimit(RLIMIT_AS, &limit), 0);
#else
	(void)extra;
#endif
}

// Finding (issue 15): a 2 GB file of zero bytes was read whole before "binary data"
// (4.2 GB, 7-15 s), or failed as out of memory (exit 3) instead of bad input, as it
// does here under a cap of 1 GB.
Test(cli, a_2gb_file_of_zero_bytes_is_bad_input)
{
	cap_address_space((uint64_t)1 << 30);
	const char *path = test_tmp_path("zeros.bin");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)2 << 30), 0); // sparse: no disk, no time
	close(fd);
	char want[300];
	snprintf(want, sizeof want, "bp: %s:1: binary data (byte 0x00), not a text scene\n", path);
	const char *commands[] = {"pairs", "verify"};
	for (int i = 0; i < 2; ++i) {
		cli_result r = BP(commands[i], path);
		expect_code(&r, 2, commands[i]);
		cr_assert_str_eq(r.err, want);
		cr_assert_str_empty(r.out);
		result_free(&r);
	}
}

// Finding (issue 15): 'bp gen --n 1000 --frames 4000000000' had no size check and grew
// to 12 GB in 10 s. Sizes are checked before anything is allocated (here under a cap,
// so a missing check fails fast instead of filling the machine).
Test(cli, gen_checks_the_scene_size_before_it_allocates)
{
	cap_address_space((uint64_t)1 << 30);
	const char *path = test_tmp_path("huge.txt");
	const struct {
		const char *n, *frames, *dims, *message;
	} cases[] = {
		{"1000", "4000000000", "3", "bp gen: --n 1000 x --frames 4000000000 x 24 bytes a row needs 87.3 TiB, more than"},
		{"4294967294", "4294967295", "2", "bp gen: --n 4294967294 x --frames 4294967295 x 16 bytes a row needs 256.0 EiB"},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
		cli_result r = BP("gen", "--dist", "uniform", "--n", cases[c].n, "--frames", cases[c].frames, "--dims",
			cases[c].dims, "-o", path);
		expect_code(&r, 1, cases[c].frames);
		cr_assert_not_null(strstr(r.err, cases[c].message), "stderr: %s", r.err);
		cr_assert_not_null(strstr(r.err, "; lower --n or --frames\n"), "stderr: %s", r.err);
		cr_assert_str_empty(r.out);
		cr_assert_neq(access(path, F_OK), 0, "nothing is written");
		result_free(&r);
	}
	// A scene that fits is made as before.
	cli_result r = BP("gen", "--dist", "uniform", "--n", "1000", "--frames", "40", "-o", path);
	expect_code(&r, 0, "1000 x 40");
	result_free(&r);
}

Test(cli, unwritable_output_exits_3)
{
	const char *path = gen_scene("scene.txt", "uniform", "100", "3", "1");
	const char *nowhere = test_tmp_path("no-such-dir/out.txt");
	cli_result r = BP("pairs", path, "-o", nowhere);
	expect_code(&r, 3, "pairs -o into a missing directory");
	cr_assert_not_null(strstr(r.err, nowhere), "%s", r.err);
	result_free(&r);
	r = BP("gen", "--dist", "uniform", "--n", "10", "-o", nowhere);
	expect_code(&r, 3, "gen -o into a missing directory");
	result_free(&r);
}
