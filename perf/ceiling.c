// SPDX-License-Identifier: MIT
// The machine's own 2-thread ceiling: how much more work two threads finish than one
// on a compute-bound loop with no memory traffic and nothing shared. A library
// cannot scale past it, so thread-scaling results are read against this number.
#define _POSIX_C_SOURCE 200809L // clock_gettime, through timing.h
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "timing.h"

/// A dependent floating-point chain: pure core throughput, no loads or stores.
__attribute__((noinline)) static double chain(long steps)
{
	double x = 0.0;
	for (long i = 0; i < steps; ++i)
		x = x * 0.999999 + (double)i * 1e-9;
	return x;
}

int main(int argc, char **argv)
{
	const long steps = argc > 1 ? atol(argv[1]) : 200000000L;
	const int threads = argc > 2 ? atoi(argv[2]) : omp_get_num_procs();
	enum { RUNS = 5 };
	double ratio[RUNS], sink = 0.0;
	for (int r = 0; r < RUNS; ++r) {
		double t0 = omp_get_wtime();
		sink += chain(steps);
		double one = omp_get_wtime() - t0;
		t0 = omp_get_wtime();
#pragma omp parallel num_threads(threads) reduction(+ : sink)
		sink += chain(steps);
		double all = omp_get_wtime() - t0;
		// Each of `threads` threads did the work one thread did alone.
		ratio[r] = threads * one / all;
	}
	qsort(ratio, RUNS, sizeof ratio[0], compare_double);
	printf("ceiling threads=%d throughput_vs_1_thread median=%.2f min=%.2f max=%.2f (checksum %g)\n", threads,
		ratio[RUNS / 2], ratio[0], ratio[RUNS - 1], sink);
	return 0;
}
