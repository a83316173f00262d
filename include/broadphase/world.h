// SPDX-License-Identifier: MIT
// The world: an SoA store of entity bounds, handles, filters, and the pair step.
#ifndef BROADPHASE_WORLD_H
#define BROADPHASE_WORLD_H

#include <stdbool.h>
#include "base.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

// Threads. A world has one writer: the host thread that changes it (creates and destroys
// entities, sets bounds and settings, steps and submits frames). Every function here that
// takes a bp_world belongs to the writer, reads included (bp_world_pairs, bp_world_stats,
// bp_world_last_error, ...), since the writer's calls change what they return: calls on one
// world are not synchronised with each other, so a host that moves its writer between threads
// must order the calls itself. The functions that take no world (bp_world_def_default,
// bp_entity_def_default, bp_algorithm_*, bp_pairs_sort, bp_pairs_checksum, bp_splitmix64) read
// only their arguments: any thread. To share a step's results with other threads, publish it
// through the frame scheduler (frame.h): any thread may read a published frame.
//
// Pair rules, the same for every algorithm, every thread count and both step paths:
// - Boxes are closed: a and b overlap iff a.min[k] <= b.max[k] and b.min[k] <= a.max[k] on
//   every axis k, so touching boxes overlap and boxes of zero extent (points) are valid.
// - Filter: a pair is reported iff (a.category & b.mask) != 0 and (b.category & a.mask) != 0,
//   and not both entities are BP_KIND_STATIC. A pair with a sphere in it must also overlap as
//   shapes (bp_shape); a periodic world compares minimum images (bp_world_def.periodic).
// - Each unordered pair appears once, as dense indices (lo, hi) with lo < hi; no entity pairs
//   with itself.
// - Deterministic: the same pairs in the same order for every thread count and every run.
//   canonical_pairs sorts them by lo, then hi (periodic worlds and views always; incremental
//   worlds on every step but a full one that keeps nothing, which keeps its algorithm's order).
//   Unsorted, a world of few dynamic entities among static ones gives the dynamic entities'
//   pairs in the algorithm's order, then their pairs with static ones (BP_DEBUG_NO_STATIC_TREE).
// - Bad input (NaN or infinite bounds, min > max, stale handles, counts out of range, failed
//   allocations) never crashes: the call returns a bp_status, bp_world_last_error says what
//   and where, and the world stays as it was.

typedef struct bp_world bp_world;

/// Lower-case name ("auto", "brute", "sap", ...); "?" for an unknown value.
BP_API const char *bp_algorithm_name(bp_algorithm algorithm);
/// Parses a name as printed by bp_algorithm_name. Returns BP_ERR_UNKNOWN_ALGORITHM
/// for an unknown name and for an algorithm not built into this library.
BP_API bp_status bp_algorithm_from_name(const char *name, bp_algorithm *out);
/// True when this build of the library implements the algorithm.
BP_API bool bp_algorithm_available(bp_algorithm algorithm);

/// World settings. Always start from bp_world_def_default(); fields are only
/// ever appended.
typedef struct bp_world_def {
	int dims;               ///< 2 or 3. Default 3. 2D worlds store no z arrays.
	uint32_t capacity;      ///< entities to reserve room for. Default 0.
	bp_algorithm algorithm; ///< default BP_ALGO_AUTO
	/// Threads for a step, the caller's included, 0 to BP_MAX_THREADS. 0 = all
	/// cores (at most BP_MAX_THREADS) for bp_world_step and bp_frame_step, and all
	/// cores but one for the frame builder, so the host's own thread keeps its core
	/// while a frame builds. Whatever the count, a step of fewer than BP_SERIAL_STEP_ENTITIES
	/// entities runs on the calling thread alone, where other threads would gain
	/// nothing. Default 0.
	int thread_count;
	float cell_size;        ///< grid/hash cell edge; 0 = chosen from extents. Default 0.
	/// Sort pairs by (lo, hi) after each step, on the step's threads, in time linear
	/// in the pairs (about 14 ms for 1.5M pairs on 1 thread), with a second buffer of
	/// 8 bytes per pair kept across steps; when that buffer cannot be had the step
	/// sorts in place instead, slower, and does not fail. An incremental world's steps
	/// that reuse what it kept come sorted without it; its full steps that keep nothing
	/// sort only with it (and fail when the buffer cannot be had). Default false.
	bool canonical_pairs;
	/// Periodic (toroidal) world: space is the torus [0, period[k]) on each axis,
	/// and a box is the same as itself moved by any whole number of periods on
	/// any axis, so boxes may lie anywhere. Two boxes overlap iff on every axis
	/// their closed intervals overlap for some integer shift of one of them by a
	/// multiple of the period (touching across the seam counts); filters and
	/// static kinds apply as usual. Every box's extent must be <= period / 2 on
	/// each axis (minimum image): bp_world_step otherwise returns
	/// BP_ERR_PERIODIC_EXTENT, names the entity (dense index) and axis in
	/// bp_world_last_error, and keeps the previous pairs. Works with every
	/// algorithm; the pairs are always sorted by (lo, hi), whatever
	/// canonical_pairs says. Bounds are reduced modulo the period in double and
	/// rounded once to float: exact when bounds and period lie on a common binary
	/// grid (integers, multiples of 1/1024 below 2^13, ...), otherwise a contact
	/// exactly at the seam may be decided by one ulp. Frames submitted to the
	/// scheduler run the same periodic step. Default false.
	bool periodic;
	/// Period per axis when periodic (z ignored in 2D): each > 0 and finite, else
	/// bp_world_create returns BP_ERR_INVALID_ARGUMENT. Default 0.
	float period[3];
	/// bp_debug_flag bits; unknown bits make bp_world_create return
	/// BP_ERR_INVALID_ARGUMENT. Default 0.
	uint32_t debug_flags;
	/// Incremental steps: the world keeps what it found across steps, and a step
	/// costs what changed since the last one (see "Incremental steps" below).
	/// Steps that reuse what the world kept give pairs sorted by (lo, hi); a full
	/// step that keeps nothing gives its algorithm's order, as a plain world does,
	/// unless canonical_pairs is set (then every step is sorted). The path, and so
	/// the order, depends only on the history. Frames follow: the
	/// world also marks what changed since the last bp_frame_submit (user keys
	/// included), submit copies only those entities into the buffer it reuses,
	/// and the builder searches only those. Periodic worlds take the full path.
	/// Default false.
	bool incremental;
	/// Incremental worlds: how far (in bounds units, on every side) a changed
	/// entity's bounds are enlarged when it searches the resting entities. While its
	/// bounds stay inside that enlarged box and its filter and kind do not change, a
	/// step re-tests exactly what that search found instead of searching again, so
	/// an entity that moves a little each step searches once in many steps. Only
	/// speed depends on it, never a pair. 0 = chosen from the motion observed
	/// (about eight steps of it, at most half the typical extent of the entities
	/// that move and half the entity's own, stretched while more than 2% of the
	/// enlarged boxes are left each step and shrunk while fewer than 0.5% are; when
	/// most entities change every step, from each entity's own motion, see
	/// bp_frame_stats.path); an entity that moved at a steady
	/// velocity between its last two searches then gets a box that also reaches up to
	/// eight steps of that motion (at most half its extent) further on the side it
	/// moves to. Enlarged boxes are clamped to the finite float range (they still
	/// hold the bounds), so any margin, and any motion, is exact near +-FLT_MAX.
	/// Must be >= 0 and finite, else bp_world_create returns
	/// BP_ERR_INVALID_ARGUMENT. Default 0.
	float margin;
	/// The most bytes of pair memory a step may hold; 0 = no limit. Pair memory
	/// is what grows with the number of pairs: the per-chunk pair buffers and
	/// the step's pairs (up to about 25 bytes per pair for bp_world_step) and,
	/// for frames, each view's pairs and the arrays derived from them (48 to 83
	/// bytes per pair more, counted while a reader holds the view). A step or
	/// frame build that would pass the limit stops at once and fails with
	/// BP_ERR_OUT_OF_MEMORY; the previous pairs (or published frame) stay, and
	/// bp_world_step names the limit in bp_world_last_error. Memory kept from
	/// earlier steps counts: after the limit is lowered below what the world
	/// holds, a step that finds any pair fails, and one that finds none succeeds
	/// and gives back the pair memory it held. bp_world_step and
	/// the frame builder each count their own memory against the limit. Not
	/// counted: memory that grows with the entities (their store, the
	/// algorithms' indexes, frame snapshots), in incremental and periodic worlds
	/// the kept resting pairs and the pair sort's scratch, canonical_pairs' sort
	/// scratch, and the frame builder's pair sort scratch on more than one
	/// thread. Default 0.
	size_t memory_limit;
	/// Where parallel loops run. Default BP_EXECUTOR_WORKERS. An unknown value
	/// makes bp_world_create return BP_ERR_INVALID_ARGUMENT.
	bp_executor executor;
	/// With BP_EXECUTOR_HOST: the host's task system, which then decides the
	/// threads (thread_count is ignored). enqueue and finish must be set and
	/// worker_count in [1, BP_MAX_THREADS], else bp_world_create returns
	/// BP_ERR_INVALID_ARGUMENT. Ignored with the other executors.
	bp_task_system task_system;
	/// Called for every pair that passed the bounds, filter and kind tests, in
	/// the pairs' order, after each step and frame build, on the thread that
	/// steps (the writer, or the world's frame builder thread, or the writer in
	/// bp_frame_step), one call at a time; pairs it returns false for are not
	/// reported (nor counted in events).
	/// In an incremental world it is asked about every reported pair each step,
	/// not only new ones: keep it cheap, and prefer category and mask where they
	/// can say the same. NULL (the default): every pair is reported.
	bp_pair_filter_fn *pair_filter;
	void *pair_filter_user; ///< passed to pair_filter
	/// Incremental worlds: > 0 keeps a neighbour list, as particle codes do (LAMMPS,
	/// HOOMD). Every entity's bounds are grown by skin / 2 on every side, the pairs of
	/// those grown boxes are found once and kept, and each step re-tests the kept
	/// pairs on the true bounds. An entity whose bounds leave its grown box (it moved
	/// more than skin / 2) gets a new one and its pairs are found again; when more
	/// than 2% leave in one step, the list is found again for all. Only speed depends
	/// on it, never a pair: it pays when entities move a small part of the skin per
	/// step. Must be >= 0 and finite, else bp_world_create returns
	/// BP_ERR_INVALID_ARGUMENT. Default 0 (no neighbour list).
	float skin;
	/// Frames: a reader's query of a view has the builder make the query hierarchy of
	/// the next frame, and of this many frames after it though no reader queries them,
	/// so a reader that skips frames finds the hierarchy made rather than building it
	/// on its own thread. A frame no reader queried for longer gets none until one
	/// asks. 0: only the next frame; UINT32_MAX: every frame from the first query on.
	/// A query of a world view (bp_world_view) counts as a reader's. Only speed depends
	/// on it, never an answer. Default 8.
	uint32_t query_hierarchy_frames;
	int32_t internal_value; ///< set by bp_world_def_default; do not touch
} bp_world_def;

BP_API bp_world_def bp_world_def_default(void);

/// Creates a world. On error *out is NULL, nothing is allocated and
/// bp_world_create_error says why. Any thread; the thread that then changes the
/// world is its writer.
BP_API bp_status bp_world_create(const bp_world_def *def, bp_world **out);
/// Why the calling thread's last failed bp_world_create failed, naming the
/// setting ("thread_count 2000 is outside [0, 1024] (BP_MAX_THREADS)"); there
/// is no world to ask. Kept until the next failure on this thread. Any thread.
BP_API const char *bp_world_create_error(void);
/// Destroys a world and every entity in it, and joins its builder thread. NULL is
/// ignored. The writer only. Warning: no other thread may be inside bp_frame_acquire
/// or bp_frame_wait on the world; views already held stay valid.
BP_API void bp_world_destroy(bp_world *world);

/// Text of the last error a call on this world returned, naming what and where.
/// An entity is named one of three ways, whatever the call: by handle
/// ("entity {12, 1}: min_x > max_x ..."), by its place in the array the caller
/// passed ("bounds[3]: min_y is nan", "entities[2]: entity {7, 3}: destroyed
/// ...", "dense_indices[1]: dense index 99 is outside [0, 10)"), or by dense
/// index when a step finds it ("dense index 5: extent_x ..."). A handle prints as
/// {index1, bp_entity_reuse_count(e)}, without the world's tag that generation also
/// holds; a handle of another world adds its tag apart ("entity {3, 1} of world tag
/// 7: a handle of another world"). Empty when no call has failed. Valid until
/// the next call on the world. The writer only.
/// Calls any thread may make (bp_frame_acquire, bp_frame_wait, queries) do not
/// write it: their status says all.
BP_API const char *bp_world_last_error(const bp_world *world);

/// Entity settings. Start from bp_entity_def_default().
typedef struct bp_entity_def {
	float min[3];       ///< lower corner; min[2] ignored in 2D. Default 0.
	float max[3];       ///< upper corner; max[2] ignored in 2D. Default 0.
	uint64_t category;  ///< the 64 filter bits this entity is. Default 1.
	/// Categories it pairs with: a and b pair iff (a.category & b.mask) and
	/// (b.category & a.mask) are both non-zero. Default all (UINT64_MAX).
	uint64_t mask;
	bp_kind kind;       ///< default BP_KIND_DYNAMIC
	uint64_t user_key;  ///< opaque to the library; pair events name entities by it. Default 0.
	bp_shape shape;     ///< default BP_SHAPE_BOX; a sphere's bounds are centre -+ radius
} bp_entity_def;

BP_API bp_entity_def bp_entity_def_default(void);

/// Creates one entity; it takes the next dense index, bp_world_entity_count() before the
/// call (so bp_world_entity_count() - 1 after it).
BP_API bp_status bp_entity_create(bp_world *world, const bp_entity_def *def, bp_entity *out);
/// Destroys an entity. The last dense entity moves into its dense index.
BP_API bp_status bp_entity_destroy(bp_world *world, bp_entity entity);
/// Reads an entity's settings back.
BP_API bp_status bp_entity_get(const bp_world *world, bp_entity entity, bp_entity_def *out);
/// Sets bounds from `dims` floats each.
BP_API bp_status bp_entity_set_bounds(bp_world *world, bp_entity entity, const float *min, const float *max);
BP_API bp_status bp_entity_set_filter(bp_world *world, bp_entity entity, uint64_t category, uint64_t mask);
BP_API bp_status bp_entity_set_kind(bp_world *world, bp_entity entity, bp_kind kind);
BP_API bp_status bp_entity_set_user_key(bp_world *world, bp_entity entity, uint64_t user_key);
/// Keeps the bounds and changes how they are read (see bp_shape).
BP_API bp_status bp_entity_set_shape(bp_world *world, bp_entity entity, bp_shape shape);
/// Makes the entity a sphere with bounds centre -+ radius (rounded to float).
/// `centre` holds dims floats; radius must be finite and >= 0.
BP_API bp_status bp_entity_set_sphere(bp_world *world, bp_entity entity, const float *centre, float radius);
/// Current dense index of a live entity.
BP_API bp_status bp_entity_dense_index(const bp_world *world, bp_entity entity, uint32_t *out);

/// Number of live entities; dense indices run from 0 to this - 1.
BP_API uint32_t bp_world_entity_count(const bp_world *world);
/// Handle of the entity at a dense index, or the null handle when out of range.
BP_API bp_entity bp_world_entity_at(const bp_world *world, uint32_t dense_index);
/// User keys in dense order (entity_count entries). Valid until the next change.
BP_API const uint64_t *bp_world_user_keys(const bp_world *world);
/// Handles in dense order (entity_count entries): the stable name of the entity
/// at any dense index a pair or a query gives, which destroys may move. Valid
/// until the next change.
BP_API const bp_entity *bp_world_entities(const bp_world *world);

/// Bounds as structure-of-arrays, one array per bound. z arrays are ignored
/// (and may be NULL) in 2D.
typedef struct bp_bounds_arrays {
	const float *min_x, *min_y, *min_z;
	const float *max_x, *max_y, *max_z;
} bp_bounds_arrays;

/// Creates `count` entities in one call with bounds from the arrays and the
/// other settings from `common` (its bounds are ignored). Order: with n =
/// bp_world_entity_count() before the call, element i becomes dense index n + i,
/// and its handle is out_handles[i] (when out_handles is not NULL; handles reuse
/// free slots, so they need not ascend). All or nothing: on any bad bound no entity
/// is created and bp_world_last_error names the offending array index.
BP_API bp_status bp_world_create_entities(bp_world *world, uint32_t count, const bp_bounds_arrays *bounds,
	const bp_entity_def *common, bp_entity *out_handles);

/// Per-entity settings for bp_world_create_entities_from_arrays. `bounds` is
/// required; each other array, `count` entries, may be NULL, and then every new
/// entity takes that setting from the common def. A sphere's bounds are its
/// centre -+ radius (bp_shape).
typedef struct bp_entity_arrays {
	bp_bounds_arrays bounds;
	const uint64_t *category; ///< as bp_entity_def.category
	const uint64_t *mask;     ///< as bp_entity_def.mask
	const bp_kind *kind;      ///< as bp_entity_def.kind
	const uint64_t *user_key; ///< as bp_entity_def.user_key
	const bp_shape *shape;    ///< as bp_entity_def.shape
} bp_entity_arrays;

/// Creates a mixed batch (teams, kinds, shapes, keys) in one call: entity i takes
/// its bounds and every setting whose array is given from element i, every other from
/// `common` (NULL: bp_entity_def_default()). Order as bp_world_create_entities:
/// element i becomes dense index bp_world_entity_count() (before the call) + i.
/// All or nothing: a bad bound, kind or shape creates nothing and
/// bp_world_last_error names its array and index ("bounds[3]: ...", "kind[2]: ...").
BP_API bp_status bp_world_create_entities_from_arrays(bp_world *world, uint32_t count,
	const bp_entity_arrays *arrays, const bp_entity_def *common, bp_entity *out_handles);

// ---- Bulk setters -------------------------------------------------------------------
//
// bp_entities_set_X(world, target, values) is the bulk form of bp_entity_set_X, for bounds
// (float and double), user keys, filters, kinds, shapes and spheres: element i of the value
// arrays goes to the target's i-th entity. All or nothing: a bad target or value changes
// nothing, and bp_world_last_error names the array and index at fault ("kinds[7]: ...").
// A NULL list or value array with a count > 0 is BP_ERR_INVALID_ARGUMENT.

typedef enum bp_target_kind {
	BP_TARGET_RANGE = 0,   ///< dense indices [first, first + count)
	BP_TARGET_INDICES = 1, ///< dense index dense_indices[i]
	BP_TARGET_HANDLES = 2, ///< the entity entities[i], wherever destroys moved it
} bp_target_kind;

/// The entities a bulk call reaches: a dense range, a list of dense indices or a list of
/// handles; make one with bp_target_range, bp_target_indices or bp_target_handles (a zeroed
/// bp_target is the empty range). Refused, changing nothing: a range that leaves the world
/// or an index >= bp_world_entity_count() (BP_ERR_OUT_OF_RANGE, "dense_indices[i]" named);
/// a null, destroyed or foreign handle (BP_ERR_STALE_HANDLE, "entities[i]"); an unknown
/// kind (BP_ERR_INVALID_ARGUMENT). An entity listed twice takes its last values. The lists
/// are read during the call only.
typedef struct bp_target {
	bp_target_kind kind;
	uint32_t count;                ///< entities reached, and the length of every value array
	uint32_t first;                ///< BP_TARGET_RANGE: the first dense index
	const uint32_t *dense_indices; ///< BP_TARGET_INDICES: count dense indices
	const bp_entity *entities;     ///< BP_TARGET_HANDLES: count handles
} bp_target;

static inline bp_target bp_target_range(uint32_t first, uint32_t count)
{
	bp_target t = {BP_TARGET_RANGE, count, first, NULL, NULL};
	return t;
}
static inline bp_target bp_target_indices(uint32_t count, const uint32_t *dense_indices)
{
	bp_target t = {BP_TARGET_INDICES, count, 0, dense_indices, NULL};
	return t;
}
static inline bp_target bp_target_handles(uint32_t count, const bp_entity *entities)
{
	bp_target t = {BP_TARGET_HANDLES, count, 0, NULL, entities};
	return t;
}

/// Sets the bounds of target i from element i of the arrays, as bp_entity_set_bounds: a
/// NaN or infinite bound or min > max changes nothing ("bounds[i]" named).
BP_API bp_status bp_entities_set_bounds(bp_world *world, bp_target target, const bp_bounds_arrays *bounds);
/// Sets keys[i] as the user key of target i.
BP_API bp_status bp_entities_set_user_keys(bp_world *world, bp_target target, const uint64_t *keys);
/// Sets category[i] and mask[i] of target i, as bp_entity_set_filter.
BP_API bp_status bp_entities_set_filters(bp_world *world, bp_target target, const uint64_t *category,
	const uint64_t *mask);
/// Sets kinds[i] of target i, as bp_entity_set_kind: a kind that is neither dynamic
/// nor static changes nothing (BP_ERR_INVALID_ARGUMENT, "kinds[i]" named).
BP_API bp_status bp_entities_set_kinds(bp_world *world, bp_target target, const bp_kind *kinds);
/// Sets shapes[i] of target i, as bp_entity_set_shape (bounds kept): a shape that is
/// neither box nor sphere changes nothing (BP_ERR_INVALID_ARGUMENT, "shapes[i]" named).
BP_API bp_status bp_entities_set_shapes(bp_world *world, bp_target target, const bp_shape *shapes);

// Filter bits are 64 wide since 0.7 (32 before). In C11 a filter array of any other element
// type does not compile here, rather than pass with a warning and read two entities' bits
// as one; NULL passes (an empty call, or the refused one with a count). Define
// BP_NO_FILTER_ARRAY_CHECK to call the functions themselves. The check is a macro: a target
// written as a compound literal needs parentheses there, ((bp_target){...}).
#if !defined(__cplusplus) && !defined(BP_BUILDING_LIBRARY) && !defined(BP_NO_FILTER_ARRAY_CHECK) && \
	defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define BP_FILTER_ARRAY(p) _Generic((p), const uint64_t *: (p), uint64_t *: (p), void *: (p))
#define bp_entities_set_filters(world, target, category, mask) \
	bp_entities_set_filters(world, target, BP_FILTER_ARRAY(category), BP_FILTER_ARRAY(mask))
#endif

// ---- Incremental steps -------------------------------------------------------------
//
// In a world created with `incremental`, bp_world_step keeps the entities that did
// not change in a resting index with the pairs among them, and finds only the pairs
// of the entities that changed: against each other, and against the resting index.
// An entity has changed since the last step when it was created, when a call gave its
// bounds a different value (bit for bit; setting the same bounds again is free),
// its filter, kind or shape a different value, or when destroying another entity
// moved it to a new dense index. Entities the host does not touch cost nothing per
// step beyond one pass over the pairs the step reports. A changed entity searches
// the resting index with its bounds enlarged by a margin (bp_world_def.margin) and
// keeps what it found; while it stays inside that enlarged box it re-tests those
// candidates on its true bounds instead of searching again. Two changed entities whose
// enlarged boxes overlap are kept as a candidate pair the same way, until one of them
// searches again. Changed entities that
// then stop changing settle into a second, smaller resting index once at least as
// many are quiet as change (and no fewer than 1,024), so a host that creates entities
// as it goes, or moves some and leaves them, pays for them while they change. When
// many entities changed, or after enough changes to make the resting index stale, the
// step rebuilds it in full (the grid algorithm), a choice made from counted work
// (entities in the world, entities active and changed), never from a clock, so the
// same history takes the same paths on every machine; it never changes a pair, and the order
// only as the pair rules say (canonical_pairs). Bulk hosts pass only what moved, with
// bp_entities_set_bounds and bp_target_indices or bp_target_handles. The marks work in every
// world (the marks cost nothing in a world that is not incremental) and, like every
// call that changes entities, belong to the world's writer thread.

/// Destroys the listed entities, in list order (each as bp_entity_destroy: the last
/// dense entity moves into the hole). All or nothing: a stale handle, or one listed
/// twice, destroys nothing.
BP_API bp_status bp_world_destroy_entities(bp_world *world, uint32_t count, const bp_entity *entities);

// ---- Large worlds ---------------------------------------------------------------------
//
// The index works in float. A host whose positions are double (open worlds, planets) gives
// its bounds in double: each is taken relative to the world's origin (default 0) in double
// and rounded outward to float, min down and max up, so the float box always holds the
// double box and no pair of the double boxes is ever missed. The float box exceeds the
// double box by less than one float ulp of the coordinate relative to the origin, on each
// side: 2^-14 m (0.06 mm) at 1 km from the origin, 2^-7 m (7.8 mm) at 100 km, 1 m at
// 10,000 km; pairs closer than that may be reported without touching (a broadphase
// over-reports, never under-reports). The guarantee is the boxes': a sphere whose bounds
// come in double is read from its rounded box (bp_shape), so its pairs are decided within
// the same padding. Move the origin near the action to keep the padding small:
// bp_world_set_origin changes no stored box, so set the bounds of the entities again after
// it. Pairs, views and queries work in the float frame (subtract the origin from
// query coordinates). Cost: one subtraction and one rounding per bound on the way in,
// nothing per step.

/// Bounds as double structure-of-arrays; z arrays are ignored (may be NULL) in 2D.
typedef struct bp_bounds_arrays_f64 {
	const double *min_x, *min_y, *min_z;
	const double *max_x, *max_y, *max_z;
} bp_bounds_arrays_f64;

/// Sets the bounds of the targets from double arrays, relative to the origin and rounded
/// outward (above). All or nothing: a NaN or infinite bound (BP_ERR_NOT_FINITE), min > max
/// (BP_ERR_INVERTED_BOUNDS) or a coordinate beyond float range from the origin
/// (BP_ERR_OUT_OF_RANGE) changes nothing, "bounds[i]" named.
BP_API bp_status bp_entities_set_bounds_f64(bp_world *world, bp_target target, const bp_bounds_arrays_f64 *bounds);
/// The point (dims doubles, finite) that double bounds are taken relative to. Stored
/// boxes do not move: set the bounds again after moving the origin. The writer only.
BP_API bp_status bp_world_set_origin(bp_world *world, const double *origin);
/// Writes the origin (dims doubles) to out.
BP_API bp_status bp_world_origin(const bp_world *world, double *out);

/// Sphere centres and radii as structure-of-arrays; z is ignored (may be NULL) in 2D.
typedef struct bp_sphere_arrays {
	const float *x, *y, *z;
	const float *radius;
} bp_sphere_arrays;

/// Makes the targets spheres with bounds centre -+ radius from the arrays (element i goes
/// to target i), as bp_entity_set_sphere. All or nothing: a non-finite centre or radius, a
/// negative radius or bounds that overflow float change nothing and bp_world_last_error
/// names the index ("spheres[i]").
BP_API bp_status bp_entities_set_spheres(bp_world *world, bp_target target, const bp_sphere_arrays *spheres);

BP_API bp_status bp_world_set_algorithm(bp_world *world, bp_algorithm algorithm);
BP_API bp_algorithm bp_world_algorithm(const bp_world *world);
/// 0 to BP_MAX_THREADS; 0 = all cores (at most BP_MAX_THREADS). Another value
/// returns BP_ERR_INVALID_ARGUMENT, changes nothing and bp_world_last_error names
/// it. A step whose threads the system cannot start (out of threads, or of
/// address space for their stacks) fails with BP_ERR_OUT_OF_MEMORY instead of
/// ending the process, and the world stays usable with fewer threads.
BP_API bp_status bp_world_set_thread_count(bp_world *world, int thread_count);
/// Replaces the bp_debug_flag bits (BP_ERR_INVALID_ARGUMENT for unknown bits);
/// the next step or submit uses them. The writer only.
BP_API bp_status bp_world_set_debug_flags(bp_world *world, uint32_t flags);
BP_API uint32_t bp_world_debug_flags(const bp_world *world);
/// Replaces memory_limit (bytes of pair memory a step may hold, 0 = no limit;
/// see bp_world_def); the next step or submit uses it. The writer only.
BP_API bp_status bp_world_set_memory_limit(bp_world *world, size_t bytes);
BP_API size_t bp_world_memory_limit(const bp_world *world);


/// Finds every overlapping pair of the current state, synchronously, on the
/// world's threads. On error the previous step's pairs are kept. Errors:
/// BP_ERR_OUT_OF_MEMORY (an allocation failed, the pairs would pass
/// memory_limit, or the step's threads could not start); BP_ERR_UNSUPPORTED when grid or hash, chosen by name,
/// cannot lay cells over the bounds (spans beyond float range, near +-3e38;
/// AUTO then runs sap instead); BP_ERR_PERIODIC_EXTENT in a periodic world when
/// an extent exceeds period / 2 (BP_ERR_OUT_OF_RANGE when the copies across the
/// seam would pass the entity limit). bp_world_last_error says which.
BP_API bp_status bp_world_step(bp_world *world);
/// Pairs of the last successful step, in the algorithm's deterministic order
/// (identical for every thread count), or by (lo, hi) with canonical_pairs.
/// Valid until the next step or destroy.
BP_API const bp_pair *bp_world_pairs(const bp_world *world, size_t *count);
BP_API bp_frame_stats bp_world_stats(const bp_world *world);

// ---- Step events --------------------------------------------------------------------
//
// Contact begin and end for hosts that step with bp_world_step, in the form of the views'
// bp_view_events (frame.h). A pair is selected at a step when it is a pair of that step and
// (a.category | b.category) & categories != 0, with the categories and the selection of that
// step. After each successful step, the pairs that began are those selected in this step and
// not in the last; those that ended, selected in the last and not in this one. So a pair
// that overlaps in both steps begins when a filter change or a new selection makes it
// selected, and ends when one deselects it, as Box2D reports a sensor's end when a filter
// changes: every pair reported begun is reported ended exactly once, before or when it
// leaves, and the pairs begun and not yet ended are always the selected pairs of the last
// step. Pairs are compared by handle, so an entity destroyed and another created in its slot
// are different entities, and sorted by (a, b) in handle order. Give sensors a category bit
// of their own and select it, and the step reports only their pairs, without the host
// diffing every pair. Costs nothing while off; on, each step names its selected pairs by
// handle and sorts them (O(p log p) for p selected pairs, skipped while handles ascend
// with dense indices) and keeps them, 24 bytes per selected pair, for the next step.

/// Selects the pairs bp_world_step reports events for: 0 (the default) turns events off
/// and frees their memory; UINT64_MAX selects every pair. Turned on, events start from no
/// pairs: the next step reports every selected pair as begun. A change from one selection
/// to another keeps the last step's selected pairs, so the next step reports the pairs that
/// entered the selection as begun and those that left it as ended. The writer only.
BP_API bp_status bp_world_set_events(bp_world *world, uint64_t categories);
/// The selection bp_world_set_events set (0: off).
BP_API uint64_t bp_world_events_categories(const bp_world *world);
/// The events of the last successful bp_world_step, as bp_view_events: writes up to each
/// capacity, sets each total, BP_ERR_OUT_OF_RANGE only for a short buffer with room
/// (capacity 0 counts, BP_OK); keys are as they were at the step where the pair existed.
/// A failed step keeps the events of the one before. Zero events before the first step
/// after bp_world_set_events. BP_ERR_UNSUPPORTED while events are off;
/// BP_ERR_OUT_OF_MEMORY when the last step found no memory for its events (the step
/// itself succeeded), and then the next step's events are the net change since the
/// last step that made them. The writer only.
BP_API bp_status bp_world_events(const bp_world *world, bp_pair_event *began, size_t began_capacity,
	size_t *began_total, bp_pair_event *ended, size_t ended_capacity, size_t *ended_total);

/// Sorts pairs by lo, then hi (the caller's array; any thread). From 4,096 pairs
/// in linear time with a temporary buffer of the same size, in place by
/// comparison when that buffer cannot be had.
BP_API void bp_pairs_sort(bp_pair *pairs, size_t count);
/// Order-independent checksum, so that any two tools can compare pair sets: the sum
/// (mod 2^64) of bp_splitmix64((lo_id << 32) | hi_id) over the pairs, with ids[dense]
/// as the entity ids (identity when ids is NULL) and lo_id < hi_id. `bp pairs` prints
/// it as 16 lower-case hex digits.
BP_API uint64_t bp_pairs_checksum(const bp_pair *pairs, size_t count, const uint32_t *ids);
/// The splitmix64 finaliser: z += 0x9E3779B97F4A7C15; z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9;
/// z = (z ^ z >> 27) * 0x94D049BB133111EB; returns z ^ z >> 31.
BP_API uint64_t bp_splitmix64(uint64_t z);

// ---- Deprecated bulk setters ----------------------------------------------------------
//
// The bulk setters before 0.8, three per setting, kept for 0.8 only: bp_world_set_X does
// what bp_entities_set_X does with bp_target_range, bp_world_set_X_indexed with
// bp_target_indices and bp_world_set_X_by_handle with bp_target_handles, statuses and
// messages included.

BP_API bp_status bp_world_set_user_keys(bp_world *world, uint32_t first, uint32_t count, const uint64_t *keys)
	BP_DEPRECATED("use bp_entities_set_user_keys with bp_target_range");
BP_API bp_status bp_world_set_user_keys_indexed(bp_world *world, uint32_t count, const uint32_t *dense_indices,
	const uint64_t *keys)
	BP_DEPRECATED("use bp_entities_set_user_keys with bp_target_indices");
BP_API bp_status bp_world_set_user_keys_by_handle(bp_world *world, uint32_t count, const bp_entity *entities,
	const uint64_t *keys)
	BP_DEPRECATED("use bp_entities_set_user_keys with bp_target_handles");
BP_API bp_status bp_world_set_filters(bp_world *world, uint32_t first, uint32_t count, const uint64_t *category,
	const uint64_t *mask)
	BP_DEPRECATED("use bp_entities_set_filters with bp_target_range");
BP_API bp_status bp_world_set_filters_indexed(bp_world *world, uint32_t count, const uint32_t *dense_indices,
	const uint64_t *category, const uint64_t *mask)
	BP_DEPRECATED("use bp_entities_set_filters with bp_target_indices");
BP_API bp_status bp_world_set_filters_by_handle(bp_world *world, uint32_t count, const bp_entity *entities,
	const uint64_t *category, const uint64_t *mask)
	BP_DEPRECATED("use bp_entities_set_filters with bp_target_handles");
BP_API bp_status bp_world_set_kinds(bp_world *world, uint32_t first, uint32_t count, const bp_kind *kinds)
	BP_DEPRECATED("use bp_entities_set_kinds with bp_target_range");
BP_API bp_status bp_world_set_kinds_indexed(bp_world *world, uint32_t count, const uint32_t *dense_indices,
	const bp_kind *kinds)
	BP_DEPRECATED("use bp_entities_set_kinds with bp_target_indices");
BP_API bp_status bp_world_set_kinds_by_handle(bp_world *world, uint32_t count, const bp_entity *entities,
	const bp_kind *kinds)
	BP_DEPRECATED("use bp_entities_set_kinds with bp_target_handles");
BP_API bp_status bp_world_set_shapes(bp_world *world, uint32_t first, uint32_t count, const bp_shape *shapes)
	BP_DEPRECATED("use bp_entities_set_shapes with bp_target_range");
BP_API bp_status bp_world_set_shapes_indexed(bp_world *world, uint32_t count, const uint32_t *dense_indices,
	const bp_shape *shapes)
	BP_DEPRECATED("use bp_entities_set_shapes with bp_target_indices");
BP_API bp_status bp_world_set_shapes_by_handle(bp_world *world, uint32_t count, const bp_entity *entities,
	const bp_shape *shapes)
	BP_DEPRECATED("use bp_entities_set_shapes with bp_target_handles");
BP_API bp_status bp_world_set_bounds(bp_world *world, uint32_t first, uint32_t count, const bp_bounds_arrays *bounds)
	BP_DEPRECATED("use bp_entities_set_bounds with bp_target_range");
BP_API bp_status bp_world_set_bounds_indexed(bp_world *world, uint32_t count, const uint32_t *dense_indices,
	const bp_bounds_arrays *bounds)
	BP_DEPRECATED("use bp_entities_set_bounds with bp_target_indices");
BP_API bp_status bp_world_set_bounds_by_handle(bp_world *world, uint32_t count, const bp_entity *entities,
	const bp_bounds_arrays *bounds)
	BP_DEPRECATED("use bp_entities_set_bounds with bp_target_handles");
BP_API bp_status bp_world_set_bounds_f64(bp_world *world, uint32_t first, uint32_t count,
	const bp_bounds_arrays_f64 *bounds)
	BP_DEPRECATED("use bp_entities_set_bounds_f64 with bp_target_range");
BP_API bp_status bp_world_set_bounds_f64_indexed(bp_world *world, uint32_t count, const uint32_t *dense_indices,
	const bp_bounds_arrays_f64 *bounds)
	BP_DEPRECATED("use bp_entities_set_bounds_f64 with bp_target_indices");
BP_API bp_status bp_world_set_bounds_f64_by_handle(bp_world *world, uint32_t count, const bp_entity *entities,
	const bp_bounds_arrays_f64 *bounds)
	BP_DEPRECATED("use bp_entities_set_bounds_f64 with bp_target_handles");
BP_API bp_status bp_world_set_spheres(bp_world *world, uint32_t first, uint32_t count, const bp_sphere_arrays *spheres)
	BP_DEPRECATED("use bp_entities_set_spheres with bp_target_range");
BP_API bp_status bp_world_set_spheres_indexed(bp_world *world, uint32_t count, const uint32_t *dense_indices,
	const bp_sphere_arrays *spheres)
	BP_DEPRECATED("use bp_entities_set_spheres with bp_target_indices");
BP_API bp_status bp_world_set_spheres_by_handle(bp_world *world, uint32_t count, const bp_entity *entities,
	const bp_sphere_arrays *spheres)
	BP_DEPRECATED("use bp_entities_set_spheres with bp_target_handles");
#ifdef BP_FILTER_ARRAY
#define bp_world_set_filters(world, first, count, category, mask) \
	bp_world_set_filters(world, first, count, BP_FILTER_ARRAY(category), BP_FILTER_ARRAY(mask))
#define bp_world_set_filters_indexed(world, count, dense_indices, category, mask) \
	bp_world_set_filters_indexed(world, count, dense_indices, BP_FILTER_ARRAY(category), BP_FILTER_ARRAY(mask))
#define bp_world_set_filters_by_handle(world, count, entities, category, mask) \
	bp_world_set_filters_by_handle(world, count, entities, BP_FILTER_ARRAY(category), BP_FILTER_ARRAY(mask))
#endif

#ifdef __cplusplus
}
#endif
#endif
