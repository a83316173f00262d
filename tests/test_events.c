// SPDX-License-Identifier: MIT
// Stable names (frame.h): pair events compared by handle whatever the user keys, events since
// any frame a reader holds, handles by dense index in worlds and views; the bulk setters of
// keys, filters and kinds and the host's pair filter (world.h). The oracle is a brute-force pair set over the world's
// entities, read back through bp_entity_get and named by handle.
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

typedef struct named {
	uint64_t a, b; ///< handle ids, a < b
} named;

static uint64_t id_of(bp_entity e) { return (uint64_t)e.index1 << 32 | e.generation; }

static int compare_named(const void *x, const void *y)
{
	const named *p = x, *q = y;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return p->b < q->b ? -1 : p->b > q->b;
}

/// Every pair of the world's current state by brute force (the pair rules of docs/design.md: closed
/// boxes, the AND filter, never two statics), named by handle and sorted.
static named *oracle_named(const bp_world *w, size_t *count)
{
	uint32_t n = bp_world_entity_count(w);
	bp_entity_def *defs = malloc((n + 1) * sizeof *defs);
	bp_entity *handles = malloc((n + 1) * sizeof *handles);
	for (uint32_t i = 0; i < n; ++i) {
		handles[i] = bp_world_entity_at(w, i);
		cr_assert_eq(bp_entity_get(w, handles[i], &defs[i]), BP_OK);
	}
	size_t cap = 64, k = 0;
	named *out = malloc(cap * sizeof *out);
	for (uint32_t i = 0; i < n; ++i)
		for (uint32_t j = i + 1; j < n; ++j) {
			const bp_entity_def *p = &defs[i], *q = &defs[j];
			bool overlap = true;
			for (int axis = 0; axis < 3; ++axis)
				overlap = overlap && p->min[axis] <= q->max[axis] && q->min[axis] <= p->max[axis];
			if (!overlap || !(p->category & q->mask) || !(q->category & p->mask) ||
				(p->kind == BP_KIND_STATIC && q->kind == BP_KIND_STATIC))
				continue;
			if (k == cap)
				out = realloc(out, (cap *= 2) * sizeof *out);
			uint64_t a = id_of(handles[i]), b = id_of(handles[j]);
			out[k++] = a < b ? (named){a, b} : (named){b, a};
		}
	qsort(out, k, sizeof *out, compare_named);
	free(defs);
	free(handles);
	*count = k;
	return out;
}

/// Elements of x not in y (both sorted).
static size_t difference(const named *x, size_t nx, const named *y, size_t ny, named *out)
{
	size_t i = 0, j = 0, k = 0;
	while (i < nx) {
		int order = j == ny ? -1 : compare_named(&x[i], &y[j]);
		if (order < 0)
			out[k++] = x[i++];
		else if (order > 0)
			j++;
		else
			i++, j++;
	}
	return k;
}

/// The events, in the order given, equal `want` (sorted), and each names its
/// entities' keys as the frame `keys_from` held them.
static void assert_events(const bp_pair_event *got, size_t count, const named *want, size_t want_count)
{
	cr_assert_eq(count, want_count, "%zu events, the oracle has %zu", count, want_count);
	for (size_t i = 0; i < count; ++i) {
		uint64_t a = id_of(got[i].a), b = id_of(got[i].b);
		cr_assert(a < b, "event %zu: a does not come before b", i);
		cr_assert(a == want[i].a && b == want[i].b, "event %zu differs from the oracle's", i);
	}
}

static bp_world *world_3d(void)
{
	bp_world_def def = bp_world_def_default();
	def.thread_count = 1;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	return w;
}

static bp_entity create_box(bp_world *w, float x, float y, float z, float size, uint64_t key)
{
	bp_entity_def d = bp_entity_def_default();
	d.min[0] = x, d.min[1] = y, d.min[2] = z;
	d.max[0] = x + size, d.max[1] = y + size, d.max[2] = z + size;
	d.user_key = key;
	bp_entity e;
	cr_assert_eq(bp_entity_create(w, &d, &e), BP_OK);
	return e;
}

static void move_box(bp_world *w, bp_entity e, float x, float y, float z, float size)
{
	float min[3] = {x, y, z}, max[3] = {x + size, y + size, z + size};
	cr_assert_eq(bp_entity_set_bounds(w, e, min, max), BP_OK);
}

static bool same_entity(bp_entity a, bp_entity b) { return a.index1 == b.index1 && a.generation == b.generation; }

// ---- a hand-worked case ----------------------------------------------------------

Test(events, an_entity_that_changes_partner_reports_both_events_whatever_the_keys)
{
	// All keys 0. Frame 1: A touches B. Frame 2: A moved onto C, away from B.
	bp_world *w = world_3d();
	bp_entity a = create_box(w, 0, 0, 0, 1, 0), b = create_box(w, 1, 0, 0, 1, 0), c = create_box(w, 10, 0, 0, 1, 0);
	bp_view *v1 = NULL, *v2 = NULL;
	cr_assert_eq(bp_frame_step(w, &v1), BP_OK);
	move_box(w, a, 10.5f, 0, 0, 1);
	cr_assert_eq(bp_frame_step(w, &v2), BP_OK);
	cr_assert_eq(bp_view_previous_frame(v2), bp_view_frame(v1));

	bp_pair_event began[4], ended[4];
	size_t nb, ne;
	cr_assert_eq(bp_view_events(v2, began, 4, &nb, ended, 4, &ne), BP_OK);
	cr_assert_eq(nb, 1);
	cr_assert_eq(ne, 1);
	cr_assert(same_entity(began[0].a, a) && same_entity(began[0].b, c), "began: A with C");
	cr_assert(same_entity(ended[0].a, a) && same_entity(ended[0].b, b), "ended: A with B");

	// The key-pair form names both events, though they read the same.
	bp_key_pair kb[4], ke[4];
	cr_assert_eq(bp_view_pair_events(v2, kb, 4, &nb, ke, 4, &ne), BP_OK);
	cr_assert(nb == 1 && ne == 1 && kb[0].a == 0 && kb[0].b == 0 && ke[0].a == 0 && ke[0].b == 0);

	// Counting one side while reading the other: BP_OK, both totals.
	cr_assert_eq(bp_view_events(v2, NULL, 0, &nb, ended, 4, &ne), BP_OK);
	cr_assert(nb == 1 && ne == 1);
	cr_assert_eq(bp_view_events(v2, NULL, 1, &nb, NULL, 0, &ne), BP_ERR_INVALID_ARGUMENT);

	// The views name their dense indices by handle.
	const bp_entity *names = bp_view_entities(v2);
	cr_assert(same_entity(names[0], a) && same_entity(names[1], b) && same_entity(names[2], c));
	cr_assert(same_entity(bp_world_entities(w)[2], c));
	bp_view_release(v1);
	bp_view_release(v2);
	bp_world_destroy(w);
}

Test(events, named_on_first_use_with_the_keys_each_frame_held)
{
	// A (key 1) touches B (key 2). No reader names frame 1's events, so frame 2's are named
	// when first read; nobody reads frame 3's; frame 4 changes C's key as A leaves C, so the
	// builder names its events, and the ended one keeps C's key of frame 3.
	bp_world *w = world_3d();
	bp_entity a = create_box(w, 0, 0, 0, 1, 1), b = create_box(w, 1, 0, 0, 1, 2), c = create_box(w, 10, 0, 0, 1, 3);
	bp_view *v = NULL;
	size_t nb, ne;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	cr_assert_eq(bp_view_events(v, NULL, 0, &nb, NULL, 0, &ne), BP_OK);
	cr_assert(nb == 1 && ne == 0, "frame 1: A-B began");
	bp_view_release(v);

	move_box(w, a, 10.5f, 0, 0, 1); // from B to C: bounds alone
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	cr_assert_eq(bp_view_events(v, NULL, 0, &nb, NULL, 0, &ne), BP_OK);
	cr_assert(nb == 1 && ne == 1, "frame 2 counted before its events are named");
	bp_pair_event began[2], ended[2];
	cr_assert_eq(bp_view_events(v, began, 2, &nb, ended, 2, &ne), BP_OK);
	cr_assert(nb == 1 && same_entity(began[0].a, a) && same_entity(began[0].b, c) && began[0].key_a == 1 &&
		began[0].key_b == 3);
	cr_assert(ne == 1 && same_entity(ended[0].a, a) && same_entity(ended[0].b, b) && ended[0].key_a == 1 &&
		ended[0].key_b == 2);
	bp_key_pair kb[2], ke[2];
	cr_assert_eq(bp_view_pair_events(v, kb, 2, &nb, ke, 2, &ne), BP_OK);
	cr_assert(kb[0].a == 1 && kb[0].b == 3 && ke[0].a == 1 && ke[0].b == 2);
	bp_view_release(v);

	cr_assert_eq(bp_frame_step(w, &v), BP_OK); // nothing changed; nobody reads it
	cr_assert_eq(bp_view_events(v, NULL, 0, &nb, NULL, 0, &ne), BP_OK);
	cr_assert(nb == 0 && ne == 0);
	bp_view_release(v);

	cr_assert_eq(bp_entity_set_user_key(w, c, 30), BP_OK);
	move_box(w, a, 0, 0, 0, 1); // back to B, away from C, whose key changed meanwhile
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	cr_assert_eq(bp_view_events(v, began, 2, &nb, ended, 2, &ne), BP_OK);
	cr_assert(nb == 1 && same_entity(began[0].b, b) && began[0].key_a == 1 && began[0].key_b == 2);
	cr_assert(ne == 1 && same_entity(ended[0].b, c) && ended[0].key_b == 3, "ended: C's key when the pair ended");
	bp_view_release(v);
	bp_world_destroy(w);
}

Test(events, a_slot_reused_by_another_entity_is_another_entity)
{
	// B is destroyed and D created into B's slot at B's place: the pair A-B ended and
	// A-D began, though dense indices and keys are the same.
	bp_world *w = world_3d();
	bp_entity a = create_box(w, 0, 0, 0, 1, 7), b = create_box(w, 0.5f, 0, 0, 1, 9);
	bp_view *v1 = NULL, *v2 = NULL;
	cr_assert_eq(bp_frame_step(w, &v1), BP_OK);
	cr_assert_eq(bp_entity_destroy(w, b), BP_OK);
	bp_entity d = create_box(w, 0.5f, 0, 0, 1, 9);
	cr_assert_eq(d.index1, b.index1, "the slot was reused");
	cr_assert_eq(bp_frame_step(w, &v2), BP_OK);
	bp_pair_event began[2], ended[2];
	size_t nb, ne;
	cr_assert_eq(bp_view_events(v2, began, 2, &nb, ended, 2, &ne), BP_OK);
	cr_assert(nb == 1 && same_entity(began[0].a, a) && same_entity(began[0].b, d));
	cr_assert(ne == 1 && same_entity(ended[0].a, a) && same_entity(ended[0].b, b));
	cr_assert(ended[0].key_a == 7 && ended[0].key_b == 9, "an ended pair names the keys it had");
	bp_view_release(v1);
	bp_view_release(v2);
	bp_world_destroy(w);
}

// ---- random histories against the oracle -----------------------------------------

enum { START = 300, FRAMES = 30, HELD_EVERY = 7 };

/// One frame of changes: moves, filter and kind changes, and with `lifecycle` destroys
/// and creates with keys from a small set. Frames without them keep the layout, and the
/// events come from comparing dense pairs; frames with them compare names.
static void churn(bp_world *w, test_rng *rng, bool lifecycle)
{
	uint32_t n = bp_world_entity_count(w);
	for (int k = 0; k < 40 && n > 0; ++k) {
		bp_entity e = bp_world_entity_at(w, test_rng_below(rng, n));
		move_box(w, e, test_rng_float(rng, 0, 20), test_rng_float(rng, 0, 20), test_rng_float(rng, 0, 20),
			test_rng_float(rng, 0.5f, 2.5f));
	}
	for (int k = 0; k < 5 && n > 10 && lifecycle; ++k, --n)
		cr_assert_eq(bp_entity_destroy(w, bp_world_entity_at(w, test_rng_below(rng, n))), BP_OK);
	for (int k = 0; k < 5 && lifecycle; ++k)
		create_box(w, test_rng_float(rng, 0, 20), test_rng_float(rng, 0, 20), test_rng_float(rng, 0, 20),
			test_rng_float(rng, 0.5f, 2.5f), test_rng_below(rng, 3));
	if (n > 0) { // filters and kinds change too, through the bulk calls
		uint32_t first = test_rng_below(rng, n), count = 1 + test_rng_below(rng, n - first < 8 ? n - first : 8);
		uint64_t category[8], mask[8];
		bp_kind kinds[8];
		for (uint32_t i = 0; i < count; ++i) {
			category[i] = test_layer(test_rng_below(rng, 2));
			mask[i] = test_rng_below(rng, 4) ? UINT64_MAX : 1u;
			kinds[i] = test_rng_below(rng, 3) ? BP_KIND_DYNAMIC : BP_KIND_STATIC;
		}
		cr_assert_eq(bp_entities_set_filters(w, bp_target_range(first, count), category, mask), BP_OK);
		cr_assert_eq(bp_entities_set_kinds(w, bp_target_range(first, count), kinds), BP_OK);
	}
}

static void check_history(bool incremental, uint64_t seed)
{
	test_rng rng = {seed};
	bp_world_def def = bp_world_def_default();
	def.incremental = incremental;
	def.thread_count = 2;
	bp_world *w = NULL;
	cr_assert_eq(bp_world_create(&def, &w), BP_OK);
	for (int i = 0; i < START; ++i)
		create_box(w, test_rng_float(&rng, 0, 20), test_rng_float(&rng, 0, 20), test_rng_float(&rng, 0, 20),
			test_rng_float(&rng, 0.5f, 2.5f), 0); // every key the same
	size_t prev_count = 0, held_count = 0;
	named *prev = NULL, *held_pairs = NULL;
	bp_view *held = NULL;
	for (int frame = 0; frame < FRAMES; ++frame) {
		churn(w, &rng, frame % 3 != 1);
		size_t now_count;
		named *now = oracle_named(w, &now_count);
		bp_view *v = NULL;
		cr_assert_eq(bp_frame_step(w, &v), BP_OK, "%s", bp_world_last_error(w));
		size_t room = now_count + prev_count + held_count + 1, nb, ne;
		bp_pair_event *began = malloc(room * sizeof *began), *ended = malloc(room * sizeof *ended);
		named *want = malloc(room * sizeof *want);
		cr_assert_eq(bp_view_events(v, began, room, &nb, ended, room, &ne), BP_OK);
		assert_events(began, nb, want, difference(now, now_count, prev, prev_count, want));
		assert_events(ended, ne, want, difference(prev, prev_count, now, now_count, want));
		if (held) { // a reader that skipped frames: the net change since its view
			cr_assert_eq(bp_view_events_since(v, held, began, room, &nb, ended, room, &ne), BP_OK);
			assert_events(began, nb, want, difference(now, now_count, held_pairs, held_count, want));
			assert_events(ended, ne, want, difference(held_pairs, held_count, now, now_count, want));
			cr_assert_eq(bp_view_events_since(held, v, NULL, 0, &nb, NULL, 0, &ne), BP_ERR_INVALID_ARGUMENT,
				"a later frame as the earlier one");
		}
		free(began);
		free(ended);
		free(want);
		if (frame % HELD_EVERY == 0) { // hold this view for the frames to come
			if (held)
				bp_view_release(held);
			free(held_pairs);
			held = v;
			held_pairs = malloc((now_count + 1) * sizeof *held_pairs);
			memcpy(held_pairs, now, now_count * sizeof *now);
			held_count = now_count;
		} else {
			bp_view_release(v);
		}
		free(prev);
		prev = now;
		prev_count = now_count;
	}
	if (held)
		bp_view_release(held);
	free(held_pairs);
	free(prev);
	bp_world_destroy(w);
	cr_assert_eq(bp_allocated_bytes(), 0);
}

Test(events, random_histories_full_steps, .timeout = 120)
{
	for (uint64_t seed = 1; seed <= 4; ++seed)
		check_history(false, seed);
}

Test(events, random_histories_incremental_steps, .timeout = 120)
{
	for (uint64_t seed = 11; seed <= 14; ++seed)
		check_history(true, seed);
}

Test(events, since_refuses_another_worlds_view)
{
	bp_world *w1 = world_3d(), *w2 = world_3d();
	create_box(w1, 0, 0, 0, 1, 0);
	create_box(w2, 0, 0, 0, 1, 0);
	bp_view *v1 = NULL, *v2 = NULL;
	cr_assert_eq(bp_frame_step(w1, &v1), BP_OK);
	cr_assert_eq(bp_frame_step(w2, &v2), BP_OK);
	size_t nb, ne;
	cr_assert_eq(bp_view_events_since(v1, v2, NULL, 0, &nb, NULL, 0, &ne), BP_ERR_INVALID_ARGUMENT);
	cr_assert_eq(bp_view_events_since(v1, v1, NULL, 0, &nb, NULL, 0, &ne), BP_OK);
	cr_assert(nb == 0 && ne == 0, "a frame against itself has no events");
	bp_view_release(v1);
	bp_view_release(v2);
	bp_world_destroy(w1);
	bp_world_destroy(w2);
}

// ---- bulk keys, filters and kinds --------------------------------------------------

Test(bulk, keys_filters_and_kinds_are_all_or_nothing)
{
	bp_world *w = world_3d();
	for (int i = 0; i < 6; ++i)
		create_box(w, (float)i, 0, 0, 1.5f, 100 + (uint64_t)i);
	const uint64_t keys[3] = {7, 8, 9};
	cr_assert_eq(bp_entities_set_user_keys(w, bp_target_range(2, 3), keys), BP_OK);
	const uint64_t *stored = bp_world_user_keys(w);
	cr_assert(stored[1] == 101 && stored[2] == 7 && stored[4] == 9 && stored[5] == 105);
	cr_assert_eq(bp_entities_set_user_keys(w, bp_target_range(4, 3), keys), BP_ERR_OUT_OF_RANGE);
	cr_assert_eq(bp_world_user_keys(w)[4], 9, "a range past the end changed a key");
	cr_assert_eq(bp_entities_set_user_keys(w, bp_target_range(0, 1), NULL), BP_ERR_INVALID_ARGUMENT);

	const bp_kind kinds[3] = {BP_KIND_STATIC, (bp_kind)7, BP_KIND_STATIC};
	cr_assert_eq(bp_entities_set_kinds(w, bp_target_range(0, 3), kinds), BP_ERR_INVALID_ARGUMENT);
	cr_assert(strstr(bp_world_last_error(w), "kinds[1]") != NULL, "%s", bp_world_last_error(w));
	bp_entity_def def;
	cr_assert_eq(bp_entity_get(w, bp_world_entity_at(w, 0), &def), BP_OK);
	cr_assert_eq(def.kind, BP_KIND_DYNAMIC, "a refused call changed entity 0's kind");

	// Statics 0..2 never pair with each other; filters keep 3 and 4 apart.
	const bp_kind statics[3] = {BP_KIND_STATIC, BP_KIND_STATIC, BP_KIND_STATIC};
	cr_assert_eq(bp_entities_set_kinds(w, bp_target_range(0, 3), statics), BP_OK);
	const uint64_t category[2] = {1, 2}, mask[2] = {~UINT64_C(2), ~UINT64_C(1)};
	cr_assert_eq(bp_entities_set_filters(w, bp_target_range(3, 2), category, mask), BP_OK);
	cr_assert_eq(bp_world_step(w), BP_OK);
	size_t count, want_count;
	const bp_pair *pairs = bp_world_pairs(w, &count);
	named *want = oracle_named(w, &want_count);
	cr_assert_eq(count, want_count);
	const bp_entity *handles = bp_world_entities(w);
	for (size_t i = 0; i < count; ++i) {
		named got = {id_of(handles[pairs[i].lo]), id_of(handles[pairs[i].hi])};
		if (got.a > got.b)
			got = (named){got.b, got.a};
		cr_assert(bsearch(&got, want, want_count, sizeof *want, compare_named), "pair %zu is not the oracle's", i);
	}
	free(want);
	bp_world_destroy(w);
}

Test(names, the_release_of_a_view_under_its_name_before_0_5)
{
	bp_world *w = world_3d();
	create_box(w, 0, 0, 0, 1, 0);
	bp_view *v = NULL;
	cr_assert_eq(bp_frame_step(w, &v), BP_OK);
	// The old name is deprecated: the warning is what this test does not want to see.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	cr_assert_eq(bp_frame_release(v), BP_OK);
#pragma GCC diagnostic pop
	cr_assert_eq(bp_view_release(v), BP_ERR_STALE_HANDLE, "the old name released the view's one reference");
	bp_world_destroy(w);
}

// ---- the host's pair filter ----------------------------------------------------------

static bool keys_not_multiple_of_3(bp_entity a, bp_entity b, uint64_t key_a, uint64_t key_b, void *user)
{
	(void)a, (void)b;
	atomic_fetch_add((_Atomic size_t *)user, 1);
	return (key_a + key_b) % 3 != 0;
}

/// The pairs of `w`'s last step (or of `view`) equal, in order, those of `plain` the
/// filter keeps.
static void assert_filtered(const bp_pair *got, size_t got_count, const bp_world *plain)
{
	size_t count;
	const bp_pair *all = bp_world_pairs(plain, &count);
	const uint64_t *key = bp_world_user_keys(plain);
	size_t k = 0;
	for (size_t i = 0; i < count; ++i)
		if ((key[all[i].lo] + key[all[i].hi]) % 3 != 0) {
			cr_assert(k < got_count, "a pair the filter keeps is missing");
			cr_assert(got[k].lo == all[i].lo && got[k].hi == all[i].hi, "pair %zu differs", k);
			++k;
		}
	cr_assert_eq(k, got_count, "a pair the filter drops was reported");
}

Test(pair_filter, drops_what_the_host_refuses_and_keeps_the_order, .timeout = 60)
{
	for (int incremental = 0; incremental <= 1; ++incremental) {
		test_rng rng = {99 + (uint64_t)incremental};
		static _Atomic size_t calls;
		bp_world_def def = bp_world_def_default();
		def.incremental = incremental;
		def.canonical_pairs = true;
		bp_world *plain = NULL, *filtered = NULL;
		cr_assert_eq(bp_world_create(&def, &plain), BP_OK);
		def.pair_filter = keys_not_multiple_of_3;
		def.pair_filter_user = &calls;
		cr_assert_eq(bp_world_create(&def, &filtered), BP_OK);
		for (int i = 0; i < 400; ++i) {
			float x = test_rng_float(&rng, 0, 15), y = test_rng_float(&rng, 0, 15), z = test_rng_float(&rng, 0, 15);
			create_box(plain, x, y, z, 1.5f, (uint64_t)i);
			create_box(filtered, x, y, z, 1.5f, (uint64_t)i);
		}
		for (int frame = 0; frame < 5; ++frame) {
			uint32_t d = test_rng_below(&rng, 400); // the same entity in both: created in the same order
			float x = test_rng_float(&rng, 0, 15);
			move_box(plain, bp_world_entity_at(plain, d), x, x, x, 1.5f);
			move_box(filtered, bp_world_entity_at(filtered, d), x, x, x, 1.5f);
			cr_assert_eq(bp_world_step(plain), BP_OK);
			atomic_store(&calls, 0);
			cr_assert_eq(bp_world_step(filtered), BP_OK);
			size_t got_count;
			const bp_pair *got = bp_world_pairs(filtered, &got_count);
			size_t plain_count;
			bp_world_pairs(plain, &plain_count);
			cr_assert_eq(atomic_load(&calls), plain_count, "the filter is asked once about each pair");
			cr_assert_lt(got_count, plain_count, "the filter dropped nothing");
			assert_filtered(got, got_count, plain);
			bp_view *view = NULL; // and through the frame builder
			cr_assert_eq(bp_frame_step(filtered, &view), BP_OK);
			const bp_pair *frame_pairs = bp_view_pairs(view, &got_count);
			assert_filtered(frame_pairs, got_count, plain);
			bp_view_release(view);
		}
		bp_world_destroy(plain);
		bp_world_destroy(filtered);
	}
}

// ---- many entities: the merge cut into parts -----------------------------------------

/// The pairs of a view named by handle, sorted.
static named *view_named(const bp_view *v, size_t *count)
{
	const bp_pair *pairs = bp_view_pairs(v, count);
	const bp_entity *handles = bp_view_entities(v);
	named *out = malloc((*count + 1) * sizeof *out);
	for (size_t i = 0; i < *count; ++i) {
		uint64_t a = id_of(handles[pairs[i].lo]), b = id_of(handles[pairs[i].hi]);
		out[i] = a < b ? (named){a, b} : (named){b, a};
	}
	qsort(out, *count, sizeof *out, compare_named);
	return out;
}

// Views of 40,000 entities on 4 threads: the events of frames of the same layout come from
// a merge cut into parts by lo; they must be the set differences of the two frames' pairs
// (whose pair sets the other suites check against brute force).
Test(events, many_entities_events_are_the_difference_of_the_pair_sets, .timeout = 120)
{
	enum { MANY = 40000 };
	static oracle_box boxes[MANY];
	test_random_boxes(boxes, MANY, 3, 50.0f, 2.0f, false, 4242); // ~2 pairs an entity: part edges have pairs
	bp_world_def def = bp_world_def_default();
	def.thread_count = 4;
	bp_world *w = test_world_from_def(boxes, MANY, &def);
	bp_entity_destroy(w, bp_world_entity_at(w, 5)); // dense order no longer handle order
	test_rng rng = {17};
	bp_view *prev = NULL;
	cr_assert_eq(bp_frame_step(w, &prev), BP_OK);
	for (int frame = 0; frame < 4; ++frame) {
		uint32_t n = bp_world_entity_count(w);
		for (uint32_t k = 0; k < n / 20; ++k) {
			float x = test_rng_float(&rng, 0, 50), y = test_rng_float(&rng, 0, 50), z = test_rng_float(&rng, 0, 50);
			move_box(w, bp_world_entity_at(w, test_rng_below(&rng, n)), x, y, z, 2.0f);
		}
		bp_view *v = NULL;
		cr_assert_eq(bp_frame_step(w, &v), BP_OK);
		size_t now_count, then_count, nb, ne;
		named *now = view_named(v, &now_count), *then = view_named(prev, &then_count);
		named *want = malloc((now_count + then_count + 1) * sizeof *want);
		bp_view_events(v, NULL, 0, &nb, NULL, 0, &ne);
		bp_pair_event *began = malloc((nb + 1) * sizeof *began), *ended = malloc((ne + 1) * sizeof *ended);
		cr_assert_eq(bp_view_events(v, began, nb, &nb, ended, ne, &ne), BP_OK);
		cr_assert_gt(nb, 100, "frame %d: too few events to cut into parts", frame);
		assert_events(began, nb, want, difference(now, now_count, then, then_count, want));
		assert_events(ended, ne, want, difference(then, then_count, now, now_count, want));
		free(began), free(ended), free(want), free(now), free(then);
		bp_view_release(prev);
		prev = v;
	}
	bp_view_release(prev);
	bp_world_destroy(w);
}
