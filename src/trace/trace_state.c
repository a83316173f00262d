// SPDX-License-Identifier: MIT
// A trace's live entities: dense arrays with the world's swap-remove rule, and the id table.
#include "trace/trace_state.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char open_error[BPI_TRACE_OPEN_ERROR_BYTES];

char *bpi_trace_open_error(void) { return open_error; }

const char *bp_trace_open_error(void) { return open_error; }

static size_t slot_of(uint32_t id, size_t slot_count)
{
	return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 32) & (slot_count - 1);
}

void bpi_trace_state_free(bpi_trace_state *s)
{
	bpi_array_free(&s->ids);
	bpi_array_free(&s->category);
	bpi_array_free(&s->mask);
	bpi_array_free(&s->stamp);
	bpi_array_free(&s->kind);
	bpi_array_free(&s->shape);
	for (int a = 0; a < 3; ++a) {
		bpi_array_free(&s->min[a]);
		bpi_array_free(&s->max[a]);
	}
	bpi_array_free(&s->slots);
	bpi_array_free(&s->scratch);
	s->count = 0;
	s->slot_count = 0;
}

void bpi_trace_state_clear(bpi_trace_state *s)
{
	s->count = 0;
	for (size_t i = 0; i < s->slot_count; ++i)
		s->slots.data[i] = 0;
}

/// memcpy, which may not be handed the NULL data of an array that never held anything.
static void copy_bytes(void *to, const void *from, size_t bytes)
{
	if (bytes)
		memcpy(to, from, bytes);
}

bool bpi_trace_state_copy(bpi_trace_state *to, const bpi_trace_state *from)
{
	to->dims = from->dims;
	bpi_trace_state_clear(to);
	if (!bpi_trace_state_reserve(to, from->count) || !bpi_array_reserve(&to->slots, from->slot_count))
		return false;
	const size_t n = from->count;
	copy_bytes(to->ids.data, from->ids.data, n * sizeof *from->ids.data);
	copy_bytes(to->category.data, from->category.data, n * sizeof *from->category.data);
	copy_bytes(to->mask.data, from->mask.data, n * sizeof *from->mask.data);
	copy_bytes(to->stamp.data, from->stamp.data, n * sizeof *from->stamp.data);
	copy_bytes(to->kind.data, from->kind.data, n * sizeof *from->kind.data);
	copy_bytes(to->shape.data, from->shape.data, n * sizeof *from->shape.data);
	for (int a = 0; a < from->dims; ++a) {
		copy_bytes(to->min[a].data, from->min[a].data, n * sizeof *from->min[a].data);
		copy_bytes(to->max[a].data, from->max[a].data, n * sizeof *from->max[a].data);
	}
	copy_bytes(to->slots.data, from->slots.data, from->slot_count * sizeof *from->slots.data);
	to->slot_count = from->slot_count;
	to->count = from->count;
	return true;
}

void bpi_trace_state_swap(bpi_trace_state *a, bpi_trace_state *b)
{
	const bpi_trace_state t = *a;
	*a = *b;
	*b = t;
}

/// Rebuilds the table with `slot_count` slots (a power of two above count).
static bool rehash(bpi_trace_state *s, size_t slot_count)
{
	if (!bpi_array_reserve(&s->slots, slot_count))
		return false;
	s->slot_count = slot_count;
	for (size_t i = 0; i < slot_count; ++i)
		s->slots.data[i] = 0;
	for (uint32_t d = 0; d < s->count; ++d) {
		size_t i = slot_of(s->ids.data[d], slot_count);
		while (s->slots.data[i])
			i = (i + 1) & (slot_count - 1);
		s->slots.data[i] = d + 1;
	}
	return true;
}

bool bpi_trace_state_reserve(bpi_trace_state *s, uint32_t count)
{
	bool ok = bpi_array_grow(&s->ids, s->count, count) && bpi_array_grow(&s->category, s->count, count) &&
		  bpi_array_grow(&s->mask, s->count, count) && bpi_array_grow(&s->stamp, s->count, count) &&
		  bpi_array_grow(&s->kind, s->count, count) && bpi_array_grow(&s->shape, s->count, count);
	for (int a = 0; ok && a < s->dims; ++a)
		ok = bpi_array_grow(&s->min[a], s->count, count) && bpi_array_grow(&s->max[a], s->count, count);
	if (!ok)
		return false;
	size_t want = 16;
	while (want < 2 * (size_t)count)
		want *= 2;
	// A failed rehash into a new array leaves the table that still holds every entity.
	if (want > s->slot_count) {
		bpi_trace_state bigger = {0};
		bpi_array_swap(&bigger.slots, &s->slots);
		size_t old_count = s->slot_count;
		if (!rehash(s, want)) {
			bpi_array_swap(&bigger.slots, &s->slots);
			s->slot_count = old_count;
			return false;
		}
		bpi_array_free(&bigger.slots);
	}
	return true;
}

/// Slot holding `id`, or the empty slot where its probe ends.
static size_t probe(const bpi_trace_state *s, uint32_t id)
{
	size_t i = slot_of(id, s->slot_count);
	while (s->slots.data[i] && s->ids.data[s->slots.data[i] - 1] != id)
		i = (i + 1) & (s->slot_count - 1);
	return i;
}

uint32_t bpi_trace_state_find(const bpi_trace_state *s, uint32_t id)
{
	if (s->slot_count == 0)
		return BPI_TRACE_NONE;
	uint32_t slot = s->slots.data[probe(s, id)];
	return slot ? slot - 1 : BPI_TRACE_NONE;
}

void bpi_trace_state_append(bpi_trace_state *s, const bp_trace_entity *e)
{
	const uint32_t d = s->count++;
	s->ids.data[d] = e->id;
	s->category.data[d] = e->category;
	s->mask.data[d] = e->mask;
	s->stamp.data[d] = 0;
	s->kind.data[d] = e->kind;
	s->shape.data[d] = e->shape;
	for (int a = 0; a < s->dims; ++a) {
		s->min[a].data[d] = e->min[a];
		s->max[a].data[d] = e->max[a];
	}
	s->slots.data[probe(s, e->id)] = d + 1;
}

/// Empties slot i, shifting back the entries after it whose probe passed through it.
static void erase_slot(bpi_trace_state *s, size_t i)
{
	const size_t mask = s->slot_count - 1;
	for (size_t j = (i + 1) & mask; s->slots.data[j]; j = (j + 1) & mask) {
		size_t home = slot_of(s->ids.data[s->slots.data[j] - 1], s->slot_count);
		bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
		if (!stays) {
			s->slots.data[i] = s->slots.data[j];
			i = j;
		}
	}
	s->slots.data[i] = 0;
}

void bpi_trace_state_remove(bpi_trace_state *s, uint32_t dense)
{
	erase_slot(s, probe(s, s->ids.data[dense]));
	const uint32_t last = --s->count;
	if (dense == last)
		return;
	s->slots.data[probe(s, s->ids.data[last])] = dense + 1;
	s->ids.data[dense] = s->ids.data[last];
	s->category.data[dense] = s->category.data[last];
	s->mask.data[dense] = s->mask.data[last];
	s->stamp.data[dense] = s->stamp.data[last];
	s->kind.data[dense] = s->kind.data[last];
	s->shape.data[dense] = s->shape.data[last];
	for (int a = 0; a < s->dims; ++a) {
		s->min[a].data[dense] = s->min[a].data[last];
		s->max[a].data[dense] = s->max[a].data[last];
	}
}

bp_trace_entity bpi_trace_state_entity(const bpi_trace_state *s, uint32_t dense)
{
	bp_trace_entity e = {.id = s->ids.data[dense], .category = s->category.data[dense],
		.mask = s->mask.data[dense], .kind = s->kind.data[dense], .shape = s->shape.data[dense]};
	for (int a = 0; a < s->dims; ++a) {
		e.min[a] = s->min[a].data[dense];
		e.max[a] = s->max[a].data[dense];
	}
	return e;
}

const char *bpi_trace_bounds_problem(float min, float max, int axis)
{
	static const char *const not_finite[3] = {"a bound on x is nan or infinite", "a bound on y is nan or infinite",
		"a bound on z is nan or infinite"};
	static const char *const inverted[3] = {"min_x > max_x", "min_y > max_y", "min_z > max_z"};
	if (!isfinite(min) || !isfinite(max))
		return not_finite[axis];
	return min > max ? inverted[axis] : NULL;
}

const char *bpi_trace_entity_problem(const bp_trace_entity *e, int dims, bool bounds)
{
	if (e->kind != BP_KIND_DYNAMIC && e->kind != BP_KIND_STATIC)
		return "kind is neither dynamic nor static";
	if (e->shape != BP_SHAPE_BOX && e->shape != BP_SHAPE_SPHERE)
		return "shape is neither box nor sphere";
	for (int a = 0; bounds && a < dims; ++a) {
		const char *why = bpi_trace_bounds_problem(e->min[a], e->max[a], a);
		if (why)
			return why;
	}
	return NULL;
}

static int compare_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

bool bpi_trace_find_repeat(bpi_trace_state *s, const uint32_t *ids, size_t stride, uint32_t count, uint32_t *repeat,
	bool *out_of_memory)
{
	*out_of_memory = !bpi_array_reserve(&s->scratch, count);
	if (*out_of_memory)
		return false;
	for (uint32_t i = 0; i < count; ++i)
		s->scratch.data[i] = *(const uint32_t *)((const char *)ids + i * stride);
	qsort(s->scratch.data, count, sizeof(uint32_t), compare_u32);
	for (uint32_t i = 1; i < count; ++i)
		if (s->scratch.data[i] == s->scratch.data[i - 1]) {
			*repeat = s->scratch.data[i];
			return true;
		}
	return false;
}

bool bpi_trace_sorted_has(const bpi_trace_state *s, uint32_t count, uint32_t id)
{
	return count && bsearch(&id, s->scratch.data, count, sizeof(uint32_t), compare_u32) != NULL;
}
