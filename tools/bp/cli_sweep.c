// SPDX-License-Identifier: MIT
// `bp verify`'s oracle (cli_sweep.h). Space is cut into slabs along one axis and every entity
// is copied into each slab its bounds reach; each slab is sorted by min on a second axis and
// swept. Two entities that overlap both reach the slab of the larger of their two slab-axis
// mins, and the pair is reported there alone, so it comes out exactly once.
#include "cli_sweep.h"

#include <stdlib.h>

/// One entity's copy in one slab, its bounds in double.
typedef struct sweep_item {
	double key; ///< min on the sweep axis, what a slab is sorted by
	double min[3], max[3];
	uint32_t entity;
	uint32_t first_slab; ///< the slab of the entity's min on the slab axis
} sweep_item;

/// The sweep axis, the slab axis and the slabs along it.
typedef struct sweep_layout {
	int sweep_axis, slab_axis;
	uint32_t slabs;
	double origin, width;
} sweep_layout;

typedef struct bound_arrays {
	const float *min[3], *max[3];
} bound_arrays;

static bound_arrays arrays_of(const sweep_entities *e)
{
	const bp_bounds_arrays *b = &e->bounds;
	return (bound_arrays){{b->min_x, b->min_y, b->min_z}, {b->max_x, b->max_y, b->max_z}};
}

typedef struct axis_spread {
	double lo, span;    ///< lowest min, and highest max less lowest min
	double mean_extent; ///< mean of max - min
} axis_spread;

static axis_spread spread_of(const sweep_entities *e, int axis)
{
	const float *min = arrays_of(e).min[axis], *max = arrays_of(e).max[axis];
	double lo = min[0], hi = max[0], extents = 0;
	for (uint32_t i = 0; i < e->count; ++i) {
		lo = min[i] < lo ? min[i] : lo;
		hi = max[i] > hi ? max[i] : hi;
		extents += (double)max[i] - min[i];
	}
	return (axis_spread){lo, hi - lo, extents / e->count};
}

/// True when intervals on axis a overlap less often than on axis b: span / mean extent is larger.
static bool sparser(axis_spread a, axis_spread b)
{
	return a.span * b.mean_extent > b.span * a.mean_extent ||
		(a.span * b.mean_extent == b.span * a.mean_extent && a.span > b.span);
}

/// Monotonic in value, so an interval's slabs run from its min's slab to its max's.
static uint32_t slab_of(const sweep_layout *layout, double value)
{
	double q = (value - layout->origin) / layout->width;
	return q <= 0 ? 0 : q >= layout->slabs - 1 ? layout->slabs - 1 : (uint32_t)q;
}

/// Copies of every entity over the slabs it reaches.
static size_t copies_over(const sweep_layout *layout, const float *min, const float *max, uint32_t count)
{
	size_t copies = 0;
	for (uint32_t i = 0; i < count; ++i)
		copies += (size_t)(slab_of(layout, max[i]) - slab_of(layout, min[i])) + 1;
	return copies;
}

/// Axes from sparsest to densest.
static void sort_axes(const axis_spread *spread, int dims, int *order)
{
	for (int axis = 0; axis < dims; ++axis)
		order[axis] = axis;
	for (int i = 1; i < dims; ++i)
		for (int j = i; j > 0 && sparser(spread[order[j]], spread[order[j - 1]]); --j) {
			int t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
}

/// Sweeps along the sparsest axis, in slabs along the next sparsest about two mean extents
/// wide (at most about sqrt(count) of them); fewer while entities wide enough to reach many
/// slabs would more than quadruple the copies.
static sweep_layout choose_layout(const sweep_entities *e)
{
	axis_spread spread[3];
	int order[3];
	for (int axis = 0; axis < e->dims; ++axis)
		spread[axis] = spread_of(e, axis);
	sort_axes(spread, e->dims, order);
	sweep_layout layout = {.sweep_axis = order[0], .slab_axis = order[1], .slabs = 1, .width = 1};
	axis_spread s = spread[layout.slab_axis];
	layout.origin = s.lo;
	if (!(s.span > 0))
		return layout;
	double wanted = s.mean_extent > 0 ? s.span / (2 * s.mean_extent) : 1e9;
	double most = 1;
	while (most * most < e->count && most < 65536)
		most *= 2;
	layout.slabs = (uint32_t)(wanted < 1 ? 1 : wanted > most ? most : wanted);
	const float *min = arrays_of(e).min[layout.slab_axis], *max = arrays_of(e).max[layout.slab_axis];
	for (;; layout.slabs /= 2) {
		layout.width = s.span / layout.slabs;
		if (layout.slabs == 1 || copies_over(&layout, min, max, e->count) <= 4 * (size_t)e->count)
			return layout;
	}
}

/// Each slab's copies, slab after slab: slab s holds items[start[s] .. start[s + 1]).
typedef struct slabbed {
	sweep_item *items;
	size_t *start;
} slabbed;

static sweep_item item_of(const sweep_entities *e, const sweep_layout *layout, uint32_t i, uint32_t first_slab)
{
	sweep_item it = {.entity = i, .first_slab = first_slab};
	bound_arrays b = arrays_of(e);
	for (int axis = 0; axis < e->dims; ++axis) {
		it.min[axis] = b.min[axis][i];
		it.max[axis] = b.max[axis][i];
	}
	it.key = it.min[layout->sweep_axis];
	return it;
}

/// Places every entity's copies in the slabs it reaches (a counting sort by slab).
static bool fill_slabs(const sweep_entities *e, const sweep_layout *layout, slabbed *out)
{
	const float *lo = arrays_of(e).min[layout->slab_axis], *hi = arrays_of(e).max[layout->slab_axis];
	size_t copies = copies_over(layout, lo, hi, e->count);
	out->items = malloc(copies * sizeof *out->items);
	out->start = calloc((size_t)layout->slabs + 1, sizeof *out->start);
	if (!out->items || !out->start)
		return false;
	for (uint32_t i = 0; i < e->count; ++i)
		for (uint32_t s = slab_of(layout, lo[i]); s <= slab_of(layout, hi[i]); ++s)
			++out->start[s + 1];
	for (uint32_t s = 0; s < layout->slabs; ++s)
		out->start[s + 1] += out->start[s];
	size_t *next = malloc((size_t)layout->slabs * sizeof *next);
	if (!next)
		return false;
	for (uint32_t s = 0; s < layout->slabs; ++s)
		next[s] = out->start[s];
	for (uint32_t i = 0; i < e->count; ++i) {
		uint32_t first = slab_of(layout, lo[i]);
		for (uint32_t s = first; s <= slab_of(layout, hi[i]); ++s)
			out->items[next[s]++] = item_of(e, layout, i, first);
	}
	free(next);
	return true;
}

static int compare_items(const void *x, const void *y)
{
	const sweep_item *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->entity > b->entity) - (a->entity < b->entity);
}

// ---- the pair rules (world.h), read from their text ----

static bool boxes_overlap(const sweep_item *a, const sweep_item *b, int dims)
{
	for (int axis = 0; axis < dims; ++axis)
		if (a->min[axis] > b->max[axis] || b->min[axis] > a->max[axis])
			return false;
	return true;
}

static bool filters_accept(const sweep_entities *e, uint32_t a, uint32_t b)
{
	if (e->kinds && e->kinds[a] == BP_KIND_STATIC && e->kinds[b] == BP_KIND_STATIC)
		return false;
	uint64_t category_a = e->category ? e->category[a] : 1, category_b = e->category ? e->category[b] : 1;
	uint64_t mask_a = e->mask ? e->mask[a] : UINT64_MAX, mask_b = e->mask ? e->mask[b] : UINT64_MAX;
	return (category_a & mask_b) != 0 && (category_b & mask_a) != 0;
}

/// A sphere (bp_shape): centre (min + max) / 2 and radius the least half extent, in double.
static double sphere_radius(const sweep_item *s, int dims)
{
	double r = 0.5 * (s->max[0] - s->min[0]);
	for (int axis = 1; axis < dims; ++axis)
		r = 0.5 * (s->max[axis] - s->min[axis]) < r ? 0.5 * (s->max[axis] - s->min[axis]) : r;
	return r;
}

static double centre(const sweep_item *s, int axis) { return 0.5 * (s->min[axis] + s->max[axis]); }

/// Two spheres: centres within the sum of the radii. A sphere and a box: the box's closest
/// point to the centre within the radius. Squared, as the documented test compares them.
static bool shapes_overlap(const sweep_item *a, bool a_sphere, const sweep_item *b, bool b_sphere, int dims)
{
	if (!a_sphere && !b_sphere)
		return true;
	double d2 = 0;
	if (a_sphere && b_sphere) {
		for (int axis = 0; axis < dims; ++axis)
			d2 += (centre(a, axis) - centre(b, axis)) * (centre(a, axis) - centre(b, axis));
		double reach = sphere_radius(a, dims) + sphere_radius(b, dims);
		return d2 <= reach * reach;
	}
	const sweep_item *sphere = a_sphere ? a : b, *box = a_sphere ? b : a;
	for (int axis = 0; axis < dims; ++axis) {
		double c = centre(sphere, axis);
		double gap = c < box->min[axis] ? box->min[axis] - c : c > box->max[axis] ? c - box->max[axis] : 0;
		d2 += gap * gap;
	}
	double r = sphere_radius(sphere, dims);
	return d2 <= r * r;
}

static bool pair_holds(const sweep_entities *e, const sweep_item *a, const sweep_item *b)
{
	bool a_sphere = e->shapes && e->shapes[a->entity] == BP_SHAPE_SPHERE;
	bool b_sphere = e->shapes && e->shapes[b->entity] == BP_SHAPE_SPHERE;
	return boxes_overlap(a, b, e->dims) && filters_accept(e, a->entity, b->entity) &&
		shapes_overlap(a, a_sphere, b, b_sphere, e->dims);
}

// ---- the sweep ----

static bool push_pair(sweep_pairs *out, uint32_t a, uint32_t b)
{
	if (out->count == out->capacity) {
		size_t capacity = out->capacity ? 2 * out->capacity : 1024;
		bp_pair *grown = realloc(out->data, capacity * sizeof *grown);
		if (!grown)
			return false;
		out->data = grown;
		out->capacity = capacity;
	}
	out->data[out->count++] = a < b ? (bp_pair){a, b} : (bp_pair){b, a};
	return true;
}

/// Sorted by min on the sweep axis, a's partners on that axis are the items after it
/// whose min is at most a's max; a pair is tested only in its home slab.
static bool sweep_slab(const sweep_entities *e, int sweep_axis, uint32_t slab, const sweep_item *items,
	size_t count, sweep_pairs *out)
{
	for (size_t i = 0; i < count; ++i) {
		const sweep_item *a = &items[i];
		for (size_t j = i + 1; j < count && items[j].key <= a->max[sweep_axis]; ++j) {
			const sweep_item *b = &items[j];
			uint32_t home = a->first_slab > b->first_slab ? a->first_slab : b->first_slab;
			if (home == slab && pair_holds(e, a, b) && !push_pair(out, a->entity, b->entity))
				return false;
		}
	}
	return true;
}

static int compare_pairs(const void *x, const void *y)
{
	const bp_pair *a = x, *b = y;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return (a->hi > b->hi) - (a->hi < b->hi);
}

bool sweep_find_pairs(const sweep_entities *e, sweep_pairs *out)
{
	out->count = 0;
	if (e->count < 2)
		return true;
	sweep_layout layout = choose_layout(e);
	slabbed slabs = {0};
	bool ok = fill_slabs(e, &layout, &slabs);
	for (uint32_t s = 0; ok && s < layout.slabs; ++s) {
		size_t begin = slabs.start[s], count = slabs.start[s + 1] - begin;
		qsort(slabs.items + begin, count, sizeof *slabs.items, compare_items);
		ok = sweep_slab(e, layout.sweep_axis, s, slabs.items + begin, count, out);
	}
	free(slabs.items);
	free(slabs.start);
	if (ok && out->count)
		qsort(out->data, out->count, sizeof *out->data, compare_pairs);
	return ok;
}

void sweep_pairs_free(sweep_pairs *pairs)
{
	free(pairs->data);
	*pairs = (sweep_pairs){0};
}
