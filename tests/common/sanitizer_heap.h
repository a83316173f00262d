// SPDX-License-Identifier: MIT
// Which sanitizer a test is built with, and the runtime's questions about its heap: does a
// block belong to it, and how large was it asked to be.
#ifndef BP_TEST_SANITIZER_HEAP_H
#define BP_TEST_SANITIZER_HEAP_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#endif
#endif

#if defined(TEST_ASAN) || defined(TEST_TSAN)
#define TEST_SANITIZER_HEAP 1
// From <sanitizer/allocator_interface.h>, which gcc does not ship; both runtimes export them.
int __sanitizer_get_ownership(const volatile void *p);
size_t __sanitizer_get_allocated_size(const volatile void *p);
#endif

#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

#endif
