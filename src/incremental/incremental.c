// SPDX-License-Identifier: MIT
// Incremental steps. A full step runs the grid over every entity and keeps two things: its
// cells, as the resting index, and its pairs, sorted. Later steps split the entities in two:
// resting ones, unchanged since that build, and active ones, changed since. The pairs are
//   resting x resting  the kept pairs, minus those of entities that stopped resting;
//   active x active    the pairs of their fat boxes, kept while neither searches
//                      (incremental_active.c);
//   active x resting   one query of the resting index per active entity;
// each pair in exactly one of the three, merged into one list sorted by (lo, hi).
//
// The resting index has two levels: the grid of the last full step, and a smaller grid of
// the entities that came to rest since ("settled"). Active entities that did not change in
// a step settle once there are as many of them as there are changing ones: the settled
// grid is built again over its members and them, the kept pairs become this step's pairs
// among resting entities, and the entities still active query the settled grid again
// (their candidates lack the newly settled). A host that creates entities as it goes, or
// moves some and leaves them, so pays for them while they change, not ever after.
//
// Why this is exact: a resting entity's bounds, filter, kind and shape are those the
// index holds (any change makes it active), so its kept pairs with other resting entities
// still hold, and a query of the index with an active entity's current bounds sees the
// resting entity exactly as it is now. The dense numbering is the world's: an index that
// did not change and is below the entity count holds the same entity as at the build (a
// destroy marks the entity it moves, a create marks the new one).
//
// When most entities change every step (a pile settling, a crowd walking), resting is
// not worth it: the state goes "moving". Every entity is then active with a fat box of
// its own and none rests, so a step costs what left a fat box: entities still inside
// one re-test the pairs their fat boxes keep, and the others search the fat boxes
// (incremental_active.c). A moving step is taken while its counted work, from the last
// moving step's counts, is predicted well below a full step's; otherwise the world
// takes full steps for a while, twice as long after each stay that did not pay, and
// tries again.
//
// A step costs far less than a rebuild. What it pays beyond a world of the movers alone is
// the cache misses of querying a big resting index: the fat boxes keep those queries few, and
// prefetching overlaps their misses (perf/README.md, "Incremental path").
#include "incremental/incremental.h"
#include "incremental/incremental_cross.h"
#include "incremental/incremental_active.h"
#include "parallel/parallel.h"
#include "parallel/sort.h"

#include <string.h>

/// A step takes the full path when the active entities are predicted to cost
/// more than this fraction of a full step: a rebuild then empties the active set.
#define INCREMENTAL_REBUILD_FRACTION 0.5
/// The cost model, from counted work only, so that the same history takes the
/// same paths on every machine: a full step costs this much per entity, an
/// incremental one this much per active entity (perf/results/2core/incremental.csv:
/// the full grid rows, and the churn rows, whose changed entities cost the most).
#define INCREMENTAL_FULL_COST 150.0
#define INCREMENTAL_ACTIVE_COST 1000.0

/// The model of the moving state, from counted work only (perf/README.md,
/// "Incremental: moving worlds"): a full step costs so much per entity and per pair;
/// a moving step per entity, per kept pair re-tested, per entity that searched and
/// per row its sweep read, per entity again when the searchers' columns were laid out
/// anew and per row of the extra list laid out on their bands, and a step that found
/// every kept pair again as much as a full step with those pairs. A moving step is
/// taken while the moving steps so far are predicted at most MOVING_FRACTION of a full one.
#define FULL_ENTITY_COST 57.0
#define FULL_PAIR_COST 28.0
#define MOVING_ENTITY_COST 25.0
#define MOVING_KEPT_COST 4.0
#define MOVING_SEARCH_COST 600.0
#define MOVING_ROW_COST 2.0
#define MOVING_LAYOUT_COST 25.0
#define MOVING_FRACTION 0.7
/// A moving step gives up for a full one when more than this share of the entities
/// search, and the first one when finding the pairs of the fat boxes would cost
/// more than this many full steps.
#define MOVING_SEARCH_SHARE 0.1
/// The neighbour list is found again for all once more than this share of the
/// entities left their grown boxes: searches that read many rows cost more than
/// finding the list again (perf/README.md, "Incremental: moving worlds").
#define NEIGHBOURS_SEARCH_SHARE 0.02
/// A list that must be found again the step after it was found never pays: finding
/// it is a full step over the grown boxes, with more pairs, and more. The world then
/// takes full steps, as the plain world does, for a wait that doubles after each such
/// list, and then finds one again. Lists that serve more steps may pay or not, by
/// how much of the world moves (perf/README.md, "Incremental: moving worlds").
#define NEIGHBOURS_PAYS_STEPS 2u
#define MOVING_ENTRY_MOST 2.0
/// How the first moving step predicts an entity's margin: so many steps of its motion,
/// at most so many of its extents (incremental_margin.c chooses them so).
#define MOVING_ENTRY_STEPS 8.0f
#define MOVING_ENTRY_EXTENTS 0.5f
/// A stay of at least this many moving steps paid for its start; after a shorter
/// one the full steps before the next try double, from the least to the most. The
/// first try waits the least too: a world's first steps say little of its motion.
#define MOVING_PAYS_STEPS 8u
#define MOVING_WAIT_LEAST 16u
#define MOVING_WAIT_MOST 1024u

/// A position of the settled level carries this bit (positions are below 2^31).
#define SETTLED_BIT 0x80000000u
/// Quiet active entities settle once there are at least this many (and at least
/// as many as the changing ones, which then query the settled grid again).
#define SETTLE_MIN_DEFAULT 1024u
/// The settled grid is built again only once the quiet entities are this
/// fraction of its members, so each build's cost is spread over as many
/// settling entities as it holds, within a factor: built again every time, its
/// cost grows with its members (perf/README.md, "Incremental path").
#define SETTLED_GROWTH 0.25
/// Stale kept pairs are dropped for good once they are more than 1 in this many.
#define REST_STALE_SHARE 8u
/// The settled level is kept below this fraction of the full step's grid; past it
/// the next step is full, which takes everything into one grid again: left to the
/// cost model, the active entities grow and steps slow down first
/// (perf/README.md, "Incremental path").
#define SETTLED_FRACTION 0.25

static _Atomic uint32_t settle_min = SETTLE_MIN_DEFAULT;
static _Atomic bool moving_always = false;

void bpi_set_settle_min(uint32_t count) { atomic_store(&settle_min, count); }
void bpi_set_moving_always(bool on) { atomic_store(&moving_always, on); }

/// A moving state asked for whatever the model says: by the scene, or the test hook.
static bool forced_moving(const bpi_scene *scene)
{
	return (scene->debug_flags & BP_DEBUG_ALWAYS_INCREMENTAL) ||
	       atomic_load_explicit(&moving_always, memory_order_relaxed);
}

struct bpi_incremental {
	bpi_indexes full;      ///< the grid of the last full step: its cells are the resting index
	bpi_active_pairs among; ///< active x active: the pairs of their fat boxes
	bool resting_valid;    ///< full.of[BP_ALGO_GRID] holds the resting index
	uint32_t resting_count;     ///< entities at the full step
	uint32_t span;              ///< dense indices gone, position and filter cover
	BPI_ARRAY(uint8_t) gone;    ///< per dense index: 1 = not resting (active, or created since)
	/// Per resting index: its record in the full step's grid, or SETTLED_BIT and
	/// its record in the settled grid (hidden when it leaves).
	BPI_ARRAY(uint32_t) position;
	bpi_cells settled, settled_spare; ///< the settled grid, and the one the next settling builds
	BPI_ARRAY(uint32_t) settled_of;   ///< per entity of the settled grid's scene: its dense index
	uint32_t settled_count;
	uint32_t settled_left;            ///< members that stopped resting since the settled grid was built
	bool settled_full;                ///< quiet entities found no room there: the next step is full
	BPI_ARRAY(uint32_t) settling;     ///< scratch: the next settled members
	bpi_pair_buffer next_pairs;       ///< scratch: the next kept pairs
	/// Per resting index, the filter and flags a query hit is accepted by, packed:
	/// one cache miss per hit instead of three (they never change while it rests).
	BPI_ARRAY(bpi_rest_filter) filter;
	bpi_pair_buffer resting_pairs; ///< pairs among resting entities, sorted by (lo, hi)
	bool rest_stale;               ///< resting_pairs may hold pairs of entities gone from rest

	BPI_ARRAY(uint32_t) active; ///< dense indices of the active entities, ascending
	uint32_t active_count;
	BPI_ARRAY(uint8_t) is_active; ///< per dense index

	// Per-step scratch.
	BPI_ARRAY(bpi_sort_item) joining; ///< entities becoming active this step, sorted
	BPI_ARRAY(uint32_t) merged;       ///< the next active list
	bpi_radix_scratch radix;
	BPI_ARRAY(float) sub_bounds;      ///< the active entities' bounds, 2 * dims arrays of active_count
	BPI_ARRAY(uint64_t) sub_filter;   ///< their categories then masks
	BPI_ARRAY(uint8_t) sub_flags;
	bpi_cross cross;                  ///< active x resting: fat boxes and their candidates
	bpi_pair_buffer fresh;            ///< active pairs, then sorted
	BPI_ARRAY(bp_pair) sort_scratch;
	BPI_ARRAY(size_t) merge_counts;   ///< scratch of bpi_pairs_merge
	bool stepped; ///< a step succeeded since the state was made
	/// The last step found its pairs from the kept pairs of every entity in dense
	/// order (kept_pairs): the true bounds it packed are the last step's.
	bool kept_last;

	bool neighbours;         ///< every entity is active (in dense order), in the neighbour list
	bool moving;             ///< every entity is active (in dense order) and none rests
	/// A full step kept its bounds for a try of the moving state: the next step decides
	/// from them whether to enter it, and lays the state out only then.
	bool entering;
	BPI_ARRAY(float) entry_bounds; ///< those bounds: 2 * dims arrays of entry_count
	uint32_t entry_count;
	uint32_t moving_steps;   ///< moving steps of the current stay
	uint32_t moving_wait;    ///< full steps before moving is tried again
	uint32_t moving_backoff; ///< the wait after the last stay that did not pay
	double moving_work;      ///< the moving steps' counted work by the model, blended
	uint32_t neighbour_steps;   ///< steps the current neighbour list served
	uint32_t neighbour_wait;    ///< full steps before a neighbour list is found again
	uint32_t neighbour_backoff; ///< the wait after the last list that did not pay
	size_t moving_pairs;     ///< pairs of the last step
};

void bpi_incremental_free(bpi_incremental *x)
{
	if (!x)
		return;
	bpi_indexes_free(&x->full);
	bpi_active_free(&x->among);
	bpi_array_free(&x->gone);
	bpi_array_free(&x->position);
	bpi_cells_free(&x->settled);
	bpi_cells_free(&x->settled_spare);
	bpi_array_free(&x->settled_of);
	bpi_array_free(&x->settling);
	bpi_pair_buffer_free(&x->next_pairs);
	bpi_array_free(&x->filter);
	bpi_pair_buffer_free(&x->resting_pairs);
	bpi_array_free(&x->active);
	bpi_array_free(&x->is_active);
	bpi_array_free(&x->joining);
	bpi_array_free(&x->merged);
	bpi_radix_sort_free(&x->radix);
	bpi_array_free(&x->sub_bounds);
	bpi_array_free(&x->sub_filter);
	bpi_array_free(&x->sub_flags);
	bpi_cross_free(&x->cross);
	bpi_pair_buffer_free(&x->fresh);
	bpi_array_free(&x->sort_scratch);
	bpi_array_free(&x->merge_counts);
	bpi_array_free(&x->entry_bounds);
	bpi_free(x, sizeof *x);
}

void bpi_incremental_forget(bpi_incremental *x)
{
	if (x)
		x->resting_valid = x->moving = x->neighbours = x->entering = x->kept_last = false;
}

static bpi_cells *resting_cells(bpi_incremental *x)
{
	return &((bpi_cells_index *)x->full.of[BP_ALGO_GRID])->cells;
}

/// Frees the grid of the last full step, the resting index no longer in use.
static void drop_grid(bpi_incremental *x)
{
	bpi_indexes grid = {0};
	grid.of[BP_ALGO_GRID] = x->full.of[BP_ALGO_GRID];
	x->full.of[BP_ALGO_GRID] = NULL;
	bpi_indexes_free(&grid);
}

/// Copies `from` into `to`; false (to untouched) when `to` cannot grow.
static bool copy_pairs(bpi_pair_buffer *to, const bpi_pair_buffer *from)
{
	if (to->capacity < from->count) {
		bpi_pair_buffer grown = {0};
		if (!bpi_pair_buffer_reserve(&grown, from->count))
			return false;
		bpi_pair_buffer_free(to);
		*to = grown;
	}
	if (from->count)
		memcpy(to->data, from->data, from->count * sizeof(bp_pair));
	to->count = from->count;
	return true;
}

/// Sorts `p` by (lo, hi); false (p untouched) when memory runs out.
static bool sort_canonical(bpi_incremental *x, bpi_pair_buffer *p, int threads)
{
	return bpi_array_reserve(&x->sort_scratch, p->count) &&
	       bpi_pairs_sort_canonical(p->data, p->count, x->sort_scratch.data, threads);
}

// ---- the full path --------------------------------------------------------------

/// Every pair. With `keep`, by the grid, whose cells become the resting index, and
/// every entity rests; without, by `algorithm`, as the plain world finds them, and
/// nothing rests, so the next step is full again (a world moving all over does not
/// pay for keeping an index it would not use). Without a grid (spans beyond float)
/// AUTO's choice runs and nothing rests either. Sorted when kept, as the merges of
/// the next steps need them, or when `sorted`; else in the algorithm's order, at
/// the plain world's cost.
static bp_status full_step(bpi_incremental *x, const bpi_scene *scene, bool keep, bp_algorithm algorithm,
	bool sorted, bpi_pair_buffer *pairs, bp_frame_stats *stats)
{
	const uint32_t n = scene->count;
	x->resting_valid = x->moving = x->neighbours = x->entering = false;
	bpi_active_invalidate(&x->among);
	bpi_pair_buffer *found = &x->fresh;
	bp_status status = bpi_pipeline_run(&x->full, keep ? BP_ALGO_GRID : algorithm, scene, found, stats);
	keep = keep && status == BP_OK;
	if (status == BP_ERR_UNSUPPORTED)
		status = bpi_pipeline_run(&x->full, BP_ALGO_AUTO, scene, found, stats);
	if (status != BP_OK)
		return status;
	if (!keep && stats->algorithm != BP_ALGO_GRID)
		drop_grid(x); // its cells and pairs are of no use now, and its pair memory counts
	uint64_t t1 = bpi_now_ns();
	// Everything that can fail before the caller's pairs change.
	if (((keep || sorted) && !sort_canonical(x, found, scene->threads)) ||
		(keep && (!bpi_array_reserve(&x->gone, n) || !bpi_array_grow(&x->is_active, 0, n) ||
				 !bpi_array_reserve(&x->position, n) || !bpi_array_reserve(&x->filter, n) ||
				 !copy_pairs(&x->resting_pairs, found))))
		return BP_ERR_OUT_OF_MEMORY;
	x->rest_stale = false;
	bpi_pair_buffer_hand_over(found, pairs);
	if (keep) {
		if (n) {
			memset(x->gone.data, 0, n);
			memset(x->is_active.data, 0, n);
		}
		const bpi_cells *cells = resting_cells(x);
		for (uint32_t j = 0; j < n; ++j)
			x->position.data[bpi_cells_entity_at(cells, j)] = j;
		for (uint32_t i = 0; i < n; ++i)
			x->filter.data[i] = (bpi_rest_filter){scene->category[i], scene->mask[i], scene->flags[i]};
		x->resting_count = n;
		x->span = n;
		x->settled_count = 0;
		x->settled_left = 0;
		x->settled_full = false;
		x->active_count = 0;
		x->resting_valid = true;
	}
	stats->ns_merge += bpi_now_ns() - t1;
	stats->active_count = n;
	stats->searched_count = n;
	stats->path = BP_PATH_FULL;
	return BP_OK;
}

// ---- who rests, who is active ------------------------------------------------------

/// Index i no longer rests: its record is hidden from the queries and its kept
/// pairs are to go. True when it rested until now.
static inline bool leave_rest(bpi_incremental *x, uint32_t i)
{
	if (i >= x->span || x->gone.data[i])
		return false;
	x->gone.data[i] = 1;
	uint32_t at = x->position.data[i];
	bpi_cells_hide(at & SETTLED_BIT ? &x->settled : resting_cells(x), at & ~SETTLED_BIT);
	x->settled_left += (at & SETTLED_BIT) != 0;
	return true;
}

/// Covers dense indices up to n: those created since are not resting.
static bool cover(bpi_incremental *x, uint32_t n)
{
	if (n <= x->span)
		return true;
	if (!bpi_array_grow(&x->gone, x->span, n) || !bpi_array_grow(&x->position, x->span, n) ||
		!bpi_array_grow(&x->filter, x->span, n))
		return false;
	memset(x->gone.data + x->span, 1, n - x->span);
	x->span = n;
	return true;
}

/// Applies the changes: entities that changed stop resting and become active;
/// indices past the entity count (destroyed from the end) leave both sets. The
/// active list stays ascending. Returns whether any entity stopped resting.
static bp_status update_sets(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes, int threads,
	bool *left_rest)
{
	const uint32_t n = scene->count;
	const uint32_t kept = BP_MIN(changes->previous_count, (uint32_t)x->is_active.capacity);
	if (!cover(x, n) || !bpi_array_grow(&x->is_active, kept, n) ||
		!bpi_array_reserve(&x->joining, changes->count) ||
		!bpi_array_reserve(&x->merged, (size_t)x->active_count + changes->count) ||
		!bpi_cross_reserve(&x->cross, x->active_count + changes->count) ||
		bpi_radix_sort_reserve(&x->radix, changes->count) != BP_OK)
		return BP_ERR_OUT_OF_MEMORY;
	for (uint32_t i = changes->previous_count; i < n; ++i)
		x->is_active.data[i] = 0; // created since: marked as changed below
	bool left = false;
	for (uint32_t i = n; i < changes->previous_count; ++i)
		left |= leave_rest(x, i);
	uint32_t joining = 0;
	for (uint32_t c = 0; c < changes->count; ++c) {
		uint32_t i = changes->list[c];
		if (i >= n)
			continue; // marked, then destroyed from the end
		left |= leave_rest(x, i);
		if (!x->is_active.data[i]) {
			x->is_active.data[i] = 1;
			x->joining.data[joining++] = bpi_sort_item_make(i, 0);
		}
	}
	*left_rest = left;
	if (joining == 0 && (x->active_count == 0 || x->active.data[x->active_count - 1] < n))
		return BP_OK; // the same active list: the usual step of a world whose movers keep moving
	bp_status status = bpi_radix_sort_items(&x->radix, x->joining.data, joining, threads);
	if (status != BP_OK)
		return status;
	// Merge the old list (without indices past n) and the joining ones, both ascending;
	// the fat boxes move with their entities, and joining ones have none yet.
	uint32_t j = 0, out = 0;
	const uint32_t *old = x->active.data;
	bpi_fat *fat = x->cross.fat.data, *next_fat = x->cross.next_fat.data;
	bpi_fat_growth *growth = x->cross.growth.data, *next_growth = x->cross.next_growth.data;
	for (uint32_t k = 0; k < x->active_count; ++k) {
		uint32_t i = old[k];
		if (i >= n)
			continue;
		while (j < joining && bpi_sort_item_key(x->joining.data[j]) < i) {
			next_fat[out] = bpi_fat_none();
			x->merged.data[out++] = bpi_sort_item_key(x->joining.data[j++]);
		}
		next_fat[out] = fat[k];
		next_growth[out] = growth[k];
		x->merged.data[out++] = i;
	}
	while (j < joining) {
		next_fat[out] = bpi_fat_none();
		x->merged.data[out++] = bpi_sort_item_key(x->joining.data[j++]);
	}
	bpi_cross_swap(&x->cross);
	bpi_array_swap(&x->active, &x->merged); // the merged list becomes the active one
	x->active_count = out;
	bpi_active_invalidate(&x->among);
	return BP_OK;
}

// ---- moving ----------------------------------------------------------------------------

/// Every entity active in dense order, its fat box its bounds grown by `margin`
/// (bpi_cross_start_grown), none resting and nothing kept. False (nothing changed)
/// when memory runs out.
static bool every_active(bpi_incremental *x, const bpi_scene *scene, float margin, bool searched)
{
	const uint32_t n = scene->count;
	if (!bpi_array_reserve(&x->gone, n) || !bpi_array_grow(&x->is_active, 0, n) ||
		!bpi_array_reserve(&x->position, n) || !bpi_array_reserve(&x->filter, n) ||
		!bpi_array_reserve(&x->active, n) || !bpi_cross_start_grown(&x->cross, scene, margin, searched))
		return false;
	if (n) {
		memset(x->gone.data, 1, n);
		memset(x->is_active.data, 1, n);
	}
	for (uint32_t k = 0; k < n; ++k)
		x->active.data[k] = k;
	bpi_active_invalidate(&x->among);
	x->active_count = x->span = n;
	x->resting_count = x->settled_count = x->settled_left = 0;
	x->settled_full = false;
	x->resting_pairs.count = 0;
	x->rest_stale = false;
	x->resting_valid = x->moving = x->neighbours = false;
	return true;
}

/// A try of the moving state begins: the bounds of this full step are kept, so the
/// next step can tell how far its changed entities moved. Laying the state out waits
/// for that step's decision: a try refused costs a copy of the bounds. False (no try)
/// when memory runs out.
static bool begin_entry(bpi_incremental *x, const bpi_scene *scene)
{
	const uint32_t n = scene->count;
	const int dims = scene->dims;
	if (!bpi_array_reserve(&x->entry_bounds, (size_t)2 * dims * n))
		return false;
	for (int axis = 0; axis < dims; ++axis) {
		float *min = x->entry_bounds.data + (size_t)(2 * axis) * n, *max = min + n;
		if (n) {
			memcpy(min, scene->min[axis], n * sizeof *min);
			memcpy(max, scene->max[axis], n * sizeof *max);
		}
	}
	x->entry_count = n;
	x->entering = true;
	return true;
}

/// The scene as the entry's bounds saw it: those bounds for the entities that are
/// still there, today's filters (the pairs of the first moving step are found again
/// from them).
static bpi_scene entry_scene(const bpi_incremental *x, const bpi_scene *scene)
{
	bpi_scene at_entry = *scene;
	at_entry.count = BP_MIN(x->entry_count, scene->count);
	for (int axis = 0; axis < scene->dims; ++axis) {
		at_entry.min[axis] = x->entry_bounds.data + (size_t)(2 * axis) * x->entry_count;
		at_entry.max[axis] = at_entry.min[axis] + x->entry_count;
	}
	return at_entry;
}

/// Leaves the moving state: full steps follow, for longer after a short stay.
static void leave_moving(bpi_incremental *x)
{
	x->moving = x->resting_valid = false;
	uint32_t doubled = x->moving_backoff ? 2 * x->moving_backoff : MOVING_WAIT_LEAST;
	x->moving_backoff = x->moving_steps >= MOVING_PAYS_STEPS ? MOVING_WAIT_LEAST : BP_MIN(doubled, MOVING_WAIT_MOST);
	x->moving_wait = x->moving_backoff;
}

/// The moving state's sets after creates and destroys: the active list stays every
/// dense index, so the positions that remain keep their fat boxes and kept pairs.
/// An entity a destroy moved into a hole checks the fat box there, which holds
/// every pair of any bounds inside it with its filter.
static bp_status update_moving(bpi_incremental *x, uint32_t n)
{
	const uint32_t before = x->active_count;
	if (n > before && (!cover(x, n) || !bpi_array_grow(&x->is_active, before, n) ||
				  !bpi_array_grow(&x->active, before, n) || !bpi_cross_grow(&x->cross, before, n)))
		return BP_ERR_OUT_OF_MEMORY;
	for (uint32_t k = before; k < n; ++k) {
		x->active.data[k] = k;
		x->is_active.data[k] = 1;
		x->cross.fat.data[k] = bpi_fat_none();
	}
	if (n != before)
		bpi_active_truncate(&x->among, BP_MIN(n, before));
	x->active_count = n;
	return BP_OK;
}

/// After a merge that left `stale` kept pairs out (`left`: some entity stopped resting
/// this step): they go for good, in one pass, once they are more than a share of the kept
/// pairs or when no entity left. While entities leave every step, each merge leaves them
/// out again instead, which costs less than writing the kept pairs anew at every step.
/// Stale pairs stay stale: an entity becomes resting again only by a settling or a full
/// step, which both make the kept pairs anew.
static void drop_stale(bpi_incremental *x, size_t stale, bool left)
{
	bpi_pair_buffer *rest = &x->resting_pairs;
	x->rest_stale = stale > 0;
	if (stale == 0 || (left && stale * REST_STALE_SHARE <= rest->count))
		return;
	size_t live = 0;
	for (size_t i = 0; i < rest->count; ++i) {
		bp_pair p = rest->data[i];
		rest->data[live] = p;
		live += !x->gone.data[p.lo] && !x->gone.data[p.hi];
	}
	rest->count = live;
	x->rest_stale = false;
}

/// The merge of a step that settles: the kept pairs, less those of entities that
/// stopped resting, and the sorted fresh ones into `out`, and into `next` (room for
/// all) the pairs that rest once it has settled, that is all but those of an entity
/// changed this step (is_active 2), which stays active. Returns the pairs written to
/// `out`.
static size_t merge_settling(const bpi_pair_buffer *kept, const uint8_t *gone, const uint8_t *is_active,
	const bp_pair *fresh, size_t fresh_count, bp_pair *out, bpi_pair_buffer *next)
{
	const bp_pair *p = kept->data;
	size_t j = 0, k = 0, rest = 0;
	for (size_t i = 0; i < kept->count; ++i) {
		bp_pair a = p[i];
		if (gone[a.lo] || gone[a.hi])
			continue;
		for (; j < fresh_count && (fresh[j].lo < a.lo || (fresh[j].lo == a.lo && fresh[j].hi < a.hi)); ++j) {
			out[k++] = fresh[j];
			next->data[rest] = fresh[j];
			rest += is_active[fresh[j].lo] != 2 && is_active[fresh[j].hi] != 2;
		}
		out[k++] = a;
		next->data[rest++] = a;
	}
	for (; j < fresh_count; ++j) {
		out[k++] = fresh[j];
		next->data[rest] = fresh[j];
		rest += is_active[fresh[j].lo] != 2 && is_active[fresh[j].hi] != 2;
	}
	next->count = rest;
	return k;
}

// ---- the active entities as a scene ---------------------------------------------------

/// The entities list[0 .. m) (dense indices) as a scene of their own, in list
/// order, in the scratch arrays: the active entities for both passes,
/// and after it the members of a new settled grid.
static bp_status subset_scene(bpi_incremental *x, const bpi_scene *s, const uint32_t *list, uint32_t m, bpi_scene *sub)
{
	const int dims = s->dims;
	if (!bpi_array_reserve(&x->sub_bounds, (size_t)m * 2 * dims) || !bpi_array_reserve(&x->sub_filter, 2 * (size_t)m) ||
		!bpi_array_reserve(&x->sub_flags, m))
		return BP_ERR_OUT_OF_MEMORY;
	*sub = *s;
	sub->count = m;
	float *bounds = x->sub_bounds.data;
	uint64_t *category = x->sub_filter.data, *mask = category + m;
	for (int axis = 0; axis < dims; ++axis) {
		float *min = bounds + (size_t)(2 * axis) * m, *max = min + m;
		for (uint32_t k = 0; k < m; ++k) {
			min[k] = s->min[axis][list[k]];
			max[k] = s->max[axis][list[k]];
		}
		sub->min[axis] = min;
		sub->max[axis] = max;
	}
	for (uint32_t k = 0; k < m; ++k) {
		category[k] = s->category[list[k]];
		mask[k] = s->mask[list[k]];
		x->sub_flags.data[k] = s->flags[list[k]];
	}
	sub->category = category;
	sub->mask = mask;
	sub->flags = x->sub_flags.data;
	return BP_OK;
}

// ---- the incremental path ------------------------------------------------------------

/// The pairs of the active entities, merged with the kept ones; `left_rest`:
/// some entities stopped resting this step, so some kept pairs are stale;
/// `filters_kept`: only bounds changed since the last step.
static bp_status incremental_path(bpi_incremental *x, const bpi_scene *scene, bool left_rest, bool settling,
	bool filters_kept, bpi_pair_buffer *pairs, bp_frame_stats *stats)
{
	uint64_t t0 = bpi_now_ns();
	const uint32_t m = x->active_count;
	// The active entities' bounds and filters in list order, for both passes.
	bpi_scene sub;
	bp_status status = subset_scene(x, scene, x->active.data, x->active_count, &sub);
	if (status != BP_OK)
		return status;
	uint64_t t1 = bpi_now_ns();

	// active x resting, per fixed chunk of the active list.
	bpi_cross_input in = {
		.scene = scene,
		.cells = resting_cells(x),
		.settled = x->settled_count ? &x->settled : NULL,
		.settled_of = x->settled_of.data,
		.filter = x->filter.data,
		.gone = x->gone.data,
		.left_rest = left_rest,
		.active = x->active.data,
		.active_count = m,
		.active_scene = &sub,
		.margin = scene->margin,
		.filters_kept = filters_kept,
	};
	uint64_t tests = 0;
	uint32_t searched = 0;
	status = bpi_cross_find(&x->cross, &in, &tests, &searched);

	// active x active, through the fat boxes the searches left.
	bp_frame_stats among_stats = {0};
	if (status == BP_OK)
		status = bpi_pair_chunks_merge(&x->cross.pairs, &x->fresh, scene->threads);
	if (status == BP_OK) {
		bpi_active_input among = {.scene = &sub, .fat = x->cross.fat.data, .active = x->active.data, .count = m,
			.now = x->cross.step, .changed = x->cross.searchers.data, .changed_count = x->cross.searcher_count};
		status = bpi_active_find(&x->among, &among, &x->fresh, &among_stats);
	}
	if (status != BP_OK)
		return status;
	uint64_t t2 = bpi_now_ns();
	// The active pairs sorted, then merged with the resting pairs. None rest where the
	// resting entities never pair (a static world): the sorted pairs are the step's.
	bpi_pair_buffer *rest = &x->resting_pairs;
	size_t most = rest->count + x->fresh.count;
	if (!bpi_pair_buffer_may_hold(pairs, most) || !sort_canonical(x, &x->fresh, scene->threads))
		return BP_ERR_OUT_OF_MEMORY;
	if (rest->count == 0 && !settling) {
		bpi_pair_buffer_hand_over(&x->fresh, pairs);
		pairs->failed = false;
		x->rest_stale = false;
	} else {
		if ((most > pairs->capacity && !bpi_pair_buffer_reserve(pairs, most - pairs->count)) ||
			(settling && !bpi_pair_buffer_reserve(&x->next_pairs, most)) ||
			!bpi_array_reserve(&x->merge_counts, bpi_pairs_merge_chunks(rest->count)))
			return BP_ERR_OUT_OF_MEMORY;
		pairs->failed = false;
		if (settling) {
			pairs->count = merge_settling(rest, x->gone.data, x->is_active.data, x->fresh.data,
				x->fresh.count, pairs->data, &x->next_pairs);
		} else {
			x->rest_stale |= left_rest;
			pairs->count = bpi_pairs_merge(rest->data, rest->count, x->fresh.data, x->fresh.count,
				x->rest_stale ? x->gone.data : NULL, pairs->data, x->merge_counts.data,
				scene->threads);
			drop_stale(x, most - pairs->count, left_rest);
		}
	}
	uint64_t t3 = bpi_now_ns();

	// Gathering the active entities counts as build, both passes as find, the
	// sort and merge of the active pairs as merge.
	stats->algorithm = BP_ALGO_GRID;
	stats->thread_count = scene->threads;
	stats->candidate_tests += tests + among_stats.candidate_tests;
	stats->entity_count = scene->count;
	stats->active_count = m;
	stats->searched_count = searched;
	stats->path = BP_PATH_RESTING;
	stats->ns_build += t1 - t0;
	stats->ns_find += t2 - t1;
	stats->ns_merge += t3 - t2;
	return BP_OK;
}

/// Counted work of the moving step just taken, by the model: what the next one is
/// predicted to cost. Searches of the first moving step, and of created entities,
/// do not count: they leave bounds held without a margin, or none.
static double moving_work(const bpi_incremental *x, uint32_t searched)
{
	const bpi_active_pairs *a = &x->among;
	if (x->moving_steps == 0)
		searched = 0;
	double work = MOVING_ENTITY_COST * x->active_count + MOVING_KEPT_COST * a->kept_count +
		      MOVING_SEARCH_COST * searched + MOVING_ROW_COST * a->rows_read +
		      (a->laid_out ? MOVING_LAYOUT_COST * x->active_count : 0) + MOVING_LAYOUT_COST * a->extra_laid;
	if (a->found_all && x->moving_steps)
		work += FULL_ENTITY_COST * x->active_count + FULL_PAIR_COST * a->kept_count;
	return work;
}

/// What a full step is predicted to cost, by the same model.
static double full_work(uint32_t count, size_t pairs)
{
	return FULL_ENTITY_COST * count + FULL_PAIR_COST * pairs;
}

static bp_status kept_pairs(bpi_incremental *x, const bpi_scene *scene, const uint32_t *changed, uint32_t count,
	const bpi_changes *moved, bpi_pair_buffer *pairs, bp_frame_stats *stats);

/// Whether the first moving step is worth finding every pair of the fat boxes it is
/// about to make: the kept pairs are predicted from the pairs of the last step,
/// scaled on each axis by how much wider the fat boxes will be than the bounds, as is
/// the chance that two boxes meet. Each changed entity's margin is predicted from how
/// far it moved out of its bounds of the last step (kept by begin_entry), as
/// bpi_margin_of_own_motion takes it, stretch included; counted before that work, so
/// a world that moves too far pays one pass over the changes for the try. Finding the pairs costs
/// a full step with that many pairs, and the steps after re-test them. An entity whose
/// motion reaches past the most margin it can take leaves its fat box within a few
/// steps, searching again each time: when those searches would pass the share at
/// which a moving step gives up, the try would end at once.
static bool worth_entering(const bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes)
{
	const uint32_t n = scene->count, held = BP_MIN(x->entry_count, n);
	const int dims = scene->dims;
	const bpi_scene before = entry_scene(x, scene);
	double extent_sum[3] = {0, 0, 0}, margin_sum = 0, searches = 0;
	// As the first step's margins take them: stretched as the last stay's fat boxes steered.
	const float steps = MOVING_ENTRY_STEPS * bpi_margin_stretch(&x->cross.margin);
	for (int axis = 0; axis < dims; ++axis)
		for (uint32_t i = 0; i < n; ++i)
			extent_sum[axis] += (double)scene->max[axis][i] - scene->min[axis][i];
	for (uint32_t c = 0; c < changes->count; ++c) {
		uint32_t k = changes->list[c];
		if (k >= n)
			continue;
		float moved = 0, extent = 0;
		for (int axis = 0; axis < dims; ++axis) {
			extent = fmaxf(extent, scene->max[axis][k] - scene->min[axis][k]);
			if (k < held)
				moved = fmaxf(moved, fmaxf(fabsf(scene->min[axis][k] - before.min[axis][k]),
							     fabsf(scene->max[axis][k] - before.max[axis][k])));
		}
		float most = MOVING_ENTRY_EXTENTS * extent;
		bool known = k < held && moved <= most;
		margin_sum += known ? fminf(steps * moved, most) : most;
		// Searches per step: one per the steps its margin lasts, when it is capped
		// (most > 0 there: a known entity with most 0 did not move).
		if (!known || !(steps * moved <= most))
			searches += known ? moved / most : 1.0;
	}
	double grown = 1;
	for (int axis = 0; axis < dims; ++axis)
		grown *= extent_sum[axis] > 0 ? (extent_sum[axis] + 2 * margin_sum) / extent_sum[axis] : 1;
	double kept = grown * (double)x->moving_pairs, full = full_work(n, x->moving_pairs);
	return searches <= MOVING_SEARCH_SHARE * n &&
	       MOVING_ENTITY_COST * n + MOVING_KEPT_COST * kept + MOVING_SEARCH_COST * searches <= MOVING_FRACTION * full &&
	       full_work(n, (size_t)kept) <= MOVING_ENTRY_MOST * full;
}

/// The moving state's step: the changed entities that left their fat boxes search
/// the others' fat boxes, and the kept pairs of the fat boxes, sorted, are re-tested
/// straight into the caller's pairs.
static bp_status moving_path(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes,
	const bpi_changes *moved, bpi_pair_buffer *pairs, bp_frame_stats *stats, bool *gave_up)
{
	uint64_t t0 = bpi_now_ns();
	const uint32_t m = x->active_count;
	bpi_cross_input in = {.scene = scene, .active = x->active.data, .active_count = m, .active_scene = scene,
		.margin = scene->margin, .moving = true, .filters_kept = changes->bounds_only};
	uint32_t searched = 0;
	const uint32_t most = !forced_moving(scene) && x->moving_steps > 0 ? (uint32_t)(MOVING_SEARCH_SHARE * m)
									    : UINT32_MAX;
	bp_status status = bpi_cross_moving(&x->cross, &in, changes->list, changes->count, most, &searched);
	if (status != BP_OK)
		return status;
	*gave_up = searched > most; // its searchers got no new fat boxes
	if (*gave_up)
		return BP_OK; // before any work that would cost more than the full step taken instead
	stats->ns_build += bpi_now_ns() - t0;
	stats->searched_count = searched;
	stats->path = BP_PATH_MOVING;
	return kept_pairs(x, scene, x->cross.searchers.data, x->cross.searcher_count, moved, pairs, stats);
}

/// The step's pairs from the pairs of the fat boxes, every entity active in dense
/// order: those of the entities that searched found again (only `changed`, when not
/// NULL, can have), then all re-tested, sorted, straight into `pairs`.
static bp_status kept_pairs(bpi_incremental *x, const bpi_scene *scene, const uint32_t *changed, uint32_t count,
	const bpi_changes *moved, bpi_pair_buffer *pairs, bp_frame_stats *stats)
{
	uint64_t t0 = bpi_now_ns();
	bp_frame_stats among_stats = {0};
	bpi_pair_buffer *found = &x->fresh;
	bpi_pair_buffer_adopt(found, scene->budget);
	found->count = 0;
	found->failed = false;
	// Every entity is active and none rests: the full step's grid is no resting index now.
	bpi_active_input among = {scene, x->cross.fat.data, x->active.data, x->active_count, x->cross.step, true,
		changed, count, moved ? moved->list : NULL, moved ? moved->count : 0, &x->full};
	bp_status status = bpi_active_find(&x->among, &among, found, &among_stats);
	if (status == BP_OK && (found->failed || !bpi_pair_buffer_may_hold(pairs, found->count)))
		status = BP_ERR_OUT_OF_MEMORY;
	if (status != BP_OK)
		return status;
	bpi_pair_buffer_hand_over(found, pairs);
	x->kept_last = true;
	stats->algorithm = BP_ALGO_GRID;
	stats->thread_count = scene->threads;
	stats->candidate_tests += among_stats.candidate_tests;
	stats->entity_count = scene->count;
	stats->active_count = x->active_count;
	stats->ns_find += bpi_now_ns() - t0;
	return BP_OK;
}

/// A step of the neighbour list (bp_world_def.skin): the kept pairs re-tested, those
/// of the few entities that left their boxes grown by half the skin found again by
/// their new grown boxes; when many left, or the first time, every box grown again
/// and every pair of them found again.
static bp_status neighbour_path(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes,
	const bpi_changes *moved, bp_algorithm algorithm, bool sorted, bpi_pair_buffer *pairs, bp_frame_stats *stats)
{
	if (x->neighbour_wait > 0) {
		x->neighbour_wait--;
		return full_step(x, scene, false, algorithm, sorted, pairs, stats);
	}
	uint64_t t0 = bpi_now_ns();
	const float half = scene->skin * 0.5f;
	const uint32_t most = (uint32_t)(NEIGHBOURS_SEARCH_SHARE * scene->count);
	uint32_t searched = 0;
	bp_status status = BP_OK;
	if (x->neighbours) {
		status = update_moving(x, scene->count);
		bpi_cross_input in = {.scene = scene, .active = x->active.data, .active_count = x->active_count,
			.active_scene = scene, .margin = half, .moving = true, .filters_kept = changes->bounds_only};
		if (status == BP_OK)
			status = bpi_cross_moving(&x->cross, &in, changes->list, changes->count, most, &searched);
		if (status != BP_OK)
			return status;
	}
	bool again = !x->neighbours || searched > most; // then no fat box changed
	if (again && x->neighbours && !(scene->debug_flags & BP_DEBUG_ALWAYS_INCREMENTAL)) {
		bool paid = x->neighbour_steps >= NEIGHBOURS_PAYS_STEPS;
		uint32_t doubled = x->neighbour_backoff ? 2 * x->neighbour_backoff : MOVING_WAIT_LEAST;
		x->neighbour_backoff = paid ? 0 : BP_MIN(doubled, MOVING_WAIT_MOST);
		if (!paid) { // this step is the wait's first
			x->neighbour_wait = x->neighbour_backoff - 1;
			return full_step(x, scene, false, algorithm, sorted, pairs, stats);
		}
	}
	if (again) {
		if (!every_active(x, scene, half, true))
			return BP_ERR_OUT_OF_MEMORY;
		x->neighbours = true;
		searched = scene->count;
	}
	stats->ns_build += bpi_now_ns() - t0;
	stats->searched_count = searched;
	stats->path = BP_PATH_NEIGHBOURS;
	x->neighbour_steps = again ? 1 : x->neighbour_steps + 1;
	return kept_pairs(x, scene, again ? NULL : x->cross.searchers.data, x->cross.searcher_count, moved, pairs,
		stats);
}

// ---- settling ---------------------------------------------------------------------

/// The next settled members into x->settling: the members still resting, then
/// the quiet active entities (is_active 1; those changed this step hold 2).
/// Returns their count.
static uint32_t gather_members(bpi_incremental *x, uint32_t n)
{
	uint32_t *list = x->settling.data, m = 0;
	for (uint32_t k = 0; k < x->settled_count; ++k) {
		uint32_t d = x->settled_of.data[k];
		if (d < n && !x->gone.data[d] && (x->position.data[d] & SETTLED_BIT))
			list[m++] = d;
	}
	for (uint32_t k = 0; k < x->active_count; ++k)
		if (x->is_active.data[x->active.data[k]] == 1)
			list[m++] = x->active.data[k];
	return m;
}

/// Makes the settled grid built before the step (in settled_spare, over x->settling's
/// m members) the second resting level, and the pairs the step's merge kept for it
/// (in next_pairs) the resting pairs. Cannot fail.
static void commit_settled(bpi_incremental *x, const bpi_scene *scene, uint32_t m)
{
	bpi_cells t = x->settled;
	x->settled = x->settled_spare;
	x->settled_spare = t;
	bpi_array_swap(&x->settled_of, &x->settling); // the members become the grid's map
	x->settled_count = m;
	x->settled_left = 0;
	uint8_t *is_active = x->is_active.data;
	for (uint32_t j = 0; j < m; ++j) {
		uint32_t d = x->settled_of.data[bpi_cells_entity_at(&x->settled, j)];
		x->position.data[d] = SETTLED_BIT | j;
		x->gone.data[d] = 0;
		x->filter.data[d] = (bpi_rest_filter){scene->category[d], scene->mask[d], scene->flags[d]};
		is_active[d] = 0;
	}
	// The changing entities stay active with their fat boxes, and query the new
	// settled level next step: their candidates lack the newly settled, which the
	// active x active pass no longer pairs them with.
	uint32_t out = 0;
	for (uint32_t k = 0; k < x->active_count; ++k) {
		uint32_t d = x->active.data[k];
		if (is_active[d]) {
			is_active[d] = 1;
			x->active.data[out] = d;
			x->cross.fat.data[out] = x->cross.fat.data[k];
			x->cross.growth.data[out++] = x->cross.growth.data[k];
		}
	}
	x->active_count = out;
	x->cross.requery_settled = true;
	bpi_active_invalidate(&x->among);
	bpi_pair_buffer t_pairs = x->resting_pairs;
	x->rest_stale = false;
	x->resting_pairs = x->next_pairs;
	x->next_pairs = t_pairs;
}

/// Before an incremental step: whether the active entities it does not change settle
/// after it, with the members still resting, into a new settled grid, when enough of
/// them are quiet (see the top). If so the grid is built now, into settled_spare, the
/// step's merge keeps the resting pairs for it, and commit_settled makes both current:
/// returns the members. All or nothing: when memory runs out or the grid cannot be
/// built, 0, and they stay active, which is exact too. The entities changed this step
/// are marked 2 in is_active until the commit, or past a return of 0.
static uint32_t prepare_settling(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes)
{
	const uint32_t n = scene->count;
	uint8_t *is_active = x->is_active.data;
	for (uint32_t c = 0; c < changes->count; ++c)
		if (changes->list[c] < n)
			is_active[changes->list[c]] = 2; // changed this step
	uint32_t quiet = 0;
	for (uint32_t k = 0; k < x->active_count; ++k)
		quiet += is_active[x->active.data[k]] == 1;
	uint32_t staying = x->settled_count - x->settled_left, most = staying + quiet;
	bool worth = quiet >= atomic_load_explicit(&settle_min, memory_order_relaxed) &&
		     quiet >= x->active_count - quiet && quiet >= SETTLED_GROWTH * staying;
	if (worth && most > SETTLED_FRACTION * x->resting_count) {
		x->settled_full = true; // a full step takes them all into one grid
		worth = false;
	}
	if (worth && bpi_array_reserve(&x->settling, most)) {
		uint32_t m = gather_members(x, n);
		bpi_scene members;
		bpi_build build = {0};
		if (subset_scene(x, scene, x->settling.data, m, &members) == BP_OK &&
			bpi_cells_build(&x->settled_spare, false, &members, &build) == BP_OK)
			return m;
	}
	for (uint32_t c = 0; c < changes->count; ++c)
		if (changes->list[c] < n)
			is_active[changes->list[c]] = 1;
	return 0;
}

/// The most entities this step can leave active: those active now and the
/// changed ones not among them. Counted, O(changes).
static uint32_t active_bound(const bpi_incremental *x, const bpi_changes *changes, uint32_t n)
{
	const uint32_t known = BP_MIN(changes->previous_count, (uint32_t)x->is_active.capacity);
	uint32_t joining = 0;
	for (uint32_t c = 0; c < changes->count; ++c) {
		uint32_t i = changes->list[c];
		joining += i < n && (i >= known || !x->is_active.data[i]);
	}
	return x->active_count + joining;
}

/// Whether a moving state takes this step moving, leaving it when not.
static bool stays_moving(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes)
{
	if (!x->moving)
		return false;
	bool forced_full = scene->debug_flags & BP_DEBUG_ALWAYS_FULL;
	bool forced_incremental = scene->debug_flags & BP_DEBUG_ALWAYS_INCREMENTAL;
	bool cheaper = x->moving_work <= MOVING_FRACTION * full_work(scene->count, x->moving_pairs);
	bool always = atomic_load_explicit(&moving_always, memory_order_relaxed);
	if (!changes->all && !forced_full && (cheaper || forced_incremental || always))
		return true;
	leave_moving(x);
	return false;
}

/// Whether a try begun by the last step enters the moving state now: laid out from the
/// bounds that step kept, every entity active with them as its fat box, as if the
/// state had been entered then.
static bool enters_moving(bpi_incremental *x, const bpi_scene *scene, const bpi_changes *changes)
{
	if (!x->entering)
		return false;
	x->entering = false;
	x->moving_steps = 0;
	const bpi_scene before = entry_scene(x, scene);
	if (changes->all || (scene->debug_flags & BP_DEBUG_ALWAYS_FULL) ||
		(!forced_moving(scene) && !worth_entering(x, scene, changes)) || !every_active(x, &before, 0.0f, false)) {
		leave_moving(x);
		return false;
	}
	x->moving_work = 0;
	x->moving = x->resting_valid = true;
	return true;
}

bp_status bpi_incremental_step(bpi_incremental **state, const bpi_scene *scene, const bpi_changes *changes,
	bp_algorithm algorithm, bool sorted, bpi_pair_buffer *pairs, bp_frame_stats *stats)
{
	if (!*state) {
		*state = bpi_alloc(sizeof **state);
		if (!*state)
			return BP_ERR_OUT_OF_MEMORY;
		**state = (bpi_incremental){.moving_wait = MOVING_WAIT_LEAST};
	}
	bpi_incremental *x = *state;
	uint64_t t0 = bpi_now_ns();
	bp_status status = BP_OK;
	// Only this step's changes lie between its bounds and those packed by the last.
	const bpi_changes *moved = x->kept_last && !changes->all ? changes : NULL;
	x->kept_last = false;
	bool forced_full = scene->debug_flags & BP_DEBUG_ALWAYS_FULL;
	bool forced_incremental = scene->debug_flags & BP_DEBUG_ALWAYS_INCREMENTAL;
	if (scene->skin > 0 && !changes->all && !forced_full) {
		status = neighbour_path(x, scene, changes, moved, algorithm, sorted, pairs, stats);
		if (status != BP_OK) {
			x->neighbours = false;
			return status;
		}
		x->moving_pairs = pairs->count;
		stats->pair_count = pairs->count;
		return BP_OK;
	}
	bool moving = stays_moving(x, scene, changes) || enters_moving(x, scene, changes);
	bool usable = x->resting_valid && !changes->all;
	// The cheaper path by the model, judged before any work; without a resting
	// index, on the entities the next step would find active.
	uint32_t active = changes->all ? scene->count
			  : usable     ? active_bound(x, changes, scene->count)
				       : changes->count;
	double active_cost = INCREMENTAL_ACTIVE_COST * active;
	bool worth = !forced_full &&
		     (forced_incremental || active_cost <= INCREMENTAL_REBUILD_FRACTION * INCREMENTAL_FULL_COST * scene->count);
	bool incremental = moving || (usable && worth && (!x->settled_full || forced_incremental));
	bool left_rest = false;
	if (moving)
		status = update_moving(x, scene->count);
	else if (incremental)
		status = update_sets(x, scene, changes, scene->threads, &left_rest);
	uint64_t ns_sets = bpi_now_ns() - t0;
	// A full step keeps a resting index when the next step is likely to use it.
	bool keep = worth || forced_full || !x->stepped;
	bool gave_up = false;
	if (status == BP_OK && moving)
		status = moving_path(x, scene, changes, moved, pairs, stats, &gave_up);
	if (gave_up) {
		leave_moving(x);
		moving = incremental = false;
	}
	uint32_t settling = 0; // members of the settled grid this step builds, if any
	if (status == BP_OK && !moving && incremental) {
		uint64_t t1 = bpi_now_ns();
		settling = prepare_settling(x, scene, changes);
		stats->ns_build += bpi_now_ns() - t1;
	}
	if (status == BP_OK && !moving)
		status = incremental
				 ? incremental_path(x, scene, left_rest, settling > 0, changes->bounds_only, pairs, stats)
				 : full_step(x, scene, keep, algorithm, sorted, pairs, stats);
	if (status != BP_OK) {
		x->resting_valid = x->moving = x->entering = false; // the sets may be half updated: start over
		return status;
	}
	x->stepped = true;
	if (moving) {
		// Blended: searches come in waves, as fat boxes made in one step are left
		// in another.
		double work = moving_work(x, stats->searched_count);
		x->moving_work = x->moving_steps > 1 ? 0.75 * x->moving_work + 0.25 * work : work;
		x->moving_steps++;
	} else if (settling) {
		commit_settled(x, scene, settling);
	} else if (atomic_load_explicit(&moving_always, memory_order_relaxed) && !forced_full) {
		begin_entry(x, scene);
	} else if (!keep) { // most entities change: moving may pay, once the wait is over
		if (x->moving_wait > 0)
			x->moving_wait--;
		else
			begin_entry(x, scene);
	}
	x->moving_pairs = pairs->count;
	stats->ns_build += ns_sets;
	stats->pair_count = pairs->count;
	return BP_OK;
}
