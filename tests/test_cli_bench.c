// SPDX-License-Identifier: MIT
// `bp bench` run in-process on tiny plans: the CSV (header, exactly one row per configuration, pairs
// and checksums against the oracle on the same scenes), the PNG plots, the default output path, the
// workloads of a world mostly at rest (statics, movers, incremental worlds) and the usage and input
// errors.
#define _XOPEN_SOURCE 700 // nftw
#include <criterion/criterion.h>
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_bench.h"
#include "cli_motion.h"
#include "cli_runner.h"
#include "oracle.h"
#include "tmpfiles.h"

static void make_tmp_dir(void) { test_tmp_dir_make("bp_bench_"); }

TestSuite(cli_bench, .init = make_tmp_dir, .fini = test_tmp_dir_remove, .timeout = 120);


static bool gnuplot_on_path(void)
{
	const char *path = getenv("PATH");
	char candidate[1024];
	while (path && *path) {
		const char *colon = strchr(path, ':');
		size_t length = colon ? (size_t)(colon - path) : strlen(path);
		snprintf(candidate, sizeof candidate, "%.*s/gnuplot", (int)length, path);
		if (length && access(candidate, X_OK) == 0)
			return true;
		path = colon ? colon + 1 : NULL;
	}
	return false;
}

// ---- the independent answer ---------------------------------------------------------

static uint64_t test_splitmix64(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

typedef struct answer {
	uint64_t pairs, checksum;
} answer;

/// The oracle's pair count and docs/design.md "Scene and trace formats" checksum for frame 0 of a scene, entity i
/// static when is_static[i] (is_static NULL: none is).
static answer oracle_answer_kinds(const bp_scene *scene, const bool *is_static)
{
	uint32_t n = scene->count;
	oracle_box *boxes = calloc(n, sizeof *boxes);
	cr_assert_not_null(boxes);
	for (uint32_t i = 0; i < n; ++i) {
		boxes[i].category = 1;
		boxes[i].mask = UINT64_MAX;
		boxes[i].is_static = is_static && is_static[i];
		for (int k = 0; k < scene->dims; ++k) {
			boxes[i].min[k] = scene->min[k][i];
			boxes[i].max[k] = scene->max[k][i];
		}
	}
	oracle_pairs pairs = oracle_find_pairs(boxes, n, scene->dims);
	answer a = {pairs.count, 0};
	for (size_t i = 0; i < pairs.count; ++i) {
		uint64_t x = scene->ids[pairs.data[i].lo], y = scene->ids[pairs.data[i].hi];
		a.checksum += test_splitmix64(x < y ? x << 32 | y : y << 32 | x);
	}
	oracle_pairs_free(&pairs);
	free(boxes);
	return a;
}

static answer oracle_answer(const bp_scene *scene) { return oracle_answer_kinds(scene, NULL); }

/// The oracle on a generated scene, made as bp bench documents it (seed 1 unless --seed).
static answer oracle_generated(const char *dist, int dims, uint32_t n)
{
	bp_gen_def def = bp_gen_def_default();
	cr_assert_eq(bp_distribution_from_name(dist, &def.dist), BP_OK);
	def.dims = dims;
	def.n = n;
	def.seed = 1;
	bp_scene *scene = NULL;
	cr_assert_eq(bp_scene_generate(&def, &scene), BP_OK);
	answer a = oracle_answer(scene);
	bp_scene_destroy(scene);
	return a;
}

// ---- the CSV --------------------------------------------------------------------

static const char csv_header[] =
	"scene,dims,n,algo,threads,runs,ms_median,ms_min,ms_prepare,ms_build,ms_find,ms_merge,speedup,pairs,checksum,"
	"static,moving,incremental,margin,active_median,searched_median\n";

typedef struct csv_row {
	char scene[64], algo[32];
	int dims, threads;
	uint32_t n, runs;
	double ms_median, ms_min, ms_stage[4], speedup;
	uint64_t pairs, checksum;
	double static_fraction, moving, margin, active_median, searched_median;
	int incremental;
} csv_row;

/// Parses CSV text (`path` names it in messages) after checking its header; every line must be
/// a complete row.
static csv_row *parse_csv_text(const char *text, size_t size, const char *path, int *count)
{
	cr_assert_eq(strncmp(text, csv_header, strlen(csv_header)), 0, "header of %s: %.200s", path, text);
	int lines = 0;
	for (size_t i = strlen(csv_header); i < size; ++i)
		lines += text[i] == '\n';
	csv_row *rows = calloc((size_t)lines + 1, sizeof *rows);
	cr_assert_not_null(rows);
	const char *p = text + strlen(csv_header);
	for (int i = 0; i < lines; ++i) {
		csv_row *r = &rows[i];
		char checksum[17] = {0};
		int end = 0;
		int fields = sscanf(p,
			"%63[^,],%d,%" SCNu32 ",%31[^,],%d,%" SCNu32 ",%lf,%lf,%lf,%lf,%lf,%lf,%lf,%" SCNu64
			",%16[0-9a-f],%lf,%lf,%d,%lf,%lf,%lf%n",
			r->scene, &r->dims, &r->n, r->algo, &r->threads, &r->runs, &r->ms_median, &r->ms_min, &r->ms_stage[0],
			&r->ms_stage[1], &r->ms_stage[2], &r->ms_stage[3], &r->speedup, &r->pairs, checksum, &r->static_fraction,
			&r->moving, &r->incremental, &r->margin, &r->active_median, &r->searched_median, &end);
		cr_assert_eq(fields, 21, "row %d of %s is not complete: %.200s", i + 1, path, p);
		cr_assert_eq(strlen(checksum), 16, "row %d: checksum not 16 hex digits", i + 1);
		cr_assert_eq(p[end], '\n', "row %d has more fields: %.200s", i + 1, p);
		r->checksum = strtoull(checksum, NULL, 16);
		p += end + 1;
	}
	cr_assert_eq(p, text + size, "%s does not end with a complete row", path);
	*count = lines;
	return rows;
}

static csv_row *parse_csv(const char *path, int *count)
{
	size_t size;
	char *text = test_read_file(path, &size);
	csv_row *rows = parse_csv_text(text, size, path, count);
	free(text);
	return rows;
}

/// Times are sane: median >= min >= 0, the stages of one step fit in its wall time
/// (one run: the same step), and speedup = ms at `base_threads` / ms of the row
/// (same scene, algorithm, n and world kind).
static void check_times(const csv_row *rows, int count, const csv_row *r, int base_threads)
{
	cr_assert(r->ms_min >= 0 && r->ms_median >= r->ms_min, "%s %s: median %f min %f", r->scene, r->algo,
		r->ms_median, r->ms_min);
	double stages = 0;
	for (int k = 0; k < 4; ++k) {
		cr_assert_geq(r->ms_stage[k], 0.0);
		stages += r->ms_stage[k];
	}
	if (r->runs == 1)
		cr_assert_leq(stages, r->ms_median + 0.001, "%s %s threads=%d: stages %f ms > step %f ms", r->scene,
			r->algo, r->threads, stages, r->ms_median);
	for (int j = 0; j < count; ++j) {
		const csv_row *b = &rows[j];
		if (strcmp(b->scene, r->scene) || strcmp(b->algo, r->algo) || b->n != r->n || b->threads != base_threads ||
			b->incremental != r->incremental)
			continue;
		// Both times are printed with 4 decimals: allow for that rounding.
		double want = b->ms_median / r->ms_median;
		double slack = 0.002 + want * (0.0001 / b->ms_median + 0.0001 / r->ms_median);
		cr_assert(r->speedup > want - slack && r->speedup < want + slack, "%s %s threads=%d: speedup %f, want %f",
			r->scene, r->algo, r->threads, r->speedup, want);
	}
}

static bool is_png(const char *path)
{
	size_t size;
	char *data = test_read_file(path, &size);
	static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
	// Signature, then the IHDR chunk with a non-zero width and height (big endian).
	bool ok = size > 33 && memcmp(data, signature, 8) == 0 && memcmp(data + 12, "IHDR", 4) == 0;
	const unsigned char *u = (const unsigned char *)data;
	ok = ok && (u[16] | u[17] | u[18] | u[19]) && (u[20] | u[21] | u[22] | u[23]);
	free(data);
	return ok;
}

// ---- the small preset, cut down -----------------------------------------------------

static const struct {
	const char *dist;
	int dims;
	const char *name;
} small_scenes[] = {{"uniform", 3, "uniform3"}, {"clustered", 3, "clustered3"}, {"uniform", 2, "uniform2"}};
enum { SMALL_SCENES = sizeof small_scenes / sizeof small_scenes[0] };

/// The small preset at n=1000, 1 run, threads 1,2 (bench-custom.csv, since lists changed).
static cli_result run_tiny_small(const char *plots_flag)
{
	return BP("bench", "--preset", "small", "--n", "1000", "--runs", "1", "--threads", "2,1", "--out", test_tmp_dir,
		"--no-progress", plots_flag);
}

Test(cli_bench, csv_has_one_row_per_configuration_matching_the_oracle)
{
	cli_result r = run_tiny_small("--no-plots");
	expect_code(&r, 0, "bench tiny small");
	const char *csv = test_tmp_path("bench-custom.csv");
	char want_out[512];
	int count;
	csv_row *rows = parse_csv(csv, &count);
	snprintf(want_out, sizeof want_out, "csv=%s rows=%d seconds=", csv, count);
	cr_assert_eq(strncmp(r.out, want_out, strlen(want_out)), 0, "stdout: %s", r.out);
	cr_assert_null(strchr(r.err, '\r'), "a progress bar when stderr is not a terminal: %s", r.err);

	// Configurations: every scene x every built-in algorithm but auto x threads {1, 2}.
	const int threads[] = {1, 2};
	int configs = 0;
	for (int s = 0; s < SMALL_SCENES; ++s) {
		answer want = oracle_generated(small_scenes[s].dist, small_scenes[s].dims, 1000);
		for (int a = 0; a < BP_ALGO_COUNT; ++a) {
			if (a == BP_ALGO_AUTO || !bp_algorithm_available((bp_algorithm)a))
				continue;
			const char *algo = bp_algorithm_name((bp_algorithm)a);
			for (int t = 0; t < 2; ++t, ++configs) {
				int found = 0;
				for (int i = 0; i < count; ++i) {
					const csv_row *row = &rows[i];
					if (strcmp(row->scene, small_scenes[s].name) || strcmp(row->algo, algo) || row->threads != threads[t])
						continue;
					++found;
					cr_assert_eq(row->n, 1000);
					cr_assert_eq(row->dims, small_scenes[s].dims);
					cr_assert_eq(row->runs, 1);
					cr_assert_eq(row->pairs, want.pairs, "%s %s threads=%d: pairs=%" PRIu64 ", oracle %" PRIu64,
						row->scene, algo, row->threads, row->pairs, want.pairs);
					cr_assert_eq(row->checksum, want.checksum, "%s %s threads=%d: checksum differs from the oracle",
						row->scene, algo, row->threads);
					// The default workload: nothing static, nothing moves, not incremental.
					cr_assert(row->static_fraction == 0 && row->moving == 0 && row->incremental == 0 &&
							  row->margin == 0 && row->active_median == 0 && row->searched_median == 0,
						"%s %s: default workload columns %g,%g,%d,%g,%g,%g", row->scene, algo, row->static_fraction,
						row->moving, row->incremental, row->margin, row->active_median, row->searched_median);
					check_times(rows, count, row, 1);
				}
				cr_assert_eq(found, 1, "%s %s threads=%d: %d rows, want 1", small_scenes[s].name, algo, threads[t],
					found);
			}
		}
	}
	cr_assert_eq(count, configs, "%d rows, want %d configurations", count, configs);
	struct stat st;
	cr_assert_neq(stat(test_tmp_path("bench-custom-time-vs-n.png"), &st), 0, "--no-plots drew a plot");
	free(rows);
	result_free(&r);
}

Test(cli_bench, plots_are_png_images)
{
	if (!gnuplot_on_path())
		cr_skip_test("gnuplot is not on PATH");
	cli_result r = run_tiny_small("--no-progress");
	expect_code(&r, 0, "bench tiny small with plots");
	const char *suffixes[] = {"-time-vs-n.png", "-speedup.png", "-stages.png"};
	for (int i = 0; i < 3; ++i) {
		char name[64], line[400];
		snprintf(name, sizeof name, "bench-custom%s", suffixes[i]);
		const char *png = test_tmp_path(name);
		cr_assert(is_png(png), "%s is not a PNG image", png);
		snprintf(line, sizeof line, "plot=%s\n", png);
		cr_assert_not_null(strstr(r.out, line), "stdout does not name %s: %s", png, r.out);
	}
	// The script stays beside the CSV so the plots can be redrawn from it.
	struct stat st;
	cr_assert_eq(stat(test_tmp_path("bench-custom.gnuplot"), &st), 0);
	cr_assert_gt(st.st_size, 0);
	result_free(&r);
}

// ---- scene files, the default output path ---------------------------------------------

Test(cli_bench, scene_file_rows_match_the_oracle)
{
	enum { N = 300 };
	oracle_box boxes[N];
	test_random_boxes(boxes, N, 2, 100.0f, 8.0f, false, 7);
	const char *path = test_tmp_path("my scene.txt");
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	// Ids 1000 + 3i, so the checksum depends on the file's ids, not dense indices.
	fprintf(f, "# dims=2 n=%d\n", N);
	for (int i = 0; i < N; ++i)
		fprintf(f, "%d %.9g %.9g %.9g %.9g\n", 1000 + 3 * i, boxes[i].min[0], boxes[i].min[1], boxes[i].max[0],
			boxes[i].max[1]);
	fclose(f);
	bp_scene *scene = NULL;
	cr_assert_eq(bp_scene_read(path, &scene, NULL), BP_OK);
	answer want = oracle_answer(scene);
	bp_scene_destroy(scene);

	cli_result r = BP("bench", path, "--algos", "sap,grid", "--threads", "1", "--runs", "3", "--out", test_tmp_dir,
		"--no-plots");
	expect_code(&r, 0, "bench scene file");
	int count;
	csv_row *rows = parse_csv(test_tmp_path("bench-custom.csv"), &count);
	cr_assert_eq(count, 2);
	for (int i = 0; i < count; ++i) {
		// The base name with the space made '_', so it stays one CSV field and one gnuplot word.
		cr_assert_str_eq(rows[i].scene, "my_scene.txt");
		cr_assert_str_eq(rows[i].algo, i == 0 ? "sap" : "grid");
		cr_assert_eq(rows[i].n, N);
		cr_assert_eq(rows[i].dims, 2);
		cr_assert_eq(rows[i].runs, 3);
		cr_assert_eq(rows[i].pairs, want.pairs);
		cr_assert_eq(rows[i].checksum, want.checksum);
		check_times(rows, count, &rows[i], 1);
	}
	free(rows);
	result_free(&r);
}

/// Every path under the test's directory, relative to it, sorted, one per line (directories
/// end in '/').
enum { TREE_MAX = 32 };
static char tree[TREE_MAX][256], listing[TREE_MAX * 257 + 1];
static int tree_count;

static int list_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	if (ftw->level > 0 && tree_count < TREE_MAX)
		snprintf(tree[tree_count++], sizeof tree[0], "%s%s", path + strlen(test_tmp_dir) + 1,
			type == FTW_D ? "/" : "");
	return 0;
}

static int compare_names(const void *a, const void *b) { return strcmp(a, b); }

static const char *tree_of_tmp_dir(void)
{
	tree_count = 0;
	cr_assert_eq(nftw(test_tmp_dir, list_entry, 8, FTW_PHYS), 0);
	qsort(tree, (size_t)tree_count, sizeof tree[0], compare_names);
	size_t length = 0;
	for (int i = 0; i < tree_count; ++i) {
		size_t name = strlen(tree[i]);
		memcpy(listing + length, tree[i], name);
		listing[length + name] = '\n';
		length += name + 1;
	}
	listing[length] = '\0';
	return listing;
}

/// The rows of line2 at n = 500, 200 with sap: the oracle's pairs and checksums, in --n order.
static void expect_line2_rows(const csv_row *rows, int count)
{
	cr_assert_eq(count, 2);
	for (int i = 0; i < count; ++i) {
		answer want = oracle_generated("line", 2, rows[i].n);
		cr_assert_str_eq(rows[i].scene, "line2");
		cr_assert_eq(rows[i].pairs, want.pairs);
		cr_assert_eq(rows[i].checksum, want.checksum);
	}
	cr_assert(rows[0].n == 500 && rows[1].n == 200, "rows not in the order of --n");
}

// Finding (issue 7): bp bench wrote perf/results/<cores>core/ under whatever directory it ran
// in. Without --out it prints the CSV on stdout and writes nothing, plots included.
Test(cli_bench, default_output_is_the_csv_on_stdout_and_no_file)
{
	cr_assert_eq(chdir(test_tmp_dir), 0);
	cli_result r = BP("bench", "--scenes", "line2", "--n", "500,200", "--algos", "sap", "--threads", "1", "--runs",
		"1");
	expect_code(&r, 0, "bench default output");
	cr_assert_str_empty(tree_of_tmp_dir(), "bench wrote files without --out:\n%s", listing);
	cr_assert_str_empty(r.err, "%s", r.err);
	int count;
	csv_row *rows = parse_csv_text(r.out, strlen(r.out), "stdout", &count);
	expect_line2_rows(rows, count);
	free(rows);
	result_free(&r);
}

// With --out DIR every file goes there and nowhere else; gnuplot's warnings (one n gives an
// empty x range) are not shown when it drew every image.
Test(cli_bench, out_dir_holds_every_file_and_gnuplot_is_quiet)
{
	cr_assert_eq(chdir(test_tmp_dir), 0);
	cli_result r = BP("bench", "--scenes", "uniform3", "--n", "300", "--algos", "sap", "--threads", "1", "--runs", "1",
		"--out", "results");
	expect_code(&r, 0, "bench --out");
	const char *want = gnuplot_on_path() ? "results/\nresults/bench-custom-speedup.png\nresults/bench-custom-stages.png\n"
					       "results/bench-custom-time-vs-n.png\nresults/bench-custom.csv\n"
					       "results/bench-custom.gnuplot\n"
					     : "results/\nresults/bench-custom.csv\n";
	cr_assert_str_eq(tree_of_tmp_dir(), want);
	if (gnuplot_on_path())
		cr_assert_str_empty(r.err, "gnuplot's warnings reached stderr: %s", r.err);
	result_free(&r);
}

// --machine NAME is --out perf/results/NAME, the layout of this repository's results.
Test(cli_bench, machine_names_a_results_directory)
{
	cr_assert_eq(chdir(test_tmp_dir), 0);
	cli_result r = BP("bench", "--scenes", "line2", "--n", "500,200", "--algos", "sap", "--threads", "1", "--runs",
		"1", "--machine", "box-1", "--no-plots");
	expect_code(&r, 0, "bench --machine");
	int count;
	csv_row *rows = parse_csv(test_tmp_path("perf/results/box-1/bench-custom.csv"), &count);
	expect_line2_rows(rows, count);
	free(rows);
	result_free(&r);
}

// ---- worlds mostly at rest ----------------------------------------------------------------

/// The oracle after the motion bp bench documents for --static S --moving M: statics
/// are entities floor(j * n / statics) for j < round(S * n); of the d others, ascending,
/// movers are the floor(j * d / movers)-th for j < round(M * d); the movers move as in
/// bp frames (cli_motion, seeded like the scene) once before each step but the first:
/// BENCH_WARMUP_MOVES + runs frames. unmoved: the same with no motion.
static void oracle_at_rest(const char *dist, int dims, uint32_t n, uint64_t seed, double static_fraction,
	double moving, uint32_t runs, answer *moved, answer *unmoved, uint32_t *mover_count)
{
	bp_gen_def def = bp_gen_def_default();
	cr_assert_eq(bp_distribution_from_name(dist, &def.dist), BP_OK);
	def.dims = dims;
	def.n = n;
	def.seed = seed;
	bp_scene *scene = NULL;
	cr_assert_eq(bp_scene_generate(&def, &scene), BP_OK);
	bool *is_static = calloc(n, sizeof *is_static);
	uint32_t *dynamic = calloc(n, sizeof *dynamic), *movers = calloc(n, sizeof *movers);
	cr_assert(is_static && dynamic && movers);
	uint32_t statics = (uint32_t)floor(static_fraction * n + 0.5), d = 0;
	for (uint32_t j = 0; j < statics; ++j)
		is_static[(uint64_t)j * n / statics] = true;
	for (uint32_t i = 0; i < n; ++i)
		if (!is_static[i])
			dynamic[d++] = i;
	cr_assert_eq(d, n - statics, "statics are not distinct");
	uint32_t m = (uint32_t)floor(moving * d + 0.5);
	for (uint32_t j = 0; j < m; ++j)
		movers[j] = dynamic[(uint64_t)j * d / m];
	*mover_count = m;

	*unmoved = oracle_answer_kinds(scene, is_static);
	cli_motion motion;
	cr_assert(cli_motion_init(&motion, scene, seed, m, m == n ? NULL : movers));
	for (uint32_t f = 0; f < BENCH_WARMUP_MOVES + runs; ++f)
		cli_motion_step(&motion);
	// The movers' last bounds into a copy of the scene.
	for (uint32_t j = 0; j < m; ++j)
		for (int k = 0; k < dims; ++k) {
			scene->min[k][movers[j]] = motion.min[k][j];
			scene->max[k][movers[j]] = motion.max[k][j];
		}
	*moved = oracle_answer_kinds(scene, is_static);
	cli_motion_free(&motion);
	free(is_static);
	free(dynamic);
	free(movers);
	bp_scene_destroy(scene);
}

// With --incremental --static 0.9 --moving 0.1, every configuration's last step has exactly the
// pairs of the oracle on the moved scene (statics never pair with each other). No timings.
Test(cli_bench, incremental_rest_matches_the_oracle)
{
	static const struct {
		const char *dist, *scene;
		int dims;
	} scenes[] = {{"uniform", "uniform3", 3}, {"clustered", "clustered2", 2}};
	const uint32_t n = 4000, runs = 3;
	cli_result r = BP("bench", "--scenes", "uniform3,clustered2", "--n", "4000", "--algos", "grid,sap", "--threads",
		"1,2", "--runs", "3", "--seed", "5", "--static", "0.9", "--moving", "0.1", "--incremental", "--out",
		test_tmp_dir, "--no-plots", "--no-progress");
	expect_code(&r, 0, "bench --incremental --static 0.9 --moving 0.1");
	int count;
	csv_row *rows = parse_csv(test_tmp_path("bench-custom.csv"), &count);
	cr_assert_eq(count, 2 * 2 * 2);
	for (size_t s = 0; s < sizeof scenes / sizeof scenes[0]; ++s) {
		answer moved, unmoved;
		uint32_t movers;
		oracle_at_rest(scenes[s].dist, scenes[s].dims, n, 5, 0.9, 0.1, runs, &moved, &unmoved, &movers);
		cr_assert_eq(movers, 40);
		cr_assert_gt(moved.pairs, 0, "a scene without pairs tests nothing");
		cr_assert_neq(moved.checksum, unmoved.checksum, "%s: the movers changed no pair", scenes[s].scene);
		int found = 0;
		for (int i = 0; i < count; ++i) {
			const csv_row *row = &rows[i];
			if (strcmp(row->scene, scenes[s].scene))
				continue;
			++found;
			cr_assert_eq(row->pairs, moved.pairs, "%s %s threads=%d: pairs=%" PRIu64 ", oracle %" PRIu64, row->scene,
				row->algo, row->threads, row->pairs, moved.pairs);
			cr_assert_eq(row->checksum, moved.checksum, "%s %s threads=%d: checksum differs from the oracle",
				row->scene, row->algo, row->threads);
			cr_assert(row->static_fraction == 0.9 && row->moving == 0.1 && row->incremental == 1 && row->margin == 0);
			// An incremental step has at most the movers active, a full one every entity;
			// which path a step takes is timed, so the median of the runs lies anywhere
			// up to n (the midpoint of two middle runs when their count is even).
			cr_assert(row->active_median <= n, "%s: active_median %g", row->scene, row->active_median);
			cr_assert_leq(row->searched_median, row->active_median);
			check_times(rows, count, row, 1);
		}
		cr_assert_eq(found, 4);
	}
	free(rows);
	result_free(&r);
}

// --worlds full,incremental runs each configuration in both worlds (the rows of a scene must
// agree, or the exit code is 4), reports the workload in every row, names the files with
// --name and plots a line per algorithm and world kind.
Test(cli_bench, worlds_full_and_incremental_in_one_run)
{
	const bool plots = gnuplot_on_path();
	cli_result r = BP("bench", "--scenes", "uniform3", "--n", "1500", "--algos", "brute,grid", "--threads", "1",
		"--runs", "2", "--static", "0.5", "--moving", "1", "--worlds", "full,incremental", "--margin", "0.125",
		"--name", "rest", "--out", test_tmp_dir, plots ? "--no-progress" : "--no-plots");
	expect_code(&r, 0, "bench --worlds full,incremental");
	int count;
	csv_row *rows = parse_csv(test_tmp_path("bench-rest.csv"), &count);
	cr_assert_eq(count, 4);
	answer moved, unmoved;
	uint32_t movers;
	oracle_at_rest("uniform", 3, 1500, 1, 0.5, 1, 2, &moved, &unmoved, &movers);
	cr_assert_eq(movers, 750);
	for (int i = 0; i < count; ++i) {
		const csv_row *row = &rows[i];
		// Order: algorithms, then world kinds in the order given, then threads.
		cr_assert_str_eq(row->algo, i < 2 ? "brute" : "grid");
		cr_assert_eq(row->incremental, i % 2, "row %d", i + 1);
		cr_assert(row->static_fraction == 0.5 && row->moving == 1 && row->margin == 0.125, "row %d", i + 1);
		cr_assert_eq(row->pairs, moved.pairs, "row %d", i + 1);
		cr_assert_eq(row->checksum, moved.checksum, "row %d", i + 1);
		if (!row->incremental)
			cr_assert(row->active_median == 0 && row->searched_median == 0, "row %d", i + 1);
		else // every mover is active on an incremental step, every entity on a full one;
		     // which path a step takes is timed, so the median lies anywhere between
			cr_assert(row->active_median >= movers && row->active_median <= 1500, "row %d", i + 1);
	}
	if (plots) {
		cr_assert(is_png(test_tmp_path("bench-rest-time-vs-n.png")));
		size_t size;
		char *script = test_read_file(test_tmp_path("bench-rest.gnuplot"), &size);
		cr_assert_not_null(strstr(script, "'brute brute-incremental grid grid-incremental'"), "%s", script);
		free(script);
	}
	free(rows);
	result_free(&r);
}

// --static 1: every entity static, so no pair at all; --moving 0 moves nothing.
Test(cli_bench, all_static_finds_no_pairs)
{
	cli_result r = BP("bench", "--scenes", "clustered3", "--n", "800", "--algos", "sap,grid", "--threads", "1",
		"--runs", "1", "--static", "1", "--moving", "0", "--worlds", "incremental,full", "--out", test_tmp_dir,
		"--no-plots");
	expect_code(&r, 0, "bench --static 1");
	int count;
	csv_row *rows = parse_csv(test_tmp_path("bench-custom.csv"), &count);
	cr_assert_eq(count, 4);
	for (int i = 0; i < count; ++i) {
		cr_assert_eq(rows[i].pairs, 0);
		cr_assert_eq(rows[i].incremental, i % 2 == 0, "row %d: world kinds not in the order given", i + 1);
		cr_assert(rows[i].static_fraction == 1 && rows[i].moving == 0);
	}
	free(rows);
	result_free(&r);
}

// ---- errors -----------------------------------------------------------------------

static void expect_error(cli_result r, int code, const char *what, const char *message)
{
	expect_code(&r, code, what);
	cr_assert_not_null(strstr(r.err, message), "%s: stderr lacks '%s': %s", what, message, r.err);
	cr_assert_eq(r.out[0], '\0', "%s: wrote to stdout: %s", what, r.out);
	result_free(&r);
}

Test(cli_bench, bad_options_exit_1)
{
	const char *out = test_tmp_dir;
	expect_error(BP("bench", "--preset", "huge", "--out", out), 1, "preset", "--preset: expected small, medium or large");
	expect_error(BP("bench", "--scenes", "foo3", "--out", out), 1, "dist", "unknown distribution 'foo'");
	expect_error(BP("bench", "--scenes", "uniform4", "--out", out), 1, "dims", "got 'uniform4'");
	expect_error(BP("bench", "--scenes", "boxprune2", "--out", out), 1, "boxprune 2D", "boxprune is 3D only");
	expect_error(BP("bench", "--scenes", "", "--out", out), 1, "empty scenes", "--scenes: empty list");
	// Finding (issue 15): a bad --algos item was blamed on "--algo", a flag bench does not have.
	expect_error(BP("bench", "--algos", "sap,nope", "--out", out), 1, "algo",
		"bp bench: --algos: unknown algorithm 'nope'");
	expect_error(BP("bench", "--algos", "bogus", "--out", out), 1, "algo",
		"bp bench: --algos: unknown algorithm 'bogus'");
	expect_error(BP("bench", "--algos", "sap,sap", "--out", out), 1, "algo twice", "named twice");
	expect_error(BP("bench", "--threads", "0", "--out", out), 1, "threads 0", "--threads: expected an integer");
	expect_error(BP("bench", "--threads", "1,,2", "--out", out), 1, "threads empty item", "got ''");
	expect_error(BP("bench", "--threads", "2,2", "--out", out), 1, "threads twice", "given twice");
	expect_error(BP("bench", "--n", "1e3", "--out", out), 1, "n", "--n: expected an integer");
	expect_error(BP("bench", "--runs", "0", "--out", out), 1, "runs", "--runs: expected an integer");
	expect_error(BP("bench", "--machine", "../x"), 1, "machine", "--machine: expected letters");
	expect_error(BP("bench", "--out", ""), 1, "out", "--out: empty");
	expect_error(BP("bench", "--plots"), 1, "unknown option", "unknown option '--plots'");
	expect_error(BP("bench", "--no-plots=1"), 1, "flag value", "--no-plots takes no value");
	// The workload of a world mostly at rest: the message names the flag and the value.
	expect_error(BP("bench", "--static", "1.5", "--out", out), 1, "static > 1",
		"--static: expected a fraction in [0, 1], got '1.5'");
	expect_error(BP("bench", "--static", "-0.1", "--out", out), 1, "static < 0",
		"--static: expected a fraction in [0, 1], got '-0.1'");
	expect_error(BP("bench", "--static", "nan", "--out", out), 1, "static nan", "got 'nan'");
	expect_error(BP("bench", "--static", " 0.5", "--out", out), 1, "static space", "got ' 0.5'");
	expect_error(BP("bench", "--static", "", "--out", out), 1, "static empty", "--static: expected a fraction");
	expect_error(BP("bench", "--static", "--out", out), 1, "static no value", "got '--out'");
	expect_error(BP("bench", "--moving", "2", "--out", out), 1, "moving > 1",
		"--moving: expected a fraction in [0, 1], got '2'");
	expect_error(BP("bench", "--moving", "0.5x", "--out", out), 1, "moving junk",
		"--moving: expected a fraction in [0, 1], got '0.5x'");
	expect_error(BP("bench", "--moving", "0x1p-1", "--out", out), 1, "moving hex", "got '0x1p-1'");
	expect_error(BP("bench", "--moving"), 1, "moving missing", "--moving needs a value");
	expect_error(BP("bench", "--margin", "-1", "--out", out), 1, "margin < 0",
		"--margin: expected a number >= 0, got '-1'");
	expect_error(BP("bench", "--margin", "inf", "--out", out), 1, "margin inf",
		"--margin: expected a number >= 0, got 'inf'");
	expect_error(BP("bench", "--margin", "1e39", "--out", out), 1, "margin beyond float", "got '1e39'");
	expect_error(BP("bench", "--incremental=1", "--out", out), 1, "incremental value",
		"--incremental takes no value");
	expect_error(BP("bench", "--worlds", "fast", "--out", out), 1, "worlds",
		"--worlds: expected full or incremental, got 'fast'");
	expect_error(BP("bench", "--worlds", "full,full", "--out", out), 1, "worlds twice", "named twice");
	expect_error(BP("bench", "--worlds", "", "--out", out), 1, "worlds empty", "--worlds: empty list");
	expect_error(BP("bench", "--worlds", "full", "--incremental", "--out", out), 1, "worlds and incremental",
		"give one of them");
	expect_error(BP("bench", "--name", "a/b", "--out", out), 1, "name",
		"--name: expected letters, digits, '.', '_' or '-', got 'a/b'");
	// Nothing was measured or written.
	struct stat st;
	cr_assert_neq(stat(test_tmp_path("bench-small.csv"), &st), 0);
}

Test(cli_bench, unreadable_or_malformed_scene_exits_2)
{
	const char *missing = test_tmp_path("missing.txt");
	expect_error(BP("bench", missing, "--out", test_tmp_dir, "--no-plots"), 2, "missing file", missing);
	const char *bad = test_tmp_path("bad.txt");
	FILE *f = fopen(bad, "w");
	cr_assert_not_null(f);
	fputs("# dims=2 n=2\n0 0 0 1 1\n1 0 0 x 1\n", f);
	fclose(f);
	char where[300];
	snprintf(where, sizeof where, "%s:3:", bad);
	expect_error(BP("bench", bad, "--out", test_tmp_dir, "--no-plots"), 2, "malformed file", where);
	struct stat st;
	cr_assert_neq(stat(test_tmp_path("bench-custom.csv"), &st), 0, "a CSV was written for a bad scene");
}

Test(cli_bench, help)
{
	cli_result r = BP("help", "bench");
	expect_code(&r, 0, "help bench");
	cr_assert_eq(strncmp(r.out, "usage: bp bench", 15), 0, "%s", r.out);
	result_free(&r);
	r = BP("bench", "--help");
	expect_code(&r, 0, "bench --help");
	cr_assert_eq(strncmp(r.out, "usage: bp bench", 15), 0, "%s", r.out);
	result_free(&r);
}
