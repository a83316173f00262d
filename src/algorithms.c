// SPDX-License-Identifier: MIT
// The algorithm registry: names, availability, and AUTO's choice.
#include "index.h"

#include <string.h>

static const char *const algorithm_names[BP_ALGO_COUNT] = {
	[BP_ALGO_AUTO] = "auto", [BP_ALGO_BRUTE] = "brute", [BP_ALGO_SAP] = "sap",
	[BP_ALGO_GRID] = "grid", [BP_ALGO_HASH] = "hash",
};

static const bpi_algorithm *const algorithms[BP_ALGO_COUNT] = {
	[BP_ALGO_BRUTE] = &bpi_brute_algorithm,
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

bp_algorithm bpi_algorithm_choose(const bpi_scene *scene)
{
	if (scene->count <= 64 || !bpi_algorithm_get(BP_ALGO_SAP))
		return BP_ALGO_BRUTE;
	return BP_ALGO_SAP;
}
