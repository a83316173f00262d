// SPDX-License-Identifier: MIT
// What changed since the last step and since the last submit (docs/design.md "Incremental path"): the marks an
// incremental world keeps per dense index, for its steps and for its frames.
#include "world/world_data.h"

#include <string.h>

/// Puts d on one mark list; a list that cannot grow takes everything as marked,
/// so nothing is lost: the next step (or snapshot) takes every entity. `bounds`:
/// only d's bounds changed.
static void mark(bp_world *w, bpi_marks *marks, uint8_t bit, uint32_t d, bool bounds)
{
	marks->bounds_only = marks->bounds_only && bounds;
	if (marks->all || (w->changed[d] & bit))
		return;
	if (!bpi_array_grow(&marks->list, marks->count, (size_t)marks->count + 1)) {
		marks->all = true;
		return;
	}
	w->changed[d] |= bit;
	marks->list.data[marks->count++] = d;
}

/// Marks past this share of the capacity are cleared by one pass over every index, in
/// order, rather than one scattered write per mark (a world where most entities move
/// marks most of them every step). Every index: a marked one may lie past the count
/// since, destroyed from the end.
#define CLEAR_IN_ORDER_SHARE 8u

static void clear(bp_world *w, bpi_marks *marks, uint8_t bit)
{
	if ((uint64_t)marks->count * CLEAR_IN_ORDER_SHARE > w->capacity) {
		for (uint32_t d = 0; d < w->capacity; ++d)
			w->changed[d] &= (uint8_t)~bit;
	} else {
		for (uint32_t i = 0; i < marks->count; ++i)
			w->changed[marks->list.data[i]] &= (uint8_t)~bit;
	}
	marks->count = 0;
	marks->all = false;
	marks->bounds_only = true;
	marks->since_count = w->count;
}

static void mark_both(bp_world *w, uint32_t d, bool bounds)
{
	if (!w->incremental) {
		// No lists, but what a submit must copy: the bounds alone while only they change.
		w->frame_marks.bounds_only = w->frame_marks.bounds_only && bounds;
		return;
	}
	mark(w, &w->step_marks, BPI_MARK_STEP, d, bounds);
	mark(w, &w->frame_marks, BPI_MARK_FRAME, d, bounds);
}

void bpi_world_mark(bp_world *w, uint32_t d) { mark_both(w, d, false); }

void bpi_world_mark_frame(bp_world *w, uint32_t d)
{
	if (w->incremental)
		mark(w, &w->frame_marks, BPI_MARK_FRAME, d, false);
	else
		w->frame_marks.bounds_only = false;
}

void bpi_world_clear_frame_changes(bp_world *w)
{
	if (w->incremental)
		clear(w, &w->frame_marks, BPI_MARK_FRAME);
	else
		w->frame_marks.bounds_only = true;
}

void bpi_world_store_bounds(bp_world *w, uint32_t d, const float *min, const float *max)
{
	bool same = true;
	for (int axis = 0; axis < w->dims; ++axis) {
		// Bit for bit: -0.0 and 0.0 differ as stored values even though they compare equal.
		same = same && memcmp(&w->soa.min[axis][d], &min[axis], sizeof(float)) == 0 &&
		       memcmp(&w->soa.max[axis][d], &max[axis], sizeof(float)) == 0;
		w->soa.min[axis][d] = min[axis];
		w->soa.max[axis][d] = max[axis];
	}
	if (!same)
		mark_both(w, d, true);
}

void bpi_world_clear_changes(bp_world *w)
{
	if (w->incremental)
		clear(w, &w->step_marks, BPI_MARK_STEP);
}
