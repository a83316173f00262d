// SPDX-License-Identifier: MIT
// What the physics-like motions share: their random streams, the buffer of one frame's
// changes, and the table of models by name.
#include "cli_physics.h"

#include <stdlib.h>
#include <string.h>

cli_rng cli_rng_make(uint64_t seed, uint64_t stream)
{
	return (cli_rng){bp_splitmix64(seed ^ bp_splitmix64(stream + 0x5851F42D4C957F2Dull))};
}

uint64_t cli_rng_next(cli_rng *rng)
{
	rng->state += 0x9E3779B97F4A7C15ull;
	return bp_splitmix64(rng->state);
}

float cli_rng_range(cli_rng *rng, float lo, float hi)
{
	const double unit = (double)(cli_rng_next(rng) >> 11) * 0x1p-53;
	const float x = (float)(lo + (hi - lo) * unit);
	return x < hi ? x : lo; // rounding to float may reach hi
}

bool cli_rng_chance(cli_rng *rng, float p) { return cli_rng_range(rng, 0, 1) < p; }

bool cli_changes_init(cli_changes *c, int dims, uint32_t max_creates, uint32_t max_moves)
{
	*c = (cli_changes){.dims = dims};
	c->destroys = malloc(((size_t)max_moves + 1) * sizeof *c->destroys);
	c->creates = malloc(((size_t)max_creates + 1) * sizeof *c->creates);
	c->move_ids = malloc(((size_t)max_moves + 1) * sizeof *c->move_ids);
	bool ok = c->destroys && c->creates && c->move_ids;
	for (int a = 0; a < 6; ++a)
		ok &= (c->bounds[a] = calloc((size_t)max_moves + 1, sizeof(float))) != NULL;
	return ok;
}

void cli_changes_free(cli_changes *c)
{
	free(c->destroys);
	free(c->creates);
	free(c->move_ids);
	for (int a = 0; a < 6; ++a)
		free(c->bounds[a]);
	*c = (cli_changes){0};
}

void cli_changes_clear(cli_changes *c) { c->destroy_count = c->create_count = c->move_count = 0; }

void cli_changes_destroy(cli_changes *c, uint32_t id) { c->destroys[c->destroy_count++] = id; }

void cli_changes_create(cli_changes *c, uint32_t id, const float centre[3], const float half[3], bp_kind kind)
{
	// The default filter whatever the width of category and mask.
	const bp_entity_def filter = bp_entity_def_default();
	bp_trace_entity e = {.id = id, .category = filter.category, .mask = filter.mask, .kind = kind,
		.shape = BP_SHAPE_BOX};
	for (int a = 0; a < c->dims; ++a) {
		e.min[a] = centre[a] - half[a];
		e.max[a] = centre[a] + half[a];
	}
	c->creates[c->create_count++] = e;
}

void cli_changes_move(cli_changes *c, uint32_t id, const float centre[3], const float half[3])
{
	const uint32_t i = c->move_count++;
	c->move_ids[i] = id;
	for (int a = 0; a < c->dims; ++a) {
		c->bounds[a][i] = centre[a] - half[a];
		c->bounds[3 + a][i] = centre[a] + half[a];
	}
}

void cli_region_walls(cli_changes *out, const float lo[3], const float hi[3], uint32_t *id)
{
	for (int a = 0; a < out->dims; ++a)
		for (int side = 0; side < 2; ++side) {
			float centre[3] = {0}, half[3] = {0};
			for (int b = 0; b < out->dims; ++b) {
				centre[b] = 0.5f * (lo[b] + hi[b]);
				half[b] = 0.5f * (hi[b] - lo[b]) + CLI_REGION_WALL;
			}
			centre[a] = side ? hi[a] + 0.5f * CLI_REGION_WALL : lo[a] - 0.5f * CLI_REGION_WALL;
			half[a] = 0.5f * CLI_REGION_WALL;
			cli_changes_create(out, (*id)++, centre, half, BP_KIND_STATIC);
		}
}

const cli_physics_model *cli_physics_find(const char *name)
{
	const cli_physics_model *models[] = {&cli_pile_model, &cli_rain_model, &cli_crowd_model, &cli_brownian_model,
		&cli_freefall_model, &cli_gravity_model};
	for (size_t i = 0; i < sizeof models / sizeof models[0]; ++i)
		if (strcmp(models[i]->name, name) == 0)
			return models[i];
	return NULL;
}
