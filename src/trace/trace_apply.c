// SPDX-License-Identifier: MIT
// A trace's frames into worlds: the reader's state into an empty world, and each frame the
// reader applied into a world that follows it, keeping the world's dense order the reader's.
#include "trace/trace_read.h"

#include <string.h>

/// Entity i of a list of creates, or of the reader's state.
typedef bp_trace_entity entity_at_fn(const bp_trace_reader *r, uint32_t i);

static bp_trace_entity frame_create(const bp_trace_reader *r, uint32_t i) { return r->frame.creates[i]; }

static bp_trace_entity state_entity(const bp_trace_reader *r, uint32_t i)
{
	return bpi_trace_state_entity(&r->state, i);
}

static bool same_settings(const bp_trace_entity *a, const bp_trace_entity *b)
{
	return a->category == b->category && a->mask == b->mask && a->kind == b->kind && a->shape == b->shape;
}

static bp_status world_fail(bp_trace_reader *r, bp_world *world, bp_status status, const char *what)
{
	return bpi_trace_reader_fail(r, status, "%s: the world: %s", what, bp_world_last_error(world));
}

/// Appends entities [first, first + count) of `at` to the world, a run of equal settings per
/// call, each with its trace id as user key.
static bp_status create_runs(bp_trace_reader *r, bp_world *world, entity_at_fn *at, uint32_t count, const char *what)
{
	bool ok = bpi_array_reserve(&r->run_keys, count);
	for (int c = 0; ok && c < 6; ++c)
		ok = bpi_array_reserve(&r->run_bounds[c], count);
	if (!ok)
		return bpi_trace_reader_fail(r, BP_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
	for (uint32_t first = 0; first < count;) {
		const bp_trace_entity head = at(r, first);
		uint32_t end = first;
		for (; end < count; ++end) {
			const bp_trace_entity e = at(r, end);
			if (!same_settings(&e, &head))
				break;
			const uint32_t j = end - first;
			for (int a = 0; a < 3; ++a) {
				r->run_bounds[a].data[j] = a < r->dims ? e.min[a] : 0;
				r->run_bounds[3 + a].data[j] = a < r->dims ? e.max[a] : 0;
			}
			r->run_keys.data[j] = e.id;
		}
		bp_entity_def def = bp_entity_def_default();
		def.category = head.category;
		def.mask = head.mask;
		def.kind = head.kind;
		def.shape = head.shape;
		const bp_bounds_arrays bounds = {r->run_bounds[0].data, r->run_bounds[1].data, r->run_bounds[2].data,
			r->run_bounds[3].data, r->run_bounds[4].data, r->run_bounds[5].data};
		const uint32_t dense = bp_world_entity_count(world);
		bp_status status = bp_world_create_entities(world, end - first, &bounds, &def, NULL);
		if (status == BP_OK)
			status = bp_entities_set_user_keys(world, bp_target_range(dense, end - first), r->run_keys.data);
		if (status != BP_OK)
			return world_fail(r, world, status, what);
		first = end;
	}
	return BP_OK;
}

bp_status bp_trace_reader_load(bp_trace_reader *r, bp_world *world)
{
	if (!r || !world)
		return BP_ERR_INVALID_ARGUMENT;
	if (bp_world_entity_count(world) != 0)
		return bpi_trace_reader_fail(r, BP_ERR_INVALID_ARGUMENT, "load: the world holds %u entities, not none",
			bp_world_entity_count(world));
	return create_runs(r, world, state_entity, r->state.count, "load");
}

bp_status bp_trace_reader_apply(bp_trace_reader *r, bp_world *world)
{
	if (!r || !world)
		return BP_ERR_INVALID_ARGUMENT;
	if (!r->applied)
		return bpi_trace_reader_fail(r, BP_ERR_INVALID_ARGUMENT,
			"apply: no frame to apply; bp_trace_reader_next returns one");
	const bp_trace_frame *f = &r->frame;
	char what[32];
	snprintf(what, sizeof what, "frame %u", f->index);
	if (bp_world_entity_count(world) != r->count_before)
		return bpi_trace_reader_fail(r, BP_ERR_INVALID_ARGUMENT,
			"%s: the world holds %u entities, the trace %u before this frame", what, bp_world_entity_count(world),
			r->count_before);
	bp_status status = BP_OK;
	for (uint32_t i = 0; status == BP_OK && i < f->destroy_count; ++i)
		status = bp_entity_destroy(world, bp_world_entity_at(world, r->destroy_dense.data[i]));
	if (status != BP_OK)
		return world_fail(r, world, status, what);
	if ((status = create_runs(r, world, frame_create, f->create_count, what)) != BP_OK)
		return status;
	for (uint32_t i = 0; status == BP_OK && i < f->set_count; ++i) {
		const bp_trace_entity *e = &f->sets[i];
		bp_entity handle = bp_world_entity_at(world, r->set_dense.data[i]);
		status = bp_entity_set_filter(world, handle, e->category, e->mask);
		if (status == BP_OK)
			status = bp_entity_set_kind(world, handle, e->kind);
		if (status == BP_OK)
			status = bp_entity_set_shape(world, handle, e->shape);
	}
	if (status == BP_OK && f->move_count) {
		bp_bounds_arrays bounds = f->moves;
		if (r->dims == 2) { // a world of another dims reads z: zeros rather than nothing
			memset(r->moves[4].data, 0, f->move_count * sizeof(float)); // unused in 2D
			bounds.min_z = bounds.max_z = r->moves[4].data;
		}
		status = bp_entities_set_bounds(world, bp_target_indices(f->move_count, r->move_dense.data), &bounds);
	}
	return status == BP_OK ? BP_OK : world_fail(r, world, status, what);
}
