// SPDX-License-Identifier: MIT
// libFuzzer target: the public API driven by a byte-coded sequence of operations against a
// shadow model of the world. Every call's status is predicted from the model; after every
// step the pairs are checked against a brute-force oracle over the model, and every
// published frame against the oracle of the snapshot that was submitted for it.
#include "fuzz_common.h"
#include <math.h>

enum {
	MAX_RECORDS = 64,  ///< handles remembered, live or stale
	MAX_VIEWS = 3,     ///< views held at once
	MAX_SUBMITS = 16,  ///< submitted frames whose expected pairs are kept
};

/// One handle the sequence has seen, with what the world should hold for it.
typedef struct record {
	bp_entity handle;
	bool live;
	fuzz_box box;
} record;

/// The expected pairs of one submitted frame, in the dense order of its snapshot.
typedef struct submitted {
	uint64_t frame;
	uint32_t n;
	bp_pair *pairs;
	size_t count;
	fuzz_box *boxes; ///< the snapshot, for query checks
} submitted;

typedef struct state {
	fuzz_reader in;
	bp_world *world;
	int dims;
	record records[MAX_RECORDS];
	uint32_t record_count;
	bp_view *views[MAX_VIEWS];
	submitted submits[MAX_SUBMITS];
	uint64_t last_submit;
	bool overflow_submitted; ///< a snapshot whose span overflows float was submitted (see span_overflows)
} state;

/// A coordinate from one byte: mostly small multiples of 0.5, sometimes a special value.
static float decode_coord(uint8_t b)
{
	switch (b) {
	case 0: return NAN;
	case 1: return INFINITY;
	case 2: return -INFINITY;
	case 3: return -0.0f;
	case 4: return 3.0e38f;
	case 5: return -3.0e38f;
	case 6: return 1e-40f; // subnormal
	default: return (float)((int)b - 136) * 0.5f;
	}
}

/// An extent: usually 0..7.5 in steps of 0.5; top values are negative (inverted bounds)
/// and 0 gives NaN.
static float decode_extent(uint8_t b)
{
	if (b == 0)
		return NAN;
	if (b >= 248)
		return -(float)(b - 247) * 0.5f;
	return (float)(b & 15) * 0.5f;
}

static void decode_bounds(state *st, float min[3], float max[3])
{
	for (int k = 0; k < 3; ++k) {
		min[k] = decode_coord(fuzz_byte(&st->in));
		max[k] = min[k] + decode_extent(fuzz_byte(&st->in));
	}
}

/// The status the library must return for these bounds (OK, NOT_FINITE, INVERTED), or
/// -1 when both faults are present on different axes (either may be reported).
static int bounds_status(const float *min, const float *max, int dims)
{
	bool not_finite = false, inverted = false;
	for (int k = 0; k < dims; ++k) {
		if (!isfinite(min[k]) || !isfinite(max[k]))
			not_finite = true;
		else if (min[k] > max[k])
			inverted = true;
	}
	if (not_finite && inverted)
		return -1;
	return not_finite ? BP_ERR_NOT_FINITE : inverted ? BP_ERR_INVERTED_BOUNDS : BP_OK;
}

static void expect_bounds_status(bp_status got, int want, const char *what)
{
	if (want < 0)
		FUZZ_CHECK(got == BP_ERR_NOT_FINITE || got == BP_ERR_INVERTED_BOUNDS, "%s: %s", what, bp_status_string(got));
	else
		FUZZ_CHECK((int)got == want, "%s: %s, expected %s", what, bp_status_string(got),
			bp_status_string((bp_status)want));
}

static uint32_t live_count(const state *st)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < st->record_count; ++i)
		n += st->records[i].live;
	return n;
}

static record *find_record(state *st, bp_entity h)
{
	for (uint32_t i = 0; i < st->record_count; ++i)
		if (st->records[i].live && st->records[i].handle.index1 == h.index1 &&
			st->records[i].handle.generation == h.generation)
			return &st->records[i];
	return NULL;
}

/// A handle picked by a byte: a remembered one (live or stale), the null handle or junk.
static bp_entity pick_handle(state *st)
{
	uint8_t b = fuzz_byte(&st->in);
	if (b == 255)
		return (bp_entity){0, 0};
	if (b == 254)
		return (bp_entity){1000, 1};
	if (st->record_count == 0)
		return (bp_entity){1, 0};
	return st->records[b % st->record_count].handle;
}

/// Room for one more record: reuses a stale record's slot when the table is full.
static record *new_record(state *st)
{
	if (st->record_count < MAX_RECORDS)
		return &st->records[st->record_count++];
	for (uint32_t i = 0; i < MAX_RECORDS; ++i)
		if (!st->records[i].live)
			return &st->records[i];
	return NULL;
}

/// The model in the world's dense order (through bp_world_entity_at), checked entity by
/// entity against bp_entity_get. The caller frees.
static fuzz_box *dense_model(state *st, uint32_t *n_out)
{
	uint32_t n = bp_world_entity_count(st->world);
	FUZZ_CHECK(n == live_count(st), "entity_count %u, model %u", n, live_count(st));
	fuzz_box *boxes = malloc((n + 1) * sizeof *boxes);
	FUZZ_CHECK(boxes, "out of memory");
	for (uint32_t i = 0; i < n; ++i) {
		bp_entity h = bp_world_entity_at(st->world, i);
		record *r = find_record(st, h);
		FUZZ_CHECK(r, "dense %u: handle {%u, %u} not in the model", i, h.index1, h.generation);
		uint32_t dense;
		FUZZ_CHECK(bp_entity_dense_index(st->world, h, &dense) == BP_OK && dense == i, "dense index of %u", i);
		bp_entity_def def;
		FUZZ_CHECK(bp_entity_get(st->world, h, &def) == BP_OK, "get %u", i);
		for (int k = 0; k < st->dims; ++k)
			FUZZ_CHECK(memcmp(&def.min[k], &r->box.min[k], sizeof(float)) == 0 &&
					memcmp(&def.max[k], &r->box.max[k], sizeof(float)) == 0,
				"dense %u axis %d: [%g, %g], model [%g, %g]", i, k, (double)def.min[k], (double)def.max[k],
				(double)r->box.min[k], (double)r->box.max[k]);
		FUZZ_CHECK(def.category == r->box.category && def.mask == r->box.mask &&
				(def.kind == BP_KIND_STATIC) == r->box.is_static,
			"dense %u: filter or kind differs from the model", i);
		boxes[i] = r->box;
	}
	*n_out = n;
	return boxes;
}

static void op_create_world(state *st)
{
	if (st->world)
		return;
	uint8_t b = fuzz_byte(&st->in);
	bp_world_def def = bp_world_def_default();
	def.dims = 2 + (b & 1);
	def.thread_count = 1 + ((b >> 1) & 1);
	def.algorithm = (bp_algorithm)((b >> 2) % BP_ALGO_COUNT);
	if (!bp_algorithm_available(def.algorithm))
		def.algorithm = BP_ALGO_AUTO;
	def.canonical_pairs = b & 0x20;
	def.cell_size = (b & 0x40) ? 2.0f : 0.0f;
	def.capacity = (b & 0x80) ? 8 : 0;
	bp_status s = bp_world_create(&def, &st->world);
	FUZZ_CHECK(s == BP_OK, "world create: %s", bp_status_string(s));
	st->dims = def.dims;
	st->overflow_submitted = false;
	st->record_count = 0;
	st->last_submit = 0;
}

static void op_create_entity(state *st)
{
	bp_entity_def def = bp_entity_def_default();
	decode_bounds(st, def.min, def.max);
	uint8_t f = fuzz_byte(&st->in);
	fuzz_filter(f, &def.category, &def.mask);
	def.kind = f & 0x20 ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
	if (live_count(st) >= MAX_RECORDS)
		return;
	int want = bounds_status(def.min, def.max, st->dims);
	uint32_t before = bp_world_entity_count(st->world);
	bp_entity h = {7, 7};
	bp_status s = bp_entity_create(st->world, &def, &h);
	expect_bounds_status(s, want, "entity_create");
	if (s != BP_OK) {
		FUZZ_CHECK(bp_world_entity_count(st->world) == before, "rejected create changed the count");
		return;
	}
	record *r = new_record(st); // never NULL: fewer than MAX_RECORDS are live
	*r = (record){.handle = h, .live = true};
	for (int k = 0; k < 3; ++k) {
		r->box.min[k] = k < st->dims ? def.min[k] : 0.0f;
		r->box.max[k] = k < st->dims ? def.max[k] : 0.0f;
	}
	r->box.category = def.category;
	r->box.mask = def.mask;
	r->box.is_static = def.kind == BP_KIND_STATIC;
}

static void op_create_bulk(state *st)
{
	uint32_t count = fuzz_byte(&st->in) % 5;
	float soa[6][4];
	for (uint32_t i = 0; i < count; ++i) {
		float min[3], max[3];
		decode_bounds(st, min, max);
		for (int k = 0; k < 3; ++k) {
			soa[k][i] = min[k];
			soa[3 + k][i] = max[k];
		}
	}
	if (live_count(st) + count > MAX_RECORDS || st->record_count + count > MAX_RECORDS)
		return;
	int want = BP_OK;
	for (uint32_t i = 0; i < count && want != -1; ++i) {
		float min[3] = {soa[0][i], soa[1][i], soa[2][i]}, max[3] = {soa[3][i], soa[4][i], soa[5][i]};
		int one = bounds_status(min, max, st->dims);
		if (one != BP_OK)
			want = want == BP_OK || want == one ? one : -1;
	}
	bp_bounds_arrays arrays = {soa[0], soa[1], st->dims == 3 ? soa[2] : NULL, soa[3], soa[4],
		st->dims == 3 ? soa[5] : NULL};
	bp_entity_def common = bp_entity_def_default();
	bp_entity handles[4];
	uint32_t before = bp_world_entity_count(st->world);
	bp_status s = bp_world_create_entities(st->world, count, &arrays, &common, handles);
	if (count == 0) {
		FUZZ_CHECK(bp_world_entity_count(st->world) == before, "zero-count create changed the world");
		return;
	}
	expect_bounds_status(s, want, "create_entities");
	if (s != BP_OK) {
		FUZZ_CHECK(bp_world_entity_count(st->world) == before, "rejected bulk create changed the count");
		return;
	}
	for (uint32_t i = 0; i < count; ++i) {
		record *r = &st->records[st->record_count++];
		*r = (record){.handle = handles[i], .live = true};
		r->box = (fuzz_box){.category = 1, .mask = UINT64_MAX};
		for (int k = 0; k < st->dims; ++k) {
			r->box.min[k] = soa[k][i];
			r->box.max[k] = soa[3 + k][i];
		}
	}
}

static void op_destroy_entity(state *st)
{
	bp_entity h = pick_handle(st);
	record *r = find_record(st, h);
	bp_status s = bp_entity_destroy(st->world, h);
	if (r) {
		FUZZ_CHECK(s == BP_OK, "destroy live: %s", bp_status_string(s));
		r->live = false;
	} else {
		FUZZ_CHECK(s == BP_ERR_STALE_HANDLE, "destroy stale: %s", bp_status_string(s));
	}
}

static void op_set_bounds(state *st)
{
	bp_entity h = pick_handle(st);
	float min[3], max[3];
	decode_bounds(st, min, max);
	record *r = find_record(st, h);
	bp_status s = bp_entity_set_bounds(st->world, h, min, max);
	if (!r) {
		FUZZ_CHECK(s == BP_ERR_STALE_HANDLE, "set_bounds stale: %s", bp_status_string(s));
		return;
	}
	expect_bounds_status(s, bounds_status(min, max, st->dims), "set_bounds");
	if (s == BP_OK)
		for (int k = 0; k < st->dims; ++k) {
			r->box.min[k] = min[k];
			r->box.max[k] = max[k];
		}
}

static void op_set_bounds_bulk(state *st)
{
	uint32_t first = fuzz_byte(&st->in) % 70, count = fuzz_byte(&st->in) % 8;
	float soa[6][8];
	for (uint32_t i = 0; i < count; ++i) {
		float min[3], max[3];
		decode_bounds(st, min, max);
		for (int k = 0; k < 3; ++k) {
			soa[k][i] = min[k];
			soa[3 + k][i] = max[k];
		}
	}
	uint32_t n = bp_world_entity_count(st->world);
	bp_bounds_arrays arrays = {soa[0], soa[1], st->dims == 3 ? soa[2] : NULL, soa[3], soa[4],
		st->dims == 3 ? soa[5] : NULL};
	bp_status s = bp_entities_set_bounds(st->world, bp_target_range(first, count), &arrays);
	if (count == 0)
		return; // an empty range is fine wherever it starts, or out of range: either way nothing changes
	if (first + count > n) {
		FUZZ_CHECK(s == BP_ERR_OUT_OF_RANGE, "set_bounds [%u, %u) of %u: %s", first, first + count, n,
			bp_status_string(s));
		return;
	}
	int want = BP_OK;
	for (uint32_t i = 0; i < count && want != -1; ++i) {
		float min[3] = {soa[0][i], soa[1][i], soa[2][i]}, max[3] = {soa[3][i], soa[4][i], soa[5][i]};
		int one = bounds_status(min, max, st->dims);
		if (one != BP_OK)
			want = want == BP_OK || want == one ? one : -1;
	}
	expect_bounds_status(s, want, "world_set_bounds");
	if (s != BP_OK)
		return;
	for (uint32_t i = 0; i < count; ++i) {
		record *r = find_record(st, bp_world_entity_at(st->world, first + i));
		FUZZ_CHECK(r, "dense %u has no record", first + i);
		for (int k = 0; k < st->dims; ++k) {
			r->box.min[k] = soa[k][i];
			r->box.max[k] = soa[3 + k][i];
		}
	}
}

static void op_set_filter_kind(state *st)
{
	bp_entity h = pick_handle(st);
	uint8_t f = fuzz_byte(&st->in);
	record *r = find_record(st, h);
	uint64_t category, mask;
	fuzz_filter(f, &category, &mask);
	bp_status s = (f & 0x40) ? bp_entity_set_kind(st->world, h, (f & 0x20) ? BP_KIND_STATIC : BP_KIND_DYNAMIC)
				 : bp_entity_set_filter(st->world, h, category, mask);
	if (!r) {
		FUZZ_CHECK(s == BP_ERR_STALE_HANDLE, "filter/kind stale: %s", bp_status_string(s));
		return;
	}
	FUZZ_CHECK(s == BP_OK, "filter/kind: %s", bp_status_string(s));
	if (f & 0x40) {
		r->box.is_static = f & 0x20;
	} else {
		r->box.category = category;
		r->box.mask = mask;
	}
}

/// True when max - min over all boxes overflows float on some axis.
static bool span_overflows(const fuzz_box *boxes, uint32_t n, int dims)
{
	for (int k = 0; k < dims; ++k) {
		float lo = INFINITY, hi = -INFINITY;
		for (uint32_t i = 0; i < n; ++i) {
			lo = fminf(lo, boxes[i].min[k]);
			hi = fmaxf(hi, boxes[i].max[k]);
		}
		if (n && isinf(hi - lo))
			return true;
	}
	return false;
}

static void op_step(state *st)
{
	uint8_t b = fuzz_byte(&st->in);
	bp_algorithm algo = (bp_algorithm)(b % (BP_ALGO_COUNT + 1));
	bp_status s = bp_world_set_algorithm(st->world, algo);
	if ((int)algo >= BP_ALGO_COUNT || !bp_algorithm_available(algo)) {
		FUZZ_CHECK(s != BP_OK, "set_algorithm(%d) accepted", (int)algo);
		if (s == BP_OK)
			return;
	} else {
		FUZZ_CHECK(s == BP_OK, "set_algorithm(%s): %s", bp_algorithm_name(algo), bp_status_string(s));
	}
	if (b & 0x80) {
		int threads = 1 + ((b >> 6) & 1);
		FUZZ_CHECK(bp_world_set_thread_count(st->world, threads) == BP_OK, "set_thread_count %d", threads);
	}
	uint32_t n;
	fuzz_box *boxes = dense_model(st, &n);
	s = bp_world_step(st->world);
	if (s == BP_ERR_UNSUPPORTED && span_overflows(boxes, n, st->dims)) {
		// Known limit: grid/hash cannot lay cells over a span beyond FLT_MAX (boxes near
		// +-3e38); the step fails cleanly and keeps the previous pairs.
		free(boxes);
		return;
	}
	if (s != BP_OK)
		for (uint32_t i = 0; i < n; ++i)
			fprintf(stderr, "dense %u: min %a %a %a max %a %a %a\n", i, (double)boxes[i].min[0],
				(double)boxes[i].min[1], (double)boxes[i].min[2], (double)boxes[i].max[0], (double)boxes[i].max[1],
				(double)boxes[i].max[2]);
	FUZZ_CHECK(s == BP_OK, "step: %s: %s", bp_status_string(s), bp_world_last_error(st->world));
	size_t want_count, got_count;
	bp_pair *want = fuzz_oracle_pairs(boxes, n, st->dims, &want_count);
	const bp_pair *got = bp_world_pairs(st->world, &got_count);
	char what[64];
	snprintf(what, sizeof what, "step %s dims=%d n=%u", bp_algorithm_name(bp_world_stats(st->world).algorithm),
		st->dims, n);
	fuzz_expect_pairs(got, got_count, want, want_count, n, what);
	bp_frame_stats stats = bp_world_stats(st->world);
	FUZZ_CHECK(stats.pair_count == want_count && stats.entity_count == n && stats.algorithm != BP_ALGO_AUTO,
		"%s: stats disagree", what);
	free(want);
	free(boxes);
}

static void forget_submit(submitted *sub)
{
	free(sub->pairs);
	free(sub->boxes);
	*sub = (submitted){0};
}

static void op_submit(state *st)
{
	uint32_t n;
	fuzz_box *boxes = dense_model(st, &n);
	uint64_t frame = 0;
	st->overflow_submitted |= span_overflows(boxes, n, st->dims);
	bp_status s = bp_frame_submit(st->world, &frame);
	FUZZ_CHECK(s == BP_OK, "submit: %s", bp_status_string(s));
	FUZZ_CHECK(frame == st->last_submit + 1, "submit numbered %llu after %llu", (unsigned long long)frame,
		(unsigned long long)st->last_submit);
	st->last_submit = frame;
	submitted *sub = &st->submits[frame % MAX_SUBMITS];
	forget_submit(sub);
	sub->frame = frame;
	sub->n = n;
	sub->boxes = boxes;
	sub->pairs = fuzz_oracle_pairs(boxes, n, st->dims, &sub->count);
}

/// Checks a view against the oracle of the frame it publishes, and runs a few queries.
static void check_view(state *st, const bp_view *view)
{
	uint64_t frame = bp_view_frame(view);
	const submitted *sub = &st->submits[frame % MAX_SUBMITS];
	if (sub->frame != frame || !sub->boxes)
		return; // its expectation was overwritten (more than MAX_SUBMITS submits ago)
	uint32_t n = bp_view_entity_count(view);
	FUZZ_CHECK(n == sub->n, "view %llu: %u entities, snapshot %u", (unsigned long long)frame, n, sub->n);
	int dims = bp_view_dims(view);
	size_t count;
	const bp_pair *pairs = bp_view_pairs(view, &count);
	FUZZ_CHECK(count == sub->count, "view %llu: %zu pairs, oracle %zu", (unsigned long long)frame, count, sub->count);
	for (size_t i = 0; i < count; ++i)
		FUZZ_CHECK(pairs[i].lo == sub->pairs[i].lo && pairs[i].hi == sub->pairs[i].hi,
			"view %llu pair %zu: (%u, %u), oracle (%u, %u)", (unsigned long long)frame, i, pairs[i].lo, pairs[i].hi,
			sub->pairs[i].lo, sub->pairs[i].hi);
	// A box query from the input, against a scan of the snapshot.
	float min[3], max[3];
	decode_bounds(st, min, max);
	uint32_t hits[MAX_RECORDS];
	size_t total = 0;
	bp_status s = bp_view_overlap_box(view, min, max, NULL, hits, MAX_RECORDS, &total);
	int want = bounds_status(min, max, dims);
	expect_bounds_status(s, want, "query_aabb");
	if (s == BP_OK) {
		fuzz_box q = {.category = 1, .mask = 1};
		for (int k = 0; k < 3; ++k) {
			q.min[k] = min[k];
			q.max[k] = max[k];
		}
		size_t expect = 0;
		for (uint32_t i = 0; i < n; ++i) {
			fuzz_box b = sub->boxes[i];
			b.category = b.mask = 1;
			b.is_static = false;
			if (fuzz_pair_expected(&q, &b, dims)) {
				FUZZ_CHECK(expect < total && hits[expect] == i, "query_aabb: hit %zu should be %u", expect, i);
				++expect;
			}
		}
		FUZZ_CHECK(expect == total, "query_aabb: %zu hits, scan %zu", total, expect);
	}
	// colliding() and neighbour lists agree with the pair list.
	if (n >= 2) {
		uint32_t a = fuzz_byte(&st->in) % n, b = fuzz_byte(&st->in) % n;
		bool paired = false;
		for (size_t i = 0; i < count; ++i)
			paired |= (pairs[i].lo == a && pairs[i].hi == b) || (pairs[i].lo == b && pairs[i].hi == a);
		FUZZ_CHECK(bp_view_colliding(view, a, b) == paired, "colliding(%u, %u) should be %d", a, b, paired);
		const uint32_t *nb;
		size_t degree;
		FUZZ_CHECK(bp_view_neighbours(view, a, &nb, &degree) == BP_OK, "neighbours(%u)", a);
		size_t expect = 0;
		for (size_t i = 0; i < count; ++i)
			expect += pairs[i].lo == a || pairs[i].hi == a;
		FUZZ_CHECK(degree == expect, "neighbours(%u): %zu, pairs say %zu", a, degree, expect);
	}
}

static void op_acquire(state *st)
{
	uint8_t b = fuzz_byte(&st->in);
	int slot = b % MAX_VIEWS;
	if (st->views[slot]) {
		check_view(st, st->views[slot]);
		bp_view_release(st->views[slot]);
		st->views[slot] = NULL;
		return;
	}
	bp_view *view = NULL;
	bp_status s = bp_frame_acquire(st->world, &view);
	if (s != BP_OK) {
		FUZZ_CHECK(s == BP_ERR_NO_FRAME && view == NULL, "acquire: %s", bp_status_string(s));
		return;
	}
	FUZZ_CHECK(bp_view_frame(view) >= 1 && bp_view_frame(view) <= st->last_submit, "acquired frame %llu of %llu",
		(unsigned long long)bp_view_frame(view), (unsigned long long)st->last_submit);
	check_view(st, view);
	st->views[slot] = view;
}

static void op_wait(state *st)
{
	uint64_t frame = st->last_submit + (fuzz_byte(&st->in) & 1);
	bp_status s = bp_frame_wait(st->world, frame);
	if (frame > st->last_submit)
		FUZZ_CHECK(s == BP_ERR_NOT_SUBMITTED, "wait for unsubmitted %llu: %s", (unsigned long long)frame,
			bp_status_string(s));
	else
		FUZZ_CHECK(s == BP_OK || (s == BP_ERR_UNSUPPORTED && st->overflow_submitted), "wait %llu: %s",
			(unsigned long long)frame, bp_status_string(s));
}

static void op_frame_step(state *st)
{
	bp_view *view = NULL;
	uint32_t n;
	fuzz_box *boxes = dense_model(st, &n);
	st->overflow_submitted |= span_overflows(boxes, n, st->dims);
	bp_status s = bp_frame_step(st->world, &view);
	if (s == BP_ERR_UNSUPPORTED && st->overflow_submitted && !view) {
		++st->last_submit; // the frame was submitted; its build failed and nothing was published
		free(boxes);
		return;
	}
	FUZZ_CHECK(s == BP_OK && view, "frame_step: %s", bp_status_string(s));
	uint64_t frame = bp_view_frame(view);
	FUZZ_CHECK(frame == st->last_submit + 1, "frame_step gave frame %llu after %llu", (unsigned long long)frame,
		(unsigned long long)st->last_submit);
	st->last_submit = frame;
	submitted *sub = &st->submits[frame % MAX_SUBMITS];
	forget_submit(sub);
	*sub = (submitted){.frame = frame, .n = n, .boxes = boxes};
	sub->pairs = fuzz_oracle_pairs(boxes, n, st->dims, &sub->count);
	check_view(st, view);
	bp_view_release(view);
}

static void release_all(state *st)
{
	for (int i = 0; i < MAX_VIEWS; ++i) {
		bp_view_release(st->views[i]);
		st->views[i] = NULL;
	}
	for (int i = 0; i < MAX_SUBMITS; ++i)
		forget_submit(&st->submits[i]);
}

/// Destroys the world; held views stay valid after it, so they are checked once more
/// before they are released (frame numbers restart with the next world).
static void op_destroy_world(state *st)
{
	bp_world_destroy(st->world);
	st->world = NULL;
	for (int i = 0; i < MAX_VIEWS; ++i)
		if (st->views[i])
			check_view(st, st->views[i]);
	release_all(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_use_malloc();
	FUZZ_CHECK(bp_allocated_bytes() == 0, "bytes allocated before the run");
	static state st;
	memset(&st, 0, sizeof st);
	st.in = (fuzz_reader){data, size, 0};
	for (int ops = 0; fuzz_more(&st.in) && ops < 256; ++ops) {
		uint8_t op = fuzz_byte(&st.in);
		if (!st.world) {
			op_create_world(&st);
			continue;
		}
		switch (op % 14) {
		case 0: op_create_entity(&st); break;
		case 1: op_create_entity(&st); break;
		case 2: op_create_bulk(&st); break;
		case 3: op_destroy_entity(&st); break;
		case 4: op_set_bounds(&st); break;
		case 5: op_set_bounds_bulk(&st); break;
		case 6: op_set_filter_kind(&st); break;
		case 7: op_step(&st); break;
		case 8: op_step(&st); break;
		case 9: op_submit(&st); break;
		case 10: op_acquire(&st); break;
		case 11: op_wait(&st); break;
		case 12: op_frame_step(&st); break;
		default:
			if (op == 13 + 14 * 17) // rarely: end the world mid-sequence
				op_destroy_world(&st);
			else
				op_step(&st);
			break;
		}
	}
	if (st.world)
		op_destroy_world(&st);
	FUZZ_CHECK(bp_allocated_bytes() == 0, "leak: %lld bytes", (long long)bp_allocated_bytes());
	return 0;
}
