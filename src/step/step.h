// SPDX-License-Identifier: MIT
// The stepper: what bp_world_step and the frame builder both run to turn entity state
// into pairs (plain or periodic), with the indexes and scratch it keeps across steps.
#ifndef BP_STEP_H
#define BP_STEP_H

#include "incremental/incremental.h"
#include "parallel/parallel.h"
#include "step/periodic.h"
#include "algorithms/pipeline.h"
#include "parallel/soa.h"

/// The settings a step runs with: a world's, or those a frame was submitted with.
typedef struct bpi_step_settings {
	int dims;
	bp_algorithm algorithm;
	int thread_count; ///< as requested; 0 = all cores
	bpi_executor executor; ///< where its loops run
	bool builder;          ///< run by the frame builder: thread_count 0 leaves the host a core
	bp_pair_filter_fn *pair_filter; ///< the host's last word on each pair, or NULL
	void *pair_filter_user;
	float cell_size;  ///< 0 = the algorithm's choice
	uint32_t debug_flags;
	bool incremental; ///< keep the pairs across steps; ignored when periodic
	float margin;     ///< incremental steps' fat-box margin; 0 = from observed motion
	float skin;       ///< incremental worlds' neighbour-list skin; 0 = none
	bool periodic;
	float period[3]; ///< when periodic; z unused in 2D
	/// Pairs sorted by (lo, hi): plain worlds sort after the step (world_step.c), an
	/// incremental step sorts a full step's pairs only when asked (its other paths
	/// merge sorted lists, so their pairs come sorted anyway).
	bool canonical_pairs;
	size_t memory_limit; ///< bytes of pair memory (bp_world_def.memory_limit); 0 = no limit
	/// Frames: how long the builder keeps making the query hierarchy after a reader's
	/// query (bp_world_def.query_hierarchy_frames); carried here with the world's settings.
	uint32_t query_hierarchy_frames;
} bpi_step_settings;

/// Everything a sequence of steps keeps: one index per algorithm, the periodic
/// scratch and the incremental state. Zero-initialised is empty. One per world,
/// one per frame builder, so a world's steps and its scheduler's builds never
/// share state.
typedef struct bpi_stepper {
	bpi_indexes indexes;
	bpi_periodic *periodic;
	bpi_incremental *incremental;
	bpi_budget *budget; ///< the owner's account for pair memory; set by the owner, NULL for none
} bpi_stepper;

/// Why a periodic step failed with BP_ERR_PERIODIC_EXTENT or BP_ERR_OUT_OF_RANGE.
typedef bpi_periodic_fault bpi_step_fault;

/// Finds the pairs of the first `count` entities of `soa` under `settings` into
/// `pairs`: the periodic pipeline when settings->periodic, else the incremental
/// step when settings->incremental and the caller knows what changed (`changes`
/// not NULL), else the plain pipeline. Fills every field of `stats` but frame,
/// ns_prepare (it adds its own) and ns_total. On error `pairs` is unchanged;
/// BP_ERR_PERIODIC_EXTENT and BP_ERR_OUT_OF_RANGE fill *fault. `unfiltered`: no entity is static,
/// filtered or a sphere.
/// Warning: one caller at a time per stepper.
bp_status bpi_stepper_run(bpi_stepper *stepper, const bpi_step_settings *settings, const bpi_soa *soa,
	uint32_t count, bool unfiltered, const bpi_changes *changes, bpi_pair_buffer *pairs, bp_frame_stats *stats,
	bpi_step_fault *fault);

/// The threads a step of `count` entities runs with (bp_world_def.thread_count).
int bpi_step_threads(const bpi_step_settings *settings, uint32_t count);
/// Test hook: steps of fewer than `count` entities run on the caller alone
/// (BP_SERIAL_STEP_ENTITIES by default; 0 lets the thread-count tests use every
/// thread on small scenes). Warning: call only while no step runs.
void bpi_set_serial_step_entities(uint32_t count);

/// Frees the indexes and scratch; the stepper is empty afterwards.
void bpi_stepper_free(bpi_stepper *stepper);

#endif
