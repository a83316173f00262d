// SPDX-License-Identifier: MIT
// What every perf driver times with: a monotonic clock, and the order of doubles for medians.
// Include after defining _POSIX_C_SOURCE (clock_gettime).
#ifndef BP_PERF_TIMING_H
#define BP_PERF_TIMING_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline double now_ms(void)
{
	return (double)now_ns() * 1e-6;
}

/// qsort order of doubles.
static inline int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/// The middle of n values (the upper one of an even count), sorting them in
/// place; 0 when there are none.
static inline double median_sorting(double *v, size_t n)
{
	qsort(v, n, sizeof *v, compare_double);
	return n ? v[n / 2] : 0;
}

#endif
