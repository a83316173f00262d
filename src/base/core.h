// SPDX-License-Identifier: MIT
// Internal essentials: assertions, allocation, clock. Every src/ file includes this.
#ifndef BP_CORE_H
#define BP_CORE_H

#include <broadphase/base.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BP_CACHE_LINE 64

#if defined(NDEBUG) && !defined(BP_VALIDATE)
#define BP_ASSERT(cond) ((void)0)
#else
void bpi_assert_failed(const char *cond, const char *file, int line);
#define BP_ASSERT(cond) ((cond) ? (void)0 : bpi_assert_failed(#cond, __FILE__, __LINE__))
#endif

#define BP_MIN(a, b) ((a) < (b) ? (a) : (b))
/// The status of a call that fills a caller's buffer of `capacity` results out of
/// `total`: BP_ERR_OUT_OF_RANGE only for a short buffer that is not empty; a
/// capacity of 0 asks for the count alone and gets BP_OK.
#define BPI_BUFFER_STATUS(total, capacity) \
	((capacity) != 0 && (total) > (capacity) ? BP_ERR_OUT_OF_RANGE : BP_OK)
#define BP_MAX(a, b) ((a) > (b) ? (a) : (b))

/// Bits needed to write every value up to `x` (0 for 0).
static inline int bpi_bit_width(uint32_t x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

/// Allocation through the host hook (mimalloc by default, the C heap in
/// sanitizer builds), counted in bp_allocated_bytes. bpi_free must get the
/// size that was allocated.
void *bpi_alloc(size_t size);
/// As bpi_alloc, aligned to BP_CACHE_LINE: for SoA arrays and per-chunk buffers.
void *bpi_alloc_aligned(size_t size);
void bpi_free(void *ptr, size_t size);
void bpi_free_aligned(void *ptr, size_t size);
/// The default heap (mimalloc), past the host hook and the count: for memory that
/// lives with a thread rather than a world (the worker crews), which outlives
/// every world and any bp_set_allocator swap.
void *bpi_alloc_uncounted(size_t size);
void bpi_free_uncounted(void *ptr, size_t size);
/// Grows (or allocates) a cache-line-aligned array from old_count to new_count
/// elements of elem_size, copying the first old_count. On failure returns NULL
/// and leaves the old array untouched.
void *bpi_grow_aligned(void *old, size_t old_count, size_t new_count, size_t elem_size);

/// A growable, cache-line-aligned array of T that knows its capacity, so no
/// caller spells a capacity field or recomputes a byte size to free it:
///     BPI_ARRAY(uint32_t) keys;               // a struct member, zero = empty
///     if (!bpi_array_reserve(&x->keys, n)) return BP_ERR_OUT_OF_MEMORY;
///     x->keys.data[i] = ...;
///     bpi_array_free(&x->keys);
#define BPI_ARRAY(T) \
	struct { \
		T *data; \
		size_t capacity; /* elements */ \
	}

/// Room for at least `needed` elements, growing by at least half; an array
/// reserved for none still gets one, so that data + 0 is never NULL + 0. Scratch:
/// the contents are NOT kept. False (array untouched) when memory runs out.
#define bpi_array_reserve(array, needed) \
	bpi_array_grow_(&(array)->data, &(array)->capacity, 0, (needed), sizeof *(array)->data)
/// As bpi_array_reserve, keeping the first `count` elements.
#define bpi_array_grow(array, count, needed) \
	bpi_array_grow_(&(array)->data, &(array)->capacity, (count), (needed), sizeof *(array)->data)
/// Frees the array; it is empty afterwards.
#define bpi_array_free(array) bpi_array_free_(&(array)->data, &(array)->capacity, sizeof *(array)->data)

/// Exchanges the storage of two arrays of one element type.
#define bpi_array_swap(a, b) \
	do { \
		void *swap_data_ = (a)->data; \
		size_t swap_capacity_ = (a)->capacity; \
		_Static_assert(sizeof *(a)->data == sizeof *(b)->data, "arrays of one type"); \
		(a)->data = (b)->data; \
		(a)->capacity = (b)->capacity; \
		(b)->data = swap_data_; \
		(b)->capacity = swap_capacity_; \
	} while (0)

/// The functions behind the macros. `data` points at the array's T * member
/// (read and written with memcpy, so any T works without pointer punning).
bool bpi_array_grow_(void *data, size_t *capacity, size_t keep, size_t needed, size_t elem_size);
void bpi_array_free_(void *data, size_t *capacity, size_t elem_size);

/// Monotonic clock in nanoseconds.
uint64_t bpi_now_ns(void);

#endif
