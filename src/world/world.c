// SPDX-License-Identifier: MIT
// The world: SoA entity store, generation-checked handles, single and bulk updates.
#include "world/world_data.h"
#include "frames/scheduler.h"
#include "view/view.h"

#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static const char axis_names[3] = {'x', 'y', 'z'};

bp_status bpi_world_fail(bp_world *world, bp_status status, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(world->last_error, sizeof world->last_error, format, args);
	va_end(args);
	return status;
}

bp_world_def bp_world_def_default(void)
{
	return (bp_world_def){
		.dims = 3,
		.algorithm = BP_ALGO_AUTO,
		.query_hierarchy_frames = 8,
		.internal_value = BP_WORLD_COOKIE,
	};
}

bp_entity_def bp_entity_def_default(void)
{
	return (bp_entity_def){.category = 1, .mask = UINT64_MAX, .kind = BP_KIND_DYNAMIC};
}

// ---- SoA storage ---------------------------------------------------------

/// Makes room for `needed` entities. All arrays grow or none does.
static bp_status reserve_entities(bp_world *w, uint32_t needed)
{
	if (needed <= w->capacity)
		return BP_OK;
	uint64_t grown = (uint64_t)w->capacity + w->capacity / 2;
	uint32_t capacity = (uint32_t)BP_MIN(BP_MAX(grown, (uint64_t)needed), (uint64_t)BP_MAX_ENTITIES);
	capacity = BP_MAX(capacity, 16u);
	// Marks are kept for every index below the capacity: a destroy leaves marks past count.
	uint8_t *changed = w->incremental ? bpi_grow_aligned(NULL, 0, capacity, 1) : NULL;
	if ((w->incremental && !changed) || !bpi_soa_resize(&w->soa, w->dims, w->capacity, capacity, w->count)) {
		bpi_free_aligned(changed, changed ? capacity : 0);
		return bpi_world_fail(w, BP_ERR_OUT_OF_MEMORY, "no memory for %u entities", capacity);
	}
	if (changed) {
		memset(changed, 0, capacity);
		if (w->capacity)
			memcpy(changed, w->changed, w->capacity);
		bpi_free_aligned(w->changed, w->capacity);
		w->changed = changed;
	}
	w->capacity = capacity;
	return BP_OK;
}

/// Makes room for `needed` slots (only slots not on the free list count).
static bp_status reserve_slots(bp_world *w, uint32_t needed)
{
	if (needed <= w->slot_capacity)
		return BP_OK;
	uint64_t grown = (uint64_t)w->slot_capacity + w->slot_capacity / 2;
	uint32_t capacity = (uint32_t)BP_MIN(BP_MAX(grown, (uint64_t)needed), (uint64_t)BP_MAX_ENTITIES);
	capacity = BP_MAX(capacity, 16u);
	bpi_slot *slots = bpi_grow_aligned(w->slots, w->slot_capacity, capacity, sizeof(bpi_slot));
	if (!slots)
		return bpi_world_fail(w, BP_ERR_OUT_OF_MEMORY, "no memory for %u handle slots", capacity);
	w->slots = slots;
	w->slot_capacity = capacity;
	return BP_OK;
}

// ---- create / destroy ----------------------------------------------------

/// The next world tag, 1 .. BPI_WORLD_TAG_COUNT in turn: two worlds share a tag
/// only when a multiple of BPI_WORLD_TAG_COUNT worlds were created between them.
static uint32_t next_world_tag(void)
{
	static atomic_uint worlds_created;
	return atomic_fetch_add_explicit(&worlds_created, 1, memory_order_relaxed) % BPI_WORLD_TAG_COUNT + 1;
}

static bool executor_valid(const bp_world_def *def)
{
	const bp_task_system *t = &def->task_system;
	switch (def->executor) {
	case BP_EXECUTOR_WORKERS:
	case BP_EXECUTOR_OPENMP: return true;
	case BP_EXECUTOR_HOST: return t->enqueue && t->finish && t->worker_count >= 1 && t->worker_count <= BP_MAX_THREADS;
	default: return false;
	}
}

// Why this thread's last bp_world_create failed: there is no world to hold it.
static _Thread_local char create_error[160];

static bp_status create_fail(bp_status status, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(create_error, sizeof create_error, format, args);
	va_end(args);
	return status;
}

const char *bp_world_create_error(void) { return create_error; }

/// Every setting of def, each refusal named.
static bp_status check_def(const bp_world_def *def)
{
	if (!def || def->internal_value != BP_WORLD_COOKIE)
		return create_fail(BP_ERR_INVALID_ARGUMENT, "def is NULL or was not made by bp_world_def_default");
	if (def->dims != 2 && def->dims != 3)
		return create_fail(BP_ERR_INVALID_ARGUMENT, "dims %d is neither 2 nor 3", def->dims);
	if (def->thread_count < 0 || def->thread_count > BP_MAX_THREADS)
		return create_fail(BP_ERR_INVALID_ARGUMENT, "thread_count %d is outside [0, %d] (BP_MAX_THREADS)",
			def->thread_count, BP_MAX_THREADS);
	if (!(def->cell_size >= 0.0f) || !isfinite(def->cell_size))
		return create_fail(BP_ERR_INVALID_ARGUMENT, "cell_size %g is not finite and >= 0", (double)def->cell_size);
	if (!(def->margin >= 0.0f) || !isfinite(def->margin))
		return create_fail(BP_ERR_INVALID_ARGUMENT, "margin %g is not finite and >= 0", (double)def->margin);
	if (!(def->skin >= 0.0f) || !isfinite(def->skin))
		return create_fail(BP_ERR_INVALID_ARGUMENT, "skin %g is not finite and >= 0", (double)def->skin);
	if (def->debug_flags & ~(uint32_t)BP_DEBUG_ALL)
		return create_fail(BP_ERR_INVALID_ARGUMENT, "debug_flags 0x%x: unknown bits 0x%x", def->debug_flags,
			def->debug_flags & ~(uint32_t)BP_DEBUG_ALL);
	if (!executor_valid(def))
		return create_fail(BP_ERR_INVALID_ARGUMENT,
			"executor %d: not a bp_executor, or BP_EXECUTOR_HOST without enqueue, finish and "
			"worker_count in [1, %d]",
			(int)def->executor, BP_MAX_THREADS);
	if (!bp_algorithm_available(def->algorithm))
		return create_fail(BP_ERR_UNKNOWN_ALGORITHM, "algorithm %d is not built in", (int)def->algorithm);
	for (int axis = 0; def->periodic && axis < def->dims; ++axis)
		if (!(def->period[axis] > 0.0f) || !isfinite(def->period[axis]))
			return create_fail(BP_ERR_INVALID_ARGUMENT, "period_%c %g is not finite and > 0", axis_names[axis],
				(double)def->period[axis]);
	return BP_OK;
}

bp_status bp_world_create(const bp_world_def *def, bp_world **out)
{
	if (!out)
		return create_fail(BP_ERR_INVALID_ARGUMENT, "out is NULL");
	*out = NULL;
	bp_status status = check_def(def);
	if (status != BP_OK)
		return status;
	bp_world *w = bpi_alloc(sizeof *w);
	if (!w)
		return create_fail(BP_ERR_OUT_OF_MEMORY, "no memory for the world");
	*w = (bp_world){
		.dims = def->dims,
		.thread_count = def->thread_count,
		.executor = {def->executor, def->executor == BP_EXECUTOR_HOST ? def->task_system : (bp_task_system){0}},
		.pair_filter = def->pair_filter,
		.pair_filter_user = def->pair_filter_user,
		.algorithm = def->algorithm,
		.cell_size = def->cell_size,
		.canonical_pairs = def->canonical_pairs,
		.periodic = def->periodic,
		.period = {def->period[0], def->period[1], def->dims == 3 ? def->period[2] : 0.0f},
		.debug_flags = def->debug_flags,
		.incremental = def->incremental,
		.margin = def->margin,
		.skin = def->skin,
		.query_hierarchy_frames = def->query_hierarchy_frames,
		.handle_tag = next_world_tag(),
		.memory_limit = def->memory_limit,
		.free_head = BP_NO_DENSE,
	};
	w->stepper.budget = &w->budget;
	w->pairs.budget = &w->budget;
	if (bpi_frames_create(&w->frames) != BP_OK) {
		bpi_free(w, sizeof *w);
		return create_fail(BP_ERR_OUT_OF_MEMORY, "no memory for the frame scheduler");
	}
	if (def->capacity) {
		uint32_t capacity = BP_MIN(def->capacity, (uint32_t)BP_MAX_ENTITIES);
		if (reserve_entities(w, capacity) != BP_OK || reserve_slots(w, capacity) != BP_OK) {
			bp_world_destroy(w);
			return create_fail(BP_ERR_OUT_OF_MEMORY, "no memory for capacity = %u entities", capacity);
		}
	}
	*out = w;
	return BP_OK;
}

void bp_world_destroy(bp_world *w)
{
	if (!w)
		return;
	bpi_frames_shutdown(w->frames);
	bpi_stepper_free(&w->stepper);
	bpi_soa_free(&w->soa, w->dims, w->capacity);
	bpi_free_aligned(w->changed, w->changed ? w->capacity : 0);
	bpi_array_free(&w->step_marks.list);
	bpi_array_free(&w->frame_marks.list);
	bpi_free_aligned(w->slots, (size_t)w->slot_capacity * sizeof(bpi_slot));
	bpi_pair_buffer_free(&w->pairs);
	bpi_array_free(&w->sort_scratch);
	bpi_world_events_free(&w->events);
	bpi_free(w, sizeof *w);
}

const char *bp_world_last_error(const bp_world *w)
{
	return w ? w->last_error : "world is NULL";
}

// ---- validation ----------------------------------------------------------

bp_status bpi_world_stale_element(bp_world *w, const char *array, uint32_t i)
{
	char handle_error[sizeof w->last_error];
	memcpy(handle_error, w->last_error, sizeof handle_error);
	return bpi_world_fail(w, BP_ERR_STALE_HANDLE, "%s[%u]: %s", array, i, handle_error);
}

const char *bpi_handle_text(const bp_world *w, bp_entity e, char *buf, size_t size)
{
	uint32_t tag = bp_entity_world_tag(e);
	if (tag == w->handle_tag || e.index1 == 0)
		snprintf(buf, size, "entity {%u, %u}", e.index1, bp_entity_reuse_count(e));
	else
		snprintf(buf, size, "entity {%u, %u} of world tag %u", e.index1, bp_entity_reuse_count(e), tag);
	return buf;
}

const char *bpi_entity_name_text(const bp_world *w, bpi_entity_name name, char *buf, size_t size)
{
	if (name.array)
		snprintf(buf, size, "%s[%llu]", name.array, (unsigned long long)name.index);
	else if (name.handle.index1)
		bpi_handle_text(w, name.handle, buf, size);
	else
		snprintf(buf, size, "new entity");
	return buf;
}

/// Checks one box given as dims floats per corner; `name` names it in the message.
bp_status bpi_world_check_box(bp_world *w, const float *min, const float *max, bpi_entity_name name)
{
	char text[64];
	for (int axis = 0; axis < w->dims; ++axis) {
		if (!isfinite(min[axis]) || !isfinite(max[axis]))
			return bpi_world_fail(w, BP_ERR_NOT_FINITE, "%s: %s_%c is %g",
				bpi_entity_name_text(w, name, text, sizeof text), isfinite(min[axis]) ? "max" : "min",
				axis_names[axis], (double)(isfinite(min[axis]) ? max[axis] : min[axis]));
		if (min[axis] > max[axis])
			return bpi_world_fail(w, BP_ERR_INVERTED_BOUNDS, "%s: min_%c > max_%c (%.9g > %.9g)",
				bpi_entity_name_text(w, name, text, sizeof text), axis_names[axis], axis_names[axis],
				(double)min[axis], (double)max[axis]);
	}
	return BP_OK;
}

static bool arrays_present(const bp_world *w, const bp_bounds_arrays *b)
{
	return b && b->min_x && b->min_y && b->max_x && b->max_y && (w->dims == 2 || (b->min_z && b->max_z));
}

void bpi_world_array_box(const bp_world *w, const bp_bounds_arrays *b, size_t i, float min[3], float max[3])
{
	min[0] = b->min_x[i], min[1] = b->min_y[i], max[0] = b->max_x[i], max[1] = b->max_y[i];
	min[2] = w->dims == 3 ? b->min_z[i] : 0.0f;
	max[2] = w->dims == 3 ? b->max_z[i] : 0.0f;
}

bp_status bpi_world_check_arrays(bp_world *w, const bp_bounds_arrays *b, uint32_t count)
{
	if (!arrays_present(w, b))
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "bounds arrays: a required array is NULL");
	for (uint32_t i = 0; i < count; ++i) {
		float min[3], max[3];
		bpi_world_array_box(w, b, i, min, max);
		bp_status status = bpi_world_check_box(w, min, max, bpi_name_element("bounds", i));
		if (status != BP_OK)
			return status;
	}
	return BP_OK;
}

/// Why a handle names no slot of this world, or NULL when it names one.
static const char *unknown_handle(const bp_world *w, bp_entity e)
{
	if (e.index1 == 0)
		return "null handle";
	if (e.generation >> BPI_GENERATION_COUNT_BITS != w->handle_tag)
		return "a handle of another world";
	if (e.index1 > w->slot_count)
		return "no such entity in this world";
	return NULL;
}

/// Slot of a live entity, or NULL (with the error recorded).
bpi_slot *bpi_world_live_slot(const bp_world *cw, bp_entity e)
{
	bp_world *w = (bp_world *)cw;
	const char *unknown = unknown_handle(w, e);
	char text[64];
	if (unknown) {
		bpi_world_fail(w, BP_ERR_STALE_HANDLE, "%s: %s", bpi_handle_text(w, e, text, sizeof text), unknown);
		return NULL;
	}
	bpi_slot *slot = &w->slots[e.index1 - 1];
	if (slot->dense == BP_NO_DENSE || slot->generation != e.generation) {
		bpi_world_fail(w, BP_ERR_STALE_HANDLE, "%s: destroyed (slot now at generation %u)",
			bpi_handle_text(w, e, text, sizeof text), slot->generation & BPI_GENERATION_COUNT_MAX);
		return NULL;
	}
	return slot;
}

// ---- entities ------------------------------------------------------------

static bool filter_is_open(uint64_t category, uint64_t mask)
{
	return category != 0 && mask == UINT64_MAX; // then (ca & mb) && (cb & ma) always holds
}

/// Writes entity settings into dense index d (bounds from min/max).
static void store_entity(bp_world *w, uint32_t d, const float *min, const float *max, const bp_entity_def *def)
{
	for (int axis = 0; axis < w->dims; ++axis) {
		w->soa.min[axis][d] = min[axis];
		w->soa.max[axis][d] = max[axis];
	}
	w->soa.category[d] = def->category;
	w->soa.mask[d] = def->mask;
	w->soa.flags[d] = (uint8_t)((def->kind == BP_KIND_STATIC ? BP_FLAG_STATIC : 0) |
				    (def->shape == BP_SHAPE_SPHERE ? BP_FLAG_SPHERE : 0));
	w->soa.user_key[d] = def->user_key;
	w->static_count += def->kind == BP_KIND_STATIC;
	w->sphere_count += def->shape == BP_SHAPE_SPHERE;
	w->filtered_count += !filter_is_open(def->category, def->mask);
	bpi_world_mark(w, d);
}

/// Takes a free slot (or a new one; room was reserved) for dense index d.
static bp_entity take_slot(bp_world *w, uint32_t d)
{
	uint32_t s;
	if (w->free_head != BP_NO_DENSE) {
		s = w->free_head;
		w->free_head = w->slots[s].next_free;
		w->free_count--;
	} else {
		s = w->slot_count++;
		w->slots[s].generation = w->handle_tag << BPI_GENERATION_COUNT_BITS | 1u;
	}
	w->slots[s].dense = d;
	w->slots[s].next_free = BP_NO_DENSE;
	w->soa.entity[d] = (bp_entity){s + 1, w->slots[s].generation};
	w->layout++;
	return w->soa.entity[d];
}

bp_status bpi_world_check_kind(bp_world *w, bp_kind kind, const char *what)
{
	if (kind != BP_KIND_DYNAMIC && kind != BP_KIND_STATIC)
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "%s %d is neither dynamic nor static", what, (int)kind);
	return BP_OK;
}

/// The settings of new entity i: `common`, with each array given taking over its field.
static bp_entity_def entity_def_at(const bp_entity_arrays *a, const bp_entity_def *common, uint32_t i)
{
	bp_entity_def def = *common;
	if (a->category)
		def.category = a->category[i];
	if (a->mask)
		def.mask = a->mask[i];
	if (a->kind)
		def.kind = a->kind[i];
	if (a->user_key)
		def.user_key = a->user_key[i];
	if (a->shape)
		def.shape = a->shape[i];
	return def;
}

/// Checks the kind and shape of every new entity; the error names the array element,
/// or the common def's field when no array was given.
static bp_status check_new_settings(bp_world *w, uint32_t count, const bp_entity_arrays *a, const bp_entity_def *common)
{
	for (uint32_t i = 0; i < (a->kind ? count : 1); ++i) {
		bp_kind kind = a->kind ? a->kind[i] : common->kind;
		if (kind != BP_KIND_DYNAMIC && kind != BP_KIND_STATIC) {
			char what[32] = "kind";
			if (a->kind)
				snprintf(what, sizeof what, "kind[%u]: kind", i);
			return bpi_world_check_kind(w, kind, what);
		}
	}
	for (uint32_t i = 0; i < (a->shape ? count : 1); ++i) {
		bp_shape shape = a->shape ? a->shape[i] : common->shape;
		if (shape != BP_SHAPE_BOX && shape != BP_SHAPE_SPHERE) {
			if (a->shape)
				return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "shape[%u]: shape %d is neither box nor sphere",
					i, (int)shape);
			return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "shape %d is neither box nor sphere", (int)shape);
		}
	}
	return BP_OK;
}

bp_status bp_world_create_entities_from_arrays(bp_world *w, uint32_t count, const bp_entity_arrays *arrays,
	const bp_entity_def *common, bp_entity *out_handles)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	if (!arrays)
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "entity arrays are NULL");
	bp_entity_def defaults = bp_entity_def_default();
	if (!common)
		common = &defaults;
	if (count == 0)
		return BP_OK;
	if (count > BP_MAX_ENTITIES - w->count)
		return bpi_world_fail(w, BP_ERR_OUT_OF_RANGE, "%u more entities would exceed the limit of %u", count,
			(uint32_t)BP_MAX_ENTITIES);
	bp_status status = check_new_settings(w, count, arrays, common);
	if (status == BP_OK)
		status = bpi_world_check_arrays(w, &arrays->bounds, count);
	if (status == BP_OK)
		status = reserve_entities(w, w->count + count);
	if (status == BP_OK) {
		uint64_t slots_needed = (uint64_t)w->slot_count + (count > w->free_count ? count - w->free_count : 0);
		if (slots_needed > BP_MAX_ENTITIES)
			return bpi_world_fail(w, BP_ERR_OUT_OF_RANGE, "no handle slots left");
		status = reserve_slots(w, (uint32_t)slots_needed);
	}
	if (status != BP_OK)
		return status;
	for (uint32_t i = 0; i < count; ++i) {
		float min[3], max[3];
		bpi_world_array_box(w, &arrays->bounds, i, min, max);
		uint32_t d = w->count++;
		bp_entity_def def = entity_def_at(arrays, common, i);
		store_entity(w, d, min, max, &def);
		bp_entity e = take_slot(w, d);
		if (out_handles)
			out_handles[i] = e;
	}
	return BP_OK;
}

bp_status bp_world_create_entities(bp_world *w, uint32_t count, const bp_bounds_arrays *bounds,
	const bp_entity_def *common, bp_entity *out_handles)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	if (!common)
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "entity def is NULL");
	if (count == 0)
		return BP_OK;
	if (!bounds)
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "bounds arrays: a required array is NULL");
	bp_entity_arrays arrays = {.bounds = *bounds};
	return bp_world_create_entities_from_arrays(w, count, &arrays, common, out_handles);
}

bp_status bp_entity_create(bp_world *w, const bp_entity_def *def, bp_entity *out)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	if (!def || !out)
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "entity def or output handle is NULL");
	const float *min = def->min, *max = def->max;
	bp_bounds_arrays one = {&min[0], &min[1], &min[2], &max[0], &max[1], &max[2]};
	bp_status status = bpi_world_check_box(w, min, max, bpi_name_handle((bp_entity){0, 0}));
	if (status != BP_OK)
		return status;
	return bp_world_create_entities(w, 1, &one, def, out);
}

bp_status bp_entity_destroy(bp_world *w, bp_entity e)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	bpi_slot *slot = bpi_world_live_slot(w, e);
	if (!slot)
		return BP_ERR_STALE_HANDLE;
	uint32_t d = slot->dense, last = w->count - 1;
	w->static_count -= (w->soa.flags[d] & BP_FLAG_STATIC) != 0;
	w->sphere_count -= (w->soa.flags[d] & BP_FLAG_SPHERE) != 0;
	w->filtered_count -= !filter_is_open(w->soa.category[d], w->soa.mask[d]);
	if (d != last) { // swap-remove keeps the arrays dense
		bpi_soa_copy_entity(&w->soa, d, &w->soa, last, w->dims); // the moved entity's handle too
		w->slots[w->soa.entity[d].index1 - 1].dense = d;
		bpi_world_mark(w, d); // another entity now: its pairs are to be found again
	}
	w->count = last;
	w->layout++;
	uint32_t s = e.index1 - 1;
	slot->dense = BP_NO_DENSE;
	if ((slot->generation & BPI_GENERATION_COUNT_MAX) == BPI_GENERATION_COUNT_MAX) {
		slot->generation &= ~BPI_GENERATION_COUNT_MAX; // retired: reusing it would repeat a generation
	} else {
		slot->generation++; // the count, below the tag
		slot->next_free = w->free_head;
		w->free_head = s;
		w->free_count++;
	}
	return BP_OK;
}

bp_status bp_entity_get(const bp_world *w, bp_entity e, bp_entity_def *out)
{
	if (!w || !out)
		return BP_ERR_INVALID_ARGUMENT;
	const bpi_slot *slot = bpi_world_live_slot(w, e);
	if (!slot)
		return BP_ERR_STALE_HANDLE;
	*out = bpi_soa_entity_def(&w->soa, w->dims, slot->dense);
	return BP_OK;
}

bp_status bp_entity_set_bounds(bp_world *w, bp_entity e, const float *min, const float *max)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	if (!min || !max)
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "bounds pointer is NULL");
	const bpi_slot *slot = bpi_world_live_slot(w, e);
	if (!slot)
		return BP_ERR_STALE_HANDLE;
	bp_status status = bpi_world_check_box(w, min, max, bpi_name_handle(e));
	if (status != BP_OK)
		return status;
	bpi_world_store_bounds(w, slot->dense, min, max);
	return BP_OK;
}

bp_status bp_entity_set_filter(bp_world *w, bp_entity e, uint64_t category, uint64_t mask)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	const bpi_slot *slot = bpi_world_live_slot(w, e);
	if (!slot)
		return BP_ERR_STALE_HANDLE;
	bpi_world_store_filter(w, slot->dense, category, mask);
	return BP_OK;
}

void bpi_world_store_filter(bp_world *w, uint32_t d, uint64_t category, uint64_t mask)
{
	w->filtered_count += !filter_is_open(category, mask);
	w->filtered_count -= !filter_is_open(w->soa.category[d], w->soa.mask[d]);
	if (w->soa.category[d] != category || w->soa.mask[d] != mask)
		bpi_world_mark(w, d);
	w->soa.category[d] = category;
	w->soa.mask[d] = mask;
}

bp_status bp_entity_set_kind(bp_world *w, bp_entity e, bp_kind kind)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	const bpi_slot *slot = bpi_world_live_slot(w, e);
	if (!slot)
		return BP_ERR_STALE_HANDLE;
	bp_status status = bpi_world_check_kind(w, kind, "kind");
	if (status == BP_OK)
		bpi_world_store_kind(w, slot->dense, kind);
	return status;
}

void bpi_world_store_kind(bp_world *w, uint32_t d, bp_kind kind)
{
	uint8_t flags = (uint8_t)((w->soa.flags[d] & ~BP_FLAG_STATIC) | (kind == BP_KIND_STATIC ? BP_FLAG_STATIC : 0));
	if (flags != w->soa.flags[d])
		bpi_world_mark(w, d);
	w->static_count -= (w->soa.flags[d] & BP_FLAG_STATIC) != 0;
	w->soa.flags[d] = flags;
	w->static_count += kind == BP_KIND_STATIC;
}

bp_status bp_entity_set_user_key(bp_world *w, bp_entity e, uint64_t user_key)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	const bpi_slot *slot = bpi_world_live_slot(w, e);
	if (!slot)
		return BP_ERR_STALE_HANDLE;
	bpi_world_store_user_key(w, slot->dense, user_key);
	return BP_OK;
}

void bpi_world_store_user_key(bp_world *w, uint32_t d, uint64_t user_key)
{
	if (w->soa.user_key[d] != user_key)
		bpi_world_mark_frame(w, d);
	w->soa.user_key[d] = user_key;
}

bp_status bp_entity_dense_index(const bp_world *w, bp_entity e, uint32_t *out)
{
	if (!w || !out)
		return BP_ERR_INVALID_ARGUMENT;
	const bpi_slot *slot = bpi_world_live_slot(w, e);
	if (!slot)
		return BP_ERR_STALE_HANDLE;
	*out = slot->dense;
	return BP_OK;
}

uint32_t bp_world_entity_count(const bp_world *w) { return w ? w->count : 0; }

bp_entity bp_world_entity_at(const bp_world *w, uint32_t dense)
{
	if (!w || dense >= w->count)
		return (bp_entity){0, 0};
	return w->soa.entity[dense];
}

const bp_entity *bp_world_entities(const bp_world *w) { return w ? w->soa.entity : NULL; }

const uint64_t *bp_world_user_keys(const bp_world *w) { return w ? w->soa.user_key : NULL; }

bp_status bpi_world_check_range(bp_world *w, uint32_t first, uint32_t count)
{
	if (first > w->count || count > w->count - first)
		return bpi_world_fail(w, BP_ERR_OUT_OF_RANGE, "dense range [%u, %llu) is outside [0, %u)", first,
			(unsigned long long)first + count, w->count);
	return BP_OK;
}

bp_status bp_world_set_algorithm(bp_world *w, bp_algorithm algorithm)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	if (!bp_algorithm_available(algorithm))
		return bpi_world_fail(w, BP_ERR_UNKNOWN_ALGORITHM, "algorithm %d is not built in", (int)algorithm);
	w->algorithm = algorithm;
	return BP_OK;
}

bp_algorithm bp_world_algorithm(const bp_world *w) { return w ? w->algorithm : BP_ALGO_AUTO; }

bp_status bp_world_set_thread_count(bp_world *w, int thread_count)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	if (thread_count < 0 || thread_count > BP_MAX_THREADS)
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "thread count %d is outside [0, %d] (BP_MAX_THREADS)",
			thread_count, BP_MAX_THREADS);
	w->thread_count = thread_count;
	return BP_OK;
}

bp_status bp_world_set_debug_flags(bp_world *w, uint32_t flags)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	if (flags & ~(uint32_t)BP_DEBUG_ALL)
		return bpi_world_fail(w, BP_ERR_INVALID_ARGUMENT, "debug flags 0x%x: unknown bits 0x%x", flags,
			flags & ~(uint32_t)BP_DEBUG_ALL);
	w->debug_flags = flags;
	return BP_OK;
}

uint32_t bp_world_debug_flags(const bp_world *w) { return w ? w->debug_flags : 0; }

bp_status bp_world_set_memory_limit(bp_world *w, size_t bytes)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	w->memory_limit = bytes;
	return BP_OK;
}

size_t bp_world_memory_limit(const bp_world *w) { return w ? w->memory_limit : 0; }
