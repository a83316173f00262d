// SPDX-License-Identifier: MIT
// Traces through the `bp` tool: `bp record` writes what the library reads back, `bp frames
// --replay` and `bp verify` agree with brute force over the trace's own state frame by frame
// (computed here from the reader, independently of the tool), `bp verify` shows its frame on a
// terminal and nothing elsewhere, `bp pairs --frame K` prints frame K's pairs by trace id, `bp
// bench` measures every frame, and damaged traces or misused options are refused with a message.
#define _XOPEN_SOURCE 700 // posix_openpt
#include <criterion/criterion.h>
#include <fcntl.h> // O_NOCTTY
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capped_heap.h"
#include "cli.h"
#include "cli_runner.h"
#include "tmpfiles.h"
#include "trace_bytes.h"
#include "trace_history.h"

static void make_tmp_dir(void) { test_tmp_dir_make("bp_cli_trace_"); }

TestSuite(cli_trace, .init = make_tmp_dir, .fini = test_tmp_dir_remove, .timeout = 120);

/// Pairs of the trace's state after frame k by brute force, as sorted (lo id, hi id) keys.
static uint64_t *oracle_id_pairs(const char *path, uint32_t k, size_t *count)
{
	bp_trace_reader *r = NULL;
	cr_assert_eq(bp_trace_reader_open(path, &r), BP_OK, "%s", bp_trace_open_error());
	cr_assert_eq(bp_trace_reader_seek(r, k), BP_OK, "%s", bp_trace_reader_error(r));
	bp_trace_state s = bp_trace_reader_state(r);
	int dims = bp_trace_reader_info(r).dims;
	oracle_box *boxes = trace_history_boxes(&s, dims);
	oracle_pairs pairs = oracle_find_pairs(boxes, s.count, dims);
	uint64_t *keys = malloc((pairs.count + 1) * sizeof *keys);
	for (size_t i = 0; i < pairs.count; ++i) {
		uint32_t a = s.ids[pairs.data[i].lo], b = s.ids[pairs.data[i].hi];
		keys[i] = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
	}
	*count = pairs.count;
	oracle_pairs_free(&pairs);
	free(boxes);
	bp_trace_reader_close(r);
	return keys;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/// The per-frame "pairs=" values of `bp frames --replay` (with `skin`, or none when NULL)
/// against brute force on every frame; the summary's path counts and held frames
/// against the per-frame lines.
static void expect_replay_matches_oracle(const char *path, uint32_t frames, const char *skin)
{
	cli_result r = skin ? BP("frames", "--replay", path, "--threads", "2", "--verbose", "--skin", skin)
			    : BP("frames", "--replay", path, "--threads", "2", "--verbose");
	expect_code(&r, 0, "frames --replay");
	uint32_t seen = 0, kept = 0, held = 0;
	for (const char *line = r.out; *line;) {
		const char *end = strchr(line, '\n');
		cr_assert_not_null(end);
		unsigned k;
		if (sscanf(line, "frame=%u", &k) == 1) {
			size_t pairs = (size_t)cli_number(line, end, "pairs");
			cr_assert_eq(k, seen, "frames out of order");
			size_t want;
			free(oracle_id_pairs(path, k, &want));
			cr_assert_eq(pairs, want, "frame %u: %zu pairs, brute force %zu", k, pairs, want);
			const char *path_taken = cli_field(line, end, "path");
			cr_assert_not_null(path_taken, "no path= in %.*s", (int)(end - line), line);
			bool moving = strncmp(path_taken, "moving", 6) == 0;
			bool neighbours = strncmp(path_taken, "neighbours", 10) == 0;
			unsigned changes = (unsigned)cli_number(line, end, "changes");
			unsigned searched = (unsigned)cli_number(line, end, "searched");
			kept += moving || neighbours;
			held += (moving || neighbours) && changes > 0 && 5 * searched <= changes;
			++seen;
		} else {
			cr_assert(strncmp(line, "frames=", 7) == 0, "unexpected line: %.*s", (int)(end - line), line);
			cr_assert_eq(cli_number(line, end, "moving") + cli_number(line, end, "neighbours"), kept);
			cr_assert_eq(cli_number(line, end, "full") + cli_number(line, end, "resting") + kept, frames);
			cr_assert_eq(cli_number(line, end, "held"), held);
		}
		line = end + 1;
	}
	cr_assert_eq(seen, frames);
	cr_assert(strstr(r.out, "incremental_vs_plain="));
	result_free(&r);
}

Test(cli_trace, record_then_replay_and_verify)
{
	const char *path = test_tmp_path("rec.bpt");
	cli_result r = BP("record", "--n", "400", "--frames", "12", "--moving", "0.5", "--churn", "0.1", "--keyframes",
		"4", "--dims", "2", "-o", path);
	expect_code(&r, 0, "record");
	cr_assert(strstr(r.out, "recorded=") && strstr(r.out, " frames=12 n=400 dims=2 creates=620 destroys=220 moves=1980\n"),
		"%s", r.out);
	result_free(&r);
	bp_trace_reader *reader = NULL;
	cr_assert_eq(bp_trace_reader_open(path, &reader), BP_OK, "%s", bp_trace_open_error());
	bp_trace_info info = bp_trace_reader_info(reader);
	cr_assert(info.dims == 2 && info.frame_count == 12 && info.max_entities == 400 && info.keyframe_interval == 4);
	bp_trace_reader_close(reader);

	expect_replay_matches_oracle(path, 12, NULL);
	r = BP("verify", path, "--threads", "2");
	expect_code(&r, 0, "verify");
	cr_assert(strstr(r.out, "auto ok frames=12 ") && strstr(r.out, "incremental ok frames=12 "), "%s", r.out);
	result_free(&r);
}

/// Filters, statics, spheres, creates and destroys: a trace written through the library.
/// A pile settling, its boxes mostly inside their grown ones: the neighbour list holds
/// them for most frames, and those count as held.
Test(cli_trace, a_pile_replays_with_a_neighbour_list)
{
	const char *path = test_tmp_path("pile.bpt");
	cli_result r = BP("record", "--motion", "pile", "--n", "300", "--frames", "40", "--seed", "3", "-o", path);
	expect_code(&r, 0, "record");
	result_free(&r);
	expect_replay_matches_oracle(path, 40, "0.4");
	r = BP("frames", "--replay", path, "--skin", "0.4");
	const char *summary = strstr(r.out, "\nframes=40 ");
	cr_assert_not_null(summary, "%s", r.out);
	cr_assert_gt(cli_number(summary, summary + strlen(summary), "held"), 10, "%s", summary);
	result_free(&r);
}

Test(cli_trace, a_host_trace_replays_and_verifies)
{
	const char *path = test_tmp_path("host.bpt");
	trace_history h;
	trace_history_write(path, 3, 250, 15, 6, 31, &h);
	trace_history_free(&h);
	expect_replay_matches_oracle(path, 15, NULL);
	cli_result r = BP("verify", path, "--algo", "grid");
	expect_code(&r, 0, "verify --algo grid");
	cr_assert(strstr(r.out, "grid ok frames=15 ") && strstr(r.out, "incremental ok frames=15 "), "%s", r.out);
	result_free(&r);
	r = BP("verify", path, "--frame", "11");
	expect_code(&r, 0, "verify --frame 11");
	cr_assert(strstr(r.out, "sap ok frames=1 "), "%s", r.out);
	result_free(&r);
}

/// The test oracle's pairs summed over every frame.
static uint64_t oracle_pairs_over_frames(const char *path, uint32_t frames)
{
	uint64_t total = 0;
	for (uint32_t k = 0; k < frames; ++k) {
		size_t count;
		free(oracle_id_pairs(path, k, &count));
		total += count;
	}
	return total;
}

// Finding (issue 7): verify stepped a brute-force world beside the checked ones, n^2 a frame,
// and said nothing until the end. Its oracle is now the tool's sweep: the totals it reports
// are the test oracle's on a trace with filters, statics, spheres, creates and destroys, and
// with stderr not a terminal nothing is written there.
Test(cli_trace, verify_totals_are_the_oracles_and_stderr_stays_empty)
{
	for (int dims = 2; dims <= 3; ++dims) {
		const char *path = test_tmp_path("host.bpt");
		trace_history h;
		trace_history_write(path, dims, 400, 12, 5, 77 + (uint64_t)dims, &h);
		trace_history_free(&h);
		cli_result r = BP("verify", path, "--threads", "2");
		expect_code(&r, 0, "verify");
		cr_assert_str_empty(r.err, "%s", r.err);
		char want[64];
		snprintf(want, sizeof want, " ok frames=12 pairs=%llu\n",
			(unsigned long long)oracle_pairs_over_frames(path, 12));
		int lines = 0;
		for (const char *line = r.out; *line; line = strchr(line, '\n') + 1, ++lines)
			cr_assert(strstr(line, want) == strchr(line, ' '), "want '%s': %s", want, r.out);
		cr_assert_geq(lines, 3, "%s", r.out);
		result_free(&r);
	}
}

// On a terminal stderr shows "bp verify: frame K/F", rewritten in place, and clears it before
// the results.
Test(cli_trace, verify_shows_the_frame_on_a_terminal)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0)
		cr_skip_test("no pseudo-terminal here");
	FILE *tty = fopen(ptsname(master), "w");
	cr_assert_not_null(tty);
	const char *path = test_tmp_path("rec.bpt");
	cli_result r = BP("record", "--n", "200", "--frames", "6", "-o", path);
	expect_code(&r, 0, "record");
	result_free(&r);
	char *out_text = NULL;
	size_t out_size = 0;
	FILE *out = open_memstream(&out_text, &out_size);
	char *argv[] = {"bp", "verify", (char *)path, "--algo", "sap", NULL};
	cr_assert_eq(bp_cli_main(5, argv, out, tty), 0);
	fclose(out);
	fclose(tty);
	// The terminal passes the bytes on in pieces; with no writer left a read past them fails (EIO).
	char seen[4096];
	size_t got = 0;
	for (ssize_t n; got < sizeof seen - 1 && (n = read(master, seen + got, sizeof seen - 1 - got)) > 0;)
		got += (size_t)n;
	seen[got] = '\0';
	cr_assert_not_null(strstr(seen, "\rbp verify: frame 1/6\033[K"), "%s", seen);
	cr_assert_not_null(strstr(seen, "\rbp verify: frame 6/6\033[K"), "%s", seen);
	cr_assert(got >= 4 && strcmp(seen + got - 4, "\r\033[K") == 0, "the line is not cleared: %s", seen);
	cr_assert(strstr(out_text, "sap ok frames=6 "), "%s", out_text);
	free(out_text);
	close(master);
}

Test(cli_trace, pairs_of_frame_k)
{
	const char *path = test_tmp_path("host.bpt");
	trace_history h;
	trace_history_write(path, 3, 250, 20, 8, 41, &h);
	trace_history_free(&h);
	char out_path[128];
	snprintf(out_path, sizeof out_path, "%s", test_tmp_path("pairs.txt"));
	const uint32_t frames[] = {19, 3, 16, 0};
	for (size_t t = 0; t < sizeof frames / sizeof frames[0]; ++t) {
		char k[16];
		snprintf(k, sizeof k, "%u", frames[t]);
		cli_result r = BP("pairs", path, "--frame", k, "-o", out_path);
		expect_code(&r, 0, "pairs --frame");
		size_t want_count, size, got_count = 0;
		uint64_t *want = oracle_id_pairs(path, frames[t], &want_count);
		char *text = test_read_file(out_path, &size);
		uint64_t *got = malloc((want_count + 1) * sizeof *got);
		unsigned a, b;
		int used;
		for (const char *p = text; sscanf(p, "%u %u\n%n", &a, &b, &used) == 2; p += used) {
			cr_assert_lt(got_count, want_count + 1, "frame %u: more pairs than brute force", frames[t]);
			cr_assert_lt(a, b);
			got[got_count++] = (uint64_t)a << 32 | b;
		}
		qsort(got, got_count, sizeof *got, compare_u64);
		qsort(want, want_count, sizeof *want, compare_u64);
		cr_assert_eq(got_count, want_count, "frame %u", frames[t]);
		cr_assert(!memcmp(got, want, want_count * sizeof *got), "frame %u: pairs differ from brute force", frames[t]);
		char expect[64];
		snprintf(expect, sizeof expect, "pairs=%zu ", want_count);
		cr_assert(strncmp(r.out, expect, strlen(expect)) == 0, "%s", r.out);
		free(text), free(got), free(want);
		result_free(&r);
	}
}

Test(cli_trace, bench_measures_every_frame)
{
	const char *path = test_tmp_path("rec.bpt");
	cli_result r = BP("record", "--n", "500", "--frames", "9", "--moving", "0.2", "-o", path);
	expect_code(&r, 0, "record");
	result_free(&r);
	const char *dir = test_tmp_path("bench");
	r = BP("bench", path, "--algos", "sap,grid", "--threads", "1", "--worlds", "full,incremental", "--no-plots",
		"--no-progress", "--out", dir);
	expect_code(&r, 0, "bench");
	cr_assert(strstr(r.out, "rows=4 "), "%s", r.out);
	result_free(&r);
	char csv[192];
	snprintf(csv, sizeof csv, "%s/bench-custom.csv", dir);
	size_t size;
	char *text = test_read_file(csv, &size);
	int rows = 0;
	for (const char *p = strchr(text, '\n'); p && p[1]; p = strchr(p + 1, '\n'), ++rows)
		cr_assert(strncmp(p + 1, "rec.bpt,3,500,", 14) == 0 && strstr(p + 1, ",9,"), "%s", p + 1);
	cr_assert_eq(rows, 4);
	free(text);
}

Test(cli_trace, damaged_traces_and_misuse_are_refused)
{
	const char *path = test_tmp_path("rec.bpt");
	cli_result r = BP("record", "--n", "50", "--frames", "3", "-o", path);
	expect_code(&r, 0, "record");
	result_free(&r);
	size_t size;
	char *bytes = test_read_file(path, &size);
	char cut[128];
	snprintf(cut, sizeof cut, "%s", test_tmp_path("cut.bpt"));
	FILE *f = fopen(cut, "wb");
	cr_assert_eq(fwrite(bytes, 1, size - 5, f), size - 5);
	fclose(f);
	free(bytes);
	const char *commands[][4] = {{"bp", "frames", "--replay", cut}, {"bp", "verify", cut, NULL},
		{"bp", "pairs", cut, NULL}, {"bp", "bench", cut, "--no-plots"}};
	for (size_t i = 0; i < 4; ++i) {
		cli_result c = run_bp_args(commands[i][3] ? 4 : 3, commands[i]);
		expect_code(&c, 2, commands[i][1]);
		cr_assert(strstr(c.err, "cut.bpt: truncated"), "%s", c.err);
		result_free(&c);
	}
	struct {
		const char *args[9];
		const char *says;
	} misuse[] = {
		{{"frames", "--replay", path, "--n", "5"}, "--n does not apply to --replay"},
		{{"record", "--n", "5"}, "--n and -o are required"},
		{{"record", "--n", "5", "--churn", "2", "-o", }, "--churn"},
		{{"pairs", path, "--frame", "3"}, "the trace has 3 frames, got 3"},
		{{"verify", path, "--frame", "7"}, "the trace has 3 frames, got 7"},
		{{"record", "--n", "100000", "--churn", "1", "--frames", "100000", "-o", path}, "pass the 32-bit ids"},
	};
	misuse[2].args[6] = test_tmp_path("x.bpt");
	for (size_t i = 0; i < sizeof misuse / sizeof misuse[0]; ++i) {
		int argc = 1;
		const char *argv[10] = {"bp"};
		for (int j = 0; j < 9 && misuse[i].args[j]; ++j)
			argv[argc++] = misuse[i].args[j];
		cli_result c = run_bp_args(argc, argv);
		expect_code(&c, 1, misuse[i].says);
		cr_assert(strstr(c.err, misuse[i].says), "'%s' does not say '%s'", c.err, misuse[i].says);
		result_free(&c);
	}
}

// The tracker's trace: valid but for a trailer whose max_entities says 0xFFFFFFFF (checksum
// matched). Every command that made a world from it asked for 4,294,967,294 entities; now the
// reader refuses it on open, and no command allocates more than a small trace needs.
Test(cli_trace, a_max_entities_no_record_could_create_is_refused_by_every_command)
{
	capped_heap_install(INT64_C(256) << 20);
	const char *path = test_tmp_path("rec.bpt");
	cli_result r = BP("record", "--n", "300", "--frames", "12", "--moving", "0.2", "--churn", "0.05", "-o", path);
	expect_code(&r, 0, "record");
	result_free(&r);
	size_t size;
	uint8_t *bytes = (uint8_t *)test_read_file(path, &size);
	trace_field_set(bytes, size, trace_field_named("max_entities"), UINT32_MAX);
	FILE *f = fopen(path, "wb");
	cr_assert(f && fwrite(bytes, 1, size, f) == size && fclose(f) == 0);
	free(bytes);
	capped_heap_reset();
	const char *commands[][5] = {{"bp", "pairs", path, "--frame", "5"}, {"bp", "verify", path, NULL},
		{"bp", "verify", path, "--frame", "5"}, {"bp", "frames", "--replay", path, NULL}};
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i) {
		int argc = 0;
		while (argc < 5 && commands[i][argc])
			++argc;
		cli_result c = run_bp_args(argc, commands[i]);
		expect_code(&c, 2, commands[i][1]);
		cr_assert(strstr(c.err, "trailer: max_entities 4294967295"), "%s", c.err);
		result_free(&c);
	}
	cr_assert_eq(capped_heap_refusals(), 0, "an allocation past 256 MiB was asked for");
	cr_assert_eq(bp_allocated_bytes(), 0);
	capped_heap_remove();
}

// A world made for a trace is sized by the entities the reader holds: none before the first
// frame, the state's after a seek; the trailer's count is a claim about frames not yet read.
Test(cli_trace, worlds_are_sized_from_what_the_reader_holds)
{
	const char *path = test_tmp_path("sized.bpt");
	trace_history h;
	trace_history_write(path, 2, 40, 6, 2, 3, &h);
	bp_trace_reader *reader = NULL;
	cr_assert_eq(bp_trace_reader_open(path, &reader), BP_OK, "%s", bp_trace_open_error());
	const bp_world_def settings = bp_world_def_default();
	bp_world_def def = cli_trace_world_def(reader, &settings);
	cr_assert(def.dims == 2 && def.capacity == 0, "dims %d, capacity %u", def.dims, def.capacity);
	cr_assert_eq(bp_trace_reader_seek(reader, 4), BP_OK, "%s", bp_trace_reader_error(reader));
	def = cli_trace_world_def(reader, &settings);
	cr_assert_eq(def.capacity, h.counts[4]);
	bp_trace_reader_close(reader);
	trace_history_free(&h);
}
