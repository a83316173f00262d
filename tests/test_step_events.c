// SPDX-License-Identifier: MIT
// Step events (bp_world_set_events, bp_world_events): after every bp_world_step, the pairs
// that began and ended equal the difference of the brute-force pair sets of consecutive
// steps, by handle, through moves, creates, destroys (slots reused) and filter changes; a
// sensor selection reports exactly the pairs with a sensor in them.
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

enum { SLOTS = 400, START = 250, STEPS = 30 };
/// The sensors' layer, in the high word: selecting it must reach past bit 31.
#define SENSOR (UINT64_C(1) << 40)

typedef struct model_entity {
	oracle_box box;
	uint64_t key;
	bp_entity handle;
	bool live;
} model_entity;

typedef struct model {
	bp_world *w;
	model_entity e[SLOTS];
	test_rng rng;
	uint64_t next_key;
} model;

static uint64_t id(bp_entity e) { return (uint64_t)e.index1 << 32 | e.generation; }

static int compare_events(const void *x, const void *y)
{
	const bp_pair_event *p = x, *q = y;
	if (id(p->a) != id(q->a))
		return id(p->a) < id(q->a) ? -1 : 1;
	return id(p->b) < id(q->b) ? -1 : id(p->b) > id(q->b);
}

static void random_entity(model *m, model_entity *e)
{
	float c[3];
	test_rng_vec(&m->rng, c, 3, 0, 50, false);
	float r = test_rng_float(&m->rng, 0.5f, 4);
	for (int k = 0; k < 3; ++k)
		e->box.min[k] = c[k] - r, e->box.max[k] = c[k] + r;
	e->box.category = test_rng_below(&m->rng, 4) == 0 ? SENSOR : test_layer(test_rng_below(&m->rng, 3));
	e->box.mask = test_rng_below(&m->rng, 8) == 0 ? 0 : UINT64_MAX;
	e->box.is_static = test_rng_below(&m->rng, 5) == 0;
	e->box.is_sphere = test_rng_below(&m->rng, 4) == 0;
	e->key = m->next_key++;
}

static void create(model *m)
{
	model_entity e = {0};
	random_entity(m, &e);
	bp_entity_def d = bp_entity_def_default();
	memcpy(d.min, e.box.min, sizeof d.min);
	memcpy(d.max, e.box.max, sizeof d.max);
	d.category = e.box.category, d.mask = e.box.mask, d.user_key = e.key;
	d.kind = e.box.is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
	d.shape = e.box.is_sphere ? BP_SHAPE_SPHERE : BP_SHAPE_BOX;
	cr_assert_eq(bp_entity_create(m->w, &d, &e.handle), BP_OK);
	cr_assert_lt(e.handle.index1, SLOTS + 1);
	e.live = true;
	m->e[e.handle.index1 - 1] = e;
}

/// The selected pairs of the model as events, sorted by handle: brute force over the
/// world's dense order (the world is asked only which handle sits where).
static bp_pair_event *expected_pairs(const model *m, uint64_t categories, size_t *count)
{
	uint32_t n = bp_world_entity_count(m->w);
	const bp_entity *dense = bp_world_entities(m->w);
	oracle_box *boxes = calloc(n + 1, sizeof *boxes);
	const model_entity **at = calloc(n + 1, sizeof *at);
	for (uint32_t d = 0; d < n; ++d) {
		at[d] = &m->e[dense[d].index1 - 1];
		cr_assert(at[d]->live && id(at[d]->handle) == id(dense[d]));
		boxes[d] = at[d]->box;
	}
	oracle_pairs pairs = oracle_find_pairs(boxes, n, 3);
	bp_pair_event *events = calloc(pairs.count + 1, sizeof *events);
	size_t k = 0;
	for (size_t i = 0; i < pairs.count; ++i) {
		const model_entity *a = at[pairs.data[i].lo], *b = at[pairs.data[i].hi];
		if (!((a->box.category | b->box.category) & categories))
			continue;
		if (id(a->handle) > id(b->handle)) {
			const model_entity *t = a;
			a = b, b = t;
		}
		events[k++] = (bp_pair_event){a->handle, b->handle, a->key, b->key};
	}
	qsort(events, k, sizeof *events, compare_events);
	oracle_pairs_free(&pairs);
	free(boxes), free(at);
	*count = k;
	return events;
}

/// Events in `x` and not in `y` (both sorted), keys from x.
static size_t difference(const bp_pair_event *x, size_t nx, const bp_pair_event *y, size_t ny, bp_pair_event *out)
{
	size_t n = 0, j = 0;
	for (size_t i = 0; i < nx; ++i) {
		while (j < ny && compare_events(&y[j], &x[i]) < 0)
			++j;
		if (j == ny || compare_events(&y[j], &x[i]) != 0)
			out[n++] = x[i];
	}
	return n;
}

static void expect_events(const model *m, const bp_pair_event *now, size_t n_now, const bp_pair_event *then,
	size_t n_then, int step)
{
	bp_pair_event *want_b = calloc(n_now + 1, sizeof *want_b), *want_e = calloc(n_then + 1, sizeof *want_e);
	size_t nb = difference(now, n_now, then, n_then, want_b), ne = difference(then, n_then, now, n_now, want_e);
	size_t got_nb = SIZE_MAX, got_ne = SIZE_MAX;
	cr_assert_eq(bp_world_events(m->w, NULL, 0, &got_nb, NULL, 0, &got_ne), BP_OK, "step %d: count", step);
	cr_assert(got_nb == nb && got_ne == ne, "step %d: %zu began, %zu ended; want %zu, %zu", step, got_nb, got_ne, nb,
		ne);
	bp_pair_event *got_b = calloc(nb + 1, sizeof *got_b), *got_e = calloc(ne + 1, sizeof *got_e);
	cr_assert_eq(bp_world_events(m->w, got_b, nb, &got_nb, got_e, ne, &got_ne), BP_OK);
	for (size_t i = 0; i < nb; ++i)
		cr_assert(compare_events(&got_b[i], &want_b[i]) == 0 && got_b[i].key_a == want_b[i].key_a &&
				  got_b[i].key_b == want_b[i].key_b,
			"step %d: began[%zu]", step, i);
	for (size_t i = 0; i < ne; ++i)
		cr_assert(compare_events(&got_e[i], &want_e[i]) == 0 && got_e[i].key_a == want_e[i].key_a &&
				  got_e[i].key_b == want_e[i].key_b,
			"step %d: ended[%zu]", step, i);
	if (nb >= 2)
		cr_assert_eq(bp_world_events(m->w, got_b, nb - 1, &got_nb, NULL, 0, &got_ne), BP_ERR_OUT_OF_RANGE);
	free(want_b), free(want_e), free(got_b), free(got_e);
}

/// Moves, key and filter changes, destroys and creates between steps.
static void churn(model *m)
{
	for (uint32_t s = 0; s < SLOTS; ++s) {
		model_entity *e = &m->e[s];
		if (!e->live)
			continue;
		uint32_t roll = test_rng_below(&m->rng, 20);
		if (roll < 5) { // move
			float shift[3];
			test_rng_vec(&m->rng, shift, 3, -3, 3, false);
			for (int k = 0; k < 3; ++k)
				e->box.min[k] += shift[k], e->box.max[k] += shift[k];
			cr_assert_eq(bp_entity_set_bounds(m->w, e->handle, e->box.min, e->box.max), BP_OK);
		} else if (roll == 5) { // a team switch
			e->box.category = e->box.category == SENSOR ? 1u : SENSOR;
			cr_assert_eq(bp_entity_set_filter(m->w, e->handle, e->box.category, e->box.mask), BP_OK);
		} else if (roll == 6) {
			e->key = m->next_key++;
			cr_assert_eq(bp_entity_set_user_key(m->w, e->handle, e->key), BP_OK);
		} else if (roll == 7) {
			cr_assert_eq(bp_entity_destroy(m->w, e->handle), BP_OK);
			e->live = false;
		}
	}
	for (uint32_t k = test_rng_below(&m->rng, 20); k > 0 && bp_world_entity_count(m->w) < SLOTS - 1; --k)
		create(m);
}

/// A history of STEPS steps whose selection is `categories`, then `switch_to` (when not 0)
/// from the middle step on: the events at the switch are the change of the selected set.
static void run_history(uint64_t categories, uint64_t switch_to, bool incremental, uint64_t seed)
{
	model *m = calloc(1, sizeof *m);
	m->rng.state = seed;
	bp_world_def def = bp_world_def_default();
	def.thread_count = 1;
	def.incremental = incremental;
	cr_assert_eq(bp_world_create(&def, &m->w), BP_OK);
	for (int i = 0; i < START; ++i)
		create(m);
	size_t n_then = 0, n_now = 0;
	bp_pair_event *then = calloc(1, sizeof *then);
	cr_assert_eq(bp_world_events(m->w, NULL, 0, &n_now, NULL, 0, &n_now), BP_ERR_UNSUPPORTED, "off by default");
	cr_assert_eq(bp_world_set_events(m->w, categories), BP_OK);
	cr_assert_eq(bp_world_events_categories(m->w), categories);
	cr_assert_eq(bp_world_events(m->w, NULL, 0, &n_now, NULL, 0, &n_then), BP_OK);
	cr_assert(n_now == 0 && n_then == 0, "no step yet: no events");
	n_then = 0;
	for (int step = 0; step < STEPS; ++step) {
		if (step == STEPS / 2 && switch_to) {
			categories = switch_to;
			cr_assert_eq(bp_world_set_events(m->w, categories), BP_OK);
		}
		cr_assert_eq(bp_world_step(m->w), BP_OK, "%s", bp_world_last_error(m->w));
		bp_pair_event *now = expected_pairs(m, categories, &n_now);
		expect_events(m, now, n_now, then, n_then, step);
		free(then);
		then = now, n_then = n_now;
		churn(m);
	}
	free(then);
	bp_world_destroy(m->w);
	free(m);
}

Test(step_events, every_pair_equals_the_difference_of_consecutive_pair_sets, .timeout = 120)
{
	run_history(UINT64_MAX, 0, false, 3);
	run_history(UINT64_MAX, 0, true, 4);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(step_events, sensors_only_report_pairs_with_a_sensor_in_them, .timeout = 120)
{
	run_history(SENSOR, 0, false, 5);
	run_history(SENSOR, 0, true, 6);
}

Test(step_events, a_new_selection_reports_the_pairs_that_entered_and_left_it, .timeout = 120)
{
	run_history(SENSOR, test_layer(1), false, 7);
	run_history(UINT64_MAX, SENSOR, true, 8);
	run_history(test_layer(0), UINT64_MAX, false, 9);
}

Test(step_events, a_filter_change_mid_contact_begins_and_ends_the_pair)
{
	// A [0,2] and B [1,3] overlap on every step; only A's category changes.
	bp_world_def def = bp_world_def_default();
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_entity_def d = bp_entity_def_default();
	bp_entity a, b;
	d.max[0] = d.max[1] = d.max[2] = 2;
	cr_assert_eq(bp_entity_create(w, &d, &a), BP_OK);
	d.min[0] = d.min[1] = d.min[2] = 1;
	d.max[0] = d.max[1] = d.max[2] = 3;
	cr_assert_eq(bp_entity_create(w, &d, &b), BP_OK);
	cr_assert_eq(bp_world_set_events(w, SENSOR), BP_OK);
	bp_pair_event began[2], ended[2];
	size_t nb = 0, ne = 0;
	cr_assert_eq(bp_world_step(w), BP_OK);
	cr_assert_eq(bp_world_events(w, began, 2, &nb, ended, 2, &ne), BP_OK);
	cr_assert(nb == 0 && ne == 0, "no sensor in the pair");
	cr_assert_eq(bp_entity_set_filter(w, a, SENSOR, UINT64_MAX), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK);
	cr_assert_eq(bp_world_events(w, began, 2, &nb, ended, 2, &ne), BP_OK);
	cr_assert(nb == 1 && ne == 0 && id(began[0].a) == id(a) && id(began[0].b) == id(b), "A became a sensor: began");
	cr_assert_eq(bp_world_step(w), BP_OK);
	cr_assert_eq(bp_world_events(w, began, 2, &nb, ended, 2, &ne), BP_OK);
	cr_assert(nb == 0 && ne == 0, "still a sensor pair: nothing");
	cr_assert_eq(bp_entity_set_filter(w, a, 1, UINT64_MAX), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK);
	cr_assert_eq(bp_world_events(w, began, 2, &nb, ended, 2, &ne), BP_OK);
	cr_assert(nb == 0 && ne == 1 && id(ended[0].a) == id(a) && id(ended[0].b) == id(b), "A left the sensors: ended");
	bp_world_destroy(w);
}

Test(step_events, a_failed_step_keeps_the_events_and_a_new_selection_keeps_the_last_names)
{
	// Period 10: boxes A [0,1] and B [0.5,1.5] overlap; growing C past period / 2 fails the step.
	bp_world_def def = bp_world_def_default();
	def.periodic = true;
	def.period[0] = def.period[1] = def.period[2] = 10;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	bp_entity_def d = bp_entity_def_default();
	bp_entity a, b, c;
	d.max[0] = d.max[1] = d.max[2] = 1;
	cr_assert_eq(bp_entity_create(w, &d, &a), BP_OK);
	d.min[0] = d.min[1] = d.min[2] = 0.5f;
	d.max[0] = d.max[1] = d.max[2] = 1.5f;
	cr_assert_eq(bp_entity_create(w, &d, &b), BP_OK);
	d.min[0] = d.min[1] = d.min[2] = 5;
	d.max[0] = d.max[1] = d.max[2] = 6;
	cr_assert_eq(bp_entity_create(w, &d, &c), BP_OK);
	cr_assert_eq(bp_world_set_events(w, UINT64_MAX), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK);
	bp_pair_event began[2], ended[2];
	size_t nb = 0, ne = 0;
	cr_assert_eq(bp_world_events(w, began, 2, &nb, ended, 2, &ne), BP_OK);
	cr_assert(nb == 1 && ne == 0 && id(began[0].a) == id(a) && id(began[0].b) == id(b));
	float lo[3] = {5, 5, 5}, hi[3] = {11, 6, 6};
	cr_assert_eq(bp_entity_set_bounds(w, c, lo, hi), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_ERR_PERIODIC_EXTENT);
	cr_assert_eq(bp_world_events(w, began, 2, &nb, ended, 2, &ne), BP_OK);
	cr_assert(nb == 1 && ne == 0, "the failed step kept the events of the one before");
	// C back to [5, 6]: the step succeeds and nothing changed for A and B.
	hi[0] = 6;
	cr_assert_eq(bp_entity_set_bounds(w, c, lo, hi), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK);
	cr_assert_eq(bp_world_events(w, began, 2, &nb, ended, 2, &ne), BP_OK);
	cr_assert(nb == 0 && ne == 0);
	// A and B are in category 1: a new selection that still holds them changes nothing, the
	// same one again neither; one that drops them ends their pair; off, then on, begins it.
	cr_assert_eq(bp_world_set_events(w, 1), BP_OK);
	cr_assert_eq(bp_world_events(w, began, 2, &nb, ended, 2, &ne), BP_OK);
	cr_assert(nb == 0 && ne == 0, "no step since the new selection: no events");
	cr_assert_eq(bp_world_step(w), BP_OK);
	cr_assert_eq(bp_world_events(w, began, 2, &nb, ended, 2, &ne), BP_OK);
	cr_assert(nb == 0 && ne == 0, "the pair was selected before and after");
	cr_assert_eq(bp_world_set_events(w, 1), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK);
	cr_assert_eq(bp_world_events(w, began, 2, &nb, ended, 2, &ne), BP_OK);
	cr_assert(nb == 0 && ne == 0);
	cr_assert_eq(bp_world_set_events(w, 2), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK);
	cr_assert_eq(bp_world_events(w, began, 2, &nb, ended, 2, &ne), BP_OK);
	cr_assert(nb == 0 && ne == 1 && id(ended[0].a) == id(a) && id(ended[0].b) == id(b), "left the selection: ended");
	cr_assert_eq(bp_world_set_events(w, 0), BP_OK);
	cr_assert_eq(bp_world_events(w, NULL, 0, &nb, NULL, 0, &ne), BP_ERR_UNSUPPORTED);
	cr_assert_eq(bp_world_set_events(w, 1), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK);
	cr_assert_eq(bp_world_events(w, began, 2, &nb, ended, 2, &ne), BP_OK);
	cr_assert(nb == 1 && ne == 0, "turned on: every selected pair began");
	cr_assert_eq(bp_world_set_events(w, 0), BP_OK);
	cr_assert_eq(bp_world_events(NULL, NULL, 0, &nb, NULL, 0, &ne), BP_ERR_INVALID_ARGUMENT);
	bp_world_destroy(w);
}
