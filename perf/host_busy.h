// SPDX-License-Identifier: MIT
// A simulating host's busy core, for the benchmarks that measure the library beside one:
// a thread that spins on arithmetic from host_busy_start until host_busy_stop.
#ifndef BP_PERF_HOST_BUSY_H
#define BP_PERF_HOST_BUSY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct host_busy {
	pthread_t thread;
	atomic_bool stop;
	bool running;
} host_busy;

static void *host_busy_spin(void *arg)
{
	host_busy *h = arg;
	volatile uint64_t sink = 0;
	while (!atomic_load_explicit(&h->stop, memory_order_relaxed))
		sink = sink * 6364136223846793005u + 1;
	return NULL;
}

/// Starts the spinning thread when `busy`; does nothing otherwise.
static inline void host_busy_start(host_busy *h, bool busy)
{
	atomic_init(&h->stop, false);
	h->running = busy && pthread_create(&h->thread, NULL, host_busy_spin, h) == 0;
}

static inline void host_busy_stop(host_busy *h)
{
	if (!h->running)
		return;
	atomic_store(&h->stop, true);
	pthread_join(h->thread, NULL);
	h->running = false;
}

#endif
