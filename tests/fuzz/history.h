// SPDX-License-Identifier: MIT
// Differential history engine: a random API history (from fuzzer bytes or a seed) replayed on
// an incremental world and on a plain world side by side, every step checked against a
// brute-force oracle over a shadow model, against the other world, and views against both.
// Used by tests/fuzz/fuzz_history.c (libFuzzer) and tests/fuzz/history_soak.c (ctest, soak).
#ifndef BP_HISTORY_H
#define BP_HISTORY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/// The two worlds' settings, decoded from the first bytes (see hist_decode).
typedef struct hist_config {
	uint8_t dims, periodic, canonical, profile; ///< profile: 0 integer grid, 1 decimals, 2 wide, 3 mixed
	uint8_t threads, executor;                  ///< 0..8; bp_executor
	uint8_t algo_target, algo_plain;            ///< bp_algorithm of the incremental and the plain world
	uint8_t debug_flags;                        ///< the incremental world's bp_debug_flag bits
	uint8_t settle_min;                         ///< bpi_set_settle_min: 0 = default (1,024)
	uint8_t threads_on_small;                   ///< bpi_set_serial_step_entities(0)
	uint8_t grid;                               ///< coordinate range of the profiles (4..67)
	uint8_t hierarchy;                          ///< bpi_set_hierarchy_rules: 0 the library's, else hierarchy_rules[]
	uint8_t moving;                             ///< bpi_set_moving_always(true): incremental steps in the moving state
	uint8_t merges_most;                        ///< bpi_set_active_merges_most: 0 = default (8)
	float margin;                               ///< incremental world's def.margin
	float skin;                                 ///< incremental world's def.skin: 0, or the margin's value
	float period[3];
	uint8_t statics; ///< three entities in four static, and every step with one splits off their tree (not periodic)
	uint8_t split;   ///< bpi_cells_set_split_min(1): grid and hash sort in two levels (not periodic)
} hist_config;

/// Operation codes (hist_op.code); history.c has what each does with the fields.
enum hist_code { OP_CREATE, OP_CREATE_BULK, OP_DESTROY, OP_DESTROY_BULK, OP_MOVE, OP_MOVE_BULK, OP_TELEPORT, OP_FACE,
	OP_ATTR, OP_STEP, OP_FRAME, OP_SUBMIT, OP_ACQUIRE, OP_RELEASE, OP_CONFIG, OP_COUNT };

/// One operation. Entity picks are positions in the live dense order, taken modulo the live
/// count when the operation runs, so any subset of a history is a history too.
typedef struct hist_op {
	uint8_t code, a;  ///< hist_code; a: variant bits
	uint16_t p, q, n; ///< picks, count
	uint16_t k;       ///< steps, frames: k % 4 == 0 fails allocation k / 4 % 160 + 1 of the call on world a & 1
	uint32_t s;       ///< seed of what the operation draws (bulk bounds, subsets, filters, keys)
	float min[3], max[3];
} hist_op;

typedef struct history {
	hist_config cfg;
	hist_op *ops;
	uint32_t count, capacity;
} history;

/// Bytes to a history; total: every byte string decodes (short input reads zeros).
void hist_decode(const uint8_t *data, size_t size, history *h);
/// The inverse of hist_decode: *out (malloc'd) decodes to exactly h. Returns the size.
size_t hist_encode(const history *h, uint8_t **out);
/// A random history: splitmix64 bytes of `seed`, decoded; in a quarter of the seeds
/// every move and change of attributes then picks among the same leading entities,
/// and no entity is destroyed.
void hist_from_seed(uint64_t seed, history *h);
void hist_free(history *h);
/// The most entities a trace may hold at once to become a history (picks are 16-bit, and the
/// engine holds at most hist_options.max_entities, 6,000 by default).
#define HIST_TRACE_MAX_ENTITIES 6000u
/// A trace file (docs/trace.md) as a history (history_trace.c): per frame its destroys, creates,
/// attribute changes and moves as single-entity operations on the same dense indices, then a
/// world step and a frame step. False, with why in `error`, for a file the reader refuses or a
/// filter outside those a history draws from.
bool hist_from_trace(const char *path, history *h, char *error, size_t size);
void hist_push(history *h, hist_op op);
/// The categories and masks a history draws, by index 0..HIST_FILTERS - 1 (history.c's
/// attrs_from; history_trace.c maps a trace's back). The first half uses bits 0-2, the second
/// bits 0, 33 and 63 as well, so the 64-bit rule meets the low word, the high word and the top
/// bit, alone and mixed.
#define HIST_FILTERS 16
uint64_t hist_category(int index);
uint64_t hist_mask(int index);

typedef struct hist_options {
	FILE *trace;                 ///< non-NULL: print the calls on trace_world as a Criterion test
	int trace_world;             ///< 0 incremental, 1 plain
	const char *trace_name;      ///< test name in the trace
	volatile uint32_t *progress; ///< non-NULL: [0] op running, [1] world being called
	uint32_t max_entities;       ///< live entities at most (0: 6,000)
} hist_options;

/// Runs the history; returns the steps (world and frame) taken. A failed check calls
/// hist_fail, which must not return.
uint64_t hist_run(const history *h, const hist_options *options);
/// Called on a failed check: op index, world (0 incremental, 1 plain, -1 both or none), message.
extern void (*hist_fail)(uint32_t op, int world, const char *message);

#endif
