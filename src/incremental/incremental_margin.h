// SPDX-License-Identifier: MIT
// How far an active entity's fat box reaches past its bounds: the world's margin, or one
// chosen from the motion observed, stretched while many fat boxes are left each step and
// shrunk while few are, plus a lead on the side a steadily moving entity moves to.
#ifndef BP_INCREMENTAL_MARGIN_H
#define BP_INCREMENTAL_MARGIN_H

#include "incremental/incremental_fat.h"

/// What one chunk saw: the entities that searched, and per search of one that had
/// a fat box, how far its bounds moved per step since that box was made, and its
/// extent.
#define BPI_MARGIN_SAMPLES 16
typedef struct bpi_margin_tally {
	uint32_t searched;
	uint32_t escaped; ///< searched because the bounds left their fat box (or the filter changed)
	uint32_t count;
	float speed[BPI_MARGIN_SAMPLES];
	float extent[BPI_MARGIN_SAMPLES];
} bpi_margin_tally;

/// The motion observed across steps. Zero-initialised is none seen yet.
typedef struct bpi_margin {
	float speed;   ///< observed motion per step (bounds units), blended; 0 = none yet
	float extent;  ///< typical extent of the entities that moved, blended
	float stretch; ///< factor on the margin's steps, steered by the fat boxes left; 0 = 1
	BPI_ARRAY(float) gathered; ///< scratch: the samples of one step
} bpi_margin;

/// Notes how far an entity moved per step since its fat box `f` was made, now at
/// `b` in step `now`; nothing for an entity without one, or one that jumped.
void bpi_margin_sample(bpi_margin_tally *tally, const bpi_fat *f, const bpi_fat_growth *g, const bpi_box3 *b, int dims,
	uint32_t now);
/// Notes how far an entity moved from `rested`, its bounds in the resting index, now
/// at `b`: taken as one step's motion, as a resting entity that changes has most
/// likely just started to move.
void bpi_margin_sample_rest(bpi_margin_tally *tally, const bpi_box3 *rested, const bpi_box3 *b, int dims);
/// Per axis, the motion per step of the box centre since the entity's last search
/// (drift), and the lead its next fat box takes from it: none when `setting` (the
/// world's margin) is not 0, or the motion was not steady.
void bpi_margin_lead(const bpi_fat *f, const bpi_fat_growth *g, const bpi_box3 *b, int dims, uint32_t now, float setting,
	float lead[3], float drift[3]);
/// Folds one step's tallies (one per chunk) into the estimates; `held` fat boxes
/// existed at the step's start, in a `moving` world (incremental_moving.c) or not.
void bpi_margin_observe(bpi_margin *m, const bpi_margin_tally *tallies, uint32_t chunks, uint32_t held,
	bool moving);
/// The margin the next searches use: the setting, or from the motion observed.
float bpi_margin_value(const bpi_margin *m, float setting);
/// The factor on the steps of motion a margin from observed motion spans (1 until
/// the fat boxes left steer it), as the next searches take it.
float bpi_margin_stretch(const bpi_margin *m);
/// The margin of an entity that left its fat box `f`, now at `b`, from its own motion
/// since `f` was made, as the world's margin is from all of it; `world` when it had
/// none or jumped. So a still entity's box stays tight and a fast one's reaches far.
/// `who` (its position) spreads the steps a little from entity to entity.
float bpi_margin_of_own_motion(const bpi_margin *m, const bpi_fat *f, const bpi_fat_growth *g, const bpi_box3 *b, int dims,
	uint32_t now, float world, uint32_t who);
/// The chosen margin `world` as one entity with bounds `b` takes it: at most its
/// own share of its extent, so a few large fast entities do not widen the fat
/// boxes of the many small ones.
float bpi_margin_own(float world, const bpi_box3 *b, int dims);
void bpi_margin_free(bpi_margin *m);
/// Test hook: the steps of its own motion a steady entity's fat box leads by (8;
/// 0: none). Warning: call only while no step runs.
void bpi_set_margin_lead_steps(uint32_t steps);

#endif
