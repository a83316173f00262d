// SPDX-License-Identifier: MIT
// Active x resting (DESIGN §10): the pairs of the active entities with the resting index,
// through enlarged ("fat") boxes and the candidates their queries found.
#ifndef BP_INCREMENTAL_CROSS_H
#define BP_INCREMENTAL_CROSS_H

#include <math.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "cells.h"

/// What a resting entity accepts a pair by, packed: one cache miss per query hit
/// instead of three (it never changes while the entity rests).
typedef struct bpi_rest_filter {
	uint32_t category, mask;
	uint32_t flags;
} bpi_rest_filter;

/// Six-lane bounds records, {lo x, y, z, -hi x, y, z} (z lanes 0 in 2D), as the
/// cells store them: against the query {hi x, y, z, -lo x, y, z} of another box,
/// "record <= query" on every lane is the closed overlap of the two, negation being
/// exact. The query of a box:
static inline void bpi_rec6_query(const float lo[3], const float hi[3], int dims, float q[6])
{
	for (int axis = 0; axis < 3; ++axis) {
		q[axis] = axis < dims ? hi[axis] : 0.0f;
		q[3 + axis] = axis < dims ? -lo[axis] : 0.0f;
	}
}

/// The overlap test of a record with a query. On x86-64 two ordered compares of four
/// lanes (the upper two of the second are ignored), as `<=` is. The chain of six
/// scalar compares made the cross re-test compute-bound, ~5 ns a candidate. Measured
/// (`bp frames --n 1010000 --moving 0.0099 --incremental`, 1 thread, ~35 candidates a
/// mover, 3 runs): find 2.5-2.6 -> 2.0-2.1 ms, the frame's build 4.1-4.4 -> 3.6-3.8 ms.
static inline bool bpi_rec6_overlap(const float rec[6], const float q[6])
{
#ifdef __SSE2__
	__m128 low = _mm_cmple_ps(_mm_loadu_ps(rec), _mm_loadu_ps(q));
	__m128 high = _mm_cmple_ps(_mm_castsi128_ps(_mm_loadu_si64(&rec[4])), _mm_castsi128_ps(_mm_loadu_si64(&q[4])));
	return (_mm_movemask_ps(low) | (_mm_movemask_ps(high) & 3) << 4) == 0x3F;
#else
	return (rec[0] <= q[0]) & (rec[1] <= q[1]) & (rec[2] <= q[2]) & (rec[3] <= q[3]) & (rec[4] <= q[4]) &
	       (rec[5] <= q[5]);
#endif
}

/// A resting entity that an active entity's fat box overlaps, with its bounds as
/// the resting index holds them (mins, then negated maxes; z lanes 0 in 2D), so a
/// re-test reads nothing of the resting entities' arrays.
typedef struct bpi_candidate {
	float rec[6];
	uint32_t entity;
	uint32_t flags;
} bpi_candidate;

/// Per active entity: the box its last query used, and where the candidates it
/// found are kept.
typedef struct bpi_fat {
	float lo[3], hi[3];   ///< the fat box; lo[0] = +inf: none yet (query next step)
	float margin;         ///< what the true bounds were enlarged by on every side
	float lead[3];        ///< and on top of it on one side per axis: max for > 0, min for < 0
	float drift[3];       ///< per axis, how far the box centre moved per step before that search
	bpi_rest_filter own;  ///< the entity's filter when it queried
	uint32_t queried_at;  ///< the step of that query
	uint32_t buffer;      ///< candidates: the buffer they lie in,
	uint32_t first, count; ///< and their range in it
} bpi_fat;

/// An entry for an entity that joins the active set: it queries on its first step.
static inline bpi_fat bpi_fat_none(void)
{
	return (bpi_fat){.lo = {INFINITY, 0, 0}};
}

/// Candidates written by one chunk of one step. They stay where they were written
/// while their entity re-tests them; a buffer no fat box refers to is reused.
typedef struct bpi_candidate_buffer {
	BPI_ARRAY(bpi_candidate) items;
	size_t count;
	uint32_t refs; ///< fat boxes whose candidates lie here, counted before a step
	bool failed;   ///< an allocation failed: the step fails and nothing more is tried
} bpi_candidate_buffer;

/// What one chunk saw: the entities that searched, and per search of one that had
/// a fat box, how far its bounds moved per step since that box was made, and its
/// extent.
#define BPI_CROSS_SAMPLES 16
typedef struct bpi_cross_tally {
	uint32_t searched;
	uint32_t escaped; ///< searched because the bounds left their fat box (or the filter changed)
	uint32_t count;
	float speed[BPI_CROSS_SAMPLES];
	float extent[BPI_CROSS_SAMPLES];
} bpi_cross_tally;

/// State kept across incremental steps for the active x resting pairs.
/// Zero-initialised is empty.
typedef struct bpi_cross {
	BPI_ARRAY(bpi_fat) fat;      ///< per position of the active list
	BPI_ARRAY(bpi_fat) next_fat; ///< the next active list's, while the sets are updated
	BPI_ARRAY(bpi_candidate_buffer) buffers;
	uint32_t buffer_count;          ///< buffers initialised
	BPI_ARRAY(uint32_t) writing;    ///< per chunk: the buffer it writes this step
	bool compacting;                ///< this step copies every kept list into the chunks' buffers
	uint32_t step;                  ///< incremental steps taken
	BPI_ARRAY(bpi_cross_tally) tally; ///< per chunk
	BPI_ARRAY(float) gathered;
	float speed;       ///< observed motion per step (bounds units), blended; 0 = none yet
	float extent;      ///< typical extent of the entities that moved, blended
	float stretch;     ///< factor on the margin's steps, steered by the fat boxes left; 0 = 1
	uint32_t held;     ///< active entities with a fat box at this step's start
	bpi_pair_chunks pairs; ///< per chunk of the active list
} bpi_cross;

/// One step's view of the resting index and the active entities.
typedef struct bpi_cross_input {
	const bpi_scene *scene;
	const bpi_cells *cells;        ///< the resting index (records of non-resting entities hidden)
	const bpi_cells *settled;      ///< its second level, or NULL (see incremental.c)
	const uint32_t *settled_of;    ///< per entity of the settled grid: its dense index
	const bpi_rest_filter *filter; ///< per resting index
	const uint8_t *gone;           ///< per resting index: 1 = no longer resting
	bool left_rest;                ///< some entity stopped resting this step
	const uint32_t *active;        ///< the active entities, ascending
	uint32_t active_count;
	/// The active entities alone, by position in `active`: their bounds and filters
	/// read in list order, not at the dense indices they are scattered over.
	const bpi_scene *own;
	float margin;                  ///< the world's setting; 0 = from observed motion
} bpi_cross_input;

/// Room for the next active list's entries (next_fat).
bool bpi_cross_reserve(bpi_cross *cross, uint32_t active_count);
/// Makes next_fat the active list's entries.
void bpi_cross_swap(bpi_cross *cross);

/// Every accepted pair of an active entity with a resting one, into the pair chunks
/// (a fixed cut of the active list), the candidate tests made and the entities
/// that searched.
/// An active entity whose bounds are still inside its fat box, with the same filter,
/// re-tests its candidates; any other queries the resting index with its bounds
/// enlarged by the margin. On error the entries are unusable: the caller must
/// rebuild before the next call.
bp_status bpi_cross_find(bpi_cross *cross, const bpi_cross_input *in, uint64_t *tests, uint32_t *searched);

/// Test hook: the steps of its own motion a steady entity's fat box leads by (8;
/// 0: none). Warning: call only while no step runs.
void bpi_set_cross_lead_steps(uint32_t steps);

/// The margin the next queries use: the setting, or from the motion observed.
float bpi_cross_margin(const bpi_cross *cross, float setting);

void bpi_cross_free(bpi_cross *cross);

#endif
