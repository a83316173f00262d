// SPDX-License-Identifier: MIT
// The canonical pair sort (src/parallel/pairs_sort.c) on lists from sparse to dense: random pairs of
// entities below --entities, from a few active entities' pairs among a million to a full
// step's. Each list is sorted three ways in the same run: as the sort chooses, forced by
// buckets of lo, and forced by LSD, so the rule that picks between the two is measured
// where it switches. 1 thread; medians of --runs sorts each.
#define _POSIX_C_SOURCE 200809L
#include <broadphase/broadphase.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel/pairs.h"
#include "timing.h"

enum { MAX_RUNS = 31, WAYS = 3 };

static const char *const way_names[WAYS] = {"chosen", "buckets", "lsd"};
/// The test hook's fill per way: the default rule, every list by buckets, none.
static const uint32_t way_fill[WAYS] = {BPI_PAIRS_BUCKET_PAIRS_MIN, 0, UINT32_MAX};

static const uint32_t counts[] = {30000, 65536, 120000, 250000, 500000, 800000, 1600000, 3200000};

/// count random pairs, lo < hi < entities.
static void random_pairs(bp_pair *pairs, uint32_t count, uint32_t entities, uint64_t seed)
{
	for (uint32_t i = 0; i < count; ++i) {
		seed = bp_splitmix64(seed);
		uint32_t a = (uint32_t)(seed % entities), b = (uint32_t)((seed >> 32) % (entities - 1));
		b += b >= a; // b != a
		pairs[i] = (bp_pair){a < b ? a : b, a < b ? b : a};
	}
}

static int check_sorted(const bp_pair *p, uint32_t count)
{
	for (uint32_t i = 1; i < count; ++i)
		if (p[i - 1].lo > p[i].lo || (p[i - 1].lo == p[i].lo && p[i - 1].hi > p[i].hi))
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	uint32_t entities = 1000000;
	int runs = 7;
	const char *csv_path = NULL;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--entities") == 0)
			entities = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--runs") == 0)
			runs = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--csv") == 0)
			csv_path = argv[i + 1];
		else
			argc = 0; // prints the usage below
	}
	if (argc == 0 || argc % 2 == 0 || entities < 2 || runs < 1 || runs > MAX_RUNS) {
		fprintf(stderr, "usage: bp_perf_pairs_sort [--entities N >= 2] [--runs 1..%d] [--csv FILE]\n", MAX_RUNS);
		return 2;
	}
	const uint32_t most = counts[sizeof counts / sizeof *counts - 1];
	bp_pair *input = malloc(most * sizeof *input), *work = malloc(most * sizeof *work),
		*scratch = malloc(most * sizeof *scratch);
	FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
	if (!input || !work || !scratch || (csv_path && !csv)) {
		fprintf(stderr, "bp_perf_pairs_sort: out of memory or cannot write %s\n", csv_path ? csv_path : "");
		return 1;
	}
	if (csv)
		fprintf(csv, "entities,pairs,way,median_ms,ns_per_pair\n");
	for (size_t c = 0; c < sizeof counts / sizeof *counts; ++c) {
		const uint32_t count = counts[c];
		random_pairs(input, count, entities, 1 + c);
		printf("%8u pairs of %u entities:", count, entities);
		for (int way = 0; way < WAYS; ++way) {
			double ms[MAX_RUNS];
			bpi_pairs_set_bucket_pairs_min(way_fill[way]);
			for (int r = 0; r < runs; ++r) {
				memcpy(work, input, count * sizeof *work);
				uint64_t t0 = now_ns();
				bool sorted = bpi_pairs_sort_canonical(work, count, scratch, 1);
				ms[r] = (double)(now_ns() - t0) * 1e-6;
				if (!sorted || !check_sorted(work, count)) {
					fprintf(stderr, "bp_perf_pairs_sort: %s left %u pairs unsorted\n", way_names[way], count);
					return 1;
				}
			}
			double median = median_sorting(ms, (size_t)runs);
			printf("  %s %.3f ms", way_names[way], median);
			if (csv)
				fprintf(csv, "%u,%u,%s,%.4f,%.2f\n", entities, count, way_names[way], median, median * 1e6 / count);
		}
		printf("\n");
	}
	bpi_pairs_set_bucket_pairs_min(way_fill[0]);
	if (csv)
		fclose(csv);
	free(input);
	free(work);
	free(scratch);
	return 0;
}
