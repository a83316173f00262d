// SPDX-License-Identifier: MIT
// `bp gen`: writes a generated scene file. Stdout stays empty; --verbose reports on stderr.
#define _POSIX_C_SOURCE 200809L // sysconf, getrlimit
#include "cli.h"

#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "output_file.h"

enum { OPT_DIST, OPT_N, OPT_DIMS, OPT_SEED, OPT_FRAMES, OPT_BINARY, OPT_OUT, OPT_VERBOSE, OPT_MAX_MEMORY, OPT_COUNT };

/// "23.4 GiB": bytes in the unit that keeps the number short.
static void format_bytes(double bytes, char out[32])
{
	static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"};
	int u = 0;
	for (; bytes >= 1024 && u < 7; ++u)
		bytes /= 1024;
	snprintf(out, 32, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

/// The scene of `def` must fit in memory, checked before anything is allocated:
/// --n 1000 --frames 4000000000 once grew to 12 GB before the machine ran out.
/// The limit is --max-memory when given (max_memory > 0), else the machine's
/// memory, or this process's address-space limit when lower. Prints a usage
/// error and returns false when it does not fit.
static bool scene_fits(const bp_gen_def *def, size_t max_memory, FILE *err)
{
	// In double: n * frames * 24 can pass 2^64. A moving scene also keeps a
	// centre, half extent and velocity per entity and axis while it is made.
	const double row = 2.0 * def->dims * sizeof(float);
	const double bytes = (double)def->n * def->frames * row + (double)def->n * sizeof(uint32_t) +
		(def->frames > 1 ? 3.0 * def->dims * sizeof(float) * def->n : 0.0);
	double limit = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
	const char *what = "this machine's memory";
	struct rlimit cap;
	if (getrlimit(RLIMIT_AS, &cap) == 0 && cap.rlim_cur != RLIM_INFINITY && (double)cap.rlim_cur < limit) {
		limit = (double)cap.rlim_cur;
		what = "this process's address-space limit";
	}
	if (max_memory) {
		limit = (double)max_memory;
		what = "--max-memory";
	}
	if (!(limit > 0) || bytes <= limit)
		return true;
	char need[32], have[32];
	format_bytes(bytes, need);
	format_bytes(limit, have);
	fprintf(err, "bp gen: --n %u x --frames %u x %.0f bytes a row needs %s, more than %s (%s); lower --n or --frames\n",
		def->n, def->frames, row, need, what, have);
	return false;
}

int cli_gen(int argc, char **argv, FILE *out, FILE *err)
{
	cli_option options[OPT_COUNT] = {
		[OPT_DIST] = CLI_VALUE("--dist"), [OPT_N] = CLI_VALUE("--n"), [OPT_DIMS] = CLI_VALUE("--dims"),
		[OPT_SEED] = CLI_VALUE("--seed"), [OPT_FRAMES] = CLI_VALUE("--frames"), [OPT_BINARY] = CLI_FLAG("--binary"),
		[OPT_OUT] = CLI_VALUE("-o"), [OPT_VERBOSE] = CLI_FLAG("--verbose"),
		[OPT_MAX_MEMORY] = CLI_VALUE("--max-memory"),
	};
	const char *positional[1];
	int positional_count;
	bool help;
	int code = cli_parse("gen", argc, argv, 2, options, OPT_COUNT, positional, 0, &positional_count, &help, err);
	if (code != CLI_EXIT_OK)
		return code;
	if (help) {
		cli_usage("gen", out);
		return CLI_EXIT_OK;
	}
	static const int required[] = {OPT_DIST, OPT_N, OPT_OUT};
	for (size_t i = 0; i < sizeof required / sizeof required[0]; ++i) {
		if (!options[required[i]].seen) {
			fprintf(err, "bp gen: %s is required (see 'bp help gen')\n", options[required[i]].name);
			return CLI_EXIT_USAGE;
		}
	}

	bp_gen_def def = bp_gen_def_default();
	if (bp_distribution_from_name(options[OPT_DIST].value, &def.dist) != BP_OK) {
		fprintf(err, "bp gen: --dist: unknown distribution '%s' (known:", options[OPT_DIST].value);
		for (int i = 0; i < BP_DIST_COUNT; ++i)
			fprintf(err, " %s", bp_distribution_name((bp_distribution)i));
		fprintf(err, ")\n");
		return CLI_EXIT_USAGE;
	}
	uint64_t value;
	if (!cli_parse_u64("gen", "--n", options[OPT_N].value, 1, UINT32_MAX - 1, &value, err))
		return CLI_EXIT_USAGE;
	def.n = (uint32_t)value;
	def.dims = 3;
	if (options[OPT_DIMS].seen) {
		if (!cli_parse_u64("gen", "--dims", options[OPT_DIMS].value, 2, 3, &value, err))
			return CLI_EXIT_USAGE;
		def.dims = (int)value;
	}
	def.seed = 1;
	if (options[OPT_SEED].seen && !cli_parse_u64("gen", "--seed", options[OPT_SEED].value, 0, UINT64_MAX, &def.seed, err))
		return CLI_EXIT_USAGE;
	def.frames = 1;
	if (options[OPT_FRAMES].seen) {
		if (!cli_parse_u64("gen", "--frames", options[OPT_FRAMES].value, 1, UINT32_MAX, &value, err))
			return CLI_EXIT_USAGE;
		def.frames = (uint32_t)value;
	}
	size_t max_memory = 0;
	if (!cli_parse_size("gen", &options[OPT_MAX_MEMORY], &max_memory, err))
		return CLI_EXIT_USAGE;
	if (!scene_fits(&def, max_memory, err))
		return CLI_EXIT_USAGE;

	// A bad -o fails before the scene is generated, which takes seconds for large n.
	const char *path = options[OPT_OUT].value;
	bp_output probe;
	if (!bp_output_check(&probe, path)) {
		fprintf(err, "bp gen: %s\n", probe.message);
		return CLI_EXIT_RESOURCE;
	}
	bp_scene *scene = NULL;
	bp_status status = bp_scene_generate(&def, &scene);
	if (status != BP_OK) {
		fprintf(err, "bp gen: cannot generate %s n=%u dims=%d frames=%u: %s\n", bp_distribution_name(def.dist),
			def.n, def.dims, def.frames, bp_status_string(status));
		return status == BP_ERR_OUT_OF_MEMORY ? CLI_EXIT_RESOURCE : CLI_EXIT_USAGE;
	}
	bp_scene_error write_error;
	status = options[OPT_BINARY].seen ? bp_scene_write_binary(scene, path, &write_error)
					  : bp_scene_write_text(scene, path, &write_error);
	if (status != BP_OK) {
		fprintf(err, "bp gen: %s\n", write_error.message);
		code = CLI_EXIT_RESOURCE;
	} else if (options[OPT_VERBOSE].seen) {
		fprintf(err, "wrote %s (n=%u, dims=%d, frames=%u)\n", path, scene->count, scene->dims, scene->frame_count);
	}
	bp_scene_destroy(scene);
	return code;
}
