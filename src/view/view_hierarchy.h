// SPDX-License-Identifier: MIT
// A view's query hierarchy in two parts. The shared part is built once over the entities of
// some frame and shared, read-only and reference-counted, by the views of the frames after it;
// the changed part is rebuilt each frame over the entities whose bounds changed since the
// shared part was built, or that it never held. A frame's hierarchy then costs what changed.
#ifndef BP_VIEW_HIERARCHY_H
#define BP_VIEW_HIERARCHY_H

#include <stdatomic.h>

#include "base/bits.h"
#include "tree/bvh.h"

/// Views with fewer entities get no hierarchy: their queries scan.
#define BPI_HIERARCHY_MIN_COUNT 256u

/// Built over all entities of one frame; freed by the last view that drops it.
typedef struct bpi_bvh_shared {
	atomic_uint refs;
	uint32_t count; ///< the entities of that frame: dense indices below this
	bpi_bvh bvh;
} bpi_bvh_shared;

/// A view's hierarchy. Entity e of the shared part is out of date when e >= count or bit e
/// of `changed` is set; the changed part holds exactly the entities below count that are
/// out of date or past the shared part's count, with their bounds of this frame.
typedef struct bpi_view_hierarchy {
	bpi_bvh_shared *shared;      ///< NULL: no hierarchy (small view, none made, no memory)
	uint32_t count;              ///< the view's entities
	/// Some entity's category, mask or flags changed since the shared part's summaries
	/// were made: a refit of it gathers them again.
	bool filters_changed;
	/// Where the pool keeps one dropped shared part, whose arrays the next new one takes
	/// rather than fresh pages (NULL: dropped parts are freed). Set at creation.
	_Atomic(bpi_bvh_shared *) *retired;
	BPI_ARRAY(uint64_t) changed; ///< one bit per entity of the shared part
	BPI_ARRAY(uint32_t) members; ///< the changed part's entities, ascending
	uint32_t member_count;
	bpi_bvh changed_part;
} bpi_view_hierarchy;

/// One part as a query walks it: entity order[p] of bvh is skipped when bpi_part_skips says so.
typedef struct bpi_bvh_part {
	const bpi_bvh *bvh;
	const uint64_t *changed; ///< NULL: none skipped
	uint32_t count;
} bpi_bvh_part;

static inline bool bpi_part_skips(const bpi_bvh_part *part, uint32_t e)
{
	return part->changed && (e >= part->count || bpi_bit_get(part->changed, e));
}

/// The parts a query walks, into parts[0 .. return): 0 when there is no hierarchy.
int bpi_hierarchy_parts(const bpi_view_hierarchy *hy, bpi_bvh_part parts[2]);

/// What differs between the last frame's snapshot and this one's.
typedef struct bpi_hierarchy_changes {
	const bpi_view_hierarchy *prev; ///< the last frame's hierarchy; NULL: none
	const uint32_t *list;           ///< dense indices whose bounds may differ, each once
	uint32_t count;
	bool bounds_only; ///< of the listed entities only the bounds changed
} bpi_hierarchy_changes;

/// Makes the hierarchy of the first `count` entities of soa: from the last frame's
/// shared part when `changes` names one and its out-of-date entities stay few, else a new
/// shared part over all: the last one's shape refit (a copy: readers may walk it) when it
/// covers as many entities and its cost says it still fits, or built. The builds work in
/// `scratch`, which only the caller uses, as readers walk the parts of earlier frames
/// meanwhile. BP_ERR_OUT_OF_MEMORY leaves no hierarchy.
bp_status bpi_view_hierarchy_make(bpi_view_hierarchy *hy, const bpi_hierarchy_changes *changes, const bpi_soa *soa,
	uint32_t count, int dims, bpi_bvh_scratch *scratch, int threads);
/// Drops the hierarchy (its shared part's reference) and keeps the arrays for the next frame.
void bpi_view_hierarchy_clear(bpi_view_hierarchy *hy);
void bpi_view_hierarchy_free(bpi_view_hierarchy *hy);
/// Frees the shared part a pool's `retired` slot keeps, once no view can drop one there.
void bpi_view_hierarchy_retired_free(_Atomic(bpi_bvh_shared *) *retired);

/// Test hook: views below `count` entities get no hierarchy, and a shared part is rebuilt
/// once more than 1 / share of the entities is out of date in it (share 1: never).
void bpi_set_hierarchy_rules(uint32_t count, uint32_t share);
/// Test hook: a new shared part over as many entities as the last is that part refit
/// while the last's cost is within `percent` of its cost when built (0: never refit,
/// UINT32_MAX: always).
void bpi_set_hierarchy_refit(uint32_t percent);

#endif
