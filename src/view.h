// SPDX-License-Identifier: MIT
// A published frame (bp_view): its layout, and what the builder derives from a snapshot.
#ifndef BP_VIEW_H
#define BP_VIEW_H

#include <broadphase/frame.h>
#include <stdatomic.h>
#include "soa.h"
#include "step.h"
#include "view_index.h"

/// One frame buffer: the snapshot copied on submit plus everything the builder
/// derives from it. Owned by the scheduler's pool (scheduler.c); handed to
/// readers as bp_view. Arrays keep their capacity when the buffer is recycled,
/// so steady state allocates nothing.
struct bp_view {
	atomic_uint refs; ///< readers + 1 while it is the latest frame
	struct bpi_frames *pool;
	uint64_t number;

	// Snapshot (copied on submit) and the settings of the world at submit.
	int dims;
	uint32_t count;
	uint32_t capacity; ///< entities the arrays below have room for
	bpi_soa soa;
	bool unfiltered;
	bpi_step_settings settings;

	// Built by the builder.
	bpi_pair_buffer pairs;          ///< sorted by (lo, hi)
	BPI_ARRAY(bp_pair) scratch;     ///< counting-sort scratch
	uint32_t *offsets;              ///< CSR: neighbours of e are neighbours[offsets[e] .. offsets[e + 1])
	BPI_ARRAY(uint32_t) neighbours;
	BPI_ARRAY(bp_key_pair) keys;    ///< key pairs sorted by (a, b), pairs.count of them
	BPI_ARRAY(bp_key_pair) began, ended;
	size_t began_count, ended_count;
	bpi_view_index index; ///< spatial index for the box, point, sphere, ray and nearest queries
	bp_frame_stats stats;
};

/// Room for n entities in every per-entity array; all grow or none does.
bool bpi_view_reserve(bp_view *view, uint32_t n);
/// Frees the buffer and everything in it.
void bpi_view_free(bp_view *view);

/// Derives the view's extras from its (freshly found) pairs: sorts them by
/// (lo, hi), builds the adjacency, the sorted key pairs, the pairs begun and
/// ended since `prev` (NULL: none before) and the query index (which may fail
/// to build for lack of memory: queries then scan), updated from prev's when
/// `changed` lists what differs from prev's snapshot (NULL: built afresh). On
/// error the view must not be published. Builder thread only.
bp_status bpi_view_derive(bp_view *view, const bp_view *prev, const uint32_t *changed, uint32_t changed_count,
	bpi_view_index_scratch *index_scratch, int threads);

#endif
