// SPDX-License-Identifier: MIT
// The value types every part of broadphase shares: handles, pairs, kinds, shapes, algorithms,
// debug flags, executors and per-step statistics. world.h and frame.h build on them.
#ifndef BROADPHASE_TYPES_H
#define BROADPHASE_TYPES_H

#include <stdbool.h>
#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Entity handle, passed by value. {0} is the null handle. A handle stays valid
/// until its entity is destroyed; after that every call with it returns
/// BP_ERR_STALE_HANDLE. So does every call given a handle of another world:
/// each world draws a 12-bit tag from a process-wide counter (1 .. 4095 in
/// turn) and its handles carry it, so two worlds share a tag only when a
/// multiple of 4095 worlds were created between them.
typedef struct bp_entity {
	uint32_t index1;     ///< slot index + 1; 0 means null
	/// The world's tag in the top 12 bits; below, a count bumped each time the
	/// slot is reused (from 1). A slot is retired, never reused, when its count
	/// would pass 2^20 - 1, so no handle ever comes back to life.
	uint32_t generation;
} bp_entity;

/// The slot's reuse count of a handle (the low 20 bits of generation): what
/// messages print after index1, as in "entity {12, 1}".
static inline uint32_t bp_entity_reuse_count(bp_entity e) { return e.generation & 0xFFFFFu; }
/// The tag of the world that made a handle (the top 12 bits of generation), 1 .. 4095;
/// messages print it ("entity {3, 1} of world tag 7") only for another world's handle.
static inline uint32_t bp_entity_world_tag(bp_entity e) { return e.generation >> 20; }

/// A pair that began or ended (bp_view_events, bp_world_events), named by what
/// stays the same while dense indices move: the entities' handles and their user
/// keys (as they were in the frame or step where the pair existed). a comes
/// before b in handle order (index1, then generation).
typedef struct bp_pair_event {
	bp_entity a, b;
	uint64_t key_a, key_b;
} bp_pair_event;

/// An overlapping pair of the last step, as dense entity indices with lo < hi.
/// Dense indices are positions in the world's SoA arrays at the time of that step
/// (see bp_world_entity_at). 8 bytes.
typedef struct bp_pair {
	uint32_t lo;
	uint32_t hi;
} bp_pair;

/// Static entities never pair with each other.
typedef enum bp_kind { BP_KIND_DYNAMIC = 0, BP_KIND_STATIC = 1 } bp_kind;

/// What an entity's bounds hold. A box is its bounds. A sphere is the largest
/// ball centred in its bounds: centre c = (min + max) / 2 and radius
/// r = min over axes of (max - min) / 2, both computed in double. A pair with a
/// sphere in it must overlap as bounds (closed boxes, see "Pair rules") and as shapes: two spheres
/// when |ca - cb| <= ra + rb, a sphere and a box when the box's closest point
/// to c is within r, all in double. Every algorithm applies the same test to
/// pairs; the queries on a view (frame.h) test a sphere's bounds.
typedef enum bp_shape { BP_SHAPE_BOX = 0, BP_SHAPE_SPHERE = 1 } bp_shape;

/// Pair-finding algorithms. Every one reports exactly the same pair set.
typedef enum bp_algorithm {
	BP_ALGO_AUTO = 0, ///< chosen per step from scene statistics
	BP_ALGO_BRUTE,    ///< all n(n-1)/2 tests; the oracle
	BP_ALGO_SAP,      ///< sweep-and-prune along the axis of largest spread
	BP_ALGO_GRID,     ///< uniform grid over the scene bounds
	BP_ALGO_HASH,     ///< unbounded hashed grid
	BP_ALGO_SHIFTS,   ///< four-shifts sectors: the grid shifted by half a sector per axis combination
	BP_ALGO_BUCKETS,  ///< static buckets: home bucket plus the neighbours a box reaches into
	BP_ALGO_QUADTREE, ///< a quadtree (2D) or octree (3D) kept across steps
	BP_ALGO_CLOSEST,  ///< closest-pair divide and conquer along one axis
	BP_ALGO_COUNT
} bp_algorithm;

/// Switches for benchmarks and tests, the bits of bp_world_def.debug_flags.
/// Hosts leave them 0. None changes a pair, only how the work is done; none but
/// BP_DEBUG_NO_STATIC_TREE changes their order.
typedef enum bp_debug_flag {
	/// Algorithms that keep state across steps (sap's sort order, quadtree's
	/// tree, the closest-pair finder's order) start from scratch every step, so a
	/// benchmark that steps one unchanged scene times the whole work, not the
	/// no-motion shortcut.
	BP_DEBUG_NO_COHERENCE = 1u << 0,
	/// Baseline kernels only (sap's sweep skips its AVX2 path, the grid and hash
	/// finder runs its x86-64 baseline build), to compare them with the newer ones.
	BP_DEBUG_NO_SIMD = 1u << 1,
	/// Incremental worlds take the incremental path whenever they have a resting
	/// index, whatever the cost model says, so tests on small worlds exercise it.
	BP_DEBUG_ALWAYS_INCREMENTAL = 1u << 2,
	/// Incremental worlds rebuild in full every step (and keep the resting index
	/// for the next), so tests can compare the two paths step by step. Wins over
	/// BP_DEBUG_ALWAYS_INCREMENTAL.
	BP_DEBUG_ALWAYS_FULL = 1u << 3,
	/// Static entities go through the algorithm with the others, which drops their
	/// pairs with each other at the test, instead of a tree of their own that only the
	/// dynamic ones walk (docs/design.md "Algorithms"). Steps that do not sort their
	/// pairs give them in another order.
	BP_DEBUG_NO_STATIC_TREE = 1u << 4,
	BP_DEBUG_ALL = BP_DEBUG_NO_COHERENCE | BP_DEBUG_NO_SIMD | BP_DEBUG_ALWAYS_INCREMENTAL | BP_DEBUG_ALWAYS_FULL |
		       BP_DEBUG_NO_STATIC_TREE
} bp_debug_flag;

/// The most threads a world steps with: more than the hardware threads of most
/// machines, while a mistaken count (INT_MAX) is refused with
/// BP_ERR_INVALID_ARGUMENT instead of asking the system for that many threads,
/// each with its own stack (8 MiB of address space under the usual limits).
#define BP_MAX_THREADS 1024

/// Steps of fewer entities run on the calling thread alone, whatever
/// bp_world_def.thread_count says: measured on 2 cores beside a busy host thread,
/// 2,000 boxes took 0.071 ms on one thread and 0.106 ms on two (one shares its
/// core with the host).
#define BP_SERIAL_STEP_ENTITIES 2048

/// The host's last word on a pair (bp_world_def.pair_filter): the two entities'
/// handles and user keys; false drops the pair.
typedef bool bp_pair_filter_fn(bp_entity a, bp_entity b, uint64_t key_a, uint64_t key_b, void *user);

/// Where a world's parallel loops run.
typedef enum bp_executor {
	/// The library's own worker threads (the default). They belong to the thread
	/// that steps (the caller of bp_world_step or bp_frame_step, or a world's frame builder), are
	/// shared by every world that thread steps, and end with it. The caller takes
	/// part and waits only for work a worker has begun, so a worker whose core is
	/// busy with the host delays nothing; an idle worker spins for 30 us and then
	/// sleeps, so between steps the workers take no core from the host.
	BP_EXECUTOR_WORKERS = 0,
	/// An OpenMP parallel region per loop, for hosts that already run an OpenMP
	/// team and want the library inside it. Idle OpenMP threads spin for several
	/// milliseconds after each loop unless OMP_WAIT_POLICY=passive is set before
	/// the program starts.
	BP_EXECUTOR_OPENMP = 1,
	/// The host's task system (bp_world_def.task_system).
	BP_EXECUTOR_HOST = 2,
} bp_executor;

/// Runs items [begin, end) of a task on the host's worker `worker`
/// (0 <= worker < bp_task_system.worker_count).
typedef void bp_task_fn(uint32_t begin, uint32_t end, uint32_t worker, void *task_context);

/// The host's task system, as BP_EXECUTOR_HOST runs parallel loops on it. For a
/// loop the library calls enqueue once and then finish once with what enqueue
/// returned (unless NULL). enqueue must see that task(begin, end, worker,
/// task_context) is called over ranges that together cover [0, item_count)
/// exactly once, each at least min_range items (the last may be shorter),
/// possibly at once on different workers, and may run them all before it
/// returns (then it may return NULL). finish returns when every range is done.
/// Which worker runs which range never changes a pair or its order. Both are
/// called from the thread that steps (the host's, or the world's frame builder
/// thread) and never from inside a task.
typedef struct bp_task_system {
	void *(*enqueue)(bp_task_fn *task, uint32_t item_count, uint32_t min_range, void *task_context, void *user);
	void (*finish)(void *task, void *user);
	void *user;       ///< passed to enqueue and finish
	int worker_count; ///< 1 to BP_MAX_THREADS: the workers a task may run on
} bp_task_system;

/// How a step found its pairs (bp_frame_stats.path).
typedef enum bp_step_path {
	BP_PATH_PLAIN = 0, ///< a world that is not incremental, or a periodic one: every pair found afresh
	BP_PATH_FULL,      ///< an incremental world's full step: every pair found afresh
	BP_PATH_RESTING,   ///< an incremental step over the resting index (few entities changed)
	BP_PATH_MOVING,    ///< an incremental step of the moving state (most entities change a little)
	BP_PATH_NEIGHBOURS, ///< a step of the neighbour list (bp_world_def.skin)
} bp_step_path;

/// Per-step statistics. Times are wall-clock nanoseconds.
typedef struct bp_frame_stats {
	/// bp_world_stats: bp_world_step calls completed, this one included. A view's
	/// stats: its frame number (bp_view_frame). The two count apart.
	uint64_t frame;
	bp_algorithm algorithm;    ///< the algorithm that ran (never AUTO; grid, the resting index, on an incremental step)
	int thread_count;          ///< threads used
	uint32_t entity_count;
	uint64_t candidate_tests;  ///< box-pair overlap tests performed
	uint64_t pair_count;       ///< pairs reported
	/// Cells, buckets, sectors, regions or nodes the algorithm built (over the dynamic
	/// entities alone when static_walks says the step split); 0 when none.
	uint64_t cell_count;
	uint64_t ns_prepare;       ///< snapshot and statistics
	uint64_t ns_build;         ///< sort or hash build
	uint64_t ns_find;          ///< sweep or cell tests into per-chunk buffers
	uint64_t ns_merge;         ///< prefix sum and copy of the chunk buffers
	uint64_t ns_total;         ///< whole step
	float cell_size;           ///< edge of the base cell, sector or region the step used; 0 when none
	float cell_origin[3];      ///< a corner of the base cells: cell k spans origin + [k, k+1) * cell_size
	/// Incremental worlds: entities the step searched again, the changed ones and
	/// those still out of the resting index (entity_count when it took the full
	/// path). 0 in other worlds.
	uint32_t active_count;
	/// Incremental worlds: active entities that searched the resting index this
	/// step; the others were still inside their enlarged boxes and re-tested what
	/// their last search found (see bp_world_def.margin). entity_count on the full
	/// path, 0 in other worlds.
	uint32_t searched_count;
	/// The path the step took (docs/design.md, "Incremental path"). Chosen from
	/// counted work only, so a history takes the same paths on every machine.
	bp_step_path path;
	/// Frames: what the builder derived from the pairs after the step (their sort,
	/// which an incremental world's step makes itself, in ns_merge; the events, and
	/// the query hierarchy and adjacency a reader used), within ns_total; 0 for
	/// bp_world_step.
	uint64_t ns_view;
	/// Frames: of ns_view, the query hierarchy; 0 when the builder made none.
	uint64_t ns_hierarchy;
	/// Dynamic entities that walked the tree of the static ones for their pairs with
	/// them, the algorithm seeing only the dynamic ones (docs/design.md "Algorithms");
	/// 0 when the step ran the algorithm over every entity.
	uint32_t static_walks;
} bp_frame_stats;

#ifdef __cplusplus
}
#endif
#endif
