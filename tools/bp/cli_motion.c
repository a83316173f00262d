// SPDX-License-Identifier: MIT
// Scene motion for `bp frames` and `bp bench`: a fixed velocity per entity and axis, bouncing off
// the box of the frame-1 centres, applied to an evenly spread choice of movers.
#include "cli_motion.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint32_t cli_fraction_count(uint32_t n, double fraction)
{
	double count = floor(fraction * (double)n + 0.5);
	return count <= 0 ? 0 : count >= n ? n : (uint32_t)count;
}

void cli_spread(uint32_t n, uint32_t count, uint32_t *out)
{
	for (uint32_t j = 0; j < count; ++j)
		out[j] = (uint32_t)((uint64_t)j * n / count);
}

void cli_motion_free(cli_motion *m)
{
	free(m->index);
	for (int a = 0; a < 3; ++a) {
		free(m->centre[a]);
		free(m->half[a]);
		free(m->velocity[a]);
		free(m->min[a]);
		free(m->max[a]);
	}
	*m = (cli_motion){0};
}

/// Uniform in [0, 1) from a 64-bit hash.
static double unit_from(uint64_t bits) { return (double)(bits >> 11) * 0x1p-53; }

bool cli_motion_init(cli_motion *m, const bp_scene *scene, uint64_t seed, uint32_t count, const uint32_t *index)
{
	*m = (cli_motion){.n = scene->count, .count = count, .dims = scene->dims};
	if (index) {
		if (!(m->index = malloc((size_t)(count ? count : 1) * sizeof(uint32_t))))
			return false;
		memcpy(m->index, index, (size_t)count * sizeof(uint32_t));
	}
	const size_t bytes = (size_t)(scene->count ? scene->count : 1) * sizeof(float);
	for (int a = 0; a < m->dims; ++a) {
		if (!(m->centre[a] = malloc(bytes)) || !(m->half[a] = malloc(bytes)) || !(m->velocity[a] = malloc(bytes)) ||
			!(m->min[a] = malloc(bytes)) || !(m->max[a] = malloc(bytes)))
			return false;
		memcpy(m->min[a], scene->min[a], (size_t)scene->count * sizeof(float));
		memcpy(m->max[a], scene->max[a], (size_t)scene->count * sizeof(float));
		m->lo[a] = INFINITY;
		m->hi[a] = -INFINITY;
		for (uint32_t i = 0; i < m->n; ++i) {
			float c = 0.5f * (scene->min[a][i] + scene->max[a][i]);
			float h = 0.5f * (scene->max[a][i] - scene->min[a][i]);
			m->centre[a][i] = c;
			m->half[a][i] = h;
			m->lo[a] = fminf(m->lo[a], c);
			m->hi[a] = fmaxf(m->hi[a], c);
			uint64_t bits = bp_splitmix64(seed ^ bp_splitmix64(((uint64_t)a << 32) | i));
			m->velocity[a][i] = (float)(CLI_MOTION_SPEED * 2.0 * h * (2.0 * unit_from(bits) - 1.0));
		}
	}
	return true;
}

void cli_motion_step(cli_motion *m)
{
	for (int a = 0; a < m->dims; ++a) {
		const float lo = m->lo[a], hi = m->hi[a];
		float *c = m->centre[a], *h = m->half[a], *v = m->velocity[a], *mn = m->min[a], *mx = m->max[a];
		for (uint32_t j = 0; j < m->count; ++j) {
			const uint32_t i = m->index ? m->index[j] : j;
			float x = c[i] + v[i];
			if (x < lo || x > hi) {
				x = x < lo ? lo + (lo - x) : hi - (x - hi);
				v[i] = -v[i];
			}
			x = fminf(fmaxf(x, lo), hi);
			c[i] = x;
			mn[j] = x - h[i];
			mx[j] = x + h[i];
		}
	}
}

bp_bounds_arrays cli_motion_bounds(const cli_motion *m)
{
	return (bp_bounds_arrays){.min_x = m->min[0], .min_y = m->min[1], .min_z = m->min[2],
		.max_x = m->max[0], .max_y = m->max[1], .max_z = m->max[2]};
}

bp_status cli_motion_apply(const cli_motion *m, bp_world *world)
{
	bp_bounds_arrays bounds = cli_motion_bounds(m);
	if (m->index)
		return bp_entities_set_bounds(world, bp_target_indices(m->count, m->index), &bounds);
	return bp_entities_set_bounds(world, bp_target_range(0, m->count), &bounds);
}
