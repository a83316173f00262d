// SPDX-License-Identifier: MIT
// What the files of the MPI component share: the bp_mpi object, the entity record that
// travels between ranks, and the stages of a step (records, rcb, exchange, local step).
#ifndef BP_MPI_INTERNAL_H
#define BP_MPI_INTERNAL_H

#include <broadphase/mpi.h>
#include "base/core.h"

/// One entity as it travels between ranks (MPI_BYTE). 56 bytes.
typedef struct bpi_mpi_record {
	uint64_t id;
	float min[3], max[3]; ///< periodic worlds: min reduced into [0, period)
	uint64_t category, mask;
	uint8_t kind, shape;
	uint8_t pad[6];
} bpi_mpi_record;
_Static_assert(sizeof(bpi_mpi_record) == 56, "bpi_mpi_record is 56 bytes");

/// A node of the recursive coordinate bisection: ranks [rank_first, rank_first + rank_count)
/// split at `cut` on `axis`; centres below go to `left`. A leaf has rank_count 1.
typedef struct bpi_mpi_node {
	int axis;
	float cut;
	int left, right;
	int rank_first, rank_count;
} bpi_mpi_node;

typedef BPI_ARRAY(bpi_mpi_record) bpi_mpi_records;

struct bp_mpi {
	MPI_Comm comm;
	int rank, size;
	bp_world_def world_def;
	float threshold;
	/// Every rank's domain [lo, hi): domain_lo[r * 3 + axis].
	float *domain_lo, *domain_hi;
	/// Library-owned decomposition: the bisection tree (node 0 is the root), 2R - 1 nodes.
	bpi_mpi_node *nodes;
	int node_count;
	bool have_tree;

	bpi_mpi_records owned;
	size_t owned_count;
	BPI_ARRAY(uint64_t) owned_ids;
	BPI_ARRAY(float) owned_bounds; ///< six arrays of owned_count, min_x .. max_z
	BPI_ARRAY(uint64_t) owned_filters; ///< category then mask
	BPI_ARRAY(uint8_t) owned_kinds;   ///< kind then shape

	BPI_ARRAY(bp_mpi_pair) pairs;
	size_t pair_count;
	bp_mpi_stats stats;
	char error[320];
};

/// Sets this rank's error text ("rank R: ...") and returns status.
bp_status bpi_mpi_fail(bp_mpi *mpi, bp_status status, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;
/// Collective: every rank gets the worst status of all (the lowest failing rank's, with its
/// error text). Never hangs: every rank calls it at the same points whatever it found.
bp_status bpi_mpi_agree(bp_mpi *mpi, bp_status status);

/// Checks a rank's input and turns it into records (periodic minima reduced). Not collective.
bp_status bpi_mpi_records_from_input(bp_mpi *mpi, const bp_mpi_entities *in, bpi_mpi_records *out);
/// The owned records as the arrays bp_mpi_owned hands out.
bp_status bpi_mpi_owned_views(bp_mpi *mpi);
/// Centre on an axis, reduced into [0, period) in periodic worlds: what decides ownership.
float bpi_mpi_centre(const bp_mpi *mpi, const bpi_mpi_record *r, int axis);

/// Collective: builds the bisection tree over the centres of every rank's records, balanced
/// by count, and the domains from it.
bp_status bpi_mpi_rcb_build(bp_mpi *mpi, const bpi_mpi_record *records, size_t count);
/// The rank whose domain holds the record's centre (the tree must exist).
int bpi_mpi_rcb_route(const bp_mpi *mpi, const bpi_mpi_record *r);

/// Collective: sends records[i] to every rank in dest[dest_first[i] .. dest_first[i + 1])
/// and replaces *received with what arrived (count in *received_count). Adds to the stats' bytes.
bp_status bpi_mpi_exchange(bp_mpi *mpi, const bpi_mpi_record *records, size_t count, const int *dest,
	const size_t *dest_first, bpi_mpi_records *received, size_t *received_count);
/// Collective: for each owned record, the other ranks whose domain its bounds (any periodic
/// image) touch receive a copy; *ghosts holds the copies this rank received.
bp_status bpi_mpi_exchange_ghosts(bp_mpi *mpi, bpi_mpi_records *ghosts, size_t *ghost_count);

/// Steps a local world of owned + ghost records and keeps the pairs whose lower corner lies
/// in this rank's domain. Not collective (the caller agrees on the status).
bp_status bpi_mpi_local_step(bp_mpi *mpi, const bpi_mpi_records *ghosts, size_t ghost_count);

/// Whether a point (double per axis) lies in rank r's domain [lo, hi).
bool bpi_mpi_domain_holds(const bp_mpi *mpi, int r, const double *point);
/// Whether a record's whole box lies in this rank's domain, so that it touches no other
/// domain (they are disjoint) and every pair it is in has its lower corner here.
bool bpi_mpi_inside_own(const bp_mpi *mpi, const bpi_mpi_record *e);


#endif
