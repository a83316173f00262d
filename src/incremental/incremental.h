// SPDX-License-Identifier: MIT
// Incremental steps (docs/design.md "Incremental path"): a resting index of the entities that did not change, with
// the pairs among them, so a step finds only the pairs of the entities that did.
#ifndef BP_INCREMENTAL_H
#define BP_INCREMENTAL_H

#include "algorithms/pipeline.h"

/// State kept across incremental steps; created on first use, freed with
/// bpi_incremental_free.
typedef struct bpi_incremental bpi_incremental;

/// What changed since the last successful step, in the current dense numbering.
typedef struct bpi_changes {
	const uint32_t *list;    ///< dense indices that changed, each once, any order
	uint32_t count;
	uint32_t previous_count; ///< entities at the last successful step
	bool all;                ///< the list is incomplete: take every entity as changed
	bool bounds_only;        ///< of the listed entities only the bounds changed
} bpi_changes;

/// Finds every pair of `scene` into `pairs`: from the pairs and index kept since
/// the last step plus those of the changed entities, sorted by (lo, hi), or in full
/// when that is predicted cheaper (or nothing is kept yet). A full step that keeps
/// nothing for the next one runs `algorithm`, as the plain world would, and leaves
/// its pairs in that algorithm's order unless `sorted`; one that keeps sorts them,
/// as its next steps merge with them. Fills stats like bpi_pipeline_run, and
/// changed_count. On error `pairs` is unchanged and the next step takes the full path.
/// Warning: one caller at a time per state; `changes` must describe every
/// change since the last successful call with this state.
bp_status bpi_incremental_step(bpi_incremental **state, const bpi_scene *scene, const bpi_changes *changes,
	bp_algorithm algorithm, bool sorted, bpi_pair_buffer *pairs, bp_frame_stats *stats);

/// Forgets what the state kept: the next step takes the full path. For a caller
/// whose step succeeded but whose frame did not, so the changes it will pass next
/// are not measured from the state's last step. NULL is ignored.
void bpi_incremental_forget(bpi_incremental *state);

/// Test hook: active entities that did not change settle once at least `count`
/// of them (1,024 by default) are there. Warning: call only while no step runs.
void bpi_set_settle_min(uint32_t count);

/// Test hook: every full step leaves the state moving and a moving state stays so,
/// whatever the model predicts. Warning: call only while no step runs.
void bpi_set_moving_always(bool on);

/// Frees the state. NULL is ignored.
void bpi_incremental_free(bpi_incremental *state);

#endif
