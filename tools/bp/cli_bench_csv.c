// SPDX-License-Identifier: MIT
// `bp bench` output: the results directory and the CSV (one header line, one row per
// configuration), to a file or to stdout. The column order is what the plot script reads;
// append new columns at the end.
#define _POSIX_C_SOURCE 200809L
#include "cli_bench.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "output_file.h"

bool bench_make_dirs(const char *path, FILE *err)
{
	char partial[512];
	size_t length = strlen(path);
	if (length >= sizeof partial) {
		fprintf(err, "bp bench: path too long: %s\n", path);
		return false;
	}
	memcpy(partial, path, length + 1);
	for (size_t i = 1; i <= length; ++i) {
		if (partial[i] != '/' && partial[i] != '\0')
			continue;
		char saved = partial[i];
		partial[i] = '\0';
		if (mkdir(partial, 0777) != 0 && errno != EEXIST) {
			fprintf(err, "bp bench: cannot create directory '%s': %s\n", partial, strerror(errno));
			return false;
		}
		partial[i] = saved;
	}
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(err, "bp bench: '%s' is not a directory\n", path);
		return false;
	}
	return true;
}

void bench_print_csv(FILE *f, const bench_plan *plan, const bench_row *rows, int count)
{
	fprintf(f, "scene,dims,n,algo,threads,runs,ms_median,ms_min,ms_prepare,ms_build,ms_find,ms_merge,speedup,pairs,"
		   "checksum,static,moving,incremental,margin,active_median,searched_median\n");
	for (int i = 0; i < count; ++i) {
		const bench_row *r = &rows[i];
		fprintf(f,
			"%s,%d,%" PRIu32 ",%s,%d,%" PRIu32 ",%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.3f,%" PRIu64 ",%016" PRIx64
			",%.9g,%.9g,%d,%.9g,%.1f,%.1f\n",
			plan->scenes[r->scene].name, r->dims, r->n, bp_algorithm_name(r->algo), r->threads, r->runs,
			r->ms_median, r->ms_min, r->ms_prepare, r->ms_build, r->ms_find, r->ms_merge, r->speedup, r->pairs,
			r->checksum, plan->static_fraction, plan->moving, r->incremental ? 1 : 0, (double)plan->margin,
			r->active_median, r->searched_median);
	}
}

int bench_write_csv(const char *path, const bench_plan *plan, const bench_row *rows, int count, FILE *err)
{
	// Whole or not at all (output_file.h): a failed write keeps the last run's CSV.
	bp_output output;
	if (!bp_output_open(&output, path)) {
		fprintf(err, "bp bench: %s\n", output.message);
		return CLI_EXIT_RESOURCE;
	}
	bench_print_csv(output.file, plan, rows, count);
	if (!bp_output_commit(&output)) {
		fprintf(err, "bp bench: %s\n", output.message);
		return CLI_EXIT_RESOURCE;
	}
	return CLI_EXIT_OK;
}
