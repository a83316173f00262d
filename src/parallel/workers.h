// SPDX-License-Identifier: MIT
// The library's own worker threads: the default way a parallel loop runs.
//
// Why not an OpenMP team: a team ends every loop in a barrier that waits for
// every member, so one worker that the system has not scheduled (its core is
// busy with the host's simulation) stalls the caller for a time slice; and
// libgomp's idle workers spin for ~300,000 pause instructions (several ms) after
// each loop unless the process was started with OMP_WAIT_POLICY=passive. Here the
// caller takes chunks itself and waits only for chunks a worker has begun, and an
// idle worker spins for BPI_WORKERS_SPIN_NS and then sleeps.
#ifndef BP_WORKERS_H
#define BP_WORKERS_H

#include "base/chunks.h"
#include "parallel/threads.h"

/// How long a worker with nothing to do, or a caller waiting for the last chunk,
/// spins before it sleeps. Consecutive loops of one step follow each other within
/// microseconds, so this keeps workers awake through a step and asleep between
/// steps.
#define BPI_WORKERS_SPIN_NS 30000

/// Makes sure the calling thread's workers number at least threads - 1 (the
/// caller is the other one). Workers belong to the calling thread, live until it
/// exits, and are shared by every world it steps. BP_ERR_OUT_OF_MEMORY (and
/// *failure filled) when the system refuses a thread; those that started stay.
bp_status bpi_workers_reserve(int threads, bpi_team_failure *failure);

/// Runs fn over every chunk of [0, count) on the caller and up to threads - 1 of
/// its workers (fewer if fewer started); returns when every chunk is done.
void bpi_workers_run(uint32_t count, uint32_t grain, int threads, bpi_range_fn *fn, void *ctx);

#endif
