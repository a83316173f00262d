// SPDX-License-Identifier: MIT
// The spatial index of a published frame: entities sorted by min along one axis, with sorted SoA
// copies of their bounds, so view queries scan a narrow run instead of every entity.
#ifndef BP_VIEW_INDEX_H
#define BP_VIEW_INDEX_H

#include "sort.h"
#include "soa.h"

/// Views with fewer entities than this get no index: the queries' linear scan
/// over the snapshot is as fast there and the build would be pure cost.
#define BPI_VIEW_INDEX_MIN_COUNT 256u

/// Built once per frame by the builder, read-only afterwards. Entry j is entity
/// order[j]; min[a][j] / max[a][j] are its bounds, and min[axis] ascends (ties
/// by dense index). Every entity's extent along `axis` is <= `extent` in exact
/// arithmetic (extent is rounded up), so in floats min + extent >= max.
typedef struct bpi_view_index {
	uint32_t count; ///< 0: no index (small view or build skipped); queries scan
	uint32_t capacity;
	int axis;
	float extent;
	uint32_t *order;
	float *min[3];
	float *max[3];
} bpi_view_index;

/// The builder's sort buffers, reused across frames (builder thread only).
typedef struct bpi_view_index_scratch {
	BPI_ARRAY(bpi_sort_item) items;
	bpi_radix_scratch radix;
	BPI_ARRAY(uint8_t) changed; ///< per entity, for an update from the last frame's index
} bpi_view_index_scratch;

/// The entities of a snapshot that differ from the last frame's (an update's input).
typedef struct bpi_view_index_changes {
	const bpi_view_index *prev; ///< the last frame's index, over previous_count entities
	uint32_t previous_count;
	const uint32_t *list; ///< indices whose bounds may differ, each once; those >= previous_count are new
	uint32_t count;
} bpi_view_index_changes;

/// Builds the index of the first `count` entities of `soa` into `index`,
/// reusing its arrays. Views below BPI_VIEW_INDEX_MIN_COUNT get count = 0.
/// BP_ERR_OUT_OF_MEMORY leaves count = 0 (queries still answer, by scanning).
bp_status bpi_view_index_build(bpi_view_index *index, bpi_view_index_scratch *scratch, const bpi_soa *soa,
	uint32_t count, int dims, int threads);
/// As bpi_view_index_build, from the last frame's index when few entities
/// changed: its order, less the changed entities, merged with theirs sorted
/// afresh, and its sorted bound copies streamed rather than gathered. The
/// result is the index bpi_view_index_build makes, entry for entry (the order
/// by (min, dense index) is unique). Falls back to the full build when the
/// sorting axis moved or too much changed.
bp_status bpi_view_index_update(bpi_view_index *index, bpi_view_index_scratch *scratch, const bpi_soa *soa,
	uint32_t count, int dims, int threads, const bpi_view_index_changes *changes);
void bpi_view_index_free(bpi_view_index *index, int dims);
void bpi_view_index_scratch_free(bpi_view_index_scratch *scratch);

/// First j in [0, index->count) with fl(min[axis][j] + extent) >= x: every
/// entity whose max along the axis is >= x lies at or after it.
uint32_t bpi_view_index_lower(const bpi_view_index *index, float x);
/// First j with min[axis][j] > x: every entity whose min is <= x lies before it.
uint32_t bpi_view_index_upper(const bpi_view_index *index, float x);

#endif
