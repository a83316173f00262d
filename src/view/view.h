// SPDX-License-Identifier: MIT
// A published frame (bp_view): its layout, and what the builder derives from a snapshot.
#ifndef BP_VIEW_H
#define BP_VIEW_H

#include <broadphase/frame.h>
#include <pthread.h>
#include <stdatomic.h>
#include "parallel/soa.h"
#include "step/step.h"
#include "view/view_hierarchy.h"

/// bp_view.refs: the readers' references, plus this bit while the buffer is the
/// latest frame. Kept apart so that a release finding no reader reference left
/// is known to be one too many (frame.h), even while the frame is the latest.
#define BPI_VIEW_LATEST 0x80000000u

/// A pair named by its entities' handles (as 64-bit ids, a < b), with their
/// dense indices in the view it belongs to.
typedef struct bpi_named_pair {
	uint64_t a, b;
	uint32_t dense_a, dense_b;
} bpi_named_pair;

/// One frame buffer: the snapshot copied on submit plus everything the builder
/// derives from it. Owned by the scheduler's pool (scheduler.c); handed to
/// readers as bp_view. Arrays keep their capacity when the buffer is recycled,
/// so steady state allocates nothing.
struct bp_view {
	atomic_uint refs; ///< readers, plus BPI_VIEW_LATEST while it is the latest frame
	struct bpi_frames *pool;
	bpi_budget *budget; ///< the pool's: charged with the pairs and every array derived from them
	uint64_t number;

	// Snapshot (copied on submit) and the settings of the world at submit.
	int dims;
	uint32_t count;
	uint32_t capacity; ///< entities the arrays below have room for
	bpi_soa soa;
	bool unfiltered;
	bool world_view; ///< bp_world_view's: no pairs, never published
	uint64_t layout; ///< the world's layout at submit: equal values, same handle at each dense index
	bpi_step_settings settings;
	/// The submit whose entities the arrays hold (0: none yet), so a later submit
	/// into this buffer copies only what changed since.
	uint64_t content;
	/// For the builder: entities that may differ from the snapshot of submit
	/// changes_since (the one handed to the builder before this one), each at
	/// least once. changes_all: unknown, the builder compares the snapshots.
	BPI_ARRAY(uint32_t) changes;
	uint32_t changes_count;
	bool changes_all;
	bool changes_bounds_only; ///< of those, every one changed its bounds alone
	uint64_t changes_since;

	// Built by the builder.
	bpi_pair_buffer pairs;          ///< sorted by (lo, hi)
	BPI_ARRAY(bp_pair) scratch;     ///< the pair sort's, then the event merge's (this and the last frame's pairs)
	uint32_t *offsets;              ///< CSR: neighbours of e are neighbours[offsets[e] .. offsets[e + 1])
	BPI_ARRAY(uint32_t) neighbours;
	BPI_ARRAY(bpi_named_pair) names; ///< the pairs by handle, sorted, pairs.count of them (BPI_VIEW_NAMES)
	BPI_ARRAY(bp_pair_event) began, ended;
	BPI_ARRAY(bp_key_pair) began_keys, ended_keys; ///< the same, as key pairs sorted by (a, b) (BPI_VIEW_KEYS)
	size_t began_count, ended_count;
	uint64_t previous; ///< the published frame the events are counted from; 0: none
	bpi_view_hierarchy hierarchy; ///< for the rays, casts, list queries and nearest
	bp_frame_stats stats;

	/// Dense index by handle slot (index1 - 1), NOWHERE where none: made on first
	/// use (BPI_VIEW_SLOTS), then kept by later submits into this buffer while
	/// slots_kept (view_slots.c). Read only where the entity at that index has
	/// the handle asked for.
	BPI_ARRAY(uint32_t) slot_dense;
	uint32_t slot_span;
	bool slots_kept;

	// The hierarchy, the adjacency and the events' names are made by the builder when
	// the last frame's were used, else by the first reader that needs them
	// (bpi_view_ensure), and are read only once their `ready` bit is set.
	atomic_uint ready;         ///< BPI_VIEW_* made
	atomic_uint asked;         ///< BPI_VIEW_* some reader needed: the builder makes the next frame's
	/// The pool's: the latest frame whose hierarchy a reader asked for. The builder makes
	/// the hierarchy of the settings.query_hierarchy_frames + 1 frames after it, whether the
	/// ask reached a frame before or after the builder looked at the next one.
	_Atomic uint64_t *hierarchy_asked;
	pthread_mutex_t lazy_lock; ///< one lazy build at a time
	bp_status adjacency_status; ///< how the adjacency's build went, once made
};

/// The extras a view makes on first use.
enum { BPI_VIEW_ADJACENCY = 2u, BPI_VIEW_NAMES = 4u, BPI_VIEW_KEYS = 8u, BPI_VIEW_HIERARCHY = 16u,
	BPI_VIEW_SLOTS = 32u, BPI_VIEW_EVENT_NAMES = 64u };

/// Whether the builder makes the query hierarchy of `view`, the frame after `prev`: a reader
/// queried a frame within the frames the world keeps it for (prev among them).
bool bpi_view_keeps_hierarchy(const bp_view *view, const bp_view *prev);

/// A new, empty frame buffer of `pool`, or NULL without memory; `hierarchy_asked` and
/// `retired` are the pool's (bp_view.hierarchy_asked, bpi_view_hierarchy.retired).
bp_view *bpi_view_create(struct bpi_frames *pool, _Atomic uint64_t *hierarchy_asked,
	_Atomic(bpi_bvh_shared *) *retired, int dims);

/// Room for n entities in every per-entity array; all grow or none does.
bool bpi_view_reserve(bp_view *view, uint32_t n);
/// Frees the buffer and everything in it.
void bpi_view_free(bp_view *view);

/// Derives the view's extras from its (freshly found) pairs: sorts them by
/// (lo, hi), finds the pairs begun and ended since `prev` (NULL: none before)
/// and, those of prev's that a reader asked for, the
/// adjacency and the query hierarchy (which may fail to build for lack of
/// memory: queries then scan), taking prev's shared part when `changes` lists what
/// differs from prev's snapshot (NULL: built afresh; its prev is set here). On error the view must not
/// be published. `hierarchy`: whether to make the query hierarchy, as
/// bpi_view_keeps_hierarchy(prev) said when the builder chose what changed; its builds
/// work in the builder's `scratch`, kept from frame to frame.
/// *ns_hierarchy: the time the hierarchy took, 0 when none was made. `sorted`: the step
/// left the pairs in canonical order, so they are not checked. The building thread only.
bp_status bpi_view_derive(bp_view *view, const bp_view *prev, const bpi_hierarchy_changes *changes, bool hierarchy,
	bool sorted, bpi_bvh_scratch *scratch, int threads, uint64_t *ns_hierarchy);

/// Derives a world view (bp_world_view): no pairs, so no events, and its query hierarchy
/// made at once, from `prev`'s shared part when `changes` lists what differs from prev's
/// snapshot, as bpi_view_derive makes it. The building thread only.
void bpi_view_derive_queries(bp_view *view, const bp_view *prev, const bpi_hierarchy_changes *changes,
	bpi_bvh_scratch *scratch, int threads);

/// The pairs begun and ended since `prev` (NULL: every pair began). When prev's
/// layout differs it names both frames' pairs by handle (view->names, and prev's
/// through bpi_view_ensure). *made: the extras it made (BPI_VIEW_NAMES, and
/// BPI_VIEW_EVENT_NAMES unless the events stay dense pairs, to be named on first use
/// from the view's own handles and keys, which are prev's). The building thread only
/// (view_events.c).
bp_status bpi_view_events_build(bp_view *view, const bp_view *prev, unsigned *made, int threads);
/// The extras of view_events.c made on first use: the names (BPI_VIEW_NAMES), the
/// events by handle (BPI_VIEW_EVENT_NAMES) and the events as key pairs
/// (BPI_VIEW_KEYS). Under the view's lazy lock.
bp_status bpi_view_names_build(bp_view *view);
bp_status bpi_view_events_name(bp_view *view);
bp_status bpi_view_keys_build(bp_view *view);
void bpi_view_events_free(bp_view *view);

/// The settings of entity `dense` of a store, as bp_entity_def gives them (view_slots.c):
/// what bp_entity_get reads from the world and bp_view_entity_get from a snapshot.
bp_entity_def bpi_soa_entity_def(const bpi_soa *soa, int dims, uint32_t dense);

/// The slot table of bp_view_dense_index: sets it for the listed indices below
/// `count` (their entities' slots now lead there) while it is kept; a table that
/// cannot grow is no longer kept. Host thread, on submit into this buffer.
void bpi_view_slots_note(bp_view *view, const uint32_t *list, uint32_t listed, uint32_t count);
/// The slot table afresh, under the view's lazy lock.
bp_status bpi_view_slots_build(bp_view *view);

/// Makes the extras `what` (BPI_VIEW_* bits) that nobody has made yet, under the
/// view's lock, and notes that they were asked for. A hierarchy that finds no
/// memory leaves the queries scanning; the adjacency's status is returned (BP_OK
/// when not asked for). Any reader thread.
bp_status bpi_view_ensure(const bp_view *view, unsigned what);

/// A reader's output buffer: the view, the total's pointer, and room where
/// capacity says there is.
static inline bp_status bpi_view_check_buffer(const bp_view *v, const void *out, size_t capacity, const size_t *total)
{
	if (!v || !total || (capacity && !out))
		return BP_ERR_INVALID_ARGUMENT;
	return BP_OK;
}

/// Test hook: the dense merge of pair events (view_events.c) takes at most one part per
/// `entities` entities and one per `pairs` pairs of both lists; 0 restores the library's.
/// Warning: call only while no frame builds.
void bpi_view_set_dense_parts(uint32_t entities, uint32_t pairs);

#endif
