// SPDX-License-Identifier: MIT
// Physics-like generated motion for `bp record --motion`: kinematic models of what a physics
// engine's broadphase sees each step (dt = 1/60 s, metres), frame by frame as trace changes.
// Each model is deterministic from its seed: a splitmix64 stream, no clock, no libc rand.
#ifndef BP_CLI_PHYSICS_H
#define BP_CLI_PHYSICS_H

#include "cli.h"

#define CLI_PHYSICS_DT (1.0f / 60.0f)
#define CLI_PHYSICS_GRAVITY 9.81f

/// A deterministic stream of random numbers.
typedef struct cli_rng {
	uint64_t state;
} cli_rng;

/// The stream of `seed`, told apart from other streams of the same seed by `stream`.
cli_rng cli_rng_make(uint64_t seed, uint64_t stream);
uint64_t cli_rng_next(cli_rng *rng);
/// Uniform in [lo, hi).
float cli_rng_range(cli_rng *rng, float lo, float hi);
/// True with probability p.
bool cli_rng_chance(cli_rng *rng, float p);

/// One frame's changes, in the order a trace applies them. The arrays hold up to the
/// capacities given to cli_changes_init.
typedef struct cli_changes {
	int dims;
	uint32_t destroy_count, create_count, move_count;
	uint32_t *destroys;
	bp_trace_entity *creates;
	uint32_t *move_ids;
	float *bounds[6]; ///< min x, y, z, max x, y, z of move i at element i
} cli_changes;

bool cli_changes_init(cli_changes *c, int dims, uint32_t max_creates, uint32_t max_moves);
void cli_changes_free(cli_changes *c);
void cli_changes_clear(cli_changes *c);
void cli_changes_destroy(cli_changes *c, uint32_t id);
/// A box of centre +- half (the first dims axes), with the default filter.
void cli_changes_create(cli_changes *c, uint32_t id, const float centre[3], const float half[3], bp_kind kind);
void cli_changes_move(cli_changes *c, uint32_t id, const float centre[3], const float half[3]);

/// What a model is asked for.
typedef struct cli_physics_def {
	uint32_t n; ///< dynamic bodies live at once
	int dims;   ///< 2 or 3; the last axis is up (a crowd in 2D is seen from above)
	uint64_t seed;
} cli_physics_def;

/// A motion model. `start` makes its state (NULL when out of memory) and says how many
/// static entities it adds to the n bodies; `step` writes frame f's changes (frame 0 creates
/// everything); the ids of frame 0 are 0..statics-1 for the statics, then the bodies.
typedef struct cli_physics_model {
	const char *name;
	bool churns; ///< bodies are destroyed and created again under new ids, at most n a frame
	void *(*start)(const cli_physics_def *def, uint32_t *statics);
	void (*step)(void *state, uint32_t frame, cli_changes *out);
	void (*stop)(void *state);
} cli_physics_model;

/// Thickness of the static walls of cli_region_walls.
#define CLI_REGION_WALL 0.5f

/// Creates the 2 * dims static slabs enclosing the region lo..hi (ids from *id on, which it
/// advances): on each axis one below lo and one above hi, each spanning the walls across it,
/// so that the region is closed.
void cli_region_walls(cli_changes *out, const float lo[3], const float hi[3], uint32_t *id);

extern const cli_physics_model cli_pile_model;
extern const cli_physics_model cli_rain_model;
extern const cli_physics_model cli_crowd_model;
extern const cli_physics_model cli_brownian_model;
extern const cli_physics_model cli_freefall_model;
extern const cli_physics_model cli_gravity_model;

/// The model called `name`, or NULL.
const cli_physics_model *cli_physics_find(const char *name);

#endif
