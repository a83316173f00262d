// SPDX-License-Identifier: MIT
// Brute-force answers to view queries (box, sphere, ray, nearest) and a checker that compares
// a view's queries with them.
#ifndef BP_TEST_QUERY_ORACLE_H
#define BP_TEST_QUERY_ORACLE_H

#include "oracle.h"

/// memcmp that accepts NULL pointers for zero lengths (views and buffers may hold NULL then).
bool oracle_same_bytes(const void *a, const void *b, size_t n);
/// Indices of the boxes that overlap the closed box [lo, hi], ascending.
size_t oracle_query_box(const oracle_box *b, uint32_t n, int dims, const float *lo, const float *hi, uint32_t *out);
/// Squared distance from p to the box (0 inside).
float oracle_distance2(const oracle_box *b, int dims, const float *p);
/// Indices of the boxes within r of c, ascending.
size_t oracle_query_sphere(const oracle_box *b, uint32_t n, int dims, const float *c, float r, uint32_t *out);
/// Every hit of the ray, sorted by (t, index).
size_t oracle_query_ray(const oracle_box *b, uint32_t n, int dims, const float *o, const float *d, float max_t,
	bp_hit *out);
/// The k nearest boxes by distance (0 inside), ties by index.
size_t oracle_query_nearest(const oracle_box *b, uint32_t n, int dims, const float *p, uint32_t k, bp_hit *out);
/// A box (or, point, a point) query on v equals brute force over boxes.
void oracle_check_box_query(const bp_view *v, const oracle_box *boxes, uint32_t n, int dims, const float *lo,
	const float *hi, bool point);
/// 40 random box, point, sphere, ray and nearest queries on v, each equal to brute force
/// over boxes (v's entities in dense order); snap: integer coordinates (ties, touching faces).
void oracle_check_view_queries(const bp_view *v, const oracle_box *boxes, uint32_t n, int dims, bool snap,
	uint64_t seed);

#endif
