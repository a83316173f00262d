// SPDX-License-Identifier: MIT
// The algorithm registry: the table of implementations, their names, and AUTO's choice.
#include "index.h"
#include "sort.h"

#include <math.h>
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

// AUTO: brute for tiny scenes, sap for small scenes and for scenes whose boxes
// are large next to their spacing, grid otherwise. Statistics come from an
// evenly strided sample of up to 1024 entities (microseconds at any n): the
// bounding box of the centres and the median of the boxes' largest extents.
// Measured (perf/results/2core/{sap,cells}.csv: 1 thread, medians of 5, quiet
// machine), ms:
//   n=1e4  uniform3 sap 1.26 grid 1.15 | uniform2 0.80 0.81 | clustered3 1.77 2.39
//          mixed3 1.49 1.28 | line2 0.69 0.79 | boxprune 0.97 1.19
//   n=1e5  uniform3 sap 11.8 grid 10.7 | uniform2 8.5 6.8 | clustered3 24.3 21.8
//          mixed3 18.6 13.1 | line2 8.2 6.8 | boxprune 32.7 38.1
//   n=1e6  uniform3 sap 246 grid 153 | uniform2 155 80 | clustered3 321 185
//          mixed3 311 152 | line2 153 79 | boxprune 2251 2969
// Below ~2e4 the two are within 20% either way, and sap needs no cell setup;
// above, grid wins by up to 2x except on boxprune, whose boxes are ~2x the mean
// spacing of their centres (uniform: 0.9, mixed: 0.7): there cells hold many
// boxes and each spans several, while sap's regions still prune. grid beats hash
// on every generated scene (hash pays a per-candidate bucket check), so hash is
// for unbounded worlds chosen by name.
#define AUTO_BRUTE_MAX 64
#define AUTO_SAP_MAX 20000
#define AUTO_SAMPLE 1024
/// Median extent over mean centre spacing above which sap wins at any n.
#define AUTO_DENSE_RATIO 1.5
bp_algorithm bpi_algorithm_choose(const bpi_scene *scene)
{
	if (scene->count <= AUTO_BRUTE_MAX)
		return BP_ALGO_BRUTE;
	// Up to AUTO_SAP_MAX sap wins whatever the sample says: skip taking it (an
	// incremental step runs AUTO on its few active entities every step).
	if (scene->count <= AUTO_SAP_MAX && bpi_algorithm_get(BP_ALGO_SAP))
		return BP_ALGO_SAP;
	float extent[AUTO_SAMPLE], lo[3], hi[3];
	uint32_t step = scene->count / AUTO_SAMPLE + 1, m = 0;
	for (int axis = 0; axis < 3; ++axis) {
		lo[axis] = 1e38f;
		hi[axis] = -1e38f;
	}
	for (uint32_t i = 0; i < scene->count && m < AUTO_SAMPLE; i += step) {
		float e = 0;
		for (int axis = 0; axis < scene->dims; ++axis) {
			float a = scene->min[axis][i], b = scene->max[axis][i];
			float centre = a * 0.5f + b * 0.5f;
			lo[axis] = BP_MIN(lo[axis], centre);
			hi[axis] = BP_MAX(hi[axis], centre);
			e = BP_MAX(e, b - a);
		}
		extent[m++] = e;
	}
	float median = bpi_select_float(extent, m, m / 2);
	// Mean spacing of centres: the side of the volume per entity, each axis at
	// least one median extent wide so a flat or point-like scene stays finite.
	double volume = 1.0;
	for (int axis = 0; axis < scene->dims; ++axis)
		volume *= BP_MAX((double)hi[axis] - lo[axis], (double)median);
	double spacing = pow(volume / scene->count, 1.0 / scene->dims);
	bool dense = median > AUTO_DENSE_RATIO * spacing;
	bool prefer_sap = scene->count <= AUTO_SAP_MAX || dense;
	if (prefer_sap && bpi_algorithm_get(BP_ALGO_SAP))
		return BP_ALGO_SAP;
	if (bpi_algorithm_get(BP_ALGO_GRID))
		return BP_ALGO_GRID;
	return bpi_algorithm_get(BP_ALGO_SAP) ? BP_ALGO_SAP : BP_ALGO_BRUTE;
}
