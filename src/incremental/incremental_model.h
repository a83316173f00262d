// SPDX-License-Identifier: MIT
// The cost model of incremental steps, from counted work only, so that the same history takes
// the same paths on every machine: which path a step takes, and when the moving state is
// entered, kept and left.
#ifndef BP_INCREMENTAL_MODEL_H
#define BP_INCREMENTAL_MODEL_H

#include "incremental/incremental_state.h"

/// A moving step gives up for a full one when more than this share of the entities
/// search.
#define BPI_MOVING_SEARCH_SHARE 0.1
/// After a stay of the moving state that did not pay, or a neighbour list, the full
/// steps before the next try double, from the least to the most. The first try waits
/// the least too: a world's first steps say little of its motion.
#define BPI_MOVING_WAIT_LEAST 16u
#define BPI_MOVING_WAIT_MOST 1024u

/// A moving state asked for whatever the model says: by the scene, or the test hook.
bool bpi_forced_moving(const bpi_scene *scene);
/// The test hook bpi_set_moving_always is on.
bool bpi_moving_always(void);

/// Whether the resting path is worth this step, judged before any work: the active
/// entities it would leave (`usable`: a resting index is there and the changes are
/// complete; without, those the next step would find active) are predicted to cost
/// at most a share of a full step. Also whether a full step keeps a resting index.
bool bpi_worth_resting(const bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes, bool usable);

/// Leaves the moving state: full steps follow, for longer after a short stay.
void bpi_leave_moving(bpi_incremental *x);

/// Counted work of the moving step just taken, by the model: what the next one is
/// predicted to cost. Searches of the first moving step, and of created entities,
/// do not count: they leave bounds held without a margin, or none.
double bpi_moving_work(const bpi_incremental *x, uint32_t searched);

/// Whether a moving state takes this step moving, leaving it when not.
bool bpi_stays_moving(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes);

/// Whether a try begun by the last step enters the moving state now: laid out from the
/// bounds that step kept, every entity active with them as its fat box, as if the
/// state had been entered then.
bool bpi_enters_moving(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes);

#endif
