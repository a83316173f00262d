// SPDX-License-Identifier: MIT
// Test fixtures for traces: a random history of creates (ids reused after destroys), destroys,
// attribute changes and moves, with statics and spheres, written through bp_trace_writer while
// the test keeps its own copy of the live entities after every frame, independent of the library.
#ifndef BP_TEST_TRACE_HISTORY_H
#define BP_TEST_TRACE_HISTORY_H

#include "oracle.h"

typedef struct history_entity {
	uint32_t id;
	oracle_box box;
} history_entity;

typedef struct trace_history {
	int dims;
	uint32_t frames;
	history_entity **live; ///< per frame, the live entities after it, sorted by id
	uint32_t *counts;      ///< per frame, how many
} trace_history;

/// Writes `frames` random frames to `path` (about `n` entities live) and keeps each frame's
/// live entities. Asserts that every write succeeds.
void trace_history_write(const char *path, int dims, uint32_t n, uint32_t frames, uint32_t keyframe_interval,
	uint64_t seed, trace_history *out);
void trace_history_free(trace_history *h);
/// Asserts that the reader's state holds exactly the entities live after frame k.
void trace_history_expect_state(const trace_history *h, uint32_t k, const bp_trace_state *state);
/// The state's entities as oracle boxes in its dense order (free it).
oracle_box *trace_history_boxes(const bp_trace_state *state, int dims);

#endif
