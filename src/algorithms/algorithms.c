// SPDX-License-Identifier: MIT
// The algorithm registry: the table of implementations, their names, and AUTO's choice.
#include "algorithms/index.h"
#include <broadphase/world.h> // the public calls defined here

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

// AUTO: brute for tiny scenes, sap for small ones (as fast as grid there, with no cell setup),
// grid above, where it wins; hash, slower than grid on bounded scenes, only by name, for
// unbounded worlds (perf/README.md, "Algorithm choice").
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
