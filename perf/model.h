// SPDX-License-Identifier: MIT
// What bp_perf_scaling_model and bp_perf_frame_model share: a host task system that runs every
// task inline, so the code takes its many-thread paths while the loop clock
// (src/parallel/parallel.h) times each loop alone; one thread's stream bandwidth; the two
// sockets; and a stage's time on p threads, max(serial + loops on p, traffic / bandwidth(p)).
#ifndef BP_PERF_MODEL_H
#define BP_PERF_MODEL_H

#include <broadphase/broadphase.h>
#include <stdbool.h>
#include <stdio.h>

#include "parallel/parallel.h"

enum { MODEL_WIDTHS = BPI_LOOP_CLOCK_WIDTHS + 1, MODEL_SOCKETS = 2 };

typedef struct model_socket {
	const char *name;
	double gb_per_s; ///< sustained bandwidth of the whole socket
} model_socket;

/// A 16-core desktop (2-channel DDR5, 60 GB/s) and a 64-core server (8-channel DDR5, 250 GB/s).
extern const model_socket model_sockets[MODEL_SOCKETS];

/// One stage of the model, in ms and MB.
typedef struct model_stage {
	const char *name;
	double serial;               ///< the stage's time less its loops'
	double loops[MODEL_WIDTHS];  ///< its loops on 1, 2, 4, 8, 16, 64 threads
	double traffic_mb;           ///< bytes read and written
} model_stage;

/// The thread count of model column w: 1, 2, 4, 8, 16, 64.
int model_threads(int w);
/// Every chunk inline on the caller: a 64-worker host whose tasks run where they are enqueued.
bp_task_system model_inline_tasks(void);
/// One thread's stream bandwidth, GB/s: a 256 MB copy, read plus write, median of 5.
double model_stream_gb_per_s(void);
/// A stage on column w's threads; *memory says the traffic bounds it.
double model_stage_ms(const model_stage *s, int w, const model_socket *socket, double bw1, bool *memory);
/// The sum of the stages on column w's threads.
double model_frame_ms(const model_stage *stages, int count, int w, const model_socket *socket, double bw1);
/// Prints each stage's inputs, then per socket and thread count the predicted frame and each
/// stage's share, and names the stage that limits past 16 threads; CSV rows
/// `<prefix><socket>,threads,ms,speedup` to csv when it is not NULL.
void model_report(const model_stage *stages, int count, double bw1, const char *prefix, FILE *csv);

#endif
