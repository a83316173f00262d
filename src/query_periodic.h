// SPDX-License-Identifier: MIT
// Box, point, sphere and nearest queries in periodic worlds (frame.h, "Periodic worlds"):
// each entity tested on its bounds moved into the period cell as the periodic step moves
// them, the hierarchy walked once under a conservative test on the torus.
#ifndef BP_QUERY_PERIODIC_H
#define BP_QUERY_PERIODIC_H

#include "query.h"

/// A checked box or sphere query.
typedef struct bpi_periodic_shape {
	bool sphere;        ///< false: the box [lo, hi]
	float lo[3], hi[3]; ///< box
	float c[3];         ///< sphere centre
	float r, r2;        ///< sphere radius and fl(r * r)
	bool balls;         ///< bp_query_filter.spheres_as_balls
} bpi_periodic_shape;

/// The accepted entities the shape meets, ascending, the first `capacity` into out,
/// their number into *total; BP_ERR_OUT_OF_RANGE when a buffer with room was short.
bp_status bpi_periodic_query(const bp_view *v, const bpi_periodic_shape *q, const bp_query_filter *filter,
	uint32_t *out, size_t capacity, size_t *total);

/// Calls visit on the accepted entities the shape meets, ascending, until it returns false.
void bpi_periodic_visit(const bp_view *v, const bpi_periodic_shape *q, const bp_query_filter *filter,
	bool (*visit)(uint32_t entity, void *user), void *user);

/// Offers best the accepted entities by squared distance from p on the torus: it ends
/// holding the k nearest a scan would find (best->capacity > 0).
void bpi_periodic_nearest(const bp_view *v, const float *p, const bp_query_filter *filter, bpi_best_k *best);

/// Test hook: the node and entity tests the calling thread's periodic queries made so
/// far (a scan of n entities counts n), so a test can bound a query's work by the view's size.
uint64_t bpi_periodic_query_work(void);

#endif
