// SPDX-License-Identifier: MIT
// Every internal allocation: mimalloc by default (the C library's heap in sanitizer builds),
// a host hook when set, all counted.
#define _POSIX_C_SOURCE 200809L // clock_gettime, posix_memalign under -std=c11 (gcc's -fopenmp hid the need; clang's does not)
#define _DEFAULT_SOURCE         // MADV_HUGEPAGE
#include "base/core.h"

#include <mimalloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

// ASan and TSan intercept malloc and free but cannot see inside mimalloc's pages:
// through mimalloc ASan missed overflows within a block and uses after free, and
// TSan, blind to a block freed by one thread and handed to another by mimalloc's
// own atomics, reported the builder's writes to a fresh array as races with a
// reader's reads of the array freed at that address. So sanitizer builds take
// the C library's heap by default.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BP_C_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define BP_C_HEAP 1
#endif
#endif

#ifdef BP_C_HEAP
static void *default_alloc(size_t size, size_t align, void *user)
{
	(void)user;
	// Not aligned_alloc: it wants size rounded up to a multiple of align, and an
	// overflow into that padding would go unseen. posix_memalign ends the block
	// at exactly `size`, where ASan's poison starts.
	void *ptr;
	return posix_memalign(&ptr, align, size) == 0 ? ptr : NULL;
}

static void default_free(void *ptr, size_t size, size_t align, void *user)
{
	(void)size;
	(void)align;
	(void)user;
	free(ptr);
}
#else
/// Blocks this large ask the kernel for 2 MiB pages. The scatters of a step write
/// all over arrays of hundreds of megabytes, where 4 KiB pages cost a TLB miss per
/// write: at 10M uniform entities (1 thread) huge pages took the grid's build from
/// 497-511 to 401 ms. Advising blocks from 2 MiB up gained at most 1-3% at 1M, within
/// the noise, and a block reserved ahead but touched in part would be held in 2 MiB
/// pieces, so only blocks this large are advised.
#define HUGE_PAGE_BYTES ((size_t)2 << 20)
#define HUGE_PAGE_MIN_BLOCK ((size_t)16 << 20)

static void advise_huge_pages(void *ptr, size_t size)
{
#ifdef MADV_HUGEPAGE
	if (!ptr || size < HUGE_PAGE_MIN_BLOCK)
		return;
	uintptr_t start = ((uintptr_t)ptr + HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1);
	uintptr_t end = ((uintptr_t)ptr + size) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1);
	if (end > start)
		(void)madvise((void *)start, end - start, MADV_HUGEPAGE); // advice only: failure changes nothing
#else
	(void)ptr;
	(void)size;
#endif
}

static void *default_alloc(size_t size, size_t align, void *user)
{
	(void)user;
	void *ptr = mi_malloc_aligned(size, align);
	advise_huge_pages(ptr, size);
	return ptr;
}

static void default_free(void *ptr, size_t size, size_t align, void *user)
{
	(void)size;
	(void)align;
	(void)user;
	mi_free(ptr);
}
#endif

static const bp_allocator default_allocator = {default_alloc, default_free, NULL};
static bp_allocator current_allocator = {default_alloc, default_free, NULL};
static _Atomic int64_t allocated_bytes;

void bp_set_allocator(const bp_allocator *allocator)
{
	current_allocator = allocator ? *allocator : default_allocator;
}

int64_t bp_allocated_bytes(void)
{
	return atomic_load_explicit(&allocated_bytes, memory_order_relaxed);
}

static void *alloc_counted(size_t size, size_t align)
{
	if (size == 0)
		size = 1; // a zero-size request still gets a unique pointer to free
	void *ptr = current_allocator.alloc(size, align, current_allocator.user);
	if (ptr)
		atomic_fetch_add_explicit(&allocated_bytes, (int64_t)size, memory_order_relaxed);
	return ptr;
}

static void free_counted(void *ptr, size_t size, size_t align)
{
	if (!ptr)
		return;
	if (size == 0)
		size = 1;
	current_allocator.free(ptr, size, align, current_allocator.user);
	atomic_fetch_sub_explicit(&allocated_bytes, (int64_t)size, memory_order_relaxed);
}

void *bpi_alloc(size_t size) { return alloc_counted(size, sizeof(void *) * 2); }
void *bpi_alloc_aligned(size_t size) { return alloc_counted(size, BP_CACHE_LINE); }
void bpi_free(void *ptr, size_t size) { free_counted(ptr, size, sizeof(void *) * 2); }
void bpi_free_aligned(void *ptr, size_t size) { free_counted(ptr, size, BP_CACHE_LINE); }
void *bpi_alloc_uncounted(size_t size) { return default_alloc(size, BP_CACHE_LINE, NULL); }
void bpi_free_uncounted(void *ptr, size_t size) { default_free(ptr, size, BP_CACHE_LINE, NULL); }

void *bpi_grow_aligned(void *old, size_t old_count, size_t new_count, size_t elem_size)
{
	if (new_count > SIZE_MAX / elem_size)
		return NULL;
	void *grown = bpi_alloc_aligned(new_count * elem_size);
	if (!grown)
		return NULL;
	if (old) {
		memcpy(grown, old, old_count * elem_size);
		bpi_free_aligned(old, old_count * elem_size);
	}
	return grown;
}

bool bpi_array_grow_(void *data, size_t *capacity, size_t keep, size_t needed, size_t elem_size)
{
	void *old;
	memcpy(&old, data, sizeof old);
	// An array reserved for nothing still gets storage: callers offset into it
	// by counts that may be 0, and NULL + 0 is undefined.
	if (needed <= *capacity && old)
		return true;
	BP_ASSERT(keep <= *capacity);
	size_t grown = BP_MAX(BP_MAX(needed, (size_t)1), *capacity + *capacity / 2);
	void *fresh = bpi_grow_aligned(NULL, 0, grown, elem_size); // checks grown * elem_size for overflow
	if (!fresh)
		return false;
	if (keep)
		memcpy(fresh, old, keep * elem_size);
	bpi_free_aligned(old, *capacity * elem_size);
	memcpy(data, &fresh, sizeof fresh);
	*capacity = grown;
	return true;
}

void bpi_array_free_(void *data, size_t *capacity, size_t elem_size)
{
	void *old;
	memcpy(&old, data, sizeof old);
	bpi_free_aligned(old, *capacity * elem_size);
	old = NULL;
	memcpy(data, &old, sizeof old);
	*capacity = 0;
}

uint64_t bpi_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bpi_assert_failed(const char *cond, const char *file, int line)
{
	fprintf(stderr, "broadphase: assertion failed: %s (%s:%d)\n", cond, file, line);
	abort();
}
