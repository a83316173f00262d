// SPDX-License-Identifier: MIT
// The live entities of a trace in dense order, found by id through an open-addressed table:
// the state the writer records against and the reader replays into, with the world's dense rules
// (a destroy moves the last entity into the hole; creates append).
#ifndef BP_TRACE_STATE_H
#define BP_TRACE_STATE_H

#include "base/core.h"
#include <broadphase/trace.h>

#define BPI_TRACE_NONE UINT32_MAX

typedef struct bpi_trace_state {
	int dims;
	uint32_t count;
	BPI_ARRAY(uint32_t) ids;
	BPI_ARRAY(uint64_t) category;
	BPI_ARRAY(uint64_t) mask;
	BPI_ARRAY(uint32_t) stamp; ///< per dense entity, for the owner's marks
	BPI_ARRAY(bp_kind) kind;
	BPI_ARRAY(bp_shape) shape;
	BPI_ARRAY(float) min[3];
	BPI_ARRAY(float) max[3];
	BPI_ARRAY(uint32_t) slots; ///< dense index + 1, 0 = empty; a power of two, at least twice count
	size_t slot_count;
	BPI_ARRAY(uint32_t) scratch; ///< sorted id lists for the checks
} bpi_trace_state;

/// The calling thread's text for bp_trace_open_error, BPI_TRACE_OPEN_ERROR_BYTES long.
#define BPI_TRACE_OPEN_ERROR_BYTES 512
char *bpi_trace_open_error(void);

void bpi_trace_state_free(bpi_trace_state *s);
/// Drops every entity (storage kept).
void bpi_trace_state_clear(bpi_trace_state *s);
/// Makes `to` a copy of `from`, reusing its storage; false (`to` left empty) when memory runs out.
bool bpi_trace_state_copy(bpi_trace_state *to, const bpi_trace_state *from);
/// Exchanges two states, storage and all.
void bpi_trace_state_swap(bpi_trace_state *a, bpi_trace_state *b);
/// Room for `count` entities; false (state unchanged) when memory runs out.
bool bpi_trace_state_reserve(bpi_trace_state *s, uint32_t count);
/// Dense index of a live id, or BPI_TRACE_NONE.
uint32_t bpi_trace_state_find(const bpi_trace_state *s, uint32_t id);
/// Appends an entity whose id is not live, after bpi_trace_state_reserve made room.
void bpi_trace_state_append(bpi_trace_state *s, const bp_trace_entity *e);
/// Removes dense entity `dense`: the last one moves into its place.
void bpi_trace_state_remove(bpi_trace_state *s, uint32_t dense);
/// Entity `dense` as a bp_trace_entity.
bp_trace_entity bpi_trace_state_entity(const bpi_trace_state *s, uint32_t dense);

/// Why an entity's values are bad ("min_y > max_y", "kind 7 is unknown", ...), or NULL when
/// they are good. Bounds are checked when `bounds` is set.
const char *bpi_trace_entity_problem(const bp_trace_entity *e, int dims, bool bounds);
/// Why one axis' bounds are bad, or NULL.
const char *bpi_trace_bounds_problem(float min, float max, int axis);
/// An id listed twice in ids[0..count), sorted into s->scratch; false when none is (or no
/// memory: *out_of_memory is set).
bool bpi_trace_find_repeat(bpi_trace_state *s, const uint32_t *ids, size_t stride, uint32_t count, uint32_t *repeat,
	bool *out_of_memory);
/// After bpi_trace_find_repeat: whether `id` is among the sorted ids.
bool bpi_trace_sorted_has(const bpi_trace_state *s, uint32_t count, uint32_t id);

#endif
