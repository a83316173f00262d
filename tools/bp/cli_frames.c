// SPDX-License-Identifier: MIT
// `bp frames`: a host loop over the frame scheduler. Each frame the host moves the moving entities, submits,
// and does its own work (AABB queries on the last published view, optional busy time) while the build runs.
#define _POSIX_C_SOURCE 200809L
#include "cli_motion.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cli_frames_usage[] =
	"usage: bp frames --n N [--dist NAME] [--dims 2|3] [--frames F] [--threads T] [--algo NAME]\n"
	"                 [--seed S] [--host-ms H] [--queries Q] [--moving M] [--incremental]\n"
	"                 [--max-memory SIZE] [--verbose] [--stats]\n"
	"       bp frames --replay FILE [--threads T] [--algo NAME] [--skin S] [--verbose]\n"
	"\n"
	"With --replay, replays the trace FILE (docs/trace.md; 'bp record' writes one) through three\n"
	"worlds that follow it: a plain world (bp_world_step), an incremental world, and a world\n"
	"whose frames go through the frame scheduler. With --skin S > 0 the incremental world keeps\n"
	"a neighbour list with that skin (bp_world_def.skin). Each frame's pairs must be the same\n"
	"in all three, byte for byte: otherwise the frame is named and the exit code is 4. When\n"
	"stdout is not a terminal (or with --verbose), one line per frame:\n"
	"  frame=K entities=.. changes=<destroys + creates + sets + moves> pairs=.. plain_ms=..\n"
	"  incremental_ms=.. build_ms=<the scheduler's build> active=<incremental active_count>\n"
	"  searched=<incremental searched_count> path=full|resting|moving|neighbours\n"
	"then one summary line:\n"
	"  frames=F entities_max=.. algo=<that ran> plain_ms_median=.. incremental_ms_median=..\n"
	"  build_ms_median=.. incremental_vs_plain=<ratio of the medians>\n"
	"  incremental_vs_plain_total=<ratio of the total times> full=.. resting=.. moving=..\n"
	"  neighbours=<frames by the incremental world's path> held=<moving or neighbour-list frames\n"
	"  in which at most a fifth of the changed entities left their fat boxes>\n"
	"  held_vs_plain=<ratio of the total times on those frames> pairs_last=..\n"
	"\n"
	"Without --replay:\n"
	"Runs F frames through the frame scheduler. Frame 1 is the generated scene; from frame 2\n"
	"on every moving entity moves by a fixed velocity (up to 5% of its extent per axis) and\n"
	"bounces off the box of the frame-1 centres. Per frame the host thread updates the bounds,\n"
	"submits, and while the build runs does Q AABB queries (each sized to hit about 10\n"
	"entities) on the previous frame's view plus H ms of busy work; then it waits for the\n"
	"frame, takes its view and counts the pair events. When stdout is not a terminal, one\n"
	"line per frame:\n"
	"  frame=K build_ms=<builder> host_ms=<host work> query_p50_us=.. query_p99_us=..\n"
	"  pairs=.. began=.. ended=.. active=..\n"
	"(frame 1 has no earlier view: its query times are 0). On a terminal a progress bar on\n"
	"stderr instead (per-frame lines too with --verbose). Then one summary line:\n"
	"  frames=F n=N algo=<that ran> threads=T build_ms_median=.. frame_ms_median=..\n"
	"  overlap=.. query_p50_us=.. query_p99_us=.. pairs_last=.. host_ms_median=..\n"
	"  query_hits_mean=.. active_median=..\n"
	"host_ms is everything the host did in a frame except waiting (update, submit, queries,\n"
	"busy work); frame_ms is the host's wall time per frame; overlap is the median over\n"
	"frames of (host_ms + build_ms) / frame_ms: 1 when serial, up to 2 when the build hides\n"
	"entirely behind equally long host work. active is the library's active_count: the\n"
	"entities the frame searched again (with --incremental; the entity count when it rebuilt\n"
	"in full, 0 in a world that is not incremental); active_median its median over frames.\n"
	"  --n N         number of entities (required)\n"
	"  --dist NAME   uniform (default), clustered, mixed, line or boxprune\n"
	"  --dims D      2 or 3 (default 3)\n"
	"  --frames F    frames to run (default 100)\n"
	"  --threads T   build threads, 0 = all cores (default 0)\n"
	"  --algo NAME   auto (default), brute, or another built-in algorithm\n"
	"  --seed S      scene and motion seed (default 1)\n"
	"  --host-ms H   simulated host work per frame in ms, a busy loop (default 0)\n"
	"  --queries Q   AABB queries per frame on the host thread (default 10)\n"
	"  --moving M    fraction of the entities that move, in (0, 1] (default 1): round(M * N)\n"
	"                of them (at least 1), every (1/M)-th by index (dense index\n"
	"                floor(j * N / count) for mover j), are dynamic; the others are created\n"
	"                static (they never pair with each other) and are not passed to the\n"
	"                library after frame 1: below 1 the movers' bounds go in with\n"
	"                bp_entities_set_bounds by dense index\n"
	"  --incremental the world is created with def.incremental: a frame costs what changed\n"
	"  --max-memory SIZE  the most memory for the frames' pairs (the world's memory_limit),\n"
	"                bytes or with K, M, G (powers of 1024); past it a frame fails (exit 3).\n"
	"                The scene, the motion and the per-frame records are checked against\n"
	"                it (without it, against the memory the process may have) before frame 1\n"
	"                (exit 1)\n"
	"  --verbose     per-frame lines even on a terminal\n"
	"  --stats       after the summary, one line of the library's per-stage statistics,\n"
	"                medians over the frames (times in ms, 1 ns resolution):\n"
	"  stats=median prepare_ms=.. build_ms=.. find_ms=.. merge_ms=.. view_ms=.. hierarchy_ms=..\n"
	"  total_ms=.. candidate_tests=.. cells=.. pairs_last=..\n"
	"                prepare is the snapshot on submit, build/find/merge the algorithm's\n"
	"                stages, view what the builder derives after the step (the pair sort,\n"
	"                events, and the query hierarchy and adjacency a reader used), hierarchy\n"
	"                the query hierarchy's share of it; total is the whole frame.\n";

enum {
	OPT_DIST,
	OPT_N,
	OPT_DIMS,
	OPT_FRAMES,
	OPT_THREADS,
	OPT_ALGO,
	OPT_SEED,
	OPT_HOST_MS,
	OPT_QUERIES,
	OPT_MOVING,
	OPT_INCREMENTAL,
	OPT_MAX_MEMORY,
	OPT_VERBOSE,
	OPT_STATS,
	OPT_REPLAY,
	OPT_SKIN,
	OPT_COUNT
};

/// Entities an AABB query is sized to return.
#define QUERY_TARGET_HITS 10.0
#define QUERY_CAPACITY 4096

typedef struct frames_args {
	bp_gen_def gen;
	bp_algorithm algorithm;
	int threads;
	uint32_t queries;
	double host_ms;
	double moving; ///< fraction of the entities that move, (0, 1]
	bool incremental;
	bool verbose;
	bool stats;
	size_t max_memory; ///< the world's memory_limit; 0 = none
	const char *replay; ///< --replay: a trace to replay instead of generated motion
	double skin;        ///< --skin: the incremental world's neighbour-list skin with --replay
} frames_args;

static int parse_args(int argc, char **argv, frames_args *a, FILE *out, FILE *err, bool *help)
{
	cli_option options[OPT_COUNT] = {
		[OPT_DIST] = CLI_VALUE("--dist"), [OPT_N] = CLI_VALUE("--n"), [OPT_DIMS] = CLI_VALUE("--dims"),
		[OPT_FRAMES] = CLI_VALUE("--frames"), [OPT_THREADS] = CLI_VALUE("--threads"),
		[OPT_ALGO] = CLI_VALUE("--algo"), [OPT_SEED] = CLI_VALUE("--seed"), [OPT_HOST_MS] = CLI_VALUE("--host-ms"),
		[OPT_QUERIES] = CLI_VALUE("--queries"), [OPT_MOVING] = CLI_VALUE("--moving"),
		[OPT_INCREMENTAL] = CLI_FLAG("--incremental"), [OPT_MAX_MEMORY] = CLI_VALUE("--max-memory"),
		[OPT_VERBOSE] = CLI_FLAG("--verbose"),
		[OPT_STATS] = CLI_FLAG("--stats"), [OPT_REPLAY] = CLI_VALUE("--replay"), [OPT_SKIN] = CLI_VALUE("--skin"),
	};
	int positional_count;
	int code = cli_parse("frames", argc, argv, 2, options, OPT_COUNT, NULL, 0, &positional_count, help, err);
	if (code != CLI_EXIT_OK)
		return code;
	if (*help) {
		cli_usage("frames", out);
		return CLI_EXIT_OK;
	}
	if (options[OPT_REPLAY].seen) {
		for (int i = 0; i < OPT_COUNT; ++i)
			if (options[i].seen && i != OPT_REPLAY && i != OPT_THREADS && i != OPT_ALGO && i != OPT_VERBOSE &&
				i != OPT_SKIN) {
				fprintf(err, "bp frames: %s does not apply to --replay (see 'bp help frames')\n", options[i].name);
				return CLI_EXIT_USAGE;
			}
		*a = (frames_args){.algorithm = BP_ALGO_AUTO, .verbose = options[OPT_VERBOSE].seen,
			.replay = options[OPT_REPLAY].value};
		if (options[OPT_SKIN].seen && !cli_parse_decimal("frames", "--skin", options[OPT_SKIN].value, 0, 1e30, false,
						  "a length >= 0", &a->skin, err))
			return CLI_EXIT_USAGE;
		if (!cli_parse_threads("frames", &options[OPT_THREADS], &a->threads, err))
			return CLI_EXIT_USAGE;
		if (options[OPT_ALGO].seen &&
			!cli_parse_algorithm("frames", options[OPT_ALGO].name, options[OPT_ALGO].value, &a->algorithm, err))
			return CLI_EXIT_USAGE;
		return CLI_EXIT_OK;
	}
	if (!options[OPT_N].seen) {
		fprintf(err, "bp frames: --n is required (see 'bp help frames')\n");
		return CLI_EXIT_USAGE;
	}
	*a = (frames_args){.gen = bp_gen_def_default(), .algorithm = BP_ALGO_AUTO, .queries = 10, .moving = 1.0,
		.incremental = options[OPT_INCREMENTAL].seen, .verbose = options[OPT_VERBOSE].seen,
		.stats = options[OPT_STATS].seen};
	a->gen.frames = 100;
	if (options[OPT_DIST].seen && bp_distribution_from_name(options[OPT_DIST].value, &a->gen.dist) != BP_OK) {
		fprintf(err, "bp frames: --dist: unknown distribution '%s' (known:", options[OPT_DIST].value);
		for (int i = 0; i < BP_DIST_COUNT; ++i)
			fprintf(err, " %s", bp_distribution_name((bp_distribution)i));
		fprintf(err, ")\n");
		return CLI_EXIT_USAGE;
	}
	uint64_t value;
	if (!cli_parse_u64("frames", "--n", options[OPT_N].value, 1, UINT32_MAX - 1, &value, err))
		return CLI_EXIT_USAGE;
	a->gen.n = (uint32_t)value;
	if (options[OPT_DIMS].seen) {
		if (!cli_parse_u64("frames", "--dims", options[OPT_DIMS].value, 2, 3, &value, err))
			return CLI_EXIT_USAGE;
		a->gen.dims = (int)value;
	}
	if (a->gen.dist == BP_DIST_BOXPRUNE && a->gen.dims != 3) {
		fprintf(err, "bp frames: --dims: boxprune scenes are 3D\n");
		return CLI_EXIT_USAGE;
	}
	if (options[OPT_FRAMES].seen) {
		if (!cli_parse_u64("frames", "--frames", options[OPT_FRAMES].value, 1, 1000000, &value, err))
			return CLI_EXIT_USAGE;
		a->gen.frames = (uint32_t)value;
	}
	if (!cli_parse_threads("frames", &options[OPT_THREADS], &a->threads, err))
		return CLI_EXIT_USAGE;
	if (options[OPT_ALGO].seen &&
		!cli_parse_algorithm("frames", options[OPT_ALGO].name, options[OPT_ALGO].value, &a->algorithm, err))
		return CLI_EXIT_USAGE;
	if (options[OPT_SEED].seen && !cli_parse_u64("frames", "--seed", options[OPT_SEED].value, 0, UINT64_MAX,
					  &a->gen.seed, err))
		return CLI_EXIT_USAGE;
	if (options[OPT_HOST_MS].seen) {
		if (!cli_parse_u64("frames", "--host-ms", options[OPT_HOST_MS].value, 0, 100000, &value, err))
			return CLI_EXIT_USAGE;
		a->host_ms = (double)value;
	}
	if (options[OPT_QUERIES].seen) {
		if (!cli_parse_u64("frames", "--queries", options[OPT_QUERIES].value, 0, 100000, &value, err))
			return CLI_EXIT_USAGE;
		a->queries = (uint32_t)value;
	}
	if (options[OPT_MOVING].seen && !cli_parse_decimal("frames", "--moving", options[OPT_MOVING].value, 0, 1, true,
					    "a fraction in (0, 1]", &a->moving, err))
		return CLI_EXIT_USAGE;
	if (!cli_parse_size("frames", &options[OPT_MAX_MEMORY], &a->max_memory, err))
		return CLI_EXIT_USAGE;
	return CLI_EXIT_OK;
}

// ---- motion (cli_motion.c) ----------------------------------------------------------

/// Movers for a fraction in (0, 1]: round(fraction * n), at least 1.
static uint32_t mover_count(uint32_t n, double fraction)
{
	uint32_t count = cli_fraction_count(n, fraction);
	return count < 1 ? 1 : count;
}

/// Edge of a cubic query box expected to overlap QUERY_TARGET_HITS boxes if the
/// boxes were spread evenly over the scene: n * prod((s + e_a) / L_a) = target,
/// with e_a the mean extent and L_a the scene's span on axis a. Clustered scenes
/// return more per query (queries are centred on entities). Before the first
/// cli_motion_step only: min/max then hold every entity's bounds.
static float query_edge(const cli_motion *m)
{
	double span[3] = {1, 1, 1}, extent[3] = {0, 0, 0};
	for (int a = 0; a < m->dims; ++a) {
		double lo = INFINITY, hi = -INFINITY, sum = 0;
		for (uint32_t i = 0; i < m->n; ++i) {
			lo = fmin(lo, m->min[a][i]);
			hi = fmax(hi, m->max[a][i]);
			sum += 2.0 * m->half[a][i];
		}
		span[a] = fmax(hi - lo, 1e-30);
		extent[a] = sum / m->n;
	}
	double lo = 0, hi = 0;
	for (int a = 0; a < m->dims; ++a)
		hi = fmax(hi, span[a]);
	for (int it = 0; it < 100; ++it) {
		double s = 0.5 * (lo + hi), expected = m->n;
		for (int a = 0; a < m->dims; ++a)
			expected *= fmin(1.0, (s + extent[a]) / span[a]);
		if (expected < QUERY_TARGET_HITS)
			lo = s;
		else
			hi = s;
	}
	return (float)hi;
}

// ---- statistics ------------------------------------------------------------------

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/// The q-quantile (0..1) of ns[0..count), nearest rank, sorting in place; 0 for none.
static double quantile_ns(uint64_t *ns, size_t count, double q)
{
	if (count == 0)
		return 0;
	qsort(ns, count, sizeof ns[0], compare_u64);
	size_t rank = (size_t)ceil(q * (double)count);
	return (double)ns[rank ? rank - 1 : 0];
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t count)
{
	qsort(v, count, sizeof v[0], compare_double);
	return count % 2 ? v[count / 2] : 0.5 * (v[count / 2 - 1] + v[count / 2]);
}

// ---- the frame loop -----------------------------------------------------------------

typedef struct frames_run {
	frames_args args;
	bp_scene *scene;
	bp_world *world;
	cli_motion motion;
	bp_view *view; ///< latest acquired view
	uint64_t *query_ns; ///< frames * queries
	uint64_t *frame_query_ns;
	double *build_ms, *host_ms, *frame_ms, *overlap;
	double *active; ///< per frame, bp_frame_stats.active_count
	bp_frame_stats *stats; ///< per frame, with --stats only
	uint64_t hits_total;
	FILE *out, *err;
	bool lines, progress;
} frames_run;

static int create_world(frames_run *r)
{
	bp_gen_def one = r->args.gen;
	one.frames = 1; // motion is made here, frame by frame: F frames of 1M entities would not fit
	bp_status status = bp_scene_generate(&one, &r->scene);
	if (status != BP_OK) {
		fprintf(r->err, "bp frames: cannot generate %s n=%u dims=%d: %s\n", bp_distribution_name(one.dist), one.n,
			one.dims, bp_status_string(status));
		return cli_exit_for_status(status);
	}
	// Fewer movers than entities: every (1/M)-th by dense index.
	const uint32_t n = r->scene->count, movers = mover_count(n, r->args.moving);
	uint32_t *index = movers < n ? malloc((size_t)movers * sizeof *index) : NULL;
	if (index)
		cli_spread(n, movers, index);
	bool ready = (index || movers == n) && cli_motion_init(&r->motion, r->scene, r->args.gen.seed, movers, index);
	free(index);
	if (!ready) {
		fprintf(r->err, "bp frames: out of memory\n");
		return CLI_EXIT_RESOURCE;
	}
	bp_world_def def = bp_world_def_default();
	def.algorithm = r->args.algorithm;
	def.thread_count = r->args.threads;
	def.incremental = r->args.incremental;
	def.memory_limit = r->args.max_memory;
	int code = cli_world_from_scene_def("frames", r->scene, 0, &def, &r->world, r->err);
	if (code != CLI_EXIT_OK)
		return code;
	// Pair events name pairs by user key: the scene id, so they are distinct.
	// Entities that do not move are static: a world mostly at rest.
	const cli_motion *m = &r->motion;
	for (uint32_t i = 0, j = 0; status == BP_OK && i < r->scene->count; ++i) {
		bp_entity e = bp_world_entity_at(r->world, i);
		status = bp_entity_set_user_key(r->world, e, r->scene->ids[i]);
		if (m->index && (j >= m->count || m->index[j] != i)) {
			if (status == BP_OK)
				status = bp_entity_set_kind(r->world, e, BP_KIND_STATIC);
		} else {
			++j;
		}
	}
	if (status != BP_OK) {
		fprintf(r->err, "bp frames: %s\n", bp_world_last_error(r->world));
		return cli_exit_for_status(status);
	}
	return CLI_EXIT_OK;
}

/// The host's own work while a build runs: AABB queries on the held view, then busy time.
static void host_work(frames_run *r, uint32_t frame, float edge, uint64_t *rng, uint32_t *scratch)
{
	const uint32_t q = r->args.queries;
	for (uint32_t k = 0; r->view && k < q; ++k) {
		uint32_t e = (uint32_t)(bp_splitmix64((*rng)++) % r->motion.n);
		float lo[3], hi[3];
		for (int a = 0; a < r->motion.dims; ++a) {
			lo[a] = r->motion.centre[a][e] - 0.5f * edge;
			hi[a] = r->motion.centre[a][e] + 0.5f * edge;
		}
		size_t total = 0;
		uint64_t t0 = cli_now_ns();
		// BP_ERR_OUT_OF_RANGE (more hits than the buffer) still counts them.
		(void)bp_view_overlap_box(r->view, lo, hi, NULL, scratch, QUERY_CAPACITY, &total);
		r->query_ns[(size_t)frame * q + k] = cli_now_ns() - t0;
		r->hits_total += total;
	}
	if (r->args.host_ms > 0) {
		uint64_t until = cli_now_ns() + (uint64_t)(r->args.host_ms * 1e6);
		while (cli_now_ns() < until) {
		}
	}
}

static void print_progress(frames_run *r, uint32_t frame, double p99)
{
	const uint32_t total = r->args.gen.frames, width = 30;
	uint32_t filled = (uint32_t)((uint64_t)(frame + 1) * width / total);
	fprintf(r->err, "\r[");
	for (uint32_t i = 0; i < width; ++i)
		fputc(i < filled ? '#' : '.', r->err);
	fprintf(r->err, "] %u/%u build %.2f ms host %.2f ms frame %.2f ms p99 %.1f us ", frame + 1, total,
		r->build_ms[frame], r->host_ms[frame], r->frame_ms[frame], p99 / 1e3);
	if (frame + 1 == total)
		fputc('\n', r->err);
	fflush(r->err);
}

static int run_frames(frames_run *r)
{
	const uint32_t frames = r->args.gen.frames, q = r->args.queries;
	const float edge = query_edge(&r->motion);
	uint32_t *scratch = malloc(QUERY_CAPACITY * sizeof(uint32_t));
	if (!scratch) {
		fprintf(r->err, "bp frames: out of memory\n");
		return CLI_EXIT_RESOURCE;
	}
	uint64_t rng = r->args.gen.seed;
	int code = CLI_EXIT_OK;
	for (uint32_t f = 0; f < frames && code == CLI_EXIT_OK; ++f) {
		uint64_t t0 = cli_now_ns();
		bp_status status = BP_OK;
		if (f > 0) {
			cli_motion_step(&r->motion);
			// Only the movers reach the library: an incremental world sees just them change.
			status = cli_motion_apply(&r->motion, r->world);
		}
		uint64_t number = 0;
		if (status == BP_OK)
			status = bp_frame_submit(r->world, &number);
		if (status != BP_OK) {
			fprintf(r->err, "bp frames: frame %u: %s\n", f + 1, bp_world_last_error(r->world));
			code = cli_exit_for_status(status);
			break;
		}
		host_work(r, f, edge, &rng, scratch);
		uint64_t t_host = cli_now_ns();
		status = bp_frame_wait(r->world, number);
		bp_view_release(r->view);
		r->view = NULL;
		if (status == BP_OK)
			status = bp_frame_acquire(r->world, &r->view);
		if (status != BP_OK) {
			if (status == BP_ERR_OUT_OF_MEMORY && r->args.max_memory)
				fprintf(r->err, "bp frames: frame %u: out of memory: the pairs need more than --max-memory "
						"(%zu bytes), or the system had no more\n", f + 1, r->args.max_memory);
			else
				fprintf(r->err, "bp frames: frame %u: %s\n", f + 1, bp_status_string(status));
			code = cli_exit_for_status(status);
			break;
		}
		uint64_t t_end = cli_now_ns();
		size_t pairs = 0, began = 0, ended = 0;
		bp_view_pairs(r->view, &pairs);
		(void)bp_view_events(r->view, NULL, 0, &began, NULL, 0, &ended); // counts only
		bp_frame_stats stats = bp_view_stats(r->view);
		if (r->stats)
			r->stats[f] = stats;
		r->build_ms[f] = (double)(stats.ns_total - stats.ns_prepare) / 1e6;
		r->host_ms[f] = (double)(t_host - t0) / 1e6;
		r->frame_ms[f] = (double)(t_end - t0) / 1e6;
		r->overlap[f] = (r->host_ms[f] + r->build_ms[f]) / r->frame_ms[f];
		r->active[f] = stats.active_count;
		const size_t done = f > 0 ? q : 0; // frame 1 has no earlier view to query
		memcpy(r->frame_query_ns, r->query_ns + (size_t)f * q, done * sizeof(uint64_t));
		double p50 = quantile_ns(r->frame_query_ns, done, 0.5), p99 = quantile_ns(r->frame_query_ns, done, 0.99);
		if (r->lines)
			fprintf(r->out,
				"frame=%u build_ms=%.3f host_ms=%.3f query_p50_us=%.3f query_p99_us=%.3f pairs=%zu began=%zu "
				"ended=%zu active=%u\n",
				f + 1, r->build_ms[f], r->host_ms[f], p50 / 1e3, p99 / 1e3, pairs, began, ended, stats.active_count);
		if (r->progress)
			print_progress(r, f, p99);
	}
	free(scratch);
	return code;
}

static void print_summary(frames_run *r)
{
	const uint32_t frames = r->args.gen.frames, q = r->args.queries;
	const size_t queries = (size_t)(frames - 1) * q; // frames 2..F
	uint64_t *ns = r->query_ns + q;
	double p50 = quantile_ns(ns, queries, 0.5), p99 = quantile_ns(ns, queries, 0.99);
	size_t pairs = 0;
	bp_view_pairs(r->view, &pairs);
	bp_frame_stats stats = bp_view_stats(r->view);
	fprintf(r->out,
		"frames=%u n=%u algo=%s threads=%d build_ms_median=%.3f frame_ms_median=%.3f overlap=%.3f "
		"query_p50_us=%.3f query_p99_us=%.3f pairs_last=%zu host_ms_median=%.3f query_hits_mean=%.1f "
		"active_median=%.1f\n",
		frames, r->motion.n, bp_algorithm_name(stats.algorithm), stats.thread_count, median(r->build_ms, frames),
		median(r->frame_ms, frames), median(r->overlap, frames), p50 / 1e3, p99 / 1e3, pairs,
		median(r->host_ms, frames), queries ? (double)r->hits_total / (double)queries : 0.0,
		median(r->active, frames));
}

/// --stats: medians over the frames of each field of the library's bp_frame_stats.
static void print_stage_stats(frames_run *r)
{
	const uint32_t frames = r->args.gen.frames;
	uint64_t *v = malloc(frames * sizeof *v);
	if (!v) {
		fprintf(r->err, "bp frames: out of memory for --stats\n");
		return;
	}
	// Offsets rather than a function per field: one loop prints every column.
	static const struct {
		const char *key;
		size_t offset;
		bool ms;
	} columns[] = {
		{"prepare_ms", offsetof(bp_frame_stats, ns_prepare), true},
		{"build_ms", offsetof(bp_frame_stats, ns_build), true},
		{"find_ms", offsetof(bp_frame_stats, ns_find), true},
		{"merge_ms", offsetof(bp_frame_stats, ns_merge), true},
		{"view_ms", offsetof(bp_frame_stats, ns_view), true},
		{"hierarchy_ms", offsetof(bp_frame_stats, ns_hierarchy), true},
		{"total_ms", offsetof(bp_frame_stats, ns_total), true},
		{"candidate_tests", offsetof(bp_frame_stats, candidate_tests), false},
		{"cells", offsetof(bp_frame_stats, cell_count), false},
	};
	fprintf(r->out, "stats=median");
	for (size_t c = 0; c < sizeof columns / sizeof columns[0]; ++c) {
		for (uint32_t f = 0; f < frames; ++f)
			memcpy(&v[f], (const char *)&r->stats[f] + columns[c].offset, sizeof v[f]);
		double m = quantile_ns(v, frames, 0.5); // nearest rank: one frame's value, not a mean of two
		if (columns[c].ms)
			fprintf(r->out, " %s=%.6f", columns[c].key, m / 1e6);
		else
			fprintf(r->out, " %s=%.0f", columns[c].key, m);
	}
	fprintf(r->out, " pairs_last=%" PRIu64 "\n", r->stats[frames - 1].pair_count);
	free(v);
}

/// Bytes the tool itself takes for a run: the generated frame, the motion arrays and
/// the per-frame records (query times, the per-frame medians' inputs, --stats).
static uint64_t own_bytes(const frames_args *a)
{
	const uint64_t n = a->gen.n, dims = (uint64_t)a->gen.dims, frames = a->gen.frames, q = a->queries;
	uint64_t scene = n * sizeof(uint32_t) + 2 * dims * n * sizeof(float);
	uint64_t moving = n * sizeof(uint32_t) + 5 * dims * n * sizeof(float);
	uint64_t records = (frames * q + 1 + q + 1) * sizeof(uint64_t) + 5 * frames * sizeof(double) +
			   (a->stats ? frames * sizeof(bp_frame_stats) : 0);
	return scene + moving + records; // n < 2^32, frames <= 10^6, q <= 10^5: no overflow
}

/// Refuses, before any work, a run whose own arrays pass --max-memory or, without
/// it, the memory this process may have: a usage error, as bp gen's scene size.
static int check_own_size(const frames_args *a, FILE *err)
{
	uint64_t need = own_bytes(a), bound = a->max_memory ? a->max_memory : cli_memory_available();
	if (need <= bound)
		return CLI_EXIT_OK;
	fprintf(err, "bp frames: --n %" PRIu32 " --frames %" PRIu32 " --queries %" PRIu32 " needs %" PRIu64
		     " bytes for the scene, its motion and the per-frame records, more than %s (%" PRIu64 " bytes)\n",
		a->gen.n, a->gen.frames, a->queries, need, a->max_memory ? "--max-memory" : "this process may have", bound);
	return CLI_EXIT_USAGE;
}

int cli_frames(int argc, char **argv, FILE *out, FILE *err)
{
	frames_run r = {.out = out, .err = err};
	bool help;
	int code = parse_args(argc, argv, &r.args, out, err, &help);
	if (code != CLI_EXIT_OK || help)
		return code;
	if (r.args.replay)
		return cli_replay(r.args.replay, r.args.algorithm, r.args.threads, (float)r.args.skin, r.args.verbose, out, err);
	const bool tty = isatty(fileno(out)) == 1;
	r.lines = !tty || r.args.verbose;
	r.progress = tty;

	const size_t frames = r.args.gen.frames, q = r.args.queries;
	code = check_own_size(&r.args, err);
	if (code == CLI_EXIT_OK)
		code = create_world(&r);
	if (code == CLI_EXIT_OK) {
		r.query_ns = calloc(frames * q + 1, sizeof(uint64_t));
		r.frame_query_ns = calloc(q + 1, sizeof(uint64_t));
		r.build_ms = calloc(frames, sizeof(double));
		r.host_ms = calloc(frames, sizeof(double));
		r.frame_ms = calloc(frames, sizeof(double));
		r.overlap = calloc(frames, sizeof(double));
		r.active = calloc(frames, sizeof(double));
		r.stats = r.args.stats ? calloc(frames, sizeof(bp_frame_stats)) : NULL;
		if (!r.query_ns || !r.frame_query_ns || !r.build_ms || !r.host_ms || !r.frame_ms || !r.overlap || !r.active ||
			(r.args.stats && !r.stats)) {
			fprintf(err, "bp frames: out of memory\n");
			code = CLI_EXIT_RESOURCE;
		}
	}
	if (code == CLI_EXIT_OK)
		code = run_frames(&r);
	if (code == CLI_EXIT_OK)
		print_summary(&r);
	if (code == CLI_EXIT_OK && r.stats)
		print_stage_stats(&r);
	bp_view_release(r.view);
	bp_world_destroy(r.world);
	bp_scene_destroy(r.scene);
	cli_motion_free(&r.motion);
	free(r.query_ns);
	free(r.frame_query_ns);
	free(r.build_ms);
	free(r.host_ms);
	free(r.frame_ms);
	free(r.overlap);
	free(r.active);
	free(r.stats);
	return code;
}
