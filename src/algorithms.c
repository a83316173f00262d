// SPDX-License-Identifier: MIT
// The algorithm registry: names, availability, and AUTO's choice.
#include "index.h"

#include <stdlib.h>
#include <string.h>

static const char *const algorithm_names[BP_ALGO_COUNT] = {
	[BP_ALGO_AUTO] = "auto", [BP_ALGO_BRUTE] = "brute", [BP_ALGO_SAP] = "sap",
	[BP_ALGO_GRID] = "grid", [BP_ALGO_HASH] = "hash",
};

static const bpi_algorithm *const algorithms[BP_ALGO_COUNT] = {
	[BP_ALGO_BRUTE] = &bpi_brute_algorithm,
	[BP_ALGO_GRID] = &bpi_grid_algorithm, [BP_ALGO_HASH] = &bpi_hash_algorithm,
	[BP_ALGO_SAP] = &bpi_sap_algorithm,
};

const bpi_algorithm *bpi_algorithm_get(bp_algorithm id)
{
	return (unsigned)id < BP_ALGO_COUNT ? algorithms[id] : NULL;
}

const char *bp_algorithm_name(bp_algorithm algorithm)
{
	return (unsigned)algorithm < BP_ALGO_COUNT ? algorithm_names[algorithm] : "?";
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
		if (strcmp(name, algorithm_names[i]) == 0 && bp_algorithm_available((bp_algorithm)i)) {
			*out = (bp_algorithm)i;
			return BP_OK;
		}
	}
	return BP_ERR_UNKNOWN_ALGORITHM;
}

// AUTO: brute for tiny scenes, sap for scenes that are nearly one-dimensional,
// grid otherwise. Statistics come from an evenly strided sample of up to 1024
// entities (microseconds at any n): the spread of box centres per axis and the
// median of the boxes' largest extents.
// Measured (1 thread, 200K, bp_scene_generate, CPU ms, medians of 5 on a loaded
// 2-core machine):
//   3D  uniform sap 237 grid 67 hash 181 | mixed sap 186 grid 92 | clustered sap 306 grid 119
//       line sap 11 grid 48 hash 113
//   2D  uniform sap 43 grid 39 | mixed sap 55 grid 48 | clustered sap 75 grid 73 | line sap 10.5 grid 31
// sap wins only on the line scene, whose second-widest axis of centres is ~3 box
// extents wide (uniform: ~60-400). grid beats hash on every generated scene
// (hash pays a per-candidate cell check for bucket collisions), so AUTO picks
// grid; hash stays for unbounded worlds chosen by name.
#define AUTO_BRUTE_MAX 64
#define AUTO_SAMPLE 1024
#define AUTO_THIN_AXIS_EXTENTS 16.0f

static int compare_floats(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

bp_algorithm bpi_algorithm_choose(const bpi_scene *scene)
{
	if (scene->count <= AUTO_BRUTE_MAX)
		return BP_ALGO_BRUTE;
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
	qsort(extent, m, sizeof(float), compare_floats);
	float median = extent[m / 2];
	// Second-widest spread of centres: small means a line along one axis.
	float spread[3] = {0, 0, 0};
	for (int axis = 0; axis < scene->dims; ++axis)
		spread[axis] = hi[axis] - lo[axis];
	qsort(spread, (size_t)scene->dims, sizeof(float), compare_floats);
	float second = spread[scene->dims - 2];
	bool thin = second <= AUTO_THIN_AXIS_EXTENTS * median;
	if (thin && bpi_algorithm_get(BP_ALGO_SAP))
		return BP_ALGO_SAP;
	if (bpi_algorithm_get(BP_ALGO_GRID))
		return BP_ALGO_GRID;
	return bpi_algorithm_get(BP_ALGO_SAP) ? BP_ALGO_SAP : BP_ALGO_BRUTE;
}
