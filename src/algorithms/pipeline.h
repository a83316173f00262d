// SPDX-License-Identifier: MIT
// One algorithm over one plain scene: choose, create, build, find, merge, stats, probes, fallback.
#ifndef BP_PIPELINE_H
#define BP_PIPELINE_H

#include "algorithms/index.h"

typedef struct bpi_statics bpi_statics;

/// One index per algorithm, created on first use and kept across steps so that
/// algorithms with state (sap's order, quadtree's tree) can reuse it, and the tree of
/// the static entities (statics.h), made by the first scene that has filters.
typedef struct bpi_indexes {
	bpi_index *of[BP_ALGO_COUNT];
	bpi_statics *statics;
} bpi_indexes;

/// Frees every index; the set is empty afterwards.
void bpi_indexes_free(bpi_indexes *indexes);

/// Runs `requested` (AUTO resolved from the scene; AUTO falls back to sap when
/// the chosen algorithm cannot lay cells over the bounds) with its index from
/// `indexes`, created on first use, and writes the pairs into `pairs`. A scene with
/// few dynamic entities splits (statics.h): the algorithm sees those alone, and the
/// pairs are theirs in its order, then their pairs with static entities, the dynamic
/// entities in Morton order. Fills stats' algorithm, thread_count, entity_count, candidate_tests, pair_count,
/// cell fields, ns_build, ns_find and ns_merge. On error `pairs` is unchanged.
/// Warning: one caller at a time per index set.
bp_status bpi_pipeline_run(bpi_indexes *indexes, bp_algorithm requested, const bpi_scene *scene,
	bpi_pair_buffer *pairs, bp_frame_stats *stats);

#endif
