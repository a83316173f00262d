// SPDX-License-Identifier: MIT
// The frame scheduler (docs/design.md "Frame protocol"): copy on submit, one builder thread (or the host in bp_frame_step), a pool of
// reference-counted frame buffers, publication by swapping the latest pointer.
#ifndef BP_SCHEDULER_H
#define BP_SCHEDULER_H

#include "view/view.h"

typedef struct bpi_frames bpi_frames;

/// What a submit copies: the first `count` entities of `soa`, and the settings
/// the frame is built with.
typedef struct bpi_frame_source {
	const bpi_soa *soa;
	uint32_t count;
	bool unfiltered; ///< no entity is static, filtered or a sphere
	uint64_t layout;  ///< bp_world.layout
	bpi_step_settings settings;
	/// Entities that may differ since the last successful submit (all: unknown);
	/// the snapshot then copies only those into a buffer it knows the age of.
	bpi_changes changes;
} bpi_frame_source;

/// Creates an idle scheduler; no thread is started.
bp_status bpi_frames_create(bpi_frames **out);
/// Joins the builder, drops unbuilt snapshots and the latest frame; the pool
/// itself lives on until the last held view is released. NULL is ignored.
void bpi_frames_shutdown(bpi_frames *frames);

/// Copies the source into a frame buffer and hands it to the builder (started
/// on the first such submit); a snapshot no build has taken is replaced.
/// With `host_builds` the builder is neither started nor woken for it, and leaves it:
/// the host means to wait for it and build it (bpi_frames_wait). On error nothing is queued and *why says what
/// failed. Host thread.
bp_status bpi_frames_submit(bpi_frames *frames, const bpi_frame_source *source, bool host_builds, uint64_t *out_frame,
	const char **why);
/// Waits until `frame` is built: BP_OK when it (or a later one) was published,
/// else the failed build's status. BP_ERR_NOT_SUBMITTED for a frame never submitted.
/// With `build_here`, a frame no build has taken yet is built on the calling thread,
/// which would only wait for it.
bp_status bpi_frames_wait(bpi_frames *frames, uint64_t frame, bool build_here);
/// A view of the source without a step (bp_world_view), built on the calling thread once
/// the frames submitted before it are built, and not published: *out is the caller's
/// reference. It takes the next submit number. On error nothing is kept and *why says
/// what failed. Host thread.
bp_status bpi_frames_view(bpi_frames *frames, const bpi_frame_source *source, bp_view **out, const char **why);
/// A new reference to the latest published frame, or NULL before the first. Any thread.
bp_view *bpi_frames_acquire(bpi_frames *frames);

/// Test hook: while paused no new build starts (so tests can make
/// submits coalesce deterministically). Any thread.
void bpi_frames_pause(bpi_frames *frames, bool paused);
/// Frame buffers currently allocated by the pool (held, latest, being built,
/// pending and spare). Any thread.
uint32_t bpi_frames_live(bpi_frames *frames);

#endif
