// SPDX-License-Identifier: MIT
// A trace file (docs/trace.md) as a history (history.h): each frame's destroys, creates,
// attribute changes and moves become the single-entity operations that make the same calls on
// the same dense indices, then a world step and a frame step, so the history engine checks a
// recorded motion as it checks its own: both worlds against its oracle, and views.
#include "history.h"

#include <broadphase/broadphase.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/// history.c's generator: splitmix64 with the state advanced first.
static uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/// The index at which `table` (hist_category or hist_mask) gives value, or -1.
static int index_of(uint64_t (*table)(int), uint64_t value)
{
	for (int i = 0; i < HIST_FILTERS; ++i)
		if (table(i) == value)
			return i;
	return -1;
}

static bool fail(char *error, size_t size, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(error, size, format, args);
	va_end(args);
	return false;
}

/// A seed whose draws make op_attr (one entity, attribute `what`) set the wanted value, whichever
/// of attrs_from's two arguments is drawn first: 0 filter (category and mask indices), 1 kind,
/// 3 shape (the fourth draw).
static uint32_t attr_seed(int what, int cat, int mask, bool is_static, bool sphere)
{
	// A filter takes thousands of tries, and a trace sets the same few over and over.
	static uint32_t filter_seeds[HIST_FILTERS][HIST_FILTERS];
	if (what == 0 && filter_seeds[cat][mask])
		return filter_seeds[cat][mask];
	for (uint32_t s = 1;; ++s) {
		uint64_t rng = s, d[4];
		for (int i = 0; i < 4; ++i)
			d[i] = rng_next(&rng);
		bool ok = true;
		for (int i = 0; i < 2 && ok; ++i) {
			uint32_t filter = (uint32_t)d[i];
			uint8_t variant = (uint8_t)d[i];
			ok = what == 0 ? (int)(filter % HIST_FILTERS) == cat && (int)(filter / HIST_FILTERS % HIST_FILTERS) == mask :
			     what == 1 ? ((variant & 3) == 3) == is_static : true;
		}
		if (ok && (what != 3 || (bool)(d[3] & 1) == sphere))
			return what == 0 ? (filter_seeds[cat][mask] = s) : s;
	}
}

static void push_entity_ops(history *h, const bp_trace_entity *e, uint16_t dense, int cat, int mask)
{
	const bool is_static = e->kind == BP_KIND_STATIC, sphere = e->shape == BP_SHAPE_SPHERE;
	hist_push(h, (hist_op){.code = OP_ATTR, .a = 0, .p = dense, .k = 1, .s = attr_seed(0, cat, mask, false, false)});
	hist_push(h, (hist_op){.code = OP_ATTR, .a = 1, .p = dense, .k = 1, .s = attr_seed(1, 0, 0, is_static, false)});
	hist_push(h, (hist_op){.code = OP_ATTR, .a = 3, .p = dense, .k = 1, .s = attr_seed(3, 0, 0, false, sphere)});
}

/// The filter indices of an entity; false when the history cannot hold its filter.
static bool filter_indices(const bp_trace_entity *e, uint32_t frame, int *cat, int *mask, char *error, size_t size)
{
	*cat = index_of(hist_category, e->category), *mask = index_of(hist_mask, e->mask);
	if (*cat < 0 || *mask < 0)
		return fail(error, size, "frame %u: id %u: category %#llx, mask %#llx: a history holds only the filters "
			"hist_category and hist_mask give", frame, e->id, (unsigned long long)e->category,
			(unsigned long long)e->mask);
	return true;
}

/// Appends frame f's operations; `dense` holds the ids in dense order before the frame, after it.
static bool push_frame(history *h, const bp_trace_frame *f, uint32_t *dense, uint32_t *n, const bp_trace_state *after,
	char *error, size_t size)
{
	for (uint32_t i = 0; i < f->destroy_count; ++i) {
		uint32_t at = 0;
		while (at < *n && dense[at] != f->destroys[i])
			++at;
		hist_push(h, (hist_op){.code = OP_DESTROY, .p = (uint16_t)at, .k = 1});
		dense[at] = dense[--*n];
	}
	for (uint32_t i = 0; i < f->create_count; ++i) {
		const bp_trace_entity *e = &f->creates[i];
		int cat, mask;
		if (!filter_indices(e, f->index, &cat, &mask, error, size))
			return false;
		hist_op op = {.code = OP_CREATE, .k = 1, .s = (uint32_t)(cat + mask * HIST_FILTERS),
			.a = (uint8_t)((e->kind == BP_KIND_STATIC ? 3 : 0) | (e->shape == BP_SHAPE_SPHERE ? 0x1C : 0))};
		memcpy(op.min, e->min, sizeof op.min), memcpy(op.max, e->max, sizeof op.max);
		hist_push(h, op);
		dense[(*n)++] = e->id;
	}
	// Sets and moves name ids; the state after the frame has the dense order they apply in.
	for (uint32_t i = 0; i < f->set_count + f->move_count; ++i) {
		const bool set = i < f->set_count;
		const uint32_t id = set ? f->sets[i].id : f->move_ids[i - f->set_count];
		uint32_t at = 0;
		while (at < after->count && after->ids[at] != id)
			++at;
		if (set) {
			int cat, mask;
			if (!filter_indices(&f->sets[i], f->index, &cat, &mask, error, size))
				return false;
			push_entity_ops(h, &f->sets[i], (uint16_t)at, cat, mask);
			continue;
		}
		const uint32_t j = i - f->set_count;
		const bp_bounds_arrays *b = &f->moves;
		hist_op op = {.code = OP_TELEPORT, .p = (uint16_t)at, .k = 1,
			.min = {b->min_x[j], b->min_y[j], b->min_z ? b->min_z[j] : 0},
			.max = {b->max_x[j], b->max_y[j], b->max_z ? b->max_z[j] : 0}};
		hist_push(h, op);
	}
	hist_push(h, (hist_op){.code = OP_STEP, .k = 1});
	hist_push(h, (hist_op){.code = OP_FRAME, .k = 1});
	return true;
}

bool hist_from_trace(const char *path, history *h, char *error, size_t size)
{
	*h = (history){.cfg = {.dims = 3, .canonical = 1, .profile = 1, .grid = 20, .period = {8, 8, 8}}};
	bp_trace_reader *r = NULL;
	if (bp_trace_reader_open(path, &r) != BP_OK)
		return fail(error, size, "%s", bp_trace_open_error());
	const bp_trace_info info = bp_trace_reader_info(r);
	h->cfg.dims = (uint8_t)info.dims;
	bool ok = info.max_entities <= HIST_TRACE_MAX_ENTITIES ||
		  fail(error, size, "%s: %u entities at once, a history holds at most %u", path, info.max_entities,
			  HIST_TRACE_MAX_ENTITIES);
	uint32_t *dense = malloc(((size_t)info.max_entities + 1) * sizeof *dense), n = 0;
	for (uint32_t k = 0; ok && k < info.frame_count; ++k) {
		bp_trace_frame f;
		if (bp_trace_reader_next(r, &f) != BP_OK) {
			ok = fail(error, size, "%s", bp_trace_reader_error(r));
			break;
		}
		bp_trace_state after = bp_trace_reader_state(r);
		ok = push_frame(h, &f, dense, &n, &after, error, size);
	}
	free(dense);
	bp_trace_reader_close(r);
	if (!ok)
		hist_free(h);
	return ok;
}
