// SPDX-License-Identifier: MIT
// quadtree: a quadtree (2D) or octree (3D) kept across steps. Leaves split
// past a capacity and merge below half of it; each step re-inserts only the entities that moved.
//
// Identity across steps is the dense index: the index keeps last step's bounds, and an entity
// whose bounds differ (or that is new, or gone) is removed and re-inserted; the others stay put.
// An entity lives at the lowest node that wholly contains it: at an internal node with split
// point c it goes to the low child on an axis when max < c, the high child when min >= c, and
// stays at the node when it straddles c on any axis. Leaves hold whatever reaches them.
//
// Why each pair is found exactly once: two entities in sibling subtrees of a node were sent
// to different sides of its split on some axis, so there one has max < c <= min of the other
// and they cannot overlap. Any overlapping pair (a, b) therefore sits on one root path: either
// both at one node, or one at a strict ancestor of the other's node. Each entity tests the
// entities after it in its own node's run (the node's list sorted by min on one axis) and the
// entities in its node's descendants, never its ancestors, so the pair is tested once: by the
// shallower holder (or, at one node, by the earlier of the two in the run). This holds
// whatever the root box: an entity outside it is still classified by the same comparisons,
// so the root only affects speed.
//
// Output order: entities in depth-first node order (each node's sorted run, then its children
// 0..K-1), each entity's pairs in that same traversal order. It is the same for every thread
// count, but depends on the tree's history (which node lists hold which entity in which slot):
// the same sequence of steps gives the same order; a fresh world over the same boxes may not.
//
// The incremental update re-inserts only the entities that moved, so its build stage costs
// less than a rebuild's; the find dominates the step: see QT_CAPACITY and qt_copy_range
// (perf/README.md, "Quadtree").
#include "algorithms/quadtree.h"
#include "parallel/parallel.h"
#include "parallel/sort.h"

#include <stdlib.h>
#include <string.h>

/// Entities a leaf holds before it splits; a subtree below half of this merges back.
/// Leaves are swept sorted, so large ones cost little; fewer levels keep fewer straddlers
/// (perf/README.md, "Quadtree").
#define QT_CAPACITY 32
/// Deepest level: n identical or zero-size boxes cannot split forever. 24 halvings separate
/// unit boxes in a scene 1.6e7 wide; deeper than that the leaf just holds more.
#define QT_MAX_DEPTH 24
#define QT_NONE UINT32_MAX
/// Entities per find chunk (a chunk's cost varies with depth; small chunks balance threads).
#define QT_FIND_GRAIN 256
#define QT_SCAN_GRAIN 8192
/// Nodes per chunk of the flattening copy.
#define QT_COPY_GRAIN 512
/// Traversal stack: at most K children pushed per level below the entity's node.
#define QT_STACK (8 * (QT_MAX_DEPTH + 2))

/// One tree node: 96 bytes. Children are K = 2^dims consecutive nodes (a block) in the pool.
typedef struct qt_node {
	double center[3];     ///< split point; children lie at center +- half / 2
	double half[3];       ///< half the node's edge per axis
	uint32_t *items;      ///< dense indices of the entities held here (kept when freed, for reuse)
	uint32_t count;       ///< entities held at this node
	uint32_t capacity;    ///< of items
	uint32_t first_child; ///< node index of child 0, QT_NONE for a leaf
	uint32_t parent;      ///< QT_NONE for the root
	uint32_t total;       ///< entities in this node's subtree, this node's own included
	uint32_t depth;
	uint32_t flat_begin;  ///< position of items[0] in this step's flattened order
	uint32_t axis;        ///< this step's sweep axis: the run at flat_begin is sorted by min on it
	/// This step's largest extent on `axis` among the run, rounded up: a run entity with
	/// min + reach < x has max < x (see qt_copy_range).
	double reach;
} qt_node;
_Static_assert(sizeof(qt_node) == 96, "qt_node is 96 bytes");

/// What one scan chunk found: the bounds of its entities and whether any left the root.
typedef struct qt_scan {
	float lo[3], hi[3];
	bool outside;
	uint32_t changed;
} qt_scan;

typedef struct quadtree_index {
	bpi_index base; // first member: converts to and from bpi_index *
	bool valid;     ///< the tree matches `last`; false after a failed update (next step rebuilds)
	int dims;
	uint32_t count; ///< entities in the tree
	double root_lo[3], root_hi[3];

	// Per dense index, kept across steps.
	BPI_ARRAY(float) last[6]; ///< last step's bounds: min x y z, max x y z
	BPI_ARRAY(uint32_t) node_of, slot_of;

	// Node pool: blocks of K nodes; block 0 holds the root (node 0) and is never freed.
	BPI_ARRAY(qt_node) nodes;
	uint32_t blocks_used;
	BPI_ARRAY(uint32_t) free_blocks; ///< room for every block of the pool, so a push never fails
	uint32_t free_count;

	// Scratch, rebuilt every step.
	BPI_ARRAY(uint8_t) changed;
	BPI_ARRAY(qt_scan) scans;
	BPI_ARRAY(uint32_t) dfs; ///< nodes in depth-first order
	uint32_t dfs_count;
	// The flat arrays: one entry per entity, in depth-first node order.
	BPI_ARRAY(uint32_t) flat_ent, flat_node;
	BPI_ARRAY(float) flat[6];
	BPI_ARRAY(uint64_t) keys; ///< sort keys, one per flat position (each node sorts its own run)

	uint32_t reinserted; ///< entities (re-)inserted by the last update, for tests and tuning
} quadtree_index;

static uint32_t qt_children(int dims)
{
	return 1u << dims;
}

// ---- node pool ----

static void qt_node_init(qt_node *node, const double center[3], const double half[3], uint32_t depth,
	uint32_t parent)
{
	for (int axis = 0; axis < 3; ++axis) {
		node->center[axis] = center[axis];
		node->half[axis] = half[axis];
	}
	node->count = 0;
	node->first_child = QT_NONE;
	node->parent = parent;
	node->total = 0;
	node->depth = depth;
}

static bool qt_grow_pool(quadtree_index *t)
{
	uint32_t k = qt_children(t->dims);
	size_t old = t->nodes.capacity, grown = old ? old * 2 : (size_t)k * 64;
	if (grown / k > UINT32_MAX / 2)
		return false;
	// The free-block stack first: if the nodes then fail, it only has more room.
	if (!bpi_array_grow(&t->free_blocks, t->free_count, grown / k) || !bpi_array_grow(&t->nodes, old, grown))
		return false;
	memset(t->nodes.data + old, 0, (t->nodes.capacity - old) * sizeof *t->nodes.data);
	return true;
}

static void qt_free_pool(quadtree_index *t)
{
	for (size_t i = 0; i < t->nodes.capacity; ++i)
		if (t->nodes.data[i].items)
			bpi_free(t->nodes.data[i].items, t->nodes.data[i].capacity * sizeof(uint32_t));
	bpi_array_free(&t->nodes);
	bpi_array_free(&t->free_blocks);
	t->blocks_used = 0;
	t->free_count = 0;
}

/// A block of K nodes for a node's children, or QT_NONE when memory runs out.
static uint32_t qt_alloc_block(quadtree_index *t)
{
	uint32_t k = qt_children(t->dims);
	if (t->free_count)
		return t->free_blocks.data[--t->free_count] * k;
	if ((size_t)(t->blocks_used + 1) * k > t->nodes.capacity && !qt_grow_pool(t))
		return QT_NONE;
	return t->blocks_used++ * k;
}

/// Grows a node's list to hold `capacity` entities, keeping its contents.
static bool qt_reserve_items(qt_node *node, uint32_t capacity)
{
	uint32_t *items = bpi_alloc(capacity * sizeof *items);
	if (!items)
		return false;
	if (node->items) {
		memcpy(items, node->items, node->count * sizeof *items);
		bpi_free(node->items, node->capacity * sizeof *items);
	}
	node->items = items;
	node->capacity = capacity;
	return true;
}

static bool qt_append(quadtree_index *t, uint32_t n, uint32_t entity)
{
	qt_node *node = &t->nodes.data[n];
	if (node->count == node->capacity && !qt_reserve_items(node, node->capacity ? node->capacity * 2 : 4))
		return false;
	t->node_of.data[entity] = n;
	t->slot_of.data[entity] = node->count;
	node->items[node->count++] = entity;
	return true;
}

// ---- tree updates (serial) ----

/// The child of `node` that wholly contains the entity, or -1 when it straddles a split.
static int qt_classify(const qt_node *node, const bpi_scene *s, uint32_t entity)
{
	int child = 0;
	for (int axis = 0; axis < s->dims; ++axis) {
		double c = node->center[axis];
		if ((double)s->max[axis][entity] < c)
			continue;
		if ((double)s->min[axis][entity] >= c)
			child |= 1 << axis;
		else
			return -1;
	}
	return child;
}

static bool qt_split(quadtree_index *t, const bpi_scene *s, uint32_t n)
{
	uint32_t first = qt_alloc_block(t); // may move the pool: index, never keep pointers across
	if (first == QT_NONE)
		return false;
	uint32_t k = qt_children(t->dims);
	qt_node *node = &t->nodes.data[n];
	for (uint32_t c = 0; c < k; ++c) {
		double center[3] = {0, 0, 0}, half[3] = {0, 0, 0};
		for (int axis = 0; axis < t->dims; ++axis) {
			half[axis] = node->half[axis] * 0.5;
			center[axis] = node->center[axis] + ((c >> axis) & 1 ? half[axis] : -half[axis]);
		}
		qt_node_init(&t->nodes.data[first + c], center, half, node->depth + 1, n);
	}
	node->first_child = first;
	uint32_t keep = 0;
	for (uint32_t i = 0; i < node->count; ++i) {
		uint32_t e = node->items[i];
		int c = qt_classify(node, s, e);
		if (c < 0) {
			node->items[keep] = e;
			t->slot_of.data[e] = keep++;
			continue;
		}
		if (!qt_append(t, first + (uint32_t)c, e))
			return false;
		t->nodes.data[first + (uint32_t)c].total++;
	}
	node->count = keep;
	for (uint32_t c = 0; c < k; ++c) {
		const qt_node *child = &t->nodes.data[first + c];
		if (child->count > QT_CAPACITY && child->depth < QT_MAX_DEPTH && !qt_split(t, s, first + c))
			return false;
	}
	return true;
}

static bool qt_insert(quadtree_index *t, const bpi_scene *s, uint32_t entity)
{
	uint32_t n = 0;
	for (;;) {
		qt_node *node = &t->nodes.data[n];
		node->total++;
		int c = node->first_child == QT_NONE ? -1 : qt_classify(node, s, entity);
		if (c >= 0) {
			n = node->first_child + (uint32_t)c;
			continue;
		}
		if (!qt_append(t, n, entity))
			return false;
		node = &t->nodes.data[n];
		if (node->first_child == QT_NONE && node->count > QT_CAPACITY && node->depth < QT_MAX_DEPTH)
			return qt_split(t, s, n);
		return true;
	}
}

static void qt_remove(quadtree_index *t, uint32_t entity)
{
	uint32_t n = t->node_of.data[entity];
	qt_node *node = &t->nodes.data[n];
	uint32_t slot = t->slot_of.data[entity], moved = node->items[--node->count];
	node->items[slot] = moved;
	t->slot_of.data[moved] = slot;
	for (; n != QT_NONE; n = t->nodes.data[n].parent)
		t->nodes.data[n].total--;
}

/// Pulls every entity of n's subtree into n and frees the descendants.
static bool qt_collapse(quadtree_index *t, uint32_t n)
{
	uint32_t k = qt_children(t->dims);
	qt_node *node = &t->nodes.data[n];
	if (node->capacity < node->total && !qt_reserve_items(node, node->total))
		return false;
	uint32_t stack[QT_STACK], top = 0;
	stack[top++] = node->first_child;
	while (top) {
		uint32_t first = stack[--top];
		t->free_blocks.data[t->free_count++] = first / k;
		for (uint32_t c = 0; c < k; ++c) {
			const qt_node *child = &t->nodes.data[first + c];
			for (uint32_t i = 0; i < child->count; ++i) {
				uint32_t e = child->items[i];
				t->node_of.data[e] = n;
				t->slot_of.data[e] = node->count;
				node->items[node->count++] = e;
			}
			if (child->first_child != QT_NONE)
				stack[top++] = child->first_child;
		}
	}
	BP_ASSERT(node->count == node->total);
	node->first_child = QT_NONE;
	return true;
}

/// Merges, top down, every subtree that holds fewer than QT_CAPACITY / 2 entities.
static bool qt_merge(quadtree_index *t, uint32_t n)
{
	const qt_node *node = &t->nodes.data[n];
	if (node->first_child == QT_NONE)
		return true;
	if (node->total < QT_CAPACITY / 2)
		return qt_collapse(t, n);
	uint32_t first = node->first_child, k = qt_children(t->dims);
	for (uint32_t c = 0; c < k; ++c)
		if (!qt_merge(t, first + c))
			return false;
	return true;
}

static bool qt_rebuild(quadtree_index *t, const bpi_scene *s, const float lo[3], const float hi[3])
{
	uint32_t k = qt_children(t->dims);
	if (t->nodes.capacity < k && !qt_grow_pool(t))
		return false;
	t->blocks_used = 1;
	t->free_count = 0;
	// The scene box in double (exact for any float span, +-FLT_MAX included), padded by an
	// eighth of the largest span so that moderate motion stays inside and needs no rebuild.
	double span = 0, center[3] = {0, 0, 0}, half[3] = {0, 0, 0};
	for (int axis = 0; axis < t->dims; ++axis)
		span = BP_MAX(span, (double)hi[axis] - lo[axis]);
	double pad = span > 0 ? span * 0.125 : 1.0;
	for (int axis = 0; axis < t->dims; ++axis) {
		center[axis] = (double)lo[axis] * 0.5 + (double)hi[axis] * 0.5;
		half[axis] = ((double)hi[axis] - lo[axis]) * 0.5 + pad;
		t->root_lo[axis] = center[axis] - half[axis];
		t->root_hi[axis] = center[axis] + half[axis];
	}
	qt_node_init(&t->nodes.data[0], center, half, 0, QT_NONE);
	for (uint32_t i = 0; i < s->count; ++i)
		if (!qt_insert(t, s, i))
			return false;
	t->reinserted = s->count;
	return true;
}

// ---- per-entity arrays and the change scan ----

/// Room for `count` entities in the per-entity arrays, keeping the t->count in the tree. Each
/// array keeps its entries and its own capacity, so a failure part-way leaves the tree and
/// `last` as they were: the arrays grown before it just have more room.
static bool qt_reserve_entities(quadtree_index *t, uint32_t count)
{
	bool ok = bpi_array_grow(&t->node_of, t->count, count) && bpi_array_grow(&t->slot_of, t->count, count);
	for (int i = 0; i < 6; ++i)
		ok = ok && bpi_array_grow(&t->last[i], t->count, count);
	return ok;
}

typedef struct qt_scan_job {
	quadtree_index *t;
	const bpi_scene *s;
	uint32_t old_count; ///< entities below this were in the tree: compare with `last`
	bool check_root;
} qt_scan_job;

// Marks entities whose bounds changed since the last step, copies the new bounds into
// `last`, and collects the chunk's bounds (for a rebuild) and whether any left the root.
static void qt_scan_range(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const qt_scan_job *job = ctx;
	quadtree_index *t = job->t;
	const bpi_scene *s = job->s;
	qt_scan r = {.lo = {0, 0, 0}, .hi = {0, 0, 0}};
	for (int axis = 0; axis < s->dims; ++axis) {
		r.lo[axis] = s->min[axis][begin];
		r.hi[axis] = s->max[axis][begin];
	}
	for (uint32_t i = begin; i < end; ++i) {
		bool changed = i >= job->old_count;
		for (int axis = 0; axis < s->dims; ++axis) {
			float lo = s->min[axis][i], hi = s->max[axis][i];
			changed |= lo != t->last[axis].data[i] || hi != t->last[3 + axis].data[i];
			t->last[axis].data[i] = lo;
			t->last[3 + axis].data[i] = hi;
			r.lo[axis] = BP_MIN(r.lo[axis], lo);
			r.hi[axis] = BP_MAX(r.hi[axis], hi);
			if (job->check_root)
				r.outside |= (double)lo < t->root_lo[axis] || (double)hi > t->root_hi[axis];
		}
		t->changed.data[i] = changed;
		r.changed += changed;
	}
	t->scans.data[chunk] = r;
}

/// Brings the tree to the scene: incremental when the old tree still fits, else a rebuild.
static bool qt_update(quadtree_index *t, const bpi_scene *s)
{
	if (!bpi_scene_coherent(s))
		t->valid = false; // a benchmark timing the rebuild
	uint32_t old_count = t->valid && t->dims == s->dims ? t->count : 0;
	qt_scan_job job = {t, s, old_count, t->valid && t->dims == s->dims};
	bpi_parallel_for(s->count, QT_SCAN_GRAIN, s->threads, qt_scan_range, &job);
	float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
	bool outside = false;
	uint64_t changed = 0;
	uint32_t chunks = bpi_chunk_count(s->count, QT_SCAN_GRAIN);
	for (uint32_t c = 0; c < chunks; ++c) {
		const qt_scan *r = &t->scans.data[c];
		for (int axis = 0; axis < s->dims; ++axis) {
			lo[axis] = c ? BP_MIN(lo[axis], r->lo[axis]) : r->lo[axis];
			hi[axis] = c ? BP_MAX(hi[axis], r->hi[axis]) : r->hi[axis];
		}
		outside |= r->outside;
		changed += r->changed;
	}
	bool was_valid = t->valid && t->dims == s->dims;
	if (t->dims != s->dims)
		qt_free_pool(t); // blocks are 2^dims nodes: a new dims needs a new pool
	t->valid = false; // until the update below completes
	t->dims = s->dims;
	// When most entities moved, a fresh tree fitted to the new bounds costs about the same as
	// moving them one by one, and it tightens a root that the scene has shrunk away from.
	if (!was_valid || outside || changed * 2 > s->count) {
		if (!qt_rebuild(t, s, lo, hi))
			return false;
	} else {
		bool removed = false;
		for (uint32_t i = s->count; i < old_count; ++i, removed = true)
			qt_remove(t, i);
		uint32_t kept = BP_MIN(old_count, s->count), inserted = 0;
		for (uint32_t i = 0; i < kept; ++i) {
			if (t->changed.data[i]) {
				qt_remove(t, i);
				removed = true;
			}
		}
		for (uint32_t i = 0; i < s->count; ++i) {
			if (t->changed.data[i]) {
				if (!qt_insert(t, s, i))
					return false;
				++inserted;
			}
		}
		if (removed && !qt_merge(t, 0))
			return false;
		t->reinserted = inserted;
	}
	t->count = s->count;
	t->valid = true;
	return true;
}

// ---- flattening: entities copied into depth-first order, so each node's list is a run ----

/// Lays out the nodes with entities in depth-first order (own list, then children 0..K-1),
/// setting flat_begin. Empty subtrees are skipped here and by the find.
static void qt_order(quadtree_index *t)
{
	uint32_t k = qt_children(t->dims), stack[QT_STACK], top = 0, pos = 0;
	t->dfs_count = 0;
	if (t->nodes.data[0].total)
		stack[top++] = 0;
	while (top) {
		uint32_t n = stack[--top];
		qt_node *node = &t->nodes.data[n];
		t->dfs.data[t->dfs_count++] = n;
		node->flat_begin = pos;
		pos += node->count;
		if (node->first_child == QT_NONE)
			continue;
		for (uint32_t c = k; c-- > 0;)
			if (t->nodes.data[node->first_child + c].total)
				stack[top++] = node->first_child + c;
	}
	BP_ASSERT(pos == t->count);
}

typedef struct qt_find_job {
	const quadtree_index *t;
	const bpi_scene *s;
	bpi_pair_chunks *chunks;
} qt_find_job;

/// Ascending keys, for qsort.
static int qt_compare_keys(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/// Sorts a run of keys (unique: the slot is in the low bits, so any sort gives one order).
static void qt_sort_keys(uint64_t *keys, uint32_t count)
{
	if (count > 32)
		qsort(keys, count, sizeof *keys, qt_compare_keys);
	else
		bpi_insertion_sort_items(keys, count, UINT64_MAX);
}

// Copies each node's entities into its run of the flat arrays, sorted by min on the node's
// sweep axis: the axis that the fewest of them straddle. Entities straddling the axis all
// contain its split point, so a sweep cannot separate them; the others spread out along it.
// Sorted runs, each descendant run started at the first entity whose min + reach reaches the
// tester (qt_first_reaching), make a fraction of the tests of all-pairs within each node's
// list (perf/README.md, "Quadtree").
static void qt_copy_range(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const qt_find_job *job = ctx;
	const quadtree_index *t = job->t;
	const bpi_scene *s = job->s;
	for (uint32_t d = begin; d < end; ++d) {
		uint32_t n = t->dfs.data[d];
		qt_node *node = &t->nodes.data[n];
		uint32_t straddle[3] = {0, 0, 0}, axis = 0;
		for (uint32_t i = 0; i < node->count; ++i) {
			uint32_t e = node->items[i];
			for (int a = 0; a < s->dims; ++a)
				straddle[a] += (double)s->min[a][e] < node->center[a] && (double)s->max[a][e] >= node->center[a];
		}
		for (int a = 1; a < s->dims; ++a)
			if (straddle[a] < straddle[axis])
				axis = (uint32_t)a;
		node->axis = axis;
		uint64_t *keys = t->keys.data + node->flat_begin;
		for (uint32_t i = 0; i < node->count; ++i)
			keys[i] = (uint64_t)bpi_radix_float_key(s->min[axis][node->items[i]]) << 32 | i;
		qt_sort_keys(keys, node->count);
		// max - min of two floats in double is exact unless their exponents differ by more
		// than 29, and then off by under 2^-53 relative; 2^-40 more covers it, and rounding
		// is monotonic, so fl(min + reach) >= max for every entity of the run.
		double reach = 0;
		for (uint32_t i = 0; i < node->count; ++i) {
			uint32_t e = node->items[i];
			reach = BP_MAX(reach, (double)s->max[axis][e] - (double)s->min[axis][e]);
		}
		node->reach = reach + reach * 0x1p-40;
		for (uint32_t i = 0; i < node->count; ++i) {
			uint32_t e = node->items[(uint32_t)keys[i]], p = node->flat_begin + i;
			t->flat_ent.data[p] = e;
			t->flat_node.data[p] = n;
			for (int a = 0; a < s->dims; ++a) {
				t->flat[a].data[p] = s->min[a][e];
				t->flat[3 + a].data[p] = s->max[a][e];
			}
		}
	}
}

/// Tests flat position p against positions [begin, end) of a run sorted by min on `sweep`,
/// stopping at the first whose min passes p's max there. dims is a constant at each call.
static inline uint64_t qt_test_run(const qt_find_job *job, int dims, uint32_t p, uint32_t begin, uint32_t end,
	uint32_t sweep, bpi_pair_buffer *out)
{
	const quadtree_index *t = job->t;
	const bpi_scene *s = job->s;
	// Locals, not t->flat[...] in the loop: the pushes write memory the compiler cannot
	// prove apart from *t, so it reloaded every pointer per test (perf/README.md, "Quadtree").
	const float *min0 = t->flat[0].data, *min1 = t->flat[1].data, *min2 = t->flat[dims - 1].data;
	const float *max0 = t->flat[3].data, *max1 = t->flat[4].data, *max2 = t->flat[3 + dims - 1].data;
	const float *sorted = t->flat[sweep].data;
	const uint32_t *ent = t->flat_ent.data;
	float lo0 = min0[p], lo1 = min1[p], lo2 = min2[p], hi0 = max0[p], hi1 = max1[p], hi2 = max2[p];
	float stop = t->flat[3 + sweep].data[p];
	uint32_t a = ent[p], q = begin;
	for (; q < end && sorted[q] <= stop; ++q) {
		bool hit = lo0 <= max0[q] && min0[q] <= hi0 && lo1 <= max1[q] && min1[q] <= hi1;
		if (dims == 3)
			hit = hit && lo2 <= max2[q] && min2[q] <= hi2;
		if (!hit)
			continue;
		uint32_t b = ent[q];
		if (s->unfiltered || bpi_scene_accepts(s, a, b))
			bpi_pair_push(out, a, b);
	}
	return q - begin;
}

/// First q in [begin, end) of a run sorted by min whose min + reach >= x: no entity before it
/// reaches x.
static inline uint32_t qt_first_reaching(const float *sorted, uint32_t begin, uint32_t end, double reach, float x)
{
	while (begin < end) {
		uint32_t mid = begin + (end - begin) / 2;
		if ((double)sorted[mid] + reach < (double)x)
			begin = mid + 1;
		else
			end = mid;
	}
	return begin;
}

/// Pushes the children of `node` that can hold an entity overlapping the box: a child on the
/// low side of axis j holds only max < c, so it needs amin < c; the high side needs amax >= c.
static inline uint32_t qt_push_children(const quadtree_index *t, int dims, const qt_node *node,
	const float amin[3], const float amax[3], uint32_t *stack, uint32_t top)
{
	unsigned low = 0, high = 0;
	for (int axis = 0; axis < dims; ++axis) {
		low |= (unsigned)((double)amin[axis] < node->center[axis]) << axis;
		high |= (unsigned)((double)amax[axis] >= node->center[axis]) << axis;
	}
	uint32_t k = 1u << dims, all = k - 1;
	for (uint32_t c = k; c-- > 0;) {
		// c's high axes must be reachable high, its low axes reachable low.
		if ((c & ~high & all) || (~c & ~low & all))
			continue;
		uint32_t child = node->first_child + c;
		if (t->nodes.data[child].total)
			stack[top++] = child;
	}
	return top;
}

static inline void qt_find_dims(const qt_find_job *job, int dims, uint32_t begin, uint32_t end, uint32_t chunk)
{
	const quadtree_index *t = job->t;
	bpi_pair_buffer *out = &job->chunks->buffers[chunk];
	uint64_t tests = 0;
	uint32_t stack[QT_STACK];
	for (uint32_t p = begin; p < end; ++p) {
		const qt_node *home = &t->nodes.data[t->flat_node.data[p]];
		// What follows p in its own list, then its node's descendants (never its ancestors).
		tests += qt_test_run(job, dims, p, p + 1, home->flat_begin + home->count, home->axis, out);
		if (home->first_child == QT_NONE)
			continue;
		float amin[3], amax[3];
		for (int axis = 0; axis < dims; ++axis) {
			amin[axis] = t->flat[axis].data[p];
			amax[axis] = t->flat[3 + axis].data[p];
		}
		uint32_t top = qt_push_children(t, dims, home, amin, amax, stack, 0);
		while (top) {
			const qt_node *node = &t->nodes.data[stack[--top]];
			uint32_t run_end = node->flat_begin + node->count;
			uint32_t run_begin = qt_first_reaching(t->flat[node->axis].data, node->flat_begin, run_end, node->reach,
				t->flat[node->axis].data[p]);
			tests += qt_test_run(job, dims, p, run_begin, run_end, node->axis, out);
			if (node->first_child != QT_NONE)
				top = qt_push_children(t, dims, node, amin, amax, stack, top);
		}
	}
	out->tests = tests;
}

static void qt_find_range(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const qt_find_job *job = ctx;
	if (bpi_pair_buffer_stopped(&job->chunks->buffers[chunk]))
		return; // the step ran out of memory in another chunk
	if (job->s->dims == 2)
		qt_find_dims(job, 2, begin, end, chunk);
	else
		qt_find_dims(job, 3, begin, end, chunk);
}

// ---- the algorithm table ----

uint32_t bpi_quadtree_reinserted(const bpi_index *base)
{
	BP_ASSERT(base->algorithm == &bpi_quadtree_algorithm);
	return ((const quadtree_index *)base)->reinserted;
}

static void qt_release(bpi_index *base)
{
	quadtree_index *t = (quadtree_index *)base;
	qt_free_pool(t);
	for (int i = 0; i < 6; ++i) {
		bpi_array_free(&t->last[i]);
		bpi_array_free(&t->flat[i]);
	}
	bpi_array_free(&t->node_of);
	bpi_array_free(&t->slot_of);
	bpi_array_free(&t->flat_ent);
	bpi_array_free(&t->flat_node);
	bpi_array_free(&t->keys);
	bpi_array_free(&t->changed);
	bpi_array_free(&t->scans);
	bpi_array_free(&t->dfs);
}

/// Room for `count` entities in every flat array (scratch: nothing is kept).
static bool qt_reserve_flat(quadtree_index *t, uint32_t count)
{
	bool ok = bpi_array_reserve(&t->flat_ent, count) && bpi_array_reserve(&t->flat_node, count) &&
		  bpi_array_reserve(&t->keys, count);
	for (int i = 0; i < 6; ++i)
		ok = ok && bpi_array_reserve(&t->flat[i], count);
	return ok;
}

static bp_status qt_build(bpi_index *base, const bpi_scene *s, bpi_build *build)
{
	quadtree_index *t = (quadtree_index *)base;
	// Everything the update needs first, so a failure here leaves the tree as it was.
	if (!qt_reserve_entities(t, s->count) || !bpi_array_reserve(&t->changed, s->count) ||
		!bpi_array_reserve(&t->scans, bpi_chunk_count(s->count, QT_SCAN_GRAIN)) || !qt_reserve_flat(t, s->count))
		return BP_ERR_OUT_OF_MEMORY;
	if (!qt_update(t, s))
		return BP_ERR_OUT_OF_MEMORY; // t->valid is false: the next step rebuilds
	if (!bpi_array_reserve(&t->dfs, t->nodes.capacity))
		return BP_ERR_OUT_OF_MEMORY;
	qt_order(t);
	qt_find_job job = {t, s, &t->base.chunks};
	bpi_parallel_for(t->dfs_count, QT_COPY_GRAIN, s->threads, qt_copy_range, &job);
	// Internal nodes own one child block each; every block adds K - 1 leaves to the root.
	uint64_t internal = t->blocks_used ? t->blocks_used - 1u - t->free_count : 0;
	build->chunks = bpi_chunk_count(s->count, QT_FIND_GRAIN);
	build->cell_count = s->count ? 1 + ((uint64_t)qt_children(s->dims) - 1) * internal : 0;
	return BP_OK;
}

static bp_status qt_find(bpi_index *base, const bpi_scene *s, bpi_build *build)
{
	(void)build;
	quadtree_index *t = (quadtree_index *)base;
	qt_find_job job = {t, s, &t->base.chunks};
	bpi_parallel_for(s->count, QT_FIND_GRAIN, s->threads, qt_find_range, &job);
	return BP_OK;
}

const bpi_algorithm bpi_quadtree_algorithm = {
	.name = "quadtree",
	.index_size = sizeof(quadtree_index),
	.release = qt_release,
	.build = qt_build,
	.find = qt_find,
};
