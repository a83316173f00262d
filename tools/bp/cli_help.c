// SPDX-License-Identifier: MIT
// Usage text of the tool and of each command; `bp help [COMMAND]`.
#include "cli.h"

#include <string.h>

static const char tool_usage[] =
	"usage: bp COMMAND [ARGS]\n"
	"\n"
	"commands:\n"
	"  gen     generate a scene file\n"
	"  pairs   find the overlapping pairs of a scene file\n"
	"  verify  check algorithms against an independent oracle\n"
	"  frames  run moving frames through the frame scheduler with host work, or replay a trace\n"
	"  record  write a trace (recorded motion): a generated scene walking, or a physics-like pile,\n"
	"          rain, crowd, brownian, freefall or gravity\n"
	"  render  draw a scene, its cells and its overlapping entities as PNG or SVG\n"
	"  bench   time algorithms x scenes x sizes x threads; CSV, and PNG plots with --out\n"
	"  help    show this text, or 'bp help COMMAND'\n"
	"\n"
	"FILE may be a scene file or, for pairs, verify, bench and frames --replay, a trace\n"
	"(docs/trace.md).\n"
	"\n"
	"exit codes: 0 success, 1 usage error, 2 bad input file, 3 resource error\n"
	"            (out of memory, output not writable), 4 verify, bench or frames --replay\n"
	"            found a difference\n";

static const char gen_usage[] =
	"usage: bp gen --dist NAME --n N [--dims 2|3] [--seed S] [--frames F] [--binary] [--max-memory SIZE]\n"
	"              [--verbose] -o FILE\n"
	"\n"
	"Writes a generated scene (ids 0..N-1) as text, or in the binary form with --binary.\n"
	"The same arguments always give the same file.\n"
	"  --dist NAME   uniform, clustered, mixed, line or boxprune\n"
	"  --n N         number of entities\n"
	"  --dims D      2 or 3 (default 3)\n"
	"  --seed S      random seed (default 1)\n"
	"  --frames F    frames of motion (default 1)\n"
	"  --max-memory SIZE  refuse (exit 1) before any work a scene larger than SIZE bytes, or\n"
	"                with K, M, G (powers of 1024); default: the memory this process may have\n"
	"  --verbose     say what was written, on stderr\n";

static const char pairs_usage[] =
	"usage: bp pairs FILE [--algo NAME] [--threads T] [--runs R] [--frame K] [-o PAIRS] [--stats]\n"
	"                [--max-memory SIZE]\n"
	"\n"
	"Prints one line:\n"
	"  pairs=<count> checksum=<16 hex> algo=<algorithm that ran> threads=<T> ms=<median step time>\n"
	"  --algo NAME   auto (default), brute, or another built-in algorithm\n"
	"  --threads T   worker threads, 0 = all cores (default 0)\n"
	"  --runs R      steps to time; ms is their median (default 1). Loading is not timed.\n"
	"  --frame K     frame of a moving scene or of a trace (default 0); a trace's frame K is\n"
	"                read through its index and nearest keyframe, not by replaying every frame\n"
	"  -o PAIRS      write one \"lo hi\" line of scene ids per pair, in the library's order; -o -\n"
	"                writes them to standard output, and the summary lines to standard error\n"
	"  --stats       print a second line with the step's statistics as key=value\n"
	"  --max-memory SIZE  the most memory for pairs (the world's memory_limit), bytes or\n"
	"                with K, M, G (powers of 1024); past it the step fails (exit 3)\n";

static const char verify_usage[] =
	"usage: bp verify FILE [--algo NAME|all] [--threads T] [--frame K]\n"
	"\n"
	"Compares each algorithm's pair set with an independent oracle written in the tool (a sort\n"
	"and sweep in double precision over the pair rules, in time near linear in the entities),\n"
	"one line per algorithm: \"<algo> ok pairs=N\" or the first difference. Exits 0 iff every\n"
	"one matched, 4 otherwise. On a terminal, stderr shows the frame (or algorithm) being\n"
	"checked; nothing more is written when stderr is not a terminal.\n"
	"An algorithm that does not support the scene (grid and hash on spans beyond float range)\n"
	"says \"<algo> skipped: <why>\"; with all it is left out, named alone it exits 2.\n"
	"  --algo NAME   one algorithm, or all (default): every built-in one except brute, which\n"
	"                is quadratic: name it to check it too on small inputs\n"
	"  --threads T   worker threads, 0 = all cores (default 0)\n"
	"  --frame K     frame of a moving scene (default 0); of a trace, that frame alone\n"
	"A trace (docs/trace.md) is checked frame by frame: every frame is replayed into one world\n"
	"per algorithm and an incremental world, and each frame's pairs must equal the oracle's on\n"
	"the trace's state byte for byte. One line per world:\n"
	"\"<algo> ok frames=F pairs=<total over the frames>\" or \"<algo> FAIL frame K: <why>\".\n";

static const char record_usage[] =
	"usage: bp record --n N -o FILE [--motion MOTION] [--dims 2|3] [--frames F] [--seed S]\n"
	"                 [--keyframes K] [--dist NAME] [--moving M] [--churn C]\n"
	"\n"
	"Writes a trace (docs/trace.md) of F frames. The same arguments always give the same file.\n"
	"--motion walk (default): frame 0 creates the generated scene (trace id = scene id), and from\n"
	"frame 1 on the movers move as in 'bp frames' (up to 5% of their extent per axis, bouncing).\n"
	"The entities that do not move are static. The physics-like motions are what a physics\n"
	"engine's broadphase sees each step (dt = 1/60 s, sizes in metres, the last axis up); N is\n"
	"their dynamic bodies, and the statics they stand on come on top (ids 0..S-1, the bodies\n"
	"S..S+N-1, new ids from S+N on):\n"
	"  pile    0.5-1 m boxes dropped in columns of 6 onto a ground of static tiles between\n"
	"          static walls; they fall, stack, jitter by 1% of their size while they settle for\n"
	"          1-2 s, then sleep (no moves). Every 1.5 s, one disturbance per 128 columns wakes\n"
	"          the columns around a random one (3x3 in 3D) and drops its top box again\n"
	"  rain    ragdoll-sized bodies over a heightfield of static 4 m tiles: each falls from 8-18 m,\n"
	"          lands at 12-20 m/s, bounces a little, rests 1-3 s, and is destroyed and created\n"
	"          again at the top under a new id; a third tumble (their box turns) in the air\n"
	"  crowd   0.5 m people on the streets of a grid of static buildings (in 3D 1.8 m tall on\n"
	"          the ground; 2D is the plan): each walks at 1.2-1.6 m/s (one in 20 runs at 3-4 m/s)\n"
	"          with a small sideways wobble to a goal two street legs away, stands there 2-10 s\n"
	"          (no moves), then walks on\n"
	"  brownian 0.5-1 m boxes drifting through a closed region of static walls filled to 10%,\n"
	"          at 0.5-2 m/s on each axis; each draws a new velocity with chance 1/20 a frame and\n"
	"          bounces off the walls; they pass through one another, so every box moves every frame\n"
	"  freefall 0.5-1 m boxes at rest 0.5-6.5 m above the floor of a flat closed region fall at\n"
	"          1 g and stack: a box stops on the floor or on the box under it (boxes sharing a\n"
	"          1/8 m cell of the floor); boxes never overlap by more than 1/8 m, and once all\n"
	"          have landed (within about 1.5 s) none moves\n"
	"  gravity the same boxes filling 10% of a cube-like closed region, under 2 g along the axis\n"
	"          nearest a direction that starts 30 degrees off down and turns toward +x and over\n"
	"          a quarter turn a second: the pile slides and\n"
	"          stacks again against the walls; boxes away from the walls never overlap by more\n"
	"          than 1/8 m (a stack that reaches the far wall is stopped there)\n"
	"Prints one line (with statics=S for the physics-like motions):\n"
	"  recorded=FILE frames=F n=N dims=D creates=.. destroys=.. moves=..\n"
	"  --n N         number of entities (walk) or of dynamic bodies (required)\n"
	"  --motion NAME walk (default), pile, rain, crowd, brownian, freefall or gravity\n"
	"  --dims D      2 or 3 (default 3)\n"
	"  --frames F    frames to record (default 100)\n"
	"  --seed S      scene and motion seed (default 1)\n"
	"  --keyframes K a keyframe (every live entity) after every K-th frame, so frame K of the\n"
	"                trace reads without the frames before it; 0 = none (default 64)\n"
	"  -o FILE       the trace to write\n"
	"walk only:\n"
	"  --dist NAME   uniform (default), clustered, mixed, line or boxprune\n"
	"  --moving M    fraction of the entities that move, in (0, 1] (default 1), every (1/M)-th\n"
	"  --churn C     fraction of the movers, in [0, 1] (default 0), destroyed each frame and\n"
	"                created again where they now are under a new id (ids from N on)\n";

static const char render_usage[] =
	"usage: bp render FILE -o OUT.png|OUT.svg [--algo NAME] [--threads T] [--frame K] [--size PIXELS]\n"
	"                 [--axes xy|xz|yz] [--no-cells]\n"
	"\n"
	"Steps one frame and draws what the broadphase saw: every entity outlined, the entities in a\n"
	"pair filled and outlined in red, and the algorithm's base cells (grid, hash) as grey lines.\n"
	"The format follows the -o extension. Prints one line:\n"
	"  rendered=<path> entities=<n> pairs=<count> algo=<name> cell=<base cell edge, 0 = none>\n"
	"  --algo NAME     auto (default), brute, or another built-in algorithm\n"
	"  --threads T     worker threads, 0 = all cores (default 0)\n"
	"  --frame K       frame of a moving scene (default 0)\n"
	"  --size PIXELS   longer image edge, 64..8192 (default 1024); the scene's bounding box fills\n"
	"                  it less a margin of PIXELS/32 on each side, +y up\n"
	"  --axes AXES     the two world axes drawn, for a 3D scene's projection (default xy)\n"
	"  --no-cells      leave the cell lines out (also left out when over 512 per axis)\n";

static const char bench_usage[] =
	"usage: bp bench [--preset small|medium|large] [--scenes uniform3,clustered3,...] [FILE...]\n"
	"                [--algos a,b|all] [--n 1000,10000] [--threads 1,2] [--runs R] [--seed S]\n"
	"                [--static F] [--moving F] [--incremental | --worlds full,incremental] [--margin M]\n"
	"                [--machine NAME] [--out DIR] [--name NAME] [--no-plots] [--no-progress]\n"
	"\n"
	"Times one step (a warm-up step, then R timed steps; sap re-sorts from scratch each step\n"
	"unless entities move, see below)\n"
	"for every scene x n x algorithm x thread count, and prints a CSV on stdout, writing no\n"
	"file; with --out DIR it writes DIR/bench-<preset>.csv instead (bench-custom.csv when a\n"
	"list, --runs/--seed or the workload was changed, bench-NAME.csv with --name). The CSV is\n"
	"one header line, then one row\n"
	"  scene,dims,n,algo,threads,runs,ms_median,ms_min,ms_prepare,ms_build,ms_find,ms_merge,\n"
	"  speedup,pairs,checksum,static,moving,incremental,margin,active_median,searched_median\n"
	"per configuration (stage times are medians; speedup is against the fewest threads for the\n"
	"same scene, n, algorithm and world kind). Every configuration of one scene must find the same\n"
	"pairs: otherwise the difference is printed and the exit code is 4. With --out, when gnuplot\n"
	"is on PATH, DIR/bench-<...>.gnuplot (rerunnable on the CSV alone) draws <stem>-time-vs-n.png\n"
	"(log-log), <stem>-speedup.png and <stem>-stages.png at each scene's largest n, one line per\n"
	"algorithm and world kind (\"grid\", \"grid-incremental\"); what gnuplot says is shown only\n"
	"when it fails, and without gnuplot there are no plots (a note, exit 0). With --out it\n"
	"prints \"csv=PATH rows=N seconds=S\" and one \"plot=PATH\" line per image.\n"
	"  --preset P     small (default): uniform3,clustered3,uniform2 at n=1e3,1e4,1e5, all algorithms,\n"
	"                 3 runs; medium: also mixed3, up to 1e6; large: uniform3,uniform2 at 1e5..1e7, sap,grid\n"
	"  --scenes LIST  generated scenes, distribution + dims (uniform, clustered, mixed, line, boxprune3)\n"
	"  FILE...        scene files (frame 0, n from the file); they replace the preset's scenes.\n"
	"                 A trace (docs/trace.md) is replayed whole: each configuration steps every\n"
	"                 frame in order, the frame's changes handed over untimed; runs is its frame\n"
	"                 count, n its most entities, pairs and checksum its last frame's, and\n"
	"                 --runs, --static and --moving do not apply to it\n"
	"  --algos LIST   algorithm names, or all (default): every built-in one but auto.\n"
	"                 brute is skipped above 20000 entities\n"
	"  --n LIST       sizes of the generated scenes\n"
	"  --threads LIST thread counts (default 1, 2, 4, ... and the core count)\n"
	"  --runs R       timed steps per configuration; ms_median and ms_min are over them\n"
	"  --seed S       seed of the generated scenes and of the motion (default 1)\n"
	"A world mostly at rest (the columns static, moving, incremental, margin report them):\n"
	"  --static F     round(F * n) entities, every (1/F)-th by scene order, are created static\n"
	"                 (BP_KIND_STATIC: never paired with each other) and never move; F in [0, 1]\n"
	"                 (default 0)\n"
	"  --moving F     round(F * d) of the d dynamic entities, every (1/F)-th of them, move before\n"
	"                 every step but the first, as in 'bp frames' (up to 5% of their extent per\n"
	"                 axis, bouncing); the rest stay put. F in [0, 1] (default 0: nothing moves,\n"
	"                 the same scene is stepped again). With movers there are 2 moved warm-up\n"
	"                 steps; below all entities they are handed over by\n"
	"                 bp_entities_set_bounds by dense index, which is not timed\n"
	"  --incremental  the worlds are incremental (def.incremental): a step searches again only\n"
	"                 what changed. Their full path is grid whatever --algos says\n"
	"  --worlds LIST  world kinds, each configuration once per kind: full (default), incremental,\n"
	"                 or full,incremental to compare them in one run (rows must agree)\n"
	"  --margin M     bp_world_def.margin, M >= 0 (default 0: chosen from the motion)\n"
	"A world that is not incremental rebuilds from scratch every step when nothing moves (kept\n"
	"orders and trees would time the unchanged scene's shortcut); with movers it keeps what it\n"
	"keeps across steps, as in a host. active_median and searched_median are the medians over\n"
	"the runs of the library's active_count and searched_count (0 when not incremental).\n"
	"  --out DIR      write the CSV and plots into DIR (made when missing) instead of the CSV on\n"
	"                 stdout\n"
	"  --machine NAME --out perf/results/NAME, this repository's results layout\n"
	"  --name NAME    files DIR/bench-NAME.csv, .gnuplot and -*.png\n"
	"  --no-plots     with --out, the CSV only\n"
	"  --no-progress  no progress bar (it is drawn on stderr only when stderr is a terminal)\n";

static const char help_usage[] = "usage: bp help [COMMAND]\n";

bool cli_usage(const char *command, FILE *to)
{
	const char *text = NULL;
	if (!command)
		text = tool_usage;
	else if (strcmp(command, "gen") == 0)
		text = gen_usage;
	else if (strcmp(command, "pairs") == 0)
		text = pairs_usage;
	else if (strcmp(command, "verify") == 0)
		text = verify_usage;
	else if (strcmp(command, "frames") == 0)
		text = cli_frames_usage;
	else if (strcmp(command, "record") == 0)
		text = record_usage;
	else if (strcmp(command, "render") == 0)
		text = render_usage;
	else if (strcmp(command, "bench") == 0)
		text = bench_usage;
	else if (strcmp(command, "help") == 0)
		text = help_usage;
	if (!text)
		return false;
	fputs(text, to);
	return true;
}

int cli_help(int argc, char **argv, FILE *out, FILE *err)
{
	if (argc <= 2) {
		cli_usage(NULL, out);
		return CLI_EXIT_OK;
	}
	if (argc > 3) {
		fprintf(err, "bp help: unexpected argument '%s'\n", argv[3]);
		return CLI_EXIT_USAGE;
	}
	if (cli_usage(argv[2], out))
		return CLI_EXIT_OK;
	fprintf(err, "bp help: unknown command '%s'\n\n", argv[2]);
	cli_usage(NULL, err);
	return CLI_EXIT_USAGE;
}
