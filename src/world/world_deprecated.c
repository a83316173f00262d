// SPDX-License-Identifier: MIT
// The bulk setters before 0.8 (world.h "Deprecated bulk setters"), each the bp_entities_set_X
// call with the target its name describes. This file goes in 0.9.
#include "world/world_data.h"

bp_status bp_world_set_user_keys(bp_world *w, uint32_t first, uint32_t count, const uint64_t *keys)
{
	return bp_entities_set_user_keys(w, bp_target_range(first, count), keys);
}

bp_status bp_world_set_user_keys_indexed(bp_world *w, uint32_t count, const uint32_t *dense_indices,
	const uint64_t *keys)
{
	return bp_entities_set_user_keys(w, bp_target_indices(count, dense_indices), keys);
}

bp_status bp_world_set_user_keys_by_handle(bp_world *w, uint32_t count, const bp_entity *entities, const uint64_t *keys)
{
	return bp_entities_set_user_keys(w, bp_target_handles(count, entities), keys);
}

bp_status bp_world_set_filters(bp_world *w, uint32_t first, uint32_t count, const uint64_t *category,
	const uint64_t *mask)
{
	return bp_entities_set_filters(w, bp_target_range(first, count), category, mask);
}

bp_status bp_world_set_filters_indexed(bp_world *w, uint32_t count, const uint32_t *dense_indices,
	const uint64_t *category, const uint64_t *mask)
{
	return bp_entities_set_filters(w, bp_target_indices(count, dense_indices), category, mask);
}

bp_status bp_world_set_filters_by_handle(bp_world *w, uint32_t count, const bp_entity *entities,
	const uint64_t *category, const uint64_t *mask)
{
	return bp_entities_set_filters(w, bp_target_handles(count, entities), category, mask);
}

bp_status bp_world_set_kinds(bp_world *w, uint32_t first, uint32_t count, const bp_kind *kinds)
{
	return bp_entities_set_kinds(w, bp_target_range(first, count), kinds);
}

bp_status bp_world_set_kinds_indexed(bp_world *w, uint32_t count, const uint32_t *dense_indices, const bp_kind *kinds)
{
	return bp_entities_set_kinds(w, bp_target_indices(count, dense_indices), kinds);
}

bp_status bp_world_set_kinds_by_handle(bp_world *w, uint32_t count, const bp_entity *entities, const bp_kind *kinds)
{
	return bp_entities_set_kinds(w, bp_target_handles(count, entities), kinds);
}

bp_status bp_world_set_shapes(bp_world *w, uint32_t first, uint32_t count, const bp_shape *shapes)
{
	return bp_entities_set_shapes(w, bp_target_range(first, count), shapes);
}

bp_status bp_world_set_shapes_indexed(bp_world *w, uint32_t count, const uint32_t *dense_indices,
	const bp_shape *shapes)
{
	return bp_entities_set_shapes(w, bp_target_indices(count, dense_indices), shapes);
}

bp_status bp_world_set_shapes_by_handle(bp_world *w, uint32_t count, const bp_entity *entities, const bp_shape *shapes)
{
	return bp_entities_set_shapes(w, bp_target_handles(count, entities), shapes);
}

bp_status bp_world_set_bounds(bp_world *w, uint32_t first, uint32_t count, const bp_bounds_arrays *bounds)
{
	return bp_entities_set_bounds(w, bp_target_range(first, count), bounds);
}

bp_status bp_world_set_bounds_indexed(bp_world *w, uint32_t count, const uint32_t *dense_indices,
	const bp_bounds_arrays *bounds)
{
	return bp_entities_set_bounds(w, bp_target_indices(count, dense_indices), bounds);
}

bp_status bp_world_set_bounds_by_handle(bp_world *w, uint32_t count, const bp_entity *entities,
	const bp_bounds_arrays *bounds)
{
	return bp_entities_set_bounds(w, bp_target_handles(count, entities), bounds);
}

bp_status bp_world_set_bounds_f64(bp_world *w, uint32_t first, uint32_t count, const bp_bounds_arrays_f64 *bounds)
{
	return bp_entities_set_bounds_f64(w, bp_target_range(first, count), bounds);
}

bp_status bp_world_set_bounds_f64_indexed(bp_world *w, uint32_t count, const uint32_t *dense_indices,
	const bp_bounds_arrays_f64 *bounds)
{
	return bp_entities_set_bounds_f64(w, bp_target_indices(count, dense_indices), bounds);
}

bp_status bp_world_set_bounds_f64_by_handle(bp_world *w, uint32_t count, const bp_entity *entities,
	const bp_bounds_arrays_f64 *bounds)
{
	return bp_entities_set_bounds_f64(w, bp_target_handles(count, entities), bounds);
}

bp_status bp_world_set_spheres(bp_world *w, uint32_t first, uint32_t count, const bp_sphere_arrays *spheres)
{
	return bp_entities_set_spheres(w, bp_target_range(first, count), spheres);
}

bp_status bp_world_set_spheres_indexed(bp_world *w, uint32_t count, const uint32_t *dense_indices,
	const bp_sphere_arrays *spheres)
{
	return bp_entities_set_spheres(w, bp_target_indices(count, dense_indices), spheres);
}

bp_status bp_world_set_spheres_by_handle(bp_world *w, uint32_t count, const bp_entity *entities,
	const bp_sphere_arrays *spheres)
{
	return bp_entities_set_spheres(w, bp_target_handles(count, entities), spheres);
}
