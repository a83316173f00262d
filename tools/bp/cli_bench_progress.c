// SPDX-License-Identifier: MIT
// `bp bench` progress bar: one line on a terminal, rewritten with '\r':
// [#####.....] 12/40 uniform3 grid n=100000 threads=2 ETA 0:42
#include "cli_bench.h"

#define BAR_WIDTH 20

void bench_progress_start(bench_progress *p, FILE *to, int total, double work_total)
{
	*p = (bench_progress){.to = to, .start_ns = cli_now_ns(), .work_total = work_total, .total = total};
}

void bench_progress_show(bench_progress *p, const char *scene, const char *line, uint32_t n, int threads)
{
	if (!p->to)
		return;
	char bar[BAR_WIDTH + 1];
	int filled = p->total ? p->done * BAR_WIDTH / p->total : BAR_WIDTH;
	for (int i = 0; i < BAR_WIDTH; ++i)
		bar[i] = i < filled ? '#' : '.';
	bar[BAR_WIDTH] = '\0';
	// The ETA weighs each configuration by its expected cost (cli_bench.c):
	// cost grows with n far more than with anything else the plan varies.
	char eta[32] = "ETA ?";
	if (p->work_done > 0) {
		double elapsed = (double)(cli_now_ns() - p->start_ns) / 1e9;
		double left = elapsed * (p->work_total - p->work_done) / p->work_done;
		unsigned seconds = left > 0 ? (unsigned)(left + 0.5) : 0;
		snprintf(eta, sizeof eta, "ETA %u:%02u", seconds / 60, seconds % 60);
	}
	// "\033[K" clears what a longer previous line left behind.
	fprintf(p->to, "\r[%s] %d/%d %s %s n=%u threads=%d %s\033[K", bar, p->done, p->total, scene, line, n, threads,
		eta);
	fflush(p->to);
}

void bench_progress_step(bench_progress *p, double work)
{
	++p->done;
	p->work_done += work;
}

void bench_progress_finish(bench_progress *p)
{
	if (!p->to)
		return;
	fprintf(p->to, "\r\033[K");
	fflush(p->to);
}
