// SPDX-License-Identifier: MIT
// The baseline sort-and-sweep: array-of-structs boxes, qsort on min x, double loop.
#include "sweep_qsort.h"

#include <stdlib.h>

typedef struct aos_box {
	float min[3], max[3];
	uint32_t index;
} aos_box;

static int compare_min_x(const void *a, const void *b)
{
	const aos_box *p = a, *q = b;
	return (p->min[0] > q->min[0]) - (p->min[0] < q->min[0]);
}

size_t perf_sweep_qsort(const bp_bounds_arrays *bounds, uint32_t count, int dims, bp_pair **pairs,
	size_t *capacity)
{
	aos_box *boxes = malloc((count ? count : 1) * sizeof *boxes);
	if (!boxes)
		return (size_t)-1;
	const float *min[3] = {bounds->min_x, bounds->min_y, bounds->min_z};
	const float *max[3] = {bounds->max_x, bounds->max_y, bounds->max_z};
	for (uint32_t i = 0; i < count; ++i) {
		boxes[i] = (aos_box){.index = i};
		for (int k = 0; k < dims; ++k) {
			boxes[i].min[k] = min[k][i];
			boxes[i].max[k] = max[k][i];
		}
	}
	qsort(boxes, count, sizeof *boxes, compare_min_x);
	size_t found = 0;
	for (uint32_t i = 0; i < count; ++i) {
		for (uint32_t j = i + 1; j < count && boxes[j].min[0] <= boxes[i].max[0]; ++j) {
			bool overlap = true;
			for (int k = 1; k < dims; ++k)
				if (boxes[j].min[k] > boxes[i].max[k] || boxes[i].min[k] > boxes[j].max[k])
					overlap = false;
			if (!overlap)
				continue;
			if (found == *capacity) {
				size_t grown = *capacity ? *capacity * 2 : 1024;
				bp_pair *p = realloc(*pairs, grown * sizeof *p);
				if (!p) {
					free(boxes);
					return (size_t)-1;
				}
				*pairs = p;
				*capacity = grown;
			}
			uint32_t a = boxes[i].index, b = boxes[j].index;
			(*pairs)[found++] = (bp_pair){a < b ? a : b, a < b ? b : a};
		}
	}
	free(boxes);
	return found;
}
