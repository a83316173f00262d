// SPDX-License-Identifier: MIT
// The library's worker threads (workers.h): one crew per calling thread, a loop handed out
// chunk by chunk through one atomic word, idle workers asleep on a condition variable.
#define _POSIX_C_SOURCE 200809L // pthread_key_create with the C11 headers
#include "parallel/workers.h"

#include <broadphase/types.h>
#include <errno.h>
#include <stdatomic.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() ((void)0)
#endif

typedef struct crew crew;

/// What a worker thread is started with.
typedef struct worker_slot {
	crew *crew;
	int index;          ///< takes part in a loop only when index < the loop's helpers
	uint32_t first_job; ///< the job number current when it started
} worker_slot;

struct crew {
	pthread_mutex_t lock;
	pthread_cond_t wake;     ///< idle workers sleep here
	pthread_cond_t finished; ///< the caller sleeps here for the last chunks
	/// Job number (high 32 bits) and next unclaimed chunk (low 32 bits). A chunk is
	/// claimed by a compare-and-swap on both, so a worker that slept through a job
	/// change can never claim a chunk of the wrong job.
	_Atomic uint64_t state;
	/// Chunk counts by job number parity. The caller writes the next job's count
	/// before it publishes the job; a worker still claiming from the last job
	/// must keep reading that job's count, or it would claim a chunk past its
	/// end, with the old job number, and run it with the next job's function.
	_Atomic uint32_t chunks[2];
	_Atomic uint32_t done;    ///< its chunks finished
	_Atomic int helpers;      ///< workers that may take part in it
	_Atomic int sleepers;     ///< workers waiting on `wake`
	atomic_bool caller_waiting;
	atomic_bool stopping;
	// The current job. Written before the job number is published, read only by a
	// thread that holds a claimed chunk of it, so never while it is rewritten.
	bpi_range_fn *fn;
	void *ctx;
	uint32_t count, grain;
	int worker_count;
	pthread_t threads[BP_MAX_THREADS];
	worker_slot slots[BP_MAX_THREADS];
};

// Set while the thread runs a chunk: a loop started from inside one runs on the
// thread alone, as a nested OpenMP region does.
static _Thread_local bool inside_chunk;
static _Thread_local crew *own_crew;
static pthread_key_t crew_key;
static pthread_once_t crew_key_once = PTHREAD_ONCE_INIT;

static uint32_t job_of(uint64_t state) { return (uint32_t)(state >> 32); }

/// Claims the next chunk of job `job`; false once none is left or the job is over.
static bool claim(crew *c, uint32_t job, uint32_t *chunk, uint32_t *chunks)
{
	const uint32_t total = atomic_load_explicit(&c->chunks[job & 1], memory_order_relaxed);
	uint64_t s = atomic_load_explicit(&c->state, memory_order_acquire);
	for (;;) {
		if (job_of(s) != job || (uint32_t)s >= total)
			return false;
		if (atomic_compare_exchange_weak_explicit(&c->state, &s, s + 1, memory_order_acq_rel,
				memory_order_acquire)) {
			*chunk = (uint32_t)s;
			*chunks = total;
			return true;
		}
	}
}

static void run_chunks(crew *c, uint32_t job)
{
	uint32_t chunk, chunks;
	inside_chunk = true;
	while (claim(c, job, &chunk, &chunks)) {
		bpi_run_chunk(c->fn, c->ctx, c->count, c->grain, chunk);
		if (atomic_fetch_add(&c->done, 1) + 1 == chunks && atomic_load(&c->caller_waiting)) {
			pthread_mutex_lock(&c->lock);
			pthread_cond_signal(&c->finished);
			pthread_mutex_unlock(&c->lock);
		}
	}
	inside_chunk = false;
}

/// Spins until the job number in `word` differs from `unlike` (word not NULL) or
/// `done` reaches target; false after BPI_WORKERS_SPIN_NS without it. The clock is
/// read every 64 turns.
static bool spin_until(_Atomic uint64_t *word, uint64_t unlike, const _Atomic uint32_t *done, uint32_t target)
{
	uint64_t deadline = bpi_now_ns() + BPI_WORKERS_SPIN_NS;
	for (unsigned turn = 1;; ++turn) {
		if (word ? job_of(atomic_load_explicit(word, memory_order_acquire)) != (uint32_t)unlike
			 : atomic_load_explicit(done, memory_order_acquire) >= target)
			return true;
		cpu_relax();
		if (turn % 64 == 0 && bpi_now_ns() > deadline)
			return false;
	}
}

/// Waits for a job other than `seen`; returns its number, or `seen` when stopping.
static uint32_t await_job(crew *c, uint32_t seen)
{
	if (!spin_until(&c->state, seen, NULL, 0)) {
		pthread_mutex_lock(&c->lock);
		atomic_fetch_add(&c->sleepers, 1);
		while (job_of(atomic_load(&c->state)) == seen && !atomic_load(&c->stopping))
			pthread_cond_wait(&c->wake, &c->lock);
		atomic_fetch_sub(&c->sleepers, 1);
		pthread_mutex_unlock(&c->lock);
	}
	return atomic_load(&c->stopping) ? seen : job_of(atomic_load_explicit(&c->state, memory_order_acquire));
}

static void *worker_main(void *arg)
{
	worker_slot *slot = arg;
	crew *c = slot->crew;
	uint32_t seen = slot->first_job;
	for (;;) {
		uint32_t job = await_job(c, seen);
		if (job == seen)
			return NULL;
		seen = job;
		if (slot->index < atomic_load_explicit(&c->helpers, memory_order_relaxed))
			run_chunks(c, job);
	}
}

static void crew_stop(void *arg)
{
	crew *c = arg;
	pthread_mutex_lock(&c->lock);
	atomic_store(&c->stopping, true);
	pthread_cond_broadcast(&c->wake);
	pthread_mutex_unlock(&c->lock);
	for (int i = 0; i < c->worker_count; ++i)
		pthread_join(c->threads[i], NULL);
	pthread_cond_destroy(&c->wake);
	pthread_cond_destroy(&c->finished);
	pthread_mutex_destroy(&c->lock);
	bpi_free_uncounted(c, sizeof *c);
}

static void crew_key_create(void) { (void)pthread_key_create(&crew_key, crew_stop); }

/// The calling thread's crew, made on first use; NULL when there is no memory.
static crew *crew_of_caller(void)
{
	if (own_crew)
		return own_crew;
	if (pthread_once(&crew_key_once, crew_key_create) != 0)
		return NULL;
	crew *c = bpi_alloc_uncounted(sizeof *c);
	if (!c)
		return NULL;
	*c = (crew){0};
	if (pthread_mutex_init(&c->lock, NULL) != 0) {
		bpi_free_uncounted(c, sizeof *c);
		return NULL;
	}
	pthread_cond_init(&c->wake, NULL);
	pthread_cond_init(&c->finished, NULL);
	// The key's destructor stops the crew when this thread exits.
	if (pthread_setspecific(crew_key, c) != 0) {
		crew_stop(c);
		return NULL;
	}
	return own_crew = c;
}

bp_status bpi_workers_reserve(int threads, bpi_team_failure *failure)
{
	BP_ASSERT(threads <= BP_MAX_THREADS);
	if (threads <= 1)
		return BP_OK;
	crew *c = crew_of_caller();
	if (!c) {
		*failure = (bpi_team_failure){threads, 0, ENOMEM};
		return BP_ERR_OUT_OF_MEMORY;
	}
	while (c->worker_count < threads - 1) {
		worker_slot *slot = &c->slots[c->worker_count];
		*slot = (worker_slot){c, c->worker_count, job_of(atomic_load(&c->state))};
		int error = bpi_thread_start(&c->threads[c->worker_count], worker_main, slot);
		if (error) {
			*failure = (bpi_team_failure){threads, c->worker_count, error};
			return BP_ERR_OUT_OF_MEMORY;
		}
		++c->worker_count;
	}
	return BP_OK;
}

void bpi_workers_run(uint32_t count, uint32_t grain, int threads, bpi_range_fn *fn, void *ctx)
{
	const uint32_t chunks = bpi_chunk_count(count, grain);
	crew *c = own_crew;
	const int helpers = c ? BP_MIN(threads - 1, c->worker_count) : 0;
	if (helpers <= 0 || chunks <= 1 || inside_chunk) {
		bpi_run_serial(count, grain, fn, ctx);
		return;
	}
	c->fn = fn;
	c->ctx = ctx;
	c->count = count;
	c->grain = grain;
	const uint32_t job = job_of(atomic_load(&c->state)) + 1;
	atomic_store_explicit(&c->chunks[job & 1], chunks, memory_order_relaxed);
	atomic_store_explicit(&c->done, 0, memory_order_relaxed);
	atomic_store_explicit(&c->helpers, helpers, memory_order_relaxed);
	atomic_store(&c->state, (uint64_t)job << 32); // publishes the fields above
	if (atomic_load(&c->sleepers) > 0) {
		pthread_mutex_lock(&c->lock);
		pthread_cond_broadcast(&c->wake);
		pthread_mutex_unlock(&c->lock);
	}
	run_chunks(c, job);
	// Only chunks that a worker has begun are left; wait for those alone.
	if (!spin_until(NULL, 0, &c->done, chunks)) {
		pthread_mutex_lock(&c->lock);
		atomic_store(&c->caller_waiting, true);
		while (atomic_load(&c->done) < chunks)
			pthread_cond_wait(&c->finished, &c->lock);
		atomic_store(&c->caller_waiting, false);
		pthread_mutex_unlock(&c->lock);
	}
}
