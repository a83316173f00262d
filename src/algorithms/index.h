// SPDX-License-Identifier: MIT
// The one interface in front of every pair-finding algorithm.
#ifndef BP_INDEX_H
#define BP_INDEX_H

#include <broadphase/types.h>
#include "base/core.h"
#include "parallel/pairs.h"
#include "parallel/soa.h" // BP_FLAG_*

/// A read-only snapshot of the world that an algorithm indexes: dense SoA
/// bounds (dims arrays each), filters and flags, plus the step's settings.
typedef struct bpi_scene {
	uint32_t count;
	int dims;
	const float *min[3];
	const float *max[3];
	const uint64_t *category;
	const uint64_t *mask;
	const uint8_t *flags;
	/// No entity is static or a sphere, and every filter accepts every other:
	/// algorithms may skip bpi_scene_accepts on their hot path.
	bool unfiltered;
	int threads;
	float cell_size; ///< 0 = algorithm's choice
	/// BP_DEBUG_NO_COHERENCE: algorithms that keep state across steps start
	/// from scratch. BP_DEBUG_NO_SIMD: baseline kernels only. Pairs never change.
	uint32_t debug_flags;
	/// Incremental steps: how far an active entity's query box is enlarged
	/// (bp_world_def.margin); 0 = chosen from the motion observed.
	float margin;
	/// Incremental steps: the neighbour list's skin (bp_world_def.skin); 0 = none.
	float skin;
	/// The caller reads the algorithm's index over every entity afterwards (the
	/// incremental world's resting cells): static entities stay in it.
	bool whole;
	/// The account the step's pair buffers are charged to (NULL: none); its
	/// stop ends every finder once a growth failed.
	bpi_budget *budget;
} bpi_scene;

/// True when the step may reuse what earlier steps left in the index.
static inline bool bpi_scene_coherent(const bpi_scene *s)
{
	return !(s->debug_flags & BP_DEBUG_NO_COHERENCE);
}

/// Closed-interval overlap on every axis (docs/design.md "Pair rules"): touching boxes overlap.
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
/// (the copies buckets and the closest-pair finder sweep over instead of the scene's arrays).
static inline bool bpi_record_overlap(const float *a, const float *b, int dims)
{
	for (int axis = 0; axis < dims; ++axis)
		if (!(a[axis] <= b[dims + axis] && b[axis] <= a[dims + axis]))
			return false;
	return true;
}

/// Category/mask filter both ways, and never two static entities.
static inline bool bpi_scene_filters_accept(const bpi_scene *s, uint32_t a, uint32_t b)
{
	return (s->category[a] & s->mask[b]) && (s->category[b] & s->mask[a]) &&
	       !(s->flags[a] & s->flags[b] & BP_FLAG_STATIC);
}

/// Of two entities whose bounds overlap: the shape test when a sphere is involved.
static inline bool bpi_scene_shapes_accept(const bpi_scene *s, uint32_t a, uint32_t b)
{
	return !((s->flags[a] | s->flags[b]) & BP_FLAG_SPHERE) || bpi_shapes_overlap(s, a, b);
}

/// The filters, then the shape test when a sphere is involved.
static inline bool bpi_scene_accepts(const bpi_scene *s, uint32_t a, uint32_t b)
{
	return bpi_scene_filters_accept(s, a, b) && bpi_scene_shapes_accept(s, a, b);
}

typedef struct bpi_algorithm bpi_algorithm;

/// Every algorithm's index starts with this header, so a pointer to the
/// algorithm's own struct converts to and from bpi_index * (first member).
typedef struct bpi_index {
	const bpi_algorithm *algorithm;
	bpi_pair_chunks chunks; ///< per-chunk pair buffers, reused across steps
} bpi_index;

/// What an algorithm's build tells the pipeline: how many chunk buffers its
/// find writes, and the structure it built, for bp_frame_stats.
typedef struct bpi_build {
	uint32_t chunks;      ///< pair buffers find writes, one per fixed chunk
	uint64_t cell_count;  ///< cells, buckets, sectors, regions or nodes; 0 when none
	float cell_size;      ///< edge of the base cell; 0 when the structure has none
	float cell_origin[3]; ///< a corner of the base cells
} bpi_build;

/// An algorithm: one file, one entry in algorithms.c, one bp_algorithm value.
/// The pipeline (pipeline.c) creates and frees its index, times and marks the
/// stages, resets the chunk buffers between build and find, merges them in chunk
/// order and fills the stats; the algorithm only builds and finds.
struct bpi_algorithm {
	const char *name;  ///< bp_algorithm_name, `bp --algo`
	size_t index_size; ///< bytes of the algorithm's index struct, bpi_index first
	/// Optional: sets up a freshly zeroed index where zero is not the empty state.
	void (*init)(bpi_index *index);
	/// Frees what the index owns; the pipeline frees the struct and its chunks.
	void (*release)(bpi_index *index);
	/// Builds the structure over `scene` (state may persist across steps) and
	/// fills `build`. May return BP_ERR_UNSUPPORTED (AUTO then falls back to sap).
	bp_status (*build)(bpi_index *index, const bpi_scene *scene, bpi_build *build);
	/// Finds every accepted overlapping pair of the scene into
	/// index->chunks.buffers[0 .. build->chunks), which the pipeline handed over
	/// empty, each chunk's pairs in an order that does not depend on
	/// scene->threads, and sets each buffer's `tests`. May add to build's counts
	/// (shifts counts sectors as it walks them).
	bp_status (*find)(bpi_index *index, const bpi_scene *scene, bpi_build *build);
};

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
