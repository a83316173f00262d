// SPDX-License-Identifier: MIT
// bp_perf_scaling_model: what a full grid step of N uniform 3D boxes should take on p threads,
// from what this machine can measure on one. Per stage (build, find, merge):
//   - its loops' serial work, each loop split by its own chunk count: a loop of c chunks on
//     p threads takes ceil(c / p) / c of its time (the loop clock of src/parallel/parallel.h, read
//     while every loop runs inline on the caller through a 64-worker host task system, so
//     the code takes its many-thread paths);
//   - its serial part: the stage's time less its loops';
//   - its memory traffic: bytes per entity and per pair that the stage reads and writes
//     (stated below), over the bandwidth p threads can draw: min(p x one thread's stream
//     bandwidth, measured here, the socket's, assumed).
// T(p) = sum over stages of max(serial + loops on p, bytes / bandwidth(p)), for two sockets:
// a 16-core desktop (2-channel DDR5, 60 GB/s sustained) and a 64-core server (8-channel
// DDR5, 250 GB/s). The same run steps 1- and 2-thread worlds on this machine to check
// the model at p = 2. CSV: model,threads,ms,speedup then the inputs as comment lines.
#define _POSIX_C_SOURCE 200809L // clock_gettime
#include <broadphase/broadphase.h>
#include <bp_scene.h>
#include <stdio.h>
#include <stdlib.h>
#include "base/probes.h"
#include "model.h"
#include "timing.h"

enum { RUNS = 7, STAGES = BPI_STAGE_MERGE + 1 };

/// Bytes a stage reads and writes, per entity and per pair, from the grid's data flow
/// (src/algorithms/cells_build.c, cells_find.c, pairs.c): build reads the bounds twice (statistics,
/// keys: 2 x 24), writes and reads a key and level (6 + 6), the counting sort reads the
/// keys and bounds again and writes a 32-byte record (4 + 24 + 32), and its bucket starts
/// (~1 per entity, 4 + 4); find reads each record about twice (its own row and the rows
/// that scan it) and writes its pairs; merge reads and writes every pair once.
static const double bytes_per_entity[STAGES] = {0, 24 * 2 + 12 + 60 + 8, 64, 0};
static const double bytes_per_pair[STAGES] = {0, 0, 8, 16};
static const char *stage_name[STAGES] = {"prepare", "build", "find", "merge"};

static bp_world *world_of(const bp_scene *scene, bp_executor executor, int threads)
{
	bp_world_def def = bp_world_def_default();
	def.dims = scene->dims;
	def.algorithm = BP_ALGO_GRID;
	def.executor = executor;
	def.thread_count = threads;
	def.task_system = model_inline_tasks();
	def.capacity = scene->count;
	bp_world *w = NULL;
	bp_bounds_arrays bounds = bp_scene_frame_bounds(scene, 0);
	bp_entity_def e = bp_entity_def_default();
	if (bp_world_create(&def, &w) != BP_OK || bp_world_create_entities(w, scene->count, &bounds, &e, NULL) != BP_OK ||
		bp_world_step(w) != BP_OK) { // the first step grows every array
		fprintf(stderr, "bp_perf_scaling_model: cannot make a world of %u entities\n", scene->count);
		bp_world_destroy(w);
		return NULL;
	}
	return w;
}

int main(int argc, char **argv)
{
	bp_gen_def gen = bp_gen_def_default();
	gen.n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000000u;
	gen.dims = 3;
	const char *csv_path = argc > 2 ? argv[2] : NULL;
	bp_scene *scene = NULL;
	if (gen.n == 0 || bp_scene_generate(&gen, &scene) != BP_OK) {
		fprintf(stderr, "usage: bp_perf_scaling_model [N] [CSV]\n");
		return 1;
	}
	bp_world *clocked = world_of(scene, BP_EXECUTOR_HOST, 0), *one = world_of(scene, BP_EXECUTOR_WORKERS, 1),
		 *two = world_of(scene, BP_EXECUTOR_WORKERS, 2);
	if (!clocked || !one || !two)
		return 2;

	// Interleaved, so load hits all three alike.
	double stage_ms[STAGES][RUNS], loop_ms[STAGES][RUNS], on_ms[STAGES][BPI_LOOP_CLOCK_WIDTHS][RUNS];
	double one_ms[RUNS], two_ms[RUNS], pairs = 0;
	for (int r = 0; r < RUNS; ++r) {
		bpi_loop_clock clock;
		bpi_loop_clock_use(&clock);
		bp_world_step(clocked);
		bpi_loop_clock_use(NULL);
		bp_frame_stats s = bp_world_stats(clocked);
		const uint64_t ns[STAGES] = {s.ns_prepare, s.ns_build, s.ns_find, s.ns_merge};
		for (int k = 0; k < STAGES; ++k) {
			stage_ms[k][r] = (double)ns[k] * 1e-6;
			loop_ms[k][r] = (double)clock.loops[k] * 1e-6;
			for (int w = 0; w < BPI_LOOP_CLOCK_WIDTHS; ++w)
				on_ms[k][w][r] = clock.on[k][w] * 1e-6;
		}
		pairs = (double)s.pair_count;
		double t0 = now_ms();
		bp_world_step(one);
		one_ms[r] = now_ms() - t0;
		t0 = now_ms();
		bp_world_step(two);
		two_ms[r] = now_ms() - t0;
	}
	const double bw1 = model_stream_gb_per_s();

	model_stage stages[STAGES];
	for (int k = 0; k < STAGES; ++k) {
		stages[k] = (model_stage){.name = stage_name[k]};
		double stage = median_sorting(stage_ms[k], RUNS);
		stages[k].loops[0] = median_sorting(loop_ms[k], RUNS);
		for (int w = 0; w < BPI_LOOP_CLOCK_WIDTHS; ++w)
			stages[k].loops[w + 1] = median_sorting(on_ms[k][w], RUNS);
		stages[k].serial = stage > stages[k].loops[0] ? stage - stages[k].loops[0] : 0;
		stages[k].traffic_mb = (bytes_per_entity[k] * gen.n + bytes_per_pair[k] * pairs) * 1e-6;
	}

	FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
	if (csv)
		fprintf(csv, "model,threads,ms,speedup\n");
	printf("grid step model, N=%u, %.0f pairs, one thread's stream bandwidth %.1f GB/s\n", gen.n, pairs, bw1);
	model_report(stages, STAGES, bw1, "", csv);
	double measured1 = median_sorting(one_ms, RUNS), measured2 = median_sorting(two_ms, RUNS);
	printf("  this machine, measured: 1 thread %.2f ms, 2 threads %.2f ms (%.2fx)\n", measured1, measured2,
		measured1 / measured2);
	if (csv) {
		fprintf(csv, "measured,1,%.3f,1.000\nmeasured,2,%.3f,%.3f\n", measured1, measured2, measured1 / measured2);
		fprintf(csv, "# inputs: N=%u pairs=%.0f stream_gb_per_s=%.2f runs=%d\n", gen.n, pairs, bw1, RUNS);
		for (int k = 0; k < STAGES; ++k)
			fprintf(csv, "# %s: serial_ms=%.3f loops_ms=%.3f bytes_per_entity=%.0f bytes_per_pair=%.0f\n",
				stage_name[k], stages[k].serial, stages[k].loops[0], bytes_per_entity[k], bytes_per_pair[k]);
		for (int m = 0; m < MODEL_SOCKETS; ++m)
			fprintf(csv, "# socket %s: %.0f GB/s\n", model_sockets[m].name, model_sockets[m].gb_per_s);
		fclose(csv);
	}
	bp_world_destroy(clocked);
	bp_world_destroy(one);
	bp_world_destroy(two);
	bp_scene_destroy(scene);
	return 0;
}
