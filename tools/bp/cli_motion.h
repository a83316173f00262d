// SPDX-License-Identifier: MIT
// Motion of a generated or loaded scene, frame by frame, shared by `bp frames` and `bp bench`: which
// entities move (an evenly spread choice by dense index), how they move, and handing them to a world.
#ifndef BP_CLI_MOTION_H
#define BP_CLI_MOTION_H

#include "cli.h"

/// Each axis moves by up to this fraction of the box's extent per frame (as bp_scene_generate).
#define CLI_MOTION_SPEED 0.05

/// Centre, half extent and velocity per axis, and the bounds arrays handed to the world.
/// Only `count` of the n entities move: mover j is entity index[j] (index NULL when all
/// move, then mover j is entity j). min/max hold mover j's bounds at element j, the
/// compact form bp_entities_set_bounds takes; before the first step they hold
/// every entity's frame-1 bounds.
typedef struct cli_motion {
	uint32_t n;
	uint32_t count;  ///< movers
	uint32_t *index; ///< dense index of each mover, ascending; NULL when all move
	int dims;
	float *centre[3], *half[3], *velocity[3];
	float *min[3], *max[3];
	float lo[3], hi[3]; ///< bounce box: the range of the frame-1 centres
} cli_motion;

/// round(fraction * n), within [0, n].
uint32_t cli_fraction_count(uint32_t n, double fraction);

/// `count` of the indices 0..n-1, evenly spread: out[j] = floor(j * n / count), strictly
/// increasing because count <= n. A sorted or clustered scene order still spreads the
/// choice over the scene.
void cli_spread(uint32_t n, uint32_t count, uint32_t *out);

/// Starts the motion of frame 0 of `scene`: `count` movers, the dense indices in
/// index[0..count) (ascending; copied), or every entity when index is NULL (count must
/// then be scene->count). Velocities come from a hash of (seed, axis, entity): the same
/// arguments always give the same frames. False when out of memory (free it anyway).
bool cli_motion_init(cli_motion *m, const bp_scene *scene, uint64_t seed, uint32_t count, const uint32_t *index);
void cli_motion_free(cli_motion *m);

/// One frame of motion: each mover's centre moves by its velocity and bounces off the
/// bounce box; its bounds go to element j of min/max.
void cli_motion_step(cli_motion *m);

/// The movers' bounds, element j for mover j (every entity's before the first step).
bp_bounds_arrays cli_motion_bounds(const cli_motion *m);

/// Hands the movers' bounds of the last step to the world whose dense index i is scene
/// entity i: by dense index (bp_target_indices) when only some move, so an incremental
/// world sees just them change; as one range when all move.
bp_status cli_motion_apply(const cli_motion *m, bp_world *world);

#endif
