// SPDX-License-Identifier: MIT
// A rank's input checked and packed into records, and the owned records handed back to the
// host as arrays.
#include "mpi/mpi_internal.h"

#include <math.h>
#include <string.h>

static const char *const axis_names[3] = {"x", "y", "z"};

static const float *bound_array(const bp_bounds_arrays *b, int is_max, int axis)
{
	const float *const arrays[2][3] = {{b->min_x, b->min_y, b->min_z}, {b->max_x, b->max_y, b->max_z}};
	return arrays[is_max][axis];
}

/// Moves a periodic box by whole periods so its minimum lies in [0, period), in double, and
/// checks the minimum image (extent <= period / 2) here rather than in the local world, so
/// the rank at fault names the entity by its global id.
static bp_status reduce_periodic(bp_mpi *mpi, bpi_mpi_record *r, uint32_t index)
{
	for (int axis = 0; axis < mpi->world_def.dims; ++axis) {
		double period = mpi->world_def.period[axis];
		double lo = r->min[axis], extent = (double)r->max[axis] - lo;
		if (extent > period / 2)
			return bpi_mpi_fail(mpi, BP_ERR_PERIODIC_EXTENT, "entity %u (id %llu): extent on %s exceeds period / 2",
				index, (unsigned long long)r->id, axis_names[axis]);
		double reduced = lo - floor(lo / period) * period;
		if (reduced >= period) // floor rounding can leave exactly one period
			reduced -= period;
		float min = (float)reduced;
		if (min >= (float)period)
			min = 0.0f;
		r->min[axis] = min;
		r->max[axis] = (float)((double)min + extent);
	}
	return BP_OK;
}

bp_status bpi_mpi_records_from_input(bp_mpi *mpi, const bp_mpi_entities *in, bpi_mpi_records *out)
{
	int dims = mpi->world_def.dims;
	if (!in)
		return bpi_mpi_fail(mpi, BP_ERR_INVALID_ARGUMENT, "no entities (NULL)");
	if (in->count && !in->ids)
		return bpi_mpi_fail(mpi, BP_ERR_INVALID_ARGUMENT, "ids is NULL");
	for (int k = 0; k < 2 * dims && in->count; ++k)
		if (!bound_array(&in->bounds, k / dims, k % dims))
			return bpi_mpi_fail(mpi, BP_ERR_INVALID_ARGUMENT, "%s_%s is NULL", k / dims ? "max" : "min",
				axis_names[k % dims]);
	if (!bpi_array_reserve(out, in->count ? in->count : 1))
		return bpi_mpi_fail(mpi, BP_ERR_OUT_OF_MEMORY, "no memory for %u entities", in->count);
	for (uint32_t i = 0; i < in->count; ++i) {
		bpi_mpi_record *r = &out->data[i];
		memset(r, 0, sizeof *r);
		r->id = in->ids[i];
		for (int axis = 0; axis < dims; ++axis) {
			r->min[axis] = bound_array(&in->bounds, 0, axis)[i];
			r->max[axis] = bound_array(&in->bounds, 1, axis)[i];
			if (!isfinite(r->min[axis]) || !isfinite(r->max[axis]))
				return bpi_mpi_fail(mpi, BP_ERR_NOT_FINITE, "entity %u (id %llu): %s bound is NaN or infinite", i,
					(unsigned long long)r->id, axis_names[axis]);
			if (r->min[axis] > r->max[axis])
				return bpi_mpi_fail(mpi, BP_ERR_INVERTED_BOUNDS, "entity %u (id %llu): min_%s > max_%s", i,
					(unsigned long long)r->id, axis_names[axis], axis_names[axis]);
		}
		r->category = in->category ? in->category[i] : 1u;
		r->mask = in->mask ? in->mask[i] : UINT64_MAX;
		r->kind = in->kind ? in->kind[i] : (uint8_t)BP_KIND_DYNAMIC;
		r->shape = in->shape ? in->shape[i] : (uint8_t)BP_SHAPE_BOX;
		if (r->kind > BP_KIND_STATIC || r->shape > BP_SHAPE_SPHERE)
			return bpi_mpi_fail(mpi, BP_ERR_INVALID_ARGUMENT, "entity %u (id %llu): unknown kind or shape", i,
				(unsigned long long)r->id);
		if (mpi->world_def.periodic) {
			bp_status status = reduce_periodic(mpi, r, i);
			if (status != BP_OK)
				return status;
		}
	}
	return BP_OK;
}

float bpi_mpi_centre(const bp_mpi *mpi, const bpi_mpi_record *r, int axis)
{
	float c = r->min[axis] + (r->max[axis] - r->min[axis]) * 0.5f;
	if (mpi->world_def.periodic && c >= mpi->world_def.period[axis])
		c -= mpi->world_def.period[axis];
	return c;
}

bp_status bpi_mpi_owned_views(bp_mpi *mpi)
{
	size_t n = mpi->owned_count, room = n ? n : 1;
	if (!bpi_array_reserve(&mpi->owned_ids, room) || !bpi_array_reserve(&mpi->owned_bounds, 6 * room) ||
		!bpi_array_reserve(&mpi->owned_filters, 2 * room) || !bpi_array_reserve(&mpi->owned_kinds, 2 * room))
		return bpi_mpi_fail(mpi, BP_ERR_OUT_OF_MEMORY, "no memory for %zu owned entities", n);
	float *bounds = mpi->owned_bounds.data;
	for (size_t i = 0; i < n; ++i) {
		const bpi_mpi_record *r = &mpi->owned.data[i];
		mpi->owned_ids.data[i] = r->id;
		for (int axis = 0; axis < 3; ++axis) {
			bounds[axis * n + i] = r->min[axis];
			bounds[(3 + axis) * n + i] = r->max[axis];
		}
		mpi->owned_filters.data[i] = r->category;
		mpi->owned_filters.data[n + i] = r->mask;
		mpi->owned_kinds.data[i] = r->kind;
		mpi->owned_kinds.data[n + i] = r->shape;
	}
	return BP_OK;
}

bp_mpi_entities bp_mpi_owned(const bp_mpi *mpi)
{
	size_t n = mpi->owned_count;
	const float *b = mpi->owned_bounds.data;
	bp_mpi_entities e = {.count = (uint32_t)n, .ids = mpi->owned_ids.data};
	if (!b)
		return e;
	e.bounds = (bp_bounds_arrays){b, b + n, b + 2 * n, b + 3 * n, b + 4 * n, b + 5 * n};
	e.category = mpi->owned_filters.data;
	e.mask = mpi->owned_filters.data + n;
	e.kind = mpi->owned_kinds.data;
	e.shape = mpi->owned_kinds.data + n;
	return e;
}
