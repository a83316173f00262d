// SPDX-License-Identifier: MIT
// `bp bench` command line: presets, then the lists the options replace (scenes, n, algorithms,
// threads, world kinds), the workload of a world mostly at rest (statics, movers, margin), the
// machine name, the output directory and the name of the files.
#define _POSIX_C_SOURCE 200809L
#include "cli_bench.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	OPT_PRESET,
	OPT_SCENES,
	OPT_ALGOS,
	OPT_N,
	OPT_THREADS,
	OPT_RUNS,
	OPT_SEED,
	OPT_MACHINE,
	OPT_OUT,
	OPT_NO_PLOTS,
	OPT_NO_PROGRESS,
	OPT_STATIC,
	OPT_MOVING,
	OPT_INCREMENTAL,
	OPT_WORLDS,
	OPT_MARGIN,
	OPT_NAME,
	OPT_COUNT
};

typedef struct preset {
	const char *name;
	const char *scenes;
	const char *n;
	const char *algos;
	uint32_t runs;
} preset;

// small: about 10 s of steps on the 2-core machine (brute at 1e4 is most of it).
// large: only the algorithms meant for 1e7 entities; one uniform scene per dims.
static const preset presets[] = {
	{"small", "uniform3,clustered3,uniform2", "1000,10000,100000", "all", 3},
	{"medium", "uniform3,clustered3,uniform2,mixed3", "1000,10000,100000,1000000", "all", 3},
	{"large", "uniform3,uniform2", "100000,1000000,10000000", "sap,grid", 3},
};

/// Copies the next comma-separated item of *list into item; false at the end.
static bool next_item(const char **list, char *item, size_t size)
{
	const char *p = *list;
	if (!*p)
		return false;
	const char *comma = strchr(p, ',');
	size_t length = comma ? (size_t)(comma - p) : strlen(p);
	if (length >= size)
		length = size - 1; // too long for any valid name: fails the name check
	memcpy(item, p, length);
	item[length] = '\0';
	*list = comma ? comma + 1 : p + strlen(p);
	return true;
}

static bool list_error(const char *flag, const char *what, FILE *err)
{
	fprintf(err, "bp bench: %s: %s\n", flag, what);
	return false;
}

/// "uniform3" -> the distribution and dims.
static bool parse_scenes(const char *text, bench_plan *plan, FILE *err)
{
	char item[BENCH_NAME_MAX];
	for (const char *p = text; next_item(&p, item, sizeof item);) {
		if (plan->scene_count == BENCH_MAX_SCENES)
			return list_error("--scenes", "too many scenes", err);
		size_t length = strlen(item);
		int dims = length ? item[length - 1] - '0' : 0;
		bench_scene *s = &plan->scenes[plan->scene_count];
		if (length < 2 || (dims != 2 && dims != 3)) {
			fprintf(err, "bp bench: --scenes: expected a distribution and 2 or 3 dims, like uniform3, got '%s'\n",
				item);
			return false;
		}
		item[length - 1] = '\0';
		if (bp_distribution_from_name(item, &s->dist) != BP_OK) {
			fprintf(err, "bp bench: --scenes: unknown distribution '%s' (known:", item);
			for (int d = 0; d < BP_DIST_COUNT; ++d)
				fprintf(err, " %s", bp_distribution_name((bp_distribution)d));
			fprintf(err, ")\n");
			return false;
		}
		if (s->dist == BP_DIST_BOXPRUNE && dims != 3)
			return list_error("--scenes", "boxprune is 3D only (boxprune3)", err);
		s->dims = dims;
		// One dims digit after the name, bounded so the compiler sees it fits.
		snprintf(s->name, sizeof s->name, "%.*s%c", (int)sizeof s->name - 2, item, '0' + dims);
		++plan->scene_count;
	}
	return plan->scene_count > 0 || list_error("--scenes", "empty list", err);
}

static bool parse_algos(const char *text, bench_plan *plan, FILE *err)
{
	plan->algo_count = 0;
	if (strcmp(text, "all") == 0) {
		// auto is one of the others under another name: not measured twice.
		for (int i = 0; i < BP_ALGO_COUNT; ++i)
			if (i != BP_ALGO_AUTO && bp_algorithm_available((bp_algorithm)i))
				plan->algos[plan->algo_count++] = (bp_algorithm)i;
		return true;
	}
	char item[BENCH_NAME_MAX];
	for (const char *p = text; next_item(&p, item, sizeof item);) {
		bp_algorithm algo;
		if (!cli_parse_algorithm("bench", "--algos", item, &algo, err))
			return false;
		for (int i = 0; i < plan->algo_count; ++i)
			if (plan->algos[i] == algo)
				return list_error("--algos", "an algorithm is named twice", err);
		plan->algos[plan->algo_count++] = algo;
	}
	return plan->algo_count > 0 || list_error("--algos", "empty list", err);
}

/// A list of integers in [lo, hi], each at most once.
static bool parse_numbers(const char *flag, const char *text, uint64_t lo, uint64_t hi, uint64_t *values,
	int *count, FILE *err)
{
	*count = 0;
	char item[32];
	for (const char *p = text; next_item(&p, item, sizeof item);) {
		if (*count == BENCH_MAX_LIST)
			return list_error(flag, "too many values", err);
		if (!cli_parse_u64("bench", flag, item, lo, hi, &values[*count], err))
			return false;
		for (int i = 0; i < *count; ++i)
			if (values[i] == values[*count])
				return list_error(flag, "a value is given twice", err);
		++*count;
	}
	return *count > 0 || list_error(flag, "empty list", err);
}

/// 1, 2, 4, ... below the core count, then the core count.
static void default_threads(bench_plan *plan, int cores)
{
	plan->thread_count = 0;
	for (int t = 1; t < cores && plan->thread_count < BENCH_MAX_LIST - 1; t *= 2)
		plan->threads[plan->thread_count++] = t;
	plan->threads[plan->thread_count++] = cores;
}

/// Base name of a path with anything but [A-Za-z0-9._-] made '_', so it is one CSV field and one gnuplot word.
static void scene_name_of_path(const char *path, char *name, size_t size)
{
	const char *slash = strrchr(path, '/');
	snprintf(name, size, "%s", slash && slash[1] ? slash + 1 : path);
	for (char *c = name; *c; ++c) {
		bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
			*c == '_' || *c == '-';
		if (!ok)
			*c = '_';
	}
}

/// "full" and "incremental", each at most once, in the order given.
static bool parse_worlds(const char *text, bench_plan *plan, FILE *err)
{
	char item[BENCH_NAME_MAX];
	plan->world_count = 0;
	for (const char *p = text; next_item(&p, item, sizeof item);) {
		bool incremental = strcmp(item, "incremental") == 0;
		if (!incremental && strcmp(item, "full") != 0) {
			fprintf(err, "bp bench: --worlds: expected full or incremental, got '%s'\n", item);
			return false;
		}
		for (int i = 0; i < plan->world_count; ++i)
			if (plan->incremental[i] == incremental)
				return list_error("--worlds", "a world kind is named twice", err);
		plan->incremental[plan->world_count++] = incremental;
	}
	return plan->world_count > 0 || list_error("--worlds", "empty list", err);
}

/// --static, --moving, --margin and the world kinds (--incremental or --worlds).
static int parse_rest(cli_option *options, bench_plan *plan, FILE *err)
{
	if (options[OPT_STATIC].seen && !cli_parse_decimal("bench", "--static", options[OPT_STATIC].value, 0, 1, false,
					    "a fraction in [0, 1]", &plan->static_fraction, err))
		return CLI_EXIT_USAGE;
	if (options[OPT_MOVING].seen && !cli_parse_decimal("bench", "--moving", options[OPT_MOVING].value, 0, 1, false,
					    "a fraction in [0, 1]", &plan->moving, err))
		return CLI_EXIT_USAGE;
	double margin = 0;
	if (options[OPT_MARGIN].seen && !cli_parse_decimal("bench", "--margin", options[OPT_MARGIN].value, 0, FLT_MAX,
					    false, "a number >= 0", &margin, err))
		return CLI_EXIT_USAGE;
	plan->margin = (float)margin;
	if (options[OPT_INCREMENTAL].seen && options[OPT_WORLDS].seen) {
		fprintf(err, "bp bench: --incremental is --worlds incremental: give one of them\n");
		return CLI_EXIT_USAGE;
	}
	plan->incremental[0] = options[OPT_INCREMENTAL].seen;
	plan->world_count = 1;
	if (options[OPT_WORLDS].seen && !parse_worlds(options[OPT_WORLDS].value, plan, err))
		return CLI_EXIT_USAGE;
	return CLI_EXIT_OK;
}

/// A machine or file name: one path component of letters, digits, '.', '_' and '-'.
static bool valid_file_name(const char *name)
{
	if (!name[0] || strlen(name) >= BENCH_NAME_MAX || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	for (const char *c = name; *c; ++c)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
			    *c == '_' || *c == '-'))
			return false;
	return true;
}

static int parse_lists(cli_option *options, bench_plan *plan, const preset *pre, FILE *err)
{
	uint64_t values[BENCH_MAX_LIST];
	int count;
	if (options[OPT_SCENES].seen && !parse_scenes(options[OPT_SCENES].value, plan, err))
		return CLI_EXIT_USAGE;
	const char *n_list = options[OPT_N].seen ? options[OPT_N].value : pre->n;
	if (!parse_numbers("--n", n_list, 2, 100000000, values, &count, err))
		return CLI_EXIT_USAGE;
	for (int i = 0; i < count; ++i)
		plan->n[i] = (uint32_t)values[i];
	plan->n_count = count;
	if (!parse_algos(options[OPT_ALGOS].seen ? options[OPT_ALGOS].value : pre->algos, plan, err))
		return CLI_EXIT_USAGE;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (cores < 1)
		cores = 1;
	if (cores > BP_MAX_THREADS)
		cores = BP_MAX_THREADS;
	if (options[OPT_THREADS].seen) {
		if (!parse_numbers("--threads", options[OPT_THREADS].value, 1, BP_MAX_THREADS, values, &count, err))
			return CLI_EXIT_USAGE;
		for (int i = 0; i < count; ++i)
			plan->threads[i] = (int)values[i];
		plan->thread_count = count;
	} else {
		default_threads(plan, (int)cores);
	}
	plan->runs = pre->runs;
	if (options[OPT_RUNS].seen && !cli_parse_u64("bench", "--runs", options[OPT_RUNS].value, 1, 1000, &values[0], err))
		return CLI_EXIT_USAGE;
	if (options[OPT_RUNS].seen)
		plan->runs = (uint32_t)values[0];
	plan->seed = 1;
	if (options[OPT_SEED].seen && !cli_parse_u64("bench", "--seed", options[OPT_SEED].value, 0, UINT64_MAX, &plan->seed, err))
		return CLI_EXIT_USAGE;
	if (options[OPT_MACHINE].seen) {
		if (!valid_file_name(options[OPT_MACHINE].value)) {
			fprintf(err, "bp bench: --machine: expected letters, digits, '.', '_' or '-', got '%s'\n",
				options[OPT_MACHINE].value);
			return CLI_EXIT_USAGE;
		}
		snprintf(plan->machine, sizeof plan->machine, "%s", options[OPT_MACHINE].value);
	}
	if (options[OPT_OUT].seen && !options[OPT_OUT].value[0]) {
		fprintf(err, "bp bench: --out: empty directory name\n");
		return CLI_EXIT_USAGE;
	}
	// Files only where the user asks for them: --out DIR, or --machine NAME for the results
	// layout of this repository; otherwise the CSV goes to stdout.
	int length = options[OPT_OUT].seen   ? snprintf(plan->out_dir, sizeof plan->out_dir, "%s", options[OPT_OUT].value)
		: options[OPT_MACHINE].seen ? snprintf(plan->out_dir, sizeof plan->out_dir, "perf/results/%s", plan->machine)
					    : 0;
	if (length < 0 || (size_t)length >= sizeof plan->out_dir - BENCH_NAME_MAX - 32) {
		fprintf(err, "bp bench: --out: path too long\n");
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

int bench_parse(int argc, char **argv, bench_plan *plan, bool *help, FILE *out, FILE *err)
{
	cli_option options[OPT_COUNT] = {
		[OPT_PRESET] = CLI_VALUE("--preset"), [OPT_SCENES] = CLI_VALUE("--scenes"), [OPT_ALGOS] = CLI_VALUE("--algos"),
		[OPT_N] = CLI_VALUE("--n"), [OPT_THREADS] = CLI_VALUE("--threads"), [OPT_RUNS] = CLI_VALUE("--runs"),
		[OPT_SEED] = CLI_VALUE("--seed"), [OPT_MACHINE] = CLI_VALUE("--machine"), [OPT_OUT] = CLI_VALUE("--out"),
		[OPT_NO_PLOTS] = CLI_FLAG("--no-plots"), [OPT_NO_PROGRESS] = CLI_FLAG("--no-progress"),
		[OPT_STATIC] = CLI_VALUE("--static"), [OPT_MOVING] = CLI_VALUE("--moving"),
		[OPT_INCREMENTAL] = CLI_FLAG("--incremental"), [OPT_WORLDS] = CLI_VALUE("--worlds"),
		[OPT_MARGIN] = CLI_VALUE("--margin"), [OPT_NAME] = CLI_VALUE("--name"),
	};
	memset(plan, 0, sizeof *plan);
	const char *files[BENCH_MAX_SCENES];
	int file_count;
	int code = cli_parse("bench", argc, argv, 2, options, OPT_COUNT, files, BENCH_MAX_SCENES, &file_count, help, err);
	if (code != CLI_EXIT_OK)
		return code;
	if (*help) {
		cli_usage("bench", out);
		return CLI_EXIT_OK;
	}
	const preset *pre = &presets[0];
	if (options[OPT_PRESET].seen) {
		pre = NULL;
		for (size_t i = 0; i < sizeof presets / sizeof presets[0]; ++i)
			if (strcmp(options[OPT_PRESET].value, presets[i].name) == 0)
				pre = &presets[i];
		if (!pre) {
			fprintf(err, "bp bench: --preset: expected small, medium or large, got '%s'\n", options[OPT_PRESET].value);
			return CLI_EXIT_USAGE;
		}
	}
	plan->preset = pre->name;
	// Scene files replace the preset's generated scenes unless --scenes names some too.
	if (file_count == 0 && !options[OPT_SCENES].seen && !parse_scenes(pre->scenes, plan, err))
		return CLI_EXIT_USAGE;
	code = parse_lists(options, plan, pre, err);
	if (code == CLI_EXIT_OK)
		code = parse_rest(options, plan, err);
	if (code != CLI_EXIT_OK)
		return code;
	if (options[OPT_NAME].seen && (!valid_file_name(options[OPT_NAME].value) ||
					      strlen(options[OPT_NAME].value) >= BENCH_NAME_MAX - 8)) {
		fprintf(err, "bp bench: --name: expected letters, digits, '.', '_' or '-', got '%s'\n",
			options[OPT_NAME].value);
		return CLI_EXIT_USAGE;
	}
	for (int i = 0; i < file_count; ++i) {
		if (plan->scene_count == BENCH_MAX_SCENES) {
			fprintf(err, "bp bench: too many scenes\n");
			return CLI_EXIT_USAGE;
		}
		bench_scene *s = &plan->scenes[plan->scene_count];
		if (cli_is_trace(files[i])) {
			bp_trace_reader *reader = NULL;
			if ((code = cli_open_trace("bench", files[i], &reader, err)) != CLI_EXIT_OK)
				return code;
			s->trace = files[i];
			s->trace_n = bp_trace_reader_info(reader).max_entities;
			s->dims = bp_trace_reader_info(reader).dims;
			bp_trace_reader_close(reader);
		} else {
			if ((code = cli_load_scene(files[i], &s->loaded, err)) != CLI_EXIT_OK)
				return code;
			s->dims = s->loaded->dims;
		}
		++plan->scene_count;
		s->path = files[i];
		scene_name_of_path(files[i], s->name, sizeof s->name);
	}
	plan->custom = file_count > 0 || options[OPT_SCENES].seen || options[OPT_ALGOS].seen || options[OPT_N].seen ||
		options[OPT_THREADS].seen || options[OPT_RUNS].seen || options[OPT_SEED].seen || options[OPT_STATIC].seen ||
		options[OPT_MOVING].seen || options[OPT_INCREMENTAL].seen || options[OPT_WORLDS].seen ||
		options[OPT_MARGIN].seen;
	snprintf(plan->stem, sizeof plan->stem, "bench-%s",
		options[OPT_NAME].seen ? options[OPT_NAME].value : plan->custom ? "custom" : plan->preset);
	plan->plots = !options[OPT_NO_PLOTS].seen;
	plan->progress = !options[OPT_NO_PROGRESS].seen;
	return CLI_EXIT_OK;
}

void bench_plan_free(bench_plan *plan)
{
	for (int i = 0; i < plan->scene_count; ++i) {
		bp_scene_destroy(plan->scenes[i].loaded);
		plan->scenes[i].loaded = NULL;
	}
}

bool bench_runs_config(bp_algorithm algo, uint32_t n)
{
	return algo != BP_ALGO_BRUTE || n <= BENCH_BRUTE_MAX_N;
}
