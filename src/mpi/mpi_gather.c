// SPDX-License-Identifier: MIT
// The pairs of all ranks together: a count and checksum on every rank, or the whole sorted
// list on one.
#include "mpi/mpi_internal.h"

#include <limits.h>
#include <stdlib.h>

bp_status bp_mpi_pairs_summary(bp_mpi *mpi, uint64_t *count, uint64_t *checksum)
{
	uint64_t mine[2] = {mpi->pair_count, 0}, all[2];
	for (size_t i = 0; i < mpi->pair_count; ++i) {
		const bp_mpi_pair *p = &mpi->pairs.data[i];
		mine[1] += bp_splitmix64((uint64_t)(uint32_t)p->lo << 32 | (uint32_t)p->hi);
	}
	// Sums mod 2^64 on every rank: the checksum is order-independent by design (docs/design.md "Scene and trace formats").
	MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, mpi->comm);
	*count = all[0];
	*checksum = all[1];
	return BP_OK;
}

static int compare_pairs(const void *x, const void *y)
{
	const bp_mpi_pair *a = x, *b = y;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? -1 : a->hi > b->hi;
}

/// Sorts by (lo, hi). Ids that fit 32 bits (scene ids) go through the library's radix sort
/// of bp_pair; wider ids through qsort.
static void sort_pairs(bp_mpi_pair *pairs, size_t count)
{
	bool narrow = true;
	for (size_t i = 0; i < count && narrow; ++i)
		narrow = pairs[i].hi <= UINT32_MAX;
	bp_pair *packed = narrow ? bpi_alloc((count ? count : 1) * sizeof *packed) : NULL;
	if (!packed) {
		qsort(pairs, count, sizeof *pairs, compare_pairs);
		return;
	}
	for (size_t i = 0; i < count; ++i)
		packed[i] = (bp_pair){(uint32_t)pairs[i].lo, (uint32_t)pairs[i].hi};
	bp_pairs_sort(packed, count);
	for (size_t i = 0; i < count; ++i)
		pairs[i] = (bp_mpi_pair){packed[i].lo, packed[i].hi};
	bpi_free(packed, (count ? count : 1) * sizeof *packed);
}

void bp_mpi_pairs_free(bp_mpi_pair *pairs, size_t count)
{
	bpi_free(pairs, (count ? count : 1) * sizeof *pairs);
}

bp_status bp_mpi_gather_pairs(bp_mpi *mpi, int root, bp_mpi_pair **out, size_t *count)
{
	*out = NULL;
	*count = 0;
	int ranks = mpi->size;
	bool is_root = mpi->rank == root;
	int mine = mpi->pair_count > INT_MAX / sizeof(bp_mpi_pair) ? -1 : (int)(mpi->pair_count * sizeof(bp_mpi_pair));
	int *bytes = is_root ? bpi_alloc((size_t)ranks * 2 * sizeof(int)) : NULL;
	bp_status status = mine < 0 ? bpi_mpi_fail(mpi, BP_ERR_OUT_OF_RANGE, "more than 2^31 bytes of pairs") : BP_OK;
	if (is_root && !bytes)
		status = bpi_mpi_fail(mpi, BP_ERR_OUT_OF_MEMORY, "no memory to gather");
	status = bpi_mpi_agree(mpi, status);
	if (status != BP_OK) {
		bpi_free(bytes, (size_t)ranks * 2 * sizeof(int));
		return status;
	}
	MPI_Gather(&mine, 1, MPI_INT, bytes, 1, MPI_INT, root, mpi->comm);
	size_t total = 0;
	bp_mpi_pair *all = NULL;
	if (is_root) {
		for (int r = 0; r < ranks; ++r) {
			bytes[ranks + r] = (int)total;
			total += (size_t)bytes[r];
			if (total > INT_MAX)
				status = bpi_mpi_fail(mpi, BP_ERR_OUT_OF_RANGE, "more than 2^31 bytes of pairs on the root");
		}
		if (status == BP_OK && !(all = bpi_alloc(total ? total : sizeof *all)))
			status = bpi_mpi_fail(mpi, BP_ERR_OUT_OF_MEMORY, "no memory for %zu bytes of pairs", total);
	}
	status = bpi_mpi_agree(mpi, status);
	if (status == BP_OK) {
		MPI_Gatherv(mpi->pairs.data, mine, MPI_BYTE, all, bytes, bytes + ranks, MPI_BYTE, root, mpi->comm);
		if (is_root) {
			*count = total / sizeof *all;
			sort_pairs(all, *count);
			*out = all;
		}
	} else if (all)
		bpi_free(all, total ? total : sizeof *all);
	bpi_free(bytes, (size_t)ranks * 2 * sizeof(int));
	return status;
}
