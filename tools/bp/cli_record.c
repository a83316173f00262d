// SPDX-License-Identifier: MIT
// `bp record`: the options, and the default motion (walk): a generated scene moved as `bp
// frames` moves it, written frame by frame to a trace through the library's writer, with churn
// (movers destroyed and created again under a new id) when asked. The physics-like motions
// are in cli_record_physics.c.
#include "cli_motion.h"
#include "cli_record.h"

#include <stdlib.h>
#include <string.h>

enum {
	OPT_MOTION,
	OPT_DIST,
	OPT_N,
	OPT_DIMS,
	OPT_FRAMES,
	OPT_SEED,
	OPT_MOVING,
	OPT_CHURN,
	OPT_KEYFRAMES,
	OPT_OUT,
	OPT_COUNT
};

/// --motion NAME into a->model (NULL for walk); --dist, --moving and --churn only with walk.
static bool parse_motion(const cli_option *options, record_args *a, FILE *err)
{
	if (!options[OPT_MOTION].seen || strcmp(options[OPT_MOTION].value, "walk") == 0)
		return true;
	if (!(a->model = cli_physics_find(options[OPT_MOTION].value))) {
		fprintf(err, "bp record: --motion: unknown motion '%s' (known: walk pile rain crowd brownian freefall gravity)\n",
			options[OPT_MOTION].value);
		return false;
	}
	const int walk_only[] = {OPT_DIST, OPT_MOVING, OPT_CHURN};
	for (size_t i = 0; i < sizeof walk_only / sizeof walk_only[0]; ++i)
		if (options[walk_only[i]].seen) {
			fprintf(err, "bp record: %s applies to --motion walk only, not %s\n", options[walk_only[i]].name,
				a->model->name);
			return false;
		}
	return true;
}

static int parse_args(int argc, char **argv, record_args *a, FILE *out, FILE *err, bool *help)
{
	cli_option options[OPT_COUNT] = {[OPT_MOTION] = CLI_VALUE("--motion"), [OPT_DIST] = CLI_VALUE("--dist"),
		[OPT_N] = CLI_VALUE("--n"), [OPT_DIMS] = CLI_VALUE("--dims"), [OPT_FRAMES] = CLI_VALUE("--frames"),
		[OPT_SEED] = CLI_VALUE("--seed"),
		[OPT_MOVING] = CLI_VALUE("--moving"), [OPT_CHURN] = CLI_VALUE("--churn"),
		[OPT_KEYFRAMES] = CLI_VALUE("--keyframes"), [OPT_OUT] = CLI_VALUE("-o")};
	int positional_count;
	int code = cli_parse("record", argc, argv, 2, options, OPT_COUNT, NULL, 0, &positional_count, help, err);
	if (code != CLI_EXIT_OK)
		return code;
	if (*help) {
		cli_usage("record", out);
		return CLI_EXIT_OK;
	}
	if (!options[OPT_N].seen || !options[OPT_OUT].seen) {
		fprintf(err, "bp record: --n and -o are required (see 'bp help record')\n");
		return CLI_EXIT_USAGE;
	}
	*a = (record_args){.gen = bp_gen_def_default(), .moving = 1, .keyframes = 64, .path = options[OPT_OUT].value};
	a->gen.frames = 100;
	if (!parse_motion(options, a, err))
		return CLI_EXIT_USAGE;
	if (options[OPT_DIST].seen && bp_distribution_from_name(options[OPT_DIST].value, &a->gen.dist) != BP_OK) {
		fprintf(err, "bp record: --dist: unknown distribution '%s' (known:", options[OPT_DIST].value);
		for (int i = 0; i < BP_DIST_COUNT; ++i)
			fprintf(err, " %s", bp_distribution_name((bp_distribution)i));
		fprintf(err, ")\n");
		return CLI_EXIT_USAGE;
	}
	uint64_t value;
	if (!cli_parse_u64("record", "--n", options[OPT_N].value, 1, UINT32_MAX / 2, &value, err))
		return CLI_EXIT_USAGE;
	a->gen.n = (uint32_t)value;
	if (options[OPT_DIMS].seen) {
		if (!cli_parse_u64("record", "--dims", options[OPT_DIMS].value, 2, 3, &value, err))
			return CLI_EXIT_USAGE;
		a->gen.dims = (int)value;
	}
	if (a->gen.dist == BP_DIST_BOXPRUNE && a->gen.dims != 3) {
		fprintf(err, "bp record: --dims: boxprune scenes are 3D\n");
		return CLI_EXIT_USAGE;
	}
	if (options[OPT_FRAMES].seen) {
		if (!cli_parse_u64("record", "--frames", options[OPT_FRAMES].value, 1, 1000000, &value, err))
			return CLI_EXIT_USAGE;
		a->gen.frames = (uint32_t)value;
	}
	if (options[OPT_KEYFRAMES].seen) {
		if (!cli_parse_u64("record", "--keyframes", options[OPT_KEYFRAMES].value, 0, UINT32_MAX, &value, err))
			return CLI_EXIT_USAGE;
		a->keyframes = (uint32_t)value;
	}
	if (options[OPT_SEED].seen &&
		!cli_parse_u64("record", "--seed", options[OPT_SEED].value, 0, UINT64_MAX, &a->gen.seed, err))
		return CLI_EXIT_USAGE;
	if (options[OPT_MOVING].seen && !cli_parse_decimal("record", "--moving", options[OPT_MOVING].value, 0, 1, true,
					    "a fraction in (0, 1]", &a->moving, err))
		return CLI_EXIT_USAGE;
	if (options[OPT_CHURN].seen && !cli_parse_decimal("record", "--churn", options[OPT_CHURN].value, 0, 1, false,
					   "a fraction in [0, 1]", &a->churn, err))
		return CLI_EXIT_USAGE;
	return CLI_EXIT_OK;
}

/// What the recording holds, and the arrays it reuses frame by frame.
typedef struct recording {
	bp_trace_writer *writer;
	cli_motion motion;
	uint32_t *id;     ///< per scene entity, its trace id now
	uint32_t next_id; ///< the next fresh id
	cli_changes changes;
	record_totals totals;
} recording;

static bp_trace_entity entity_of(const recording *rec, uint32_t entity, uint32_t j, bool is_static)
{
	const cli_motion *m = &rec->motion;
	bp_trace_entity e = {.id = rec->id[entity], .category = 1, .mask = UINT64_MAX,
		.kind = is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC};
	for (int a = 0; a < m->dims; ++a) {
		e.min[a] = m->min[a][j];
		e.max[a] = m->max[a][j];
	}
	return e;
}

/// Frame 0: every entity; the ones that do not move are static.
static bp_status record_first(recording *rec)
{
	const cli_motion *m = &rec->motion;
	bp_trace_entity *all = malloc(((size_t)m->n + 1) * sizeof *all);
	if (!all)
		return BP_ERR_OUT_OF_MEMORY;
	for (uint32_t i = 0, j = 0; i < m->n; ++i) {
		bool moves = !m->index || (j < m->count && m->index[j] == i);
		j += m->index && moves;
		all[i] = entity_of(rec, i, i, !moves);
	}
	bp_status status = bp_trace_create(rec->writer, m->n, all);
	free(all);
	rec->totals.creates += m->n;
	return status == BP_OK ? bp_trace_end_frame(rec->writer) : status;
}

/// Frame f > 0: `churn` movers, a window that walks over them frame by frame, are destroyed and
/// created again under a new id where they now are; the other movers move.
static bp_status record_next(recording *rec, uint32_t f, uint32_t churn)
{
	cli_motion *m = &rec->motion;
	cli_changes *c = &rec->changes;
	cli_motion_step(m);
	cli_changes_clear(c);
	const uint32_t first = (uint32_t)(((uint64_t)f * churn) % (m->count ? m->count : 1));
	for (uint32_t j = 0; j < m->count; ++j) {
		const uint32_t i = m->index ? m->index[j] : j;
		const bool churned = (j + m->count - first) % m->count < churn;
		if (churned) {
			cli_changes_destroy(c, rec->id[i]);
			rec->id[i] = rec->next_id++;
			c->creates[c->create_count++] = entity_of(rec, i, j, false);
			continue;
		}
		c->move_ids[c->move_count] = rec->id[i];
		for (int a = 0; a < m->dims; ++a) {
			c->bounds[a][c->move_count] = m->min[a][j];
			c->bounds[3 + a][c->move_count] = m->max[a][j];
		}
		++c->move_count;
	}
	return cli_record_frame(rec->writer, c, &rec->totals);
}

static void release(recording *rec)
{
	free(rec->id);
	cli_changes_free(&rec->changes);
	cli_motion_free(&rec->motion);
}

int cli_record(int argc, char **argv, FILE *out, FILE *err)
{
	record_args args;
	bool help;
	int code = parse_args(argc, argv, &args, out, err, &help);
	if (code != CLI_EXIT_OK || help)
		return code;
	if (args.model)
		return cli_record_physics(&args, out, err);
	bp_gen_def one = args.gen;
	one.frames = 1;
	bp_scene *scene = NULL;
	bp_status status = bp_scene_generate(&one, &scene);
	if (status != BP_OK) {
		fprintf(err, "bp record: cannot generate %s n=%u dims=%d: %s\n", bp_distribution_name(one.dist), one.n,
			one.dims, bp_status_string(status));
		return cli_exit_for_status(status);
	}
	const uint32_t n = scene->count, movers = cli_fraction_count(n, args.moving) ? cli_fraction_count(n, args.moving) : 1;
	const uint32_t churn = cli_fraction_count(movers, args.churn);
	if ((uint64_t)n + (uint64_t)churn * (args.gen.frames - 1) > UINT32_MAX) {
		fprintf(err, "bp record: --churn: %u new ids a frame for %u frames pass the 32-bit ids\n", churn,
			args.gen.frames);
		bp_scene_destroy(scene);
		return CLI_EXIT_USAGE;
	}
	recording rec = {.next_id = n};
	uint32_t *index = movers < n ? malloc((size_t)movers * sizeof *index) : NULL;
	if (index)
		cli_spread(n, movers, index);
	rec.id = malloc(((size_t)n + 1) * sizeof *rec.id);
	bool ready = (index || movers == n) && cli_motion_init(&rec.motion, scene, args.gen.seed, movers, index) &&
		     rec.id && cli_changes_init(&rec.changes, scene->dims, movers, movers);
	free(index);
	if (!ready) {
		fprintf(err, "bp record: out of memory\n");
		release(&rec);
		bp_scene_destroy(scene);
		return CLI_EXIT_RESOURCE;
	}
	memcpy(rec.id, scene->ids, (size_t)n * sizeof *rec.id);
	if ((code = cli_record_open(&args, scene->dims, &rec.writer, err)) != CLI_EXIT_OK) {
		release(&rec);
		bp_scene_destroy(scene);
		return code;
	}
	status = record_first(&rec);
	for (uint32_t f = 1; status == BP_OK && f < args.gen.frames; ++f)
		status = record_next(&rec, f, churn);
	code = cli_record_close(rec.writer, status, &args, n, scene->dims, &rec.totals, "", out, err);
	release(&rec);
	bp_scene_destroy(scene);
	return code;
}
