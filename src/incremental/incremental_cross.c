// SPDX-License-Identifier: MIT
// Active x resting. An active entity queries the resting index with its bounds enlarged by
// a margin (its fat box) and keeps what the query found: the candidates, with their
// bounds. While its true bounds stay inside the fat box and its filter is the one it
// queried with, a step re-tests those candidates instead of querying again.
//
// Why this is exact: a resting entity never changes while it rests, so one that overlaps
// the true bounds overlaps the fat box that contains them, was found by the query (or
// stopped resting since, and is dropped), and is tested here on its true bounds, which
// are the ones the candidate holds. The filter was applied at the query with the same
// filter on both sides. Spheres are tested on their shapes, as everywhere.
//
// Why candidates carry bounds: a query of an index of 1M entities costs ~240 ns of
// cache misses; re-testing a candidate held in a buffer of this step's active entities reads
// memory in order and misses nothing.
#include "incremental/incremental_cross.h"
#include "base/bits.h"
#include "parallel/parallel.h"
#include "parallel/sort.h"

#include <float.h>
#include <string.h>

/// Active entities per chunk (a fixed cut: the pairs merge in chunk order).
#define CROSS_GRAIN 256
/// Queries in flight, one stage apart (see cells_find.c): while query k is
/// planned, k - 1 fetches its record ranges and k - 2 scans.
#define CROSS_IN_FLIGHT 3
/// Entities ahead whose candidates are fetched, and how much of each list.
#define CROSS_PREFETCH_AHEAD 8
#define CROSS_PREFETCH_BYTES 512
/// Hits a query has found and not yet filtered: their filters are prefetched as
/// they come and read after the query, so those misses overlap too.
#define CROSS_PENDING 64
/// Candidates left behind in buffers still in use that a step tolerates beyond
/// the live ones before it compacts.
#define CROSS_COMPACT_SLACK 4096
/// A step also compacts once the entities that searched since the last time every
/// list was written in order pass this share of the fat boxes: each such list lies
/// in a buffer of its own step, and reading lists spread over thousands of buffers
/// costs more than copying them all now and then (perf/README.md).
#define CROSS_RELISTED_SHARE 16
/// Changed entities per chunk of a moving step's check.
#define MOVING_GRAIN 4096
/// A candidate's flag, above the entity's own: found in the settled level.
#define CANDIDATE_SETTLED (1u << 8)

static bpi_box3 box_of(const bpi_scene *s, uint32_t i)
{
	bpi_box3 b = {{0, 0, 0}, {0, 0, 0}};
	for (int axis = 0; axis < s->dims; ++axis) {
		b.lo[axis] = s->min[axis][i];
		b.hi[axis] = s->max[axis][i];
	}
	return b;
}

static bpi_rest_filter filter_of(const bpi_scene *s, uint32_t i)
{
	return (bpi_rest_filter){s->category[i], s->mask[i], s->flags[i]};
}

static bool same_filter(bpi_rest_filter a, bpi_rest_filter b)
{
	return a.category == b.category && a.mask == b.mask && a.flags == b.flags;
}

/// Entity i of `s` is inside fat box f. Read from the arrays, not from a box built
/// first: its lanes, stored one by one and loaded whole, stalled every check.
static bool inside(const bpi_fat *f, const bpi_scene *s, uint32_t i)
{
	for (int axis = 0; axis < s->dims; ++axis)
		if (!(f->lo[axis] <= s->min[axis][i] && s->max[axis][i] <= f->hi[axis]))
			return false;
	return true;
}

/// The candidates of a buffer from `first` on; NULL for an empty buffer, whose
/// array may not exist yet (no pointer arithmetic on NULL).
static const bpi_candidate *candidates_from(const bpi_candidate_buffer *b, size_t first)
{
	return b->items.data ? b->items.data + first : NULL;
}

/// The same, to be written.
static bpi_candidate *candidates_at(bpi_candidate_buffer *b, size_t first)
{
	return b->items.data ? b->items.data + first : NULL;
}

static bpi_candidate *candidate_push(bpi_candidate_buffer *b)
{
	if (b->count == b->items.capacity &&
		(b->failed || !bpi_array_grow(&b->items, b->count, b->count + 1))) {
		b->failed = true;
		return NULL;
	}
	return &b->items.data[b->count++];
}

// ---- one chunk of the active list --------------------------------------------------

typedef struct cross_job {
	bpi_cross *cross;
	const bpi_cross_input *in;
	float margin;
} cross_job;

/// The entity being searched, in one chunk.
typedef struct cross_probe {
	const bpi_scene *scene;
	const bpi_rest_filter *filter;
	uint32_t a;
	bpi_rest_filter searcher; ///< the filter of the entity searching
	float q[6]; ///< its true bounds as a candidate query
	bpi_candidate_buffer *candidates;
	bpi_pair_buffer *pairs;
	const uint32_t *dense_of; ///< the index queried names entities by this map; NULL: dense already
	uint32_t level;           ///< flags the candidates found get: CANDIDATE_SETTLED or 0
	uint32_t pending[CROSS_PENDING];
	const float *pending_rec[CROSS_PENDING];
	uint32_t pending_count;
} cross_probe;

static void probe_set(cross_probe *p, uint32_t a, const bpi_box3 *b, bpi_rest_filter searcher)
{
	p->a = a;
	p->searcher = searcher;
	bpi_rec6_query(b->lo, b->hi, 3, p->q); // z 0 in 2D
}

/// Re-tests the candidates of a fat box that still holds the entity, where they
/// lie. Branch-free but for spheres: about a third of the candidates overlap, a
/// branch on it mispredicts.
static void retest_in_place(const bpi_candidate *c, uint32_t count, cross_probe *p)
{
	bpi_pair_buffer *out = p->pairs;
	if (!bpi_pair_buffer_reserve(out, count)) {
		out->failed = true;
		return;
	}
	bp_pair *to = out->data;
	size_t n = out->count;
	// Locals: stores through `to` would otherwise reload them every candidate.
	const float q[6] = {p->q[0], p->q[1], p->q[2], p->q[3], p->q[4], p->q[5]};
	const uint32_t a = p->a, sphere = p->searcher.flags & BP_FLAG_SPHERE;
	for (uint32_t k = 0; k < count; ++k) {
		bool hit = bpi_rec6_overlap(c[k].rec, q);
		if (((sphere | c[k].flags) & BP_FLAG_SPHERE) && hit)
			hit = bpi_shapes_overlap(p->scene, a, c[k].entity);
		uint32_t e = c[k].entity;
		to[n] = (bp_pair){BP_MIN(a, e), BP_MAX(a, e)};
		n += hit;
	}
	out->count = n;
}

/// The flags of resting entity e, or 0 without reading them in a scene where no
/// entity is static or a sphere (the only flags).
static uint32_t rest_flags(const cross_probe *p, uint32_t e)
{
	return p->scene->unfiltered ? 0 : p->filter[e].flags;
}

/// Whether the searcher's filter and resting entity e's accept each other.
static bool rest_accepts(const cross_probe *p, uint32_t e)
{
	if (p->scene->unfiltered)
		return true;
	bpi_rest_filter f = p->filter[e];
	return (p->searcher.category & f.mask) && (f.category & p->searcher.mask) &&
	       !(p->searcher.flags & f.flags & BP_FLAG_STATIC);
}

// A query tested the records on the fat box and skipped the hidden ones; what is
// left are the filters. Every accepted hit becomes a candidate, then is tested on
// the true bounds. An unfiltered scene reads no filter: one cache miss per hit less,
// as the filters lie in dense order and the hits in space.
static void probe_flush(cross_probe *p)
{
	const int dims = p->scene->dims;
	size_t first = p->candidates->count;
	for (uint32_t k = 0; k < p->pending_count; ++k) {
		uint32_t e = p->pending[k];
		if (!rest_accepts(p, e))
			continue;
		bpi_candidate *c = candidate_push(p->candidates);
		if (!c)
			break;
		const float *r = p->pending_rec[k];
		*c = (bpi_candidate){.rec = {0, 0, 0, 0, 0, 0}, .entity = e, .flags = rest_flags(p, e) | p->level};
		for (int axis = 0; axis < dims; ++axis) {
			c->rec[axis] = r[axis];
			c->rec[3 + axis] = r[dims + axis];
		}
	}
	p->pending_count = 0;
	retest_in_place(candidates_from(p->candidates, first), (uint32_t)(p->candidates->count - first), p);
}

static void probe_hit(uint32_t e, const float *record, void *ctx)
{
	cross_probe *p = ctx;
	if (p->dense_of)
		e = p->dense_of[e];
	if (p->pending_count == CROSS_PENDING)
		probe_flush(p);
	if (!p->scene->unfiltered)
		__builtin_prefetch(&p->filter[e]);
	p->pending[p->pending_count] = e;
	p->pending_rec[p->pending_count++] = record;
}

/// Re-tests the candidates of a fat box that still holds the entity after copying
/// those still resting into this chunk's buffer (a compacting step): entities
/// that stopped resting are dropped for good, as are candidates with a flag of `drop`.
static void retest_moving(const bpi_cross_input *in, bpi_fat *f, const bpi_candidate *from, uint32_t buffer,
	uint32_t drop, cross_probe *p)
{
	bpi_candidate_buffer *to = p->candidates;
	size_t first = to->count;
	for (uint32_t k = 0; k < f->count; ++k) {
		if ((from[k].flags & drop) || (in->left_rest && bpi_bit_get(in->gone, from[k].entity)))
			continue; // dropped, or stopped resting: active now, found by the active x active pass
		bpi_candidate *c = candidate_push(to);
		if (!c)
			return;
		*c = from[k];
	}
	f->buffer = buffer;
	f->first = (uint32_t)first;
	f->count = (uint32_t)(to->count - first);
	retest_in_place(candidates_from(to, first), f->count, p);
}

/// Drops from fat box f's candidates, where they lie, the entities that stopped resting
/// this step: active now, found by the active x active pass. Lists stay in their buffers;
/// the space freed counts against them until a compacting step copies them out.
static void drop_left(const bpi_cross_input *in, bpi_fat *f, bpi_candidate *c)
{
	uint32_t live = 0;
	for (uint32_t k = 0; k < f->count; ++k) {
		const uint32_t e = c[k].entity;
		c[live] = c[k];
		live += !bpi_bit_get(in->left_now, e);
	}
	f->count = live;
}

/// The settled level of `in` for the entity of fat box f, its hits flushed as candidates.
static uint64_t query_settled(const bpi_cross_input *in, const bpi_fat *f, cross_probe *p)
{
	p->dense_of = in->settled_of;
	p->level = CANDIDATE_SETTLED;
	uint64_t tests = bpi_cells_query(in->settled, f->lo, f->hi, probe_hit, p);
	probe_flush(p);
	p->dense_of = NULL;
	p->level = 0;
	return tests;
}

/// Re-tests a fat box that still holds the entity after the settled level was built
/// anew: the candidates of the first level are copied into this chunk's buffer (those
/// still resting), those of the old settled level dropped, and the new one queried.
static uint64_t requery_settled(const bpi_cross_input *in, bpi_fat *f, const bpi_candidate *from, uint32_t buffer,
	cross_probe *p)
{
	retest_moving(in, f, from, buffer, CANDIDATE_SETTLED, p);
	if (p->candidates->failed)
		return 0; // the step fails
	uint64_t tests = f->count + query_settled(in, f, p);
	f->count = (uint32_t)(p->candidates->count - f->first);
	return tests;
}

static void query_start(const bpi_cross *x, const bpi_cross_input *in, uint32_t k, const bpi_box3 *b, float margin,
	bpi_cells_query_plan *plan)
{
	bpi_fat *f = &x->fat.data[k];
	bpi_fat_growth *g = &x->growth.data[k];
	const uint32_t now = x->step;
	float lead[3], drift[3];
	bpi_margin_lead(f, g, b, in->scene->dims, now, in->margin, lead, drift);
	if (in->margin == 0 && in->moving)
		margin = bpi_margin_of_own_motion(&x->margin, f, g, b, in->scene->dims, now, margin, k);
	if (in->margin == 0)
		margin = bpi_margin_own(margin, b, in->scene->dims);
	// fl(lo - m) <= lo and fl(hi + m) >= hi for m >= 0, and adding a lead that
	// moves a side outward keeps it so: the fat box holds the bounds. Clamped to
	// the finite range, which still holds finite bounds: an infinite fat box
	// would reach the finders of the active pass, which take finite bounds only.
	for (int axis = 0; axis < 3; ++axis) {
		f->lo[axis] = fmaxf((b->lo[axis] - margin) + fminf(lead[axis], 0.0f), -FLT_MAX);
		f->hi[axis] = fminf((b->hi[axis] + margin) + fmaxf(lead[axis], 0.0f), FLT_MAX);
		g->lead[axis] = lead[axis];
		g->drift[axis] = drift[axis];
	}
	g->margin = margin;
	f->queried_at = now;
	if (plan) // bpi_cross_moving makes fat boxes without a query
		bpi_cells_plan_query(in->cells, f->lo, f->hi, plan);
}

/// Starts loading the candidates of an entity some places ahead: a list is a few
/// cache lines, too short for the hardware to see a stream, and the lists of
/// one step lie in several buffers.
static void prefetch_candidates(const bpi_cross *x, const bpi_fat *f)
{
	if (f->lo[0] == INFINITY)
		return;
	const char *at = (const char *)candidates_from(&x->buffers.data[f->buffer], f->first);
	size_t bytes = BP_MIN((size_t)f->count * sizeof(bpi_candidate), CROSS_PREFETCH_BYTES);
	for (size_t b = 0; b < bytes; b += 64)
		__builtin_prefetch(at + b);
}

static void cross_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const cross_job *job = ctx;
	bpi_cross *x = job->cross;
	const bpi_cross_input *in = job->in;
	const bpi_scene *s = in->scene;
	const uint32_t now = x->step, buffer = x->writing.data[chunk];
	cross_probe p = {.scene = s, .filter = in->filter, .candidates = &x->buffers.data[buffer],
		.pairs = &x->pairs.buffers[chunk]};
	p.candidates->count = 0;
	p.candidates->failed = false;
	bpi_margin_tally *tally = &x->tally.data[chunk];
	tally->count = 0;
	tally->escaped = 0;
	uint64_t tests = 0;

	// Entities still inside their fat boxes re-test; the others queue for a query.
	uint32_t queue[CROSS_GRAIN], queued = 0;
	for (uint32_t k = begin; k < end; ++k) {
		if (k + CROSS_PREFETCH_AHEAD < end)
			prefetch_candidates(x, &x->fat.data[k + CROSS_PREFETCH_AHEAD]);
		bpi_fat *f = &x->fat.data[k];
		uint32_t a = in->active[k];
		if (inside(f, in->active_scene, k) &&
			(in->filters_kept || same_filter(f->filter, filter_of(in->active_scene, k)))) {
			bpi_box3 b = box_of(in->active_scene, k);
			probe_set(&p, a, &b, f->filter);
			bpi_candidate *kept = candidates_at(&x->buffers.data[f->buffer], f->first);
			if (x->requery_settled && in->settled) {
				tests += requery_settled(in, f, kept, buffer, &p);
			} else {
				if (x->compacting) {
					retest_moving(in, f, kept, buffer, 0, &p);
				} else {
					if (in->left_rest)
						drop_left(in, f, kept);
					retest_in_place(kept, f->count, &p);
				}
				tests += f->count;
			}
		} else {
			bpi_box3 b = box_of(in->active_scene, k);
			tally->escaped += f->lo[0] != INFINITY;
			bpi_margin_sample(tally, f, &x->growth.data[k], &b, s->dims, now);
			queue[queued++] = k;
		}
	}

	bpi_cells_query_plan plans[CROSS_IN_FLIGHT];
	for (uint32_t q = 0; q < queued + 2; ++q) {
		if (q < queued) {
			uint32_t k = queue[q];
			bpi_box3 b = box_of(in->active_scene, k);
			query_start(x, in, k, &b, job->margin, &plans[q % CROSS_IN_FLIGHT]);
		}
		if (q >= 1 && q - 1 < queued)
			bpi_cells_fetch_query(in->cells, &plans[(q - 1) % CROSS_IN_FLIGHT]);
		if (q >= 2) {
			uint32_t k = queue[q - 2];
			bpi_fat *f = &x->fat.data[k];
			bpi_box3 b = box_of(in->active_scene, k);
			probe_set(&p, in->active[k], &b, filter_of(in->active_scene, k));
			f->filter = p.searcher;
			f->buffer = buffer;
			f->first = (uint32_t)p.candidates->count;
			tests += bpi_cells_run_query(in->cells, &plans[(q - 2) % CROSS_IN_FLIGHT], probe_hit, &p);
			probe_flush(&p);
			if (in->settled) // the second level is small: queried at once
				tests += query_settled(in, f, &p);
			f->count = (uint32_t)(p.candidates->count - f->first);
		}
	}
	p.pairs->tests = tests;
	tally->searched = queued;
	memcpy(x->searchers.data + begin, queue, queued * sizeof *queue);
}

// ---- the step ---------------------------------------------------------------------

/// Each chunk of `grain` listed its searchers from its first position on: they close
/// up in chunk order, and the escapes are summed.
static void close_up_searchers(bpi_cross *x, uint32_t chunks, uint32_t grain)
{
	x->escaped = x->searcher_count = 0;
	for (uint32_t c = 0; c < chunks; ++c) {
		const bpi_margin_tally *t = &x->tally.data[c];
		x->escaped += t->escaped;
		memmove(x->searchers.data + x->searcher_count, x->searchers.data + (size_t)c * grain,
			t->searched * sizeof *x->searchers.data);
		x->searcher_count += t->searched;
	}
}

/// Picks a buffer per chunk for this step's candidates among those no fat box
/// refers to, making more when needed, and decides whether the step compacts:
/// when the buffers in use hold more than twice the live candidates (lists left
/// behind by searches, or shortened by entities that stopped resting), or when
/// enough lists moved out of order.
static bool plan_buffers(bpi_cross *x, const bpi_cross_input *in, uint32_t chunks)
{
	if (!bpi_array_reserve(&x->writing, chunks))
		return false;
	bpi_candidate_buffer *buffers = x->buffers.data;
	for (uint32_t b = 0; b < x->buffer_count; ++b)
		buffers[b].refs = 0;
	size_t live = 0, used = 0;
	x->held = 0;
	for (uint32_t k = 0; k < in->active_count; ++k) {
		const bpi_fat *f = &x->fat.data[k];
		if (f->lo[0] != INFINITY) {
			buffers[f->buffer].refs++;
			live += f->count;
			x->held++;
		}
	}
	uint32_t picked = 0;
	for (uint32_t b = 0; b < x->buffer_count && picked < chunks; ++b) {
		if (buffers[b].refs)
			used += buffers[b].count;
		else
			x->writing.data[picked++] = b;
	}
	if (picked < chunks) {
		uint32_t needed = x->buffer_count + chunks - picked;
		if (!bpi_array_grow(&x->buffers, x->buffer_count, needed))
			return false;
		memset(x->buffers.data + x->buffer_count, 0, (needed - x->buffer_count) * sizeof *x->buffers.data);
		while (picked < chunks)
			x->writing.data[picked++] = x->buffer_count++;
	}
	for (uint32_t c = 0; c < chunks; ++c) {
		x->buffers.data[x->writing.data[c]].count = 0;
		x->buffers.data[x->writing.data[c]].failed = false;
	}
	x->compacting = used > 2 * live + CROSS_COMPACT_SLACK ||
			x->relisted > x->held / CROSS_RELISTED_SHARE;
	return true;
}

bp_status bpi_cross_find(bpi_cross *x, const bpi_cross_input *in, uint64_t *tests, uint32_t *searched)
{
	const uint32_t chunks = bpi_chunk_count(in->active_count, CROSS_GRAIN);
	x->pairs.budget = in->scene->budget; // the world's memory limit, and the step's stop
	bp_status status = bpi_pair_chunks_reset(&x->pairs, chunks);
	if (status != BP_OK)
		return status;
	if (!plan_buffers(x, in, chunks) || !bpi_array_reserve(&x->tally, chunks) ||
		!bpi_array_reserve(&x->searchers, BP_MAX(in->active_count, 1u)))
		return BP_ERR_OUT_OF_MEMORY;
	x->step++;
	cross_job job = {x, in, bpi_margin_value(&x->margin, in->margin)};
	bpi_parallel_for(in->active_count, CROSS_GRAIN, in->scene->threads, cross_chunk, &job);
	for (uint32_t c = 0; c < chunks; ++c)
		if (x->buffers.data[x->writing.data[c]].failed)
			return BP_ERR_OUT_OF_MEMORY;
	const bool requeried = x->requery_settled;
	x->requery_settled = false;
	bpi_margin_observe(&x->margin, x->tally.data, chunks, x->held, in->moving);
	*tests = bpi_pair_chunks_tests(&x->pairs);
	close_up_searchers(x, chunks, CROSS_GRAIN);
	*searched = x->searcher_count;
	// Each of these wrote every list into this step's buffers in the active list's order.
	bool rewritten = x->compacting || requeried || x->searcher_count == in->active_count;
	x->relisted = rewritten ? 0 : x->relisted + x->searcher_count;
	return BP_OK;
}

typedef struct moving_job {
	bpi_cross *cross;
	const bpi_cross_input *in;
	const uint32_t *changed;
	float margin;
} moving_job;

/// The changed entities of the chunk that left their fat boxes (or changed filter),
/// listed in the chunk's own range of the searchers and sampled for the margin.
static void moving_check_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	const moving_job *job = ctx;
	bpi_cross *x = job->cross;
	const bpi_scene *s = job->in->scene;
	const uint32_t now = x->step, n = job->in->active_count;
	bpi_margin_tally *tally = &x->tally.data[chunk];
	*tally = (bpi_margin_tally){0};
	for (uint32_t c = begin; c < end; ++c) {
		const uint32_t k = job->changed[c];
		if (k >= n)
			continue; // marked, then destroyed from the end
		const bpi_fat *f = &x->fat.data[k];
		if (inside(f, s, k) && (job->in->filters_kept || same_filter(f->filter, filter_of(s, k))))
			continue; // still held
		bpi_box3 b = box_of(s, k);
		tally->escaped += f->lo[0] != INFINITY;
		bpi_margin_sample(tally, f, &x->growth.data[k], &b, s->dims, now);
		x->searchers.data[begin + tally->searched++] = k;
	}
}

/// New fat boxes for the searchers [begin, end).
static void moving_grow_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx)
{
	(void)chunk;
	const moving_job *job = ctx;
	bpi_cross *x = job->cross;
	const bpi_scene *s = job->in->scene;
	for (uint32_t c = begin; c < end; ++c) {
		const uint32_t k = x->searchers.data[c];
		bpi_fat *f = &x->fat.data[k];
		bpi_box3 b = box_of(s, k);
		query_start(x, job->in, k, &b, job->margin, NULL);
		f->filter = filter_of(s, k);
		f->count = 0;
	}
}

bp_status bpi_cross_moving(bpi_cross *x, const bpi_cross_input *in, const uint32_t *changed, uint32_t count,
	uint32_t most, uint32_t *searched)
{
	const uint32_t chunks = bpi_chunk_count(count, MOVING_GRAIN);
	// A list even when empty: bpi_active_find takes NULL for "any may have searched".
	if (!bpi_array_reserve(&x->tally, chunks) || !bpi_array_reserve(&x->searchers, BP_MAX(count, 1u)))
		return BP_ERR_OUT_OF_MEMORY;
	++x->step;
	moving_job job = {x, in, changed, bpi_margin_value(&x->margin, in->margin)};
	bpi_parallel_for(count, MOVING_GRAIN, in->scene->threads, moving_check_chunk, &job);
	x->held = in->active_count;
	bpi_margin_observe(&x->margin, x->tally.data, chunks, x->held, true);
	close_up_searchers(x, chunks, MOVING_GRAIN);
	*searched = x->searcher_count;
	if (x->searcher_count <= most)
		bpi_parallel_for(x->searcher_count, MOVING_GRAIN, in->scene->threads, moving_grow_chunk, &job);
	return BP_OK;
}

bool bpi_cross_start_grown(bpi_cross *x, const bpi_scene *scene, float margin, bool searched)
{
	const uint32_t n = scene->count;
	if (!bpi_array_reserve(&x->fat, n) || !bpi_array_reserve(&x->growth, n) ||
		(x->buffer_count == 0 && !bpi_array_reserve(&x->buffers, 1)))
		return false;
	if (x->buffer_count == 0) {
		x->buffers.data[0] = (bpi_candidate_buffer){0};
		x->buffer_count = 1;
	}
	const uint32_t now = searched ? ++x->step : x->step;
	x->requery_settled = false; // no fat box has candidates
	for (uint32_t i = 0; i < n; ++i) {
		bpi_box3 b = box_of(scene, i);
		bpi_fat *f = &x->fat.data[i];
		*f = (bpi_fat){.filter = filter_of(scene, i), .queried_at = now};
		x->growth.data[i] = (bpi_fat_growth){.margin = margin};
		for (int axis = 0; axis < 3; ++axis) { // as query_start grows them
			f->lo[axis] = fmaxf(b.lo[axis] - margin, -FLT_MAX);
			f->hi[axis] = fminf(b.hi[axis] + margin, FLT_MAX);
		}
	}
	return true;
}

bool bpi_cross_reserve(bpi_cross *x, uint32_t active_count)
{
	return bpi_array_reserve(&x->next_fat, active_count) && bpi_array_reserve(&x->next_growth, active_count);
}

void bpi_cross_swap(bpi_cross *x)
{
	bpi_array_swap(&x->fat, &x->next_fat);
	bpi_array_swap(&x->growth, &x->next_growth);
}

bool bpi_cross_grow(bpi_cross *x, uint32_t kept, uint32_t count)
{
	return bpi_array_grow(&x->fat, kept, count) && bpi_array_grow(&x->growth, kept, count);
}

void bpi_cross_free(bpi_cross *x)
{
	bpi_array_free(&x->fat);
	bpi_array_free(&x->next_fat);
	bpi_array_free(&x->growth);
	bpi_array_free(&x->next_growth);
	for (uint32_t b = 0; b < x->buffer_count; ++b)
		bpi_array_free(&x->buffers.data[b].items);
	bpi_array_free(&x->buffers);
	bpi_array_free(&x->writing);
	bpi_array_free(&x->tally);
	bpi_array_free(&x->searchers);
	bpi_margin_free(&x->margin);
	bpi_pair_chunks_free(&x->pairs);
	*x = (bpi_cross){0};
}
