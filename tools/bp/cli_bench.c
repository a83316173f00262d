// SPDX-License-Identifier: MIT
// `bp bench`: every scene x n x algorithm x world kind x thread count of a plan, timed, checked for
// agreement (same pairs and checksum from every configuration of one scene), and printed as CSV,
// or with --out written as CSV and plotted.
#include "cli_bench.h"

#include <inttypes.h>
#include <stdlib.h>

/// Expected cost of one step, for the ETA: n, and n^2 / 10 for brute (measured
/// ratios brute/sap, 1 thread: 75x at n=1e3, 1000x at 1e4).
static double step_work(bp_algorithm algo, uint32_t n)
{
	return algo == BP_ALGO_BRUTE && n > 10 ? (double)n * n / 10 : (double)n;
}

/// Sizes the plan: configurations and their expected cost, for the ETA.
static int count_configs(const bench_plan *plan, double *work, bool *brute_skipped)
{
	int total = 0;
	*work = 0;
	*brute_skipped = false;
	for (int s = 0; s < plan->scene_count; ++s) {
		const bench_scene *scene = &plan->scenes[s];
		for (int k = 0; k < (scene->loaded || scene->trace ? 1 : plan->n_count); ++k) {
			uint32_t n = scene->trace ? scene->trace_n : scene->loaded ? scene->loaded->count : plan->n[k];
			for (int a = 0; a < plan->algo_count; ++a) {
				if (!bench_runs_config(plan->algos[a], n)) {
					*brute_skipped = true;
					continue;
				}
				total += plan->thread_count * plan->world_count;
				*work += plan->thread_count * plan->world_count * step_work(plan->algos[a], n) * (plan->runs + 1);
			}
		}
	}
	return total;
}

static int generate(const bench_plan *plan, const bench_scene *spec, uint32_t n, bp_scene **out, FILE *err)
{
	bp_gen_def def = bp_gen_def_default();
	def.dist = spec->dist;
	def.dims = spec->dims;
	def.n = n;
	def.seed = plan->seed;
	bp_status status = bp_scene_generate(&def, out);
	if (status != BP_OK) {
		fprintf(err, "bp bench: generating %s n=%" PRIu32 ": %s\n", spec->name, n, bp_status_string(status));
		return cli_exit_for_status(status);
	}
	return CLI_EXIT_OK;
}

/// Every configuration of one scene must find the same pairs; prints the first that does not.
static bool agrees(const bench_plan *plan, const bench_row *first, const bench_row *row, FILE *err)
{
	if (row->pairs == first->pairs && row->checksum == first->checksum)
		return true;
	char a[BENCH_NAME_MAX], b[BENCH_NAME_MAX];
	fprintf(err,
		"bp bench: %s n=%" PRIu32 ": %s threads=%d found pairs=%" PRIu64 " checksum=%016" PRIx64
		", but %s threads=%d found pairs=%" PRIu64 " checksum=%016" PRIx64 "\n",
		plan->scenes[row->scene].name, row->n, bench_line_name(row->algo, row->incremental, a, sizeof a), row->threads,
		row->pairs, row->checksum, bench_line_name(first->algo, first->incremental, b, sizeof b), first->threads,
		first->pairs, first->checksum);
	return false;
}

/// Speed-up of each row of one scene against the same algorithm and world kind at the plan's fewest threads.
static void set_speedups(const bench_plan *plan, bench_row *rows, int count)
{
	int fewest = plan->threads[0];
	for (int t = 1; t < plan->thread_count; ++t)
		fewest = plan->threads[t] < fewest ? plan->threads[t] : fewest;
	for (int i = 0; i < count; ++i) {
		for (int j = 0; j < count; ++j) {
			if (rows[j].algo == rows[i].algo && rows[j].incremental == rows[i].incremental && rows[j].threads == fewest)
				rows[i].speedup = rows[i].ms_median > 0 ? rows[j].ms_median / rows[i].ms_median : 0;
		}
	}
}

/// Runs every configuration of scene `s` at size index k; appends rows.
static int run_scene(const bench_plan *plan, int s, int k, bench_row *rows, int *count, bench_progress *progress,
	bool *mismatch, FILE *err)
{
	const bench_scene *spec = &plan->scenes[s];
	bp_scene *generated = NULL;
	const bp_scene *scene = spec->loaded;
	int code = CLI_EXIT_OK;
	if (!scene && !spec->trace) {
		code = generate(plan, spec, plan->n[k], &generated, err);
		scene = generated;
	}
	const uint32_t n = spec->trace ? spec->trace_n : code == CLI_EXIT_OK ? scene->count : 0;
	const int first = *count;
	for (int a = 0; a < plan->algo_count && code == CLI_EXIT_OK; ++a) {
		if (!bench_runs_config(plan->algos[a], n))
			continue;
		for (int w = 0; w < plan->world_count && code == CLI_EXIT_OK; ++w) {
			for (int t = 0; t < plan->thread_count && code == CLI_EXIT_OK; ++t) {
				char line[BENCH_NAME_MAX];
				bench_progress_show(progress, spec->name,
					bench_line_name(plan->algos[a], plan->incremental[w], line, sizeof line), n, plan->threads[t]);
				bench_row *row = &rows[*count];
				code = spec->trace ? bench_measure_trace(spec->trace, plan, plan->algos[a], plan->threads[t],
							     plan->incremental[w], row, err)
						   : bench_measure(scene, plan, plan->algos[a], plan->threads[t],
							     plan->incremental[w], row, err);
				if (code != CLI_EXIT_OK)
					break;
				row->scene = s;
				*mismatch |= !agrees(plan, &rows[first], row, err);
				++*count;
				bench_progress_step(progress, step_work(plan->algos[a], n) * (plan->runs + 1));
			}
		}
	}
	set_speedups(plan, rows + first, *count - first);
	bp_scene_destroy(generated);
	return code;
}

/// With --out (or --machine): the CSV, a summary line and the plots, in the results directory.
static int write_files(const bench_plan *plan, const bench_row *rows, int count, uint64_t start, FILE *out, FILE *err)
{
	char csv_path[sizeof plan->out_dir + BENCH_NAME_MAX + 8];
	snprintf(csv_path, sizeof csv_path, "%s/%s.csv", plan->out_dir, plan->stem);
	int code = bench_write_csv(csv_path, plan, rows, count, err);
	if (code != CLI_EXIT_OK)
		return code;
	fprintf(out, "csv=%s rows=%d seconds=%.1f\n", csv_path, count, (double)(cli_now_ns() - start) / 1e9);
	return plan->plots ? bench_plot(plan, rows, count, out, err) : CLI_EXIT_OK;
}

int cli_bench(int argc, char **argv, FILE *out, FILE *err)
{
	bench_plan plan;
	bool help;
	int code = bench_parse(argc, argv, &plan, &help, out, err);
	if (code != CLI_EXIT_OK || help) {
		bench_plan_free(&plan);
		return code;
	}
	const uint64_t start = cli_now_ns();
	const bool to_files = plan.out_dir[0] != '\0';
	double work;
	bool brute_skipped;
	int total = count_configs(&plan, &work, &brute_skipped);
	if (brute_skipped)
		fprintf(err, "bp bench: brute skipped above %d entities (seconds per step)\n", BENCH_BRUTE_MAX_N);
	bench_row *rows = calloc(total ? (size_t)total : 1, sizeof *rows);
	if (!rows) {
		fprintf(err, "bp bench: out of memory\n");
		code = CLI_EXIT_RESOURCE;
	} else if (to_files && !bench_make_dirs(plan.out_dir, err)) {
		code = CLI_EXIT_RESOURCE; // before any timing, so a bad --out fails at once
	}
	bench_progress progress;
	bench_progress_start(&progress, plan.progress ? cli_status_stream(err) : NULL, total, work);
	int count = 0;
	bool mismatch = false;
	for (int s = 0; s < plan.scene_count && code == CLI_EXIT_OK; ++s)
		for (int k = 0; k < (plan.scenes[s].loaded || plan.scenes[s].trace ? 1 : plan.n_count) && code == CLI_EXIT_OK;
			++k)
			code = run_scene(&plan, s, k, rows, &count, &progress, &mismatch, err);
	bench_progress_finish(&progress);
	if (code == CLI_EXIT_OK && to_files)
		code = write_files(&plan, rows, count, start, out, err);
	else if (code == CLI_EXIT_OK)
		bench_print_csv(out, &plan, rows, count);
	if (code == CLI_EXIT_OK && mismatch)
		code = CLI_EXIT_MISMATCH;
	free(rows);
	bench_plan_free(&plan);
	return code;
}
