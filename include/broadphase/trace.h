// SPDX-License-Identifier: MIT
// Traces: recorded motion, frame by frame, in a binary file (docs/trace.md). A host records
// its own simulation with a writer; a reader replays it into worlds, or reads any frame K
// without decoding the frames before it.
#ifndef BROADPHASE_TRACE_H
#define BROADPHASE_TRACE_H

#include "base.h"
#include "types.h"
#include "world.h"

#ifdef __cplusplus
extern "C" {
#endif

// A trace names entities by 32-bit ids the host chooses, unique among the live entities
// (an id may come back after its entity is destroyed). Frame k holds what changed since
// frame k - 1, in this order: destroys, creates, attribute changes (filter, kind, shape),
// bounds changes. Frame 0 starts from no entity. Replaying frames 0..k into an empty world
// gives the world the trace describes at frame k, with the dense order the world's own
// rules give: destroys in list order (the last dense entity moves into the hole), then
// creates appended in order.
//
// Errors: a call that fails returns a bp_status and changes nothing; the writer's or
// reader's error text names what and where. A malformed file is BP_ERR_PARSE, a file that
// cannot be opened, read or written BP_ERR_IO.

/// Format version written by this library. It reads this one and version 1, whose
/// 32-bit categories and masks it widens (high bits 0).
#define BP_TRACE_VERSION 2u

/// One entity as a create holds it, and as an attribute change holds it (then its bounds
/// are ignored).
typedef struct bp_trace_entity {
	uint32_t id;
	float min[3];      ///< min[2] ignored in 2D
	float max[3];      ///< max[2] ignored in 2D
	uint64_t category; ///< as bp_entity_def
	uint64_t mask;     ///< as bp_entity_def
	bp_kind kind;
	bp_shape shape;
} bp_trace_entity;

/// Why the calling thread's last failed bp_trace_writer_open, bp_trace_writer_close or
/// bp_trace_reader_open failed; there is no object left to ask. Any thread.
BP_API const char *bp_trace_open_error(void);

// ---- writing ----------------------------------------------------------------------

typedef struct bp_trace_writer bp_trace_writer;

/// Writer settings. Start from bp_trace_writer_def_default().
typedef struct bp_trace_writer_def {
	int dims; ///< 2 or 3. Default 3.
	/// A keyframe (every live entity) is written after frame k when k is a positive
	/// multiple of this, so reading the state of frame k decodes at most this many
	/// frames; 0 = never. Default 64.
	uint32_t keyframe_interval;
} bp_trace_writer_def;

BP_API bp_trace_writer_def bp_trace_writer_def_default(void);

/// Creates (or truncates) the file and writes its header. Frame 0 is open.
BP_API bp_status bp_trace_writer_open(const char *path, const bp_trace_writer_def *def, bp_trace_writer **out);
/// Destroys entities of the open frame. Every id must be live, listed once, and not
/// created, changed or moved in this frame; and no create may precede them in the frame.
BP_API bp_status bp_trace_destroy(bp_trace_writer *writer, uint32_t count, const uint32_t *ids);
/// Creates entities: ids not live and listed once, bounds finite with min <= max,
/// kind and shape known values.
BP_API bp_status bp_trace_create(bp_trace_writer *writer, uint32_t count, const bp_trace_entity *entities);
/// Changes the category, mask, kind and shape of live entities (their bounds are ignored).
BP_API bp_status bp_trace_set(bp_trace_writer *writer, uint32_t count, const bp_trace_entity *entities);
/// Changes the bounds of live entities: element i of the arrays goes to ids[i]. An id
/// listed twice (in one call or in several) takes its last bounds.
BP_API bp_status bp_trace_move(bp_trace_writer *writer, uint32_t count, const uint32_t *ids,
	const bp_bounds_arrays *bounds);
/// Writes the open frame (an empty frame is a frame where nothing changed) and opens the next.
BP_API bp_status bp_trace_end_frame(bp_trace_writer *writer);
/// Frames written so far.
BP_API uint32_t bp_trace_writer_frames(const bp_trace_writer *writer);
/// Text of the writer's last error, naming what and where; empty when none failed.
BP_API const char *bp_trace_writer_error(const bp_trace_writer *writer);
/// Writes the frame index and the trailer, closes the file and frees the writer (also
/// when it fails). A frame still open with changes in it is written first; an open frame
/// with none is dropped. A trace whose writer was never closed has no index: a
/// reader rejects it as truncated.
BP_API bp_status bp_trace_writer_close(bp_trace_writer *writer);

// ---- reading ----------------------------------------------------------------------

typedef struct bp_trace_reader bp_trace_reader;

/// What the header and trailer say.
typedef struct bp_trace_info {
	int dims;
	uint32_t frame_count;
	/// The most entities live at once, as the trailer says: never more than the file's
	/// records can create (checked on open); a frame or keyframe read that passes it is refused.
	uint32_t max_entities;
	uint32_t keyframe_interval; ///< as written
} bp_trace_info;

/// One frame's changes, as the file holds them. Arrays are valid until the next call
/// on the reader.
typedef struct bp_trace_frame {
	uint32_t index;
	uint32_t destroy_count;
	const uint32_t *destroys; ///< ids, in the order they are destroyed
	uint32_t create_count;
	const bp_trace_entity *creates;
	uint32_t set_count;
	const bp_trace_entity *sets; ///< attribute changes; bounds unused
	uint32_t move_count;
	const uint32_t *move_ids;
	bp_bounds_arrays moves; ///< element i holds the new bounds of move_ids[i]
} bp_trace_frame;

/// The live entities of the reader's position, in dense order.
typedef struct bp_trace_state {
	uint32_t frame; ///< the last frame applied
	uint32_t count;
	const uint32_t *ids;
	bp_bounds_arrays bounds;
	const uint64_t *category, *mask;
	const bp_kind *kinds;
	const bp_shape *shapes;
} bp_trace_state;

/// Opens a trace and reads its header, trailer and frame index (not its frames). Checks
/// every header and trailer field against the file before anything is sized by one
/// (docs/trace.md, Header and trailer fields), and the index's checksum and offsets.
BP_API bp_status bp_trace_reader_open(const char *path, bp_trace_reader **out);
BP_API void bp_trace_reader_close(bp_trace_reader *reader);
BP_API bp_trace_info bp_trace_reader_info(const bp_trace_reader *reader);
/// Text of the reader's last error ("trace.bpt: frame 7: ..."); empty when none failed.
BP_API const char *bp_trace_reader_error(const bp_trace_reader *reader);

/// Reads frame k's changes alone, through the index, checking the record (its checksum,
/// sizes and values). Leaves the reader's position and state as they were.
BP_API bp_status bp_trace_reader_read(bp_trace_reader *reader, uint32_t k, bp_trace_frame *out);
/// Frames applied so far: the next bp_trace_reader_next applies frame `position`.
BP_API uint32_t bp_trace_reader_position(const bp_trace_reader *reader);
/// Applies the next frame to the reader's state and returns its changes. Checks them
/// against the state first (destroyed and changed ids live, created ids not): on any
/// error the state stays as it was. BP_ERR_OUT_OF_RANGE after the last frame.
BP_API bp_status bp_trace_reader_next(bp_trace_reader *reader, bp_trace_frame *out);
/// Moves to the state after frame k: from the last keyframe at or before k (or from where
/// the reader is, when that is nearer), decoding only the frames between. On an error
/// (BP_ERR_OUT_OF_RANGE when k is not below frame_count, BP_ERR_PARSE for a damaged record
/// on the way) the position and state stay as they were. Done or not, a seek leaves no frame
/// for bp_trace_reader_apply until the next bp_trace_reader_next.
BP_API bp_status bp_trace_reader_seek(bp_trace_reader *reader, uint32_t k);
/// The live entities after the last frame applied (count 0 before the first).
BP_API bp_trace_state bp_trace_reader_state(const bp_trace_reader *reader);

/// Creates the reader's state in an empty world of the trace's dims: dense index i is
/// state entity i, its user key the trace id.
BP_API bp_status bp_trace_reader_load(bp_trace_reader *reader, bp_world *world);
/// Applies the frame the last bp_trace_reader_next returned to a world that held the state
/// before it (loaded, or replayed frame by frame by this call), so that the world's dense
/// order stays the reader's; creates get the trace id as user key. Call it for each world
/// that follows the trace. A world of another entity count or dims is refused unchanged;
/// a failure inside the world (out of memory) leaves the frame partly applied.
BP_API bp_status bp_trace_reader_apply(bp_trace_reader *reader, bp_world *world);

#ifdef __cplusplus
}
#endif
#endif
