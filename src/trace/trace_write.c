// SPDX-License-Identifier: MIT
// bp_trace_writer: checks each change against the live entities, collects a frame's changes
// in the file's column order, and writes frame records, keyframes, the index and the trailer.
#define _POSIX_C_SOURCE 200809L
#include "trace/trace_format.h"
#include "trace/trace_state.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/// A frame's changes, one column per field, in the file's order (docs/trace.md).
enum {
	COL_DESTROY_ID,
	COL_CREATE_ID,
	COL_CREATE_CATEGORY, ///< low words, then COL_CREATE_CATEGORY + 1 the high words
	COL_CREATE_MASK = COL_CREATE_CATEGORY + 2,
	COL_CREATE_FLAGS = COL_CREATE_MASK + 2,
	COL_CREATE_BOUNDS, ///< 2 * dims columns: min per axis, then max per axis
	COL_SET_ID = COL_CREATE_BOUNDS + 6,
	COL_SET_CATEGORY,
	COL_SET_MASK = COL_SET_CATEGORY + 2,
	COL_SET_FLAGS = COL_SET_MASK + 2,
	COL_MOVE_ID,
	COL_MOVE_BOUNDS,
	COL_COUNT = COL_MOVE_BOUNDS + 6
};

enum { SECTION_DESTROY, SECTION_CREATE, SECTION_SET, SECTION_MOVE, SECTION_COUNT };

#define WRITE_BUFFER_BYTES 65536u

struct bp_trace_writer {
	FILE *file;
	int dims;
	uint32_t keyframe_interval;
	uint32_t frames;
	uint32_t max_entities;
	bool broken; ///< a write failed: every later call fails
	bpi_trace_state state;
	BPI_ARRAY(uint32_t) column[COL_COUNT];
	uint32_t section[SECTION_COUNT]; ///< changes of the open frame per section
	BPI_ARRAY(uint64_t) index;       ///< per frame: record offset, keyframe offset (0 = none)
	uint64_t offset;                 ///< bytes written so far
	uint32_t hash;                   ///< checksum of the record being written
	size_t buffered;
	uint8_t buffer[WRITE_BUFFER_BYTES];
	char error[320];
};

bp_trace_writer_def bp_trace_writer_def_default(void)
{
	return (bp_trace_writer_def){.dims = 3, .keyframe_interval = 64};
}

static bp_status fail(bp_trace_writer *w, bp_status status, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(w->error, sizeof w->error, format, args);
	va_end(args);
	return status;
}

// ---- bytes out ------------------------------------------------------------------------

static bool flush(bp_trace_writer *w)
{
	if (w->buffered && !w->broken && fwrite(w->buffer, 1, w->buffered, w->file) != w->buffered) {
		fail(w, BP_ERR_IO, "write failed: %s", strerror(errno));
		w->broken = true;
	}
	w->buffered = 0;
	return !w->broken;
}

static void emit(bp_trace_writer *w, uint32_t word)
{
	if (w->buffered + 4 > WRITE_BUFFER_BYTES)
		flush(w);
	uint8_t *p = w->buffer + w->buffered;
	bpi_trace_put32(p, word);
	w->hash = bpi_trace_fnv(w->hash, p, 4);
	w->buffered += 4;
	w->offset += 4;
}

static void emit_column(bp_trace_writer *w, int column, uint32_t count)
{
	for (uint32_t i = 0; i < count; ++i)
		emit(w, w->column[column].data[i]);
}

/// A keyframe's categories or masks: the low words, then the high words (docs/trace.md).
static void emit_filters(bp_trace_writer *w, const uint64_t *bits, uint32_t count)
{
	for (uint32_t d = 0; d < count; ++d)
		emit(w, (uint32_t)bits[d]);
	for (uint32_t d = 0; d < count; ++d)
		emit(w, (uint32_t)(bits[d] >> 32));
}

/// Element j of a frame's category or mask column pair: low word, high word.
static void put_filter(bp_trace_writer *w, int column, uint32_t j, uint64_t bits)
{
	w->column[column].data[j] = (uint32_t)bits;
	w->column[column + 1].data[j] = (uint32_t)(bits >> 32);
}

// ---- opening --------------------------------------------------------------------------

static bool reserve_columns(bp_trace_writer *w, int first, int count, uint32_t section, uint32_t more)
{
	for (int c = first; c < first + count; ++c)
		if (!bpi_array_grow(&w->column[c], w->section[section], (size_t)w->section[section] + more))
			return false;
	return true;
}

static void free_writer(bp_trace_writer *w)
{
	if (w->file)
		fclose(w->file);
	bpi_trace_state_free(&w->state);
	for (int c = 0; c < COL_COUNT; ++c)
		bpi_array_free(&w->column[c]);
	bpi_array_free(&w->index);
	bpi_free(w, sizeof *w);
}

bp_status bp_trace_writer_open(const char *path, const bp_trace_writer_def *def, bp_trace_writer **out)
{
	if (!out)
		return BP_ERR_INVALID_ARGUMENT;
	*out = NULL;
	if (!path || !def) {
		snprintf(bpi_trace_open_error(), BPI_TRACE_OPEN_ERROR_BYTES, "bp_trace_writer_open: path and def are required");
		return BP_ERR_INVALID_ARGUMENT;
	}
	if (def->dims != 2 && def->dims != 3) {
		snprintf(bpi_trace_open_error(), BPI_TRACE_OPEN_ERROR_BYTES, "%s: dims %d is not 2 or 3", path, def->dims);
		return BP_ERR_INVALID_ARGUMENT;
	}
	bp_trace_writer *w = bpi_alloc(sizeof *w);
	if (!w) {
		snprintf(bpi_trace_open_error(), BPI_TRACE_OPEN_ERROR_BYTES, "%s: out of memory", path);
		return BP_ERR_OUT_OF_MEMORY;
	}
	memset(w, 0, sizeof *w);
	w->dims = def->dims;
	w->keyframe_interval = def->keyframe_interval;
	w->state.dims = def->dims;
	if (!bpi_trace_state_reserve(&w->state, 0)) {
		free_writer(w);
		snprintf(bpi_trace_open_error(), BPI_TRACE_OPEN_ERROR_BYTES, "%s: out of memory", path);
		return BP_ERR_OUT_OF_MEMORY;
	}
	if (!(w->file = fopen(path, "wb"))) {
		snprintf(bpi_trace_open_error(), BPI_TRACE_OPEN_ERROR_BYTES, "%s: cannot create: %s", path, strerror(errno));
		free_writer(w);
		return BP_ERR_IO;
	}
	memcpy(w->buffer, BPI_TRACE_MAGIC, 8);
	w->buffered = w->offset = 8;
	emit(w, BP_TRACE_VERSION);
	emit(w, (uint32_t)def->dims);
	emit(w, 0); // flags
	emit(w, 0); // reserved
	*out = w;
	return BP_OK;
}

// ---- changes --------------------------------------------------------------------------

static uint32_t flags_of(bp_kind kind, bp_shape shape)
{
	return (kind == BP_KIND_STATIC ? BPI_TRACE_FLAG_STATIC : 0) | (shape == BP_SHAPE_SPHERE ? BPI_TRACE_FLAG_SPHERE : 0);
}

/// Checks the call's common arguments and that the section can take `count` more.
static bp_status check_call(bp_trace_writer *w, const char *call, uint32_t count, const void *items, int section)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	if (w->broken)
		return BP_ERR_IO;
	if (count && !items)
		return fail(w, BP_ERR_INVALID_ARGUMENT, "%s: %u entities and no array", call, count);
	if (count > UINT32_MAX - w->section[section] || count > UINT32_MAX - w->state.count)
		return fail(w, BP_ERR_OUT_OF_RANGE, "%s: frame %u would hold more than 2^32 - 1 changes or entities", call,
			w->frames);
	return BP_OK;
}

/// An id of the call listed twice, as an error; BP_OK when none is.
static bp_status check_repeats(bp_trace_writer *w, const char *call, const uint32_t *ids, size_t stride, uint32_t count)
{
	uint32_t repeat;
	bool out_of_memory;
	if (bpi_trace_find_repeat(&w->state, ids, stride, count, &repeat, &out_of_memory))
		return fail(w, BP_ERR_INVALID_ARGUMENT, "%s: id %u is listed twice", call, repeat);
	return out_of_memory ? fail(w, BP_ERR_OUT_OF_MEMORY, "%s: out of memory", call) : BP_OK;
}

bp_status bp_trace_destroy(bp_trace_writer *w, uint32_t count, const uint32_t *ids)
{
	bp_status status = check_call(w, "bp_trace_destroy", count, ids, SECTION_DESTROY);
	if (status != BP_OK || count == 0)
		return status;
	if (w->section[SECTION_CREATE])
		return fail(w, BP_ERR_INVALID_ARGUMENT,
			"bp_trace_destroy: frame %u already has creates; a frame's destroys come before its creates", w->frames);
	if ((status = check_repeats(w, "bp_trace_destroy", ids, sizeof ids[0], count)) != BP_OK)
		return status;
	for (uint32_t i = 0; i < count; ++i) {
		uint32_t d = bpi_trace_state_find(&w->state, ids[i]);
		if (d == BPI_TRACE_NONE)
			return fail(w, BP_ERR_INVALID_ARGUMENT, "bp_trace_destroy: ids[%u]: id %u is not live", i, ids[i]);
		if (w->state.stamp.data[d] == w->frames + 1)
			return fail(w, BP_ERR_INVALID_ARGUMENT,
				"bp_trace_destroy: ids[%u]: id %u was changed or moved in frame %u; a frame's destroys come "
				"before its changes", i, ids[i], w->frames);
	}
	if (!reserve_columns(w, COL_DESTROY_ID, 1, SECTION_DESTROY, count))
		return fail(w, BP_ERR_OUT_OF_MEMORY, "bp_trace_destroy: out of memory");
	for (uint32_t i = 0; i < count; ++i) {
		bpi_trace_state_remove(&w->state, bpi_trace_state_find(&w->state, ids[i]));
		w->column[COL_DESTROY_ID].data[w->section[SECTION_DESTROY]++] = ids[i];
	}
	return BP_OK;
}

bp_status bp_trace_create(bp_trace_writer *w, uint32_t count, const bp_trace_entity *entities)
{
	bp_status status = check_call(w, "bp_trace_create", count, entities, SECTION_CREATE);
	if (status != BP_OK || count == 0)
		return status;
	for (uint32_t i = 0; i < count; ++i) {
		const char *why = bpi_trace_entity_problem(&entities[i], w->dims, true);
		if (why)
			return fail(w, BP_ERR_INVALID_ARGUMENT, "bp_trace_create: entities[%u]: id %u: %s", i, entities[i].id, why);
		if (bpi_trace_state_find(&w->state, entities[i].id) != BPI_TRACE_NONE)
			return fail(w, BP_ERR_INVALID_ARGUMENT, "bp_trace_create: entities[%u]: id %u is already live", i,
				entities[i].id);
	}
	if ((status = check_repeats(w, "bp_trace_create", &entities[0].id, sizeof entities[0], count)) != BP_OK)
		return status;
	if (!reserve_columns(w, COL_CREATE_ID, (int)bpi_trace_entity_words(2) + 2 * w->dims, SECTION_CREATE, count) ||
		!bpi_trace_state_reserve(&w->state, w->state.count + count))
		return fail(w, BP_ERR_OUT_OF_MEMORY, "bp_trace_create: out of memory");
	for (uint32_t i = 0; i < count; ++i) {
		const bp_trace_entity *e = &entities[i];
		bpi_trace_state_append(&w->state, e);
		w->state.stamp.data[w->state.count - 1] = w->frames + 1;
		const uint32_t j = w->section[SECTION_CREATE]++;
		w->column[COL_CREATE_ID].data[j] = e->id;
		put_filter(w, COL_CREATE_CATEGORY, j, e->category);
		put_filter(w, COL_CREATE_MASK, j, e->mask);
		w->column[COL_CREATE_FLAGS].data[j] = flags_of(e->kind, e->shape);
		for (int a = 0; a < w->dims; ++a) {
			w->column[COL_CREATE_BOUNDS + a].data[j] = bpi_trace_float_bits(e->min[a]);
			w->column[COL_CREATE_BOUNDS + w->dims + a].data[j] = bpi_trace_float_bits(e->max[a]);
		}
	}
	if (w->state.count > w->max_entities)
		w->max_entities = w->state.count;
	return BP_OK;
}

bp_status bp_trace_set(bp_trace_writer *w, uint32_t count, const bp_trace_entity *entities)
{
	bp_status status = check_call(w, "bp_trace_set", count, entities, SECTION_SET);
	if (status != BP_OK || count == 0)
		return status;
	for (uint32_t i = 0; i < count; ++i) {
		const char *why = bpi_trace_entity_problem(&entities[i], w->dims, false);
		if (why)
			return fail(w, BP_ERR_INVALID_ARGUMENT, "bp_trace_set: entities[%u]: id %u: %s", i, entities[i].id, why);
		if (bpi_trace_state_find(&w->state, entities[i].id) == BPI_TRACE_NONE)
			return fail(w, BP_ERR_INVALID_ARGUMENT, "bp_trace_set: entities[%u]: id %u is not live", i, entities[i].id);
	}
	if (!reserve_columns(w, COL_SET_ID, (int)bpi_trace_entity_words(2), SECTION_SET, count))
		return fail(w, BP_ERR_OUT_OF_MEMORY, "bp_trace_set: out of memory");
	for (uint32_t i = 0; i < count; ++i) {
		const bp_trace_entity *e = &entities[i];
		const uint32_t d = bpi_trace_state_find(&w->state, e->id), j = w->section[SECTION_SET]++;
		w->state.category.data[d] = e->category;
		w->state.mask.data[d] = e->mask;
		w->state.kind.data[d] = e->kind;
		w->state.shape.data[d] = e->shape;
		w->state.stamp.data[d] = w->frames + 1;
		w->column[COL_SET_ID].data[j] = e->id;
		put_filter(w, COL_SET_CATEGORY, j, e->category);
		put_filter(w, COL_SET_MASK, j, e->mask);
		w->column[COL_SET_FLAGS].data[j] = flags_of(e->kind, e->shape);
	}
	return BP_OK;
}

bp_status bp_trace_move(bp_trace_writer *w, uint32_t count, const uint32_t *ids, const bp_bounds_arrays *bounds)
{
	bp_status status = check_call(w, "bp_trace_move", count, ids, SECTION_MOVE);
	if (status != BP_OK || count == 0)
		return status;
	const float *lo[3] = {bounds ? bounds->min_x : NULL, bounds ? bounds->min_y : NULL, bounds ? bounds->min_z : NULL};
	const float *hi[3] = {bounds ? bounds->max_x : NULL, bounds ? bounds->max_y : NULL, bounds ? bounds->max_z : NULL};
	for (int a = 0; a < w->dims; ++a)
		if (!lo[a] || !hi[a])
			return fail(w, BP_ERR_INVALID_ARGUMENT, "bp_trace_move: the bounds of axis %d are missing", a);
	for (uint32_t i = 0; i < count; ++i) {
		for (int a = 0; a < w->dims; ++a) {
			const char *why = bpi_trace_bounds_problem(lo[a][i], hi[a][i], a);
			if (why)
				return fail(w, BP_ERR_INVALID_ARGUMENT, "bp_trace_move: bounds[%u]: id %u: %s", i, ids[i], why);
		}
		if (bpi_trace_state_find(&w->state, ids[i]) == BPI_TRACE_NONE)
			return fail(w, BP_ERR_INVALID_ARGUMENT, "bp_trace_move: ids[%u]: id %u is not live", i, ids[i]);
	}
	if (!reserve_columns(w, COL_MOVE_ID, 1 + 2 * w->dims, SECTION_MOVE, count))
		return fail(w, BP_ERR_OUT_OF_MEMORY, "bp_trace_move: out of memory");
	for (uint32_t i = 0; i < count; ++i) {
		const uint32_t d = bpi_trace_state_find(&w->state, ids[i]), j = w->section[SECTION_MOVE]++;
		w->state.stamp.data[d] = w->frames + 1;
		w->column[COL_MOVE_ID].data[j] = ids[i];
		for (int a = 0; a < w->dims; ++a) {
			w->state.min[a].data[d] = lo[a][i];
			w->state.max[a].data[d] = hi[a][i];
			w->column[COL_MOVE_BOUNDS + a].data[j] = bpi_trace_float_bits(lo[a][i]);
			w->column[COL_MOVE_BOUNDS + w->dims + a].data[j] = bpi_trace_float_bits(hi[a][i]);
		}
	}
	return BP_OK;
}

// ---- frames ---------------------------------------------------------------------------

static void emit_keyframe(bp_trace_writer *w)
{
	const bpi_trace_state *s = &w->state;
	w->hash = BPI_TRACE_FNV_OFFSET;
	emit(w, BPI_TRACE_KEYFRAME_TAG);
	emit(w, w->frames);
	emit(w, s->count);
	for (uint32_t d = 0; d < s->count; ++d)
		emit(w, s->ids.data[d]);
	emit_filters(w, s->category.data, s->count);
	emit_filters(w, s->mask.data, s->count);
	for (uint32_t d = 0; d < s->count; ++d)
		emit(w, flags_of(s->kind.data[d], s->shape.data[d]));
	for (int a = 0; a < w->dims; ++a)
		for (uint32_t d = 0; d < s->count; ++d)
			emit(w, bpi_trace_float_bits(s->min[a].data[d]));
	for (int a = 0; a < w->dims; ++a)
		for (uint32_t d = 0; d < s->count; ++d)
			emit(w, bpi_trace_float_bits(s->max[a].data[d]));
	emit(w, w->hash);
}

bp_status bp_trace_end_frame(bp_trace_writer *w)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	if (w->broken)
		return BP_ERR_IO;
	if (w->frames == UINT32_MAX)
		return fail(w, BP_ERR_OUT_OF_RANGE, "bp_trace_end_frame: a trace holds at most 2^32 - 1 frames");
	if (!bpi_array_grow(&w->index, 2 * (size_t)w->frames, 2 * (size_t)w->frames + 2))
		return fail(w, BP_ERR_OUT_OF_MEMORY, "bp_trace_end_frame: out of memory");
	const uint32_t *n = w->section;
	w->index.data[2 * (size_t)w->frames] = w->offset;
	w->index.data[2 * (size_t)w->frames + 1] = 0;
	w->hash = BPI_TRACE_FNV_OFFSET;
	emit(w, BPI_TRACE_FRAME_TAG);
	emit(w, w->frames);
	for (int s = 0; s < SECTION_COUNT; ++s)
		emit(w, n[s]);
	emit_column(w, COL_DESTROY_ID, n[SECTION_DESTROY]);
	for (int c = COL_CREATE_ID; c < COL_CREATE_BOUNDS + 2 * w->dims; ++c)
		emit_column(w, c, n[SECTION_CREATE]);
	for (int c = COL_SET_ID; c <= COL_SET_FLAGS; ++c)
		emit_column(w, c, n[SECTION_SET]);
	for (int c = COL_MOVE_ID; c < COL_MOVE_BOUNDS + 2 * w->dims; ++c)
		emit_column(w, c, n[SECTION_MOVE]);
	emit(w, w->hash);
	if (w->keyframe_interval && w->frames > 0 && w->frames % w->keyframe_interval == 0) {
		w->index.data[2 * (size_t)w->frames + 1] = w->offset;
		emit_keyframe(w);
	}
	for (int s = 0; s < SECTION_COUNT; ++s)
		w->section[s] = 0;
	w->frames++;
	return flush(w) ? BP_OK : BP_ERR_IO;
}

uint32_t bp_trace_writer_frames(const bp_trace_writer *w) { return w ? w->frames : 0; }

const char *bp_trace_writer_error(const bp_trace_writer *w) { return w ? w->error : ""; }

bp_status bp_trace_writer_close(bp_trace_writer *w)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	bp_status status = BP_OK;
	const uint32_t *n = w->section;
	if (n[SECTION_DESTROY] + (uint64_t)n[SECTION_CREATE] + n[SECTION_SET] + n[SECTION_MOVE] > 0)
		status = bp_trace_end_frame(w);
	if (status == BP_OK && !w->broken) {
		const uint64_t index_offset = w->offset;
		w->hash = BPI_TRACE_FNV_OFFSET;
		for (size_t i = 0; i < 2 * (size_t)w->frames; ++i) {
			uint8_t bytes[8];
			bpi_trace_put64(bytes, w->index.data[i]);
			emit(w, bpi_trace_get32(bytes));
			emit(w, bpi_trace_get32(bytes + 4));
		}
		uint8_t words[12];
		bpi_trace_put32(words, w->frames);
		bpi_trace_put32(words + 4, w->max_entities);
		bpi_trace_put32(words + 8, w->keyframe_interval);
		const uint32_t index_hash = bpi_trace_fnv(w->hash, words, sizeof words);
		emit(w, (uint32_t)index_offset);
		emit(w, (uint32_t)(index_offset >> 32));
		emit(w, w->frames);
		emit(w, index_hash);
		emit(w, w->max_entities);
		emit(w, w->keyframe_interval);
		emit(w, bpi_trace_get32((const uint8_t *)BPI_TRACE_END_MAGIC));
		emit(w, bpi_trace_get32((const uint8_t *)BPI_TRACE_END_MAGIC + 4));
		if (!flush(w))
			status = BP_ERR_IO;
	}
	if (w->broken)
		status = BP_ERR_IO;
	int closed = fclose(w->file);
	w->file = NULL;
	if (status == BP_OK && closed != 0)
		status = fail(w, BP_ERR_IO, "closing the file failed: %s", strerror(errno));
	if (status != BP_OK)
		snprintf(bpi_trace_open_error(), BPI_TRACE_OPEN_ERROR_BYTES, "%s", w->error);
	free_writer(w);
	return status;
}
