// SPDX-License-Identifier: MIT
// The one interface in front of every pair-finding algorithm.
#ifndef BP_INDEX_H
#define BP_INDEX_H

#include <broadphase/world.h>
#include "core.h"
#include "pairs.h"

#define BP_FLAG_STATIC 1u
#define BP_FLAG_SPHERE 2u

/// A read-only snapshot of the world that an algorithm indexes: dense SoA
/// bounds (dims arrays each), filters and flags, plus the step's settings.
typedef struct bpi_scene {
	uint32_t count;
	int dims;
	const float *min[3];
	const float *max[3];
	const uint32_t *category;
	const uint32_t *mask;
	const uint8_t *flags;
	/// No entity is static or a sphere, and every filter accepts every other:
	/// algorithms may skip bpi_scene_accepts on their hot path.
	bool unfiltered;
	int threads;
	float cell_size; ///< 0 = algorithm's choice
} bpi_scene;

/// Closed-interval overlap on every axis (DESIGN §3): touching boxes overlap.
static inline bool bpi_scene_overlap(const bpi_scene *s, uint32_t a, uint32_t b)
{
	for (int axis = 0; axis < s->dims; ++axis)
		if (!(s->min[axis][a] <= s->max[axis][b] && s->min[axis][b] <= s->max[axis][a]))
			return false;
	return true;
}

/// The shape test of a pair whose bounds overlap and one of which is a sphere
/// (bp_shape in world.h). shapes.c.
bool bpi_shapes_overlap(const bpi_scene *s, uint32_t a, uint32_t b);

/// Closed overlap of two packed bounds records, each `dims` mins then `dims` maxes
/// (the copies buckets and closest sweep over instead of the scene's arrays).
static inline bool bpi_record_overlap(const float *a, const float *b, int dims)
{
	for (int axis = 0; axis < dims; ++axis)
		if (!(a[axis] <= b[dims + axis] && b[axis] <= a[dims + axis]))
			return false;
	return true;
}

/// Category/mask filter both ways, never two static entities, and the shape
/// test when a sphere is involved.
static inline bool bpi_scene_accepts(const bpi_scene *s, uint32_t a, uint32_t b)
{
	uint8_t fa = s->flags[a], fb = s->flags[b];
	if (!((s->category[a] & s->mask[b]) && (s->category[b] & s->mask[a])) || (fa & fb & BP_FLAG_STATIC))
		return false;
	return !((fa | fb) & BP_FLAG_SPHERE) || bpi_shapes_overlap(s, a, b);
}

typedef struct bpi_algorithm bpi_algorithm;

/// Every algorithm's index starts with this header, so a pointer to the
/// algorithm's own struct converts to and from bpi_index * (first member).
typedef struct bpi_index {
	const bpi_algorithm *algorithm;
	bpi_pair_chunks chunks; ///< per-chunk pair buffers, reused across steps
} bpi_index;

struct bpi_algorithm {
	bp_algorithm id;
	const char *name;
	/// Allocates an empty index; its state persists across steps.
	bp_status (*create)(bpi_index **out);
	void (*destroy)(bpi_index *index);
	/// Finds every accepted overlapping pair of `scene` into `out` in an order
	/// that does not depend on scene->threads. Fills candidate_tests,
	/// cell_count, ns_build, ns_find and ns_merge of `stats`. On error `out` is
	/// unchanged.
	bp_status (*find_pairs)(bpi_index *index, const bpi_scene *scene, bpi_pair_buffer *out, bp_frame_stats *stats);
};

/// Benchmark switch, true by default: false makes every algorithm that keeps state
/// across steps (sap's order, quadtree's tree, closest's order) start from scratch
/// each step, so a benchmark that steps one unchanged scene times the whole work
/// rather than the no-motion shortcut. Not for hosts. algorithms.c.
extern bool bpi_coherence;

/// Allocates a zeroed index of `size` bytes (an algorithm's struct with bpi_index
/// first) for `algorithm`: the create function every algorithm shares.
bp_status bpi_index_new(size_t size, const bpi_algorithm *algorithm, bpi_index **out);

/// The implementation of an algorithm, or NULL when not built in (or AUTO).
const bpi_algorithm *bpi_algorithm_get(bp_algorithm id);
/// The algorithm AUTO picks for this scene.
bp_algorithm bpi_algorithm_choose(const bpi_scene *scene);

extern const bpi_algorithm bpi_brute_algorithm;
extern const bpi_algorithm bpi_grid_algorithm, bpi_hash_algorithm;
extern const bpi_algorithm bpi_sap_algorithm;
extern const bpi_algorithm bpi_buckets_algorithm;
extern const bpi_algorithm bpi_closest_algorithm;
extern const bpi_algorithm bpi_quadtree_algorithm;
extern const bpi_algorithm bpi_shifts_algorithm;

#endif
