// SPDX-License-Identifier: MIT
// The options the drivers that generate their own scene share: --dist, --algo and --csv.
#ifndef BP_PERF_SCENE_OPTIONS_H
#define BP_PERF_SCENE_OPTIONS_H

#include <broadphase/broadphase.h>
#include <bp_scene.h>
#include <stdbool.h>
#include <string.h>

/// True when `name` is one of the shared options, its `value` then stored, and
/// *ok false when that value does not parse.
static inline bool perf_scene_option(const char *name, const char *value, bp_distribution *dist,
	bp_algorithm *algorithm, const char **csv, bool *ok)
{
	if (strcmp(name, "--csv") == 0)
		*csv = value;
	else if (strcmp(name, "--dist") == 0)
		*ok = bp_distribution_from_name(value, dist) == BP_OK;
	else if (strcmp(name, "--algo") == 0)
		*ok = bp_algorithm_from_name(value, algorithm) == BP_OK;
	else
		return false;
	return true;
}

#endif
