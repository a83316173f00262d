// SPDX-License-Identifier: MIT
// history_soak: the history engine (history.h) as a plain ctest program and a soak runner. Each
// history runs in a forked child, so a crash fails it like a check; a failing history is
// minimised (operations dropped, counts halved, faults and settings dropped while it still fails
// the same way), saved as history-min-NAME.bin and printed as a Criterion test.
//   history_soak [--corpus DIR]      the scripted reproductions, DIR's files, seeds 1..N
//                                    (N: BP_HISTORY_SEEDS, or 8000; 1000 with BP_TEST_QUICK=1)
//   history_soak --seed S [--print]  one seed, verbosely (--print: as a test even if it passes)
//   history_soak --file F [--print]  a byte file: a corpus entry or a saved minimal history, or a
//                                    trace (docs/trace.md), its frames as operations (history_trace.c)
//   history_soak --seconds T | --hours H [--first S]   soak from seed S (default: from the clock)
//   history_soak --write-corpus DIR  the scripted cases and seeds 1..4 as byte files
// --seeds N, --minimise N (failures to minimise, default 2), --no-fork (run here, no minimising).
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE // MAP_ANONYMOUS
#include "history.h"

#include <broadphase/broadphase.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// ---- the known reproductions (tests/fuzz/README.md), in the history format ------------------

static hist_op box(int code, uint16_t p, float x0, float y0, float z0, float x1, float y1, float z1)
{
	return (hist_op){.code = (uint8_t)code, .p = p, .k = 1, .min = {x0, y0, z0}, .max = {x1, y1, z1}};
}

/// An operation by its fields; k 1 is no injected failure.
static hist_op op(int code, uint8_t a, uint16_t p, uint16_t q, uint16_t n, uint16_t k, uint32_t s)
{
	return (hist_op){.code = (uint8_t)code, .a = a, .p = p, .q = q, .n = n, .k = k, .s = s};
}

enum { SCRIPTED = 9 };

static const char *scripted(int index, history *h)
{
	*h = (history){.cfg = {.dims = 2, .profile = 1, .grid = 20, .period = {8, 8, 8}}};
	hist_config *g = &h->cfg;
	const hist_op step = op(OP_STEP, 0, 0, 0, 0, 1, 0);
	switch (index) {
	case 0: // 1: a point moved onto the face of a box at a decimal coordinate; defaults + incremental
		g->canonical = 1;
		hist_push(h, box(OP_CREATE, 0, 500, 500, 0, 501, 501, 0)), hist_push(h, step);
		hist_push(h, box(OP_CREATE, 0, 0.1f, 0, 0, 10.7f, 10, 0)), hist_push(h, box(OP_CREATE, 0, 20, 5, 0, 20, 5, 0));
		hist_push(h, step), hist_push(h, box(OP_TELEPORT, 2, 10.7f, 5, 0, 10.7f, 5, 0)), hist_push(h, step);
		return "point_onto_face";
	case 1: // 2: every entity destroyed in one call, then one created: world steps, then frames held
	case 2:
		g->dims = 3;
		hist_push(h, box(OP_CREATE, 0, 0, 0, 0, 2, 2, 2)), hist_push(h, box(OP_CREATE, 0, 1, 1, 1, 3, 3, 3));
		hist_push(h, box(OP_CREATE, 0, 1.5f, 0, 0, 2.5f, 2, 2));
		for (int i = 0; i < 5; ++i) {
			if (i == 1 || i == 4)
				hist_push(h, i == 1 ? op(OP_DESTROY_BULK, 0, 0, 0, 0, 1, 7) : box(OP_CREATE, 0, 0, 0, 0, 1, 1, 1));
			hist_push(h, op(index == 1 ? OP_STEP : OP_FRAME, (uint8_t)(4 | i << 3), 0, 0, 0, 1, 0));
		}
		return index == 1 ? "destroy_all_then_create_steps" : "destroy_all_then_create_frames";
	case 3: // 3: def.margin 1.5e38, an entity jumps to -3e38: 0 pairs (found by seed 61)
		*g = (hist_config){.dims = 2, .canonical = 1, .threads = 1, .algo_plain = 2, .debug_flags = 4, .grid = 53,
			.margin = 1.5e38f, .period = {8, 8, 8}};
		hist_push(h, step), hist_push(h, op(OP_CREATE_BULK, 0x90, 0, 28643, 19295, 11649, 1993352059));
		hist_push(h, op(OP_CREATE_BULK, 0x79, 0, 38753, 56948, 53460, 1748425979));
		hist_push(h, op(OP_CREATE_BULK, 0xe0, 0, 3750, 7, 65334, 573719503));
		hist_push(h, op(OP_CREATE_BULK, 0xb6, 0, 12622, 11, 23204, 3513394959u)), hist_push(h, step);
		hist_push(h, op(OP_MOVE_BULK, 0x7a, 59254, 0, 0, 1, 959404084)), hist_push(h, step);
		return "margin_1_5e38_loses_pairs";
	case 4: // 3: the same margin, entities at 3e38, new entities: the step crashes (found by seed 885)
		*g = (hist_config){.dims = 2, .profile = 1, .threads = 1, .debug_flags = 4, .grid = 56, .margin = 1.5e38f,
			.period = {8, 8, 8}};
		hist_push(h, op(OP_CREATE_BULK, 0x18, 0, 56622, 13421, 27441, 3112181989u)), hist_push(h, step);
		hist_push(h, op(OP_MOVE_BULK, 0x78, 35844, 0, 6, 1, 902303264));
		hist_push(h, op(OP_CREATE_BULK, 0x7c, 0, 37745, 26872, 8410, 2325562608u));
		hist_op one = box(OP_CREATE, 0, 0x1.4a6666p+5f, 0x1.933334p+5f, 0, 0x1.5a6666p+5f, 0x1.a0cccep+5f, 0);
		one.a = 0xaf, one.s = 1932444432, hist_push(h, one);
		hist_push(h, op(OP_CREATE_BULK, 0xdc, 0, 1456, 31606, 48490, 3538034970u)), hist_push(h, step);
		one = box(OP_CREATE, 0, 0x1.133334p+5f, 0x1.2cccccp+2f, 0, 0x1.333334p+5f, 0x1.333332p+2f, 0);
		one.a = 0x39, one.s = 452198138, hist_push(h, one);
		hist_push(h, op(OP_CREATE_BULK, 0xc9, 0, 7250, 29393, 57572, 2406475452u)), hist_push(h, step);
		return "margin_1_5e38_crashes";
	case 8: // 5: 72 boxes; 12 move once and settle while 4 keep moving: after the settling only
		// those 4 change, so nothing stops resting and the kept pairs merge unpruned
		*g = (hist_config){.dims = 3, .canonical = 1, .threads = 2, .settle_min = 1, .grid = 12,
			.debug_flags = BP_DEBUG_ALWAYS_INCREMENTAL, .period = {8, 8, 8}};
		for (uint32_t s = 1; s <= 3; ++s)
			hist_push(h, op(OP_CREATE_BULK, 0, 0, 0, 23, 1, 40 + s));
		hist_push(h, step), hist_push(h, op(OP_MOVE_BULK, 1, 4, 0, 11, 1, 7));
		for (uint32_t s = 0; s < 10; ++s)
			hist_push(h, op(OP_MOVE_BULK, 1, 0, 0, 3, 1, 90 + s)), hist_push(h, step);
		return "movers_keep_moving_after_others_settle";
	default: // 4: 2,000 boxes through frames, moving 20 and creating 10 a frame; an allocation of frame 3 fails
		g->threads = 1, g->grid = 60, g->profile = index == 5 ? 1 : 0;
		hist_push(h, op(OP_CREATE_BULK, 0xF8, 0, 0, 0, 1, 21)), hist_push(h, op(OP_FRAME, 0, 0, 0, 0, 1, 0));
		for (uint16_t frame = 2; frame <= 7; ++frame) {
			hist_push(h, op(OP_MOVE_BULK, 2, 0, 0, 19, 1, frame)), hist_push(h, op(OP_CREATE_BULK, 0, 0, 0, 9, 1, 100u + frame));
			hist_push(h, op(OP_FRAME, 0, 0, 0, 0, frame != 3 ? 1 : index == 5 ? 30 * 4 : index == 6 ? 33 * 4 : 37 * 4, 0));
		}
		return index == 5 ? "frame_build_fails_allocation_31" : index == 6 ? "frame_build_fails_allocation_34_grid" :
			"frame_build_fails_allocation_38_grid";
	}
}

// ---- histories in child processes ----------------------------------------------------------

typedef struct outcome {
	bool failed, crashed;
	int world;
	uint64_t steps;
	char msg[1024];
} outcome;

static int result_fd = -1, failures, passes, minimised, minimise_limit = 2, attempts = 1;
static bool no_fork, print;
static uint64_t total_steps;

static void child_fail(uint32_t op_index, int world, const char *message)
{
	char buf[1100];
	int len = snprintf(buf, sizeof buf, "F %d %u %s", world, op_index, message);
	fflush(stdout);
	_exit(write(result_fd, buf, (size_t)len) == len ? 3 : 4);
}

/// Runs h in a child (or here, with --no-fork); trace: writes it there as a test named `name`.
static outcome run(const history *h, bool quiet, FILE *trace, int trace_world, const char *name)
{
	static volatile uint32_t *progress;
	outcome out = {0};
	hist_options options = {.trace = trace, .trace_world = trace_world, .trace_name = name};
	if (no_fork)
		return out.steps = hist_run(h, &options), out;
	if (!progress && (progress = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
		abort();
	progress[0] = progress[1] = 0;
	int fds[2], status = 0, used = 0;
	if (pipe(fds) != 0)
		abort();
	fflush(stdout), fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		result_fd = fds[1], hist_fail = child_fail, options.progress = progress;
		if ((quiet && !freopen("/dev/null", "w", stderr)) || (trace && setvbuf(trace, NULL, _IONBF, 0)))
			_exit(5); // unbuffered: a crash loses nothing of the trace
		alarm(300);
		char buf[40];
		int len = snprintf(buf, sizeof buf, "K %llu", (unsigned long long)hist_run(h, &options));
		fflush(stdout);
		_exit(write(result_fd, buf, (size_t)len) == len ? 0 : 4);
	}
	close(fds[1]);
	char buf[1100] = {0};
	size_t len = 0;
	for (ssize_t r; len < sizeof buf - 1 && (r = read(fds[0], buf + len, sizeof buf - 1 - len)) > 0;)
		len += (size_t)r;
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && buf[0] == 'K') {
		out.steps = strtoull(buf + 2, NULL, 10);
	} else if (buf[0] == 'F' && sscanf(buf, "F %d %*u %n", &out.world, &used) >= 1) {
		out.failed = true;
		snprintf(out.msg, sizeof out.msg, "%s", buf + used);
	} else {
		out.failed = out.crashed = true, out.world = (int)progress[1];
		snprintf(out.msg, sizeof out.msg, "crashed (%s %d) in op %u, %s world", WIFSIGNALED(status) ? "signal" : "exit",
			WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), progress[0], out.world ? "plain" : "incremental");
	}
	return out;
}

/// Tries a smaller h; keeps it when it fails as `first` did (a crash, or a check on the same
/// world) in one of `attempts` runs (more than 1 when the failure depends on timing).
static bool try_smaller(history *h, const history *t, const outcome *first, int *tries)
{
	outcome o = {0};
	for (int i = 0; i < attempts && !o.failed; ++i, ++*tries)
		o = run(t, true, NULL, 0, NULL);
	if (!o.failed || o.crashed != first->crashed || (!o.crashed && o.world != first->world))
		return false;
	if (t != h)
		h->cfg = t->cfg, h->count = t->count, memcpy(h->ops, t->ops, t->count * sizeof *t->ops);
	return true;
}

static void minimise(history *h, const outcome *first, int *tries)
{
	history t = {0};
	for (bool changed = true; changed && *tries < 3000;) {
		changed = false;
		for (uint32_t chunk = h->count / 2 ? h->count / 2 : 1; chunk >= 1; chunk /= 2) // drop runs of operations
			for (uint32_t at = 0; at < h->count && *tries < 3000;) {
				t.cfg = h->cfg, t.count = 0;
				for (uint32_t i = 0; i < h->count; ++i)
					if (i < at || i >= at + chunk)
						hist_push(&t, h->ops[i]);
				if (try_smaller(h, &t, first, tries))
					changed = true;
				else
					at += chunk;
			}
		for (uint32_t i = 0; i < h->count; ++i) { // fewer entities, no injected failure
			hist_op *o = &h->ops[i], save = *o;
			if (o->code == OP_CREATE_BULK && (o->a & 0xF8) == 0xF8)
				o->a &= 0x7F;
			else if (o->code == OP_CREATE_BULK || o->code == OP_MOVE_BULK || o->code == OP_ATTR)
				o->n = (uint16_t)(o->n % 32 / 2);
			else if ((o->code == OP_STEP || o->code == OP_FRAME) && o->k % 4 == 0)
				o->k = 1;
			if (memcmp(o, &save, sizeof save) == 0)
				continue;
			if (try_smaller(h, h, first, tries))
				changed = true;
			else
				*o = save;
		}
		for (int i = 0; i < 8; ++i) { // simpler settings, one at a time
			hist_config save = h->cfg, *g = &h->cfg;
			uint8_t *field[8] = {&g->threads, &g->executor, &g->threads_on_small, &g->settle_min, &g->debug_flags,
				&g->hierarchy, &g->moving, &g->split};
			uint8_t value = i == 0 ? 1 : i == 4 ? g->debug_flags & BP_DEBUG_ALWAYS_INCREMENTAL : 0;
			if (*field[i] != value && (*field[i] = value, !try_smaller(h, h, first, tries)))
				h->cfg = save;
		}
	}
	hist_free(&t);
}

/// Runs one history; on a failure reports it and (the first few) minimises it and prints it.
static void check(history *h, const char *label, const char *name, bool verbose)
{
	outcome o = run(h, false, false, 0, NULL); // stderr kept: a sanitizer's report
	total_steps += o.steps;
	if (!o.failed) {
		++passes;
		if (verbose)
			printf("%s: passed, %llu steps\n", label, (unsigned long long)o.steps);
		if (print)
			run(h, false, stdout, 0, name);
		return;
	}
	++failures;
	printf("%s: FAILED (%u operations): %s\n", label, h->count, o.msg);
	if (minimised++ >= minimise_limit || no_fork)
		return;
	int tries = 0, again = 0;
	uint32_t before = h->count;
	for (int i = 0; i < 3; ++i)
		again += run(h, true, NULL, 0, NULL).failed;
	attempts = again == 3 ? 1 : 4;
	if (again < 3)
		printf("%s: failed again in %d of 3 runs: timing-dependent; candidates get 4 runs\n", label, again);
	minimise(h, &o, &tries);
	outcome m = {0};
	FILE *trace = NULL;
	for (int i = 0; i < 8 && !m.failed; ++i) { // the test printed is that of a failing run
		if (trace)
			fclose(trace);
		if (!(trace = tmpfile()))
			abort();
		m = run(h, true, trace, o.world == 1, name);
	}
	printf("%s: minimised from %u to %u operations in %d runs: %s\n", label, before, h->count, tries,
		m.failed ? m.msg : "but it passed 8 runs: the last is printed");
	uint8_t *bytes;
	size_t size = hist_encode(h, &bytes);
	char path[300];
	snprintf(path, sizeof path, "history-min-%s.bin", name);
	FILE *f = fopen(path, "wb");
	if (f && fwrite(bytes, 1, size, f) == size)
		printf("%s: saved as %s (replay: history_soak --file %s)\n", label, path, path);
	if (f)
		fclose(f);
	free(bytes);
	printf("----- minimal test: the calls on the %s world -----\n", o.world == 1 ? "plain" : "incremental");
	rewind(trace);
	for (int ch; (ch = getc(trace)) != EOF;)
		putchar(ch);
	fclose(trace);
	if (m.crashed)
		printf("\t// %s\n}\n", m.msg);
	printf("----- end of test -----\n");
}

static bool file_io(const char *path, history *h, bool write)
{
	static uint8_t buf[1 << 20];
	uint8_t *bytes = buf;
	FILE *f = fopen(path, write ? "wb" : "rb");
	size_t size = write ? hist_encode(h, &bytes) : 0;
	bool ok = f && (write ? fwrite(bytes, 1, size, f) == size : (size = fread(buf, 1, sizeof buf, f), true));
	if (f)
		fclose(f);
	if (write)
		free(bytes);
	else if (ok)
		hist_decode(buf, size, h);
	return ok;
}

/// A history from a file: a trace (by its magic) or history bytes.
static bool load(const char *path, history *h)
{
	char magic[8] = {0}, error[600];
	FILE *f = fopen(path, "rb");
	bool trace = f && fread(magic, 1, sizeof magic, f) == sizeof magic && memcmp(magic, "BPTRACE1", 8) == 0;
	if (f)
		fclose(f);
	if (!trace)
		return file_io(path, h, false);
	if (hist_from_trace(path, h, error, sizeof error))
		return true;
	fprintf(stderr, "history_soak: %s\n", error);
	return false;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const char *env = getenv("BP_HISTORY_SEEDS"), *quick = getenv("BP_TEST_QUICK"), *corpus = NULL, *file = NULL,
		*write_dir = NULL;
	uint64_t seeds = env ? strtoull(env, NULL, 10) : quick && *quick == '1' ? 1000 : 8000, first = 1, histories = 0;
	double seconds = 0, start = now();
	bool one = false, first_given = false;
	for (int i = 1; i < argc; ++i) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
		if (!strcmp(a, "--no-fork") || !strcmp(a, "--print"))
			*(a[2] == 'n' ? &no_fork : &print) = true;
		else if (!strcmp(a, "--seed") || !strcmp(a, "--first"))
			first = strtoull(v, NULL, 0), one |= a[2] == 's', first_given = true, ++i;
		else if (!strcmp(a, "--seeds"))
			seeds = strtoull(v, NULL, 0), ++i;
		else if (!strcmp(a, "--seconds") || !strcmp(a, "--hours"))
			seconds = atof(v) * (a[2] == 'h' ? 3600 : 1), ++i;
		else if (!strcmp(a, "--corpus") || !strcmp(a, "--file") || !strcmp(a, "--write-corpus"))
			*(a[2] == 'c' ? &corpus : a[2] == 'f' ? &file : &write_dir) = v, ++i;
		else if (!strcmp(a, "--minimise"))
			minimise_limit = atoi(v), ++i;
		else
			return fprintf(stderr, "history_soak: unknown argument '%s' (see tests/fuzz/history_soak.c)\n", a), 2;
	}
	history h;
	char label[1200], name[300];
	for (int i = 0; write_dir && i < SCRIPTED + 4; ++i) {
		const char *case_name = i < SCRIPTED ? scripted(i, &h) : name;
		if (i >= SCRIPTED)
			snprintf(name, sizeof name, "seed%d", i - SCRIPTED + 1), hist_from_seed((uint64_t)(i - SCRIPTED + 1), &h);
		snprintf(label, sizeof label, "%s/%s", write_dir, case_name);
		if (!file_io(label, &h, true))
			return fprintf(stderr, "history_soak: cannot write %s\n", label), 2;
		hist_free(&h);
	}
	if (write_dir)
		return 0;
	if (file && !load(file, &h))
		return fprintf(stderr, "history_soak: cannot read %s\n", file), 2;
	if (file)
		check(&h, file, "replay", true), hist_free(&h), ++histories, seeds = 0;
	for (int i = 0; i < SCRIPTED && !file && !one && seconds <= 0; ++i, ++histories) {
		const char *case_name = scripted(i, &h);
		snprintf(label, sizeof label, "scripted %s", case_name);
		check(&h, label, case_name, false), hist_free(&h);
	}
	DIR *d = corpus ? opendir(corpus) : NULL;
	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] != '.' && snprintf(label, sizeof label, "%s/%s", corpus, e->d_name) && load(label, &h))
			snprintf(name, sizeof name, "corpus_%.100s", e->d_name), check(&h, label, name, false), hist_free(&h),
				++histories;
	if (d)
		closedir(d);
	if (seconds > 0) {
		first = first_given ? first : (uint64_t)time(NULL) * 1000;
		minimise_limit = minimise_limit < 1 ? minimise_limit : 1;
		printf("history_soak: soak from seed %llu for %.0f s\n", (unsigned long long)first, seconds);
	}
	double seed_start = now();
	uint64_t runs = 0;
	for (uint64_t s = first; seconds > 0 ? now() - start < seconds : s < first + (one ? 1 : seeds); ++s, ++runs) {
		hist_from_seed(s, &h);
		snprintf(label, sizeof label, "seed %llu", (unsigned long long)s);
		snprintf(name, sizeof name, "seed_%llu", (unsigned long long)s);
		check(&h, label, name, one), hist_free(&h);
		if (seconds > 0 && runs % 2000 == 1999)
			printf("history_soak: %llu histories, %llu steps, %d failed so far\n", (unsigned long long)runs + 1,
				(unsigned long long)total_steps, failures), fflush(stdout);
	}
	double t = now() - start, ts = now() - seed_start;
	printf("history_soak: %d passed, %d failed (%llu histories, %llu steps in %.1f s; random seeds %.1f histories/s)\n",
		passes, failures, (unsigned long long)(histories + runs), (unsigned long long)total_steps, t,
		ts > 0 ? (double)runs / ts : 0.0);
	return failures ? 1 : 0;
}
