// SPDX-License-Identifier: MIT
// What changed between frames, for the scheduler (scheduler.c): the submits' change lists,
// so a reused frame buffer copies only what changed since it was last written; each
// snapshot's list for the builder; and the builder's changes since the latest frame, which
// an incremental build searches.
#ifndef BP_SCHEDULER_CHANGES_H
#define BP_SCHEDULER_CHANGES_H

#include "view/view.h"

/// Submits whose change lists are kept: a buffer is reused at most a few submits
/// after it was last written (latest, building, pending, spares).
#define BPI_SUBMIT_LOG 8

/// What one submit changed since the one before it.
typedef struct bpi_submit_entry {
	uint64_t number;
	BPI_ARRAY(uint32_t) list;
	uint32_t count;
	bool all;         ///< unknown
	bool bounds_only; ///< of the listed entities only the bounds changed
} bpi_submit_entry;

/// The last BPI_SUBMIT_LOG submits' lists, submit k at k % BPI_SUBMIT_LOG. Host thread only.
typedef struct bpi_submit_log {
	bpi_submit_entry entry[BPI_SUBMIT_LOG];
} bpi_submit_log;

/// Keeps what submit `number` changed; a list that finds no memory is kept as unknown.
void bpi_submit_log_add(bpi_submit_log *log, uint64_t number, const bpi_changes *changes);
/// Brings view's entities from submit view->content up to `number` by copying from `src`
/// (count entities) only what the submits in between changed. False (nothing
/// copied) when the log does not reach back that far or some submit did not know.
bool bpi_submit_log_copy(const bpi_submit_log *log, bp_view *view, const bpi_soa *src, uint32_t count, uint64_t number);
/// Whether every submit since view's content up to `number` changed bounds alone (and
/// created no entity): then only the bounds arrays need copying, whatever was listed.
bool bpi_submit_log_bounds_only(const bpi_submit_log *log, const bp_view *view, uint64_t number);
void bpi_submit_log_free(bpi_submit_log *log);

/// The view's list for the builder: what submit `number` changed, plus what `coalesced` (a
/// coalesced snapshot, or the world view just before; NULL: none) changed since the one
/// before it.
void bpi_view_note_changes(bp_view *view, const bpi_changes *changes, uint64_t number, const bp_view *coalesced);

/// The builder's scratch for its changes. Builder thread only; zero is empty.
typedef struct bpi_build_changes {
	BPI_ARRAY(uint32_t) changed; ///< entities that differ from the last build's
	BPI_ARRAY(uint8_t) seen;     ///< per entity, all 0 between builds
	uint32_t seen_size;          ///< entries of seen initialised
	BPI_ARRAY(uint64_t) bits;    ///< comparing snapshots: per entity, it differs
	BPI_ARRAY(uint32_t) chunk_counts;
	BPI_ARRAY(uint8_t) chunk_filters;
} bpi_build_changes;

/// The entities of view that may differ from `prev`, the frame the builder's
/// incremental state follows: from the snapshots' lists when they reach back to
/// prev (each entity once), else by comparing the two snapshots on up to `threads`
/// threads of the bound executor; all when neither can say (no prev, or no memory).
bpi_changes bpi_build_changes_find(bpi_build_changes *b, const bp_view *view, const bp_view *prev, int threads);
void bpi_build_changes_free(bpi_build_changes *b);

#endif
