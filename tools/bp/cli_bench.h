// SPDX-License-Identifier: MIT
// `bp bench` pieces shared by its files: the plan (scenes x n x algorithms x threads), one
// measured row per configuration, and the CSV, progress bar and plot steps.
#ifndef BP_CLI_BENCH_H
#define BP_CLI_BENCH_H

#include "cli.h"

#define BENCH_MAX_SCENES 32
#define BENCH_MAX_LIST 16
#define BENCH_NAME_MAX 64
/// brute is skipped above this many entities: 1e5 uniform takes seconds a step.
#define BENCH_BRUTE_MAX_N 20000

/// One scene: generated (`dist` + dims, n from the plan) or read from a file (n fixed).
typedef struct bench_scene {
	char name[BENCH_NAME_MAX]; ///< "uniform3", or the file's base name (CSV-safe)
	bp_distribution dist;
	int dims;
	const char *path;  ///< NULL for a generated scene
	bp_scene *loaded;  ///< the file's scene (frame 0 is measured); owned
	const char *trace; ///< a trace file (every frame is measured), else NULL
	uint32_t trace_n;  ///< the trace's most entities live at once
} bench_scene;

typedef struct bench_plan {
	const char *preset;          ///< "small", "medium" or "large"
	bool custom;                 ///< an option changed the preset's lists
	bench_scene scenes[BENCH_MAX_SCENES];
	int scene_count;
	uint32_t n[BENCH_MAX_LIST];
	int n_count;
	bp_algorithm algos[BP_ALGO_COUNT];
	int algo_count;
	int threads[BENCH_MAX_LIST];
	int thread_count;
	uint32_t runs;
	uint64_t seed;
	char machine[BENCH_NAME_MAX];
	char out_dir[512]; ///< where the CSV and plots go; empty: the CSV to stdout, no files
	char stem[BENCH_NAME_MAX]; ///< "bench-small", or "bench-custom" when the lists were changed
	bool plots;
	bool progress;
	// A world mostly at rest (README, "Worlds mostly at rest"): the same for every configuration.
	double static_fraction; ///< --static: round(F * n) entities, evenly spread, are BP_KIND_STATIC
	double moving;          ///< --moving: fraction of the dynamic entities moved before each step
	float margin;           ///< --margin: bp_world_def.margin
	bool incremental[2];    ///< the world kinds measured, in order: def.incremental of each
	int world_count;        ///< 1, or 2 for --worlds full,incremental
} bench_plan;

/// Steps with motion: after the first (full) step, this many moved warm-up steps, so an
/// incremental world has measured both of its paths before the timed steps. Every step
/// of a configuration, warm-up and timed, comes after one frame of motion but the first.
#define BENCH_WARMUP_MOVES 2

/// One configuration's measurement; times are milliseconds.
typedef struct bench_row {
	int scene;       ///< index into plan->scenes
	int dims;
	uint32_t n;
	bp_algorithm algo;
	int threads;
	bool incremental; ///< def.incremental of the world
	uint32_t runs;
	double ms_median, ms_min;
	double ms_prepare, ms_build, ms_find, ms_merge; ///< medians over the runs, per stage
	double speedup;  ///< ms_median at the plan's fewest threads / ms_median (same scene, n, algo, world kind)
	uint64_t pairs;
	uint64_t checksum;
	double active_median;   ///< median over the runs of bp_frame_stats.active_count
	double searched_median; ///< the same of searched_count
} bench_row;

/// Parses the command line into a plan (cli_bench_args.c). Files named on the
/// command line are read here, so an unreadable one fails before any timing.
/// Returns an exit code; *help is set for --help (usage already printed).
int bench_parse(int argc, char **argv, bench_plan *plan, bool *help, FILE *out, FILE *err);
/// Frees what bench_parse loaded.
void bench_plan_free(bench_plan *plan);

/// Whether a configuration runs (brute is skipped on large scenes).
bool bench_runs_config(bp_algorithm algo, uint32_t n);

/// Steps `scene` with one algorithm, thread count and world kind: a warm-up step (and
/// BENCH_WARMUP_MOVES moved ones when entities move), then plan->runs timed steps, the
/// plan's statics and motion applied (cli_bench_run.c). Fills every field of *row but
/// scene and speedup.
int bench_measure(const bp_scene *scene, const bench_plan *plan, bp_algorithm algo, int threads, bool incremental,
	bench_row *row, FILE *err);

/// As bench_measure for a trace (cli_bench_trace.c): a world that follows the trace, every
/// frame applied (not timed) and stepped (timed); runs is its frame count, pairs and checksum
/// those of its last frame, by trace id.
int bench_measure_trace(const char *path, const bench_plan *plan, bp_algorithm algo, int threads, bool incremental,
	bench_row *row, FILE *err);

/// The name of a row's line in messages and plots: the algorithm, "-incremental" added
/// for an incremental world ("grid", "grid-incremental").
const char *bench_line_name(bp_algorithm algo, bool incremental, char *buffer, size_t size);

/// The progress bar (cli_bench_progress.c): one line on `to`, rewritten with '\r'.
typedef struct bench_progress {
	FILE *to;          ///< NULL: no bar
	uint64_t start_ns;
	double work_total; ///< expected cost of every step of every configuration
	double work_done;
	int done, total;
} bench_progress;

void bench_progress_start(bench_progress *p, FILE *to, int total, double work_total);
/// Shows the configuration about to run.
void bench_progress_show(bench_progress *p, const char *scene, const char *line, uint32_t n, int threads);
void bench_progress_step(bench_progress *p, double work);
void bench_progress_finish(bench_progress *p);

/// Prints the CSV (cli_bench_csv.c): one header line, one row per configuration.
void bench_print_csv(FILE *f, const bench_plan *plan, const bench_row *rows, int count);
/// Writes the CSV to a file, whole or not at all.
int bench_write_csv(const char *path, const bench_plan *plan, const bench_row *rows, int count, FILE *err);

/// Writes `<stem>.gnuplot` next to the CSV and runs gnuplot on it, giving
/// `<stem>-time-vs-n.png`, `-speedup.png` and `-stages.png` (cli_bench_plot.c).
/// Prints "plot=PATH" per image on `out`. What gnuplot says is shown only when it fails.
/// Without gnuplot on PATH: a note, exit 0.
int bench_plot(const bench_plan *plan, const bench_row *rows, int count, FILE *out, FILE *err);

/// Creates a directory and its parents (mkdir -p); false with a message on failure.
bool bench_make_dirs(const char *path, FILE *err);

#endif
