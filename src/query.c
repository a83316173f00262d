// SPDX-License-Identifier: MIT
// Queries on a published frame: box, point, sphere, ray, k nearest, pair lookups, neighbours,
// pair events. All read-only on the view, so any number of threads may run them at once.
#include <math.h>
#include <string.h>

#include "view.h"

// Box, point, sphere, ray and nearest go through the view's sorted-axis index
// (view_index.h), and are linear scans over the snapshot's SoA arrays otherwise
// (small views) or when the index would visit most of the view anyway. The
// index and the adjacency are the only state a query writes: made once, under
// the view's lock, by the first query that needs them (bpi_view_ensure) when
// the builder did not make them.
//
// Measured on 1M uniform 3D boxes (bp_perf_frames, AABB query returning ~10
// boxes, 2-core machine): see include/broadphase/frame.h for the numbers.

static bool all_finite(const float *v, int dims)
{
	for (int axis = 0; axis < dims; ++axis)
		if (!isfinite(v[axis]))
			return false;
	return true;
}

/// Reports the total and whether the caller's buffer held it all.
static bp_status finish(size_t total, size_t capacity, size_t *out_total)
{
	*out_total = total;
	return total > capacity ? BP_ERR_OUT_OF_RANGE : BP_OK;
}

static bp_status check_buffer(const bp_view *v, const void *out, size_t capacity, const size_t *total)
{
	if (!v || !total || (capacity && !out))
		return BP_ERR_INVALID_ARGUMENT;
	return BP_OK;
}

/// Bounds arrays in some order: the snapshot's (dense order) or the index's
/// (sorted order). z arrays are NULL in 2D.
typedef struct box_arrays {
	const float *min[3];
	const float *max[3];
} box_arrays;

static box_arrays dense_arrays(const bp_view *v)
{
	return (box_arrays){{v->soa.min[0], v->soa.min[1], v->soa.min[2]}, {v->soa.max[0], v->soa.max[1], v->soa.max[2]}};
}

static box_arrays sorted_arrays(const bpi_view_index *ix)
{
	return (box_arrays){{ix->min[0], ix->min[1], ix->min[2]}, {ix->max[0], ix->max[1], ix->max[2]}};
}

#define SCAN_BLOCK 64

/// hit[j] = box base + j overlaps the closed box [lo, hi], j < m. No branch, so
/// the loop vectorises into a byte mask: measured 1.1 ns per entity (100k, 2D
/// and 3D) against 2.4 ns with one branch per entity.
static void box_flags(const box_arrays *b, int dims, uint32_t base, uint32_t m, const float *lo, const float *hi,
	uint8_t *hit)
{
	// In 2D the z test repeats y with y's bounds: always true when y is.
	const int z = dims == 3 ? 2 : 1;
	const float *ax0 = b->min[0] + base, *ax1 = b->max[0] + base, *ay0 = b->min[1] + base, *ay1 = b->max[1] + base;
	const float *az0 = b->min[z] + base, *az1 = b->max[z] + base;
	const float lx = lo[0], hx = hi[0], ly = lo[1], hy = hi[1], lz = lo[z], hz = hi[z];
	for (uint32_t j = 0; j < m; ++j)
		hit[j] = (uint8_t)((ax0[j] <= hx) & (lx <= ax1[j]) & (ay0[j] <= hy) & (ly <= ay1[j]) & (az0[j] <= hz) &
		                   (lz <= az1[j]));
}

/// Distance from c to the interval [lo, hi] along one axis. Branch-free (at
/// most one of the two terms is positive), so the scans vectorise: the sphere
/// scan measured 1.6 ns per entity (100k) against 5-7 ns with nested ternaries.
/// The value is exactly lo - c, c - hi or 0, as with branches.
static inline float axis_gap(float c, float lo, float hi)
{
	float below = lo - c, above = c - hi;
	return (below > 0.0f ? below : 0.0f) + (above > 0.0f ? above : 0.0f);
}

/// hit[j] = box base + j is within sqrt(r2) of c, j < m.
static void sphere_flags(const box_arrays *b, int dims, uint32_t base, uint32_t m, const float *c, float r2,
	uint8_t *hit)
{
	const float *x0 = b->min[0] + base, *x1 = b->max[0] + base, *y0 = b->min[1] + base, *y1 = b->max[1] + base;
	if (dims == 2) {
		for (uint32_t j = 0; j < m; ++j) {
			float gx = axis_gap(c[0], x0[j], x1[j]), gy = axis_gap(c[1], y0[j], y1[j]);
			hit[j] = gx * gx + gy * gy <= r2;
		}
	} else {
		const float *z0 = b->min[2] + base, *z1 = b->max[2] + base;
		for (uint32_t j = 0; j < m; ++j) {
			float gx = axis_gap(c[0], x0[j], x1[j]), gy = axis_gap(c[1], y0[j], y1[j]);
			float gz = axis_gap(c[2], z0[j], z1[j]);
			hit[j] = gx * gx + gy * gy + gz * gz <= r2;
		}
	}
}

/// Squared distance from point p to box j (the same operations, in the same
/// order, as sphere_flags, so every path agrees to the bit).
static inline float box_distance2(const box_arrays *b, int dims, uint32_t j, const float *p)
{
	float gx = axis_gap(p[0], b->min[0][j], b->max[0][j]);
	float gy = axis_gap(p[1], b->min[1][j], b->max[1][j]);
	float d2 = gx * gx + gy * gy;
	if (dims == 3) {
		float gz = axis_gap(p[2], b->min[2][j], b->max[2][j]);
		d2 += gz * gz;
	}
	return d2;
}

// ---- index results: the `capacity` lowest dense indices, ascending -------------

/// Where an indexed box or sphere query puts its hits. The index visits
/// entities in axis order, but the contract is ascending dense indices and, for
/// a short buffer, the lowest ones: out is filled, then kept as a max-heap of
/// the lowest `capacity` indices, and sorted at the end. Sorting costs
/// O(h log h) for h hits, so past `limit` hits the query gives up on the index
/// and scans (already ascending): the index never costs much more than the scan.
typedef struct index_sink {
	uint32_t *out;
	size_t capacity, total, limit;
} index_sink;

static void sift_down_u32(uint32_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && h[l] > h[m])
			m = l;
		if (r < n && h[r] > h[m])
			m = r;
		if (m == i)
			return;
		uint32_t t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void heapify_u32(uint32_t *h, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down_u32(h, n, i);
}

static inline void sink_push(index_sink *s, uint32_t e)
{
	if (s->total < s->capacity) {
		s->out[s->total] = e;
	} else if (s->capacity) {
		if (s->total == s->capacity)
			heapify_u32(s->out, s->capacity);
		if (e < s->out[0]) {
			s->out[0] = e;
			sift_down_u32(s->out, s->capacity, 0);
		}
	}
	s->total++;
}

/// Sorts the first min(capacity, total) results ascending.
static void sink_sort(index_sink *s)
{
	size_t n = BP_MIN(s->total, s->capacity);
	uint32_t *a = s->out;
	if (n <= 32) {
		for (size_t i = 1; i < n; ++i) {
			uint32_t x = a[i];
			size_t j = i;
			for (; j > 0 && a[j - 1] > x; --j)
				a[j] = a[j - 1];
			a[j] = x;
		}
		return;
	}
	if (s->total <= s->capacity)
		heapify_u32(a, n);
	for (size_t m = n; m > 1; --m) {
		uint32_t t = a[0];
		a[0] = a[m - 1];
		a[m - 1] = t;
		sift_down_u32(a, m - 1, 0);
	}
}

/// Pushes order[base + j] for every hit[j] != 0, 8 flags per load (hits are rare).
/// False once the sink passed its limit.
static bool sink_flags(index_sink *s, const uint8_t *hit, uint32_t m, const uint32_t *order)
{
	for (uint32_t j = 0; j < m; j += 8) {
		uint32_t end = BP_MIN(j + 8, m);
		uint64_t word = 0;
		memcpy(&word, hit + j, end - j);
		if (!word)
			continue;
		for (uint32_t k = j; k < end; ++k)
			if (hit[k])
				sink_push(s, order[k]);
	}
	return s->total <= s->limit;
}

/// Appends base + j for every hit[j] != 0 (ascending), checking 8 flags per
/// load since hits are rare; returns the new total.
static size_t emit_hits(const uint8_t *hit, uint32_t m, uint32_t base, uint32_t *out, size_t capacity, size_t total)
{
	for (uint32_t j = 0; j < m; j += 8) {
		uint32_t end = BP_MIN(j + 8, m);
		uint64_t word = 0;
		memcpy(&word, hit + j, end - j);
		if (!word)
			continue;
		for (uint32_t k = j; k < end; ++k) {
			if (hit[k]) {
				if (total < capacity)
					out[total] = base + k;
				total++;
			}
		}
	}
	return total;
}

/// Entries [*begin, *end) of the index that can overlap [lo, hi] along its axis;
/// false when the run is too much of the view for the index to pay (then scan).
/// The cut-off: a run of half the view scans as fast as the whole view in
/// dense order, and its hits still need sorting.
static bool index_run(const bp_view *v, float lo, float hi, uint32_t *begin, uint32_t *end)
{
	const bpi_view_index *ix = &v->index;
	if (!ix->count)
		return false;
	*begin = bpi_view_index_lower(ix, lo);
	*end = bpi_view_index_upper(ix, hi);
	if (*end < *begin)
		*end = *begin;
	return *end - *begin <= ix->count / 2;
}

/// Hits past which sorting them costs about a quarter of a full scan (heap
/// sort ~30 ns per hit at h ~ n / 256, scan ~1 ns per entity).
static size_t sink_limit(const bp_view *v) { return BP_MAX((size_t)v->count / 256, (size_t)256); }

enum query_shape { SHAPE_BOX, SHAPE_SPHERE };

typedef struct shape {
	enum query_shape kind;
	const float *lo, *hi; ///< box
	const float *c;       ///< sphere
	float r2;
} shape;

static void shape_flags(const shape *q, const box_arrays *b, int dims, uint32_t base, uint32_t m, uint8_t *hit)
{
	if (q->kind == SHAPE_BOX)
		box_flags(b, dims, base, m, q->lo, q->hi, hit);
	else
		sphere_flags(b, dims, base, m, q->c, q->r2, hit);
}

/// Every entity in the shape, ascending, into out (first `capacity`); returns
/// the total. [axis_lo, axis_hi] bounds the shape along the index's axis.
static size_t query_shape_run(const bp_view *v, const shape *q, float axis_lo, float axis_hi, uint32_t *out,
	size_t capacity)
{
	uint8_t hit[SCAN_BLOCK];
	uint32_t begin, end;
	if (index_run(v, axis_lo, axis_hi, &begin, &end)) {
		const box_arrays b = sorted_arrays(&v->index);
		index_sink s = {out, capacity, 0, sink_limit(v)};
		bool within = true;
		for (uint32_t base = begin; base < end && within; base += SCAN_BLOCK) {
			const uint32_t m = BP_MIN(end - base, (uint32_t)SCAN_BLOCK);
			shape_flags(q, &b, v->dims, base, m, hit);
			within = sink_flags(&s, hit, m, v->index.order + base);
		}
		if (within) {
			sink_sort(&s);
			return s.total;
		}
	}
	const box_arrays b = dense_arrays(v);
	size_t total = 0;
	for (uint32_t base = 0; base < v->count; base += SCAN_BLOCK) {
		const uint32_t m = BP_MIN(v->count - base, (uint32_t)SCAN_BLOCK);
		shape_flags(q, &b, v->dims, base, m, hit);
		total = emit_hits(hit, m, base, out, capacity, total);
	}
	return total;
}

bp_status bp_view_query_aabb(const bp_view *v, const float *min, const float *max, uint32_t *out, size_t capacity,
	size_t *total)
{
	bp_status status = check_buffer(v, out, capacity, total);
	if (status != BP_OK || !min || !max)
		return BP_ERR_INVALID_ARGUMENT;
	if (!all_finite(min, v->dims) || !all_finite(max, v->dims))
		return BP_ERR_NOT_FINITE;
	for (int axis = 0; axis < v->dims; ++axis)
		if (min[axis] > max[axis])
			return BP_ERR_INVERTED_BOUNDS;
	shape q = {.kind = SHAPE_BOX, .lo = min, .hi = max};
	(void)bpi_view_ensure(v, BPI_VIEW_INDEX);
	const int a = v->index.axis;
	return finish(query_shape_run(v, &q, min[a], max[a], out, capacity), capacity, total);
}

bp_status bp_view_query_point(const bp_view *v, const float *point, uint32_t *out, size_t capacity, size_t *total)
{
	return bp_view_query_aabb(v, point, point, out, capacity, total);
}

bp_status bp_view_query_sphere(const bp_view *v, const float *center, float radius, uint32_t *out, size_t capacity,
	size_t *total)
{
	bp_status status = check_buffer(v, out, capacity, total);
	if (status != BP_OK || !center)
		return BP_ERR_INVALID_ARGUMENT;
	if (!all_finite(center, v->dims) || !isfinite(radius))
		return BP_ERR_NOT_FINITE;
	if (radius < 0)
		return BP_ERR_INVALID_ARGUMENT;
	float c[3] = {center[0], center[1], v->dims == 3 ? center[2] : 0.0f};
	shape q = {.kind = SHAPE_SPHERE, .c = c, .r2 = radius * radius};
	// A box within reach has axis gap g with fl(g * g) <= fl(radius^2), so g <=
	// radius * (1 + 2^-23) (or g <= 2^-63 where the squares underflow). reach
	// bounds that with room, and the run is rounded outwards one ulp, so no
	// rounding ever cuts a hit from the run; the exact test decides.
	(void)bpi_view_ensure(v, BPI_VIEW_INDEX);
	const int a = v->index.axis;
	const float reach = fmaxf(radius * (1.0f + 0x1p-20f), 0x1p-62f);
	float lo = nextafterf(c[a] - reach, -INFINITY), hi = nextafterf(c[a] + reach, INFINITY);
	return finish(query_shape_run(v, &q, lo, hi, out, capacity), capacity, total);
}

// ---- rays --------------------------------------------------------------------

/// Slab test of the ray o + t d, t in [0, max_t], against box j; *t is the entry
/// parameter (0 when o is inside). Axes with d == 0 are tested as "o within the
/// slab", which avoids the 0 * inf NaN of the reciprocal form.
static inline bool ray_box(const box_arrays *b, int dims, uint32_t j, const float *o, const float *d, float max_t,
	float *t)
{
	float enter = 0.0f, leave = max_t;
	for (int axis = 0; axis < dims; ++axis) {
		float lo = b->min[axis][j], hi = b->max[axis][j];
		if (d[axis] == 0.0f) {
			if (o[axis] < lo || o[axis] > hi)
				return false;
			continue;
		}
		float t1 = (lo - o[axis]) / d[axis], t2 = (hi - o[axis]) / d[axis];
		if (t1 > t2) {
			float swap = t1;
			t1 = t2;
			t2 = swap;
		}
		enter = t1 > enter ? t1 : enter;
		leave = t2 < leave ? t2 : leave;
		if (enter > leave)
			return false;
	}
	*t = enter;
	return true;
}

static bp_status check_ray(const bp_view *v, const float *origin, const float *dir, float max_t)
{
	if (!v || !origin || !dir || isnan(max_t) || max_t < 0)
		return BP_ERR_INVALID_ARGUMENT;
	if (!all_finite(origin, v->dims) || !all_finite(dir, v->dims))
		return BP_ERR_NOT_FINITE;
	return BP_OK;
}

// A ray against the sorted axis (o, d its components there, E the index's
// extent). t(x) = fl(fl(x - o) / d) is monotone in x, and ray_box computes the
// slab of a box [lo, hi] as t(lo) and t(hi); since hi <= fl(lo + E):
// - d > 0: entry >= t(min) and the exit t(max) <= t(fl(min + E)). A box can be
//   hit only if t(min) <= max_t and t(fl(min + E)) >= 0 (the exit must not be
//   behind the origin: ray_box rejects exit < entry >= 0).
// - d < 0: entry >= t(max) >= t(fl(min + E)) and the exit is t(min): hit only if
//   t(fl(min + E)) <= max_t and t(min) >= 0.
// Both conditions are monotone along the sorted mins, so they cut one run by
// binary search, and in ray order the entry bound only grows: the closest-hit
// search stops once it passes the best t.

static inline float axis_t(float x, float o, float d) { return (x - o) / d; }

typedef struct ray_run {
	uint32_t begin, end;
} ray_run;

enum ray_cut { EXIT_NOT_BEHIND, ENTRY_PAST_MAX, ENTRY_WITHIN_MAX, EXIT_BEHIND };

static inline bool ray_cut_holds(enum ray_cut cut, float min, float E, float o, float d, float max_t)
{
	switch (cut) {
	case EXIT_NOT_BEHIND:
		return axis_t(min + E, o, d) >= 0.0f;
	case ENTRY_PAST_MAX:
		return axis_t(min, o, d) > max_t;
	case ENTRY_WITHIN_MAX:
		return axis_t(min + E, o, d) <= max_t;
	default:
		return axis_t(min, o, d) < 0.0f;
	}
}

/// First entry for which `cut` holds (it is monotone false -> true along the index).
static uint32_t first_cut(const bpi_view_index *ix, enum ray_cut cut, float o, float d, float max_t)
{
	const float *min = ix->min[ix->axis];
	uint32_t lo = 0, hi = ix->count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (ray_cut_holds(cut, min[mid], ix->extent, o, d, max_t))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static ray_run ray_candidates(const bpi_view_index *ix, float o, float d, float max_t)
{
	ray_run r;
	if (d == 0.0f) {
		r.begin = bpi_view_index_lower(ix, o);
		r.end = bpi_view_index_upper(ix, o);
	} else {
		bool ahead = d > 0.0f;
		r.begin = first_cut(ix, ahead ? EXIT_NOT_BEHIND : ENTRY_WITHIN_MAX, o, d, max_t);
		r.end = first_cut(ix, ahead ? ENTRY_PAST_MAX : EXIT_BEHIND, o, d, max_t);
	}
	if (r.end < r.begin)
		r.end = r.begin;
	return r;
}

static inline bool closer(float t, uint32_t e, bp_hit best)
{
	return best.index == UINT32_MAX || t < best.distance || (t == best.distance && e < best.index);
}

bp_status bp_view_raycast_closest(const bp_view *v, const float *origin, const float *dir, float max_t, bp_hit *out,
	bool *found)
{
	if (!out || !found)
		return BP_ERR_INVALID_ARGUMENT;
	*found = false;
	bp_status status = check_ray(v, origin, dir, max_t);
	if (status != BP_OK)
		return status;
	bp_hit best = {UINT32_MAX, INFINITY};
	(void)bpi_view_ensure(v, BPI_VIEW_INDEX);
	const bpi_view_index *ix = &v->index;
	if (ix->count) {
		const box_arrays b = sorted_arrays(ix);
		const int a = ix->axis;
		const float o = origin[a], d = dir[a], E = ix->extent;
		const float *min = ix->min[a];
		ray_run r = ray_candidates(ix, o, d, max_t);
		float t;
		if (d > 0.0f) {
			for (uint32_t j = r.begin; j < r.end; ++j) {
				if (best.index != UINT32_MAX && axis_t(min[j], o, d) > best.distance)
					break; // every later entry enters later still
				if (ray_box(&b, v->dims, j, origin, dir, max_t, &t) && closer(t, ix->order[j], best))
					best = (bp_hit){ix->order[j], t};
			}
		} else if (d < 0.0f) {
			for (uint32_t j = r.end; j-- > r.begin;) {
				if (best.index != UINT32_MAX && axis_t(min[j] + E, o, d) > best.distance)
					break;
				if (ray_box(&b, v->dims, j, origin, dir, max_t, &t) && closer(t, ix->order[j], best))
					best = (bp_hit){ix->order[j], t};
			}
		} else {
			for (uint32_t j = r.begin; j < r.end; ++j)
				if (ray_box(&b, v->dims, j, origin, dir, max_t, &t) && closer(t, ix->order[j], best))
					best = (bp_hit){ix->order[j], t};
		}
	} else {
		const box_arrays b = dense_arrays(v);
		for (uint32_t i = 0; i < v->count; ++i) {
			float t;
			// Strictly closer only: scanning upwards keeps the lowest index on ties.
			if (ray_box(&b, v->dims, i, origin, dir, max_t, &t) && (best.index == UINT32_MAX || t < best.distance))
				best = (bp_hit){i, t};
		}
	}
	*found = best.index != UINT32_MAX;
	if (*found)
		*out = best;
	return BP_OK;
}

// ---- bounded best-k (max-heap on (distance, index)) ----------------------------

static inline bool hit_before(bp_hit a, bp_hit b)
{
	return a.distance < b.distance || (a.distance == b.distance && a.index < b.index);
}

static void sift_down(bp_hit *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && hit_before(h[m], h[l]))
			m = l;
		if (r < n && hit_before(h[m], h[r]))
			m = r;
		if (m == i)
			return;
		bp_hit t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

typedef struct best_k {
	bp_hit *heap;
	size_t size, capacity;
} best_k;

/// Keeps the `capacity` smallest hits offered.
static inline void best_offer(best_k *b, bp_hit x)
{
	if (b->size < b->capacity) {
		size_t i = b->size++;
		b->heap[i] = x;
		while (i > 0) {
			size_t p = (i - 1) / 2;
			if (!hit_before(b->heap[p], b->heap[i]))
				break;
			bp_hit t = b->heap[p];
			b->heap[p] = b->heap[i];
			b->heap[i] = t;
			i = p;
		}
	} else if (b->capacity && hit_before(x, b->heap[0])) {
		b->heap[0] = x;
		sift_down(b->heap, b->size, 0);
	}
}

/// Heap sort in place: ascending by (distance, index).
static void best_sort(best_k *b)
{
	for (size_t n = b->size; n > 1; --n) {
		bp_hit t = b->heap[0];
		b->heap[0] = b->heap[n - 1];
		b->heap[n - 1] = t;
		sift_down(b->heap, n - 1, 0);
	}
}

bp_status bp_view_raycast_all(const bp_view *v, const float *origin, const float *dir, float max_t, bp_hit *out,
	size_t capacity, size_t *total)
{
	bp_status status = check_buffer(v, out, capacity, total);
	if (status == BP_OK)
		status = check_ray(v, origin, dir, max_t);
	if (status != BP_OK)
		return status;
	// A short buffer gets the nearest `capacity` hits, so a caller that wants
	// only the first few can pass a small buffer on purpose. The heap orders by
	// (t, index), so the visiting order does not change the answer.
	best_k best = {out, 0, capacity};
	size_t count = 0;
	float t;
	(void)bpi_view_ensure(v, BPI_VIEW_INDEX);
	const bpi_view_index *ix = &v->index;
	ray_run r = {0, 0};
	if (ix->count)
		r = ray_candidates(ix, origin[ix->axis], dir[ix->axis], max_t);
	if (ix->count && r.end - r.begin <= ix->count / 2) {
		const box_arrays b = sorted_arrays(ix);
		for (uint32_t j = r.begin; j < r.end; ++j) {
			if (ray_box(&b, v->dims, j, origin, dir, max_t, &t)) {
				best_offer(&best, (bp_hit){ix->order[j], t});
				count++;
			}
		}
	} else {
		const box_arrays b = dense_arrays(v);
		for (uint32_t i = 0; i < v->count; ++i) {
			if (ray_box(&b, v->dims, i, origin, dir, max_t, &t)) {
				best_offer(&best, (bp_hit){i, t});
				count++;
			}
		}
	}
	best_sort(&best);
	return finish(count, capacity, total);
}

/// Offers entity order[j] (entry j of b) when it can still enter the best k.
static inline void nearest_offer(best_k *best, const box_arrays *b, int dims, uint32_t j, uint32_t e,
	const float *p)
{
	float d2 = box_distance2(b, dims, j, p);
	// Cheap reject once the heap is full: most entities stop here.
	if (best->size == best->capacity && (best->capacity == 0 || d2 > best->heap[0].distance))
		return;
	best_offer(best, (bp_hit){e, d2});
}

/// k nearest through the index: two cursors walk out from the point along the
/// axis, always advancing the side with the smaller distance bound, and stop
/// when the smaller bound exceeds the k-th best squared distance. Bounds, as
/// squares of one axis gap, never exceed the box's fl(d^2) (the other terms
/// only add): right of the point the gap is exactly fl(min - p); left of it the
/// gap fl(p - max) >= fl(p - fl(min + E)). Ties at the k-th distance are still
/// visited (the stop is strict), so the lower index wins as in the scan.
static void nearest_indexed(const bp_view *v, const float *p, best_k *best)
{
	const bpi_view_index *ix = &v->index;
	const box_arrays b = sorted_arrays(ix);
	const float *min = ix->min[ix->axis];
	const float pa = p[ix->axis], E = ix->extent;
	uint32_t right = bpi_view_index_upper(ix, pa), left = right; // left: entries [0, left) remain
	for (;;) {
		float br = INFINITY, bl = INFINITY;
		if (right < ix->count) {
			float g = min[right] - pa;
			br = g * g;
		}
		if (left > 0) {
			float g = pa - (min[left - 1] + E);
			g = g > 0.0f ? g : 0.0f;
			bl = g * g;
		}
		const float bound = br < bl ? br : bl;
		if (bound == INFINITY && right >= ix->count && left == 0)
			return;
		if (best->size == best->capacity && bound > best->heap[0].distance)
			return;
		uint32_t j = br < bl || (br == bl && right < ix->count) ? right++ : --left;
		nearest_offer(best, &b, v->dims, j, ix->order[j], p);
	}
}

bp_status bp_view_query_nearest(const bp_view *v, const float *point, uint32_t k, bp_hit *out, size_t *count)
{
	if (!v || !point || !count || (k && !out))
		return BP_ERR_INVALID_ARGUMENT;
	if (!all_finite(point, v->dims))
		return BP_ERR_NOT_FINITE;
	best_k best = {out, 0, BP_MIN(k, v->count)};
	(void)bpi_view_ensure(v, BPI_VIEW_INDEX);
	if (best.capacity && v->index.count && best.capacity < v->count / 2) {
		nearest_indexed(v, point, &best);
	} else {
		const box_arrays b = dense_arrays(v);
		for (uint32_t i = 0; i < v->count && best.capacity; ++i)
			nearest_offer(&best, &b, v->dims, i, i, point);
	}
	best_sort(&best);
	for (size_t i = 0; i < best.size; ++i)
		out[i].distance = sqrtf(out[i].distance);
	*count = best.size;
	return BP_OK;
}

// ---- pair set and neighbours (the sorted pairs and the adjacency) -------------------------

bp_status bp_view_neighbours(const bp_view *v, uint32_t entity, const uint32_t **out, size_t *count)
{
	if (!v || !out || !count)
		return BP_ERR_INVALID_ARGUMENT;
	if (entity >= v->count)
		return BP_ERR_OUT_OF_RANGE;
	bp_status status = bpi_view_ensure(v, BPI_VIEW_ADJACENCY);
	if (status != BP_OK)
		return status;
	*out = v->neighbours.data + v->offsets[entity];
	*count = v->offsets[entity + 1] - v->offsets[entity];
	return BP_OK;
}

bool bp_view_colliding(const bp_view *v, uint32_t a, uint32_t b)
{
	if (!v || a >= v->count || b >= v->count || a == b)
		return false;
	// A binary search of the pairs, sorted by (lo, hi): no adjacency needed.
	bp_pair key = {BP_MIN(a, b), BP_MAX(a, b)};
	const bp_pair *p = v->pairs.data;
	size_t lo = 0, hi = v->pairs.count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p[mid].lo < key.lo || (p[mid].lo == key.lo && p[mid].hi < key.hi))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->pairs.count && p[lo].lo == key.lo && p[lo].hi == key.hi;
}

bp_status bp_view_for_each_neighbour(const bp_view *v, uint32_t entity,
	void (*fn)(uint32_t entity, uint32_t neighbour, void *user), void *user)
{
	const uint32_t *list;
	size_t count;
	if (!fn)
		return BP_ERR_INVALID_ARGUMENT;
	bp_status status = bp_view_neighbours(v, entity, &list, &count);
	if (status != BP_OK)
		return status;
	for (size_t i = 0; i < count; ++i)
		fn(entity, list[i], user);
	return BP_OK;
}

bp_status bp_view_reduce_neighbours(const bp_view *v, uint32_t entity,
	double (*fn)(double acc, uint32_t neighbour, void *user), void *user, double init, double *out)
{
	const uint32_t *list;
	size_t count;
	if (!fn || !out)
		return BP_ERR_INVALID_ARGUMENT;
	bp_status status = bp_view_neighbours(v, entity, &list, &count);
	if (status != BP_OK)
		return status;
	double acc = init;
	for (size_t i = 0; i < count; ++i)
		acc = fn(acc, list[i], user);
	*out = acc;
	return BP_OK;
}

