// SPDX-License-Identifier: MIT
// The oracle of `bp verify`: every pair by the pair rules of world.h, found by a sort and
// sweep in double precision written here from the rules' text, sharing no code with the
// library it checks.
#ifndef BP_CLI_SWEEP_H
#define BP_CLI_SWEEP_H

#include <broadphase/broadphase.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// The entities in dense order, as a trace's state holds them. A NULL settings array
/// means the entity default for all: category 1, mask all, dynamic, box.
typedef struct sweep_entities {
	int dims; ///< 2 or 3
	uint32_t count;
	bp_bounds_arrays bounds;
	const uint64_t *category, *mask;
	const bp_kind *kinds;
	const bp_shape *shapes;
} sweep_entities;

typedef struct sweep_pairs {
	bp_pair *data;
	size_t count, capacity;
} sweep_pairs;

/// Every pair of the entities (closed boxes, category and mask both ways, never two
/// statics, spheres as shapes), each once as (lo, hi) with lo < hi, sorted by lo then hi.
/// Reuses out's memory from an earlier call. False when memory runs out.
bool sweep_find_pairs(const sweep_entities *entities, sweep_pairs *out);
void sweep_pairs_free(sweep_pairs *pairs);

#endif
