// SPDX-License-Identifier: MIT
// Active x resting (docs/design.md "Incremental path"): the pairs of the active entities with the resting index,
// through enlarged ("fat") boxes and the candidates their queries found.
#ifndef BP_INCREMENTAL_CROSS_H
#define BP_INCREMENTAL_CROSS_H

#include "algorithms/cells.h"
#include "incremental/incremental_margin.h"

/// A resting entity that an active entity's fat box overlaps, with its bounds as
/// the resting index holds them (mins, then negated maxes; z lanes 0 in 2D), so a
/// re-test reads nothing of the resting entities' arrays.
typedef struct bpi_candidate {
	float rec[6];
	uint32_t entity;
	uint32_t flags;
} bpi_candidate;

/// Candidates written by one chunk of one step. They stay where they were written
/// while their entity re-tests them; a buffer no fat box refers to is reused.
typedef struct bpi_candidate_buffer {
	BPI_ARRAY(bpi_candidate) items;
	size_t count;
	uint32_t refs; ///< fat boxes whose candidates lie here, counted before a step
	bool failed;   ///< an allocation failed: the step fails and nothing more is tried
} bpi_candidate_buffer;

/// State kept across incremental steps for the active x resting pairs.
/// Zero-initialised is empty.
typedef struct bpi_cross {
	BPI_ARRAY(bpi_fat) fat;      ///< per position of the active list
	BPI_ARRAY(bpi_fat) next_fat; ///< the next active list's, while the sets are updated
	BPI_ARRAY(bpi_fat_growth) growth;      ///< beside fat: how each fat box was grown
	BPI_ARRAY(bpi_fat_growth) next_growth; ///< beside next_fat
	BPI_ARRAY(bpi_candidate_buffer) buffers;
	uint32_t buffer_count;          ///< buffers initialised
	BPI_ARRAY(uint32_t) writing;    ///< per chunk: the buffer it writes this step
	bool compacting;                ///< this step copies every kept list into the chunks' buffers
	uint32_t relisted;              ///< searches since a step last wrote every list in order
	/// The settled level was built anew since the last call: the next call queries it
	/// again for every held fat box, keeping what the first level found (the members
	/// it lacks were active, paired by the active x active pass until then).
	bool requery_settled;
	uint32_t step;                  ///< incremental steps taken
	BPI_ARRAY(bpi_margin_tally) tally; ///< per chunk
	bpi_margin margin; ///< the motion observed
	uint32_t held;     ///< active entities with a fat box at this step's start
	uint32_t escaped;  ///< of those, the ones the last call found out of it (or with another filter)
	bpi_pair_chunks pairs; ///< per chunk of the active list
	BPI_ARRAY(uint32_t) searchers; ///< the positions that got a new fat box in the last call
	uint32_t searcher_count;
} bpi_cross;

/// One step's view of the resting index and the active entities.
typedef struct bpi_cross_input {
	const bpi_scene *scene;
	const bpi_cells *cells;        ///< the resting index (records of non-resting entities hidden); NULL when moving
	const bpi_cells *settled;      ///< its second level, or NULL (see incremental_settle.c)
	const uint32_t *settled_of;    ///< per entity of the settled grid: its dense index
	const bpi_rest_filter *filter; ///< per resting index
	const uint64_t *gone;          ///< per resting index, a bit (base/bits.h): no longer resting
	bool left_rest;                ///< some entity stopped resting this step
	/// Per dense index, a bit: stopped resting this step (read only when left_rest). Every
	/// step drops these from the candidate lists, so no list holds an entity gone before.
	const uint64_t *left_now;
	const uint32_t *active;        ///< the active entities, ascending
	uint32_t active_count;
	/// The active entities alone, by position in `active`: their bounds and filters
	/// read in list order, not at the dense indices they are scattered over.
	const bpi_scene *active_scene;
	float margin;                  ///< the world's setting; 0 = from observed motion
	/// Every entity is active and none rests (incremental_moving.c): `cells` is NULL, and a
	/// margin comes from the entity's own motion.
	bool moving;
	/// Only bounds changed since the last step (bpi_changes.bounds_only): every fat
	/// box's filter is still its entity's, so none is compared.
	bool filters_kept;
} bpi_cross_input;

/// The moving state's pass (incremental_moving.c): every entity is active in dense order and
/// none rests, so only the `count` entities of `changed` (dense indices, each once, any order,
/// those past the active count ignored) can have left their fat boxes or changed
/// filter; those are listed in cross->searchers and counted in `searched`, and when
/// they are at most `most`, each gets a new fat box, as by a search that finds
/// nothing, and queried_at of the step. More, and no fat box changes: the caller
/// gives up its kept pairs, and would have paid for boxes it drops.
bp_status bpi_cross_moving(bpi_cross *cross, const bpi_cross_input *in, const uint32_t *changed, uint32_t count,
	uint32_t most, uint32_t *searched);

/// Every entity of `scene` active, in dense order, its fat box its bounds grown by
/// `margin`, as if it searched with that margin and found nothing: in a new step
/// when `searched`, else in the last one (with no margin, one that does not move then
/// never searches). False (nothing changed) when memory runs out.
bool bpi_cross_start_grown(bpi_cross *cross, const bpi_scene *scene, float margin, bool searched);

/// Room for the next active list's entries (next_fat, next_growth).
bool bpi_cross_reserve(bpi_cross *cross, uint32_t active_count);
/// Makes next_fat and next_growth the active list's entries.
void bpi_cross_swap(bpi_cross *cross);
/// Room for `count` entries, the first `kept` kept (fat and growth).
bool bpi_cross_grow(bpi_cross *cross, uint32_t kept, uint32_t count);

/// Every accepted pair of an active entity with a resting one, into the pair chunks
/// (a fixed cut of the active list), the candidate tests made and the entities
/// that searched (counted, and listed in cross->searchers by position, ascending).
/// An active entity whose bounds are still inside its fat box, with the same filter,
/// re-tests its candidates; any other queries the resting index with its bounds
/// enlarged by the margin. On error the entries are unusable: the caller must
/// rebuild before the next call.
bp_status bpi_cross_find(bpi_cross *cross, const bpi_cross_input *in, uint64_t *tests, uint32_t *searched);

void bpi_cross_free(bpi_cross *cross);

#endif
