// SPDX-License-Identifier: MIT
// bp_perf: times pair finding over generated scenes, algorithms, sizes and thread
// counts, writes CSV, and reports the sap ratios (against a qsort baseline and 1 vs
// 2 threads) and the coherence measurement on a moving scene. See perf/README.md.
#define _POSIX_C_SOURCE 200809L // clock_gettime
#include <broadphase/broadphase.h>
#include <bp_scene.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sweep_qsort.h"
#include "timing.h"

#define MAX_LIST 16
#define BRUTE_MAX_N 20000
// The qsort baseline sweeps one axis: uniform 3D at 1e6 is 7e9 tests (minutes).
#define BASELINE_MAX_N 100000

typedef struct scene_spec {
	const char *name; ///< distribution name
	int dims;
} scene_spec;

typedef struct options {
	const char *algos[MAX_LIST];
	int algo_count;
	scene_spec scenes[MAX_LIST];
	int scene_count;
	uint32_t n[MAX_LIST];
	int n_count;
	int threads[MAX_LIST];
	int thread_count;
	int runs;
	const char *csv;
	bool quick;
	bool report;
	bool coherence;
} options;

typedef struct timing {
	double median, min;
	size_t pairs;
} timing;

static timing summarize(double *ms, int runs, size_t pairs)
{
	qsort(ms, (size_t)runs, sizeof *ms, compare_double);
	return (timing){runs % 2 ? ms[runs / 2] : 0.5 * (ms[runs / 2 - 1] + ms[runs / 2]), ms[0], pairs};
}

static bp_scene *generate(const scene_spec *spec, uint32_t n)
{
	bp_gen_def def = bp_gen_def_default();
	if (bp_distribution_from_name(spec->name, &def.dist) != BP_OK) {
		fprintf(stderr, "bp_perf: unknown scene %s\n", spec->name);
		return NULL;
	}
	def.n = n;
	def.dims = spec->dims;
	def.seed = 1;
	bp_scene *scene = NULL;
	bp_status status = bp_scene_generate(&def, &scene);
	if (status != BP_OK) {
		fprintf(stderr, "bp_perf: generating %s n=%u: %s\n", spec->name, n, bp_status_string(status));
		return NULL;
	}
	return scene;
}

static bp_world *world_of(const bp_scene *scene, bp_algorithm algorithm, int threads)
{
	bp_world_def def = bp_world_def_default();
	def.dims = scene->dims;
	def.capacity = scene->count;
	def.algorithm = algorithm;
	def.thread_count = threads;
	bp_world *w = NULL;
	if (bp_world_create(&def, &w) != BP_OK)
		return NULL;
	bp_bounds_arrays bounds = bp_scene_frame_bounds(scene, 0);
	bp_entity_def common = bp_entity_def_default();
	if (bp_world_create_entities(w, scene->count, &bounds, &common, NULL) != BP_OK) {
		fprintf(stderr, "bp_perf: %s\n", bp_world_last_error(w));
		bp_world_destroy(w);
		return NULL;
	}
	return w;
}

// Times R steps of one library algorithm. Coherence is off: each step sorts from
// scratch, as a scene that changed completely would (coherence is measured apart).
// `debug_flags` adds to that (BP_DEBUG_NO_SIMD for sap_scalar).
static bool time_library(const bp_scene *scene, bp_algorithm algorithm, int threads, uint32_t debug_flags,
	int runs, timing *out)
{
	bp_world *w = world_of(scene, algorithm, threads);
	if (!w)
		return false;
	double ms[64];
	size_t pairs = 0;
	bool ok = bp_world_set_debug_flags(w, BP_DEBUG_NO_COHERENCE | debug_flags) == BP_OK &&
		  bp_world_step(w) == BP_OK; // warm-up: scratch allocated, pages touched
	for (int r = 0; ok && r < runs; ++r) {
		double t0 = now_ms();
		ok = bp_world_step(w) == BP_OK;
		ms[r] = now_ms() - t0;
		bp_world_pairs(w, &pairs);
	}
	if (!ok)
		fprintf(stderr, "bp_perf: step failed: %s\n", bp_world_last_error(w));
	bp_world_destroy(w);
	*out = summarize(ms, runs, pairs);
	return ok;
}

static bool time_baseline(const bp_scene *scene, int runs, timing *out)
{
	// The baseline takes seconds at boxprune n = 1e5, so a single run gets no warm-up.
	bp_bounds_arrays bounds = bp_scene_frame_bounds(scene, 0);
	bp_pair *pairs = NULL;
	size_t capacity = 0, count = 0;
	double ms[64];
	if (runs > 1)
		count = perf_sweep_qsort(&bounds, scene->count, scene->dims, &pairs, &capacity);
	for (int r = 0; r < runs && count != (size_t)-1; ++r) {
		double t0 = now_ms();
		count = perf_sweep_qsort(&bounds, scene->count, scene->dims, &pairs, &capacity);
		ms[r] = now_ms() - t0;
	}
	free(pairs);
	*out = summarize(ms, runs, count);
	return count != (size_t)-1;
}

static bool time_algo(const char *algo, const bp_scene *scene, int threads, int runs, timing *out)
{
	if (strcmp(algo, "sweep_qsort") == 0)
		return threads == 1 && scene->count <= BASELINE_MAX_N && time_baseline(scene, runs, out);
	if (strcmp(algo, "sap_scalar") == 0)
		return time_library(scene, BP_ALGO_SAP, threads, BP_DEBUG_NO_SIMD, runs, out);
	bp_algorithm id;
	if (bp_algorithm_from_name(algo, &id) != BP_OK) {
		fprintf(stderr, "bp_perf: algorithm %s is not built in\n", algo);
		return false;
	}
	if (id == BP_ALGO_BRUTE && scene->count > BRUTE_MAX_N)
		return false;
	return time_library(scene, id, threads, 0, runs, out);
}

// The sweep over scenes x n x algorithms x threads, one CSV row each.
static void run_table(const options *o, FILE *csv)
{
	for (int s = 0; s < o->scene_count; ++s) {
		for (int k = 0; k < o->n_count; ++k) {
			bp_scene *scene = generate(&o->scenes[s], o->n[k]);
			if (!scene)
				continue;
			for (int a = 0; a < o->algo_count; ++a) {
				for (int t = 0; t < o->thread_count; ++t) {
					timing tm;
					if (!time_algo(o->algos[a], scene, o->threads[t], o->runs, &tm))
						continue;
					const char *row = "%s,%s,%d,%u,%d,%.4f,%.4f,%zu\n";
					printf(row, o->scenes[s].name, o->algos[a], scene->dims, scene->count, o->threads[t],
						tm.median, tm.min, tm.pairs);
					if (csv)
						fprintf(csv, row, o->scenes[s].name, o->algos[a], scene->dims, scene->count,
							o->threads[t], tm.median, tm.min, tm.pairs);
					fflush(stdout);
				}
			}
			bp_scene_destroy(scene);
		}
	}
}

// boxprune n=100000: baseline / sap 1 thread, sap 1 / 2 threads, AVX2 vs scalar.
static void run_report(int runs, int baseline_runs)
{
	const scene_spec spec = {"boxprune", 3};
	bp_scene *scene = generate(&spec, 100000);
	if (!scene)
		return;
	timing base, sap1, sap2, scalar1;
	if (time_baseline(scene, baseline_runs, &base) && time_algo("sap", scene, 1, runs, &sap1) &&
		time_algo("sap", scene, 2, runs, &sap2) && time_algo("sap_scalar", scene, 1, runs, &scalar1)) {
		printf("report boxprune n=100000 pairs=%zu (baseline %zu): sweep_qsort %.3f ms, sap 1t %.3f ms, "
		       "sap 2t %.3f ms, sap scalar 1t %.3f ms\n",
			sap1.pairs, base.pairs, base.median, sap1.median, sap2.median, scalar1.median);
		printf("report ratio baseline/sap_1t = %.1fx (target >= 27)\n", base.median / sap1.median);
		printf("report ratio sap_1t/sap_2t = %.2fx (target >= 1.7)\n", sap1.median / sap2.median);
		printf("report ratio sap_scalar/sap_avx2 (1t) = %.2fx\n", scalar1.median / sap1.median);
	}
	bp_scene_destroy(scene);
}

// Moving scene: every box moves by up to 5% of its extent per frame (a random
// walk). Two worlds step the same frames, interleaved so that machine noise hits
// both alike: one reusing last frame's order, one sorting from scratch.
static void run_coherence(const scene_spec *spec, uint32_t n, int threads, int frames)
{
	bp_scene *scene = generate(spec, n);
	if (!scene)
		return;
	const int dims = scene->dims;
	float *lo[3] = {0}, *hi[3] = {0};
	for (int k = 0; k < dims; ++k) {
		lo[k] = malloc(n * sizeof(float));
		hi[k] = malloc(n * sizeof(float));
		memcpy(lo[k], scene->min[k], n * sizeof(float));
		memcpy(hi[k], scene->max[k], n * sizeof(float));
	}
	bp_world *w[2] = {world_of(scene, BP_ALGO_SAP, threads), world_of(scene, BP_ALGO_SAP, threads)};
	if (w[1])
		bp_world_set_debug_flags(w[1], BP_DEBUG_NO_COHERENCE);
	double *step_ms[2], *build_ms[2];
	size_t pairs[2] = {0, 0};
	for (int m = 0; m < 2; ++m) {
		step_ms[m] = malloc((size_t)frames * sizeof(double));
		build_ms[m] = malloc((size_t)frames * sizeof(double));
	}
	uint64_t rng = 12345;
	for (int f = -1; f < frames && w[0] && w[1]; ++f) {
		if (f >= 0) {
			for (int k = 0; k < dims; ++k) {
				for (uint32_t i = 0; i < n; ++i) {
					rng = bp_splitmix64(rng);
					float u = (float)(rng >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
					float d = 0.05f * u * (hi[k][i] - lo[k][i]);
					lo[k][i] += d;
					hi[k][i] += d;
				}
			}
		}
		bp_bounds_arrays b = {lo[0], lo[1], dims == 3 ? lo[2] : NULL, hi[0], hi[1], dims == 3 ? hi[2] : NULL};
		for (int m = 0; m < 2; ++m) { // m = 0: reuse order, m = 1: full sort
			bp_entities_set_bounds(w[m], bp_target_range(0, n), &b);
			double t0 = now_ms();
			bp_world_step(w[m]);
			if (f >= 0) {
				step_ms[m][f] = now_ms() - t0;
				build_ms[m][f] = (double)bp_world_stats(w[m]).ns_build * 1e-6;
			}
			bp_world_pairs(w[m], &pairs[m]);
		}
	}
	for (int m = 0; m < 2 && w[0] && w[1]; ++m) {
		timing step = summarize(step_ms[m], frames, pairs[m]), build = summarize(build_ms[m], frames, pairs[m]);
		printf("coherence %s dims=%d n=%u threads=%d %-11s: step median %.3f ms, sort+copy median %.3f ms "
		       "(min %.3f), pairs %zu\n",
			spec->name, dims, n, threads, m == 0 ? "reuse order" : "full sort", step.median, build.median,
			build.min, pairs[m]);
	}
	for (int m = 0; m < 2; ++m) {
		bp_world_destroy(w[m]);
		free(step_ms[m]);
		free(build_ms[m]);
	}
	for (int k = 0; k < dims; ++k) {
		free(lo[k]);
		free(hi[k]);
	}
	bp_scene_destroy(scene);
}

static int split(char *text, const char **out)
{
	int count = 0;
	for (char *tok = strtok(text, ","); tok && count < MAX_LIST; tok = strtok(NULL, ","))
		out[count++] = tok;
	return count;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bp_perf [--algos sap,brute,sweep_qsort,sap_scalar] [--scenes uniform:3,line:2,...]\n"
		"               [--n 1000,10000] [--threads 1,2] [--runs R] [--csv FILE] [--quick]\n"
		"               [--no-table] [--no-report] [--no-coherence]\n");
}

int main(int argc, char **argv)
{
	options o = {.runs = 5, .report = true, .coherence = true};
	bool table = true;
	char *algos = NULL, *scenes = NULL, *ns = NULL, *threads = NULL;
	for (int i = 1; i < argc; ++i) {
		const char *arg = argv[i];
		const char *value = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(arg, "--quick") == 0) {
			o.quick = true;
		} else if (strcmp(arg, "--no-table") == 0) {
			table = false;
		} else if (strcmp(arg, "--no-report") == 0) {
			o.report = false;
		} else if (strcmp(arg, "--no-coherence") == 0) {
			o.coherence = false;
		} else if (value && strcmp(arg, "--algos") == 0) {
			algos = argv[++i];
		} else if (value && strcmp(arg, "--scenes") == 0) {
			scenes = argv[++i];
		} else if (value && strcmp(arg, "--n") == 0) {
			ns = argv[++i];
		} else if (value && strcmp(arg, "--threads") == 0) {
			threads = argv[++i];
		} else if (value && strcmp(arg, "--runs") == 0) {
			o.runs = atoi(argv[++i]);
		} else if (value && strcmp(arg, "--csv") == 0) {
			o.csv = argv[++i];
		} else {
			usage();
			return 1;
		}
	}
	if (o.quick && o.runs == 5)
		o.runs = 3;
	if (o.runs < 1 || o.runs > 64) {
		fprintf(stderr, "bp_perf: --runs must be 1..64\n");
		return 1;
	}
	char default_algos[] = "sap,brute,sweep_qsort";
	o.algo_count = split(algos ? algos : default_algos, o.algos);
	char default_scenes[] = "uniform:3,uniform:2,clustered:3,mixed:3,line:2,boxprune:3";
	const char *scene_words[MAX_LIST];
	o.scene_count = split(scenes ? scenes : default_scenes, scene_words);
	for (int s = 0; s < o.scene_count; ++s) {
		char *colon = strchr(scene_words[s], ':');
		o.scenes[s] = (scene_spec){scene_words[s], 3};
		if (colon) {
			*colon = '\0';
			o.scenes[s].dims = atoi(colon + 1);
		}
	}
	char default_quick_n[] = "1000,10000", default_n[] = "1000,10000,100000,1000000";
	const char *words[MAX_LIST];
	o.n_count = split(ns ? ns : o.quick ? default_quick_n : default_n, words);
	for (int k = 0; k < o.n_count; ++k)
		o.n[k] = (uint32_t)strtoul(words[k], NULL, 10);
	char default_threads[] = "1,2";
	o.thread_count = split(threads ? threads : default_threads, words);
	for (int t = 0; t < o.thread_count; ++t)
		o.threads[t] = atoi(words[t]);

	FILE *csv = NULL;
	if (o.csv) {
		csv = fopen(o.csv, "w");
		if (!csv) {
			fprintf(stderr, "bp_perf: cannot write %s\n", o.csv);
			return 3;
		}
		fprintf(csv, "scene,algo,dims,n,threads,ms_median,ms_min,pairs\n");
	}
	printf("scene,algo,dims,n,threads,ms_median,ms_min,pairs\n");
	if (table)
		run_table(&o, csv);
	if (csv)
		fclose(csv);
	if (o.report)
		run_report(o.quick ? 3 : o.runs, o.quick ? 1 : o.runs);
	if (o.coherence) {
		const uint32_t n = o.quick ? 100000 : 1000000;
		const scene_spec uniform3 = {"uniform", 3}, uniform2 = {"uniform", 2};
		for (int t = 0; t < o.thread_count; ++t) {
			run_coherence(&uniform3, n, o.threads[t], o.quick ? 5 : 20);
			run_coherence(&uniform2, n, o.threads[t], o.quick ? 5 : 20);
		}
	}
	return 0;
}
