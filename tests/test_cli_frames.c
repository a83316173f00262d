// SPDX-License-Identifier: MIT
// `bp frames` run in-process through bp_cli_main: the output format, frame 1 against the oracle,
// the pair-event bookkeeping from frame to frame, every algorithm against brute, --moving and
// --incremental against brute, and usage errors.
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_runner.h"
#include "oracle.h"

// ---- parsing the output ----------------------------------------------------------

/// Per-frame numbers and the summary line of one run.
typedef struct frames_output {
	int frames;
	uint64_t pairs[64], began[64], ended[64], active[64];
	const char *summary, *summary_end;
} frames_output;

static frames_output parse_output(const char *text)
{
	frames_output o = {0};
	for (const char *line = text; *line;) {
		const char *end = strchr(line, '\n');
		cr_assert_not_null(end, "unterminated line: %s", line);
		if (strncmp(line, "frame=", 6) == 0) {
			cr_assert_lt(o.frames, 64);
			cr_assert_eq(cli_number(line, end, "frame"), o.frames + 1, "frames out of order");
			for (size_t i = 0; i < 5; ++i) {
				static const char *const keys[] = {"build_ms", "host_ms", "query_p50_us", "query_p99_us", "pairs"};
				cr_assert_geq(cli_number(line, end, keys[i]), 0);
			}
			o.pairs[o.frames] = (uint64_t)cli_number(line, end, "pairs");
			o.began[o.frames] = (uint64_t)cli_number(line, end, "began");
			o.ended[o.frames] = (uint64_t)cli_number(line, end, "ended");
			o.active[o.frames] = (uint64_t)cli_number(line, end, "active");
			o.frames++;
		} else {
			cr_assert_null(o.summary, "two summary lines");
			o.summary = line;
			o.summary_end = end;
		}
		line = end + 1;
	}
	cr_assert_not_null(o.summary, "no summary line in: %s", text);
	return o;
}

// ---- tests -----------------------------------------------------------------------

Test(cli_frames, summary_and_one_line_per_frame, .timeout = 60)
{
	cli_result r = BP("frames", "--dist", "uniform", "--n", "2000", "--dims", "3", "--frames", "6", "--threads",
		"2", "--queries", "8", "--host-ms", "1");
	expect_code(&r, CLI_EXIT_OK, "frames");
	frames_output o = parse_output(r.out);
	cr_assert_eq(o.frames, 6);
	const char *s = o.summary, *e = o.summary_end;
	cr_assert_eq(cli_number(s, e, "frames"), 6);
	cr_assert_eq(cli_number(s, e, "n"), 2000);
	cr_assert_eq(cli_number(s, e, "threads"), 2);
	const char *algo = cli_field(s, e, "algo");
	cr_assert_not_null(algo);
	cr_assert(strncmp(algo, "auto", 4) != 0, "algo names the algorithm that ran");
	static const char *const keys[] = {"build_ms_median", "frame_ms_median", "overlap", "query_p50_us",
		"query_p99_us", "host_ms_median", "query_hits_mean"};
	// A world that is not incremental reports no active entities.
	cr_assert_eq(cli_number(s, e, "active_median"), 0);
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
		cr_assert_gt(cli_number(s, e, keys[i]), 0, "%s", keys[i]);
	cr_assert_eq(cli_number(s, e, "pairs_last"), o.pairs[5]);
	// --host-ms 1 is a busy loop of 1 ms, part of the host's time every frame.
	cr_assert_geq(cli_number(s, e, "host_ms_median"), 1.0);
	cr_assert_geq(cli_number(s, e, "query_p99_us"), cli_number(s, e, "query_p50_us"));
	result_free(&r);
}

/// Oracle pairs of the generated scene unmoved (frame 1). With movers < n only the
/// movers bp frames documents for --moving are dynamic: entity floor(j * n / movers)
/// for mover j; the others are static and never pair with each other.
static oracle_pairs frame1_oracle(const char *dist, int dims, uint32_t n, uint64_t seed, uint32_t movers)
{
	bp_gen_def def = bp_gen_def_default();
	cr_assert_eq(bp_distribution_from_name(dist, &def.dist), BP_OK);
	def.n = n;
	def.dims = dims;
	def.seed = seed;
	bp_scene *scene = NULL;
	cr_assert_eq(bp_scene_generate(&def, &scene), BP_OK);
	oracle_box *boxes = calloc(scene->count, sizeof *boxes);
	cr_assert_not_null(boxes);
	for (uint32_t i = 0; i < scene->count; ++i) {
		for (int a = 0; a < scene->dims; ++a) {
			boxes[i].min[a] = scene->min[a][i];
			boxes[i].max[a] = scene->max[a][i];
		}
		boxes[i].category = 1;
		boxes[i].mask = UINT64_MAX;
		boxes[i].is_static = movers < scene->count;
	}
	for (uint32_t j = 0; movers < scene->count && j < movers; ++j)
		boxes[(uint64_t)j * scene->count / movers].is_static = false;
	oracle_pairs want = oracle_find_pairs(boxes, scene->count, scene->dims);
	free(boxes);
	bp_scene_destroy(scene);
	return want;
}

/// Frame 1 is the generated scene unmoved: its pairs are those of the oracle on it.
static void expect_frame1_matches_oracle(const char *dist, const char *dims)
{
	cli_result r = BP("frames", "--dist", dist, "--n", "2000", "--dims", dims, "--frames", "2", "--seed", "7",
		"--threads", "2", "--queries", "2");
	expect_code(&r, CLI_EXIT_OK, dist);
	frames_output o = parse_output(r.out);
	oracle_pairs want = frame1_oracle(dist, atoi(dims), 2000, 7, 2000);
	cr_assert_gt(want.count, 0, "a scene without pairs tests nothing");
	cr_assert_eq(o.pairs[0], want.count, "%s %sD frame 1: %" PRIu64 " pairs, oracle %zu", dist, dims, o.pairs[0],
		want.count);
	// The first published frame has no predecessor: every pair began.
	cr_assert_eq(o.began[0], want.count);
	cr_assert_eq(o.ended[0], 0);
	oracle_pairs_free(&want);
	result_free(&r);
}

Test(cli_frames, frame1_matches_oracle, .timeout = 120)
{
	expect_frame1_matches_oracle("uniform", "3");
	expect_frame1_matches_oracle("uniform", "2");
	expect_frame1_matches_oracle("clustered", "3");
	expect_frame1_matches_oracle("mixed", "2");
}

// Pair events are the difference of consecutive frames' pair sets, so per frame
// pairs_k = pairs_{k-1} + began_k - ended_k, ended_k <= pairs_{k-1}, began_k <= pairs_k.
// And the motion must change something: some pairs begin after frame 1.
Test(cli_frames, events_account_for_pair_changes, .timeout = 60)
{
	cli_result r = BP("frames", "--dist", "clustered", "--n", "2000", "--frames", "12", "--threads", "2",
		"--queries", "4");
	expect_code(&r, CLI_EXIT_OK, "frames");
	frames_output o = parse_output(r.out);
	cr_assert_eq(o.frames, 12);
	uint64_t changes = 0;
	for (int k = 1; k < o.frames; ++k) {
		cr_assert_eq(o.pairs[k - 1] + o.began[k] - o.ended[k], o.pairs[k], "frame %d", k + 1);
		cr_assert_leq(o.ended[k], o.pairs[k - 1]);
		cr_assert_leq(o.began[k], o.pairs[k]);
		changes += o.began[k] + o.ended[k];
	}
	cr_assert_gt(changes, 0, "entities did not move");
	result_free(&r);
}

// Moved frames have no outside oracle, but brute is the reference algorithm: every
// other algorithm and thread count must give the same pairs and events on every frame.
Test(cli_frames, algorithms_agree_with_brute_every_frame, .timeout = 120)
{
	static const char *const dists[][2] = {{"uniform", "3"}, {"mixed", "3"}, {"line", "2"}};
	for (size_t d = 0; d < sizeof dists / sizeof dists[0]; ++d) {
		cli_result ref = BP("frames", "--dist", dists[d][0], "--dims", dists[d][1], "--n", "2000", "--frames", "8",
			"--algo", "brute", "--threads", "1", "--queries", "1");
		expect_code(&ref, CLI_EXIT_OK, "brute");
		frames_output want = parse_output(ref.out);
		static const char *const runs[][2] = {{"sap", "1"}, {"sap", "2"}, {"grid", "2"}, {"hash", "2"}, {"auto", "2"}};
		for (size_t i = 0; i < sizeof runs / sizeof runs[0]; ++i) {
			cli_result r = BP("frames", "--dist", dists[d][0], "--dims", dists[d][1], "--n", "2000", "--frames",
				"8", "--algo", runs[i][0], "--threads", runs[i][1], "--queries", "1");
			expect_code(&r, CLI_EXIT_OK, runs[i][0]);
			frames_output got = parse_output(r.out);
			cr_assert_eq(got.frames, want.frames);
			for (int k = 0; k < got.frames; ++k) {
				cr_assert_eq(got.pairs[k], want.pairs[k], "%s %s threads %s frame %d", dists[d][0], runs[i][0],
					runs[i][1], k + 1);
				cr_assert_eq(got.began[k], want.began[k]);
				cr_assert_eq(got.ended[k], want.ended[k]);
			}
			result_free(&r);
		}
		result_free(&ref);
	}
}

// --moving 0.05 --incremental: 100 of 2000 entities move, the rest are static and
// untouched after frame 1. Frame 1 against the oracle (statics do not pair with each
// other); every frame's pairs and events against a world that is not incremental
// running brute on the same motion. An incremental frame searches at most the movers
// again; the step may also rebuild in full (active = n), a choice made from measured
// costs that a test must not depend on (tests/test_incremental.c forces each path).
Test(cli_frames, moving_incremental_matches_brute, .timeout = 120)
{
	static const char *const dists[][2] = {{"uniform", "3"}, {"clustered", "2"}};
	const uint32_t n = 2000, movers = 100;
	for (size_t d = 0; d < sizeof dists / sizeof dists[0]; ++d) {
		cli_result ref = BP("frames", "--dist", dists[d][0], "--dims", dists[d][1], "--n", "2000", "--frames",
			"10", "--seed", "7", "--moving", "0.05", "--algo", "brute", "--threads", "1", "--queries", "1");
		expect_code(&ref, CLI_EXIT_OK, "brute");
		cli_result r = BP("frames", "--dist", dists[d][0], "--dims", dists[d][1], "--n", "2000", "--frames", "10",
			"--seed", "7", "--moving", "0.05", "--incremental", "--threads", "2", "--queries", "2");
		expect_code(&r, CLI_EXIT_OK, "--incremental");
		frames_output want = parse_output(ref.out), got = parse_output(r.out);
		cr_assert_eq(got.frames, 10);
		cr_assert_eq(want.frames, 10);

		oracle_pairs oracle = frame1_oracle(dists[d][0], atoi(dists[d][1]), n, 7, movers);
		cr_assert_gt(oracle.count, 0, "a scene without pairs tests nothing");
		cr_assert_eq(got.pairs[0], oracle.count, "%s frame 1: %" PRIu64 " pairs, oracle %zu", dists[d][0],
			got.pairs[0], oracle.count);
		oracle_pairs_free(&oracle);

		uint64_t changes = 0;
		for (int k = 0; k < got.frames; ++k) {
			cr_assert_eq(got.pairs[k], want.pairs[k], "%s frame %d", dists[d][0], k + 1);
			cr_assert_eq(got.began[k], want.began[k], "%s frame %d", dists[d][0], k + 1);
			cr_assert_eq(got.ended[k], want.ended[k], "%s frame %d", dists[d][0], k + 1);
			cr_assert_eq(want.active[k], 0, "a world that is not incremental reports no active entities");
			if (k == 0) {
				cr_assert_eq(got.active[k], n, "frame 1 searches every entity");
				continue;
			}
			changes += got.began[k] + got.ended[k];
			cr_assert(got.active[k] <= movers || got.active[k] == n, "%s frame %d: active=%" PRIu64, dists[d][0],
				k + 1, got.active[k]);
		}
		cr_assert_gt(changes, 0, "%s: the movers did not move", dists[d][0]);
		cr_assert_geq(cli_number(got.summary, got.summary_end, "active_median"), 1);
		result_free(&r);
		result_free(&ref);
	}
}

Test(cli_frames, usage_errors, .timeout = 30)
{
	static const struct {
		const char *args[8];
		const char *says;
	} cases[] = {
		{{"frames", "--dist", "uniform", "--frames", "2"}, "--n"},
		{{"frames", "--n", "100", "--dims", "4"}, "--dims"},
		{{"frames", "--n", "100", "--dist", "nosuch"}, "nosuch"},
		{{"frames", "--n", "100", "--dist", "boxprune", "--dims", "2"}, "boxprune"},
		{{"frames", "--n", "100", "--frames", "0"}, "--frames"},
		{{"frames", "--n", "100", "--algo", "nosuch"}, "nosuch"},
		{{"frames", "--n", "100", "--bogus"}, "--bogus"},
		{{"frames", "--n", "100", "scene.txt"}, "scene.txt"},
		{{"frames", "--n", "100", "--moving", "0"}, "--moving"},
		{{"frames", "--n", "100", "--moving", "1.5"}, "--moving"},
		{{"frames", "--n", "100", "--moving", "-0.5"}, "--moving"},
		{{"frames", "--n", "100", "--moving", "half"}, "--moving"},
		{{"frames", "--n", "100", "--moving", "0.5x"}, "--moving"},
		{{"frames", "--n", "100", "--moving", "nan"}, "--moving"},
		{{"frames", "--n", "100", "--moving"}, "--moving"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
		const char *const *a = cases[i].args;
		cli_result r = run_bp(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], (const char *)NULL);
		expect_code(&r, CLI_EXIT_USAGE, cases[i].says);
		cr_assert_not_null(strstr(r.err, cases[i].says), "case %zu: stderr does not name '%s': %s", i,
			cases[i].says, r.err);
		cr_assert_eq(r.out[0], '\0', "nothing on stdout after a usage error");
		result_free(&r);
	}
}

Test(cli_frames, help, .timeout = 30)
{
	cli_result r = BP("help", "frames");
	expect_code(&r, CLI_EXIT_OK, "help frames");
	cr_assert_not_null(strstr(r.out, "usage: bp frames"));
	result_free(&r);
	r = BP("frames", "--help");
	expect_code(&r, CLI_EXIT_OK, "frames --help");
	cr_assert_not_null(strstr(r.out, "usage: bp frames"));
	result_free(&r);
}

// ---- --stats ------------------------------------------------------------------------

/// The one line of `text` that starts with `prefix`, as [*line, *end); asserts there is exactly one.
static void only_line(const char *text, const char *prefix, const char **line, const char **end)
{
	*line = NULL;
	size_t k = strlen(prefix);
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		cr_assert_not_null(e, "unterminated line: %s", p);
		if (strncmp(p, prefix, k) == 0) {
			cr_assert_null(*line, "two lines starting with %s", prefix);
			*line = p;
			*end = e;
		}
		p = e + 1;
	}
	cr_assert_not_null(*line, "no line starting with %s in: %s", prefix, text);
}

static const char *const stage_keys[] = {"prepare_ms", "build_ms", "find_ms", "merge_ms", "view_ms"};

/// One frame: the medians are that frame's own numbers, so the stages must fit in the total.
/// brute tests every pair of the 2000 boxes once: 2000 * 1999 / 2 = 1999000 tests, no cells.
Test(cli_frames, stats_one_frame_brute, .timeout = 60)
{
	cli_result r = BP("frames", "--n", "2000", "--frames", "1", "--algo", "brute", "--threads", "2", "--queries",
		"2", "--stats");
	expect_code(&r, CLI_EXIT_OK, "frames --stats");
	const char *s, *se, *t, *te, *f, *fe;
	only_line(r.out, "frames=", &s, &se);
	only_line(r.out, "stats=median ", &t, &te);
	only_line(r.out, "frame=", &f, &fe);
	cr_assert(t > s, "the stats line follows the summary");
	double sum = 0;
	for (size_t i = 0; i < sizeof stage_keys / sizeof stage_keys[0]; ++i) {
		double ms = cli_number(t, te, stage_keys[i]);
		cr_assert_geq(ms, 0, "%s", stage_keys[i]);
		sum += ms;
	}
	const double total = cli_number(t, te, "total_ms");
	// Printed to 1 ns (6 decimals of a ms); 5 roundings of at most 0.5 ns each.
	cr_assert_leq(sum, total + 3e-6, "stages %.6f ms > total %.6f ms", sum, total);
	cr_assert_gt(cli_number(t, te, "find_ms"), 0, "brute's tests take time");
	cr_assert_eq(cli_number(t, te, "hierarchy_ms"), 0, "frame 1 follows no queried frame: no hierarchy built");
	cr_assert_eq(cli_number(t, te, "candidate_tests"), 1999000);
	cr_assert_eq(cli_number(t, te, "cells"), 0);
	cr_assert_eq(cli_number(t, te, "pairs_last"), cli_number(s, se, "pairs_last"));
	cr_assert_eq(cli_number(t, te, "pairs_last"), cli_number(f, fe, "pairs"));
	result_free(&r);
}

/// Several frames: a stage's median cannot exceed the median total (each frame's stage
/// time is at most its total, and order statistics keep that), pairs match the summary.
Test(cli_frames, stats_medians_over_frames, .timeout = 120)
{
	static const char *const algos[] = {"sap", "grid", "hash"};
	for (size_t a = 0; a < sizeof algos / sizeof algos[0]; ++a) {
		cli_result r = BP("frames", "--n", "3000", "--frames", "5", "--algo", algos[a], "--threads", "2",
			"--queries", "2", "--stats");
		expect_code(&r, CLI_EXIT_OK, algos[a]);
		const char *s, *se, *t, *te;
		only_line(r.out, "frames=", &s, &se);
		only_line(r.out, "stats=median ", &t, &te);
		const double total = cli_number(t, te, "total_ms");
		for (size_t i = 0; i < sizeof stage_keys / sizeof stage_keys[0]; ++i)
			cr_assert_leq(cli_number(t, te, stage_keys[i]), total, "%s: %s", algos[a], stage_keys[i]);
		// The host queries every frame's view, so the builder makes frames 2-5's hierarchies.
		const double hierarchy = cli_number(t, te, "hierarchy_ms");
		cr_assert_gt(hierarchy, 0, "%s: a hierarchy made by the builder", algos[a]);
		cr_assert_leq(hierarchy, cli_number(t, te, "view_ms"), "%s: the hierarchy is part of the view", algos[a]);
		cr_assert_gt(cli_number(t, te, "cells"), 0, "%s reports its cells or regions", algos[a]);
		cr_assert_eq(cli_number(t, te, "pairs_last"), cli_number(s, se, "pairs_last"), "%s", algos[a]);
		result_free(&r);
	}
	// Without --stats there is no stats line.
	cli_result r = BP("frames", "--n", "500", "--frames", "2", "--queries", "1");
	expect_code(&r, CLI_EXIT_OK, "frames");
	cr_assert_null(strstr(r.out, "stats="));
	result_free(&r);
}
