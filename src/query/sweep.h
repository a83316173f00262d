// SPDX-License-Identifier: MIT
// A ray or box cast as a sweep, its exact test against one box, and a cheaper test of a
// hierarchy block's lanes that never rejects a box the exact test would keep: walks prune
// with it and confirm each entity with the exact one, so answers are those of the exact test.
#ifndef BP_SWEEP_H
#define BP_SWEEP_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "query/query.h"

/// A box [lo, hi] moving along d for t in [0, max_t]; a ray has lo = hi = origin.
typedef struct sweep {
	float lo[3], hi[3];
	float d[3];
	float max_t;
	int dims;
	/// Every moving axis has a normal 1 / d, which the lane tests below multiply by.
	bool lanes_fast;
	bool still[3];                   ///< d == 0: the axis only asks for overlap
	float inv[3];                    ///< 1 / d, rounded
	float near_from[3], far_from[3]; ///< the sweep's bound that meets a box's near and far bound
	uint8_t near_row[3], far_row[3]; ///< the rows of a box's near and far bound (0-2 mins, 3-5 maxes)
} sweep;

/// Slab test of the sweep against box j; *t is the least t of contact (0 when
/// they overlap at the start). Along an axis with d > 0 the boxes touch for
/// t in [(blo - hi) / d, (bhi - lo) / d], mirrored for d < 0: the slab of box j
/// grown by the moving box, with one rounding per subtraction and no grown box
/// ever formed. Axes with d == 0 are tested as "overlapping already", which
/// avoids the 0 * inf NaN of the reciprocal form. For a ray these are the
/// values of the classic (blo - o) / d, (bhi - o) / d slab test, bit for bit.
static inline bool sweep_box(const bpi_box_arrays *b, const sweep *s, uint32_t j, float *t)
{
	float enter = 0.0f, leave = s->max_t;
	for (int axis = 0; axis < s->dims; ++axis) {
		const float blo = b->min[axis][j], bhi = b->max[axis][j], d = s->d[axis];
		float t1, t2;
		if (d == 0.0f) {
			if (s->hi[axis] < blo || s->lo[axis] > bhi)
				return false;
			continue;
		}
		if (d > 0.0f) {
			t1 = (blo - s->hi[axis]) / d;
			t2 = (bhi - s->lo[axis]) / d;
		} else {
			t1 = (bhi - s->lo[axis]) / d;
			t2 = (blo - s->hi[axis]) / d;
		}
		enter = t1 > enter ? t1 : enter;
		leave = t2 < leave ? t2 : leave;
		if (enter > leave)
			return false;
	}
	*t = enter;
	return true;
}

/// Fills the lane tests' form of a sweep whose lo, hi, d, max_t and dims are set.
static inline void sweep_prepare(sweep *s)
{
	s->lanes_fast = true;
	for (int a = 0; a < s->dims; ++a) {
		const float d = s->d[a], inv = 1.0f / d;
		const bool forward = d > 0.0f;
		s->still[a] = d == 0.0f;
		s->inv[a] = inv;
		s->near_row[a] = (uint8_t)(forward ? a : 3 + a);
		s->far_row[a] = (uint8_t)(forward ? 3 + a : a);
		s->near_from[a] = forward ? s->hi[a] : s->lo[a];
		s->far_from[a] = forward ? s->lo[a] : s->hi[a];
		s->lanes_fast = s->lanes_fast && (s->still[a] || isnormal(inv));
	}
}

/// Lanes [0, lanes) of a block (bvh.h: each bound a row of `lanes` floats, lanes 2 or 4) that
/// the sweep may touch at t <= bound, as bits; t[k] is at most lane k's exact entry. A product
/// by a rounded 1 / d is within two roundings of the quotient sweep_box rounds once (the
/// subtraction is the same), or a few subnormal steps of it, or infinite where the quotient
/// is about FLT_MAX: the span is widened by BPI_LANE_SLACK and BPI_LANE_FLOOR. The
/// entry only grows and the exit only shrinks as a box shrinks, so a block lane that fails
/// holds no box the exact test keeps.
#if defined(__SSE2__)
static inline __m128 sweep_row(const float *block, uint32_t lanes, uint32_t row)
{
	const float *p = block + (size_t)row * lanes;
	return lanes == 4 ? _mm_loadu_ps(p) : bpi_load_two(p);
}

static inline unsigned sweep_lanes(const float *block, uint32_t lanes, const sweep *s, float bound, float *t)
{
	__m128 enter = _mm_setzero_ps(), leave = _mm_set1_ps(s->max_t), apart = _mm_setzero_ps();
	for (int a = 0; a < s->dims; ++a) {
		if (s->still[a]) {
			apart = _mm_or_ps(apart, _mm_cmplt_ps(_mm_set1_ps(s->hi[a]), sweep_row(block, lanes, (uint32_t)a)));
			apart = _mm_or_ps(apart, _mm_cmpgt_ps(_mm_set1_ps(s->lo[a]), sweep_row(block, lanes, 3u + (uint32_t)a)));
			continue;
		}
		const __m128 inv = _mm_set1_ps(s->inv[a]);
		const __m128 t1 = _mm_mul_ps(_mm_sub_ps(sweep_row(block, lanes, s->near_row[a]), _mm_set1_ps(s->near_from[a])), inv);
		const __m128 t2 = _mm_mul_ps(_mm_sub_ps(sweep_row(block, lanes, s->far_row[a]), _mm_set1_ps(s->far_from[a])), inv);
		enter = _mm_max_ps(enter, t1);
		leave = _mm_min_ps(leave, t2);
	}
	// enter >= 0: it shrinks by its slack, first brought below infinity, where a product may
	// round whose quotient stays FLT_MAX; leave grows by its slack, kept -inf when it is.
	const __m128 below = _mm_set1_ps(BPI_LANE_FLOOR);
	enter = _mm_min_ps(enter, _mm_set1_ps(FLT_MAX));
	enter = _mm_sub_ps(_mm_mul_ps(enter, _mm_set1_ps(1.0f - BPI_LANE_SLACK)), below);
	const __m128 ahead = _mm_cmpgt_ps(leave, _mm_setzero_ps());
	const __m128 grow = _mm_or_ps(_mm_and_ps(ahead, _mm_set1_ps(1.0f + BPI_LANE_SLACK)),
		_mm_andnot_ps(ahead, _mm_set1_ps(1.0f - BPI_LANE_SLACK)));
	leave = _mm_add_ps(_mm_mul_ps(leave, grow), below);
	const __m128 meets = _mm_andnot_ps(apart, _mm_and_ps(_mm_cmple_ps(enter, leave), _mm_cmple_ps(enter, _mm_set1_ps(bound))));
	_mm_storeu_ps(t, enter);
	return (unsigned)_mm_movemask_ps(meets) & ((1u << lanes) - 1u);
}
#else
static inline unsigned sweep_lanes(const float *block, uint32_t lanes, const sweep *s, float bound, float *t)
{
	unsigned meets = 0;
	for (uint32_t k = 0; k < lanes; ++k) {
		float enter = 0.0f, leave = s->max_t;
		bool apart = false;
		for (int a = 0; a < s->dims; ++a) {
			const float *row_lo = block + (size_t)a * lanes, *row_hi = block + (size_t)(3 + a) * lanes;
			if (s->still[a]) {
				apart = apart || s->hi[a] < row_lo[k] || s->lo[a] > row_hi[k];
				continue;
			}
			const float t1 = (block[(size_t)s->near_row[a] * lanes + k] - s->near_from[a]) * s->inv[a];
			const float t2 = (block[(size_t)s->far_row[a] * lanes + k] - s->far_from[a]) * s->inv[a];
			enter = t1 > enter ? t1 : enter;
			leave = t2 < leave ? t2 : leave;
		}
		enter = (enter < FLT_MAX ? enter : FLT_MAX) * (1.0f - BPI_LANE_SLACK) - BPI_LANE_FLOOR;
		leave = leave * (leave > 0.0f ? 1.0f + BPI_LANE_SLACK : 1.0f - BPI_LANE_SLACK) + BPI_LANE_FLOOR;
		t[k] = enter;
		meets |= (unsigned)(!apart && enter <= leave && enter <= bound) << k;
	}
	return meets;
}
#endif

#endif
