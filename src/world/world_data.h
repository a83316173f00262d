// SPDX-License-Identifier: MIT
// The world's internal layout: SoA entity store, handle slots, step state.
#ifndef BP_WORLD_DATA_H
#define BP_WORLD_DATA_H

#include <broadphase/world.h>
#include "base/core.h"
#include "parallel/soa.h"
#include "step/step.h"

#define BP_WORLD_COOKIE 0x42504457 // "BPDW": marks a def made by bp_world_def_default
#define BP_MAX_ENTITIES (UINT32_MAX - 1)
#define BP_NO_DENSE UINT32_MAX

// A handle's generation word is two fields: the world's tag in the top bits, so
// that a handle of another world is stale here (world tags come from one
// process-wide counter), and below it the slot's reuse count, from 1. A slot
// whose count would pass BPI_GENERATION_COUNT_MAX is retired, never reused.
#define BPI_WORLD_TAG_BITS 12u
#define BPI_GENERATION_COUNT_BITS (32u - BPI_WORLD_TAG_BITS)
#define BPI_GENERATION_COUNT_MAX ((1u << BPI_GENERATION_COUNT_BITS) - 1u)
#define BPI_WORLD_TAG_COUNT ((1u << BPI_WORLD_TAG_BITS) - 1u) ///< tags 1 .. this; 0 is never a world's

/// Handle slot. 12 bytes.
typedef struct bpi_slot {
	uint32_t generation; ///< the live handle's generation word; count 0 marks a retired slot
	uint32_t dense;      ///< dense index while alive, BP_NO_DENSE when free
	uint32_t next_free;  ///< next free slot index when free
} bpi_slot;
_Static_assert(sizeof(bpi_slot) == 12, "bpi_slot is 12 bytes");
_Static_assert(BPI_GENERATION_COUNT_MAX == 0xFFFFFu && BPI_WORLD_TAG_BITS == 12u,
	"bp_entity_reuse_count and bp_entity_world_tag (types.h) read these fields");

/// Dense indices marked since some moment, each once.
typedef struct bpi_marks {
	BPI_ARRAY(uint32_t) list;
	uint32_t count;       ///< entries of list in use
	bool all;             ///< the list could not grow: take every entity as marked
	bool bounds_only;     ///< every mark since the clear was a change of bounds
	uint32_t since_count; ///< entities at that moment
} bpi_marks;

/// Bits of bp_world.changed: which mark lists hold the index.
enum { BPI_MARK_STEP = 1, BPI_MARK_FRAME = 2 };

/// Step events (bp_world_set_events): the last step's selected pairs by handle, sorted,
/// and what began and ended against the step before.
typedef struct bpi_step_events {
	uint64_t categories;              ///< 0: off
	BPI_ARRAY(bp_pair_event) named;   ///< the last step's selected pairs, handle order
	size_t named_count;
	BPI_ARRAY(bp_pair_event) scratch; ///< the new step's names, swapped with `named`
	BPI_ARRAY(bp_pair_event) began, ended;
	size_t began_count, ended_count;
	bool valid; ///< began/ended describe the last successful step
	bool lost;  ///< the last successful step found no memory for its events
} bpi_step_events;

/// After a successful step: names the selected pairs, compares them with the last
/// named step, and keeps began and ended. Never fails the step: without memory the
/// events of this step are marked lost and the last names are kept, so the next
/// step's events are the net change since them.
void bpi_world_events_step(bp_world *world);
/// Frees the events' memory; they are off afterwards.
void bpi_world_events_free(bpi_step_events *events);

struct bp_world {
	int dims;
	int thread_count; ///< as requested; 0 = all cores
	bpi_executor executor;
	bp_pair_filter_fn *pair_filter;
	void *pair_filter_user;
	/// Bumped whenever a create or destroy changes which handle sits at which dense
	/// index: two snapshots with the same value name their dense indices alike.
	uint64_t layout;
	bp_algorithm algorithm;
	float cell_size;
	bool canonical_pairs;
	bool periodic;
	float period[3]; ///< when periodic; z unused in 2D
	uint32_t debug_flags;
	bool incremental;
	float margin; ///< incremental steps' fat-box margin; 0 = from observed motion
	float skin;   ///< incremental worlds' neighbour-list skin; 0 = none
	uint32_t query_hierarchy_frames; ///< bp_world_def.query_hierarchy_frames
	size_t memory_limit; ///< bytes of pair memory a step may hold; 0 = no limit
	double origin[3];    ///< subtracted from double bounds before they are rounded (world_large.c)

	// Dense SoA store: `count` live entities, room for `capacity`.
	uint32_t count;
	uint32_t capacity;
	bpi_soa soa; ///< soa.entity[d] is the handle at dense index d: its slot is index1 - 1
	uint32_t static_count;
	uint32_t filtered_count; ///< entities whose category or mask is not all bits
	uint32_t sphere_count;

	// Handle slots, growable; free list threaded through next_free.
	uint32_t handle_tag; ///< this world's tag, the top bits of every handle's generation
	bpi_slot *slots;
	uint32_t slot_count;
	uint32_t slot_capacity;
	uint32_t free_head;  ///< BP_NO_DENSE when empty
	uint32_t free_count; ///< slots on the free list

	// What changed since the last step and since the last submitted frame
	// (incremental worlds only; docs/design.md "Incremental path"). An entity is marked when created, when
	// its bounds, filter, kind or shape get a different value, and when a destroy
	// moves it to another dense index; for frames also when its user key changes.
	uint8_t *changed;      ///< per dense index, `capacity` entries: BPI_MARK_* bits
	bpi_marks step_marks;  ///< since the last successful bp_world_step
	bpi_marks frame_marks; ///< since the last successful bp_frame_submit

	// Step state.
	bpi_stepper stepper; ///< bp_world_step's; the scheduler has its own
	bpi_budget budget;   ///< pair memory of the stepper and `pairs`, against memory_limit
	bpi_pair_buffer pairs;
	BPI_ARRAY(bp_pair) sort_scratch; ///< canonical_pairs: the O(count) sort's second buffer
	bp_frame_stats stats;
	bpi_step_events events; ///< began and ended pairs of bp_world_step (world_events.c)
	struct bpi_frames *frames; ///< the frame scheduler (frame.c); its thread starts on the first submit

	char last_error[192];
};

/// No entity needs bpi_scene_accepts: none is static, filtered or a sphere.
static inline bool bpi_world_unfiltered(const bp_world *w)
{
	return w->static_count == 0 && w->filtered_count == 0 && w->sphere_count == 0;
}

/// The settings the world's steps and submitted frames run with.
static inline bpi_step_settings bpi_world_settings(const bp_world *w)
{
	return (bpi_step_settings){
		.dims = w->dims,
		.algorithm = w->algorithm,
		.thread_count = w->thread_count,
		.executor = w->executor,
		.pair_filter = w->pair_filter,
		.pair_filter_user = w->pair_filter_user,
		.cell_size = w->cell_size,
		.debug_flags = w->debug_flags,
		.incremental = w->incremental,
		.margin = w->margin,
		.skin = w->skin,
		.periodic = w->periodic,
		.period = {w->period[0], w->period[1], w->period[2]},
		.canonical_pairs = w->canonical_pairs,
		.memory_limit = w->memory_limit,
		.query_hierarchy_frames = w->query_hierarchy_frames,
	};
}

/// Checks `count` boxes of bounds arrays (all arrays present, finite, min <= max);
/// the error names the array index.
bp_status bpi_world_check_arrays(bp_world *world, const bp_bounds_arrays *bounds, uint32_t count);
/// Box i of bounds arrays (z 0 in 2D).
void bpi_world_array_box(const bp_world *world, const bp_bounds_arrays *bounds, size_t i, float min[3], float max[3]);

/// Records that dense entity d changed since the last step (incremental
/// worlds; a no-op otherwise). Never fails: when the list cannot grow the next
/// step treats every entity as changed.
void bpi_world_mark(bp_world *world, uint32_t d);

/// Writes the bounds (dims floats each) of dense entity d, marking it when they
/// differ bit for bit from the stored ones.
void bpi_world_store_bounds(bp_world *world, uint32_t d, const float *min, const float *max);

/// Write one attribute of dense entity d, keeping the world's counts (static,
/// filtered) and marking it when the value differs.
void bpi_world_store_filter(bp_world *world, uint32_t d, uint64_t category, uint64_t mask);
void bpi_world_store_kind(bp_world *world, uint32_t d, bp_kind kind);
void bpi_world_store_user_key(bp_world *world, uint32_t d, uint64_t user_key);
/// Makes dense entity d a sphere or a box (its bounds stay), keeping sphere_count.
void bpi_world_store_shape(bp_world *world, uint32_t d, bool sphere);
/// BP_ERR_INVALID_ARGUMENT, naming `what`, unless kind is dynamic or static.
bp_status bpi_world_check_kind(bp_world *world, bp_kind kind, const char *what);

/// Forgets the marks after a successful step.
void bpi_world_clear_changes(bp_world *world);
/// Records that dense entity d changed in a way frames see but steps do not
/// (its user key).
void bpi_world_mark_frame(bp_world *world, uint32_t d);
/// Forgets the frame marks after a successful submit.
void bpi_world_clear_frame_changes(bp_world *world);

/// BP_OK when dense range [first, first + count) lies inside the world, else
/// BP_ERR_OUT_OF_RANGE with the error recorded.
bp_status bpi_world_check_range(bp_world *world, uint32_t first, uint32_t count);

/// Checks a bulk call's target (bp_target) before anything is written: its kind is known,
/// the range lies inside the world, each dense index is below the count, each handle is
/// live (errors name the list element). BP_ERR_INVALID_ARGUMENT for a NULL list with
/// count > 0.
bp_status bpi_target_check(bp_world *world, const bp_target *target);

/// Dense index of target i (checked by bpi_target_check).
uint32_t bpi_target_dense(const bp_world *world, const bp_target *target, uint32_t i);

/// Slot of a live entity, or NULL with the error recorded.
bpi_slot *bpi_world_live_slot(const bp_world *world, bp_entity entity);
/// How an error names an entity, the same way everywhere: "entity {index1,
/// count}" by handle (bpi_handle_text), "ARRAY[i]" by index into the caller's
/// array, or "new entity". Formatted only when an error is written.
typedef struct bpi_entity_name {
	const char *array; ///< the caller's array, or NULL
	uint64_t index;    ///< index into it
	bp_entity handle;  ///< when array is NULL; {0} for a new entity
} bpi_entity_name;

static inline bpi_entity_name bpi_name_handle(bp_entity e) { return (bpi_entity_name){NULL, 0, e}; }
static inline bpi_entity_name bpi_name_element(const char *array, uint64_t i)
{
	return (bpi_entity_name){array, i, {0, 0}};
}

/// The text of a name, in buf.
const char *bpi_entity_name_text(const bp_world *world, bpi_entity_name name, char *buf, size_t size);

/// A handle as messages print it, in buf: "entity {index1, count}", the slot's reuse
/// count without the world's tag (bp_entity_reuse_count), as the README shows handles;
/// a handle whose tag is not this world's gets " of world tag T" after it.
const char *bpi_handle_text(const bp_world *world, bp_entity e, char *buf, size_t size);

/// Checks one box of dims floats per corner; `name` names it in the error.
bp_status bpi_world_check_box(bp_world *world, const float *min, const float *max, bpi_entity_name name);

/// A stale handle found in the caller's array: the recorded error, which names
/// the handle, gets "ARRAY[i]: " in front. Returns BP_ERR_STALE_HANDLE.
bp_status bpi_world_stale_element(bp_world *world, const char *array, uint32_t i);

/// Records the text of an error for bp_world_last_error and returns status.
bp_status bpi_world_fail(bp_world *world, bp_status status, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

#endif
