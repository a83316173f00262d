// SPDX-License-Identifier: MIT
// Static entities in a tree of their own (statics.h): the split of a scene into its dynamic
// entities and the kept tree of its static ones, and the walks that pair the two.
#include "algorithms/statics.h"
#include "parallel/parallel.h"

#include <stdatomic.h>

/// Scene entities per chunk of the split's two passes.
#define SPLIT_GRAIN 16384u
/// Movers per chunk of the walks: a walk costs tens of node tests.
#define WALK_GRAIN 256u
/// The tree is built again once the static entities refit since its build outnumber a
/// quarter of them: refit boxes keep a shape chosen for other positions.
#define REFIT_SHARE 4u

enum { MARK_CHANGED = 1, MARK_FILTERED = 2 };

static _Atomic uint32_t mover_share = BPI_STATICS_MOVER_SHARE;

void bpi_set_statics_mover_share(uint32_t share)
{
	atomic_store(&mover_share, share ? share : 1u);
}

typedef struct split_job {
	bpi_statics *st;
	const bpi_scene *scene;
	bool same_count; ///< as many static entities as the tree was built over
} split_job;

static void count_statics(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const split_job *job = ctx;
	uint32_t count = 0;
	for (uint32_t i = begin; i < end; ++i)
		count += job->scene->flags[i] & BP_FLAG_STATIC;
	job->st->chunk_counts.data[chunk] = count;
}

/// Records static entity i as member p: whether another entity was member p, and whether
/// its bounds differ from member p's.
static void place_static(bpi_statics *st, const bpi_scene *s, uint32_t p, uint32_t i, bool same_count,
	uint8_t *marks, uint32_t *moved)
{
	float *kept = st->bounds.data + (size_t)2 * s->dims * p;
	if (!same_count || st->members.data[p] != i) {
		*marks |= MARK_CHANGED;
		st->members.data[p] = i;
	}
	bool same = true;
	for (int a = 0; a < s->dims; ++a)
		same &= kept[a] == s->min[a][i] && kept[s->dims + a] == s->max[a][i];
	if (same)
		return; // a still level reads its bounds and writes nothing
	for (int a = 0; a < s->dims; ++a) {
		kept[a] = s->min[a][i];
		kept[s->dims + a] = s->max[a][i];
	}
	++*moved;
}

/// Copies dynamic entity i into mover q of the movers' scene.
static uint8_t place_mover(bpi_statics *st, const bpi_scene *s, uint32_t q, uint32_t i)
{
	const size_t n = st->mover_count;
	st->movers.data[q] = i;
	for (int a = 0; a < s->dims; ++a) {
		st->mover_bounds.data[(size_t)a * n + q] = s->min[a][i];
		st->mover_bounds.data[(size_t)(s->dims + a) * n + q] = s->max[a][i];
	}
	st->mover_filters.data[q] = s->category[i];
	st->mover_filters.data[n + q] = s->mask[i];
	st->mover_flags.data[q] = s->flags[i];
	const bool accepts_all = s->mask[i] == UINT64_MAX && s->category[i] && !(s->flags[i] & BP_FLAG_SPHERE);
	return accepts_all ? 0 : MARK_FILTERED;
}

static void place_entities(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const split_job *job = ctx;
	bpi_statics *st = job->st;
	const bpi_scene *s = job->scene;
	uint32_t p = st->chunk_counts.data[chunk], q = begin - p;
	uint8_t marks = 0;
	uint32_t moved = 0;
	for (uint32_t i = begin; i < end; ++i) {
		if (s->flags[i] & BP_FLAG_STATIC)
			place_static(st, s, p++, i, job->same_count, &marks, &moved);
		else
			marks |= place_mover(st, s, q++, i);
	}
	st->chunk_marks.data[chunk] = marks;
	st->chunk_moved.data[chunk] = moved;
}

/// Room for the members and movers of this step, keeping the members when their count stays.
static bool reserve(bpi_statics *st, const bpi_scene *s, uint32_t statics, uint32_t chunks)
{
	const size_t movers = BP_MAX(s->count - statics, 1u), dims = (size_t)s->dims;
	const size_t keep = statics == st->static_count ? statics : 0;
	return bpi_array_grow(&st->members, keep, BP_MAX(statics, 1u)) &&
	       bpi_array_grow(&st->bounds, keep * 2 * dims, 2 * dims * BP_MAX(statics, 1u)) &&
	       bpi_array_reserve(&st->movers, movers) && bpi_array_reserve(&st->mover_bounds, 2 * dims * movers) &&
	       bpi_array_reserve(&st->mover_filters, 2 * movers) && bpi_array_reserve(&st->mover_flags, movers) &&
	       bpi_array_reserve(&st->chunk_marks, chunks) && bpi_array_reserve(&st->chunk_moved, chunks);
}

/// The movers' scene: the scene's settings over the copied dynamic entities.
static void make_movers_scene(bpi_statics *st, const bpi_scene *s, bool filtered)
{
	const size_t n = st->mover_count;
	st->movers_scene = *s;
	st->movers_scene.count = st->mover_count;
	for (int a = 0; a < s->dims; ++a) {
		st->movers_scene.min[a] = st->mover_bounds.data + (size_t)a * n;
		st->movers_scene.max[a] = st->mover_bounds.data + (size_t)(s->dims + a) * n;
	}
	st->movers_scene.category = st->mover_filters.data;
	st->movers_scene.mask = st->mover_filters.data + n;
	st->movers_scene.flags = st->mover_flags.data;
	st->movers_scene.unfiltered = !filtered;
}

/// Builds the tree when its members changed (or coherence is off, or refits piled up),
/// refits it when only their bounds did, keeps it otherwise.
static bp_status keep_tree(bpi_statics *st, const bpi_scene *s, bool changed, uint64_t moved)
{
	// No summaries: the walks test filters entity by entity.
	const bpi_bvh_bounds bounds = {.min = {s->min[0], s->min[1], s->min[2]}, .max = {s->max[0], s->max[1], s->max[2]}};
	if (st->built && !changed && bpi_scene_coherent(s) &&
		(st->moved_since_build + moved) * REFIT_SHARE <= st->static_count) {
		if (moved)
			bpi_bvh_refit(&st->tree, &bounds, st->members.data, s->dims, s->threads);
		st->moved_since_build += moved;
		return BP_OK;
	}
	st->built = false;
	// Built seldom and kept: its scratch is given back at once.
	bpi_bvh_scratch scratch = {0};
	bp_status status =
		bpi_bvh_build(&st->tree, &scratch, &bounds, st->members.data, st->static_count, s->dims, s->threads);
	bpi_bvh_scratch_free(&scratch);
	if (status != BP_OK)
		return status;
	bpi_bvh_trim(&st->tree);
	st->built = true;
	st->moved_since_build = 0;
	return BP_OK;
}

bp_status bpi_statics_split(bpi_statics *st, const bpi_scene *scene, const bpi_scene **movers)
{
	*movers = NULL;
	if (scene->unfiltered || (scene->debug_flags & BP_DEBUG_NO_STATIC_TREE) || scene->whole)
		return BP_OK; // an unfiltered scene has no static entity
	const uint32_t chunks = bpi_chunk_count(scene->count, SPLIT_GRAIN);
	if (!bpi_array_reserve(&st->chunk_counts, chunks))
		return BP_ERR_OUT_OF_MEMORY;
	split_job job = {st, scene, false};
	bpi_parallel_for(scene->count, SPLIT_GRAIN, scene->threads, count_statics, &job);
	uint32_t statics = 0;
	for (uint32_t c = 0; c < chunks; ++c) {
		const uint32_t count = st->chunk_counts.data[c];
		st->chunk_counts.data[c] = statics;
		statics += count;
	}
	const uint32_t dynamic = scene->count - statics;
	if (!statics || statics > BPI_BVH_MAX_COUNT ||
		(uint64_t)dynamic * atomic_load_explicit(&mover_share, memory_order_relaxed) > scene->count)
		return BP_OK;
	if (!reserve(st, scene, statics, chunks)) {
		st->built = false;
		st->static_count = 0;
		return BP_ERR_OUT_OF_MEMORY;
	}
	job.same_count = statics == st->static_count;
	st->static_count = statics;
	st->mover_count = dynamic;
	bpi_parallel_for(scene->count, SPLIT_GRAIN, scene->threads, place_entities, &job);
	uint8_t marks = 0;
	uint64_t moved = 0;
	for (uint32_t c = 0; c < chunks; ++c) {
		marks |= st->chunk_marks.data[c];
		moved += st->chunk_moved.data[c];
	}
	bp_status status = keep_tree(st, scene, marks & MARK_CHANGED, moved);
	if (status != BP_OK)
		return status;
	make_movers_scene(st, scene, marks & MARK_FILTERED);
	*movers = &st->movers_scene;
	return BP_OK;
}

// ---- the walks ---------------------------------------------------------------------

typedef struct walk_job {
	const bpi_statics *st;
	const bpi_scene *scene;
} walk_job;

/// A dynamic entity on its walk: its box held apart from the scene's arrays.
typedef struct probe {
	float lo[3], hi[3];
	int dims;
	uint32_t d;
} probe;

static probe probe_of(const bpi_scene *s, uint32_t d)
{
	probe p = {.dims = s->dims, .d = d};
	for (int a = 0; a < s->dims; ++a) {
		p.lo[a] = s->min[a][d];
		p.hi[a] = s->max[a][d];
	}
	return p;
}

/// Whether lane `lane` of a block of `lanes` boxes meets the probe's box (closed).
static bool lane_meets(const float *block, uint32_t lanes, uint32_t lane, const probe *p)
{
	for (int a = 0; a < p->dims; ++a)
		if (!(block[(uint32_t)a * lanes + lane] <= p->hi[a] && p->lo[a] <= block[(uint32_t)(3 + a) * lanes + lane]))
			return false;
	return true;
}

/// Pushes the pairs of the probe's entity with the static entities of leaf `leaf`.
static void walk_leaf(const bpi_bvh *tree, uint32_t leaf, const bpi_scene *s, const probe *p, bpi_pair_buffer *out)
{
	const float *block = bpi_bvh_leaf(tree, leaf);
	const uint32_t *order = tree->order.data + (size_t)leaf * BPI_BVH_LEAF;
	const uint32_t size = tree->leaf_size.data[leaf];
	for (uint32_t lane = 0; lane < size; ++lane)
		if (lane_meets(block, BPI_BVH_LEAF, lane, p) && bpi_scene_accepts(s, p->d, order[lane]))
			bpi_pair_push(out, p->d, order[lane]);
	out->tests += size;
}

/// Pairs [from, to) of one dynamic entity by (lo, hi), that is by the static entity: the
/// order then does not depend on the tree's shape, which refits and rebuilds change.
static void sort_hits(bp_pair *p, size_t from, size_t to)
{
	if (to - from > 32) {
		bpi_pairs_sort_in_place(p + from, to - from);
		return;
	}
	for (size_t i = from + 1; i < to; ++i) {
		const bp_pair x = p[i];
		size_t j = i;
		for (; j > from && (p[j - 1].lo > x.lo || (p[j - 1].lo == x.lo && p[j - 1].hi > x.hi)); --j)
			p[j] = p[j - 1];
		p[j] = x;
	}
}

/// Every pair of dynamic entity d with a static one, depth first through the tree.
static void walk(const bpi_bvh *tree, const bpi_scene *s, uint32_t d, bpi_pair_buffer *out)
{
	const size_t first = out->count;
	const probe p = probe_of(s, d);
	uint32_t stack[BPI_BVH_STACK], top = 0;
	if (lane_meets(bpi_bvh_block(tree, 0), 2, 0, &p))
		stack[top++] = bpi_bvh_ref(tree, 0, 0);
	while (top) {
		const uint32_t ref = stack[--top];
		if (ref & BPI_BVH_LEAF_BIT) {
			walk_leaf(tree, ref & ~BPI_BVH_LEAF_BIT, s, &p, out);
			continue;
		}
		const float *kids = bpi_bvh_block(tree, ref);
		for (uint32_t lane = 0; lane < 2; ++lane)
			if (lane_meets(kids, 2, lane, &p))
				stack[top++] = bpi_bvh_ref(tree, ref, lane);
	}
	sort_hits(out->data, first, out->count);
}

static void code_movers(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const walk_job *job = ctx;
	const bpi_scene *m = &job->st->movers_scene;
	for (uint32_t q = begin; q < end; ++q) {
		float record[6] = {0};
		for (int a = 0; a < m->dims; ++a) {
			record[a] = m->min[a][q];
			record[3 + a] = m->max[a][q];
		}
		job->st->walk_order.data[q] = bpi_sort_item_make(bpi_bvh_walk_code(&job->st->tree, record, m->dims), q);
	}
}

static void walk_movers(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const walk_job *job = ctx;
	bpi_pair_buffer *out = &job->st->chunks.buffers[chunk];
	if (bpi_pair_buffer_stopped(out))
		return; // the step ran out of memory in another chunk
	for (uint32_t k = begin; k < end && !out->failed; ++k) {
		const uint32_t q = bpi_sort_item_index(job->st->walk_order.data[k]);
		walk(&job->st->tree, job->scene, job->st->movers.data[q], out);
	}
}

/// The movers in the order of their centres along the tree's Morton curve: each walk then
/// finds most of its nodes in cache from the walk before.
static bp_status order_walks(bpi_statics *st, const walk_job *job, int threads)
{
	if (!bpi_array_reserve(&st->walk_order, BP_MAX(st->mover_count, 1u)) ||
		bpi_radix_sort_reserve(&st->radix, st->mover_count) != BP_OK)
		return BP_ERR_OUT_OF_MEMORY;
	bpi_parallel_for(st->mover_count, SPLIT_GRAIN, threads, code_movers, (void *)job);
	return bpi_radix_sort_items(&st->radix, st->walk_order.data, st->mover_count, threads);
}

typedef struct map_job {
	const uint32_t *movers;
	const bp_pair *from;
	bp_pair *to;
} map_job;

static void map_pairs(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const map_job *job = ctx;
	for (uint32_t i = begin; i < end; ++i) // movers ascend, so lo < hi stays
		job->to[i] = (bp_pair){job->movers[job->from[i].lo], job->movers[job->from[i].hi]};
}

bp_status bpi_statics_join(bpi_statics *st, const bpi_scene *scene, bpi_pair_buffer *pairs, bp_frame_stats *stats)
{
	const uint64_t t0 = bpi_now_ns();
	st->chunks.budget = scene->budget;
	bp_status status = bpi_pair_chunks_reset(&st->chunks, bpi_chunk_count(st->mover_count, WALK_GRAIN));
	if (status != BP_OK)
		return status;
	walk_job walks = {st, scene};
	status = order_walks(st, &walks, scene->threads);
	if (status != BP_OK)
		return status;
	bpi_parallel_for(st->mover_count, WALK_GRAIN, scene->threads, walk_movers, &walks);
	const uint64_t t1 = bpi_now_ns();
	// The walks' pairs after the movers' own, which are then written there mapped.
	const size_t among = st->movers_pairs.count;
	if (among > UINT32_MAX || bpi_pair_chunks_merge_after(&st->chunks, pairs, among, scene->threads) != BP_OK)
		return BP_ERR_OUT_OF_MEMORY;
	map_job map = {st->movers.data, st->movers_pairs.data, pairs->data};
	bpi_parallel_for((uint32_t)among, SPLIT_GRAIN, scene->threads, map_pairs, &map);
	stats->candidate_tests += bpi_pair_chunks_tests(&st->chunks);
	stats->static_walks = st->mover_count;
	stats->ns_find += t1 - t0;
	stats->ns_merge += bpi_now_ns() - t1;
	return BP_OK;
}

void bpi_statics_drop_pairs(bpi_statics *st)
{
	bpi_pair_buffer_free(&st->movers_pairs);
	bpi_pair_chunks_free(&st->chunks);
}

void bpi_statics_free(bpi_statics *st)
{
	bpi_bvh_free(&st->tree);
	bpi_array_free(&st->members);
	bpi_array_free(&st->bounds);
	bpi_array_free(&st->movers);
	bpi_array_free(&st->mover_bounds);
	bpi_array_free(&st->mover_filters);
	bpi_array_free(&st->mover_flags);
	bpi_array_free(&st->chunk_counts);
	bpi_array_free(&st->chunk_marks);
	bpi_array_free(&st->chunk_moved);
	bpi_array_free(&st->walk_order);
	bpi_radix_sort_free(&st->radix);
	bpi_statics_drop_pairs(st);
	*st = (bpi_statics){0};
}
