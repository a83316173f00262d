// SPDX-License-Identifier: MIT
// Where parallel loops run (world.h, bp_executor): the library's workers, an OpenMP team and a
// host's task system (a small job system written here, 1..8 workers) all give the oracle's
// pairs, byte-identical to one thread; a world refuses an executor it cannot use; the workers
// of a thread end with it. Also built for ThreadSanitizer (tests/tsan).
#define _POSIX_C_SOURCE 200809L // opendir, readdir
#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "parallel/workers.h"

// Above BP_SERIAL_STEP_ENTITIES, so the default thread count uses its threads too.
enum { N = 5000, MAX_WORKERS = 8 };

static oracle_box boxes[N];
static oracle_pairs want;

static void make_scene(void)
{
	test_random_boxes(boxes, N, 3, 30.0f, 2.0f, true, 77);
	want = oracle_find_pairs(boxes, N, 3);
	cr_assert_gt(want.count, 1000);
}

/// Steps a world made from def and checks its pairs against the oracle; returns a
/// copy of the pairs in the library's order (caller frees).
static bp_pair *step_pairs(const bp_world_def *def, size_t *count)
{
	bp_world *w = test_world_from_def(boxes, N, def);
	cr_assert_not_null(w);
	cr_assert_eq(bp_world_step(w), BP_OK, "%s", bp_world_last_error(w));
	const bp_pair *pairs = bp_world_pairs(w, count);
	cr_assert(oracle_same_pair_set(pairs, *count, &want));
	bp_pair *copy = malloc(*count * sizeof *copy + 1);
	memcpy(copy, pairs, *count * sizeof *copy);
	bp_world_destroy(w);
	return copy;
}

static bp_world_def def_for(bp_algorithm algorithm, int threads)
{
	bp_world_def def = bp_world_def_default();
	def.algorithm = algorithm;
	def.thread_count = threads;
	return def;
}

// ---- a host's job system: W threads take ranges of a task from one counter ----

typedef struct job_system {
	int worker_count;
	pthread_t threads[MAX_WORKERS];
	pthread_mutex_t lock;
	pthread_cond_t changed;
	// The task being run, and how far it got. `generation` tells workers a new one came.
	bp_task_fn *task;
	void *task_context;
	uint32_t item_count, range;
	uint32_t next; ///< the first item no worker has taken yet
	uint32_t finished_items;
	uint64_t generation;
	bool stopping;
	// What the test checks afterwards.
	_Atomic int enqueued;
	_Atomic int bad_worker; ///< a task was given a worker index outside [0, worker_count)
	_Atomic uint32_t worker_items[MAX_WORKERS];
} job_system;

typedef struct worker_arg {
	job_system *js;
	uint32_t index;
} worker_arg;

static worker_arg worker_args[MAX_WORKERS];

/// Ranges of the task of `generation` until none is left. A range is taken under the lock
/// with the task it belongs to: a worker still here when the host enqueues the next task
/// must not take that task's items, nor read its fields as they are written.
static void take_ranges(job_system *js, uint32_t worker, uint64_t generation)
{
	for (;;) {
		pthread_mutex_lock(&js->lock);
		const bool done = js->generation != generation || js->next >= js->item_count;
		const uint32_t begin = js->next, count = js->item_count;
		const uint32_t end = done ? begin : begin + js->range < count ? begin + js->range : count;
		bp_task_fn *task = js->task;
		void *context = js->task_context;
		if (!done)
			js->next = end;
		pthread_mutex_unlock(&js->lock);
		if (done)
			return;
		if (worker >= (uint32_t)js->worker_count)
			atomic_store(&js->bad_worker, 1);
		task(begin, end, worker, context);
		atomic_fetch_add(&js->worker_items[worker], end - begin);
		pthread_mutex_lock(&js->lock);
		js->finished_items += end - begin;
		pthread_cond_broadcast(&js->changed);
		pthread_mutex_unlock(&js->lock);
	}
}

static void *job_worker(void *arg)
{
	worker_arg *a = arg;
	job_system *js = a->js;
	uint64_t seen = 0;
	pthread_mutex_lock(&js->lock);
	for (;;) {
		while (js->generation == seen && !js->stopping)
			pthread_cond_wait(&js->changed, &js->lock);
		if (js->stopping)
			break;
		seen = js->generation;
		pthread_mutex_unlock(&js->lock);
		take_ranges(js, a->index, seen);
		pthread_mutex_lock(&js->lock);
	}
	pthread_mutex_unlock(&js->lock);
	return NULL;
}

/// The host's enqueue: ranges of `range` items go to whichever worker asks first.
/// Worker 0 is the thread that finishes (as many job systems let the waiter help).
static void *job_enqueue(bp_task_fn *task, uint32_t item_count, uint32_t min_range, void *task_context, void *user)
{
	job_system *js = user;
	atomic_fetch_add(&js->enqueued, 1);
	pthread_mutex_lock(&js->lock);
	js->task = task;
	js->task_context = task_context;
	js->item_count = item_count;
	js->range = min_range > 2 ? min_range : 2; // ranges of several items: the task must loop
	js->next = 0;
	js->finished_items = 0;
	js->generation++;
	pthread_cond_broadcast(&js->changed);
	pthread_mutex_unlock(&js->lock);
	return js;
}

static void job_finish(void *task, void *user)
{
	job_system *js = user;
	cr_assert_eq(task, js);
	pthread_mutex_lock(&js->lock);
	const uint64_t generation = js->generation;
	pthread_mutex_unlock(&js->lock);
	take_ranges(js, 0, generation);
	pthread_mutex_lock(&js->lock);
	while (js->finished_items < js->item_count)
		pthread_cond_wait(&js->changed, &js->lock);
	pthread_mutex_unlock(&js->lock);
}

static void job_system_start(job_system *js, int workers)
{
	memset(js, 0, sizeof *js);
	js->worker_count = workers;
	pthread_mutex_init(&js->lock, NULL);
	pthread_cond_init(&js->changed, NULL);
	for (int i = 1; i < workers; ++i) { // worker 0 is the finishing thread
		worker_args[i] = (worker_arg){js, (uint32_t)i};
		cr_assert_eq(pthread_create(&js->threads[i], NULL, job_worker, &worker_args[i]), 0);
	}
}

static void job_system_stop(job_system *js)
{
	pthread_mutex_lock(&js->lock);
	js->stopping = true;
	pthread_cond_broadcast(&js->changed);
	pthread_mutex_unlock(&js->lock);
	for (int i = 1; i < js->worker_count; ++i)
		pthread_join(js->threads[i], NULL);
	pthread_cond_destroy(&js->changed);
	pthread_mutex_destroy(&js->lock);
}

/// A task system that runs every range inline in enqueue and returns NULL.
static atomic_int inline_calls;

static void *inline_enqueue(bp_task_fn *task, uint32_t item_count, uint32_t min_range, void *task_context, void *user)
{
	(void)user;
	atomic_fetch_add(&inline_calls, 1);
	for (uint32_t begin = 0; begin < item_count; begin += min_range)
		task(begin, begin + min_range < item_count ? begin + min_range : item_count, 0, task_context);
	return NULL;
}

static void never_finish(void *task, void *user)
{
	(void)task;
	(void)user;
	cr_assert(false, "finish was called for a task enqueue ran inline");
}

// ---- the tests ----------------------------------------------------------------

static const bp_algorithm algorithms[] = {BP_ALGO_SAP, BP_ALGO_GRID, BP_ALGO_HASH};

Test(executor, a_host_task_system_of_1_to_8_workers_gives_the_same_pairs, .timeout = 120)
{
	make_scene();
	for (size_t a = 0; a < sizeof algorithms / sizeof algorithms[0]; ++a) {
		size_t base_count;
		bp_world_def base = def_for(algorithms[a], 1);
		bp_pair *reference = step_pairs(&base, &base_count);
		for (int workers = 1; workers <= MAX_WORKERS; ++workers) {
			static job_system js;
			job_system_start(&js, workers);
			bp_world_def def = def_for(algorithms[a], 0);
			def.executor = BP_EXECUTOR_HOST;
			def.task_system = (bp_task_system){job_enqueue, job_finish, &js, workers};
			size_t count;
			bp_pair *pairs = step_pairs(&def, &count);
			job_system_stop(&js);
			cr_assert_eq(count, base_count);
			cr_assert(memcmp(pairs, reference, count * sizeof *pairs) == 0, "%s, %d workers: another order",
				bp_algorithm_name(algorithms[a]), workers);
			if (workers > 1) // one worker: the loops run on the stepping thread
				cr_assert_gt(atomic_load(&js.enqueued), 0, "the step never used the host's task system");
			cr_assert_eq(atomic_load(&js.bad_worker), 0);
			free(pairs);
		}
		free(reference);
	}
	oracle_pairs_free(&want);
}

Test(executor, a_task_system_may_run_a_task_inline, .timeout = 60)
{
	make_scene();
	size_t base_count, count;
	bp_world_def base = def_for(BP_ALGO_GRID, 1);
	bp_pair *reference = step_pairs(&base, &base_count);
	bp_world_def def = def_for(BP_ALGO_GRID, 0);
	def.executor = BP_EXECUTOR_HOST;
	def.task_system = (bp_task_system){inline_enqueue, never_finish, NULL, 4};
	bp_pair *pairs = step_pairs(&def, &count);
	cr_assert_gt(atomic_load(&inline_calls), 0);
	cr_assert_eq(count, base_count);
	cr_assert(memcmp(pairs, reference, count * sizeof *pairs) == 0);
	free(pairs);
	free(reference);
	oracle_pairs_free(&want);
}

Test(executor, workers_and_openmp_give_the_same_pairs_as_one_thread, .timeout = 120)
{
	make_scene();
	for (size_t a = 0; a < sizeof algorithms / sizeof algorithms[0]; ++a) {
		size_t base_count;
		bp_world_def base = def_for(algorithms[a], 1);
		bp_pair *reference = step_pairs(&base, &base_count);
		for (int threads = 2; threads <= 5; ++threads)
			for (int e = BP_EXECUTOR_WORKERS; e <= BP_EXECUTOR_OPENMP; ++e) {
				bp_world_def def = def_for(algorithms[a], threads);
				def.executor = (bp_executor)e;
				size_t count;
				bp_pair *pairs = step_pairs(&def, &count);
				cr_assert_eq(count, base_count);
				cr_assert(memcmp(pairs, reference, count * sizeof *pairs) == 0, "%s, executor %d, %d threads",
					bp_algorithm_name(algorithms[a]), e, threads);
				free(pairs);
			}
		free(reference);
	}
	oracle_pairs_free(&want);
}

Test(executor, frames_run_on_the_host_task_system, .timeout = 60)
{
	make_scene();
	static job_system js;
	job_system_start(&js, 3);
	bp_world_def def = def_for(BP_ALGO_GRID, 0);
	def.executor = BP_EXECUTOR_HOST;
	def.task_system = (bp_task_system){job_enqueue, job_finish, &js, 3};
	bp_world *w = test_world_from_def(boxes, N, &def);
	for (int frame = 0; frame < 3; ++frame) {
		bp_view *view = NULL;
		cr_assert_eq(bp_frame_step(w, &view), BP_OK, "%s", bp_world_last_error(w));
		size_t count;
		const bp_pair *pairs = bp_view_pairs(view, &count);
		cr_assert(oracle_same_pair_set(pairs, count, &want));
		cr_assert_eq(bp_view_stats(view).thread_count, 3, "the task system's workers, not the cores");
		bp_view_release(view);
	}
	bp_world_destroy(w);
	job_system_stop(&js);
	cr_assert_gt(atomic_load(&js.enqueued), 0);
	oracle_pairs_free(&want);
}

static void *no_enqueue(bp_task_fn *task, uint32_t items, uint32_t range, void *context, void *user)
{
	(void)task, (void)items, (void)range, (void)context, (void)user;
	return NULL;
}

static void no_finish(void *task, void *user) { (void)task, (void)user; }

Test(executor, a_world_refuses_an_executor_it_cannot_use)
{
	const bp_task_system refused[] = {
		{NULL, no_finish, NULL, 2},
		{no_enqueue, NULL, NULL, 2},
		{no_enqueue, no_finish, NULL, 0},
		{no_enqueue, no_finish, NULL, BP_MAX_THREADS + 1},
		{no_enqueue, no_finish, NULL, -1},
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
		bp_world_def def = bp_world_def_default();
		def.executor = BP_EXECUTOR_HOST;
		def.task_system = refused[i];
		bp_world *w = (bp_world *)&def; // must be cleared
		cr_assert_eq(bp_world_create(&def, &w), BP_ERR_INVALID_ARGUMENT, "task system %zu", i);
		cr_assert_null(w);
	}
	bp_world_def def = bp_world_def_default();
	def.executor = (bp_executor)3;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_ERR_INVALID_ARGUMENT);
	// The task system is read only with BP_EXECUTOR_HOST.
	def.executor = BP_EXECUTOR_WORKERS;
	def.task_system = refused[0];
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

// ---- the workers of a thread end with it ---------------------------------------

static int thread_count_of_process(void)
{
	DIR *dir = opendir("/proc/self/task");
	if (!dir)
		return -1;
	int count = 0;
	for (struct dirent *e; (e = readdir(dir));)
		count += e->d_name[0] != '.';
	closedir(dir);
	return count;
}

static void *step_with_four_threads(void *arg)
{
	int *during = arg;
	bp_world_def def = def_for(BP_ALGO_GRID, 4);
	size_t count;
	free(step_pairs(&def, &count));
	*during = thread_count_of_process();
	return NULL;
}

Test(executor, the_workers_of_a_thread_end_with_it, .timeout = 60)
{
	make_scene();
	int before = thread_count_of_process();
	if (before < 0) {
		cr_log_info("no /proc/self/task: nothing to count");
		return;
	}
	int during = 0;
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, step_with_four_threads, &during), 0);
	pthread_join(t, NULL);
	cr_assert_eq(during, before + 1 + 3, "the stepping thread and its 3 workers");
	cr_assert_eq(thread_count_of_process(), before, "workers outlived the thread that started them");
	oracle_pairs_free(&want);
}

// ---- the workers' hand-out, loop after loop -------------------------------------------

enum { LOOPS = 200000, MOST_CHUNKS = 64 };

typedef struct counted_loop {
	uint32_t loop;
	_Atomic uint32_t runs[MOST_CHUNKS]; ///< how often each chunk ran
	_Atomic uint32_t wrong;             ///< chunks run for another loop, or past the end
} counted_loop;

static void count_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	counted_loop *loop = ctx;
	if (chunk >= MOST_CHUNKS || end <= begin) {
		atomic_fetch_add(&loop->wrong, 1);
		return;
	}
	atomic_fetch_add(&loop->runs[chunk], 1);
}

// Loops of few and of many chunks in turn, on more threads than cores, so that workers
// are preempted between loops: each chunk of each loop runs exactly once. A worker that
// read the next loop's chunk count while claiming from the last one ran a chunk twice.
Test(executor, every_chunk_runs_once_loop_after_loop, .timeout = 120)
{
	bpi_team_failure failure;
	cr_assert_eq(bpi_workers_reserve(8, &failure), BP_OK);
	static counted_loop loops[2];
	for (uint32_t l = 0; l < LOOPS; ++l) {
		counted_loop *loop = &loops[l & 1];
		memset(loop, 0, sizeof *loop);
		loop->loop = l;
		uint32_t chunks = (l & 1) ? MOST_CHUNKS : 2;
		bpi_workers_run(chunks * 16, 16, 8, count_chunk, loop);
		cr_assert_eq(atomic_load(&loop->wrong), 0, "loop %u", l);
		for (uint32_t k = 0; k < MOST_CHUNKS; ++k)
			cr_assert_eq(atomic_load(&loop->runs[k]), k < chunks ? 1u : 0u, "loop %u chunk %u", l, k);
	}
}
