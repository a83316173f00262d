// SPDX-License-Identifier: MIT
// The frame scheduler (double-buffered service) and the queries readers run on a published frame.
#ifndef BROADPHASE_FRAME_H
#define BROADPHASE_FRAME_H

#include <stdbool.h>
#include "base.h"
#include "world.h"

#ifdef __cplusplus
extern "C" {
#endif

// Threads. bp_frame_submit, bp_frame_step and bp_world_view belong to the world's writer (the
// host thread that changes the world, see world.h). bp_frame_wait and bp_frame_acquire: any thread, any
// number at once, while the world exists. A view, once acquired, is the reader's own: every
// bp_view_* function may run on any thread holding a reference to it, concurrently with other
// readers, the writer and the builder, and bp_view_release may run on any thread (it need
// not be the one that acquired the view). Callbacks given to a view function run on the
// thread that called it. The builder thread is the library's own; of the host's code it
// runs the world's pair_filter, allocator and task system. bp_frame_step builds its frame
// on the calling thread instead (see there).

/// An immutable, reference-counted published frame: the snapshot of the world
/// taken at bp_frame_submit, its pairs, and per-frame indexes built once (sorted
/// pairs and pair events by the builder; the query hierarchy, the adjacency
/// and, while only bounds change, the events' names on first use, see below).
/// Or a world view (bp_world_view): a snapshot and its query hierarchy, no pairs.
/// Nothing a reader sees in a view ever changes while it is held, and a view owns
/// its memory: it stays valid after bp_world_destroy until its last
/// bp_view_release.
typedef struct bp_view bp_view;

// ---- Scheduler -------------------------------------------------------------
//
// Protocol. The host thread (the world's writer) changes entities,
// then calls bp_frame_submit, which copies the dense SoA arrays into a frame
// buffer and returns at once. Copy on submit is the only part of a frame the
// host pays for: 57 bytes per 3D entity, 49 per 2D, a few ns per entity
// (perf/README.md has the measurements). A copy of every entity of a world that
// steps on several threads of the library's workers or OpenMP runs on that many,
// the host thread and workers of its own (the ones bp_world_step on that thread
// uses); one that cannot start them, or a world on the host's task system, copies
// on the host thread alone. A builder thread, started on the
// first bp_frame_submit and joined by bp_world_destroy, runs the world's algorithm on
// that snapshot (with the world's thread count, OpenMP inside), sorts the pairs
// by (lo, hi), builds the pair events, then publishes the frame by swapping the
// "latest" pointer. Readers on any thread take the latest published frame with
// bp_frame_acquire and give it back with bp_view_release.
// Made on first use: the query hierarchy and the adjacency are made by the
// first query that needs them in a frame (once; concurrent readers wait for
// it), unless a reader used them in the last published frame: then the builder
// makes them before publishing, so a host that queries every frame never
// waits and one that never queries pays nothing for them. The query hierarchy
// is made so for bp_world_def.query_hierarchy_frames more frames after a query,
// so a reader that skips frames does not build it on its own thread.
// Incremental worlds (bp_world_def.incremental): submit copies only the
// entities that changed since the buffer it reuses was last written, and the
// builder searches only those (see "Incremental steps" in world.h).
//
// Frame numbers: each submit (and each bp_world_view) gets the next number (1, 2, 3, ...).
// Coalescing: a submit while an earlier submitted frame has not started
// building replaces it (that snapshot is dropped and its number is never
// published); the host never blocks. So readers see increasing, possibly
// non-consecutive, frame numbers.
// Buffers: frame buffers are pooled. The builder only ever writes a buffer that
// no reader holds and that is not the latest frame; when every buffer is held,
// submit allocates another rather than wait, so memory grows with the number
// of frames readers hold at once (each costs the snapshot plus about 40 bytes
// per pair: pairs, sort scratch, adjacency, key pairs, events, and for
// the query hierarchy one bit per entity and its changed part, beside the shared
// part it shares with other frames; see Queries below). At most
// two spare buffers are kept for reuse; further ones are freed on release. Once a host
// takes world views, the pool also keeps the last one (its buffer and its share of the
// hierarchy) until the next world view or bp_world_destroy.
// bp_world_step is independent of the scheduler: it runs synchronously on the
// caller's thread against the world's own index and pairs and neither reads
// nor publishes frames, so the two may be mixed (from the host thread). Use
// bp_frame_step for a synchronous frame through the scheduler.
// Warning: bp_world_destroy must not run while another thread is inside
// bp_frame_acquire or bp_frame_wait on that world. Views already held stay valid.

/// Copies a snapshot of the world and hands it to the builder; returns without
/// waiting for the build. *out_frame (may be NULL) receives the frame's number.
/// Host thread only (the thread that changes the world). Errors:
/// BP_ERR_OUT_OF_MEMORY (no buffer or builder thread; nothing was submitted).
BP_API bp_status bp_frame_submit(bp_world *world, uint64_t *out_frame);

/// Blocks until frame `frame` or a later one has been built. Returns BP_OK when
/// a frame numbered `frame` or later is published, the build's error status when
/// the build of the frame that covered `frame` failed (the previous frame stays
/// published), BP_ERR_NOT_SUBMITTED when `frame` was not submitted yet (waiting
/// would never end). frame 0 returns BP_OK at once, and so does the number of a world
/// view taken after the last submitted frame (built when bp_world_view returned). Any thread.
BP_API bp_status bp_frame_wait(bp_world *world, uint64_t frame);

/// Takes a reference on the latest published frame. BP_ERR_NO_FRAME (and
/// *out NULL) when no frame was published yet. Any thread, any number at once;
/// costs one short, uncontended-in-practice mutex section (the pointer load and
/// the reference increment must be one step with respect to the swap).
BP_API bp_status bp_frame_acquire(bp_world *world, bp_view **out);

/// Gives a view back (the counterpart of bp_frame_acquire and bp_frame_step, named
/// with the other calls on a view); the last release recycles (or frees) its buffer. NULL is
/// ignored (BP_OK). Any thread; the view must not be used afterwards.
/// Warning: releasing a view more often than it was acquired is a contract
/// violation. An extra release that finds no reference held on the frame (the
/// common case of one reader releasing twice) is refused with
/// BP_ERR_STALE_HANDLE and changes nothing, in every build. One that finds
/// another reader's reference takes it, and that reader's own release is then
/// the one refused; once the buffer is freed, a release is a use after free.
BP_API bp_status bp_view_release(bp_view *view);
/// Deprecated: the name of bp_view_release before 0.5, kept so that older hosts build
/// (with a deprecation warning, see BP_DEPRECATED in base.h); it will go at 1.0. It
/// does exactly what bp_view_release does.
BP_API bp_status bp_frame_release(bp_view *view) BP_DEPRECATED("use bp_view_release");

/// Synchronous frame through the scheduler: submit, wait for that frame, and
/// acquire it. *out is the view of exactly the submitted frame (release it).
/// The calling thread, which would only wait, builds the frame itself, after the
/// builder's build of an earlier frame if one runs: the frame is the same, without the
/// hand-off between threads, and it takes every thread the world has where the builder
/// leaves the host one. A world on the host's task system (BP_EXECUTOR_HOST) leaves
/// its frames to the builder. Host thread only.
BP_API bp_status bp_frame_step(bp_world *world, bp_view **out);

/// A view of the world as it is now, without a step: for a host that steps with
/// bp_world_step (or not at all) and queries between its steps. Every query, batch and
/// getter of a view answers on it, from its own snapshot, so the world may change and
/// step while readers hold it. It holds no pairs (bp_view_pairs is empty, no events,
/// bp_view_previous_frame 0): the world's are bp_world_pairs.
/// Costs what changed, as a frame does: the snapshot copies the entities that changed
/// since the last view or frame, and the query hierarchy, made at once on the world's
/// threads, keeps the part of the last one's that did not change (docs/design.md
/// "World views"). A frame submitted before and not built yet is built first.
/// It takes the next frame number (so bp_frame_submit's numbers skip it) but is never
/// published: bp_frame_acquire does not return it, the next frame's events are counted
/// from the last frame, and bp_view_events_since refuses it. Release it with
/// bp_view_release; a second release is refused as for frames. Host thread only, outside the host's task system, as
/// bp_world_step. Errors: BP_ERR_INVALID_ARGUMENT (world or out NULL),
/// BP_ERR_OUT_OF_MEMORY (no buffer; nothing changed). *out is NULL on error.
BP_API bp_status bp_world_view(bp_world *world, bp_view **out);

// ---- View contents (any thread holding the view) ---------------------------

/// The frame's number (as returned by bp_frame_submit; a world view's, the number it took).
BP_API uint64_t bp_view_frame(const bp_view *view);
/// Entities in the snapshot; dense indices of this view run from 0 to this - 1.
BP_API uint32_t bp_view_entity_count(const bp_view *view);
/// 2 or 3.
BP_API int bp_view_dims(const bp_view *view);
/// The frame's pairs as dense indices of the snapshot, sorted by (lo, hi)
/// (whatever the world's canonical_pairs). May be NULL when *count is 0.
BP_API const bp_pair *bp_view_pairs(const bp_view *view, size_t *count);
/// The frame's statistics. ns_prepare is the snapshot copy on submit; ns_total
/// covers the step plus the sort, adjacency and pair events.
BP_API bp_frame_stats bp_view_stats(const bp_view *view);
/// The snapshot's SoA bounds (z arrays NULL in 2D).
BP_API bp_bounds_arrays bp_view_bounds(const bp_view *view);
/// The snapshot's user keys in dense order.
BP_API const uint64_t *bp_view_user_keys(const bp_view *view);
/// Handles in dense order, entity_count of them (what bp_world_entities held at
/// submit): the stable names of the dense indices in this view's pairs and query
/// hits. Valid while the view is held.
BP_API const bp_entity *bp_view_entities(const bp_view *view);

// ---- Queries (const; any thread holding the view, concurrently) -------------
//
// One call per job, named by what it does and to which shape. Every one takes the
// shape, then `const bp_query_filter *filter`, then where the results go:
//   bp_view_overlap_box, _overlap_point, _overlap_sphere  entities overlapping a shape
//   bp_view_cast_ray, bp_view_cast_box                    every hit of a ray or swept box
//   bp_view_cast_ray_closest, bp_view_cast_box_closest    the first hit
//   bp_view_nearest                                       the k entities nearest a point
//   bp_view_visit_overlap_box, _overlap_sphere,           the results of the call after
//     bp_view_visit_cast_ray, _cast_box                   visit_, through a callback
//   bp_view_cast_rays_closest, _closest_each              many rays on the world's threads
//   bp_view_cast_boxes_closest, _closest_each             many box casts, the same way
//   bp_view_nearest_points, _points_each                  the k nearest of many points
// A NULL filter accepts every entity of the snapshot, whatever its category, mask or
// kind; a filter chooses (bp_query_filter below). Filters are tested only on entities
// that pass the geometric test, so their cost grows with the hits they see, never with
// the view (perf/README.md: 1-8% on box queries whose filter rejects half the hits).
//
// Box, point and sphere queries, the closest and all-hits forms of rays and box
// casts, k nearest and the visitors of boxes, spheres and casts walk a
// bounding volume hierarchy (views of 256 entities or more; see "Made on first
// use" above): about log n nodes a query, exact at every node. Its shared part,
// about 63 bytes per entity with the build's scratch given back, is built over
// some frame and shared by the frames after it; each frame rebuilds only its
// changed part, for the entities that changed, and holds one bit per entity of
// the shared part (docs/design.md "Queries"). Smaller views, and a view whose hierarchy found
// no memory, are scanned linearly (about 1 ns per entity); so is a box, point or
// sphere query once its hits pass 1/256 of the view (at least 256), unless its
// filter has a callback, so the worst case stays the scan. colliding
// binary-searches the sorted pairs (O(log pairs)); neighbour queries read the
// adjacency (O(degree)). Query latencies with and without a build running, and the
// cost of acquire + release, are measured in perf/README.md.
// Buffers: functions that fill a caller buffer take its capacity and return the
// full result count in *total. They write min(capacity, *total) results and
// return BP_ERR_OUT_OF_RANGE when 0 < capacity < *total, so a short buffer is never
// silently truncated: call again with *total entries. Capacity 0 asks for the
// count alone: `out` may then be NULL, and the call returns BP_OK with *total set.
// Visitors (bp_view_visit_*) call visit(entity or hit, user) per accepted
// result and stop as soon as visit returns false; they need no buffer.
// Periodic worlds: box, point, sphere and nearest queries (and their visitors)
// wrap, in the terms of the pairs (world.h, `periodic`). On each axis the query's
// box and each entity's box are moved into the cell [0, period): the min by whole
// periods with fmod in double and rounded once to float, the max that min plus the
// extent (in double), rounded once. A box whose extent is at least the period
// covers that axis. Otherwise the two meet on the axis when they overlap as they
// are, or when the one whose max reaches the period, moved down by a period (each
// bound rounded once), overlaps the other; a box query thus meets exactly what a
// box of its bounds would pair with, and a point query is a box of extent 0. A
// sphere's or nearest's gap on an axis is the least gap from the centre, moved into
// the cell, to the entity's interval in the cell moved by -1, 0 or +1 periods (each
// bound rounded once); the squared distance sums the gaps' squares in float as in
// plain space (a sphere meets when it is <= radius * radius; nearest reports its
// root, ties by dense index). spheres_as_balls then tests the ball of the entity's
// interval in the cell, in double, against the query moved by -1, 0 or +1 periods.
// Shapes and entities may lie anywhere and be of any size: a query makes at most
// one test per node of the view's hierarchy and per entity, and gives up the walk
// for a scan of the view (n entities) once it made 2n + 64 tests or its hits pass
// max(n / 256, 256), so it costs at most about three scans (a nearest query whose
// filter has an accept callback keeps walking, not to call it twice). Each entity is reported once, visitors see ascending indices,
// and a filter's accept runs at most once per entity. Rays and box casts do not
// wrap: a ray's images would go on without end; cast again from the origin moved by
// a period to look across a seam.

/// A ray, box-cast or nearest hit: dense index, and `distance`: for rays and
/// casts the ray parameter t (the hit point is origin + t * dir, a length only
/// when dir has length 1), for nearest the Euclidean distance to the box (0
/// inside).
typedef struct bp_hit {
	uint32_t index;
	float distance;
} bp_hit;

/// bp_query_filter.kinds bits.
enum {
	BP_QUERY_DYNAMIC = 1u << BP_KIND_DYNAMIC,
	BP_QUERY_STATIC = 1u << BP_KIND_STATIC,
	BP_QUERY_ALL_KINDS = BP_QUERY_DYNAMIC | BP_QUERY_STATIC,
};

/// bp_query_filter.exclude when no entity is left out.
#define BP_QUERY_NO_EXCLUDE UINT32_MAX

/// Which entities a query sees. An entity e is accepted iff it passes the category
/// test, the bit of e's kind is in `kinds`, e != exclude, e's handle is not
/// exclude_entity, and then, tested last, accept is NULL or accept(e, user)
/// returns true. The category test is the AND rule
/// of pairs with the query as the other party,
///     (filter.category & e.mask) != 0 && (e.category & filter.mask) != 0,
/// except that a filter whose category and mask are both all bits (UINT64_MAX, as
/// bp_query_filter_default() sets them) tests no filter bits: it sees every category,
/// entities whose category or mask is 0 included. So the default filter sees
/// exactly what NULL sees, and changing only kinds, exclude or accept narrows
/// just that; a filter that names categories (any bit clear in category or mask)
/// applies the rule, and never sees an entity whose category or mask is 0, as a
/// pair would not. accept runs on the querying thread, only for entities that passed the
/// geometric test and every other check, at most once per entity and query,
/// in no set order; it may be skipped for entities that cannot change the
/// result (ray hits past the closest accepted one, nearest candidates beyond
/// the k-th). It must not release the view. Start from bp_query_filter_default().
typedef struct bp_query_filter {
	uint64_t category; ///< the query's bits, tested on entity masks. Default all (with mask all: no category test).
	uint64_t mask;     ///< entity categories it sees. Default all (with category all: no category test).
	uint32_t kinds;    ///< BP_QUERY_* bits; other bits are BP_ERR_INVALID_ARGUMENT. Default BP_QUERY_ALL_KINDS.
	/// A dense index the query never returns (the agent a ray starts in), or
	/// BP_QUERY_NO_EXCLUDE. Default BP_QUERY_NO_EXCLUDE.
	uint32_t exclude;
	bool (*accept)(uint32_t entity, void *user); ///< optional last test. Default NULL.
	void *user;                                  ///< passed to accept. Default NULL.
	/// An entity the query never returns, by handle (the caster, which the host
	/// knows by handle while its dense index moves), or the null handle {0, 0}.
	/// Default null.
	bp_entity exclude_entity;
	/// Box, point and sphere queries (and their visitors) test a sphere entity
	/// (bp_shape) as the largest ball centred in its bounds, in double, as pairs
	/// do, instead of by its bounds; a sphere query meets a ball when their centres
	/// lie within the sum of the radii. Rays, casts and nearest always use the
	/// bounds. Default false.
	bool spheres_as_balls;
} bp_query_filter;

/// All bits in category and mask (no category test), both kinds, nothing excluded, no
/// callback: it accepts every entity, as NULL does.
BP_API bp_query_filter bp_query_filter_default(void);

/// Dense indices (ascending) of the accepted entities whose box overlaps the closed
/// box [min, max] (touching counts), `dims` floats each. Errors: BP_ERR_NOT_FINITE,
/// BP_ERR_INVERTED_BOUNDS, BP_ERR_INVALID_ARGUMENT (NULL pointers, unknown kinds
/// bits), BP_ERR_OUT_OF_RANGE (short buffer). Other errors write nothing.
BP_API bp_status bp_view_overlap_box(const bp_view *view, const float *min, const float *max,
	const bp_query_filter *filter, uint32_t *out, size_t capacity, size_t *total);
/// Dense indices (ascending) of the accepted entities whose closed box contains the
/// point: bp_view_overlap_box of the box [point, point].
BP_API bp_status bp_view_overlap_point(const bp_view *view, const float *point, const bp_query_filter *filter,
	uint32_t *out, size_t capacity, size_t *total);
/// Dense indices (ascending) of the accepted entities whose box is within `radius`
/// of `centre` (squared distance from centre to the box <= radius^2).
BP_API bp_status bp_view_overlap_sphere(const bp_view *view, const float *centre, float radius,
	const bp_query_filter *filter, uint32_t *out, size_t capacity, size_t *total);

/// Closest accepted box hit by the ray origin + t * dir, 0 <= t <= max_t (slab
/// test, closed boxes). t is in units of |dir|: pass a unit dir for distances. A ray
/// starting inside a box hits it at t = 0. Ties go to the lower dense index.
/// dir components may be 0 (axis-parallel rays); max_t may be INFINITY.
/// *found is false when nothing is hit. Errors: BP_ERR_NOT_FINITE (origin, dir),
/// BP_ERR_INVALID_ARGUMENT (max_t NaN or negative, NULL pointers, unknown kinds
/// bits). On error *hit and *found are not written.
BP_API bp_status bp_view_cast_ray_closest(const bp_view *view, const float *origin, const float *dir, float max_t,
	const bp_query_filter *filter, bp_hit *hit, bool *found);
/// Every accepted box hit by the ray, ordered by t, then dense index; *total counts
/// them (a short buffer gets the first `capacity`).
BP_API bp_status bp_view_cast_ray(const bp_view *view, const float *origin, const float *dir, float max_t,
	const bp_query_filter *filter, bp_hit *hits, size_t capacity, size_t *total);

/// Box cast (swept box): the box [min, max] moves to [min + t * dir, max + t * dir],
/// 0 <= t <= max_t; it hits an entity at the least t at which the two closed
/// boxes overlap (slab test against the entity's box grown by the moving box's
/// extents), so a box that overlaps an entity at the start hits it at t = 0.
/// Like rays: t in units of |dir|, dir components may be 0 (then that axis must
/// overlap throughout), max_t may be INFINITY; a zero dir finds what overlaps
/// [min, max]. Closest accepted hit, ties to the lower dense index; *found is false
/// when nothing is hit. Errors: BP_ERR_NOT_FINITE (min, max, dir),
/// BP_ERR_INVERTED_BOUNDS (min > max on an axis), BP_ERR_INVALID_ARGUMENT
/// (max_t NaN or negative, NULL pointers, unknown kinds bits). On error nothing
/// is written.
BP_API bp_status bp_view_cast_box_closest(const bp_view *view, const float *min, const float *max, const float *dir,
	float max_t, const bp_query_filter *filter, bp_hit *hit, bool *found);
/// Every accepted entity the box cast hits, ordered by t, then dense index (a short
/// buffer gets the first `capacity`, as bp_view_cast_ray).
BP_API bp_status bp_view_cast_box(const bp_view *view, const float *min, const float *max, const float *dir,
	float max_t, const bp_query_filter *filter, bp_hit *hits, size_t capacity, size_t *total);

/// The k accepted entities nearest to `point` by distance to their box (0 inside),
/// ordered by distance, ties by dense index. Writes min(k, accepted entity count)
/// hits to `hits` (room for k) and that number to *count.
BP_API bp_status bp_view_nearest(const bp_view *view, const float *point, uint32_t k, const bp_query_filter *filter,
	bp_hit *hits, size_t *count);

/// Calls visit(entity, user) for each accepted entity whose box overlaps the
/// closed box [min, max], each once, in index order (not ascending), until
/// visit returns false. Errors as bp_view_overlap_box, and
/// BP_ERR_INVALID_ARGUMENT for a NULL visit; on error visit is never called.
BP_API bp_status bp_view_visit_overlap_box(const bp_view *view, const float *min, const float *max,
	const bp_query_filter *filter, bool (*visit)(uint32_t entity, void *user), void *user);
/// As bp_view_visit_overlap_box for the sphere test of bp_view_overlap_sphere.
BP_API bp_status bp_view_visit_overlap_sphere(const bp_view *view, const float *centre, float radius,
	const bp_query_filter *filter, bool (*visit)(uint32_t entity, void *user), void *user);
/// Calls visit(hit, user) for each accepted hit of the ray, in the order of
/// bp_view_cast_ray (t, then dense index), until visit returns false: the
/// first k calls are exactly the first k results of bp_view_cast_ray, and
/// the first is bp_view_cast_ray_closest's hit. Hits found ahead of their turn
/// wait in a buffer (on the stack for up to 64): BP_ERR_OUT_OF_MEMORY when it
/// cannot grow, after the hits already visited. Errors otherwise as
/// bp_view_cast_ray, plus BP_ERR_INVALID_ARGUMENT for a NULL visit.
BP_API bp_status bp_view_visit_cast_ray(const bp_view *view, const float *origin, const float *dir, float max_t,
	const bp_query_filter *filter, bool (*visit)(bp_hit hit, void *user), void *user);
/// bp_view_visit_cast_ray for a box cast: hits in the order of bp_view_cast_box.
BP_API bp_status bp_view_visit_cast_box(const bp_view *view, const float *min, const float *max, const float *dir,
	float max_t, const bp_query_filter *filter, bool (*visit)(bp_hit hit, void *user), void *user);

/// One ray of a batch: origin + t * dir, 0 <= t <= max_t (z ignored in 2D).
typedef struct bp_ray {
	float origin[3];
	float dir[3];
	float max_t;
} bp_ray;

/// bp_hit.index of a batch's ray that hit nothing (its distance is INFINITY).
#define BP_HIT_NONE UINT32_MAX

/// The closest hit of each ray, as bp_view_cast_ray_closest finds it, into
/// hits[i] for rays[i] (BP_HIT_NONE when it hits nothing). The rays run on
/// the world's executor and thread count as of the frame's submit, from the
/// calling thread (the library's workers belong to the thread that calls);
/// the answers do not depend on the thread count. The filter's accept, if any,
/// is called from those threads at once. Every ray is checked first: on error
/// (that of the first bad ray, as the single form reports it) nothing is written.
BP_API bp_status bp_view_cast_rays_closest(const bp_view *view, const bp_ray *rays, size_t count,
	const bp_query_filter *filter, bp_hit *hits);
/// The same with a filter for each ray: filters[i] for rays[i] (its exclude or
/// exclude_entity leaves out the agent a sight line starts in). Each ray is answered
/// as bp_view_cast_ray_closest answers it with its filter. Errors as above, and
/// BP_ERR_INVALID_ARGUMENT for filters NULL with count > 0 or a filter's unknown
/// kinds bits; on error nothing is written.
BP_API bp_status bp_view_cast_rays_closest_each(const bp_view *view, const bp_ray *rays, size_t count,
	const bp_query_filter *filters, bp_hit *hits);

/// One box cast of a batch: the box [min, max] moved by t * dir, 0 <= t <= max_t (z
/// ignored in 2D).
typedef struct bp_box_cast {
	float min[3];
	float max[3];
	float dir[3];
	float max_t;
} bp_box_cast;

/// The first hit of each box cast, as bp_view_cast_box_closest finds it, into hits[i]
/// for casts[i] (BP_HIT_NONE when it hits nothing); threads, checks and errors as
/// bp_view_cast_rays_closest, BP_ERR_INVERTED_BOUNDS included.
BP_API bp_status bp_view_cast_boxes_closest(const bp_view *view, const bp_box_cast *casts, size_t count,
	const bp_query_filter *filter, bp_hit *hits);
/// The same with a filter for each cast: filters[i] for casts[i] (NULL with count > 0
/// is BP_ERR_INVALID_ARGUMENT).
BP_API bp_status bp_view_cast_boxes_closest_each(const bp_view *view, const bp_box_cast *casts, size_t count,
	const bp_query_filter *filters, bp_hit *hits);

/// The k nearest of each of `count` points (points[3 i .. 3 i + 2], z ignored in 2D),
/// as bp_view_nearest finds them: point i's hits at hits[i * k ...] (room for count * k)
/// and their number in counts[i]. Threads, checks and errors as
/// bp_view_cast_rays_closest; on error nothing is written.
BP_API bp_status bp_view_nearest_points(const bp_view *view, const float *points, size_t count, uint32_t k,
	const bp_query_filter *filter, bp_hit *hits, size_t *counts);
/// The same with a filter for each point: filters[i] for point i (NULL with count > 0
/// is BP_ERR_INVALID_ARGUMENT).
BP_API bp_status bp_view_nearest_points_each(const bp_view *view, const float *points, size_t count, uint32_t k,
	const bp_query_filter *filters, bp_hit *hits, size_t *counts);

// ---- Query names before 0.8 (deprecated; they go in 0.9) ---------------------
//
// Each passes its arguments to the call its BP_DEPRECATED message names, and NULL for
// the filter where it takes none. They warn where used (base.h).

BP_API bp_status bp_view_query_aabb(const bp_view *view, const float *min, const float *max, uint32_t *out,
	size_t capacity, size_t *total) BP_DEPRECATED("use bp_view_overlap_box");
BP_API bp_status bp_view_query_aabb_filtered(const bp_view *view, const float *min, const float *max,
	const bp_query_filter *filter, uint32_t *out, size_t capacity, size_t *total)
	BP_DEPRECATED("use bp_view_overlap_box");
BP_API bp_status bp_view_query_point(const bp_view *view, const float *point, uint32_t *out, size_t capacity,
	size_t *total) BP_DEPRECATED("use bp_view_overlap_point");
BP_API bp_status bp_view_query_point_filtered(const bp_view *view, const float *point, const bp_query_filter *filter,
	uint32_t *out, size_t capacity, size_t *total) BP_DEPRECATED("use bp_view_overlap_point");
BP_API bp_status bp_view_query_sphere(const bp_view *view, const float *centre, float radius, uint32_t *out,
	size_t capacity, size_t *total) BP_DEPRECATED("use bp_view_overlap_sphere");
BP_API bp_status bp_view_query_sphere_filtered(const bp_view *view, const float *centre, float radius,
	const bp_query_filter *filter, uint32_t *out, size_t capacity, size_t *total)
	BP_DEPRECATED("use bp_view_overlap_sphere");
/// Unlike bp_view_cast_ray_closest, sets *found to false on error (out and found not NULL).
BP_API bp_status bp_view_raycast_closest(const bp_view *view, const float *origin, const float *dir, float max_t,
	bp_hit *out, bool *found) BP_DEPRECATED("use bp_view_cast_ray_closest");
BP_API bp_status bp_view_raycast_closest_filtered(const bp_view *view, const float *origin, const float *dir,
	float max_t, const bp_query_filter *filter, bp_hit *out, bool *found)
	BP_DEPRECATED("use bp_view_cast_ray_closest");
BP_API bp_status bp_view_raycast_all(const bp_view *view, const float *origin, const float *dir, float max_t,
	bp_hit *out, size_t capacity, size_t *total) BP_DEPRECATED("use bp_view_cast_ray");
BP_API bp_status bp_view_raycast_all_filtered(const bp_view *view, const float *origin, const float *dir, float max_t,
	const bp_query_filter *filter, bp_hit *out, size_t capacity, size_t *total) BP_DEPRECATED("use bp_view_cast_ray");
BP_API bp_status bp_view_query_nearest(const bp_view *view, const float *point, uint32_t k, bp_hit *out,
	size_t *count) BP_DEPRECATED("use bp_view_nearest");
BP_API bp_status bp_view_query_nearest_filtered(const bp_view *view, const float *point, uint32_t k,
	const bp_query_filter *filter, bp_hit *out, size_t *count) BP_DEPRECATED("use bp_view_nearest");
BP_API bp_status bp_view_boxcast_closest(const bp_view *view, const float *min, const float *max, const float *dir,
	float max_t, const bp_query_filter *filter, bp_hit *out, bool *found) BP_DEPRECATED("use bp_view_cast_box_closest");
BP_API bp_status bp_view_boxcast_all(const bp_view *view, const float *min, const float *max, const float *dir,
	float max_t, const bp_query_filter *filter, bp_hit *out, size_t capacity, size_t *total)
	BP_DEPRECATED("use bp_view_cast_box");
BP_API bp_status bp_view_visit_aabb(const bp_view *view, const float *min, const float *max,
	const bp_query_filter *filter, bool (*visit)(uint32_t entity, void *user), void *user)
	BP_DEPRECATED("use bp_view_visit_overlap_box");
BP_API bp_status bp_view_visit_sphere(const bp_view *view, const float *centre, float radius,
	const bp_query_filter *filter, bool (*visit)(uint32_t entity, void *user), void *user)
	BP_DEPRECATED("use bp_view_visit_overlap_sphere");
BP_API bp_status bp_view_visit_ray(const bp_view *view, const float *origin, const float *dir, float max_t,
	const bp_query_filter *filter, bool (*visit)(bp_hit hit, void *user), void *user)
	BP_DEPRECATED("use bp_view_visit_cast_ray");
BP_API bp_status bp_view_visit_boxcast(const bp_view *view, const float *min, const float *max, const float *dir,
	float max_t, const bp_query_filter *filter, bool (*visit)(bp_hit hit, void *user), void *user)
	BP_DEPRECATED("use bp_view_visit_cast_box");
BP_API bp_status bp_view_raycast_closest_batch(const bp_view *view, const bp_ray *rays, size_t count,
	const bp_query_filter *filter, bp_hit *out) BP_DEPRECATED("use bp_view_cast_rays_closest");

// ---- Handles, pairs and neighbours in a view ----------------------------------

/// The dense index of `entity` in this view: BP_OK and *out, or
/// BP_ERR_STALE_HANDLE when the entity was not alive at this frame's submit
/// (destroyed before it, created after it, or null). The first call on a view
/// makes a table by handle slot, O(entities); later submits into the same
/// frame buffer keep it for what they changed, so a reader that looks up
/// handles every frame pays for what changed. Any thread holding the view.
BP_API bp_status bp_view_dense_index(const bp_view *view, bp_entity entity, uint32_t *out);

/// The settings of dense entity `entity` at this frame's submit, as bp_entity_get gives
/// them on the world: bounds, category, mask, user key, kind and shape. By handle:
/// bp_view_dense_index first. BP_ERR_OUT_OF_RANGE for an index outside the view,
/// BP_ERR_INVALID_ARGUMENT for NULL. Any thread holding the view.
BP_API bp_status bp_view_entity_get(const bp_view *view, uint32_t entity, bp_entity_def *out);

/// True when dense entities a and b form a pair in this frame (binary search in
/// the sorted pairs). False for out-of-range indices.
BP_API bool bp_view_colliding(const bp_view *view, uint32_t a, uint32_t b);

/// The neighbours of a dense entity this frame, ascending: a pointer into the
/// view's adjacency (valid while the view is held) and their number.
/// BP_ERR_OUT_OF_RANGE for an index outside the view; BP_ERR_OUT_OF_MEMORY
/// when the adjacency, made on first use, found no memory.
BP_API bp_status bp_view_neighbours(const bp_view *view, uint32_t entity, const uint32_t **out, size_t *count);

/// Calls fn(entity, neighbour, user) for each neighbour of `entity`, ascending, on the
/// calling thread.
BP_API bp_status bp_view_for_each_neighbour(const bp_view *view, uint32_t entity,
	void (*fn)(uint32_t entity, uint32_t neighbour, void *user), void *user);

/// Folds fn over the neighbours of `entity`, ascending: acc = fn(acc, neighbour,
/// user), starting from init; the result goes to *out. fn runs on the calling thread.
BP_API bp_status bp_view_reduce_neighbours(const bp_view *view, uint32_t entity,
	double (*fn)(double acc, uint32_t neighbour, void *user), void *user, double init, double *out);

// Pair events. Two calls give the same events named two ways, and the names do not say which:
// - bp_view_events (and bp_view_events_since) name each pair by the entities' handles, with
//   their user keys beside them (bp_pair_event). Handles never repeat, so every event is a
//   distinct pair; use these when keys may be 0 or repeat, or to call back into the world.
// - bp_view_pair_events names each pair by user keys alone (bp_key_pair, a <= b), sorted by
//   key: for hosts whose keys are their own unique ids. Two events may read the same when
//   keys repeat. Its key pairs are made on first use, once per view.
// Both count from bp_view_previous_frame and return the same totals. Counting (capacities 0)
// costs nothing. The builder finds which pairs began and ended; it names them too when a
// reader read the last frame's events or something other than bounds changed, else the
// first call that reads them names them (a few tens of ns an event).

// bp_pair_event (types.h) names a pair that began or ended by its entities' handles.

/// Pairs that began (in this frame, not in the one bp_view_previous_frame names)
/// and ended (there, not here), sorted by (a, b) in handle order. Pairs are
/// compared by handle, so events are right whatever the user keys (0, repeated):
/// an entity destroyed and another created in its slot are different entities.
/// The previous frame is the previous *published* one (coalesced snapshots are
/// skipped); for the first published frame every pair began. Writes up to each
/// capacity and sets each total; BP_ERR_OUT_OF_RANGE when a buffer with room
/// (capacity > 0) was short. Either buffer may be NULL with capacity 0: that side
/// is only counted, and counts alone return BP_OK. Any thread holding the view.
BP_API bp_status bp_view_events(const bp_view *view, bp_pair_event *began, size_t began_capacity,
	size_t *began_total, bp_pair_event *ended, size_t ended_capacity, size_t *ended_total);

/// The frame bp_view_events counts from: the published frame before this one, or
/// 0 for the first. A reader whose last frame is an earlier one missed frames:
/// it gets their net change from bp_view_events_since.
BP_API uint64_t bp_view_previous_frame(const bp_view *view);

/// The net change from `earlier` (a view of the same world the reader still
/// holds, any number of frames back) to `view`, as bp_view_events: pairs in
/// view and not in earlier began, the others ended. A pair that ended and began
/// again in between is in neither. BP_ERR_INVALID_ARGUMENT when earlier is
/// another world's or a later frame, or either is a world view (no pairs to compare).
/// Any thread holding both views.
BP_API bp_status bp_view_events_since(const bp_view *view, const bp_view *earlier, bp_pair_event *began,
	size_t began_capacity, size_t *began_total, bp_pair_event *ended, size_t ended_capacity, size_t *ended_total);

/// A pair named by the entities' user keys, a <= b. Not lo and hi as in
/// bp_pair: keys may repeat, so a may equal b.
typedef struct bp_key_pair {
	uint64_t a;
	uint64_t b;
} bp_key_pair;

/// The pairs of bp_view_events as user-key pairs (each a <= b), sorted by
/// (a, b). With repeated keys two events may read the same; the handles of
/// bp_view_events tell them apart.
BP_API bp_status bp_view_pair_events(const bp_view *view, bp_key_pair *began, size_t began_capacity,
	size_t *began_total, bp_key_pair *ended, size_t ended_capacity, size_t *ended_total);

#ifdef __cplusplus
}
#endif
#endif
