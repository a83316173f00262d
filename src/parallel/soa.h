// SPDX-License-Identifier: MIT
// The per-entity SoA arrays shared by the world's store and a frame's snapshot.
#ifndef BP_SOA_H
#define BP_SOA_H

#include <broadphase/types.h>
#include "base/core.h"

/// One 64-byte-aligned array per bound and per attribute, indexed by dense
/// entity index. min[2] and max[2] are NULL in 2D, so 2D pays for no z.
/// The bits of bpi_soa.flags.
#define BP_FLAG_STATIC 1u
#define BP_FLAG_SPHERE 2u

typedef struct bpi_soa {
	float *min[3];
	float *max[3];
	uint64_t *category;
	uint64_t *mask;
	uint8_t *flags;
	uint64_t *user_key;
	bp_entity *entity; ///< the handle: what names an entity while dense indices move
} bpi_soa;

/// Bytes one entity takes in a bpi_soa of `dims`.
static inline size_t bpi_soa_entity_bytes(int dims)
{
	return (size_t)dims * 2 * sizeof(float) + 2 * sizeof(uint64_t) + sizeof(uint8_t) + sizeof(uint64_t) +
	       sizeof(bp_entity);
}

/// Reallocates every array from old_capacity to capacity entities, keeping the
/// first `keep`. All or nothing: on failure returns false and *soa is unchanged.
bool bpi_soa_resize(bpi_soa *soa, int dims, uint32_t old_capacity, uint32_t capacity, uint32_t keep);
void bpi_soa_free(bpi_soa *soa, int dims, uint32_t capacity);
/// Copies entities [0, count) from src to dst (both with room for count).
void bpi_soa_copy(bpi_soa *dst, const bpi_soa *src, int dims, uint32_t count);
/// The same (only the bounds arrays with `bounds_only`) in fixed chunks on up to
/// `threads` threads of the bound executor.
void bpi_soa_copy_parallel(bpi_soa *dst, const bpi_soa *src, int dims, uint32_t count, bool bounds_only, int threads);
/// Copies the listed entities below `limit` from src to dst, at the same index:
/// only their bounds with `bounds_only`, every field otherwise.
void bpi_soa_copy_listed(bpi_soa *dst, const bpi_soa *src, int dims, const uint32_t *list, uint32_t count,
	uint32_t limit, bool bounds_only);
/// Copies entity `from` of src over entity `to` of dst (dst == src: the
/// swap-remove of a destroy).
void bpi_soa_copy_entity(bpi_soa *dst, uint32_t to, const bpi_soa *src, uint32_t from, int dims);

#endif
