// SPDX-License-Identifier: MIT
// Export macro, status codes, allocator hook: what every other public header needs.
#ifndef BROADPHASE_BASE_H
#define BROADPHASE_BASE_H

#include <stddef.h>
#include <stdint.h>

#if defined(BP_STATIC_DEFINE)
#define BP_API
#elif defined(_WIN32)
#if defined(BP_BUILDING_LIBRARY)
#define BP_API __declspec(dllexport)
#else
#define BP_API __declspec(dllimport)
#endif
#else
#define BP_API __attribute__((visibility("default")))
#endif

/// Marks a declaration that is going away: compilers warn where it is used, with `msg`
/// naming what replaces it. Define BP_NO_DEPRECATION_WARNINGS before including a
/// broadphase header to silence them.
#if defined(BP_NO_DEPRECATION_WARNINGS)
#define BP_DEPRECATED(msg)
#elif defined(__GNUC__) || defined(__clang__)
#define BP_DEPRECATED(msg) __attribute__((deprecated(msg)))
#else
#define BP_DEPRECATED(msg)
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define BP_VERSION_MAJOR 0
#define BP_VERSION_MINOR 7
#define BP_VERSION_PATCH 0

/// Result of every call that can fail. BP_OK is zero; every error leaves the
/// object it was called on exactly as it was.
typedef enum bp_status {
	BP_OK = 0,
	BP_ERR_INVALID_ARGUMENT, ///< null pointer, bad enum, dims not 2 or 3, ...
	BP_ERR_NOT_FINITE,       ///< a bound is NaN or infinite
	BP_ERR_INVERTED_BOUNDS,  ///< min > max on some axis (bounds are checked axis by axis, x first: the first at fault decides)
	BP_ERR_STALE_HANDLE,     ///< null handle, destroyed entity, handle of another world, view released twice
	BP_ERR_OUT_OF_RANGE,     ///< first/count outside the entity range, too many entities, a short (non-empty) result buffer
	BP_ERR_OUT_OF_MEMORY,    ///< an allocation failed, a memory limit was reached, or threads could not start
	BP_ERR_UNKNOWN_ALGORITHM,///< no algorithm with that id or name
	BP_ERR_PARSE,            ///< malformed input file (the bp tool's scene files)
	BP_ERR_IO,               ///< a file could not be opened, read or written
	BP_ERR_UNSUPPORTED,      ///< valid request this algorithm or build cannot serve
	// Appended in 0.6 (the values above keep their numbers):
	BP_ERR_NO_FRAME,         ///< bp_frame_acquire: no frame has been published yet
	BP_ERR_NOT_SUBMITTED,    ///< bp_frame_wait: that frame number was not submitted (nor taken by a world view) yet
	BP_ERR_PERIODIC_EXTENT,  ///< periodic world: a box's extent exceeds period / 2 on some axis
	BP_STATUS_COUNT
} bp_status;

/// Static, human-readable text for a status ("ok", "bound is NaN or infinite", ...).
/// Any thread. Never returns NULL.
BP_API const char *bp_status_string(bp_status status);

/// Host allocator hook. alloc returns memory aligned to `align` (a power of two,
/// at most 4096) or NULL; free receives the size and alignment that were asked
/// for. Both may be called from any library thread at once.
typedef struct bp_allocator {
	void *(*alloc)(size_t size, size_t align, void *user);
	void (*free)(void *ptr, size_t size, size_t align, void *user);
	void *user;
} bp_allocator;

/// Replaces the allocator used for every internal allocation. The default is
/// mimalloc, or in a library built with AddressSanitizer, ThreadSanitizer or
/// MemorySanitizer the C library's posix_memalign and free, so that the
/// sanitizer sees the library's heap. Pass NULL to restore the default.
/// Warning: call only while no broadphase object exists, and while no other thread
/// is inside the library.
BP_API void bp_set_allocator(const bp_allocator *allocator);

/// Bytes currently allocated by the library, through whichever allocator.
/// Zero once every object is destroyed; tests use it as a leak check. Any thread.
BP_API int64_t bp_allocated_bytes(void);

#ifdef __cplusplus
}
#endif
#endif
