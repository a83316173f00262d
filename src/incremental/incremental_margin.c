// SPDX-License-Identifier: MIT
// The margin of the fat boxes (incremental_margin.h): chosen from the motion the searches
// saw, steered by how many fat boxes are left each step, and led along steady motion.
// The choices below were measured on worlds where little changes: perf/README.md, "The margin
// of the fat boxes", holds the runs.
#include "incremental/incremental_margin.h"
#include "parallel/sort.h"

#include <stdatomic.h>
#include <string.h>

/// The chosen margin covers this many steps of the motion observed, so an entity
/// searches about once in that many steps; at most this many times the extent of
/// the entities that moved, so that a few teleports or steady motion do not make
/// fat boxes hold more candidates than their searches save.
#define MARGIN_STEPS 8.0f
/// An entity's own steps are within this share of the steps above, chosen by its index.
#define MARGIN_STEPS_SPREAD 0.25f
#define MARGIN_EXTENTS 0.5f
/// The steps are stretched while more than the high share of the fat boxes is left
/// in a step and shrunk while less than the low share is: motion measured since
/// the last search under-reads a random walk, more so as its boxes age.
#define MARGIN_ESCAPES_HIGH 0.02f
#define MARGIN_ESCAPES_LOW 0.005f
/// In a moving world every entity holds a fat box, most of them still or slow, and a
/// search costs far more than the re-test of a kept pair: fewer are left.
#define MARGIN_MOVING_ESCAPES_HIGH 0.005f
#define MARGIN_MOVING_ESCAPES_LOW 0.00125f
#define MARGIN_STRETCH_MIN 0.25f
#define MARGIN_STRETCH_MAX 16.0f
/// A box that moved more than this many of its extents since its search jumped (a
/// teleport, or another entity moved into its dense index): no margin would have
/// held it, so it says nothing of the motion.
#define MARGIN_JUMP_EXTENTS 2.0f
/// A steadily moving entity's fat box reaches this many steps of its motion further on the
/// side it moves to, at most this many of its extents, when its motion since its
/// last search kept within this share of the motion before it (a random walk's
/// boxes would only grow).
#define MARGIN_LEAD_STEPS_DEFAULT 8u
#define MARGIN_LEAD_EXTENTS 0.5f
#define MARGIN_LEAD_AGREE 0.5f

static _Atomic uint32_t lead_steps = MARGIN_LEAD_STEPS_DEFAULT;

void bpi_set_margin_lead_steps(uint32_t steps) { atomic_store(&lead_steps, steps); }

/// The bounds the fat box was made around (to rounding).
static bpi_box3 origin_of(const bpi_fat *f, const bpi_fat_growth *g)
{
	bpi_box3 o;
	for (int axis = 0; axis < 3; ++axis) {
		o.lo[axis] = f->lo[axis] + g->margin - fminf(g->lead[axis], 0.0f);
		o.hi[axis] = f->hi[axis] - g->margin - fmaxf(g->lead[axis], 0.0f);
	}
	return o;
}

/// How far `b` lies from `o`, the most of any side, and its extent, the most of any axis.
static float moved_from(const bpi_box3 *o, const bpi_box3 *b, int dims, float *extent)
{
	float moved = 0;
	*extent = 0;
	for (int axis = 0; axis < dims; ++axis) {
		moved = fmaxf(moved, fmaxf(fabsf(b->lo[axis] - o->lo[axis]), fabsf(b->hi[axis] - o->hi[axis])));
		*extent = fmaxf(*extent, b->hi[axis] - b->lo[axis]);
	}
	return moved;
}

/// One sample of the motion from `o` to `b` over `steps`; none for a jump.
static void note(bpi_margin_tally *s, const bpi_box3 *o, const bpi_box3 *b, int dims, uint32_t steps)
{
	float extent, moved = moved_from(o, b, dims, &extent);
	if (s->count == BPI_MARGIN_SAMPLES || moved > MARGIN_JUMP_EXTENTS * extent)
		return;
	s->speed[s->count] = moved / (float)steps;
	s->extent[s->count++] = extent;
}

void bpi_margin_sample(bpi_margin_tally *s, const bpi_fat *f, const bpi_fat_growth *g, const bpi_box3 *b, int dims,
	uint32_t now)
{
	if (f->lo[0] == INFINITY)
		return;
	bpi_box3 o = origin_of(f, g);
	note(s, &o, b, dims, BP_MAX(now - f->queried_at, 1u));
}

void bpi_margin_sample_rest(bpi_margin_tally *s, const bpi_box3 *rested, const bpi_box3 *b, int dims)
{
	note(s, rested, b, dims, 1);
}

void bpi_margin_lead(const bpi_fat *f, const bpi_fat_growth *g, const bpi_box3 *b, int dims, uint32_t now, float setting,
	float lead[3], float drift[3])
{
	for (int axis = 0; axis < 3; ++axis)
		lead[axis] = drift[axis] = 0;
	if (f->lo[0] == INFINITY)
		return;
	bpi_box3 o = origin_of(f, g);
	float steps = (float)BP_MAX(now - f->queried_at, 1u);
	float ahead = (float)atomic_load_explicit(&lead_steps, memory_order_relaxed);
	for (int axis = 0; axis < dims; ++axis) {
		float v = ((b->lo[axis] + b->hi[axis]) - (o.lo[axis] + o.hi[axis])) * 0.5f / steps;
		float extent = b->hi[axis] - b->lo[axis], cap = MARGIN_LEAD_EXTENTS * extent;
		drift[axis] = v == v ? v : 0.0f; // an infinite extent
		bool steady = fabsf(drift[axis] - g->drift[axis]) <= MARGIN_LEAD_AGREE * fabsf(g->drift[axis]);
		float reach = fmaxf(fminf(drift[axis] * ahead, cap), -cap);
		if (setting == 0 && steady && reach == reach)
			lead[axis] = reach;
	}
}

static float blend(float old, float measured)
{
	return old > 0 ? 0.75f * old + 0.25f * measured : measured;
}

/// The factor on the margin's steps; a zero-initialised state is not stretched yet.
static float stretch_of(const bpi_margin *m)
{
	return m->stretch > 0 ? m->stretch : 1.0f;
}

void bpi_margin_observe(bpi_margin *m, const bpi_margin_tally *tallies, uint32_t chunks, uint32_t held, bool moving)
{
	const float high = moving ? MARGIN_MOVING_ESCAPES_HIGH : MARGIN_ESCAPES_HIGH;
	const float low = moving ? MARGIN_MOVING_ESCAPES_LOW : MARGIN_ESCAPES_LOW;
	size_t n = 0, escaped = 0;
	for (uint32_t c = 0; c < chunks; ++c) {
		n += tallies[c].count;
		escaped += tallies[c].escaped;
	}
	float stretch = stretch_of(m);
	if (escaped > high * held)
		stretch = fminf(stretch * 1.25f, MARGIN_STRETCH_MAX);
	else if (escaped < low * held)
		stretch = fmaxf(stretch * 0.97f, MARGIN_STRETCH_MIN);
	m->stretch = stretch;
	if (n == 0 || !bpi_array_reserve(&m->gathered, 2 * n))
		return; // nothing seen (or no room to look): the estimate stands
	float *speed = m->gathered.data, *extent = speed + n;
	size_t k = 0;
	for (uint32_t c = 0; c < chunks; ++c) {
		memcpy(speed + k, tallies[c].speed, tallies[c].count * sizeof *speed);
		memcpy(extent + k, tallies[c].extent, tallies[c].count * sizeof *extent);
		k += tallies[c].count;
	}
	m->speed = blend(m->speed, bpi_select_float(speed, n, n / 2));
	m->extent = blend(m->extent, bpi_select_float(extent, n, n / 2));
}

float bpi_margin_stretch(const bpi_margin *m)
{
	return stretch_of(m);
}

float bpi_margin_value(const bpi_margin *m, float setting)
{
	if (setting > 0)
		return setting;
	return fminf(stretch_of(m) * MARGIN_STEPS * m->speed, MARGIN_EXTENTS * m->extent);
}

float bpi_margin_of_own_motion(const bpi_margin *m, const bpi_fat *f, const bpi_fat_growth *g, const bpi_box3 *b, int dims,
	uint32_t now, float world, uint32_t who)
{
	if (f->lo[0] == INFINITY)
		return world;
	bpi_box3 o = origin_of(f, g);
	float extent, moved = moved_from(&o, b, dims, &extent);
	if (!(moved <= MARGIN_JUMP_EXTENTS * extent))
		return world; // a jump, or bounds beyond float
	float speed = moved / (float)BP_MAX(now - f->queried_at, 1u);
	// Entities that start moving together would leave their boxes together, step
	// after step: a spread of the steps per entity breaks the waves.
	uint32_t h = who * 0x9E3779B1u;
	float spread = 1.0f - MARGIN_STEPS_SPREAD + 2.0f * MARGIN_STEPS_SPREAD * (float)(h >> 16) / 65536.0f;
	return fminf(stretch_of(m) * MARGIN_STEPS * spread * speed, MARGIN_EXTENTS * extent);
}

float bpi_margin_own(float world, const bpi_box3 *b, int dims)
{
	float extent = 0;
	for (int axis = 0; axis < dims; ++axis)
		extent = fmaxf(extent, b->hi[axis] - b->lo[axis]);
	return fminf(world, MARGIN_EXTENTS * extent); // a NaN extent (infinite bounds) keeps the world's
}

void bpi_margin_free(bpi_margin *m)
{
	bpi_array_free(&m->gathered);
	*m = (bpi_margin){0};
}
