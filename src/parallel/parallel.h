// SPDX-License-Identifier: MIT
// The one parallel seam: fixed chunks of a range, run on the executor the step chose (the
// library's workers by default, an OpenMP team, or the host's task system).
#ifndef BP_PARALLEL_H
#define BP_PARALLEL_H

#include "base/chunks.h"
#include <broadphase/types.h>

/// Where a step's loops run: a world's (or a submitted frame's) choice.
typedef struct bpi_executor {
	bp_executor kind;
	bp_task_system tasks; ///< BP_EXECUTOR_HOST only
} bpi_executor;

/// Runs fn over every chunk of [0, count) on up to `threads` threads of the
/// calling thread's bound executor (bpi_executor_enter) and returns when all are
/// done. Chunks may run in any order and at once. Without a binding, or from
/// inside a chunk, the chunks run on the calling thread alone.
void bpi_parallel_for(uint32_t count, uint32_t grain, int threads, bpi_range_fn *fn, void *ctx);

/// The loop clock (perf/scaling_model.c, perf/frame_model.c): while started, every loop run
/// outside a chunk adds its wall time to the account of the stage the step is in, and what it
/// would take on 2, 4, 8, 16 and 64 threads given its chunks alone (time x ceil(chunks / p) /
/// chunks); each stage's wall time is kept too, from the switch into it to the next switch.
/// What a stage spends outside its loops is its serial part. One clock for the process, not
/// per thread, so a frame's builder thread runs on the clock its host started: it serves one
/// stepping thread at a time.
enum {
	BPI_LOOP_CLOCK_SORT = 4,  ///< the view's pair sort; 0-3 are the step's BPI_STAGE_* of probes.h
	BPI_LOOP_CLOCK_EVENTS,    ///< the view's pair events
	BPI_LOOP_CLOCK_HIERARCHY, ///< the view's query hierarchy
	BPI_LOOP_CLOCK_SNAPSHOT,  ///< the copy on submit
	BPI_LOOP_CLOCK_CHANGES,   ///< the builder's comparison of two snapshots
	BPI_LOOP_CLOCK_STAGES
};
#define BPI_LOOP_CLOCK_WIDTHS 5
typedef struct bpi_loop_clock {
	uint64_t loops[BPI_LOOP_CLOCK_STAGES]; ///< ns in loops, run as they ran
	double on[BPI_LOOP_CLOCK_STAGES][BPI_LOOP_CLOCK_WIDTHS]; ///< ns the same loops take on p threads
	/// ns between switches into each stage and out; prepare, the stage a clock starts in and
	/// returns to after merge and after the view, also holds the time outside any step.
	uint64_t ns[BPI_LOOP_CLOCK_STAGES];
	int stage;      ///< the current stage
	uint64_t since; ///< when it began
} bpi_loop_clock;
/// The thread count of column w of bpi_loop_clock.on: 2, 4, 8, 16, 64.
int bpi_loop_clock_width(int w);
/// Starts (clock) or stops (NULL) the loop clock; the clock is zeroed and starts in prepare.
void bpi_loop_clock_use(bpi_loop_clock *clock);
/// The stage the stepping thread enters, for the clock.
void bpi_loop_clock_stage(int stage);

/// Threads a step uses for a requested count in [0, BP_MAX_THREADS] (0 = all
/// cores, at most BP_MAX_THREADS) on executor `e`; a host task system decides
/// its own count.
int bpi_resolve_threads(const bpi_executor *e, int requested);

/// Binds `e` to the calling thread for the loops it runs until
/// bpi_executor_leave, after making sure `threads` threads can run: the
/// library's workers are started, an OpenMP team checked (bpi_team_check). On
/// failure nothing is bound, *failure says why, and BP_ERR_OUT_OF_MEMORY.
typedef struct bpi_team_failure bpi_team_failure;
bp_status bpi_executor_enter(const bpi_executor *e, int threads, bpi_team_failure *failure);
void bpi_executor_leave(void);

#endif
