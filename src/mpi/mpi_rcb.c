// SPDX-License-Identifier: MIT
// Recursive coordinate bisection over every rank's entity centres, balanced by count: each
// level splits every group of ranks at once, on the longest spread of its centres, at the
// centre whose rank in sorted order gives each side its share of entities. The split value
// is found by a distributed radix select on order-preserving keys (4 passes of 256-bin
// histograms, one MPI_Allreduce each), so no rank ever holds another rank's centres.
#include "mpi/mpi_internal.h"

#include <math.h>
#include <string.h>

/// Order-preserving uint32 key of a float (docs/design.md "Parallel pattern") and back.
static uint32_t float_key(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u ^ ((uint32_t)((int32_t)u >> 31) | 0x80000000u);
}

static float key_float(uint32_t key)
{
	uint32_t u = (key & 0x80000000u) ? key ^ 0x80000000u : ~key;
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

int bpi_mpi_rcb_route(const bp_mpi *mpi, const bpi_mpi_record *r)
{
	const bpi_mpi_node *node = &mpi->nodes[0];
	while (node->rank_count > 1)
		node = &mpi->nodes[bpi_mpi_centre(mpi, r, node->axis) < node->cut ? node->left : node->right];
	return node->rank_first;
}

/// Per level: the groups still to split, and for each entity the group it is in.
typedef struct rcb_level {
	int *active;        ///< node indices being split at this level
	int active_count;
	int *slot_of_node;  ///< node -> position in active, or -1
} rcb_level;

/// Domain box of each node while the tree grows (lo/hi per axis), to give leaves their domains.
typedef struct rcb_box {
	float lo[3], hi[3];
} rcb_box;

/// Splitting value of a group with no entities: anything inside its box keeps the domains valid.
static float empty_cut(const rcb_box *box, int axis)
{
	float lo = box->lo[axis], hi = box->hi[axis];
	if (isfinite(lo) && isfinite(hi))
		return lo + (hi - lo) * 0.5f;
	if (isfinite(lo))
		return lo;
	if (isfinite(hi))
		return hi;
	return 0.0f;
}

/// Finds, for every active group at once, the key of the entity at position target[slot]
/// (0-based) in the group's sorted order along axis[slot]. Collective.
static bp_status radix_select(bp_mpi *mpi, const bpi_mpi_record *records, size_t count, const int *node_of,
	const rcb_level *level, const int *axis, uint64_t *target, uint32_t *key_out, uint64_t *hist, uint64_t *sum)
{
	int a = level->active_count;
	for (int s = 0; s < a; ++s)
		key_out[s] = 0;
	for (int pass = 3; pass >= 0; --pass) {
		memset(hist, 0, (size_t)a * 256 * sizeof *hist);
		uint32_t high_mask = pass == 3 ? 0u : ~0u << (8 * (pass + 1));
		for (size_t i = 0; i < count; ++i) {
			int slot = level->slot_of_node[node_of[i]];
			if (slot < 0)
				continue;
			uint32_t key = float_key(bpi_mpi_centre(mpi, &records[i], axis[slot]));
			if ((key & high_mask) != (key_out[slot] & high_mask))
				continue;
			hist[(size_t)slot * 256 + ((key >> (8 * pass)) & 0xffu)]++;
		}
		MPI_Allreduce(hist, sum, a * 256, MPI_UINT64_T, MPI_SUM, mpi->comm);
		for (int s = 0; s < a; ++s) {
			const uint64_t *h = &sum[(size_t)s * 256];
			uint32_t bin = 0;
			while (bin < 255 && target[s] >= h[bin])
				target[s] -= h[bin++];
			key_out[s] |= bin << (8 * pass);
		}
	}
	return BP_OK;
}

/// Scratch of one build, all sized by the rank count or the entity count.
typedef struct rcb_scratch {
	int *node_of, *active, *slot_of_node, *axis;
	rcb_box *boxes;
	uint64_t *target, *hist, *sum;
	float *extent, *extent_all;
	uint32_t *keys;
} rcb_scratch;

static bool scratch_alloc(rcb_scratch *s, size_t count, int ranks)
{
	size_t nodes = (size_t)(2 * ranks);
	s->node_of = bpi_alloc((count ? count : 1) * sizeof(int));
	s->active = bpi_alloc(nodes * sizeof(int));
	s->slot_of_node = bpi_alloc(nodes * sizeof(int));
	s->axis = bpi_alloc(nodes * sizeof(int));
	s->boxes = bpi_alloc(nodes * sizeof(rcb_box));
	s->target = bpi_alloc(nodes * 2 * sizeof(uint64_t));
	s->hist = bpi_alloc(nodes * 256 * sizeof(uint64_t));
	s->sum = bpi_alloc(nodes * 256 * sizeof(uint64_t));
	s->extent = bpi_alloc(nodes * 6 * sizeof(float));
	s->extent_all = bpi_alloc(nodes * 6 * sizeof(float));
	s->keys = bpi_alloc(nodes * sizeof(uint32_t));
	return s->node_of && s->active && s->slot_of_node && s->axis && s->boxes && s->target && s->hist && s->sum &&
		s->extent && s->extent_all && s->keys;
}

static void scratch_free(rcb_scratch *s, size_t count, int ranks)
{
	size_t nodes = (size_t)(2 * ranks);
	bpi_free(s->node_of, (count ? count : 1) * sizeof(int));
	bpi_free(s->active, nodes * sizeof(int));
	bpi_free(s->slot_of_node, nodes * sizeof(int));
	bpi_free(s->axis, nodes * sizeof(int));
	bpi_free(s->boxes, nodes * sizeof(rcb_box));
	bpi_free(s->target, nodes * 2 * sizeof(uint64_t));
	bpi_free(s->hist, nodes * 256 * sizeof(uint64_t));
	bpi_free(s->sum, nodes * 256 * sizeof(uint64_t));
	bpi_free(s->extent, nodes * 6 * sizeof(float));
	bpi_free(s->extent_all, nodes * 6 * sizeof(float));
	bpi_free(s->keys, nodes * sizeof(uint32_t));
}

/// Picks each active group's axis: the longest spread of its centres (min and -max reduced
/// together in one MPI_MIN). Also counts each group's entities (into s->target).
static void choose_axes(bp_mpi *mpi, const bpi_mpi_record *records, size_t count, const rcb_level *level,
	rcb_scratch *s)
{
	int dims = mpi->world_def.dims, a = level->active_count;
	for (int k = 0; k < a * 6; ++k)
		s->extent[k] = INFINITY;
	memset(s->target, 0, (size_t)a * sizeof(uint64_t));
	for (size_t i = 0; i < count; ++i) {
		int slot = level->slot_of_node[s->node_of[i]];
		if (slot < 0)
			continue;
		s->target[slot]++;
		for (int axis = 0; axis < dims; ++axis) {
			float c = bpi_mpi_centre(mpi, &records[i], axis);
			s->extent[slot * 6 + axis] = BP_MIN(s->extent[slot * 6 + axis], c);
			s->extent[slot * 6 + 3 + axis] = BP_MIN(s->extent[slot * 6 + 3 + axis], -c);
		}
	}
	MPI_Allreduce(s->extent, s->extent_all, a * 6, MPI_FLOAT, MPI_MIN, mpi->comm);
	MPI_Allreduce(MPI_IN_PLACE, s->target, a, MPI_UINT64_T, MPI_SUM, mpi->comm);
	for (int slot = 0; slot < a; ++slot) {
		int best = 0;
		float best_spread = -1.0f;
		for (int axis = 0; axis < dims; ++axis) {
			float spread = -s->extent_all[slot * 6 + 3 + axis] - s->extent_all[slot * 6 + axis];
			if (spread > best_spread) { // an empty group has -inf spread everywhere: axis 0
				best_spread = spread;
				best = axis;
			}
		}
		s->axis[slot] = best;
	}
}

bp_status bpi_mpi_rcb_build(bp_mpi *mpi, const bpi_mpi_record *records, size_t count)
{
	rcb_scratch s = {0};
	bp_status status = scratch_alloc(&s, count, mpi->size)
		? BP_OK
		: bpi_mpi_fail(mpi, BP_ERR_OUT_OF_MEMORY, "no memory to bisect %zu entities", count);
	status = bpi_mpi_agree(mpi, status);
	if (status != BP_OK) {
		scratch_free(&s, count, mpi->size);
		return status;
	}
	int dims = mpi->world_def.dims;
	rcb_box root;
	for (int axis = 0; axis < 3; ++axis) {
		root.lo[axis] = mpi->world_def.periodic ? 0.0f : -INFINITY;
		root.hi[axis] = mpi->world_def.periodic ? mpi->world_def.period[axis] : INFINITY;
	}
	mpi->nodes[0] = (bpi_mpi_node){.rank_first = 0, .rank_count = mpi->size};
	s.boxes[0] = root;
	mpi->node_count = 1;
	for (size_t i = 0; i < count; ++i)
		s.node_of[i] = 0;

	rcb_level level = {.active = s.active, .slot_of_node = s.slot_of_node};
	for (;;) {
		// Every rank grows the same tree, so the active list is the same everywhere.
		level.active_count = 0;
		for (int n = 0; n < mpi->node_count; ++n) {
			bool split = mpi->nodes[n].rank_count > 1 && mpi->nodes[n].left == 0;
			level.slot_of_node[n] = split ? level.active_count : -1;
			if (split)
				level.active[level.active_count++] = n;
		}
		if (!level.active_count)
			break;
		choose_axes(mpi, records, count, &level, &s);
		for (int slot = 0; slot < level.active_count; ++slot) {
			const bpi_mpi_node *node = &mpi->nodes[level.active[slot]];
			uint64_t total = s.target[slot];
			int left_ranks = node->rank_count / 2;
			s.target[level.active_count + slot] = total; // kept to tell empty groups apart
			s.target[slot] = total * (uint64_t)left_ranks / (uint64_t)node->rank_count;
		}
		radix_select(mpi, records, count, s.node_of, &level, s.axis, s.target, s.keys, s.hist, s.sum);
		for (int slot = 0; slot < level.active_count; ++slot) {
			int n = level.active[slot], axis = s.axis[slot];
			bpi_mpi_node *node = &mpi->nodes[n];
			const rcb_box *box = &s.boxes[n];
			float cut = s.target[level.active_count + slot] ? key_float(s.keys[slot]) : empty_cut(box, axis);
			int left_ranks = node->rank_count / 2;
			int left = mpi->node_count++, right = mpi->node_count++;
			node->axis = axis;
			node->cut = cut;
			node->left = left;
			node->right = right;
			mpi->nodes[left] = (bpi_mpi_node){.rank_first = node->rank_first, .rank_count = left_ranks};
			mpi->nodes[right] = (bpi_mpi_node){
				.rank_first = node->rank_first + left_ranks, .rank_count = node->rank_count - left_ranks};
			s.boxes[left] = *box;
			s.boxes[left].hi[axis] = cut;
			s.boxes[right] = *box;
			s.boxes[right].lo[axis] = cut;
		}
		for (size_t i = 0; i < count; ++i) {
			const bpi_mpi_node *node = &mpi->nodes[s.node_of[i]];
			if (level.slot_of_node[s.node_of[i]] >= 0)
				s.node_of[i] = bpi_mpi_centre(mpi, &records[i], node->axis) < node->cut ? node->left : node->right;
		}
	}
	for (int n = 0; n < mpi->node_count; ++n) {
		if (mpi->nodes[n].rank_count != 1)
			continue;
		int r = mpi->nodes[n].rank_first;
		for (int axis = 0; axis < 3; ++axis) {
			mpi->domain_lo[r * 3 + axis] = axis < dims ? s.boxes[n].lo[axis] : -INFINITY;
			mpi->domain_hi[r * 3 + axis] = axis < dims ? s.boxes[n].hi[axis] : INFINITY;
		}
	}
	mpi->have_tree = true;
	scratch_free(&s, count, mpi->size);
	return BP_OK;
}
