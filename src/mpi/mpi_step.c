// SPDX-License-Identifier: MIT
// The two ways to step: domains chosen by the library (bisection, migration, rebalancing)
// or given by the host; both then exchange ghosts and step locally.
#include "mpi/mpi_internal.h"

#include <math.h>
#include <string.h>

/// Ghost exchange, local step and the owned arrays: what both kinds of step end with.
static bp_status finish_step(bp_mpi *mpi, uint64_t t0)
{
	bpi_mpi_records ghosts = {0};
	size_t ghost_count = 0;
	uint64_t t_exchange = bpi_now_ns();
	bp_status status = bpi_mpi_exchange_ghosts(mpi, &ghosts, &ghost_count);
	mpi->stats.ns_exchange += bpi_now_ns() - t_exchange;
	if (status == BP_OK) {
		uint64_t t_step = bpi_now_ns();
		status = bpi_mpi_local_step(mpi, &ghosts, ghost_count);
		if (status == BP_OK)
			status = bpi_mpi_owned_views(mpi);
		mpi->stats.ns_step = bpi_now_ns() - t_step;
		status = bpi_mpi_agree(mpi, status);
	}
	bpi_array_free(&ghosts);
	mpi->stats.owned = (uint32_t)mpi->owned_count;
	mpi->stats.ghosts = (uint32_t)ghost_count;
	mpi->stats.pair_count = status == BP_OK ? mpi->pair_count : 0;
	mpi->stats.ns_total = bpi_now_ns() - t0;
	if (status != BP_OK) {
		mpi->pair_count = 0;
		mpi->owned_count = 0;
	}
	return status;
}

static void begin_step(bp_mpi *mpi)
{
	memset(&mpi->stats, 0, sizeof mpi->stats);
	mpi->error[0] = '\0';
}

/// Destination of each record by the current tree; returns the most records any rank would
/// own over the mean (collective).
static bp_status route_all(bp_mpi *mpi, const bpi_mpi_record *records, size_t count, int *dest, double *imbalance)
{
	uint64_t *per_rank = bpi_alloc((size_t)mpi->size * sizeof *per_rank);
	bp_status status = bpi_mpi_agree(mpi, per_rank ? BP_OK : bpi_mpi_fail(mpi, BP_ERR_OUT_OF_MEMORY, "no memory to route"));
	if (status != BP_OK) {
		bpi_free(per_rank, (size_t)mpi->size * sizeof *per_rank); // another rank's failure
		return status;
	}
	memset(per_rank, 0, (size_t)mpi->size * sizeof *per_rank);
	for (size_t i = 0; i < count; ++i)
		per_rank[dest[i] = bpi_mpi_rcb_route(mpi, &records[i])]++;
	MPI_Allreduce(MPI_IN_PLACE, per_rank, mpi->size, MPI_UINT64_T, MPI_SUM, mpi->comm);
	uint64_t total = 0, most = 0;
	for (int r = 0; r < mpi->size; ++r) {
		total += per_rank[r];
		most = BP_MAX(most, per_rank[r]);
	}
	*imbalance = total ? (double)most * mpi->size / (double)total : 1.0;
	bpi_free(per_rank, (size_t)mpi->size * sizeof *per_rank);
	return BP_OK;
}

bp_status bp_mpi_step(bp_mpi *mpi, const bp_mpi_entities *local)
{
	uint64_t t0 = bpi_now_ns();
	begin_step(mpi);
	bpi_mpi_records input = {0};
	BPI_ARRAY(int) dest = {0};
	BPI_ARRAY(size_t) first = {0};
	bp_status status = bpi_mpi_records_from_input(mpi, local, &input);
	size_t count = status == BP_OK ? local->count : 0;
	if (status == BP_OK && (!bpi_array_reserve(&dest, count + 1) || !bpi_array_reserve(&first, count + 1)))
		status = bpi_mpi_fail(mpi, BP_ERR_OUT_OF_MEMORY, "no memory to route %zu entities", count);
	status = bpi_mpi_agree(mpi, status);

	double imbalance = 0.0;
	if (status == BP_OK && mpi->have_tree)
		status = route_all(mpi, input.data, count, dest.data, &imbalance);
	if (status == BP_OK && (!mpi->have_tree || imbalance > mpi->threshold)) {
		uint64_t t_rcb = bpi_now_ns();
		status = bpi_mpi_rcb_build(mpi, input.data, count);
		if (status == BP_OK)
			status = route_all(mpi, input.data, count, dest.data, &imbalance);
		mpi->stats.ns_decompose = bpi_now_ns() - t_rcb;
		mpi->stats.rebalanced = true;
	}
	if (status == BP_OK) {
		for (size_t i = 0; i <= count; ++i)
			first.data[i] = i;
		uint64_t t_exchange = bpi_now_ns();
		status = bpi_mpi_exchange(mpi, input.data, count, dest.data, first.data, &mpi->owned, &mpi->owned_count);
		mpi->stats.ns_exchange = bpi_now_ns() - t_exchange;
	}
	if (status == BP_OK) {
		size_t kept = 0;
		for (size_t i = 0; i < count; ++i)
			kept += dest.data[i] == mpi->rank;
		mpi->stats.migrated_in = (uint32_t)(mpi->owned_count - kept);
	}
	bpi_array_free(&input);
	bpi_array_free(&dest);
	bpi_array_free(&first);
	if (status != BP_OK) {
		mpi->pair_count = 0;
		mpi->owned_count = 0;
		return status;
	}
	return finish_step(mpi, t0);
}

/// Host domains must be disjoint half-open boxes; every rank checks every pair of them.
static bp_status check_domains(bp_mpi *mpi)
{
	int dims = mpi->world_def.dims;
	for (int r = 0; r < mpi->size; ++r)
		for (int axis = 0; axis < dims; ++axis) {
			float lo = mpi->domain_lo[r * 3 + axis], hi = mpi->domain_hi[r * 3 + axis];
			if (isnan(lo) || isnan(hi) || lo > hi)
				return bpi_mpi_fail(mpi, BP_ERR_INVALID_ARGUMENT, "domain of rank %d is not a box on axis %d", r, axis);
		}
	for (int r = 0; r < mpi->size; ++r)
		for (int q = r + 1; q < mpi->size; ++q) {
			bool overlap = true;
			for (int axis = 0; axis < dims && overlap; ++axis)
				overlap = mpi->domain_lo[r * 3 + axis] < mpi->domain_hi[q * 3 + axis] &&
					mpi->domain_lo[q * 3 + axis] < mpi->domain_hi[r * 3 + axis];
			if (overlap)
				return bpi_mpi_fail(mpi, BP_ERR_INVALID_ARGUMENT, "domains of ranks %d and %d overlap", r, q);
		}
	return BP_OK;
}

bp_status bp_mpi_step_domain(bp_mpi *mpi, const bp_mpi_entities *local, const float *lo, const float *hi)
{
	uint64_t t0 = bpi_now_ns();
	begin_step(mpi);
	float mine[6];
	for (int axis = 0; axis < 3; ++axis) {
		bool given = lo && hi && axis < mpi->world_def.dims;
		mine[axis] = given ? lo[axis] : -INFINITY;
		mine[3 + axis] = given ? hi[axis] : INFINITY;
	}
	bp_status status = lo && hi ? BP_OK : bpi_mpi_fail(mpi, BP_ERR_INVALID_ARGUMENT, "no domain (NULL)");
	if (status == BP_OK)
		status = bpi_mpi_records_from_input(mpi, local, &mpi->owned);
	status = bpi_mpi_agree(mpi, status);
	if (status == BP_OK) {
		float *all = bpi_alloc((size_t)mpi->size * 6 * sizeof(float));
		status = bpi_mpi_agree(mpi, all ? BP_OK : bpi_mpi_fail(mpi, BP_ERR_OUT_OF_MEMORY, "no memory for domains"));
		if (status == BP_OK) {
			MPI_Allgather(mine, 6, MPI_FLOAT, all, 6, MPI_FLOAT, mpi->comm);
			for (int r = 0; r < mpi->size; ++r)
				for (int axis = 0; axis < 3; ++axis) {
					mpi->domain_lo[r * 3 + axis] = all[r * 6 + axis];
					mpi->domain_hi[r * 3 + axis] = all[r * 6 + 3 + axis];
				}
			// Same data on every rank, so every rank reaches the same verdict.
			status = check_domains(mpi);
			if (status != BP_OK && mpi->rank != 0)
				status = BP_OK; // rank 0 speaks for all
			status = bpi_mpi_agree(mpi, status);
		}
		bpi_free(all, (size_t)mpi->size * 6 * sizeof(float));
	}
	mpi->have_tree = false; // the host's domains replace any bisection
	if (status != BP_OK) {
		mpi->pair_count = 0;
		mpi->owned_count = 0;
		return status;
	}
	mpi->owned_count = local->count;
	return finish_step(mpi, t0);
}
