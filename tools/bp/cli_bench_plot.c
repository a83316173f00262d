// SPDX-License-Identifier: MIT
// `bp bench` plots: writes a gnuplot script next to the CSV that reads the CSV (so the plots can be
// redrawn from it alone), runs gnuplot on it and checks that every PNG came out.
#define _POSIX_C_SOURCE 200809L
#include "cli_bench.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "output_file.h"

extern char **environ;

static const char *const plot_suffixes[] = {"-time-vs-n.png", "-speedup.png", "-stages.png"};
enum { PLOT_COUNT = sizeof plot_suffixes / sizeof plot_suffixes[0] };

// Column numbers are those of bench_write_csv: 1 scene, 3 n, 4 algo, 5 threads, 7 ms_median,
// 9-12 ms_prepare/build/find/merge, 13 speedup, 18 incremental. A line is an algorithm in one
// world kind, named as bench_line_name does ("grid", "grid-incremental"). Rows are picked with a filter that gives NaN
// for every other row; `smooth unique` then joins the picked points in x order whatever the
// row order; `set datafile missing NaN` makes the lines run across the rows left out (without
// it each NaN row breaks the line and only the points are drawn). Stacked bars are drawn as overlapping boxes, tallest (the whole step) first.
static const char script_body[] =
	"set datafile separator comma\n"
	"set datafile missing NaN\n"
	"set termoption noenhanced\n"
	"term = strstrt(GPVAL_TERMINALS, 'pngcairo') > 0 ? 'pngcairo' : 'png'\n"
	"sel(s, a) = strcol(1) eq s && strcol(4).(column(18) > 0 ? '-incremental' : '') eq a\n"
	"set grid\n"
	"set key top left\n"
	"eval sprintf('set terminal %s size %d,%d', term, width, height)\n"
	"\n"
	"set output stem.'-time-vs-n.png'\n"
	"set multiplot layout layout_rows, layout_cols title sprintf('step time vs n (median of the runs, %d thread%s)%s', tmin, tmin == 1 ? '' : 's', workload)\n"
	"set logscale xy\n"
	"set xlabel 'entities n'\n"
	"set ylabel 'ms per step'\n"
	"do for [s = 1:|scene|] {\n"
	"\tset title scene[s]\n"
	"\tplot for [a in algos[s]] csv every ::1 using (sel(scene[s], a) && column(5) == tmin ? column(3) : NaN):7 \\\n"
	"\t\tsmooth unique with linespoints title a\n"
	"}\n"
	"unset multiplot\n"
	"unset logscale\n"
	"\n"
	"set output stem.'-speedup.png'\n"
	"set multiplot layout layout_rows, layout_cols title sprintf('speed-up over %d thread%s at the largest n%s', tmin, tmin == 1 ? '' : 's', workload)\n"
	"set xlabel 'threads'\n"
	"set ylabel 'speed-up'\n"
	"set xrange [0:tmax + 1]\n"
	"if (tmax <= 16) { set xtics 1 }\n"
	"set yrange [0:*]\n"
	"do for [s = 1:|scene|] {\n"
	"\tset title sprintf('%s n=%d', scene[s], nmax[s])\n"
	"\tplot for [a in top[s]] csv every ::1 using (sel(scene[s], a) && column(3) == nmax[s] ? column(5) : NaN):13 \\\n"
	"\t\tsmooth unique with linespoints title a, \\\n"
	"\t\tx / tmin with lines dashtype 2 lc rgb 'gray' title 'ideal'\n"
	"}\n"
	"unset multiplot\n"
	"\n"
	"set output stem.'-stages.png'\n"
	"set multiplot layout layout_rows, layout_cols title sprintf('time per stage at the largest n, %d thread%s (medians)%s', tmin, tmin == 1 ? '' : 's', workload)\n"
	"set style fill solid 0.85 border -1\n"
	"set boxwidth 0.6\n"
	"set xlabel ''\n"
	"set ylabel 'ms'\n"
	"set key outside right top\n"
	"set xtics rotate by -30\n"
	"do for [s = 1:|scene|] {\n"
	"\tset title sprintf('%s n=%d', scene[s], nmax[s])\n"
	"\tk = words(top[s])\n"
	"\tset xrange [0.4:k + 0.6]\n"
	"\tset xtics ()\n"
	"\tdo for [i = 1:k] { set xtics add (word(top[s], i) i) }\n"
	"\tplot for [i = 1:k] csv every ::1 using (sel(scene[s], word(top[s], i)) && column(3) == nmax[s] && column(5) == tmin ? i : NaN):(column(9) + column(10) + column(11) + column(12)) \\\n"
	"\t\t\twith boxes lc rgb '#e41a1c' title (i == 1 ? 'merge' : ''), \\\n"
	"\t\tfor [i = 1:k] csv every ::1 using (sel(scene[s], word(top[s], i)) && column(3) == nmax[s] && column(5) == tmin ? i : NaN):(column(9) + column(10) + column(11)) \\\n"
	"\t\t\twith boxes lc rgb '#377eb8' title (i == 1 ? 'find' : ''), \\\n"
	"\t\tfor [i = 1:k] csv every ::1 using (sel(scene[s], word(top[s], i)) && column(3) == nmax[s] && column(5) == tmin ? i : NaN):(column(9) + column(10)) \\\n"
	"\t\t\twith boxes lc rgb '#4daf4a' title (i == 1 ? 'build' : ''), \\\n"
	"\t\tfor [i = 1:k] csv every ::1 using (sel(scene[s], word(top[s], i)) && column(3) == nmax[s] && column(5) == tmin ? i : NaN):9 \\\n"
	"\t\t\twith boxes lc rgb '#984ea3' title (i == 1 ? 'prepare' : '')\n"
	"}\n"
	"unset multiplot\n";

/// Writes text as a gnuplot single-quoted string (only ' is special: doubled).
static void put_quoted(FILE *f, const char *text)
{
	fputc('\'', f);
	for (const char *c = text; *c; ++c) {
		if (*c == '\'')
			fputc('\'', f);
		fputc(*c, f);
	}
	fputc('\'', f);
}

static bool on_path(const char *program)
{
	const char *path = getenv("PATH");
	char candidate[1024];
	while (path && *path) {
		const char *colon = strchr(path, ':');
		size_t length = colon ? (size_t)(colon - path) : strlen(path);
		if (length == 0)
			snprintf(candidate, sizeof candidate, "./%s", program);
		else
			snprintf(candidate, sizeof candidate, "%.*s/%s", (int)length, path, program);
		if (access(candidate, X_OK) == 0)
			return true;
		path = colon ? colon + 1 : NULL;
	}
	return false;
}

/// A line: an algorithm in one world kind.
enum { LINE_COUNT = 2 * BP_ALGO_COUNT };
static int line_of(bp_algorithm algo, bool incremental) { return 2 * (int)algo + (incremental ? 1 : 0); }

/// Per scene: the lines with rows at any n, and those with rows at the scene's largest n.
static void scene_lists(const bench_row *rows, int count, int s, uint32_t *nmax, bool *any, bool *top)
{
	*nmax = 0;
	for (int i = 0; i < count; ++i)
		if (rows[i].scene == s && rows[i].n > *nmax)
			*nmax = rows[i].n;
	for (int l = 0; l < LINE_COUNT; ++l)
		any[l] = top[l] = false;
	for (int i = 0; i < count; ++i) {
		if (rows[i].scene != s)
			continue;
		int l = line_of(rows[i].algo, rows[i].incremental);
		any[l] = true;
		top[l] |= rows[i].n == *nmax;
	}
}

/// The lines as gnuplot words, in the plan's order of algorithms, then of world kinds.
static void put_line_words(FILE *f, const bench_plan *plan, const bool *which)
{
	fputc('\'', f);
	bool first = true;
	for (int a = 0; a < plan->algo_count; ++a) {
		for (int w = 0; w < plan->world_count; ++w) {
			if (!which[line_of(plan->algos[a], plan->incremental[w])])
				continue;
			char name[BENCH_NAME_MAX];
			bench_line_name(plan->algos[a], plan->incremental[w], name, sizeof name);
			fprintf(f, "%s%s", first ? "" : " ", name);
			first = false;
		}
	}
	fputc('\'', f);
}

/// The workload in the titles: empty for the default one (nothing static, nothing moves).
static void put_workload(FILE *f, const bench_plan *plan)
{
	char text[128] = "", margin[48] = "";
	if (plan->margin > 0)
		snprintf(margin, sizeof margin, ", margin %g", (double)plan->margin);
	if (plan->static_fraction > 0 || plan->moving > 0 || plan->margin > 0)
		snprintf(text, sizeof text, "; static %g, moving %g%s", plan->static_fraction, plan->moving, margin);
	fprintf(f, "workload = ");
	put_quoted(f, text);
	fputc('\n', f);
}

/// Writes the gnuplot script whole or not at all (output_file.h); false with the reason in
/// output->message.
static bool write_script(bp_output *output, const char *path, const bench_plan *plan, const bench_row *rows,
	int count)
{
	if (!bp_output_open(output, path))
		return false;
	FILE *f = output->file;
	int tmin = plan->threads[0], tmax = plan->threads[0];
	for (int t = 1; t < plan->thread_count; ++t) {
		tmin = plan->threads[t] < tmin ? plan->threads[t] : tmin;
		tmax = plan->threads[t] > tmax ? plan->threads[t] : tmax;
	}
	int cols = plan->scene_count < 3 ? plan->scene_count : 3;
	int layout_rows = (plan->scene_count + cols - 1) / cols;
	fprintf(f, "# Plots of %s.csv, written by bp bench. To redraw them from the CSV, in this directory:\n", plan->stem);
	fprintf(f, "#   gnuplot -e \"dir='.'\" %s.gnuplot\n", plan->stem);
	fprintf(f, "if (!exists('dir')) dir = ");
	put_quoted(f, plan->out_dir);
	fprintf(f, "\nstem = dir.'/%s'\ncsv = stem.'.csv'\n", plan->stem);
	fprintf(f, "tmin = %d\ntmax = %d\nlayout_rows = %d\nlayout_cols = %d\nwidth = %d\nheight = %d\n", tmin, tmax,
		layout_rows, cols, 640 * cols, 460 * layout_rows + 40);
	fprintf(f, "array scene[%d]\narray nmax[%d]\narray algos[%d]\narray top[%d]\n", plan->scene_count,
		plan->scene_count, plan->scene_count, plan->scene_count);
	put_workload(f, plan);
	for (int s = 0; s < plan->scene_count; ++s) {
		uint32_t nmax;
		bool any[LINE_COUNT], top[LINE_COUNT];
		scene_lists(rows, count, s, &nmax, any, top);
		fprintf(f, "scene[%d] = ", s + 1);
		put_quoted(f, plan->scenes[s].name);
		fprintf(f, "; nmax[%d] = %u; algos[%d] = ", s + 1, nmax, s + 1);
		put_line_words(f, plan, any);
		fprintf(f, "; top[%d] = ", s + 1);
		put_line_words(f, plan, top);
		fputc('\n', f);
	}
	fputs(script_body, f);
	return bp_output_commit(output);
}

/// What gnuplot said, its start kept: warnings on a run that drew every image (an empty range
/// when a scene has one n) are noise, and the start of a failure says what went wrong.
typedef struct plotter_log {
	char text[4096];
	size_t length;
} plotter_log;

static void keep(plotter_log *log, const char *bytes, size_t count)
{
	size_t room = sizeof log->text - 1 - log->length;
	count = count < room ? count : room;
	memcpy(log->text + log->length, bytes, count);
	log->length += count;
	log->text[log->length] = '\0';
}

/// Runs gnuplot on the script, its output into *log. Returns its exit status, or -1.
static int run_gnuplot(const char *script, plotter_log *log)
{
	*log = (plotter_log){.length = 0};
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
	posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
	posix_spawn_file_actions_addclose(&actions, fds[0]);
	posix_spawn_file_actions_addclose(&actions, fds[1]);
	char *args[] = {"gnuplot", (char *)script, NULL};
	pid_t pid;
	int spawned = posix_spawnp(&pid, "gnuplot", &actions, NULL, args, environ);
	posix_spawn_file_actions_destroy(&actions);
	close(fds[1]);
	if (spawned != 0) {
		close(fds[0]);
		return -1;
	}
	char buffer[4096];
	for (ssize_t got; (got = read(fds[0], buffer, sizeof buffer)) != 0;) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		keep(log, buffer, (size_t)got);
	}
	close(fds[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int bench_plot(const bench_plan *plan, const bench_row *rows, int count, FILE *out, FILE *err)
{
	if (!on_path("gnuplot")) {
		fprintf(err, "bp bench: gnuplot is not on PATH: no plots (Debian: apt install gnuplot-nox)\n");
		return CLI_EXIT_OK;
	}
	if (count == 0 || plan->scene_count == 0)
		return CLI_EXIT_OK;
	char script[sizeof plan->out_dir + BENCH_NAME_MAX + 16];
	snprintf(script, sizeof script, "%s/%s.gnuplot", plan->out_dir, plan->stem);
	bp_output output;
	if (!write_script(&output, script, plan, rows, count)) {
		fprintf(err, "bp bench: %s\n", output.message);
		return CLI_EXIT_RESOURCE;
	}
	// Old images would pass the check below if gnuplot skipped one.
	char png[sizeof script + 16];
	for (int p = 0; p < PLOT_COUNT; ++p) {
		snprintf(png, sizeof png, "%s/%s%s", plan->out_dir, plan->stem, plot_suffixes[p]);
		unlink(png);
	}
	plotter_log log;
	int status = run_gnuplot(script, &log);
	if (status != 0) {
		fprintf(err, "bp bench: gnuplot %s failed (exit %d)%s%s", script, status, log.length ? ":\n" : "\n", log.text);
		return CLI_EXIT_RESOURCE;
	}
	for (int p = 0; p < PLOT_COUNT; ++p) {
		snprintf(png, sizeof png, "%s/%s%s", plan->out_dir, plan->stem, plot_suffixes[p]);
		struct stat st;
		if (stat(png, &st) != 0 || st.st_size == 0) {
			fprintf(err, "bp bench: gnuplot wrote no image '%s'%s%s", png, log.length ? ":\n" : "\n", log.text);
			return CLI_EXIT_RESOURCE;
		}
		fprintf(out, "plot=%s\n", png);
	}
	return CLI_EXIT_OK;
}
