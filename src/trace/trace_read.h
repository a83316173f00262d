// SPDX-License-Identifier: MIT
// The reader's insides, shared by trace_read.c (the file) and trace_apply.c (worlds).
#ifndef BP_TRACE_READ_H
#define BP_TRACE_READ_H

#include "trace/trace_state.h"

#include <stdio.h>

struct bp_trace_reader {
	FILE *file;
	int dims;
	uint32_t version;
	uint32_t filter_words; ///< bpi_trace_filter_words of the file's version
	uint32_t frame_count;
	uint32_t max_entities;
	uint32_t keyframe_interval;
	uint64_t index_offset;
	BPI_ARRAY(uint64_t) index; ///< per frame: record offset, keyframe offset (0 = none)
	BPI_ARRAY(uint8_t) record; ///< the record last read, as in the file
	// The frame last decoded, which `frame` points into.
	BPI_ARRAY(uint32_t) destroys;
	BPI_ARRAY(uint32_t) move_ids;
	BPI_ARRAY(bp_trace_entity) creates;
	BPI_ARRAY(bp_trace_entity) sets;
	BPI_ARRAY(float) moves[6]; ///< min per axis, then max per axis
	bp_trace_frame frame;
	// Replay: the state after frame position - 1, and where the last frame applied went.
	uint32_t position;
	uint32_t epoch; ///< marks destroys in state.stamp while a frame is checked
	bpi_trace_state state;
	bpi_trace_state before; ///< the state a seek started from, for a failed one to go back to
	bool applied;         ///< `frame` is the frame bp_trace_reader_next applied last
	uint32_t count_before; ///< live entities before it
	BPI_ARRAY(uint32_t) destroy_dense; ///< dense index of each destroy when it happened
	BPI_ARRAY(uint32_t) set_dense;
	BPI_ARRAY(uint32_t) move_dense;
	// Scratch for worlds: a run of creates as arrays, their user keys.
	BPI_ARRAY(float) run_bounds[6];
	BPI_ARRAY(uint64_t) run_keys;
	char path[200];
	char error[512];
};

/// Formats the reader's error ("PATH: ...") and returns status.
bp_status bpi_trace_reader_fail(bp_trace_reader *r, bp_status status, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

#endif
