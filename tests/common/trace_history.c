// SPDX-License-Identifier: MIT
// Random trace histories and the test's own record of them (trace_history.h).
#include "trace_history.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static int by_id(const void *a, const void *b)
{
	uint32_t x = ((const history_entity *)a)->id, y = ((const history_entity *)b)->id;
	return (x > y) - (x < y);
}

static void random_box(test_rng *rng, int dims, oracle_box *box)
{
	float centre[3] = {0}, half = test_rng_float(rng, 0.5f, 4.0f);
	test_rng_vec(rng, centre, dims, 0, 100, test_rng_below(rng, 2) == 0);
	box->is_sphere = test_rng_below(rng, 5) == 0;
	for (int a = 0; a < 3; ++a) {
		float h = box->is_sphere ? half : test_rng_float(rng, 0.0f, 4.0f);
		box->min[a] = a < dims ? centre[a] - h : 0;
		box->max[a] = a < dims ? centre[a] + h : 0;
	}
}

static void random_settings(test_rng *rng, oracle_box *box)
{
	box->category = test_layer(test_rng_below(rng, 3));
	box->mask = test_rng_below(rng, 4) ? UINT64_MAX : 1u | test_layer(test_rng_below(rng, 3));
	box->is_static = test_rng_below(rng, 4) == 0;
}

static bp_trace_entity as_entity(const history_entity *h)
{
	bp_trace_entity e = {.id = h->id, .category = h->box.category, .mask = h->box.mask,
		.kind = h->box.is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC,
		.shape = h->box.is_sphere ? BP_SHAPE_SPHERE : BP_SHAPE_BOX};
	memcpy(e.min, h->box.min, sizeof e.min);
	memcpy(e.max, h->box.max, sizeof e.max);
	return e;
}

static void expect_ok(bp_trace_writer *w, bp_status status)
{
	cr_assert_eq(status, BP_OK, "writer: %s", bp_trace_writer_error(w));
}

/// Destroys a few live entities, listed in a random order.
static void destroy_some(test_rng *rng, bp_trace_writer *w, history_entity *live, uint32_t *count)
{
	uint32_t k = *count > 4 ? test_rng_below(rng, 4) : 0, ids[4];
	for (uint32_t j = 0; j < k; ++j) {
		uint32_t i = test_rng_below(rng, *count);
		ids[j] = live[i].id;
		live[i] = live[--*count];
	}
	expect_ok(w, bp_trace_destroy(w, k, ids));
}

/// Creates a few: new ids, or ids destroyed earlier (not live) come back.
static void create_some(test_rng *rng, bp_trace_writer *w, history_entity *live, uint32_t *count, uint32_t *next_id,
	uint32_t n, int dims, bool first)
{
	uint32_t k = first ? n : test_rng_below(rng, 5);
	bp_trace_entity *made = malloc((k + 1) * sizeof *made);
	for (uint32_t j = 0; j < k; ++j) {
		history_entity h = {.id = (*next_id)++};
		if (!first && test_rng_below(rng, 3) == 0) { // an id not live now: one of the oldest
			uint32_t candidate = test_rng_below(rng, n);
			bool taken = false;
			for (uint32_t i = 0; i < *count && !taken; ++i)
				taken = live[i].id == candidate;
			for (uint32_t i = 0; i < j && !taken; ++i)
				taken = made[i].id == candidate;
			if (!taken)
				h.id = candidate;
		}
		random_box(rng, dims, &h.box);
		random_settings(rng, &h.box);
		made[j] = as_entity(&h);
		live[(*count)++] = h;
	}
	expect_ok(w, bp_trace_create(w, k, made));
	free(made);
}

static void change_some(test_rng *rng, bp_trace_writer *w, history_entity *live, uint32_t count)
{
	for (uint32_t k = test_rng_below(rng, 3); count && k > 0; --k) {
		history_entity *h = &live[test_rng_below(rng, count)];
		random_settings(rng, &h->box);
		h->box.is_sphere = test_rng_below(rng, 4) == 0;
		bp_trace_entity e = as_entity(h);
		expect_ok(w, bp_trace_set(w, 1, &e));
	}
}

/// Moves about a third of the live entities by a step of up to 1 on each axis.
static void move_some(test_rng *rng, bp_trace_writer *w, history_entity *live, uint32_t count, int dims)
{
	uint32_t *ids = malloc((count + 1) * sizeof *ids), m = 0;
	float *b[6];
	for (int c = 0; c < 6; ++c)
		b[c] = malloc((count + 1) * sizeof(float));
	for (uint32_t i = 0; i < count; ++i) {
		if (test_rng_below(rng, 3))
			continue;
		for (int a = 0; a < dims; ++a) {
			float step = test_rng_float(rng, -1, 1);
			live[i].box.min[a] += step;
			live[i].box.max[a] += step;
			b[a][m] = live[i].box.min[a];
			b[3 + a][m] = live[i].box.max[a];
		}
		ids[m++] = live[i].id;
	}
	bp_bounds_arrays bounds = {b[0], b[1], b[2], b[3], b[4], b[5]};
	expect_ok(w, bp_trace_move(w, m, ids, &bounds));
	free(ids);
	for (int c = 0; c < 6; ++c)
		free(b[c]);
}

void trace_history_write(const char *path, int dims, uint32_t n, uint32_t frames, uint32_t keyframe_interval,
	uint64_t seed, trace_history *out)
{
	bp_trace_writer_def def = bp_trace_writer_def_default();
	def.dims = dims;
	def.keyframe_interval = keyframe_interval;
	bp_trace_writer *w = NULL;
	cr_assert_eq(bp_trace_writer_open(path, &def, &w), BP_OK, "%s", bp_trace_open_error());
	*out = (trace_history){.dims = dims, .frames = frames, .live = calloc(frames, sizeof(history_entity *)),
		.counts = calloc(frames, sizeof(uint32_t))};
	history_entity *live = malloc((n + 5 * frames + 1) * sizeof *live);
	uint32_t count = 0, next_id = 0;
	test_rng rng = {seed};
	for (uint32_t f = 0; f < frames; ++f) {
		if (f > 0)
			destroy_some(&rng, w, live, &count);
		create_some(&rng, w, live, &count, &next_id, n, dims, f == 0);
		change_some(&rng, w, live, count);
		if (f > 0)
			move_some(&rng, w, live, count, dims);
		expect_ok(w, bp_trace_end_frame(w));
		out->counts[f] = count;
		out->live[f] = malloc((count + 1) * sizeof(history_entity));
		memcpy(out->live[f], live, count * sizeof *live);
		qsort(out->live[f], count, sizeof *live, by_id);
	}
	cr_assert_eq(bp_trace_writer_frames(w), frames);
	cr_assert_eq(bp_trace_writer_close(w), BP_OK, "%s", bp_trace_open_error());
	free(live);
}

void trace_history_free(trace_history *h)
{
	for (uint32_t f = 0; f < h->frames; ++f)
		free(h->live[f]);
	free(h->live);
	free(h->counts);
	*h = (trace_history){0};
}

oracle_box *trace_history_boxes(const bp_trace_state *s, int dims)
{
	oracle_box *boxes = calloc(s->count + 1, sizeof *boxes);
	const float *b[6] = {s->bounds.min_x, s->bounds.min_y, s->bounds.min_z, s->bounds.max_x, s->bounds.max_y,
		s->bounds.max_z};
	for (uint32_t i = 0; i < s->count; ++i) {
		for (int a = 0; a < dims; ++a) {
			boxes[i].min[a] = b[a][i];
			boxes[i].max[a] = b[3 + a][i];
		}
		boxes[i].category = s->category[i];
		boxes[i].mask = s->mask[i];
		boxes[i].is_static = s->kinds[i] == BP_KIND_STATIC;
		boxes[i].is_sphere = s->shapes[i] == BP_SHAPE_SPHERE;
	}
	return boxes;
}

void trace_history_expect_state(const trace_history *h, uint32_t k, const bp_trace_state *s)
{
	cr_assert_lt(k, h->frames);
	cr_assert_eq(s->frame, k);
	cr_assert_eq(s->count, h->counts[k], "frame %u: %u live, expected %u", k, s->count, h->counts[k]);
	oracle_box *boxes = trace_history_boxes(s, h->dims);
	history_entity *got = malloc((s->count + 1) * sizeof *got);
	for (uint32_t i = 0; i < s->count; ++i)
		got[i] = (history_entity){.id = s->ids[i], .box = boxes[i]};
	qsort(got, s->count, sizeof *got, by_id);
	for (uint32_t i = 0; i < s->count; ++i) {
		const history_entity *a = &got[i], *b = &h->live[k][i];
		cr_assert_eq(a->id, b->id, "frame %u: entity %u has id %u, expected %u", k, i, a->id, b->id);
		for (int d = 0; d < h->dims; ++d)
			cr_assert(a->box.min[d] == b->box.min[d] && a->box.max[d] == b->box.max[d], "frame %u: id %u: bounds",
				k, a->id);
		cr_assert(a->box.category == b->box.category && a->box.mask == b->box.mask &&
				  a->box.is_static == b->box.is_static && a->box.is_sphere == b->box.is_sphere,
			"frame %u: id %u: settings", k, a->id);
	}
	free(got);
	free(boxes);
}
