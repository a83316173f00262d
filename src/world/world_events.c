// SPDX-License-Identifier: MIT
// Began and ended pairs for hosts that step with bp_world_step: each successful step names its
// selected pairs by handle, sorts them, and one merge against the last step's names gives the
// events, in the handle order and form of bp_view_events.
#include "world/world_data.h"

#include <stdlib.h>

static uint64_t handle_id(bp_entity e) { return (uint64_t)e.index1 << 32 | e.generation; }

static int compare_events(const void *x, const void *y)
{
	const bp_pair_event *p = x, *q = y;
	uint64_t pa = handle_id(p->a), qa = handle_id(q->a), pb = handle_id(p->b), qb = handle_id(q->b);
	if (pa != qa)
		return pa < qa ? -1 : 1;
	return pb < qb ? -1 : pb > qb;
}

void bpi_world_events_free(bpi_step_events *ev)
{
	bpi_array_free(&ev->named);
	bpi_array_free(&ev->scratch);
	bpi_array_free(&ev->began);
	bpi_array_free(&ev->ended);
	*ev = (bpi_step_events){0};
}

/// The selected pairs of the last step by handle, into ev->scratch, sorted; their number.
static size_t name_pairs(const bp_world *w, bpi_step_events *ev)
{
	const bp_entity *entity = w->soa.entity;
	const uint64_t *key = w->soa.user_key;
	const uint64_t *category = w->soa.category;
	size_t n = 0;
	bool sorted = true;
	for (size_t i = 0; i < w->pairs.count; ++i) {
		uint32_t a = w->pairs.data[i].lo, b = w->pairs.data[i].hi;
		if (!((category[a] | category[b]) & ev->categories))
			continue;
		if (handle_id(entity[a]) > handle_id(entity[b])) {
			uint32_t t = a;
			a = b, b = t;
		}
		ev->scratch.data[n] = (bp_pair_event){entity[a], entity[b], key[a], key[b]};
		sorted = sorted && (n == 0 || compare_events(&ev->scratch.data[n - 1], &ev->scratch.data[n]) < 0);
		++n;
	}
	if (!sorted)
		qsort(ev->scratch.data, n, sizeof *ev->scratch.data, compare_events);
	return n;
}

void bpi_world_events_step(bp_world *w)
{
	bpi_step_events *ev = &w->events;
	if (!ev->categories)
		return;
	ev->valid = false;
	ev->lost = true; // until this step's events are made
	// Room for the worst case: every pair named; every new name began, every old one ended.
	size_t pairs = w->pairs.count;
	if (!bpi_array_reserve(&ev->scratch, pairs) || !bpi_array_reserve(&ev->began, pairs) ||
		!bpi_array_reserve(&ev->ended, ev->named_count))
		return;
	size_t now = name_pairs(w, ev), then = ev->named_count;
	const bp_pair_event *x = ev->scratch.data, *y = ev->named.data;
	size_t i = 0, j = 0;
	ev->began_count = ev->ended_count = 0;
	while (i < now || j < then) {
		int order = i == now ? 1 : j == then ? -1 : compare_events(&x[i], &y[j]);
		if (order < 0)
			ev->began.data[ev->began_count++] = x[i++];
		else if (order > 0)
			ev->ended.data[ev->ended_count++] = y[j++];
		else
			i++, j++;
	}
	bpi_array_swap(&ev->named, &ev->scratch);
	ev->named_count = now;
	ev->valid = true;
	ev->lost = false;
}

bp_status bp_world_set_events(bp_world *w, uint64_t categories)
{
	if (!w)
		return BP_ERR_INVALID_ARGUMENT;
	bpi_step_events *ev = &w->events;
	if (categories == ev->categories)
		return BP_OK;
	if (!categories || !ev->categories) {
		bpi_world_events_free(ev); // turned on, the host has seen no pair yet; off, none is kept
	} else {
		// The last step's names stay, so the next step's events say which pairs entered and
		// left the selection, and every pair the host was told began is told when it ends.
		ev->valid = false;
		ev->lost = false;
	}
	ev->categories = categories;
	return BP_OK;
}

uint64_t bp_world_events_categories(const bp_world *w) { return w ? w->events.categories : 0; }

bp_status bp_world_events(const bp_world *w, bp_pair_event *began, size_t began_capacity, size_t *began_total,
	bp_pair_event *ended, size_t ended_capacity, size_t *ended_total)
{
	if (!w || !began_total || !ended_total || (began_capacity && !began) || (ended_capacity && !ended))
		return BP_ERR_INVALID_ARGUMENT;
	const bpi_step_events *ev = &w->events;
	if (!ev->categories)
		return BP_ERR_UNSUPPORTED;
	if (ev->lost)
		return BP_ERR_OUT_OF_MEMORY;
	if (!ev->valid) { // enabled since the last step: no step has made events yet
		*began_total = *ended_total = 0;
		return BP_OK;
	}
	size_t nb = BP_MIN(began_capacity, ev->began_count), ne = BP_MIN(ended_capacity, ev->ended_count);
	for (size_t i = 0; i < nb; ++i)
		began[i] = ev->began.data[i];
	for (size_t i = 0; i < ne; ++i)
		ended[i] = ev->ended.data[i];
	*began_total = ev->began_count;
	*ended_total = ev->ended_count;
	bp_status status = BPI_BUFFER_STATUS(ev->began_count, began_capacity);
	return status != BP_OK ? status : BPI_BUFFER_STATUS(ev->ended_count, ended_capacity);
}
