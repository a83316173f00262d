// SPDX-License-Identifier: MIT
// The frame protocol on a world (bp_frame_*): what the host calls, over the world's scheduler.
#include "world/world_frames.h"
#include "frames/scheduler.h"
#include "world/world_data.h"

/// What a submit copies from the world: its entities, settings and marks.
static bpi_frame_source source_of(bp_world *w)
{
	bpi_frame_source source = {
		.soa = &w->soa,
		.count = w->count,
		.unfiltered = bpi_world_unfiltered(w),
		.layout = w->layout,
		.settings = bpi_world_settings(w),
		.changes = {.all = true, .bounds_only = w->frame_marks.bounds_only},
	};
	if (w->incremental)
		source.changes = (bpi_changes){
			.list = w->frame_marks.list.data,
			.count = w->frame_marks.count,
			.previous_count = w->frame_marks.since_count,
			.all = w->frame_marks.all,
			.bounds_only = w->frame_marks.bounds_only,
		};
	return source;
}

/// Submits the world's entities; with `host_builds` the caller builds the frame as it waits.
static bp_status submit(bp_world *w, bool host_builds, uint64_t *out_frame)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	const bpi_frame_source source = source_of(w);
	uint64_t frame = 0;
	const char *why = "";
	bp_status status = bpi_frames_submit(w->frames, &source, host_builds, &frame, &why);
	if (status != BP_OK)
		return bpi_world_fail(w, status, "frame submit with %u entities: %s", w->count, why);
	bpi_world_clear_frame_changes(w);
	if (out_frame)
		*out_frame = frame;
	return BP_OK;
}

bp_status bp_frame_submit(bp_world *w, uint64_t *out_frame) { return submit(w, false, out_frame); }

bp_status bp_frame_wait(bp_world *w, uint64_t frame)
{
	return w ? bpi_frames_wait(w->frames, frame, false) : BP_ERR_INVALID_ARGUMENT;
}

bp_status bp_frame_acquire(bp_world *w, bp_view **out)
{
	if (!out)
		return BP_ERR_INVALID_ARGUMENT;
	*out = NULL;
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	*out = bpi_frames_acquire(w->frames);
	return *out ? BP_OK : BP_ERR_NO_FRAME;
}

bp_status bp_frame_step(bp_world *w, bp_view **out)
{
	if (!out)
		return BP_ERR_INVALID_ARGUMENT;
	*out = NULL;
	// The host would only wait for the builder: it builds the frame itself, sparing the
	// hand-off to the builder thread and back. Not on a host's task system, which a host
	// may call this from inside and which the library calls only from its own steps.
	const bool host_builds = w && w->executor.kind != BP_EXECUTOR_HOST;
	uint64_t frame = 0;
	bp_status status = submit(w, host_builds, &frame);
	if (status == BP_OK)
		status = bpi_frames_wait(w->frames, frame, host_builds);
	if (status == BP_OK)
		status = bp_frame_acquire(w, out);
	// Only the host submits and it is here, so the latest frame is the one submitted.
	BP_ASSERT(status != BP_OK || (*out)->number == frame);
	return status;
}

bp_status bp_world_view(bp_world *w, bp_view **out)
{
	if (!out)
		return BP_ERR_INVALID_ARGUMENT;
	*out = NULL;
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	const bpi_frame_source source = source_of(w);
	const char *why = "";
	bp_status status = bpi_frames_view(w->frames, &source, out, &why);
	if (status != BP_OK)
		return bpi_world_fail(w, status, "world view with %u entities: %s", w->count, why);
	bpi_world_clear_frame_changes(w); // the view holds them now, as a submit's snapshot does
	return BP_OK;
}

void bpi_world_pause_frames(bp_world *w, bool paused)
{
	bpi_frames_pause(w->frames, paused);
}

uint32_t bpi_world_live_frames(bp_world *w)
{
	return bpi_frames_live(w->frames);
}
