// SPDX-License-Identifier: MIT
// bpi_parallel_for on the executor bound to the calling thread.
#include "parallel/parallel.h"

#include <omp.h>
#include <stdatomic.h>
#include "parallel/threads.h"
#include "parallel/workers.h"

// The executor of the step this thread runs; NULL outside a step.
static _Thread_local const bpi_executor *bound;
// Set while the thread runs a chunk handed out by OpenMP or the host's task
// system (the workers keep their own): a nested loop runs on the thread alone.
static _Thread_local bool inside_task;

static void run_openmp(uint32_t count, uint32_t grain, int threads, bpi_range_fn *fn, void *ctx)
{
	const uint32_t chunks = bpi_chunk_count(count, grain);
	// dynamic,1: chunk costs vary a lot (clusters), so hand them out one by one.
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
	for (uint32_t c = 0; c < chunks; ++c) {
		inside_task = true;
		bpi_run_chunk(fn, ctx, count, grain, c);
		inside_task = false;
	}
}

/// A loop as one task of the host's task system: its items are our chunks.
typedef struct host_loop {
	bpi_range_fn *fn;
	void *ctx;
	uint32_t count, grain;
} host_loop;

static void run_host_range(uint32_t begin, uint32_t end, uint32_t worker, void *task_context)
{
	(void)worker; // chunks, not workers, own the output buffers
	const host_loop *loop = task_context;
	const bool outer = inside_task;
	inside_task = true;
	for (uint32_t c = begin; c < end; ++c)
		bpi_run_chunk(loop->fn, loop->ctx, loop->count, loop->grain, c);
	inside_task = outer;
}

static void run_host(const bp_task_system *tasks, uint32_t count, uint32_t grain, bpi_range_fn *fn, void *ctx)
{
	host_loop loop = {fn, ctx, count, grain};
	void *task = tasks->enqueue(run_host_range, bpi_chunk_count(count, grain), 1, &loop, tasks->user);
	if (task)
		tasks->finish(task, tasks->user);
}

static void run_loop(uint32_t count, uint32_t grain, int threads, bpi_range_fn *fn, void *ctx)
{
	if (threads <= 1 || !bound || inside_task || bpi_chunk_count(count, grain) <= 1) {
		bpi_run_serial(count, grain, fn, ctx);
		return;
	}
	switch (bound->kind) {
	case BP_EXECUTOR_OPENMP: run_openmp(count, grain, threads, fn, ctx); break;
	case BP_EXECUTOR_HOST: run_host(&bound->tasks, count, grain, fn, ctx); break;
	default: bpi_workers_run(count, grain, threads, fn, ctx); break;
	}
}

// Process-wide, so a frame's builder runs on its host's clock; atomic, as every loop reads it.
static _Atomic(bpi_loop_clock *) loop_clock;

void bpi_loop_clock_use(bpi_loop_clock *clock)
{
	if (clock)
		*clock = (bpi_loop_clock){.since = bpi_now_ns()};
	atomic_store_explicit(&loop_clock, clock, memory_order_release);
}

void bpi_loop_clock_stage(int stage)
{
	bpi_loop_clock *clock = atomic_load_explicit(&loop_clock, memory_order_acquire);
	if (!clock)
		return;
	const uint64_t now = bpi_now_ns();
	clock->ns[clock->stage] += now - clock->since;
	clock->since = now;
	clock->stage = stage >= 0 && stage < BPI_LOOP_CLOCK_STAGES ? stage : 0;
}

void bpi_parallel_for(uint32_t count, uint32_t grain, int threads, bpi_range_fn *fn, void *ctx)
{
	BP_ASSERT(grain > 0);
	bpi_loop_clock *clock = inside_task ? NULL : atomic_load_explicit(&loop_clock, memory_order_acquire);
	if (!clock) {
		run_loop(count, grain, threads, fn, ctx);
		return;
	}
	uint64_t t0 = bpi_now_ns();
	run_loop(count, grain, threads, fn, ctx);
	uint64_t ns = bpi_now_ns() - t0;
	uint32_t chunks = BP_MAX(bpi_chunk_count(count, grain), 1u);
	clock->loops[clock->stage] += ns;
	for (int w = 0; w < BPI_LOOP_CLOCK_WIDTHS; ++w) {
		uint32_t p = (uint32_t)bpi_loop_clock_width(w), rounds = (chunks + p - 1) / p;
		clock->on[clock->stage][w] += (double)ns * rounds / chunks;
	}
}

int bpi_loop_clock_width(int w)
{
	static const int width[BPI_LOOP_CLOCK_WIDTHS] = {2, 4, 8, 16, 64};
	return width[w];
}

int bpi_resolve_threads(const bpi_executor *e, int requested)
{
	BP_ASSERT(requested >= 0 && requested <= BP_MAX_THREADS);
	if (e && e->kind == BP_EXECUTOR_HOST)
		return e->tasks.worker_count;
	if (requested > 0)
		return requested;
	int procs = omp_get_num_procs();
	return procs > 0 ? BP_MIN(procs, BP_MAX_THREADS) : 1;
}

bp_status bpi_executor_enter(const bpi_executor *e, int threads, bpi_team_failure *failure)
{
	bp_status status = BP_OK;
	if (e->kind == BP_EXECUTOR_WORKERS)
		status = bpi_workers_reserve(threads, failure);
	else if (e->kind == BP_EXECUTOR_OPENMP)
		status = bpi_team_check(threads, failure);
	if (status == BP_OK)
		bound = e;
	return status;
}

void bpi_executor_leave(void) { bound = NULL; }
