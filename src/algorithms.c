// SPDX-License-Identifier: MIT
// The algorithm registry: the table of implementations, their names, and AUTO's choice.
#include "index.h"

#include <stdlib.h>
#include <string.h>

static const bpi_algorithm *const algorithms[BP_ALGO_COUNT] = {
	[BP_ALGO_BRUTE] = &bpi_brute_algorithm,
	[BP_ALGO_GRID] = &bpi_grid_algorithm, [BP_ALGO_HASH] = &bpi_hash_algorithm,
	[BP_ALGO_SAP] = &bpi_sap_algorithm,
	[BP_ALGO_BUCKETS] = &bpi_buckets_algorithm,
	[BP_ALGO_CLOSEST] = &bpi_closest_algorithm,
	[BP_ALGO_QUADTREE] = &bpi_quadtree_algorithm,
	[BP_ALGO_SHIFTS] = &bpi_shifts_algorithm,
};

const bpi_algorithm *bpi_algorithm_get(bp_algorithm id)
{
	return (unsigned)id < BP_ALGO_COUNT ? algorithms[id] : NULL;
}

const char *bp_algorithm_name(bp_algorithm algorithm)
{
	if (algorithm == BP_ALGO_AUTO)
		return "auto";
	const bpi_algorithm *a = bpi_algorithm_get(algorithm);
	return a ? a->name : "?";
}

bool bp_algorithm_available(bp_algorithm algorithm)
{
	return algorithm == BP_ALGO_AUTO || bpi_algorithm_get(algorithm) != NULL;
}

bp_status bp_algorithm_from_name(const char *name, bp_algorithm *out)
{
	if (!name || !out)
		return BP_ERR_INVALID_ARGUMENT;
	for (int i = 0; i < BP_ALGO_COUNT; ++i) {
		if (bp_algorithm_available((bp_algorithm)i) && strcmp(name, bp_algorithm_name((bp_algorithm)i)) == 0) {
			*out = (bp_algorithm)i;
			return BP_OK;
		}
	}
	return BP_ERR_UNKNOWN_ALGORITHM;
}

// AUTO: brute for tiny scenes, sap for small ones, grid above. Measured after the grid's
// finder and build were sped up (perf/results/2core/auto.csv: bp_perf, 1 thread, medians
// of 5), sap's time over grid's:
//   n=1e4  uniform3 0.94 | uniform2 0.80 | clustered3 1.41 | mixed3 1.31 | line2 0.69 | boxprune 0.86
//   n=2e4  uniform3 0.94 | uniform2 0.81 | clustered3 1.40 | mixed3 1.20 | line2 0.64 | boxprune 1.05
//   n=1e5  uniform3 1.20 | uniform2 0.97 | clustered3 1.58 | mixed3 1.66 | line2 0.75 | boxprune 1.28
//   n=1e6  uniform3 1.53 | uniform2 1.38 | clustered3 1.68 | mixed3 1.82 | line2 1.22 | boxprune 1.29
// Up to ~2e4 the two are within ~30% either way (below 1e4 the ratios are noise-bound),
// and sap needs no cell setup; above, grid wins by up to 1.8x except on line2 (one long
// axis) up to 1e5. Boxprune, whose boxes are ~2x the spacing of their centres, went to sap
// by a density test from a sample of the scene while grid took 2969 ms at 1e6 against
// sap's 2251; grid now takes 1372 against 1776, so the test is gone. grid beats hash on
// every generated scene (hash pays a per-candidate bucket check), so hash is for unbounded
// worlds chosen by name.
#define AUTO_BRUTE_MAX 64
#define AUTO_SAP_MAX 20000
bp_algorithm bpi_algorithm_choose(const bpi_scene *scene)
{
	if (scene->count <= AUTO_BRUTE_MAX)
		return BP_ALGO_BRUTE;
	if (scene->count <= AUTO_SAP_MAX && bpi_algorithm_get(BP_ALGO_SAP))
		return BP_ALGO_SAP;
	if (bpi_algorithm_get(BP_ALGO_GRID))
		return BP_ALGO_GRID;
	return bpi_algorithm_get(BP_ALGO_SAP) ? BP_ALGO_SAP : BP_ALGO_BRUTE;
}
