// SPDX-License-Identifier: MIT
// Queries on a published frame: box, point, sphere, ray, k nearest, pair lookups, neighbours,
// pair events. All read-only on the view, so any number of threads may run them at once.
#include <math.h>
#include <string.h>

#include "frame.h"

// Box, point, sphere, ray and nearest are linear scans over the snapshot's SoA
// arrays: every entity costs a few compares on contiguous floats, and no
// per-query state or allocation exists that threads could share. A spatial
// index for queries can replace the scans without changing the contract.

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

#define SCAN_BLOCK 64

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

/// Indices whose closed box overlaps [lo, hi], ascending; writes the first
/// `capacity`, returns how many there are. Blocks of SCAN_BLOCK: the compare
/// loop has no branch and vectorises into a byte mask, then the mask is
/// skipped 8 flags at a time (hits are rare). Measured 1.1 ns per entity (100k,
/// 2D and 3D) against 2.4 ns with one branch per entity.
static size_t scan_box(const bp_view *v, const float *lo, const float *hi, uint32_t *out, size_t capacity)
{
	size_t total = 0;
	const uint32_t n = v->count;
	const int dims = v->dims;
	const float *x0 = v->soa.min[0], *x1 = v->soa.max[0], *y0 = v->soa.min[1], *y1 = v->soa.max[1];
	const float *z0 = dims == 3 ? v->soa.min[2] : v->soa.min[1], *z1 = dims == 3 ? v->soa.max[2] : v->soa.max[1];
	// In 2D the z test repeats y with y's bounds: always true when y is.
	const float lz = dims == 3 ? lo[2] : lo[1], hz = dims == 3 ? hi[2] : hi[1];
	const float lx = lo[0], hx = hi[0], ly = lo[1], hy = hi[1];
	uint8_t hit[SCAN_BLOCK];
	for (uint32_t base = 0; base < n; base += SCAN_BLOCK) {
		const uint32_t m = BP_MIN(n - base, (uint32_t)SCAN_BLOCK);
		const float *ax0 = x0 + base, *ax1 = x1 + base, *ay0 = y0 + base, *ay1 = y1 + base;
		const float *az0 = z0 + base, *az1 = z1 + base;
		for (uint32_t j = 0; j < m; ++j)
			hit[j] = (uint8_t)((ax0[j] <= hx) & (lx <= ax1[j]) & (ay0[j] <= hy) & (ly <= ay1[j]) & (az0[j] <= hz) &
			                   (lz <= az1[j]));
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
	return finish(scan_box(v, min, max, out, capacity), capacity, total);
}

bp_status bp_view_query_point(const bp_view *v, const float *point, uint32_t *out, size_t capacity, size_t *total)
{
	return bp_view_query_aabb(v, point, point, out, capacity, total);
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

/// Squared distance from point p to box i.
static inline float box_distance2(const bp_view *v, uint32_t i, const float *p)
{
	float gx = axis_gap(p[0], v->soa.min[0][i], v->soa.max[0][i]);
	float gy = axis_gap(p[1], v->soa.min[1][i], v->soa.max[1][i]);
	float d2 = gx * gx + gy * gy;
	if (v->dims == 3) {
		float gz = axis_gap(p[2], v->soa.min[2][i], v->soa.max[2][i]);
		d2 += gz * gz;
	}
	return d2;
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
	const float r2 = radius * radius;
	size_t count = 0;
	const float cx = center[0], cy = center[1], cz = v->dims == 3 ? center[2] : 0.0f;
	const float *x0 = v->soa.min[0], *x1 = v->soa.max[0], *y0 = v->soa.min[1], *y1 = v->soa.max[1];
	const float *z0 = v->soa.min[2], *z1 = v->soa.max[2];
	uint8_t hit[SCAN_BLOCK];
	for (uint32_t base = 0; base < v->count; base += SCAN_BLOCK) {
		const uint32_t m = BP_MIN(v->count - base, (uint32_t)SCAN_BLOCK);
		if (v->dims == 2) {
			for (uint32_t j = base; j < base + m; ++j) {
				float gx = axis_gap(cx, x0[j], x1[j]), gy = axis_gap(cy, y0[j], y1[j]);
				hit[j - base] = gx * gx + gy * gy <= r2;
			}
		} else {
			for (uint32_t j = base; j < base + m; ++j) {
				float gx = axis_gap(cx, x0[j], x1[j]), gy = axis_gap(cy, y0[j], y1[j]);
				float gz = axis_gap(cz, z0[j], z1[j]);
				hit[j - base] = gx * gx + gy * gy + gz * gz <= r2;
			}
		}
		count = emit_hits(hit, m, base, out, capacity, count);
	}
	return finish(count, capacity, total);
}

// ---- rays --------------------------------------------------------------------

/// Slab test of the ray o + t d, t in [0, max_t], against box i; *t is the entry
/// parameter (0 when o is inside). Axes with d == 0 are tested as "o within the
/// slab", which avoids the 0 * inf NaN of the reciprocal form.
static inline bool ray_box(const bp_view *v, uint32_t i, const float *o, const float *d, float max_t, float *t)
{
	float enter = 0.0f, leave = max_t;
	for (int axis = 0; axis < v->dims; ++axis) {
		float lo = v->soa.min[axis][i], hi = v->soa.max[axis][i];
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
	for (uint32_t i = 0; i < v->count; ++i) {
		float t;
		// Strictly closer only: scanning upwards keeps the lowest index on ties.
		if (ray_box(v, i, origin, dir, max_t, &t) && (best.index == UINT32_MAX || t < best.distance))
			best = (bp_hit){i, t};
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
	// only the first few can pass a small buffer on purpose.
	best_k best = {out, 0, capacity};
	size_t count = 0;
	for (uint32_t i = 0; i < v->count; ++i) {
		float t;
		if (ray_box(v, i, origin, dir, max_t, &t)) {
			best_offer(&best, (bp_hit){i, t});
			count++;
		}
	}
	best_sort(&best);
	return finish(count, capacity, total);
}

bp_status bp_view_query_nearest(const bp_view *v, const float *point, uint32_t k, bp_hit *out, size_t *count)
{
	if (!v || !point || !count || (k && !out))
		return BP_ERR_INVALID_ARGUMENT;
	if (!all_finite(point, v->dims))
		return BP_ERR_NOT_FINITE;
	best_k best = {out, 0, BP_MIN(k, v->count)};
	for (uint32_t i = 0; i < v->count; ++i) {
		float d2 = box_distance2(v, i, point);
		// Cheap reject once the heap is full: most entities stop here.
		if (best.size == best.capacity && (best.capacity == 0 || d2 > best.heap[0].distance))
			continue;
		best_offer(&best, (bp_hit){i, d2});
	}
	best_sort(&best);
	for (size_t i = 0; i < best.size; ++i)
		out[i].distance = sqrtf(out[i].distance);
	*count = best.size;
	return BP_OK;
}

// ---- pair set and neighbours (indexes the builder made) -------------------------

bp_status bp_view_neighbours(const bp_view *v, uint32_t entity, const uint32_t **out, size_t *count)
{
	if (!v || !out || !count)
		return BP_ERR_INVALID_ARGUMENT;
	if (entity >= v->count)
		return BP_ERR_OUT_OF_RANGE;
	*out = v->neighbours + v->offsets[entity];
	*count = v->offsets[entity + 1] - v->offsets[entity];
	return BP_OK;
}

bool bp_view_colliding(const bp_view *v, uint32_t a, uint32_t b)
{
	if (!v || a >= v->count || b >= v->count || a == b)
		return false;
	const uint32_t *list = v->neighbours + v->offsets[a];
	size_t lo = 0, hi = v->offsets[a + 1] - v->offsets[a];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (list[mid] < b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->offsets[a + 1] - v->offsets[a] && list[lo] == b;
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

bp_status bp_view_pair_events(const bp_view *v, bp_key_pair *began, size_t began_capacity, size_t *began_total,
	bp_key_pair *ended, size_t ended_capacity, size_t *ended_total)
{
	if (!v || !began_total || !ended_total || (began_capacity && !began) || (ended_capacity && !ended))
		return BP_ERR_INVALID_ARGUMENT;
	if (began_capacity && v->began_count)
		memcpy(began, v->began, BP_MIN(began_capacity, v->began_count) * sizeof *began);
	if (ended_capacity && v->ended_count)
		memcpy(ended, v->ended, BP_MIN(ended_capacity, v->ended_count) * sizeof *ended);
	*began_total = v->began_count;
	*ended_total = v->ended_count;
	return v->began_count > began_capacity || v->ended_count > ended_capacity ? BP_ERR_OUT_OF_RANGE : BP_OK;
}
