// SPDX-License-Identifier: MIT
// The enlarged ("fat") box an active entity searched the resting index with, the packed
// filter a resting entity is accepted by, and the six-lane records both are tested in.
#ifndef BP_INCREMENTAL_FAT_H
#define BP_INCREMENTAL_FAT_H

#include <math.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/core.h"

/// Bounds on three axes (z 0 in 2D).
typedef struct bpi_box3 {
	float lo[3], hi[3];
} bpi_box3;

/// What a resting entity accepts a pair by, packed: one cache miss per query hit
/// instead of three (it never changes while the entity rests).
typedef struct bpi_rest_filter {
	uint64_t category, mask;
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
/// lanes (the upper two of the second are ignored), as `<=` is: the chain of six
/// scalar compares made the cross re-test compute-bound
/// (perf/README.md, "Incremental: active entities").
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

/// Bounds in two four-lane halves (lane 3, and z in 2D, 0), for testing many pairs
/// of the same boxes without a branch per axis.
typedef struct bpi_box4 {
	float lo[4], hi[4];
} bpi_box4;

static inline bpi_box4 bpi_box4_of(const float lo[3], const float hi[3], int dims)
{
	bpi_box4 b = {{0, 0, 0, 0}, {0, 0, 0, 0}};
	for (int axis = 0; axis < dims; ++axis) {
		b.lo[axis] = lo[axis];
		b.hi[axis] = hi[axis];
	}
	return b;
}

/// Closed overlap of two boxes, as bpi_scene_overlap decides it.
static inline bool bpi_box4_overlap(const bpi_box4 *a, const bpi_box4 *b)
{
#ifdef __SSE2__
	__m128 below = _mm_cmple_ps(_mm_loadu_ps(a->lo), _mm_loadu_ps(b->hi));
	__m128 above = _mm_cmple_ps(_mm_loadu_ps(b->lo), _mm_loadu_ps(a->hi));
	return _mm_movemask_ps(_mm_and_ps(below, above)) == 0xF;
#else
	return (a->lo[0] <= b->hi[0]) & (a->lo[1] <= b->hi[1]) & (a->lo[2] <= b->hi[2]) & (b->lo[0] <= a->hi[0]) &
	       (b->lo[1] <= a->hi[1]) & (b->lo[2] <= a->hi[2]);
#endif
}

/// Per active entity: the box its last query used, and where the candidates it
/// found are kept. What a step's check of every changed entity reads, in one cache
/// line: how the box was grown lies apart (bpi_fat_growth).
typedef struct bpi_fat {
	float lo[3], hi[3];   ///< the fat box; lo[0] = +inf: none yet (query next step)
	bpi_rest_filter filter;  ///< the entity's filter when it queried
	uint32_t queried_at;  ///< the step of that query
	uint32_t buffer;      ///< candidates: the buffer they lie in,
	uint32_t first, count; ///< and their range in it
} bpi_fat;

/// How a fat box was grown from the bounds it was made around, which only the choice
/// of the next margin reads (incremental_margin.h). Meaningless while the fat box is
/// none.
typedef struct bpi_fat_growth {
	float margin;   ///< what the true bounds were enlarged by on every side
	float lead[3];  ///< and on top of it on one side per axis: max for > 0, min for < 0
	float drift[3]; ///< per axis, how far the box centre moved per step before that search
} bpi_fat_growth;

/// An entry for an entity that joins the active set: it queries on its first step.
static inline bpi_fat bpi_fat_none(void)
{
	return (bpi_fat){.lo = {INFINITY, 0, 0}};
}

#endif
