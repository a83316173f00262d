// SPDX-License-Identifier: MIT
// The threads the library starts itself, each failure returned as a status (threads.h).
#include "parallel/threads.h"

#include <broadphase/types.h>
#include <stdatomic.h>

static int system_creator(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	return pthread_create(thread, NULL, fn, arg);
}

// Atomic only so that a test swapping it is no data race with a builder thread.
static _Atomic(bpi_thread_creator *) creator = system_creator;

void bpi_thread_set_creator(bpi_thread_creator *replacement)
{
	atomic_store_explicit(&creator, replacement ? replacement : system_creator, memory_order_relaxed);
}

int bpi_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	return atomic_load_explicit(&creator, memory_order_relaxed)(thread, fn, arg);
}

static void *return_at_once(void *arg) { return arg; }

// The largest team this thread has started (or checked). A thread that never ran
// a region has only itself.
static _Thread_local int team_ready = 1;

bp_status bpi_team_check(int threads, bpi_team_failure *failure)
{
	BP_ASSERT(threads <= BP_MAX_THREADS);
	if (threads <= team_ready)
		return BP_OK;
	// Every worker at once: an exited worker keeps its stack until joined, so the
	// address space they need is taken together, as the team's will be.
	pthread_t workers[BP_MAX_THREADS];
	int started = 0, error = 0;
	while (started < threads - 1 && (error = bpi_thread_start(&workers[started], return_at_once, NULL)) == 0)
		++started;
	for (int i = 0; i < started; ++i)
		pthread_join(workers[i], NULL);
	if (error) {
		*failure = (bpi_team_failure){threads, started, error};
		return BP_ERR_OUT_OF_MEMORY;
	}
	team_ready = threads;
	return BP_OK;
}
