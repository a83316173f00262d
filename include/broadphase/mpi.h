// SPDX-License-Identifier: MIT
// Many processes: one pair set over the ranks of an MPI communicator, each rank
// stepping its spatial domain with an ordinary bp_world. Library broadphase_mpi, target
// broadphase::mpi; built only when MPI is found.
#ifndef BROADPHASE_MPI_H
#define BROADPHASE_MPI_H

#include <mpi.h>
#include <stdbool.h>
#include "world.h"

#ifdef __cplusplus
extern "C" {
#endif

// Threads: only the thread that calls these functions calls MPI, and the local step runs
// the world's own threads (OpenMP) in between, so MPI_THREAD_FUNNELED is enough
// (MPI_Init_thread with MPI_THREAD_FUNNELED or more; plain MPI_Init is fine when
// the world is stepped with one thread).
//
// The functions marked Collective are called by all ranks of the communicator in the
// same order. On any rank's error every rank returns the same status (agreed with
// MPI_Allreduce, so nothing hangs) and bp_mpi_last_error says which rank failed and why.
// The others read this rank's state only.

typedef struct bp_mpi bp_mpi;

/// Decomposition settings. Start from bp_mpi_def_default().
typedef struct bp_mpi_def {
	MPI_Comm comm; ///< duplicated at create; default MPI_COMM_WORLD
	/// Settings of each rank's local world: dims, algorithm, thread_count,
	/// periodic and period, cell_size, memory_limit. capacity, canonical_pairs and
	/// incremental are the library's to choose. Must be the same on every rank
	/// (thread_count and memory_limit excepted): bp_mpi_create checks.
	bp_world_def world;
	/// bp_mpi_step rebuilds the domains when the most entities a rank would own
	/// exceed this times the mean (and at the first step). > 1; default 1.2.
	float rebalance_threshold;
} bp_mpi_def;

BP_API bp_mpi_def bp_mpi_def_default(void);

/// Entities a rank passes in, as arrays of `count`. ids are global (scene id or user
/// key): unique over all ranks, and the pairs name entities by them. NULL optional
/// arrays take the bp_entity_def defaults (category 1, mask all, dynamic, box).
typedef struct bp_mpi_entities {
	uint32_t count;
	const uint64_t *ids;
	bp_bounds_arrays bounds;
	const uint64_t *category; ///< may be NULL
	const uint64_t *mask;     ///< may be NULL
	const uint8_t *kind;      ///< bp_kind values; may be NULL
	const uint8_t *shape;     ///< bp_shape values; may be NULL
} bp_mpi_entities;

/// A pair by global id, lo < hi.
typedef struct bp_mpi_pair {
	uint64_t lo;
	uint64_t hi;
} bp_mpi_pair;

/// What the last step did on this rank.
typedef struct bp_mpi_stats {
	uint32_t owned;          ///< entities this rank owns after the step
	uint32_t ghosts;         ///< copies of other ranks' entities it received
	uint32_t migrated_in;    ///< owned entities that arrived from another rank
	uint64_t bytes_sent;     ///< entity records sent (migration and ghosts)
	uint64_t bytes_received;
	uint32_t messages_sent;  ///< non-empty sends to other ranks (migration and ghosts)
	uint64_t pair_count;     ///< pairs this rank reports
	uint64_t ns_decompose;   ///< choosing domains (0 when kept)
	uint64_t ns_exchange;    ///< migration and ghost exchange, counts included
	uint64_t ns_step;        ///< the local world's build and step
	uint64_t ns_total;
	bool rebalanced;         ///< the domains were rebuilt this step
	bp_algorithm algorithm;  ///< what the local world ran (never AUTO)
	int thread_count;        ///< threads the local world used
} bp_mpi_stats;

/// Creates the decomposition on every rank of def->comm. Collective. Checks that the
/// settings agree over the ranks (BP_ERR_INVALID_ARGUMENT, naming the first that
/// differs). On error *out is NULL on every rank.
BP_API bp_status bp_mpi_create(const bp_mpi_def *def, bp_mpi **out);
/// Collective. NULL is ignored (then it must be NULL on every rank).
BP_API void bp_mpi_destroy(bp_mpi *mpi);

/// Library-owned decomposition. Each rank passes the entities it holds (any split:
/// all on one rank, a slice each, or what bp_mpi_owned returned last step with new
/// bounds). Each entity moves to the rank whose domain holds its centre (migration),
/// copies reach every rank whose domain its bounds touch (ghosts), each rank steps a
/// world of owned + ghosts, and keeps the pairs whose intersection's lower corner
/// (max(a.min, b.min) per axis; in a periodic world b is first moved by the smallest
/// whole period, -1, 0 or +1, that makes it overlap a, where a has the lower id, and
/// the corner is taken modulo the period; exact, as periodic worlds are in world.h, when
/// bounds and period lie on a common binary grid) lies in its domain. Domains come from recursive
/// coordinate bisection balanced by entity count (by centre), rebuilt at the first
/// step and when imbalance passes rebalance_threshold. Errors: bad bounds
/// (BP_ERR_NOT_FINITE, BP_ERR_INVERTED_BOUNDS), an id listed twice over the ranks is
/// not detected (its pairs are then reported twice), BP_ERR_OUT_OF_RANGE for more than
/// 2^31 bytes to one rank, BP_ERR_PERIODIC_EXTENT in a periodic world for an extent
/// over period / 2, and
/// whatever the local step returns. Collective.
BP_API bp_status bp_mpi_step(bp_mpi *mpi, const bp_mpi_entities *local);

/// Host-owned decomposition: this rank owns the half-open box [lo, hi) (dims floats
/// each; use +-INFINITY for outer faces; in a periodic world the boxes tile
/// [0, period)) and passes its entities; nothing migrates. The boxes of all ranks
/// must tile space: overlapping boxes are BP_ERR_INVALID_ARGUMENT; a gap loses the
/// pairs whose lower corner falls in it. Pairs as for bp_mpi_step. Collective.
BP_API bp_status bp_mpi_step_domain(bp_mpi *mpi, const bp_mpi_entities *local, const float *lo, const float *hi);

/// Pairs this rank reports from the last successful step, in the local world's order
/// (the same for the same inputs, rank count and settings; not sorted). Valid until the
/// next step or destroy. Not collective.
BP_API const bp_mpi_pair *bp_mpi_pairs(const bp_mpi *mpi, size_t *count);
/// The entities this rank owns after the last successful step (arrays valid until
/// the next step or destroy; category, mask, kind, shape always set). Not collective.
BP_API bp_mpi_entities bp_mpi_owned(const bp_mpi *mpi);
/// This rank's domain [lo, hi) after the last step (dims floats each). Not collective.
BP_API void bp_mpi_domain(const bp_mpi *mpi, float *lo, float *hi);
BP_API bp_mpi_stats bp_mpi_last_stats(const bp_mpi *mpi);
/// Text of the last error ("rank 2: entity 7 (id 91): min_x > max_x"); empty when none.
BP_API const char *bp_mpi_last_error(const bp_mpi *mpi);

/// Collective. Total pair count and checksum (as bp_pairs_checksum) over all ranks (ids are
/// taken as 32-bit scene ids there, as by bp_pairs_checksum), on every rank.
BP_API bp_status bp_mpi_pairs_summary(bp_mpi *mpi, uint64_t *count, uint64_t *checksum);
/// Collective. Gathers every rank's pairs on `root`, sorted by (lo, hi): *out and *count
/// are set on root (free with bp_mpi_pairs_free), NULL and 0 elsewhere.
BP_API bp_status bp_mpi_gather_pairs(bp_mpi *mpi, int root, bp_mpi_pair **out, size_t *count);
BP_API void bp_mpi_pairs_free(bp_mpi_pair *pairs, size_t count);

#ifdef __cplusplus
}
#endif
#endif
