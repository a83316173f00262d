// SPDX-License-Identifier: MIT
// Tracing markup: USDT probes (provider `broadphase`, <sys/sdt.h>) and Intel ITT tasks and frames
// for VTune (docs/design.md "Observability"). Each macro compiles to nothing unless BP_HAVE_USDT or BP_WITH_ITT is set.
#ifndef BP_PROBES_H
#define BP_PROBES_H

#include <stdint.h>

/// Stage ids, the first argument of the stage_begin and stage_end probes. They
/// follow bp_frame_stats: prepare (snapshot), build (sort or cell build), find
/// (sweep or cell tests), merge (chunk buffers into one array); view is the
/// scheduler's extra work on a frame (pair sort, adjacency, events, query hierarchy).
enum {
	BPI_STAGE_PREPARE = 0,
	BPI_STAGE_BUILD = 1,
	BPI_STAGE_FIND = 2,
	BPI_STAGE_MERGE = 3,
	BPI_STAGE_VIEW = 4,
	BPI_STAGE_COUNT
};

// ---- USDT --------------------------------------------------------------------------
// A USDT probe is one `nop` plus an ELF note (readelf -n: stapsdt); the arguments are
// described in the note, not computed into a call. `perf probe -x LIB sdt_broadphase:NAME`
// or bpftrace `usdt:LIB:broadphase:NAME` turn it on. Arguments are integers only.
// Probes in the library (all fire on the thread named):
//   frame_begin(frame, entity_count)              bp_world_step, or the builder per frame
//   frame_end(frame, pair_count, ns_total, status) same thread; status is a bp_status
//   stage_begin(stage) / stage_end(stage)          a BPI_STAGE_* id, on the stepping thread; in the
//                                                  scheduler prepare fires on the host in submit,
//                                                  outside that frame's frame_begin/frame_end
//   find_pairs_begin(algorithm, entity_count)     around the algorithm's find_pairs
//   find_pairs_end(algorithm, status, pair_count) (always fires, also on error)
//   submit(frame, entity_count)                   bp_frame_submit, host thread
//   build_begin(frame)                            the builder takes a snapshot
//   publish(frame)                                the builder swaps it in as latest
//   acquire(frame) / release(frame)               bp_frame_acquire / bp_view_release
// Warning: on an error inside find_pairs the stage_end of the open stage does not fire;
// find_pairs_end (status != 0) does.
#if defined(BP_HAVE_USDT) && BP_HAVE_USDT
// Register or memory operands only: the default "nor" lets a constant argument (the stage
// ids) become an immediate, and perf 6.1 then drops every argument of that probe ("0
// arguments" in `perf probe -v`). The price is one mov of the constant per stage boundary.
#define STAP_SDT_ARG_CONSTRAINT or
#include <sys/sdt.h>
#define BP_PROBE(name) DTRACE_PROBE(broadphase, name)
#define BP_PROBE1(name, a) DTRACE_PROBE1(broadphase, name, a)
#define BP_PROBE2(name, a, b) DTRACE_PROBE2(broadphase, name, a, b)
#define BP_PROBE3(name, a, b, c) DTRACE_PROBE3(broadphase, name, a, b, c)
#define BP_PROBE4(name, a, b, c, d) DTRACE_PROBE4(broadphase, name, a, b, c, d)
#else
#define BP_PROBE(name) ((void)0)
#define BP_PROBE1(name, a) ((void)0)
#define BP_PROBE2(name, a, b) ((void)0)
#define BP_PROBE3(name, a, b, c) ((void)0)
#define BP_PROBE4(name, a, b, c, d) ((void)0)
#endif

// ---- Intel ITT (VTune) ----------------------------------------------------------------
// Domain "broadphase"; one task per stage, a "find_pairs" task around the algorithm, and
// frame markup per step or scheduler build. Without a collector attached, each ITT call is
// a test of a null function pointer in libittnotify.
#if defined(BP_WITH_ITT) && BP_WITH_ITT
#include <ittnotify.h>
#include <stdatomic.h>

/// The domain, created on first use. __itt_domain_create returns the same domain for the
/// same name, so two threads racing here store the same pointer.
static inline __itt_domain *bpi_itt_domain(void)
{
	static _Atomic(__itt_domain *) domain;
	__itt_domain *d = atomic_load_explicit(&domain, memory_order_acquire);
	if (!d) {
		d = __itt_domain_create("broadphase");
		atomic_store_explicit(&domain, d, memory_order_release);
	}
	return d;
}

/// The task name of a stage id, or of the find_pairs task for BPI_STAGE_COUNT.
static inline __itt_string_handle *bpi_itt_name(int stage)
{
	static const char *const names[BPI_STAGE_COUNT + 1] = {"prepare", "build", "find", "merge", "view",
		"find_pairs"};
	static _Atomic(__itt_string_handle *) handles[BPI_STAGE_COUNT + 1];
	__itt_string_handle *h = atomic_load_explicit(&handles[stage], memory_order_acquire);
	if (!h) {
		h = __itt_string_handle_create(names[stage]);
		atomic_store_explicit(&handles[stage], h, memory_order_release);
	}
	return h;
}

#define BPI_ITT_TASK_BEGIN(stage) __itt_task_begin(bpi_itt_domain(), __itt_null, __itt_null, bpi_itt_name(stage))
#define BPI_ITT_TASK_END() __itt_task_end(bpi_itt_domain())
#define BPI_ITT_FRAME_BEGIN() __itt_frame_begin_v3(bpi_itt_domain(), NULL)
#define BPI_ITT_FRAME_END() __itt_frame_end_v3(bpi_itt_domain(), NULL)
#else
#define BPI_ITT_TASK_BEGIN(stage) ((void)0)
#define BPI_ITT_TASK_END() ((void)0)
#define BPI_ITT_FRAME_BEGIN() ((void)0)
#define BPI_ITT_FRAME_END() ((void)0)
#endif

// ---- markup used in the library ---------------------------------------------------------
// ITT tasks nest per thread and __itt_task_end closes the innermost one, so every macro
// below keeps begins and ends balanced on the thread even when find_pairs returns early:
// an algorithm only switches stages (end + begin), and the caller closes what is open.

/// A frame (bp_world_step, or one scheduler build) starts.
#define BPI_MARK_FRAME_BEGIN(frame, entities) \
	do { \
		BP_PROBE2(frame_begin, (uint64_t)(frame), (uint32_t)(entities)); \
		BPI_ITT_FRAME_BEGIN(); \
	} while (0)
/// The frame ends, with or without success (status is a bp_status).
#define BPI_MARK_FRAME_END(frame, pairs, ns, status) \
	do { \
		BP_PROBE4(frame_end, (uint64_t)(frame), (uint64_t)(pairs), (uint64_t)(ns), (int)(status)); \
		BPI_ITT_FRAME_END(); \
	} while (0)
/// A stage the caller also ends (prepare, view).
#define BPI_MARK_STAGE_BEGIN(stage) \
	do { \
		BP_PROBE1(stage_begin, (int)(stage)); \
		BPI_ITT_TASK_BEGIN(stage); \
	} while (0)
#define BPI_MARK_STAGE_END(stage) \
	do { \
		BP_PROBE1(stage_end, (int)(stage)); \
		BPI_ITT_TASK_END(); \
	} while (0)
/// Around an algorithm's find_pairs: opens the find_pairs task and the build stage, and
/// closes both (or whichever stage the algorithm switched to) afterwards.
#define BPI_MARK_FIND_PAIRS_BEGIN(algorithm, entities) \
	do { \
		BP_PROBE2(find_pairs_begin, (int)(algorithm), (uint32_t)(entities)); \
		BPI_ITT_TASK_BEGIN(BPI_STAGE_COUNT); \
		BP_PROBE1(stage_begin, (int)BPI_STAGE_BUILD); \
		BPI_ITT_TASK_BEGIN(BPI_STAGE_BUILD); \
	} while (0)
#define BPI_MARK_FIND_PAIRS_END(algorithm, status, pairs) \
	do { \
		BPI_ITT_TASK_END(); \
		BPI_ITT_TASK_END(); \
		BP_PROBE3(find_pairs_end, (int)(algorithm), (int)(status), (uint64_t)(pairs)); \
	} while (0)
/// Inside find_pairs, next to a stage timestamp: stage `from` ends and `to` begins.
#define BPI_MARK_STAGE_NEXT(from, to) \
	do { \
		BP_PROBE1(stage_end, (int)(from)); \
		BP_PROBE1(stage_begin, (int)(to)); \
		BPI_ITT_TASK_END(); \
		BPI_ITT_TASK_BEGIN(to); \
	} while (0)
/// Inside find_pairs, at its last timestamp: the merge (the last stage) is done. USDT only:
/// BPI_MARK_FIND_PAIRS_END closes the ITT task.
#define BPI_MARK_STAGE_DONE(stage) BP_PROBE1(stage_end, (int)(stage))

#endif
