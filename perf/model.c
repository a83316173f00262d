// SPDX-License-Identifier: MIT
// The scaling models' shared arithmetic and machine readings (model.h).
#define _POSIX_C_SOURCE 200809L // clock_gettime
#include "model.h"

#include <stdlib.h>
#include <string.h>

#include "timing.h"

const model_socket model_sockets[MODEL_SOCKETS] = {{"desktop16", 60.0}, {"server64", 250.0}};

int model_threads(int w) { return w == 0 ? 1 : bpi_loop_clock_width(w - 1); }

static void *run_inline(bp_task_fn *task, uint32_t count, uint32_t min_range, void *task_context, void *user)
{
	(void)min_range, (void)user;
	task(0, count, 0, task_context);
	return NULL;
}

static void finish_nothing(void *task, void *user) { (void)task, (void)user; }

bp_task_system model_inline_tasks(void) { return (bp_task_system){run_inline, finish_nothing, NULL, 64}; }

double model_stream_gb_per_s(void)
{
	const size_t bytes = (size_t)256 << 20;
	char *from = malloc(bytes), *to = malloc(bytes);
	if (!from || !to) {
		free(from);
		free(to);
		return 0;
	}
	memset(from, 1, bytes);
	memset(to, 2, bytes);
	double rate[5];
	for (int r = 0; r < 5; ++r) {
		uint64_t t0 = now_ns();
		memcpy(to, from, bytes);
		rate[r] = 2.0 * (double)bytes / (double)(now_ns() - t0);
		from[r] = to[bytes - 1 - (size_t)r]; // keep the copies
	}
	free(from);
	free(to);
	return median_sorting(rate, 5);
}

double model_stage_ms(const model_stage *s, int w, const model_socket *socket, double bw1, bool *memory)
{
	const int p = model_threads(w);
	const double bandwidth = bw1 * p < socket->gb_per_s ? bw1 * p : socket->gb_per_s;
	const double compute = s->serial + s->loops[w], traffic = bandwidth > 0 ? s->traffic_mb / bandwidth : 0;
	*memory = traffic > compute;
	return *memory ? traffic : compute;
}

double model_frame_ms(const model_stage *stages, int count, int w, const model_socket *socket, double bw1)
{
	double total = 0;
	bool memory;
	for (int k = 0; k < count; ++k)
		total += model_stage_ms(&stages[k], w, socket, bw1, &memory);
	return total;
}

/// The stage that takes the most on 64 threads: what more threads past 16 leave standing.
static void name_limit(const model_stage *stages, int count, const model_socket *socket, double bw1)
{
	int limit = 0;
	double most = -1, total = model_frame_ms(stages, count, MODEL_WIDTHS - 1, socket, bw1);
	bool memory = false, limit_memory = false;
	for (int k = 0; k < count; ++k) {
		double ms = model_stage_ms(&stages[k], MODEL_WIDTHS - 1, socket, bw1, &memory);
		if (ms > most) {
			most = ms, limit = k, limit_memory = memory;
		}
	}
	printf("  %-9s past 16 threads: %s limits, %.2f of %.2f ms at 64 (serial %.2f ms%s)\n", socket->name,
		stages[limit].name, most, total, stages[limit].serial, limit_memory ? ", memory-bound" : "");
}

void model_report(const model_stage *stages, int count, double bw1, const char *prefix, FILE *csv)
{
	for (int k = 0; k < count; ++k)
		printf("  %-9s serial %7.2f ms  loops %7.2f ms  traffic %7.1f MB (%.1f ms at one thread's bandwidth)\n",
			stages[k].name, stages[k].serial, stages[k].loops[0], stages[k].traffic_mb,
			bw1 > 0 ? stages[k].traffic_mb / bw1 : 0);
	for (int m = 0; m < MODEL_SOCKETS; ++m) {
		const double t1 = model_frame_ms(stages, count, 0, &model_sockets[m], bw1);
		for (int w = 0; w < MODEL_WIDTHS; ++w) {
			const double total = model_frame_ms(stages, count, w, &model_sockets[m], bw1);
			printf("  %-9s %2d threads: %7.2f ms (%5.2fx)   per stage:", model_sockets[m].name, model_threads(w),
				total, t1 / total);
			for (int k = 0; k < count; ++k) {
				bool memory;
				double ms = model_stage_ms(&stages[k], w, &model_sockets[m], bw1, &memory);
				printf(" %s %.2f%s", stages[k].name, ms, memory ? " (memory)" : "");
			}
			printf("\n");
			if (csv)
				fprintf(csv, "%s%s,%d,%.3f,%.3f\n", prefix, model_sockets[m].name, model_threads(w), total, t1 / total);
		}
		name_limit(stages, count, &model_sockets[m], bw1);
	}
}
