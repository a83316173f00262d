// SPDX-License-Identifier: MIT
// The cost model of incremental steps (incremental_model.h): the prices of counted work, and
// the choices made from them, of the path a step takes and of entering, keeping and leaving
// the moving state.
#include "incremental/incremental_model.h"

#include <math.h>
#include <stdatomic.h>

/// A step takes the full path when the active entities are predicted to cost
/// more than this fraction of a full step: a rebuild then empties the active set.
#define INCREMENTAL_REBUILD_FRACTION 0.5
/// The cost model, from counted work only, so that the same history takes the
/// same paths on every machine: a full step costs this much per entity, an
/// incremental one this much per active entity (perf/results/2core/incremental.csv:
/// the full grid rows, and the churn rows, whose changed entities cost the most).
#define INCREMENTAL_FULL_COST 150.0
#define INCREMENTAL_ACTIVE_COST 1000.0

/// The model of the moving state, from counted work only (perf/README.md,
/// "Incremental: moving worlds"): a full step costs so much per entity and per pair;
/// a moving step per entity, per kept pair re-tested, per entity that searched and
/// per row its sweep read, per entity again when the searchers' columns were laid out
/// anew and per row of the extra list laid out on their bands, and a step that found
/// every kept pair again as much as a full step with those pairs. A moving step is
/// taken while the moving steps so far are predicted at most MOVING_FRACTION of a full one.
#define FULL_ENTITY_COST 57.0
#define FULL_PAIR_COST 28.0
#define MOVING_ENTITY_COST 25.0
#define MOVING_KEPT_COST 4.0
#define MOVING_SEARCH_COST 600.0
#define MOVING_ROW_COST 2.0
#define MOVING_LAYOUT_COST 25.0
#define MOVING_FRACTION 0.7
/// The first moving step is not taken when finding the pairs of the fat boxes would
/// cost more than this many full steps.
#define MOVING_ENTRY_MOST 2.0
/// How the first moving step predicts an entity's margin: so many steps of its motion,
/// at most so many of its extents (incremental_margin.c chooses them so).
#define MOVING_ENTRY_STEPS 8.0f
#define MOVING_ENTRY_EXTENTS 0.5f
/// A stay of at least this many moving steps paid for its start (BPI_MOVING_WAIT_LEAST).
#define MOVING_PAYS_STEPS 8u

static _Atomic bool moving_always = false;

void bpi_set_moving_always(bool on) { atomic_store(&moving_always, on); }

bool bpi_forced_moving(const bpi_scene *scene)
{
	return (scene->debug_flags & BP_DEBUG_ALWAYS_INCREMENTAL) ||
	       atomic_load_explicit(&moving_always, memory_order_relaxed);
}

bool bpi_moving_always(void) { return atomic_load_explicit(&moving_always, memory_order_relaxed); }

void bpi_leave_moving(bpi_incremental *x)
{
	x->moving = x->resting_valid = false;
	uint32_t doubled = x->moving_backoff ? 2 * x->moving_backoff : BPI_MOVING_WAIT_LEAST;
	x->moving_backoff = x->moving_steps >= MOVING_PAYS_STEPS ? BPI_MOVING_WAIT_LEAST
							   : BP_MIN(doubled, BPI_MOVING_WAIT_MOST);
	x->moving_wait = x->moving_backoff;
}

double bpi_moving_work(const bpi_incremental *x, uint32_t searched)
{
	const bpi_active_pairs *a = &x->among;
	if (x->moving_steps == 0)
		searched = 0;
	double work = MOVING_ENTITY_COST * x->active_count + MOVING_KEPT_COST * a->kept_count +
		      MOVING_SEARCH_COST * searched + MOVING_ROW_COST * a->rows_read +
		      (a->laid_out ? MOVING_LAYOUT_COST * x->active_count : 0) + MOVING_LAYOUT_COST * a->extra_laid;
	if (a->found_all && x->moving_steps)
		work += FULL_ENTITY_COST * x->active_count + FULL_PAIR_COST * a->kept_count;
	return work;
}

/// What a full step is predicted to cost, by the same model.
static double full_work(uint32_t count, size_t pairs)
{
	return FULL_ENTITY_COST * count + FULL_PAIR_COST * pairs;
}

/// The scene as the entry's bounds saw it: those bounds for the entities that are
/// still there, today's filters (the pairs of the first moving step are found again
/// from them).
static bpi_scene entry_scene(const bpi_incremental *x, const bpi_scene *scene)
{
	bpi_scene at_entry = *scene;
	at_entry.count = BP_MIN(x->entry_count, scene->count);
	for (int axis = 0; axis < scene->dims; ++axis) {
		at_entry.min[axis] = x->entry_bounds.data + (size_t)(2 * axis) * x->entry_count;
		at_entry.max[axis] = at_entry.min[axis] + x->entry_count;
	}
	return at_entry;
}


/// Whether the first moving step is worth finding every pair of the fat boxes it is
/// about to make: the kept pairs are predicted from the pairs of the last step,
/// scaled on each axis by how much wider the fat boxes will be than the bounds, as is
/// the chance that two boxes meet. Each changed entity's margin is predicted from how
/// far it moved out of its bounds of the last step (kept by bpi_begin_entry), as
/// bpi_margin_of_own_motion takes it, stretch included; counted before that work, so
/// a world that moves too far pays one pass over the changes for the try. Finding the pairs costs
/// a full step with that many pairs, and the steps after re-test them. An entity whose
/// motion reaches past the most margin it can take leaves its fat box within a few
/// steps, searching again each time: when those searches would pass the share at
/// which a moving step gives up, the try would end at once.
static bool worth_entering(const bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes)
{
	const uint32_t n = scene->count, held = BP_MIN(x->entry_count, n);
	const int dims = scene->dims;
	const bpi_scene before = entry_scene(x, scene);
	double extent_sum[3] = {0, 0, 0}, margin_sum = 0, searches = 0;
	// As the first step's margins take them: stretched as the last stay's fat boxes steered.
	const float steps = MOVING_ENTRY_STEPS * bpi_margin_stretch(&x->cross.margin);
	for (int axis = 0; axis < dims; ++axis)
		for (uint32_t i = 0; i < n; ++i)
			extent_sum[axis] += (double)scene->max[axis][i] - scene->min[axis][i];
	for (uint32_t c = 0; c < changes->count; ++c) {
		uint32_t k = changes->list[c];
		if (k >= n)
			continue;
		float moved = 0, extent = 0;
		for (int axis = 0; axis < dims; ++axis) {
			extent = fmaxf(extent, scene->max[axis][k] - scene->min[axis][k]);
			if (k < held)
				moved = fmaxf(moved, fmaxf(fabsf(scene->min[axis][k] - before.min[axis][k]),
							     fabsf(scene->max[axis][k] - before.max[axis][k])));
		}
		float most = MOVING_ENTRY_EXTENTS * extent;
		bool known = k < held && moved <= most;
		margin_sum += known ? fminf(steps * moved, most) : most;
		// Searches per step: one per the steps its margin lasts, when it is capped
		// (most > 0 there: a known entity with most 0 did not move).
		if (!known || !(steps * moved <= most))
			searches += known ? moved / most : 1.0;
	}
	double grown = 1;
	for (int axis = 0; axis < dims; ++axis)
		grown *= extent_sum[axis] > 0 ? (extent_sum[axis] + 2 * margin_sum) / extent_sum[axis] : 1;
	double kept = grown * (double)x->moving_pairs, full = full_work(n, x->moving_pairs);
	return searches <= BPI_MOVING_SEARCH_SHARE * n &&
	       MOVING_ENTITY_COST * n + MOVING_KEPT_COST * kept + MOVING_SEARCH_COST * searches <= MOVING_FRACTION * full &&
	       full_work(n, (size_t)kept) <= MOVING_ENTRY_MOST * full;
}

/// The most entities this step can leave active: those active now and the
/// changed ones not among them. Counted, O(changes).
static uint32_t active_bound(const bpi_incremental *x, const bpi_changes *changes, uint32_t n)
{
	const uint32_t known = BP_MIN(changes->previous_count, (uint32_t)x->is_active.capacity);
	uint32_t joining = 0;
	for (uint32_t c = 0; c < changes->count; ++c) {
		uint32_t i = changes->list[c];
		joining += i < n && (i >= known || !x->is_active.data[i]);
	}
	return x->active_count + joining;
}

bool bpi_worth_resting(const bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes, bool usable)
{
	bool forced_full = scene->debug_flags & BP_DEBUG_ALWAYS_FULL;
	bool forced_incremental = scene->debug_flags & BP_DEBUG_ALWAYS_INCREMENTAL;
	// The cheaper path by the model, judged before any work; without a resting
	// index, on the entities the next step would find active.
	uint32_t active = changes->all ? scene->count
			  : usable     ? active_bound(x, changes, scene->count)
				       : changes->count;
	double active_cost = INCREMENTAL_ACTIVE_COST * active;
	return !forced_full &&
	       (forced_incremental || active_cost <= INCREMENTAL_REBUILD_FRACTION * INCREMENTAL_FULL_COST * scene->count);
}

bool bpi_stays_moving(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes)
{
	if (!x->moving)
		return false;
	bool forced_full = scene->debug_flags & BP_DEBUG_ALWAYS_FULL;
	bool forced_incremental = scene->debug_flags & BP_DEBUG_ALWAYS_INCREMENTAL;
	bool cheaper = x->moving_work <= MOVING_FRACTION * full_work(scene->count, x->moving_pairs);
	bool always = atomic_load_explicit(&moving_always, memory_order_relaxed);
	if (!changes->all && !forced_full && (cheaper || forced_incremental || always))
		return true;
	bpi_leave_moving(x);
	return false;
}

bool bpi_enters_moving(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes)
{
	if (!x->entering)
		return false;
	x->entering = false;
	x->moving_steps = 0;
	const bpi_scene before = entry_scene(x, scene);
	if (changes->all || (scene->debug_flags & BP_DEBUG_ALWAYS_FULL) ||
		(!bpi_forced_moving(scene) && !worth_entering(x, scene, changes)) || !bpi_every_active(x, &before, 0.0f, false)) {
		bpi_leave_moving(x);
		return false;
	}
	x->moving_work = 0;
	x->moving = x->resting_valid = true;
	return true;
}
