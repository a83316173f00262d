// SPDX-License-Identifier: MIT
// Test hooks into a world's frame scheduler (the scheduler itself is frames/scheduler.h).
#ifndef BP_WORLD_FRAMES_H
#define BP_WORLD_FRAMES_H

#include <broadphase/world.h>
#include <stdbool.h>
#include <stdint.h>

/// While paused the world's builder starts no new build (so tests can make
/// submits coalesce deterministically). Any thread.
void bpi_world_pause_frames(bp_world *world, bool paused);
/// Frame buffers the world's scheduler has allocated (held, latest, being
/// built, pending and spare). Any thread.
uint32_t bpi_world_live_frames(bp_world *world);

#endif
