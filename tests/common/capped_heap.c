// SPDX-License-Identifier: MIT
// The capped allocator (capped_heap.h), on posix_memalign; the library may allocate from
// several threads at once.
#define _POSIX_C_SOURCE 200809L
#include "capped_heap.h"

#include <broadphase/base.h>
#include <stdatomic.h>
#include <stdlib.h>

static _Atomic int64_t held, peak, refusals;
static int64_t cap;

static void raise_peak(int64_t now)
{
	int64_t seen = atomic_load(&peak);
	while (now > seen && !atomic_compare_exchange_weak(&peak, &seen, now)) {
	}
}

static void *capped_alloc(size_t size, size_t align, void *user)
{
	(void)user;
	const int64_t now = atomic_fetch_add(&held, (int64_t)size) + (int64_t)size;
	void *ptr = NULL;
	if (now > cap || size > (size_t)cap ||
		posix_memalign(&ptr, align < sizeof(void *) ? sizeof(void *) : align, size ? size : 1) != 0) {
		atomic_fetch_sub(&held, (int64_t)size);
		atomic_fetch_add(&refusals, 1);
		return NULL;
	}
	raise_peak(now);
	return ptr;
}

static void capped_free(void *ptr, size_t size, size_t align, void *user)
{
	(void)align, (void)user;
	if (!ptr)
		return;
	free(ptr);
	atomic_fetch_sub(&held, (int64_t)size);
}

void capped_heap_install(int64_t bytes)
{
	cap = bytes;
	capped_heap_reset();
	static const bp_allocator capped = {capped_alloc, capped_free, NULL};
	bp_set_allocator(&capped);
}

void capped_heap_remove(void) { bp_set_allocator(NULL); }

void capped_heap_reset(void)
{
	atomic_store(&peak, atomic_load(&held));
	atomic_store(&refusals, 0);
}

int64_t capped_heap_peak(void) { return atomic_load(&peak); }

int64_t capped_heap_refusals(void) { return atomic_load(&refusals); }
