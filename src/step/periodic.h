// SPDX-License-Identifier: MIT
// Periodic (toroidal) worlds: minimum-image pairs through ghost copies, for every algorithm.
#ifndef BP_PERIODIC_H
#define BP_PERIODIC_H

#include <math.h>

#include "algorithms/pipeline.h"

/// x moved by whole periods into [0, period), as the periodic step moves a box's min:
/// fmod in double (exact), a negative remainder moved up by the period, rounded once to
/// float; a value just below the period that rounds up to it is the same point as 0.
/// Periodic queries reduce with it too, so they and the pairs agree on what overlaps.
static inline float bpi_periodic_reduce(float x, float period)
{
	if (x >= 0.0f && x < period)
		return x; // what fmod gives, without its cost
	double r = fmod(x, period); // exact; sign of x
	if (r < 0)
		r += period;
	const float a = (float)r;
	return a < period ? a : 0.0f;
}

/// Scratch kept across steps (normalized boxes, ghosts, pair sort); created on
/// first use by bpi_periodic_step, freed with bpi_periodic_free.
typedef struct bpi_periodic bpi_periodic;

/// What made a periodic step fail (BP_ERR_PERIODIC_EXTENT, or BP_ERR_OUT_OF_RANGE for the ghosts).
typedef struct bpi_periodic_fault {
	uint32_t entity; ///< dense index of the first entity (lowest index) that is too large
	int axis;        ///< its axis; -1 when the ghosts would exceed the entity limit
	double extent;   ///< its extent on that axis
} bpi_periodic_fault;

/// Runs `requested` on the periodic image of `scene` (the torus
/// [0, period[k]) per axis) and writes every minimum-image pair once, (lo, hi)
/// with lo < hi, sorted by (lo, hi), into `pairs`. Fills stats like
/// bpi_pipeline_run, then sets entity_count to scene->count and pair_count to
/// the final pairs, and adds its own passes to ns_prepare and ns_merge.
/// BP_ERR_PERIODIC_EXTENT (with *fault filled) when an extent exceeds period / 2,
/// BP_ERR_OUT_OF_RANGE (fault axis -1) when the ghosts would pass the entity limit.
/// On any error `pairs` is unchanged.
/// Warning: one caller at a time per scratch; period[k] > 0 and finite.
bp_status bpi_periodic_step(bpi_periodic **scratch, bpi_indexes *indexes, bp_algorithm requested,
	const bpi_scene *scene, const float period[3], bpi_pair_buffer *pairs, bp_frame_stats *stats,
	bpi_periodic_fault *fault);

/// Frees the scratch. NULL is ignored.
void bpi_periodic_free(bpi_periodic *scratch);

#endif
