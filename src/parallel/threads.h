// SPDX-License-Identifier: MIT
// Starting threads without ever ending the process: the frame builder, and the check that a
// parallel region's team can start before OpenMP is asked to start it.
#ifndef BP_THREADS_H
#define BP_THREADS_H

#include <pthread.h>
#include "base/core.h"

/// The function the library starts its threads with: pthread_create, or a
/// test's stand-in. Returns 0 or an error number, as pthread_create.
typedef int bpi_thread_creator(pthread_t *thread, void *(*fn)(void *), void *arg);

/// Starts a joinable thread running fn(arg) with default attributes. Returns 0
/// or the error number of the failure (EAGAIN when the system is out of
/// threads or of address space for their stacks).
int bpi_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg);

/// Test hook: every thread the library starts itself goes through `creator`
/// (NULL restores pthread_create). Warning: call only while no library call runs.
void bpi_thread_set_creator(bpi_thread_creator *creator);

/// Why a team could not start: it wanted `wanted` threads (the caller's and
/// wanted - 1 workers), the system refused after `started` workers with `error`.
typedef struct bpi_team_failure {
	int wanted;
	int started;
	int error;
} bpi_team_failure;

/// BP_OK when the calling thread can run parallel regions of `threads` threads.
/// libgomp ends the process (gomp_fatal, exit 1) when it cannot create a worker,
/// so the workers are first started and joined here, all at once, with the
/// stacks libgomp gives them (the default ones, unless OMP_STACKSIZE is set).
/// libgomp keeps a team's workers per calling thread, so the check is made once
/// per thread for each new largest count (a few microseconds per worker). On
/// failure returns BP_ERR_OUT_OF_MEMORY and fills *failure; nothing is kept.
bp_status bpi_team_check(int threads, bpi_team_failure *failure);

#endif
