// SPDX-License-Identifier: MIT
// Internal layout of a published frame (bp_view) and the scheduler's hooks into the world.
#ifndef BP_FRAME_INTERNAL_H
#define BP_FRAME_INTERNAL_H

#include <broadphase/frame.h>
#include <stdatomic.h>
#include "soa.h"
#include "step.h"
#include "view_index.h"

typedef struct bpi_frames bpi_frames;

/// One frame buffer: the snapshot copied on submit plus everything the builder
/// derives from it. Owned by the pool; handed to readers as bp_view. Arrays keep
/// their capacity when the buffer is recycled, so steady state allocates nothing.
struct bp_view {
	atomic_uint refs; ///< readers + 1 while it is the latest frame
	bpi_frames *pool;
	uint64_t number;

	// Snapshot (copied on submit) and the settings of the world at submit.
	int dims;
	uint32_t count;
	uint32_t capacity; ///< entities the arrays below have room for
	bpi_soa soa;
	bool unfiltered;
	bpi_step_settings settings;

	// Built by the builder.
	bpi_pair_buffer pairs;   ///< sorted by (lo, hi)
	bp_pair *scratch;        ///< counting-sort scratch
	size_t scratch_capacity;
	uint32_t *offsets;       ///< CSR: neighbours of e are neighbours[offsets[e] .. offsets[e + 1])
	uint32_t *neighbours;
	size_t neighbour_capacity;
	bp_key_pair *keys; ///< key pairs sorted by (a, b), pairs.count of them
	size_t key_capacity;
	bp_key_pair *began, *ended;
	size_t began_count, ended_count, began_capacity, ended_capacity;
	bpi_view_index index; ///< spatial index for the box, point, sphere, ray and nearest queries
	bp_frame_stats stats;
};

/// Creates the (idle) scheduler of a new world; no thread is started.
bp_status bpi_frames_create(bpi_frames **out);
/// Joins the builder, drops unbuilt snapshots and the latest frame; the pool
/// itself lives on until the last held view is released. NULL is ignored.
void bpi_frames_shutdown(bpi_frames *frames);

/// Test hook: while paused the builder starts no new build (so tests can make
/// submits coalesce deterministically). Any thread.
void bpi_frames_pause(bp_world *world, bool paused);
/// Frame buffers currently allocated by the world's pool (held, latest, being
/// built, pending and spare). Any thread.
uint32_t bpi_frames_live(bp_world *world);

#endif
