// SPDX-License-Identifier: MIT
// The bp_mpi object: settings checked alike on every rank, errors agreed over the ranks,
// and the getters.
#include "mpi/mpi_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bp_mpi_def bp_mpi_def_default(void)
{
	return (bp_mpi_def){.comm = MPI_COMM_WORLD, .world = bp_world_def_default(), .rebalance_threshold = 1.2f};
}

bp_status bpi_mpi_fail(bp_mpi *mpi, bp_status status, const char *fmt, ...)
{
	int used = snprintf(mpi->error, sizeof mpi->error, "rank %d: ", mpi->rank);
	va_list args;
	va_start(args, fmt);
	vsnprintf(mpi->error + used, sizeof mpi->error - (size_t)used, fmt, args);
	va_end(args);
	return status;
}

bp_status bpi_mpi_agree(bp_mpi *mpi, bp_status status)
{
	// MAXLOC on (status, rank) picks the worst status and, among equals, the lowest rank:
	// every rank learns the same answer, and that rank's text travels to the others.
	struct {
		int status;
		int rank;
	} mine = {(int)status, mpi->rank}, worst;
	MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MAXLOC, mpi->comm);
	if (worst.status == BP_OK)
		return BP_OK;
	MPI_Bcast(mpi->error, (int)sizeof mpi->error, MPI_CHAR, worst.rank, mpi->comm);
	return (bp_status)worst.status;
}

/// The settings that must be equal on every rank, as integers (floats by their bits).
enum { FINGERPRINT_COUNT = 9 };
static const char *const fingerprint_names[FINGERPRINT_COUNT] = {"dims", "periodic", "period[0]", "period[1]",
	"period[2]", "algorithm", "cell_size", "rebalance_threshold", "debug_flags"};

static int64_t float_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static void fingerprint(const bp_mpi_def *def, int64_t *out)
{
	const bp_world_def *w = &def->world;
	int64_t values[FINGERPRINT_COUNT] = {w->dims, w->periodic, w->periodic ? float_bits(w->period[0]) : 0,
		w->periodic ? float_bits(w->period[1]) : 0, w->periodic && w->dims == 3 ? float_bits(w->period[2]) : 0,
		w->algorithm, float_bits(w->cell_size), float_bits(def->rebalance_threshold), w->debug_flags};
	memcpy(out, values, sizeof values);
}

/// Rank-local checks of the settings: the world def as bp_world_create sees it, and ours.
static bp_status check_local(bp_mpi *mpi, const bp_mpi_def *def)
{
	if (!(def->rebalance_threshold > 1.0f) || !(def->rebalance_threshold < 1e30f))
		return bpi_mpi_fail(mpi, BP_ERR_INVALID_ARGUMENT, "rebalance_threshold must be > 1 and finite");
	bp_world_def w = def->world;
	w.capacity = 0;
	bp_world *probe = NULL;
	bp_status status = bp_world_create(&w, &probe);
	bp_world_destroy(probe);
	if (status != BP_OK)
		return bpi_mpi_fail(mpi, status, "world settings: %s", bp_status_string(status));
	return BP_OK;
}

static bp_status check_same_everywhere(bp_mpi *mpi, const bp_mpi_def *def)
{
	int64_t mine[FINGERPRINT_COUNT], lo[FINGERPRINT_COUNT], hi[FINGERPRINT_COUNT];
	fingerprint(def, mine);
	MPI_Allreduce(mine, lo, FINGERPRINT_COUNT, MPI_INT64_T, MPI_MIN, mpi->comm);
	MPI_Allreduce(mine, hi, FINGERPRINT_COUNT, MPI_INT64_T, MPI_MAX, mpi->comm);
	for (int i = 0; i < FINGERPRINT_COUNT; ++i)
		if (lo[i] != hi[i])
			return bpi_mpi_fail(mpi, BP_ERR_INVALID_ARGUMENT, "%s differs between ranks", fingerprint_names[i]);
	return BP_OK;
}

bp_status bp_mpi_create(const bp_mpi_def *def, bp_mpi **out)
{
	if (!out)
		return BP_ERR_INVALID_ARGUMENT;
	*out = NULL;
	if (!def)
		return BP_ERR_INVALID_ARGUMENT;
	// Agreed on the host's communicator before anything else is collective, so that a rank
	// out of memory here does not leave the others waiting in MPI_Comm_dup.
	bp_mpi *mpi = bpi_alloc(sizeof *mpi);
	int ok = mpi != NULL, all_ok = 0;
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, def->comm);
	if (!all_ok) {
		bpi_free(mpi, sizeof *mpi);
		return BP_ERR_OUT_OF_MEMORY;
	}
	memset(mpi, 0, sizeof *mpi);
	MPI_Comm_dup(def->comm, &mpi->comm);
	MPI_Comm_rank(mpi->comm, &mpi->rank);
	MPI_Comm_size(mpi->comm, &mpi->size);
	mpi->world_def = def->world;
	mpi->world_def.capacity = 0;
	mpi->world_def.canonical_pairs = false;
	mpi->world_def.incremental = false;
	mpi->threshold = def->rebalance_threshold;

	bp_status status = check_local(mpi, def);
	status = bpi_mpi_agree(mpi, status);
	if (status == BP_OK)
		status = bpi_mpi_agree(mpi, check_same_everywhere(mpi, def));
	size_t domain_bytes = (size_t)mpi->size * 3 * sizeof(float);
	size_t node_bytes = (size_t)(2 * mpi->size) * sizeof(bpi_mpi_node);
	if (status == BP_OK) {
		mpi->domain_lo = bpi_alloc(domain_bytes);
		mpi->domain_hi = bpi_alloc(domain_bytes);
		mpi->nodes = bpi_alloc(node_bytes);
		bp_status local = mpi->domain_lo && mpi->domain_hi && mpi->nodes
			? BP_OK
			: bpi_mpi_fail(mpi, BP_ERR_OUT_OF_MEMORY, "no memory for %d domains", mpi->size);
		status = bpi_mpi_agree(mpi, local);
	}
	if (status != BP_OK) {
		bp_mpi_destroy(mpi);
		return status;
	}
	*out = mpi;
	return BP_OK;
}

void bp_mpi_destroy(bp_mpi *mpi)
{
	if (!mpi)
		return;
	size_t domain_bytes = (size_t)mpi->size * 3 * sizeof(float);
	bpi_free(mpi->domain_lo, domain_bytes);
	bpi_free(mpi->domain_hi, domain_bytes);
	bpi_free(mpi->nodes, (size_t)(2 * mpi->size) * sizeof(bpi_mpi_node));
	bpi_array_free(&mpi->owned);
	bpi_array_free(&mpi->owned_ids);
	bpi_array_free(&mpi->owned_bounds);
	bpi_array_free(&mpi->owned_filters);
	bpi_array_free(&mpi->owned_kinds);
	bpi_array_free(&mpi->pairs);
	MPI_Comm_free(&mpi->comm);
	bpi_free(mpi, sizeof *mpi);
}

const bp_mpi_pair *bp_mpi_pairs(const bp_mpi *mpi, size_t *count)
{
	*count = mpi->pair_count;
	return mpi->pairs.data;
}

void bp_mpi_domain(const bp_mpi *mpi, float *lo, float *hi)
{
	for (int axis = 0; axis < mpi->world_def.dims; ++axis) {
		lo[axis] = mpi->domain_lo[mpi->rank * 3 + axis];
		hi[axis] = mpi->domain_hi[mpi->rank * 3 + axis];
	}
}

bp_mpi_stats bp_mpi_last_stats(const bp_mpi *mpi)
{
	return mpi->stats;
}

const char *bp_mpi_last_error(const bp_mpi *mpi)
{
	return mpi->error;
}

bool bpi_mpi_domain_holds(const bp_mpi *mpi, int r, const double *point)
{
	for (int axis = 0; axis < mpi->world_def.dims; ++axis)
		if (!(mpi->domain_lo[r * 3 + axis] <= point[axis] && point[axis] < mpi->domain_hi[r * 3 + axis]))
			return false;
	return true;
}

bool bpi_mpi_inside_own(const bp_mpi *mpi, const bpi_mpi_record *e)
{
	int r = mpi->rank;
	for (int axis = 0; axis < mpi->world_def.dims; ++axis)
		if (!(e->min[axis] >= mpi->domain_lo[r * 3 + axis] && e->max[axis] < mpi->domain_hi[r * 3 + axis]))
			return false;
	return true;
}
