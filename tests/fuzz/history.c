// SPDX-License-Identifier: MIT
// The history engine of history.h: decoding, the shadow model and its oracle, the checks, traces.
#define _POSIX_C_SOURCE 200809L // posix_memalign
#include "history.h"

#include <broadphase/broadphase.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

// Test hooks of the library (src/step/step.h, src/incremental/incremental.h, src/incremental/incremental_active.h,
// src/view/view_hierarchy.h), as tests/common uses them: steps of any size on every thread asked for,
// settling in worlds of fewer than 1,024 entities, the moving state kept, the active pass's bands
// planned anew after 1 to 3 merges, and query hierarchies in small views whose shared part is kept,
// refit or rebuilt at will; worlds with static entities split off their tree whatever the share
// of dynamic ones (src/algorithms/statics.h). bpi_periodic_query_work (src/query/query.h)
// counts a thread's periodic query tests, which the checks hold to a few scans of the view.
void bpi_set_serial_step_entities(uint32_t count);
uint64_t bpi_periodic_query_work(void);
void bpi_set_settle_min(uint32_t count);
void bpi_set_hierarchy_rules(uint32_t count, uint32_t share);
void bpi_cells_set_split_min(uint32_t entities);
void bpi_set_hierarchy_refit(uint32_t percent);
void bpi_view_set_dense_parts(uint32_t entities, uint32_t pairs);
void bpi_set_moving_always(bool on);
void bpi_set_active_merges_most(uint32_t count);
void bpi_set_statics_mover_share(uint32_t share);

static const char *const code_names[OP_COUNT] = {"create", "create_bulk", "destroy", "destroy_bulk", "move",
	"move_bulk", "teleport", "face", "attr", "step", "frame_step", "submit", "acquire", "release", "config"};
/// Operation byte (mod 64) to code: the weights of random histories.
static const uint8_t code_weights[OP_COUNT] = {6, 3, 4, 2, 7, 6, 4, 5, 6, 9, 5, 2, 2, 2, 1};
enum { HELD = 3, RING = 128 };

void (*hist_fail)(uint32_t op, int world, const char *message);

static uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static void *xalloc(size_t bytes)
{
	void *p = calloc(1, bytes ? bytes : 1);
	if (!p)
		abort();
	return p;
}

// ---- bytes <-> history ------------------------------------------------------------------
// 8 bytes of settings (io_config), then per operation: code (mod 64, by code_weights), a, p, q,
// n, k (2 bytes each), s (4), and for create and teleport 6 coordinates of 2 bytes each.

typedef struct codec {
	bool write;
	const uint8_t *in;
	uint8_t *out;
	size_t size, pos;
	const hist_config *cfg;
} codec;

/// A little-endian integer of `bytes` bytes: read (zeros past the end), or v written.
static uint32_t io_n(codec *c, uint32_t v, int bytes)
{
	uint32_t out = 0;
	for (int i = 0; i < bytes; ++i) {
		uint8_t b = (uint8_t)(v >> 8 * i);
		if (c->write)
			c->out[c->pos++] = b;
		else
			b = c->pos < c->size ? c->in[c->pos++] : 0;
		out |= (uint32_t)b << 8 * i;
	}
	return out;
}

static const float coord_special[15] = {FLT_MAX, -FLT_MAX, 3e38f, -3e38f, 1.5e38f, -1.5e38f, 1e38f, 1e30f, -1e20f,
	16777216.0f, 0.1f, 10.7f, -0.0f, 1e-40f, 0.3f};
static const float extent_special[15] = {0, 0, 0, FLT_MAX, 3e38f, 1e38f, 1e20f, 0.1f, 10.6f, 1e-40f, 1e6f, 0.5f,
	1, 2, 16};
static const float margin_table[16] = {0, 0, 0, 0, 0.5f, 1, 4, 100, 1e6f, 1e20f, 1e38f, 1.5e38f, 3e38f, FLT_MAX,
	0.1f, 0.25f};
static const uint8_t settle_table[4] = {0, 1, 4, 16};
/// hist_config.hierarchy: {views below this get none, the shared part is rebuilt past 1 / this out of date}.
static const uint32_t hierarchy_rules[4][2] = {{256, 16}, {0, 1}, {1, 16}, {8, 3}};
/// bp_world_def.query_hierarchy_frames with each of those rules: the default, none kept,
/// every frame, a few; on both worlds, so views built with and without a kept
/// hierarchy answer the same queries.
static const uint32_t hierarchy_frames[4] = {8, 0, UINT32_MAX, 2};
/// bpi_set_hierarchy_refit with each: the library's, never, always (a shape refit however
/// far its entities drifted must answer as a fresh one does).
static const uint32_t hierarchy_refit[4] = {150, 150, 0, UINT32_MAX};
/// bpi_view_set_dense_parts with each: the library's (one part in these small worlds), and
/// parts of a few entities and pairs, so the events' merge is cut at many places.
static const uint32_t dense_parts[4][2] = {{0, 0}, {1, 1}, {7, 5}, {64, 16}};

/// A coordinate (or extent) from 16 bits: the top 16 values are special (0xFFFF: raw float),
/// the others follow the profile: integers 0..grid, decimals 0..grid by 0.1, or wide floats.
static float coord_of(const hist_config *cfg, uint32_t v, bool extent)
{
	if (v >= 0xFFF0)
		return (extent ? extent_special : coord_special)[(v - 0xFFF0) % 15];
	int profile = cfg->profile & 3;
	if (profile == 3)
		profile = (int)(v % 3), v /= 3;
	if (profile == 0)
		return (float)(v % (extent ? 4u : cfg->grid + 1u));
	if (profile == 1)
		return (float)((v % (extent ? 41u : 10u * cfg->grid + 1u)) / 10.0);
	float x = ldexpf(1.0f + (float)((v >> 1) & 255) / 256.0f, (int)((v >> 9) % (extent ? 24u : 64u)) - 20);
	return (v & 1) && !extent ? -x : x;
}

static void io_config(codec *c, hist_config *g)
{
	uint8_t b[8] = {0};
	if (c->write) {
		int m = 0, s = 0;
		while (m < 15 && memcmp(&margin_table[m], &g->margin, 4) != 0)
			++m;
		while (s < 3 && settle_table[s] != g->settle_min)
			++s;
		b[0] = (uint8_t)((g->dims == 3) | g->canonical << 1 | (!g->periodic) << 2 | (g->statics && !g->periodic) << 3 |
			(g->split && !g->periodic) << 4 | (g->profile & 3) << 5 | g->threads_on_small << 7);
		b[1] = (uint8_t)(g->threads + 9 * g->executor), b[2] = (uint8_t)(m | s << 4 | (g->skin != 0) << 6 | g->moving << 7);
		b[3] = (uint8_t)((g->debug_flags & BP_DEBUG_ALWAYS_INCREMENTAL ? 1 : 0) | (g->debug_flags & 3) << 2 |
			(g->debug_flags & BP_DEBUG_ALWAYS_FULL ? 0xF0 : g->merges_most ? (7 + g->merges_most) << 4 : 0));
		b[4] = (uint8_t)((g->grid - 4) | g->hierarchy << 6), b[5] = (uint8_t)((g->algo_target ? g->algo_target + 7 : 0) |
			(g->algo_plain ? g->algo_plain + 7 : 0) << 4);
		b[6] = (uint8_t)(g->period[0] - 8), b[7] = (uint8_t)(g->period[1] - 8);
	}
	for (int i = 0; i < 8; ++i)
		b[i] = (uint8_t)io_n(c, b[i], 1);
	if (c->write)
		return;
	*g = (hist_config){.dims = 2 + (b[0] & 1), .canonical = (b[0] >> 1) & 1, .periodic = (b[0] & 0x1C) == 0,
		.profile = (b[0] >> 5) & 3, .threads_on_small = b[0] >> 7, .threads = b[1] % 9,
		.executor = (uint8_t)((b[1] / 9) % 3), .margin = margin_table[b[2] & 15],
		.settle_min = settle_table[(b[2] >> 4) & 3], .grid = (uint8_t)(4 + b[4] % 64),
		.hierarchy = b[4] >> 6, .moving = b[2] >> 7,
		.algo_target = (b[5] & 15) < 8 ? 0 : (b[5] & 15) - 7, .algo_plain = (b[5] >> 4) < 8 ? 0 : (b[5] >> 4) - 7,
		.period = {(float)(8 + b[6] % 57), (float)(8 + b[7] % 57), (float)(8 + b[6] % 57)},
		.statics = (b[0] >> 3) & 1, .split = (b[0] >> 4) & 1};
	g->skin = (b[2] >> 6) & 1 ? g->margin : 0.0f;
	g->debug_flags = (uint8_t)(((b[3] & 3) ? BP_DEBUG_ALWAYS_INCREMENTAL : 0) | ((b[3] >> 2) & 3) |
		((b[3] >> 4) == 15 ? BP_DEBUG_ALWAYS_FULL : 0));
	// The rest of that nibble: the bands planned anew after 1 to 3 merges, or after the default.
	g->merges_most = (uint8_t)((b[3] >> 4) >= 8 && (b[3] >> 4) < 15 ? 1 + ((b[3] >> 4) - 8) % 3 : 0);
}

/// Bounds: min from a coordinate, max = min + an extent; hist_encode writes raw floats (and max
/// itself), so every history encodes exactly.
static void io_op(codec *c, hist_op *op)
{
	uint32_t code = 0;
	for (int i = 0; i < op->code && c->write; ++i)
		code += code_weights[i];
	code = io_n(c, code, 1) % 64;
	if (!c->write)
		for (*op = (hist_op){0}; code >= code_weights[op->code];)
			code -= code_weights[op->code++];
	op->a = (uint8_t)io_n(c, op->a, 1);
	op->p = (uint16_t)io_n(c, op->p, 2), op->q = (uint16_t)io_n(c, op->q, 2);
	op->n = (uint16_t)io_n(c, op->n, 2), op->k = (uint16_t)io_n(c, op->k, 2), op->s = io_n(c, op->s, 4);
	for (int i = 0; i < 6 && (op->code == OP_CREATE || op->code == OP_TELEPORT); ++i) {
		float *v = i < 3 ? &op->min[i] : &op->max[i - 3];
		uint32_t bits, v16 = io_n(c, 0xFFFF, 2);
		memcpy(&bits, v, 4);
		if (v16 == 0xFFFF)
			bits = io_n(c, bits, 4), memcpy(v, &bits, 4);
		else
			*v = i < 3 ? coord_of(c->cfg, v16, false) : op->min[i - 3] + coord_of(c->cfg, v16, true);
	}
}

void hist_push(history *h, hist_op op)
{
	if (h->count == h->capacity && !(h->ops = realloc(h->ops, (h->capacity = h->capacity * 2 + 64) * sizeof op)))
		abort();
	h->ops[h->count++] = op;
}

void hist_decode(const uint8_t *data, size_t size, history *h)
{
	*h = (history){0};
	codec c = {.in = data, .size = size, .cfg = &h->cfg};
	io_config(&c, &h->cfg);
	while (c.pos < size && h->count < 4096) {
		hist_op op = {0};
		io_op(&c, &op);
		hist_push(h, op);
	}
}

size_t hist_encode(const history *h, uint8_t **out)
{
	codec c = {.write = true, .out = xalloc(8 + (size_t)h->count * 64), .cfg = &h->cfg};
	hist_config g = h->cfg;
	io_config(&c, &g);
	for (uint32_t i = 0; i < h->count; ++i) {
		hist_op op = h->ops[i];
		io_op(&c, &op);
	}
	*out = c.out;
	return c.pos;
}

void hist_from_seed(uint64_t seed, history *h)
{
	const bool movers = seed % 4 == 0, held = seed % 8 == 0, wide = seed % 16 == 0, waves = seed % 8 == 2;
	const bool churn = seed % 8 == 6;
	size_t size = 300 + rng_next(&seed) % 1500;
	uint8_t *bytes = xalloc(size);
	for (size_t i = 0; i < size; ++i)
		bytes[i] = (uint8_t)(rng_next(&seed) >> 56);
	hist_decode(bytes, size, h);
	free(bytes);
	// A quarter of the seeds change one set of entities again and again, as a host's
	// bodies that keep moving while the rest stay: every move and change of attributes
	// picks among the first 4 dense indices, a bulk move moves all of them, and nothing
	// is destroyed (which would move another entity), so the others come to rest (and
	// settle) while those stay active. Half of them move those by small steps alone
	// (op_move's motions 0 .. 7), which stay inside their fat boxes while others settle
	// as soon as one is quiet. They start from 96 resting boxes, so that the entities
	// created later are few beside them and settle, not take a full step, and create a
	// few boxes where the others destroy.
	if (held) {
		history g = {.cfg = h->cfg};
		g.cfg.settle_min = 1, g.cfg.moving = 0, g.cfg.skin = 0; // states that never settle
		if (wide)
			g.cfg.margin = 4; // held through several settles
		for (uint32_t i = 0; i < 4; ++i)
			hist_push(&g, (hist_op){.code = OP_CREATE_BULK, .n = 23, .s = (uint32_t)seed + i});
		hist_push(&g, (hist_op){.code = OP_STEP, .k = 1});
		for (uint32_t i = 0; i < h->count; ++i)
			hist_push(&g, h->ops[i]);
		hist_free(h);
		*h = g;
	}
	// An eighth keep the moving state while a changing set of entities leaves its fat boxes
	// each step: bulk moves of random entities by large steps (op_move's motions 8 .. 11)
	// among 92 boxes, also where others create or destroy (which would lay the columns out
	// anew). The fat boxes of the searchers pile up beside the columns until those are laid
	// out again, the searchers merged in or, after 1 to 3 merges, the bands planned anew.
	if (waves) {
		history g = {.cfg = h->cfg};
		g.cfg.moving = 1, g.cfg.skin = 0;
		if (!(g.cfg.debug_flags & BP_DEBUG_ALWAYS_FULL))
			g.cfg.merges_most = (uint8_t)(1 + seed % 3); // the bands planned anew within a stay
		for (uint32_t i = 0; i < 4; ++i)
			hist_push(&g, (hist_op){.code = OP_CREATE_BULK, .n = 23, .s = (uint32_t)seed + i});
		hist_push(&g, (hist_op){.code = OP_STEP, .k = 1});
		for (uint32_t i = 0; i < h->count; ++i) {
			hist_op o = h->ops[i];
			if (o.code == OP_DESTROY || o.code == OP_DESTROY_BULK || o.code == OP_CREATE || o.code == OP_CREATE_BULK)
				o.code = OP_MOVE_BULK, o.n = 15;
			if (o.code == OP_MOVE_BULK) // variant 1 moves a dense range: the others pick at random
				o.a = (uint8_t)((8 + (o.a >> 2) % 4) << 2 | ((o.a & 3) == 1 ? 2 : o.a & 3));
			hist_push(&g, o);
		}
		hist_free(h);
		*h = g;
	}
	// An eighth churn: before every step, 1 to 12 entities destroyed and as many created, one of
	// each in turn (a destroy moves the last entity, often one just created, into the hole),
	// among 92 boxes at rest from the start. The active entities keep candidate lists naming
	// resting entities that leave by the dozen, their indices taken again at once; half of
	// them settle as soon as one is quiet.
	if (churn) {
		history g = {.cfg = h->cfg};
		g.cfg.moving = 0, g.cfg.skin = 0; // the resting path
		g.cfg.settle_min = seed % 16 == 6 ? 1 : g.cfg.settle_min;
		for (uint32_t i = 0; i < 4; ++i)
			hist_push(&g, (hist_op){.code = OP_CREATE_BULK, .n = 23, .s = (uint32_t)seed + i});
		hist_push(&g, (hist_op){.code = OP_STEP, .k = 1});
		for (uint32_t i = 0; i < h->count; ++i) {
			hist_op o = h->ops[i];
			bool step = o.code == OP_STEP || o.code == OP_FRAME || o.code == OP_SUBMIT;
			for (uint32_t k = 0, pairs = 1 + o.s % 12; step && k < pairs; ++k) {
				uint64_t r = rng_next(&seed);
				hist_push(&g, (hist_op){.code = OP_DESTROY, .p = (uint16_t)r});
				hist_push(&g, (hist_op){.code = OP_CREATE_BULK, .s = (uint32_t)(r >> 32), .q = (uint16_t)(r >> 16),
							.k = (uint16_t)(r >> 24) & 0x7F}); // one box (n 0), a random one (a 0)
			}
			hist_push(&g, o);
		}
		hist_free(h);
		*h = g;
	}
	// An eighth start among boxes of far different sizes: 144 drawn as bulk creates draw them,
	// then eight from 2^8 to 2^22 across, so the views' hierarchies put those in size classes
	// of their own (tree/bvh.c).
	if (seed % 8 == 3) {
		history g = {.cfg = h->cfg};
		for (uint32_t i = 0; i < 6; ++i)
			hist_push(&g, (hist_op){.code = OP_CREATE_BULK, .n = 23, .s = (uint32_t)seed + i});
		for (uint32_t i = 0; i < 8; ++i) {
			hist_op o = {.code = OP_CREATE, .a = (uint8_t)(seed >> 8), .s = (uint32_t)seed + i};
			for (int k = 0; k < 3; ++k) {
				o.min[k] = (float)((i * 7 + (uint32_t)k * 3) % 11) * 40.0f - 200.0f;
				o.max[k] = o.min[k] + ldexpf(1.0f, 8 + 2 * (int)i);
			}
			hist_push(&g, o);
		}
		for (uint32_t i = 0; i < h->count; ++i)
			hist_push(&g, h->ops[i]);
		hist_free(h);
		*h = g;
	}
	// An eighth report step events from the start, so filter changes and new selections
	// meet pairs that keep overlapping.
	if (seed % 8 == 5) {
		history g = {.cfg = h->cfg};
		hist_push(&g, (hist_op){.code = OP_CONFIG, .a = 0x83, .s = (uint32_t)(1 + seed / 8 % 3) << 8});
		for (uint32_t i = 0; i < h->count; ++i)
			hist_push(&g, h->ops[i]);
		hist_free(h);
		*h = g;
	}
	for (uint32_t i = 0; movers && i < h->count; ++i) {
		hist_op *o = &h->ops[i];
		if (held && (o->code == OP_TELEPORT || o->code == OP_FACE))
			o->code = OP_MOVE;
		if (held && (o->code == OP_MOVE || o->code == OP_MOVE_BULK))
			o->a &= 0x1F; // the motion's top bit: large steps and jumps
		if (o->code == OP_MOVE_BULK)
			o->a = (uint8_t)((o->a & ~3u) | 1u), o->p = 0, o->n = 3;
		else if (o->code == OP_MOVE || o->code == OP_TELEPORT || o->code == OP_FACE || o->code == OP_ATTR)
			o->p %= 4;
		else if (o->code == OP_DESTROY || o->code == OP_DESTROY_BULK)
			*o = held ? (hist_op){.code = OP_CREATE_BULK, .n = o->n % 4, .s = o->s} : (hist_op){.code = OP_STEP, .k = 1};
	}
}

void hist_free(history *h)
{
	free(h->ops);
	*h = (history){0};
}

// ---- an allocator that fails the k-th allocation on demand; a host task system -------------

static atomic_long alloc_count, alloc_fail_at;

static void *count_alloc(size_t size, size_t align, void *user)
{
	(void)user;
	if (atomic_fetch_add(&alloc_count, 1) + 1 == atomic_load(&alloc_fail_at))
		return NULL;
	void *ptr = NULL;
	if (posix_memalign(&ptr, align < sizeof(void *) ? sizeof(void *) : align, size ? size : 1) != 0)
		return NULL;
	// Fresh blocks hold garbage, not what the last free left: a read of a grown
	// array's lost contents then goes wrong every time, not by chance.
	memset(ptr, 0xA5, size);
	return ptr;
}

static void count_free(void *ptr, size_t size, size_t align, void *user)
{
	(void)size, (void)align, (void)user;
	free(ptr);
}

static void arm(uint32_t k) { atomic_store(&alloc_fail_at, k ? atomic_load(&alloc_count) + k : 0); }

/// Runs every range at once, the last first, on rotating worker numbers.
static void *host_enqueue(bp_task_fn *task, uint32_t count, uint32_t min_range, void *context, void *user)
{
	uint32_t range = min_range ? min_range : 1, workers = (uint32_t)*(const int *)user;
	for (uint32_t i = (uint32_t)(((uint64_t)count + range - 1) / range); i-- > 0;)
		task(i * range, count - i * range > range ? i * range + range : count, i % workers, context);
	return NULL;
}

static void host_finish(void *task, void *user) { (void)task, (void)user; }

// ---- the shadow model and the oracle --------------------------------------------------------

typedef struct ent {
	float min[3], max[3];
	uint64_t category, mask;
	uint32_t dense;
	uint64_t key;
	bool is_static, sphere;
	bp_entity h[2]; ///< in the incremental and the plain world
} ent;

/// What a frame must hold: the oracle's pairs of its snapshot, handles and keys in dense order.
typedef struct frame_exp {
	uint64_t frame;
	uint32_t n;
	size_t count;
	bp_pair *pairs;
	bp_entity *handles;
	uint64_t *keys;
	float (*box)[6]; ///< the snapshot's bounds in dense order: min x, y, z, max x, y, z
	uint64_t (*filter)[2]; ///< category, mask
	uint8_t *traits; ///< per entity: TRAIT_* bits
	bool world_view; ///< bp_world_view's: no pairs, no events, no frame before it
} frame_exp;

/// frame_exp.traits: a sphere, a static entity.
enum { TRAIT_SPHERE = 1, TRAIT_STATIC = 2 };

typedef struct side {
	bp_world *w;
	bp_pair *last; ///< pairs of the last successful step, in the world's order
	size_t last_count;
	/// canonical_pairs: every step's pairs sorted. Without it an incremental world's
	/// full step leaves them in its algorithm's order, and its other paths sort them.
	bool canonical;
	bp_view *held[HELD];
	frame_exp held_exp[HELD], ring[RING];
	frame_exp kept; ///< the published frame's, when frames that failed since pushed it out of the ring
	uint64_t submitted, published;     ///< last submitted and last known published frame
	bool pending, pending_unsupported; ///< a submit not waited for; BP_ERR_UNSUPPORTED allowed for it
	bool pending_limited;              ///< BP_ERR_OUT_OF_MEMORY allowed for it: a memory limit was set
	bp_status pending_status;          ///< what its build must return
	size_t limit;                      ///< the world's memory_limit (0: none): steps may fail under it
	size_t build_limit;                ///< the limit of its last frame build: readers' lazy arrays count against it
	int workers;
	uint64_t events;          ///< bp_world_set_events' selection (0: off)
	bp_pair_event *named;     ///< the selected pairs of the last step that made events, event_cmp order
	size_t named_count;
} side;

typedef struct ctx {
	const history *h;
	const hist_config *cfg;
	int dims, tw;
	ent *e;
	uint32_t slots, cap, n, *dense; ///< entities by slot; live slots in dense order
	side sd[2];
	uint32_t op, max_entities;
	uint64_t steps;
	FILE *tr;
	volatile uint32_t *progress;
} ctx;

__attribute__((format(printf, 3, 4))) static void failf(ctx *c, int world, const char *fmt, ...)
{
	char msg[900];
	int len = snprintf(msg, sizeof msg, "op %u (%s)%s: ", c->op, c->op < c->h->count ?
		code_names[c->h->ops[c->op].code] : "end", world == 0 ? " incremental world" : world == 1 ? " plain world" : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg + len, sizeof msg - (size_t)len, fmt, ap);
	va_end(ap);
	if (c->tr)
		fprintf(c->tr, "\t// history check failed here: %s\n}\n", msg), fflush(c->tr);
	if (hist_fail)
		hist_fail(c->op, world, msg);
	fprintf(stderr, "history: %s\n", msg);
	abort(); // hist_fail must not return
}

static void at_world(ctx *c, int w)
{
	if (c->progress)
		c->progress[1] = (uint32_t)w;
}

static bool axis_overlap(const ctx *c, const ent *a, const ent *b, int k)
{
	if (!c->cfg->periodic)
		return a->min[k] <= b->max[k] && b->min[k] <= a->max[k];
	double p = c->cfg->period[k], x = fmod(a->min[k], p), y = fmod(b->min[k], p); // exact, far away too
	x += x < 0 ? p : 0, y += y < 0 ? p : 0;
	for (int shift = -2; shift <= 2; ++shift) // minimum image: reduced minima, extents <= p / 2
		if (x <= y + shift * p + ((double)b->max[k] - b->min[k]) && y + shift * p <= x + ((double)a->max[k] - a->min[k]))
			return true;
	return false;
}

static double radius(const ent *s, int dims)
{
	double r = ((double)s->max[0] - s->min[0]) / 2;
	for (int k = 1; k < dims; ++k)
		r = fmin(r, ((double)s->max[k] - s->min[k]) / 2);
	return r;
}

/// The pair rules of world.h, from its text: closed boxes, filters, no static pairs, shapes.
static bool pair_expected(const ctx *c, const ent *a, const ent *b)
{
	if ((a->is_static && b->is_static) || !(a->category & b->mask) || !(b->category & a->mask))
		return false;
	for (int k = 0; k < c->dims; ++k)
		if (!axis_overlap(c, a, b, k))
			return false;
	if (!a->sphere && !b->sphere)
		return true;
	const ent *s = a->sphere ? a : b, *o = a->sphere ? b : a;
	double d2 = 0, r = radius(s, c->dims) + (o->sphere ? radius(o, c->dims) : 0);
	for (int k = 0; k < c->dims; ++k) {
		double cs = ((double)s->min[k] + s->max[k]) / 2, co = ((double)o->min[k] + o->max[k]) / 2;
		double near = o->sphere ? co : fmin(fmax(cs, o->min[k]), o->max[k]);
		d2 += (cs - near) * (cs - near);
	}
	return d2 <= r * r;
}

static bp_pair *oracle(const ctx *c, size_t *count)
{
	size_t cap = 64, k = 0;
	bp_pair *out = xalloc(cap * sizeof *out);
	for (uint32_t i = 0; i < c->n; ++i)
		for (uint32_t j = i + 1; j < c->n; ++j)
			if (pair_expected(c, &c->e[c->dense[i]], &c->e[c->dense[j]])) {
				if (k == cap && !(out = realloc(out, (cap *= 2) * sizeof *out)))
					abort();
				out[k++] = (bp_pair){i, j};
			}
	*count = k;
	return out;
}

/// What a step must return: BP_ERR_PERIODIC_EXTENT when an extent passes period / 2.
static bp_status step_expected(const ctx *c)
{
	for (uint32_t i = 0; i < c->n && c->cfg->periodic; ++i)
		for (int k = 0; k < c->dims; ++k)
			if ((double)c->e[c->dense[i]].max[k] - c->e[c->dense[i]].min[k] > c->cfg->period[k] / 2.0)
				return BP_ERR_PERIODIC_EXTENT;
	return BP_OK;
}

/// BP_ERR_UNSUPPORTED is allowed from grid and hash chosen by name when the bounds span ~3e38
/// (world.h: "spans beyond float range, near +-3e38").
static bool unsupported_allowed(const ctx *c, int w, bp_status s)
{
	bp_algorithm a = bp_world_algorithm(c->sd[w].w);
	for (int k = 0; k < c->dims && s == BP_ERR_UNSUPPORTED && (a == BP_ALGO_GRID || a == BP_ALGO_HASH); ++k) {
		double lo = INFINITY, hi = -INFINITY;
		for (uint32_t i = 0; i < c->n; ++i)
			lo = fmin(lo, c->e[c->dense[i]].min[k]), hi = fmax(hi, c->e[c->dense[i]].max[k]);
		if (c->n && hi - lo > 1e38)
			return true;
	}
	return false;
}

static bp_status bounds_status(const ctx *c, const float *min, const float *max)
{
	for (int k = 0; k < c->dims; ++k) // axis by axis: the first at fault names the status (world.h)
		if (!isfinite(min[k]) || !isfinite(max[k]))
			return BP_ERR_NOT_FINITE;
		else if (min[k] > max[k])
			return BP_ERR_INVERTED_BOUNDS;
	return BP_OK;
}

static const char *status_name(bp_status s)
{
	static const char *const names[] = {"BP_OK", "BP_ERR_INVALID_ARGUMENT", "BP_ERR_NOT_FINITE",
		"BP_ERR_INVERTED_BOUNDS", "BP_ERR_STALE_HANDLE", "BP_ERR_OUT_OF_RANGE", "BP_ERR_OUT_OF_MEMORY",
		"BP_ERR_UNKNOWN_ALGORITHM", "BP_ERR_PARSE", "BP_ERR_IO", "BP_ERR_UNSUPPORTED", "BP_ERR_NO_FRAME",
		"BP_ERR_NOT_SUBMITTED", "BP_ERR_PERIODIC_EXTENT"};
	return (unsigned)s < sizeof names / sizeof *names ? names[s] : "?";
}

static void expect_status(ctx *c, int w, bp_status got, bp_status want, const char *call)
{
	if (got != want)
		failf(c, w, "%s returned %s (%s), expected %s", call, status_name(got), bp_world_last_error(c->sd[w].w),
			status_name(want));
}

static const char *pairs_differ(const bp_pair *got, size_t gc, const bp_pair *want, size_t wc, char *buf, size_t size)
{
	size_t i = 0;
	while (i < gc && i < wc && got[i].lo == want[i].lo && got[i].hi == want[i].hi)
		++i;
	if (i == gc && i == wc)
		return NULL;
	int len = snprintf(buf, size, "%zu pairs, expected %zu; first difference at %zu: ", gc, wc, i);
	len += snprintf(buf + len, size - (size_t)len, i < gc ? "(%u, %u)" : "none", i < gc ? got[i].lo : 0, i < gc ? got[i].hi : 0);
	snprintf(buf + len, size - (size_t)len, i < wc ? ", expected (%u, %u)" : ", expected none", i < wc ? want[i].lo : 0,
		i < wc ? want[i].hi : 0);
	return buf;
}

// ---- traces: the calls on one world as a Criterion test ------------------------------------

#define TR(c, w) ((c)->tr && (w) == (c)->tw)

__attribute__((format(printf, 3, 4))) static void tr(const ctx *c, int w, const char *fmt, ...)
{
	if (!TR(c, w))
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(c->tr, fmt, ap);
	va_end(ap);
}

/// The shortest float literal that reads back as v (in one of 16 rotating buffers).
static const char *F(float v)
{
	static char bufs[16][48];
	static unsigned next;
	char *buf = bufs[next++ % 16];
	if (isnan(v) || isinf(v))
		return isnan(v) ? "NAN" : v < 0 ? "-INFINITY" : "INFINITY";
	for (int digits = 6; digits <= 9; ++digits)
		if (snprintf(buf, 40, "%.*g", digits, (double)v), strtof(buf, NULL) == v)
			break;
	return strcat(buf, strpbrk(buf, ".en") ? "f" : ".f");
}

static void tr_floats(const ctx *c, const char *name, const float *v, uint32_t count)
{
	fprintf(c->tr, "\t\tstatic const float %s[] = {", name);
	for (uint32_t i = 0; i < count; ++i)
		fprintf(c->tr, "%s%s", i ? ", " : "", F(v[i]));
	fputs("};\n", c->tr);
}

static void tr_ints(const ctx *c, const char *decl, const void *v, int size, uint32_t count)
{
	fprintf(c->tr, "\t\t%s[] = {", decl);
	for (uint32_t i = 0; i < count; ++i)
		fprintf(c->tr, "%s%#llx", i ? ", " : "", size == 8 ? (unsigned long long)((const uint64_t *)v)[i] :
			(unsigned long long)((const uint32_t *)v)[i]);
	fputs("};\n", c->tr);
}

static void tr_arrays(const ctx *c, float *soa[6], uint32_t count)
{
	static const char *const names[6] = {"min_x", "min_y", "min_z", "max_x", "max_y", "max_z"};
	for (int i = 0; i < 6; ++i)
		if (i % 3 < c->dims)
			tr_floats(c, names[i], soa[i], count);
	fprintf(c->tr, "\t\tbp_bounds_arrays b = {min_x, min_y, %s, max_x, max_y, %s};\n", c->dims == 3 ? "min_z" : "NULL",
		c->dims == 3 ? "max_z" : "NULL");
}

/// The documented bp_pairs_checksum, written again: the sum of splitmix64((lo << 32) | hi).
/// Asserts the pairs `get` reads equal `want`; in sorted order unless `any_order` (the
/// checksum does not see the order either way).
static void tr_pairs(const ctx *c, int w, const char *get, const bp_pair *want, size_t count, bool any_order)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < count; ++i) {
		uint64_t z = (uint64_t)want[i].lo << 32 | want[i].hi;
		sum += rng_next(&z);
	}
	tr(c, w, "\tp = %s;\n\tcr_assert_eq(count, %zu);\n", get, count);
	if (count > 24)
		tr(c, w, "\tcr_assert_eq(bp_pairs_checksum(p, count, NULL), %#llxull);\n", (unsigned long long)sum);
	for (size_t i = 0; i < count && count <= 24; ++i)
		tr(c, w, "%s{%u, %u}%s", i ? ", " : "\t{\n\t\tstatic const bp_pair want[] = {", want[i].lo, want[i].hi,
			i + 1 < count ? "" : "};\n");
	if (count && count <= 24 && any_order)
		tr(c, w, "\t\tbp_pair sorted[%zu];\n\t\tmemcpy(sorted, p, sizeof sorted);\n\t\tbp_pairs_sort(sorted, count);\n"
			 "\t\tcr_assert(memcmp(sorted, want, sizeof want) == 0, \"pairs differ\");\n\t}\n", count);
	else if (count && count <= 24)
		tr(c, w, "\t\tcr_assert(memcmp(p, want, sizeof want) == 0, \"pairs differ\");\n\t}\n");
}

// ---- entities -------------------------------------------------------------------------------

#define LAYER_1 UINT64_C(1)
#define LAYER_2 (UINT64_C(1) << 33)
#define LAYER_3 (UINT64_C(1) << 63)

uint64_t hist_category(int index)
{
	static const uint64_t cats[HIST_FILTERS] = {1, 1, 1, 2, 4, 3, 0, UINT64_MAX, LAYER_1, LAYER_2, LAYER_3,
		LAYER_1 | LAYER_2, LAYER_2 | LAYER_3, LAYER_3, 2 | LAYER_3, UINT64_MAX & ~LAYER_2};
	return cats[index % HIST_FILTERS];
}

uint64_t hist_mask(int index)
{
	static const uint64_t masks[HIST_FILTERS] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, 1, 3, 6, 0, 5, UINT64_MAX, LAYER_2,
		LAYER_3, LAYER_1 | LAYER_3, LAYER_2 | LAYER_3, 2 | LAYER_2, UINT64_MAX & ~LAYER_3, UINT64_MAX & ~LAYER_1};
	return masks[index % HIST_FILTERS];
}

static void attrs_from(const ctx *c, uint32_t s, uint8_t a, ent *x)
{
	x->category = hist_category((int)(s % HIST_FILTERS)), x->mask = hist_mask((int)(s / HIST_FILTERS % HIST_FILTERS));
	x->is_static = c->cfg->statics ? (a & 3) != 0 : (a & 3) == 3;
	x->sphere = !c->cfg->periodic && (a & 0x1C) == 0x1C;
	x->key = (uint64_t)s * 0x9E3779B97F4A7C15ull >> 16;
}

/// Periodic worlds: bounds on the grid of 1/4 within four periods, or integers from 2^24 out
/// to FLT_MAX as drawn (exact reduction, world.h), extents at most period / 2 unless they
/// were huge (then 3/4 period: the step must refuse).
static void snap(const ctx *c, float *min, float *max)
{
	for (int k = 0; k < 3 && c->cfg->periodic; ++k) {
		float p = c->cfg->period[k], e = max[k] - min[k];
		if (!isfinite(min[k]) || !isfinite(max[k]) || min[k] > max[k])
			continue;
		e = e > p ? 0.75f * p : floorf(fminf(e, p / 2) * 4) / 4;
		if (!(fabsf(min[k]) >= 0x1p24f))
			min[k] = floorf(fmaxf(fminf(min[k], 4 * p), -4 * p) * 4) / 4;
		max[k] = min[k] + e;
	}
}

static void random_bounds(const ctx *c, uint64_t *rng, float *min, float *max, bool point, float spread)
{
	for (int k = 0; k < 3; ++k) {
		min[k] = spread * coord_of(c->cfg, (uint32_t)(rng_next(rng) % 0xFFFF), false);
		max[k] = point ? min[k] : min[k] + coord_of(c->cfg, (uint32_t)(rng_next(rng) % 0xFFFF), true);
	}
}

/// Creates entities: one (bp_entity_create, bounds and settings from op) or count in one call
/// (bp_world_create_entities, bounds drawn from op->s, settings from q and k).
static void op_create(ctx *c, const hist_op *op, bool bulk)
{
	uint32_t count = !bulk ? 1 : (op->a & 0xF8) == 0xF8 && !c->cfg->periodic ? 2000u + op->n % 700u : op->n % 24u + 1;
	if (c->n + count > c->max_entities)
		return;
	float *soa[6], min0[3], max0[3], spread = count > 100 ? 16.0f : 1.0f; // 2,000 as dense as 24: millions of pairs
	uint64_t rng = op->s;
	ent x = {0};
	attrs_from(c, bulk ? op->q : op->s, bulk ? (uint8_t)op->k : op->a, &x);
	random_bounds(c, &rng, min0, max0, false, 1.0f);
	float row = count > 100 ? fmaxf(max0[0] - min0[0], 1.0f) : max0[0] - min0[0]; // not 2,000 copies of one box
	bp_status want = BP_OK;
	for (int i = 0; i < 6; ++i)
		soa[i] = xalloc(count * sizeof(float));
	for (uint32_t i = 0; i < count; ++i) {
		float min[3], max[3];
		if (!bulk)
			memcpy(min, op->min, sizeof min), memcpy(max, op->max, sizeof max);
		else if ((op->a & 3) == 1) // a row of boxes touching face to face along x
			memcpy(min, min0, sizeof min), memcpy(max, max0, sizeof max), min[0] = min0[0] + (float)i * row,
				max[0] = min0[0] + (float)(i + 1) * row;
		else if ((op->a & 3) == 2 && count <= 100) // all the same box
			memcpy(min, min0, sizeof min), memcpy(max, max0, sizeof max);
		else
			random_bounds(c, &rng, min, max, (op->a & 3) == 3, spread);
		snap(c, min, max);
		want = want == BP_OK ? bounds_status(c, min, max) : want; // bulk bounds only overflow, never invert
		for (int k = 0; k < 3; ++k)
			soa[k][i] = min[k], soa[3 + k][i] = max[k];
	}
	bp_entity_def d = bp_entity_def_default();
	d.category = x.category, d.mask = x.mask, d.kind = x.is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
	d.shape = x.sphere ? BP_SHAPE_SPHERE : BP_SHAPE_BOX, d.user_key = x.key;
	for (int k = 0; k < 3; ++k)
		d.min[k] = soa[k][0], d.max[k] = soa[3 + k][0];
	bp_bounds_arrays arrays = {soa[0], soa[1], soa[2], soa[3], soa[4], soa[5]};
	bp_entity *handles[2] = {xalloc(count * sizeof(bp_entity)), xalloc(count * sizeof(bp_entity))};
	for (int w = 0; w < 2; ++w) {
		at_world(c, w);
		tr(c, w, "\td = bp_entity_def_default();\n\td.category = %#llx, d.mask = %#llx, d.user_key = %#llx, d.kind = %d, "
			"d.shape = %d;\n", (unsigned long long)d.category, (unsigned long long)d.mask, (unsigned long long)d.user_key,
			(int)d.kind, (int)d.shape);
		if (!bulk) {
			for (int k = 0; k < c->dims; ++k)
				tr(c, w, "\td.min[%d] = %s, d.max[%d] = %s;\n", k, F(d.min[k]), k, F(d.max[k]));
			tr(c, w, "\tcr_assert_eq(bp_entity_create(w, &d, &e[%u]), %s);\n", c->slots, status_name(want));
			expect_status(c, w, bp_entity_create(c->sd[w].w, &d, handles[w]), want, "bp_entity_create");
			continue;
		}
		if (TR(c, w))
			fputs("\t{\n", c->tr), tr_arrays(c, soa, count);
		tr(c, w, "\t\tcr_assert_eq(bp_world_create_entities(w, %u, &b, &d, e + %u), %s);\n\t}\n", count, c->slots,
			status_name(want));
		expect_status(c, w, bp_world_create_entities(c->sd[w].w, count, &arrays, &d, handles[w]), want,
			"bp_world_create_entities");
	}
	for (uint32_t i = 0; i < count && want == BP_OK; ++i) {
		if (c->slots == c->cap && (!(c->e = realloc(c->e, (c->cap = 2 * c->cap + 256) * sizeof *c->e)) ||
									  !(c->dense = realloc(c->dense, c->cap * 4))))
			abort();
		ent *y = &c->e[c->slots];
		*y = x, y->dense = c->n, y->h[0] = handles[0][i], y->h[1] = handles[1][i];
		for (int k = 0; k < 3; ++k)
			y->min[k] = soa[k][i], y->max[k] = soa[3 + k][i];
		c->dense[c->n++] = c->slots++;
	}
	for (int i = 0; i < 6; ++i)
		free(soa[i]);
	free(handles[0]), free(handles[1]);
}

/// Destroys: one entity (bulk false), or a list in one call (all, or a fraction in random
/// order); with a duplicate in the list the call must refuse and change nothing.
static void op_destroy(ctx *c, const hist_op *op, bool bulk)
{
	if (!c->n)
		return;
	uint64_t rng = op->s;
	uint32_t *order = xalloc(c->n * sizeof *order), count = !bulk ? 1 : op->a & 3 ? c->n * (op->a & 3) / 4 + 1 : c->n;
	bool duplicate = bulk && (op->a & 0x80);
	memcpy(order, c->dense, c->n * sizeof *order);
	for (uint32_t i = c->n; i > 1; --i) {
		uint32_t j = (uint32_t)(rng_next(&rng) % i), t = order[i - 1];
		order[i - 1] = order[j], order[j] = t;
	}
	if (!bulk)
		order[0] = c->dense[op->p % c->n];
	bp_entity *list = xalloc((count + 1) * sizeof *list);
	for (int w = 0; w < 2; ++w) {
		at_world(c, w);
		for (uint32_t i = 0; i <= count; ++i)
			list[i] = c->e[order[i < count ? i : 0]].h[w];
		if (!bulk) {
			tr(c, w, "\tcr_assert_eq(bp_entity_destroy(w, e[%u]), BP_OK);\n", order[0]);
			expect_status(c, w, bp_entity_destroy(c->sd[w].w, list[0]), BP_OK, "bp_entity_destroy");
			continue;
		}
		tr(c, w, "\t{\n\t\tconst bp_entity list[] = {");
		for (uint32_t i = 0; i < count + duplicate; ++i)
			tr(c, w, "%se[%u]", i ? ", " : "", order[i < count ? i : 0]);
		tr(c, w, "};\n\t\tcr_assert%s(bp_world_destroy_entities(w, %u, list), BP_OK);\n\t}\n", duplicate ? "_neq" : "_eq",
			count + duplicate);
		bp_status s = bp_world_destroy_entities(c->sd[w].w, count + duplicate, list);
		if (duplicate ? s == BP_OK || bp_world_entity_count(c->sd[w].w) != c->n : s != BP_OK)
			failf(c, w, "bp_world_destroy_entities of %u%s: %s", count, duplicate ? " and a duplicate" : "", status_name(s));
	}
	for (uint32_t i = 0; i < count && !duplicate; ++i) { // swap-remove, in list order
		uint32_t at = c->e[order[i]].dense, last = c->dense[--c->n];
		c->dense[at] = last, c->e[last].dense = at;
	}
	free(order), free(list);
}

/// Sets the bounds of slots[i] to soa[*][i] through one of four calls: 0 bp_entity_set_bounds
/// each, bp_entities_set_bounds with 1 bp_target_range (the slots are a dense range), 2
/// bp_target_indices, 3 bp_target_handles; 1 to 3 all or nothing, an index listed twice takes its last.
static void set_bounds(ctx *c, const uint32_t *slots, float *soa[6], uint32_t count, int variant)
{
	bp_status want = BP_OK, *each = xalloc(count * sizeof *each);
	bool either = false; // two kinds of bad bounds: either status may come first
	uint32_t *dense = xalloc(count * sizeof *dense);
	bp_entity *handles = xalloc(count * sizeof *handles);
	for (uint32_t i = 0; i < count; ++i) {
		float min[3] = {soa[0][i], soa[1][i], soa[2][i]}, max[3] = {soa[3][i], soa[4][i], soa[5][i]};
		snap(c, min, max);
		for (int k = 0; k < 3; ++k)
			soa[k][i] = min[k], soa[3 + k][i] = max[k];
		each[i] = bounds_status(c, min, max), dense[i] = c->e[slots[i]].dense;
		either |= each[i] != BP_OK && want != BP_OK && each[i] != want;
		want = want == BP_OK ? each[i] : want;
	}
	bp_bounds_arrays arrays = {soa[0], soa[1], soa[2], soa[3], soa[4], soa[5]};
	static const char *const calls[4] = {"", "bp_entities_set_bounds by range", "bp_entities_set_bounds by index",
		"bp_entities_set_bounds by handle"};
	for (int w = 0; w < 2; ++w) {
		bp_world *wd = c->sd[w].w;
		at_world(c, w);
		for (uint32_t i = 0; i < count; ++i)
			handles[i] = c->e[slots[i]].h[w];
		for (uint32_t i = 0; i < count && !variant; ++i) {
			float min[3] = {soa[0][i], soa[1][i], soa[2][i]}, max[3] = {soa[3][i], soa[4][i], soa[5][i]};
			tr(c, w, "\t{\n\t\tconst float min[3] = {%s, %s, %s}, max[3] = {%s, %s, %s};\n\t\tcr_assert_eq(bp_entity_"
				"set_bounds(w, e[%u], min, max), %s);\n\t}\n", F(min[0]), F(min[1]), F(min[2]), F(max[0]), F(max[1]),
				F(max[2]), slots[i], status_name(each[i]));
			expect_status(c, w, bp_entity_set_bounds(wd, handles[i], min, max), each[i], "bp_entity_set_bounds");
		}
		if (!variant)
			continue;
		if (TR(c, w)) {
			fputs("\t{\n", c->tr), tr_arrays(c, soa, count);
			if (variant == 2)
				tr_ints(c, "static const uint32_t dense", dense, 4, count);
			for (uint32_t i = 0; i < count && variant == 3; ++i)
				fprintf(c->tr, "%se[%u]%s", i ? ", " : "\t\tconst bp_entity list[] = {", slots[i], i + 1 < count ? "" : "};\n");
			if (variant == 1)
				fprintf(c->tr, "\t\tcr_assert_eq(bp_entities_set_bounds(w, bp_target_range(%u, %u), &b), %s);\n\t}\n",
					dense[0], count, status_name(want));
			else
				fprintf(c->tr, "\t\tcr_assert_eq(bp_entities_set_bounds(w, bp_target_%s(%u, %s), &b), %s);\n\t}\n",
					variant == 2 ? "indices" : "handles", count, variant == 2 ? "dense" : "list", status_name(want));
		}
		bp_target target = variant == 1 ? bp_target_range(dense[0], count) : variant == 2 ?
			bp_target_indices(count, dense) : bp_target_handles(count, handles);
		bp_status s = bp_entities_set_bounds(wd, target, &arrays);
		if (!either || (s != BP_ERR_NOT_FINITE && s != BP_ERR_INVERTED_BOUNDS))
			expect_status(c, w, s, want, calls[variant]);
	}
	for (uint32_t i = 0; i < count; ++i)
		for (int k = 0; k < 3 && (variant ? want : each[i]) == BP_OK; ++k)
			c->e[slots[i]].min[k] = soa[k][i], c->e[slots[i]].max[k] = soa[3 + k][i];
	free(dense), free(handles), free(each);
}

/// Moves one entity (move, teleport, face) or count of them (move_bulk) through set_bounds. The
/// motion m (a >> 2, 0..15): small steps, large steps (8..11), a teleport (12, 13), a jump by
/// 1e38 to 3e38 (14); teleport takes op's bounds, face puts a point on a face of another box at
/// decimal coordinates, or the box against that face.
static void op_move(ctx *c, const hist_op *op)
{
	bool bulk = op->code == OP_MOVE_BULK, face = op->code == OP_FACE;
	if (c->n < 1u + face)
		return;
	uint64_t rng = op->s;
	int variant = op->a & 3, m = (op->a >> 2) & 15;
	uint32_t first = op->p % c->n, count = bulk ? op->n % 32u + 1 : 1;
	count = count < c->n - (variant == 1 ? first : 0) ? count : c->n - (variant == 1 ? first : 0);
	uint32_t *slots = xalloc(count * sizeof *slots);
	float *soa[6];
	for (int i = 0; i < 6; ++i)
		soa[i] = xalloc(count * sizeof(float));
	for (uint32_t i = 0; i < count; ++i) {
		const ent *x = &c->e[slots[i] = c->dense[bulk && variant != 1 ? rng_next(&rng) % c->n : first + i]];
		float min[3], max[3], unit = c->cfg->profile == 0 ? 1.0f : c->cfg->profile == 1 ? 0.1f :
			fmaxf(x->max[0] - x->min[0], 0.01f);
		int axis = (int)(rng_next(&rng) % (uint64_t)c->dims);
		if (op->code == OP_TELEPORT) {
			memcpy(min, op->min, sizeof min), memcpy(max, op->max, sizeof max);
		} else if (face) {
			const ent *y = &c->e[c->dense[(op->q % c->n == first ? first + 1 : op->q) % c->n]];
			bool high = (op->a >> 4) & 1, box = (op->a >> 5) & 1;
			axis = (op->a >> 2) % c->dims;
			for (int k = 0; k < 3; ++k) {
				float e = box ? x->max[k] - x->min[k] : 0.0f;
				double v = y->min[k] + (double)((op->s >> (8 * k)) & 255) / 255.0 * ((double)y->max[k] - y->min[k]);
				min[k] = fminf(fmaxf((float)(round(v * 10) / 10), y->min[k]), y->max[k]), max[k] = min[k] + e;
				if (k == axis)
					min[k] = high ? y->max[k] : y->min[k] - e, max[k] = high ? y->max[k] + e : y->min[k];
			}
		} else if (m == 12 || m == 13) {
			random_bounds(c, &rng, min, max, rng_next(&rng) % 4 == 0, 1.0f);
		} else {
			for (int k = 0; k < 3; ++k) {
				int64_t r = (int64_t)(rng_next(&rng) % 65536), g = c->cfg->grid;
				float d = m < 8 || m == 15 ? (float)(r % 7 - 3) * unit : m < 12 ? (float)(r % (8 * g + 1) - 4 * g) * unit :
					k == axis ? (r & 1 ? 1.0f : -1.0f) * (r & 2 ? 3e38f : r & 4 ? 1.5e38f : 1e38f) : 0.0f;
				min[k] = x->min[k] + d, max[k] = x->max[k] + d;
			}
		}
		for (int k = 0; k < 3; ++k)
			soa[k][i] = min[k], soa[3 + k][i] = max[k];
	}
	set_bounds(c, slots, soa, count, variant);
	free(slots);
	for (int i = 0; i < 6; ++i)
		free(soa[i]);
}

/// Filters, kinds, user keys or shapes (a & 3), of one entity or of a dense range in one call (a & 4).
static void op_attr(ctx *c, const hist_op *op)
{
	int what = op->a & 3;
	bool bulk = op->a & 4;
	if (!c->n || (what == 3 && c->cfg->periodic))
		return; // periodic worlds: no spheres (the minimum-image sphere test is not spelled out)
	uint32_t first = op->p % c->n, count = bulk ? op->n % 8u + 1 : 1;
	count = count < c->n - first ? count : c->n - first;
	uint64_t rng = op->s, *key = xalloc(count * 8);
	uint64_t *cat = xalloc(count * 8), *mask = xalloc(count * 8);
	bp_kind *kinds = xalloc(count * sizeof *kinds);
	float *f = xalloc(count * 16); // sphere x, y, z and radius, count each
	for (uint32_t i = 0; i < count; ++i) {
		ent *x = &c->e[c->dense[first + i]], y;
		attrs_from(c, (uint32_t)rng_next(&rng), (uint8_t)rng_next(&rng), &y);
		cat[i] = y.category, mask[i] = y.mask, key[i] = y.key, kinds[i] = y.is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
		for (int k = 0; k < 3; ++k) {
			double centre = ((double)x->min[k] + x->max[k]) / 2; // on the grid of 1/8: bounds stay exact
			f[k * count + i] = fabs(centre) < 1e6 ? (float)(floor(centre * 8) / 8) : 0.0f;
		}
		f[3 * count + i] = (float)(rng_next(&rng) % 32) / 8.0f;
		if (what == 0)
			x->category = y.category, x->mask = y.mask;
		else if (what == 1)
			x->is_static = y.is_static;
		else if (what == 2)
			x->key = y.key;
		else if (!bulk)
			x->sphere = rng_next(&rng) & 1;
		else
			for (int k = 0; k < 3; ++k)
				x->sphere = true, x->min[k] = f[k * count + i] - f[3 * count + i], x->max[k] = f[k * count + i] + f[3 * count + i];
	}
	for (int w = 0; w < 2; ++w) {
		bp_world *wd = c->sd[w].w;
		const ent *x = &c->e[c->dense[first]];
		bp_sphere_arrays sp = {f, f + count, f + 2 * count, f + 3 * count};
		bp_status s;
		at_world(c, w);
		if (!bulk) {
			static const char *const calls[4] = {"filter(w, e[%u], %#llx, %#llx)", "kind(w, e[%u], %u)",
				"user_key(w, e[%u], %#llx)", "shape(w, e[%u], %u)"};
			tr(c, w, "\tcr_assert_eq(bp_entity_set_");
			if (TR(c, w))
				what == 0 ? fprintf(c->tr, calls[0], c->dense[first], (unsigned long long)x->category,
					(unsigned long long)x->mask) : what == 2 ?
					fprintf(c->tr, calls[2], c->dense[first], (unsigned long long)x->key) :
					fprintf(c->tr, calls[what], c->dense[first], what == 1 ? (unsigned)kinds[0] : (unsigned)x->sphere);
			tr(c, w, ", BP_OK);\n");
			s = what == 0 ? bp_entity_set_filter(wd, x->h[w], x->category, x->mask) : what == 1 ?
				bp_entity_set_kind(wd, x->h[w], kinds[0]) : what == 2 ? bp_entity_set_user_key(wd, x->h[w], x->key) :
				bp_entity_set_shape(wd, x->h[w], x->sphere ? BP_SHAPE_SPHERE : BP_SHAPE_BOX);
		} else {
			static const char *const calls[4] = {"filters(w, bp_target_range(%u, %u), cat, mask)",
				"kinds(w, bp_target_range(%u, %u), kinds)", "user_keys(w, bp_target_range(%u, %u), keys)",
				"spheres(w, bp_target_range(%u, %u), &sp)"};
			if (TR(c, w)) {
				fputs("\t{\n", c->tr);
				if (what == 0)
					tr_ints(c, "static const uint64_t cat", cat, 8, count), tr_ints(c, "static const uint64_t mask", mask, 8, count);
				for (uint32_t i = 0; i < count && what == 1; ++i)
					fprintf(c->tr, "%s%d%s", i ? ", " : "\t\tstatic const bp_kind kinds[] = {", (int)kinds[i], i + 1 < count ? "" : "};\n");
				if (what == 2)
					tr_ints(c, "static const uint64_t keys", key, 8, count);
				if (what == 3)
					tr_floats(c, "x", f, count), tr_floats(c, "y", f + count, count), tr_floats(c, "z", f + 2 * count, count),
						tr_floats(c, "r", f + 3 * count, count), fputs("\t\tbp_sphere_arrays sp = {x, y, z, r};\n", c->tr);
				fputs("\t\tcr_assert_eq(bp_entities_set_", c->tr), fprintf(c->tr, calls[what], first, count);
				fputs(", BP_OK);\n\t}\n", c->tr);
			}
			bp_target range = bp_target_range(first, count);
			s = what == 0 ? bp_entities_set_filters(wd, range, cat, mask) : what == 1 ?
				bp_entities_set_kinds(wd, range, kinds) : what == 2 ?
				bp_entities_set_user_keys(wd, range, key) : bp_entities_set_spheres(wd, range, &sp);
		}
		expect_status(c, w, s, BP_OK, "a set of filters, kinds, keys or shapes");
	}
	free(cat), free(mask), free(kinds), free(key), free(f);
}

// ---- steps, frames and views ----------------------------------------------------------------

/// A frame's expectation from the model, in the handles of world w.
static frame_exp expectation(const ctx *c, int w, const bp_pair *pairs, size_t count)
{
	frame_exp x = {.n = c->n, .count = count, .pairs = xalloc(count * sizeof(bp_pair)),
		.handles = xalloc(c->n * sizeof(bp_entity)), .keys = xalloc(c->n * 8), .box = xalloc(c->n * sizeof *x.box),
		.filter = xalloc(c->n * sizeof *x.filter), .traits = xalloc(c->n + 1)};
	if (count) // a world view's expectation has no pairs at all
		memcpy(x.pairs, pairs, count * sizeof *pairs);
	for (uint32_t i = 0; i < c->n; ++i) {
		const ent *e = &c->e[c->dense[i]];
		x.handles[i] = e->h[w], x.keys[i] = e->key;
		x.traits[i] = (uint8_t)((e->sphere ? TRAIT_SPHERE : 0) | (e->is_static ? TRAIT_STATIC : 0));
		x.filter[i][0] = e->category, x.filter[i][1] = e->mask;
		for (int a = 0; a < 3; ++a)
			x.box[i][a] = e->min[a], x.box[i][3 + a] = e->max[a];
	}
	return x;
}

static void exp_free(frame_exp *x)
{
	free(x->pairs), free(x->handles), free(x->keys), free(x->box), free(x->filter), free(x->traits);
	*x = (frame_exp){0};
}

static frame_exp *ring_find(side *s, uint64_t frame)
{
	if (frame && s->ring[frame % RING].frame == frame)
		return &s->ring[frame % RING];
	return frame && s->kept.frame == frame ? &s->kept : NULL;
}

static int handle_cmp(bp_entity a, bp_entity b)
{
	return a.index1 != b.index1 ? (a.index1 < b.index1 ? -1 : 1) : (a.generation > b.generation) - (a.generation < b.generation);
}

static int event_cmp(const void *x, const void *y)
{
	const bp_pair_event *a = x, *b = y;
	int k = handle_cmp(a->a, b->a);
	return k ? k : handle_cmp(a->b, b->b);
}

/// A frame's pairs as events (handles in order, with keys), sorted as bp_view_events sorts them.
static bp_pair_event *events_of(const frame_exp *x)
{
	bp_pair_event *ev = xalloc(x->count * sizeof *ev);
	for (size_t i = 0; i < x->count; ++i) {
		uint32_t a = x->pairs[i].lo, b = x->pairs[i].hi, t = a;
		if (handle_cmp(x->handles[a], x->handles[b]) > 0)
			a = b, b = t;
		ev[i] = (bp_pair_event){x->handles[a], x->handles[b], x->keys[a], x->keys[b]};
	}
	qsort(ev, x->count, sizeof *ev, event_cmp);
	return ev;
}

/// began must be the events of `cur` not in `old`, ended those of `old` not in `cur`, each with
/// its own side's keys (all four sorted by event_cmp); `what` names the call in the failure.
static void expect_difference(ctx *c, int w, const char *what, const bp_pair_event *cur, size_t nc,
	const bp_pair_event *old, size_t no, const bp_pair_event *began, size_t nb, const bp_pair_event *ended, size_t ne)
{
	size_t i = 0, j = 0, bi = 0, ei = 0;
	while (i < nc || j < no) {
		int k = i == nc ? 1 : j == no ? -1 : event_cmp(&cur[i], &old[j]);
		const bp_pair_event *want = k < 0 ? &cur[i] : &old[j], *got = k < 0 ? (bi < nb ? &began[bi] : NULL) :
			(ei < ne ? &ended[ei] : NULL);
		if (k && (!got || event_cmp(got, want) || got->key_a != want->key_a || got->key_b != want->key_b))
			failf(c, w, "%s: %s event %zu should be {%u, %#x}-{%u, %#x}", what, k < 0 ? "began" : "ended",
				k < 0 ? bi : ei, want->a.index1, want->a.generation, want->b.index1, want->b.generation);
		bi += k < 0, ei += k > 0, i += k <= 0, j += k >= 0;
	}
	if (bi != nb || ei != ne)
		failf(c, w, "%s: %zu began and %zu ended events, expected %zu and %zu", what, nb, ne, bi, ei);
}

/// The sizes of cur minus old and old minus cur (both sorted by event_cmp).
static void count_difference(const bp_pair_event *cur, size_t nc, const bp_pair_event *old, size_t no, size_t *began,
	size_t *ended)
{
	size_t i = 0, j = 0;
	*began = *ended = 0;
	while (i < nc || j < no) {
		int k = i == nc ? 1 : j == no ? -1 : event_cmp(&cur[i], &old[j]);
		*began += k < 0, *ended += k > 0, i += k <= 0, j += k >= 0;
	}
}

/// Events: began = pairs here and not in the previous published frame, ended the others.
/// Every third frame (1, 4, ...) only counts its events, so the builder of the next one,
/// seeing no reader name them, leaves them to be named on first use; the frame after that
/// follows one whose events were read, and the builder names them: both ways are checked.
static void check_events(ctx *c, int w, const bp_view *v, const frame_exp *x)
{
	size_t nb = 0, ne = 0;
	unsigned long long frame = (unsigned long long)bp_view_frame(v), prev = bp_view_previous_frame(v);
	bp_status s = bp_view_events(v, NULL, 0, &nb, NULL, 0, &ne);
	if (s != BP_OK)
		failf(c, w, "view %llu: bp_view_events (count): %s", frame, status_name(s));
	const bool counts_only = frame % 3 == 1;
	bp_pair_event *began = xalloc(nb * sizeof *began), *ended = xalloc(ne * sizeof *ended);
	if (!counts_only && (s = bp_view_events(v, began, nb, &nb, ended, ne, &ne)) != BP_OK)
		failf(c, w, "view %llu: bp_view_events: %s", frame, status_name(s));
	if (x->world_view ? prev != 0 : prev >= frame || prev < (c->sd[w].published < frame ? c->sd[w].published : 0))
		failf(c, w, "view %llu: previous frame %llu, last published %llu", frame, prev,
			(unsigned long long)c->sd[w].published);
	const frame_exp none = {0}, *px = prev ? ring_find(&c->sd[w], prev) : &none;
	if (px) {
		bp_pair_event *cur = events_of(x), *old = events_of(px);
		char what[64];
		snprintf(what, sizeof what, "view %llu", frame);
		size_t want_began, want_ended;
		count_difference(cur, x->count, old, px->count, &want_began, &want_ended);
		if (counts_only && (nb != want_began || ne != want_ended))
			failf(c, w, "%s: %zu began and %zu ended events counted, expected %zu and %zu", what, nb, ne, want_began,
				want_ended);
		if (!counts_only)
			expect_difference(c, w, what, cur, x->count, old, px->count, began, nb, ended, ne);
		free(cur), free(old);
	}
	free(began), free(ended);
}

// ---- step events (bp_world_set_events, bp_world_events) -----------------------------------

/// The step's pairs selected by `categories`, as events sorted by event_cmp, into *count.
static bp_pair_event *selected_events(const ctx *c, int w, const bp_pair *pairs, size_t count, uint64_t categories,
	size_t *selected)
{
	bp_pair_event *ev = xalloc(count * sizeof *ev);
	size_t n = 0;
	for (size_t i = 0; i < count; ++i) {
		const ent *a = &c->e[c->dense[pairs[i].lo]], *b = &c->e[c->dense[pairs[i].hi]], *t = a;
		if (!((a->category | b->category) & categories))
			continue;
		if (handle_cmp(a->h[w], b->h[w]) > 0)
			a = b, b = t;
		ev[n++] = (bp_pair_event){a->h[w], b->h[w], a->key, b->key};
	}
	qsort(ev, n, sizeof *ev, event_cmp);
	*selected = n;
	return ev;
}

/// After a successful bp_world_step: its events are the change of the selected set since the
/// last step that made events. Without memory for them (an allocation set to fail) they are
/// lost and the last names stay.
static void check_step_events(ctx *c, int w, const bp_pair *pairs, size_t count, bool fault)
{
	side *s = &c->sd[w];
	if (!s->events)
		return;
	size_t now_count, nb = 0, ne = 0;
	bp_pair_event *now = selected_events(c, w, pairs, count, s->events, &now_count);
	bp_status st = bp_world_events(s->w, NULL, 0, &nb, NULL, 0, &ne);
	if (st == BP_ERR_OUT_OF_MEMORY && fault) {
		free(now);
		return;
	}
	if (st != BP_OK)
		failf(c, w, "bp_world_events (count): %s", status_name(st));
	bp_pair_event *began = xalloc(nb * sizeof *began), *ended = xalloc(ne * sizeof *ended);
	if ((st = bp_world_events(s->w, began, nb, &nb, ended, ne, &ne)) != BP_OK)
		failf(c, w, "bp_world_events: %s", status_name(st));
	expect_difference(c, w, "bp_world_events", now, now_count, s->named, s->named_count, began, nb, ended, ne);
	free(s->named), free(began), free(ended);
	s->named = now, s->named_count = now_count;
}

/// A new selection: turned on, from no pairs; from one selection to another, the last names
/// stay; off, none. No events until the next step either way.
static void op_events(ctx *c, const hist_op *op)
{
	static const uint64_t selections[4] = {0, UINT64_MAX, 1, LAYER_2 | LAYER_3};
	const uint64_t categories = selections[op->s >> 8 & 3];
	for (int w = 0; w < 2; ++w) {
		side *s = &c->sd[w];
		tr(c, w, "\tcr_assert_eq(bp_world_set_events(w, %#llx), BP_OK);\n", (unsigned long long)categories);
		expect_status(c, w, bp_world_set_events(s->w, categories), BP_OK, "set_events");
		if (categories == s->events)
			continue;
		if (!categories || !s->events)
			free(s->named), s->named = NULL, s->named_count = 0;
		s->events = categories;
		size_t nb = SIZE_MAX, ne = SIZE_MAX;
		bp_status st = bp_world_events(s->w, NULL, 0, &nb, NULL, 0, &ne);
		if (categories ? st != BP_OK || nb || ne : st != BP_ERR_UNSUPPORTED)
			failf(c, w, "bp_world_events after a new selection: %s, %zu began, %zu ended", status_name(st), nb, ne);
	}
}

// ---- queries of a view against brute force over its snapshot ------------------------------

static int hit_cmp(const void *x, const void *y)
{
	const bp_hit *a = x, *b = y;
	return a->distance < b->distance ? -1 : a->distance > b->distance ? 1 : a->index < b->index ? -1 : a->index > b->index;
}

/// The slab test frame.h states for a box [lo, hi] cast along d: along an axis with d > 0,
/// t from fl(fl(box min - hi) / d) to fl(fl(box max - lo) / d), mirrored for d < 0; an axis
/// with d = 0 needing the boxes to overlap; entry clamped to [0, max_t]. A ray: lo = hi = o.
static bool bf_cast(const float *box, int dims, const float *lo, const float *hi, const float *d, float max_t, float *t)
{
	float enter = 0.0f, leave = max_t;
	for (int a = 0; a < dims; ++a) {
		if (d[a] == 0.0f) {
			if (hi[a] < box[a] || lo[a] > box[3 + a])
				return false;
			continue;
		}
		const bool ahead = d[a] > 0.0f;
		float t1 = (box[ahead ? a : 3 + a] - (ahead ? hi : lo)[a]) / d[a];
		float t2 = (box[ahead ? 3 + a : a] - (ahead ? lo : hi)[a]) / d[a];
		enter = t1 > enter ? t1 : enter;
		leave = t2 < leave ? t2 : leave;
		if (enter > leave)
			return false;
	}
	*t = enter;
	return true;
}

static bool bf_ray(const float *box, int dims, const float *o, const float *d, float max_t, float *t)
{
	return bf_cast(box, dims, o, o, d, max_t, t);
}

/// x moved by whole periods into [0, p): fmod in double, rounded once (frame.h, "Periodic worlds").
static float in_cell(float x, float p)
{
	double r = fmod(x, p);
	r += r < 0 ? p : 0;
	return (float)r < p ? (float)r : 0.0f;
}

/// [lo, hi] in the cell: *lo moved in, *hi that plus the extent; false when the extent
/// reaches the period (the interval covers the torus).
static bool to_cell(float p, float *lo, float *hi)
{
	const double extent = (double)*hi - *lo;
	if (extent >= p)
		return false;
	*lo = in_cell(*lo, p), *hi = (float)((double)*lo + extent);
	return true;
}

/// x moved down by k periods, rounded once.
static float down(float x, int k, float p)
{
	return (float)((double)x - k * (double)p);
}

/// The axis gap from p to [lo, hi]; in a periodic world the least from p in the cell to
/// the interval in the cell moved by -2 .. 2 periods (only -1 .. 1 can matter).
static float bf_gap(const hist_config *cfg, int a, float p, float lo, float hi)
{
	const float period = cfg->period[a];
	if (cfg->periodic && !to_cell(period, &lo, &hi))
		return 0.0f;
	p = cfg->periodic ? in_cell(p, period) : p;
	float best = INFINITY;
	for (int k = cfg->periodic ? -2 : 0; k <= (cfg->periodic ? 2 : 0); ++k) {
		const float l = down(lo, k, period), h = down(hi, k, period);
		float below = l - p, above = p - h;
		float g = (below > 0.0f ? below : 0.0f) + (above > 0.0f ? above : 0.0f);
		best = g < best ? g : best;
	}
	return best;
}

/// Squared distance from p to a box, in the operations frame.h's nearest uses.
static float bf_distance2(const hist_config *cfg, const float *box, int dims, const float *p)
{
	float d2 = 0.0f;
	for (int a = 0; a < dims; ++a) {
		float g = bf_gap(cfg, a, p[a], box[a], box[3 + a]);
		d2 = a == 0 ? g * g : d2 + g * g;
	}
	return d2;
}

/// Whether [lo, hi] meets the box along axis a; in a periodic world both in the cell, as
/// they are or either moved down by 1 or 2 periods.
static bool bf_axis_meets(const hist_config *cfg, int a, float lo, float hi, const float *box)
{
	float bl = box[a], bh = box[3 + a];
	const float p = cfg->period[a];
	if (!cfg->periodic)
		return bl <= hi && lo <= bh;
	if (!to_cell(p, &lo, &hi) || !to_cell(p, &bl, &bh))
		return true;
	for (int k = 0; k <= 2; ++k)
		if ((bl <= down(hi, k, p) && down(lo, k, p) <= bh) || (down(bl, k, p) <= hi && lo <= down(bh, k, p)))
			return true;
	return false;
}

/// What a visitor was handed, in order.
typedef struct visited {
	bp_hit *hits;
	uint32_t *ids;
	size_t count, capacity;
} visited;

static bool visit_hit(bp_hit hit, void *user)
{
	visited *s = user;
	if (s->count < s->capacity)
		s->hits[s->count] = hit;
	return ++s->count < s->capacity + 1;
}

/// Casts box `from` along d: every hit, the hits visited and the closest against brute force.
/// Hits come in (t, index) order, so the all-hits answer is compared whole.
static void check_box_cast(ctx *c, int w, const bp_view *v, const frame_exp *x, const float *from, const float *d,
	float max_t, bp_hit *got, bp_hit *want)
{
	const unsigned long long frame = (unsigned long long)bp_view_frame(v);
	size_t want_n = 0, got_n = 0;
	for (uint32_t i = 0; i < x->n; ++i)
		if (bf_cast(x->box[i], c->dims, from, from + 3, d, max_t, &want[want_n].distance))
			want[want_n++].index = i;
	qsort(want, want_n, sizeof *want, hit_cmp);
	bp_status st = bp_view_cast_box(v, from, from + 3, d, max_t, NULL, got, x->n + 1, &got_n);
	if (st != BP_OK || got_n != want_n || (want_n && memcmp(got, want, want_n * sizeof *got)))
		failf(c, w, "view %llu: box cast along (%a, %a, %a) to %a: %s, %zu hits, brute force %zu (or others)", frame,
			(double)d[0], (double)d[1], (double)d[2], (double)max_t, status_name(st), got_n, want_n);
	visited seen = {.hits = got, .capacity = x->n + 1};
	st = bp_view_visit_cast_box(v, from, from + 3, d, max_t, NULL, visit_hit, &seen);
	if (st != BP_OK || seen.count != want_n || (want_n && memcmp(got, want, want_n * sizeof *got)))
		failf(c, w, "view %llu: box cast visited: %s, %zu hits, brute force %zu (or other hits or order)", frame,
			status_name(st), seen.count, want_n);
	bool found = false;
	st = bp_view_cast_box_closest(v, from, from + 3, d, max_t, NULL, got, &found);
	if (st != BP_OK || found != (want_n > 0) || (found && memcmp(got, want, sizeof *got)))
		failf(c, w, "view %llu: closest of a box cast: %s, %s", frame, status_name(st), found ? "a hit" : "none");
}

static bool visit_id(uint32_t e, void *user)
{
	visited *s = user;
	if (s->count < s->capacity)
		s->ids[s->count] = e;
	return ++s->count < s->capacity + 1;
}

static int id_cmp(const void *x, const void *y)
{
	const uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return (a > b) - (a < b);
}

/// Periodic worlds: the tests a query made since `before` stay within 4n + 64 for a view of
/// n entities (frame.h: one test per node and entity, a scan past 2n + 64): counted work,
/// so a query whose cost grows with the shape's size or position fails here.
static void check_work(ctx *c, int w, const bp_view *v, uint64_t before, uint32_t n, const char *what, int q)
{
	const uint64_t work = bpi_periodic_query_work() - before;
	if (c->cfg->periodic && work > 4ull * n + 64)
		failf(c, w, "view %llu: %s %d made %llu tests, past 4n + 64 for n = %u", (unsigned long long)bp_view_frame(v),
			what, q, (unsigned long long)work, n);
}

/// Sphere and point queries at p against brute force (periodic worlds: radii up to 1e30).
static void check_sphere_point(ctx *c, int w, const bp_view *v, const frame_exp *x, const float *p, uint64_t r, int q,
	uint32_t *want, uint32_t *got)
{
	static const float radii[6] = {0.0f, 0.75f, 3.0f, 40.0f, 1e5f, 1e30f};
	const float radius = radii[(r >> 20) % 6];
	uint32_t want_n = 0, point_n = 0;
	for (uint32_t i = 0; i < x->n; ++i)
		if (bf_distance2(c->cfg, x->box[i], c->dims, p) <= radius * radius)
			want[want_n++] = i;
	size_t got_n = 0;
	uint64_t before = bpi_periodic_query_work();
	bp_status st = bp_view_overlap_sphere(v, p, radius, NULL, got, x->n + 1, &got_n);
	check_work(c, w, v, before, x->n, "sphere", q);
	if (st != BP_OK || got_n != want_n || (want_n && memcmp(got, want, want_n * sizeof *want)))
		failf(c, w, "view %llu: sphere %d at (%a, %a, %a) of radius %a: %s, %zu hits, brute force %u (or others)",
			(unsigned long long)bp_view_frame(v), q, (double)p[0], (double)p[1], (double)p[2], (double)radius,
			status_name(st), got_n, want_n);
	for (uint32_t i = 0; i < x->n; ++i) {
		bool in = true;
		for (int a = 0; a < c->dims; ++a)
			in = in && bf_axis_meets(c->cfg, a, p[a], p[a], x->box[i]);
		if (in)
			want[point_n++] = i;
	}
	before = bpi_periodic_query_work();
	st = bp_view_overlap_point(v, p, NULL, got, x->n + 1, &got_n);
	check_work(c, w, v, before, x->n, "point", q);
	if (st != BP_OK || got_n != point_n || (point_n && memcmp(got, want, point_n * sizeof *want)))
		failf(c, w, "view %llu: point %d at (%a, %a, %a): %s, %zu hits, brute force %u (or others)",
			(unsigned long long)bp_view_frame(v), q, (double)p[0], (double)p[1], (double)p[2], status_name(st), got_n,
			point_n);
}

/// Rays (all hits and the closest), box, point and sphere queries and k nearest from points
/// drawn from the view's own boxes and its frame number, against brute force: hits and order
/// to the bit. In periodic worlds one box reaches past +-1e20 and each query's work is bounded.
/// A filter that names categories and kinds, drawn from the model's own: a walk prunes the
/// nodes whose summaries (tree/bvh.h) no entity under them can pass.
static bp_query_filter named_filter(uint64_t r)
{
	static const uint32_t kinds[4] = {BP_QUERY_ALL_KINDS, BP_QUERY_DYNAMIC, BP_QUERY_STATIC, BP_QUERY_ALL_KINDS};
	bp_query_filter f = bp_query_filter_default();
	f.category = hist_category((int)(r >> 20 & 15));
	f.mask = hist_mask((int)(r >> 24 & 15));
	f.kinds = kinds[r >> 28 & 3];
	return f;
}

/// Whether dense entity i of the frame passes f, by the rule of bp_query_filter.
static bool passes(const frame_exp *x, uint32_t i, const bp_query_filter *f)
{
	const bool any = f->category == UINT64_MAX && f->mask == UINT64_MAX;
	const uint32_t kind = x->traits[i] & TRAIT_STATIC ? BP_QUERY_STATIC : BP_QUERY_DYNAMIC;
	return (any || ((f->category & x->filter[i][1]) && (x->filter[i][0] & f->mask))) && (f->kinds & kind);
}

/// The sight lines as box casts of boxes of no extent, and the 3 nearest of their origins,
/// in batches with a filter each: the casts answer as the rays did (`hits`, checked), the
/// nearest as brute force; `want` has room for every entity.
static void check_point_batches(ctx *c, int w, const bp_view *v, const frame_exp *x, const bp_ray *rays,
	int count, const bp_query_filter *each, const bp_hit *hits, bp_hit *want)
{
	enum { K = 3 };
	const unsigned long long frame = (unsigned long long)bp_view_frame(v);
	bp_box_cast casts[4];
	float points[3 * 4];
	for (int i = 0; i < count; ++i) {
		memcpy(casts[i].min, rays[i].origin, sizeof casts[i].min);
		memcpy(casts[i].max, rays[i].origin, sizeof casts[i].max);
		memcpy(casts[i].dir, rays[i].dir, sizeof casts[i].dir);
		casts[i].max_t = rays[i].max_t;
		memcpy(points + 3 * i, rays[i].origin, 3 * sizeof *points);
	}
	bp_hit got[4 * K];
	size_t got_n[4];
	bp_status st = bp_view_cast_boxes_closest_each(v, casts, (size_t)count, each, got);
	if (st != BP_OK || (count && memcmp(got, hits, (size_t)count * sizeof *got)))
		failf(c, w, "view %llu: a batch of %d box casts of no extent: %s, or answers other than the rays'", frame,
			count, status_name(st));
	st = bp_view_nearest_points_each(v, points, (size_t)count, K, each, got, got_n);
	for (int i = 0; i < count && st == BP_OK; ++i) {
		size_t m = 0;
		for (uint32_t e = 0; e < x->n; ++e)
			if (e != each[i].exclude)
				want[m++] = (bp_hit){e, bf_distance2(c->cfg, x->box[e], c->dims, points + 3 * i)};
		qsort(want, m, sizeof *want, hit_cmp);
		m = m < K ? m : K;
		for (size_t j = 0; j < m; ++j)
			want[j].distance = sqrtf(want[j].distance);
		if (got_n[i] != m || memcmp(got + (size_t)i * K, want, m * sizeof *want))
			failf(c, w, "view %llu: point %d of a nearest batch: %zu hits, brute force %zu (or others)", frame, i,
				got_n[i], m);
	}
	if (st != BP_OK)
		failf(c, w, "view %llu: a nearest batch of %d points: %s", frame, count, status_name(st));
}

static void check_queries(ctx *c, int w, const bp_view *v, const frame_exp *x)
{
	unsigned long long frame = (unsigned long long)bp_view_frame(v);
	if (!x->n)
		return;
	bp_hit *got = xalloc((x->n + 1) * sizeof *got), *want = xalloc((x->n + 1) * sizeof *want);
	uint64_t r = frame * 0x9E3779B97F4A7C15ull + x->n;
	bp_ray rays[4];
	bp_hit closest[4], past_first[4]; // the first hit, and the first past it (when it is left out)
	int ray_count = 0;
	for (int q = 0; q < 4; ++q) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		const float *from = x->box[(r >> 33) % x->n], *to = x->box[(r >> 13) % x->n];
		float o[3], d[3], p[3];
		// Now and then one axis of ray 0 far shorter or longer than the others: its t run past
		// the other axes' by many binades, up to about FLT_MAX and past it, its 1 / d
		// subnormal or infinite.
		static const float scales[8] = {0x1p-100f, 0x1p-130f, 0x1p100f, 0x1p127f, 0x1p-126f, 0x1p-127f, 0x1p-128f,
			0x1.8p-127f};
		const float scale = q == 0 && (r >> 20) % 4 == 0 ? scales[(r >> 22) % 8] : 1.0f;
		// Or ray 1 reaches the target's far corner plane at about FLT_MAX on one axis (d that
		// distance over FLT_MAX), the others crawling: boxes with a face there enter where a
		// quotient rounds to FLT_MAX and a product by 1 / d may overflow.
		const bool at_max = q == 1 && (r >> 20) % 4 == 0;
		const int odd_axis = (int)((r >> 24) % (uint64_t)c->dims); // an axis the world has
		for (int a = 0; a < 3; ++a) {
			o[a] = from[a]; // a corner: on faces, and inside other boxes
			d[a] = a == (int)(r % 3) && q == 3 ? 0.0f : to[3 + a] - from[a];
			d[a] *= a == odd_axis ? scale : 1.0f;
			if (at_max)
				d[a] = a == odd_axis ? (float)((double)d[a] / FLT_MAX) : d[a] * 0x1p-126f;
			p[a] = 0.5f * from[a] + 0.5f * to[3 + a];
		}
		if (!isfinite(d[0]) || !isfinite(d[1]) || !isfinite(d[2]) || !isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]))
			continue;
		const float max_t = q == 1 && !at_max ? 0.5f : INFINITY;
		size_t want_n = 0, got_n = 0;
		for (uint32_t i = 0; i < x->n; ++i)
			if (bf_ray(x->box[i], c->dims, o, d, max_t, &want[want_n].distance))
				want[want_n++].index = i;
		qsort(want, want_n, sizeof *want, hit_cmp);
		bp_status st = bp_view_cast_ray(v, o, d, max_t, NULL, got, x->n + 1, &got_n);
		if (st != BP_OK || got_n != want_n || (want_n && memcmp(got, want, want_n * sizeof *got)))
			failf(c, w, "view %llu: ray %d from (%a, %a, %a) along (%a, %a, %a) to %a: %s, %zu hits, brute force %zu "
				"(or other hits or order); first %u at %a against %u at %a", frame, q, (double)o[0], (double)o[1],
				(double)o[2], (double)d[0], (double)d[1], (double)d[2], (double)max_t, status_name(st), got_n, want_n,
				got_n ? got[0].index : UINT32_MAX, got_n ? (double)got[0].distance : 0.0,
				want_n ? want[0].index : UINT32_MAX, want_n ? (double)want[0].distance : 0.0);
		rays[ray_count] = (bp_ray){{o[0], o[1], o[2]}, {d[0], d[1], d[2]}, max_t};
		past_first[ray_count] = want_n > 1 ? want[1] : (bp_hit){BP_HIT_NONE, INFINITY};
		closest[ray_count++] = want_n ? want[0] : (bp_hit){BP_HIT_NONE, INFINITY};
		visited seen = {.hits = got, .capacity = x->n + 1};
		st = bp_view_visit_cast_ray(v, o, d, max_t, NULL, visit_hit, &seen);
		if (st != BP_OK || seen.count != want_n || (want_n && memcmp(got, want, want_n * sizeof *got)))
			failf(c, w, "view %llu: ray %d visited: %s, %zu hits, brute force %zu (or other hits or order)", frame, q,
				status_name(st), seen.count, want_n);
		bool found = false;
		st = bp_view_cast_ray_closest(v, o, d, max_t, NULL, got, &found);
		if (st != BP_OK || found != (want_n > 0) || (found && memcmp(got, want, sizeof *got)))
			failf(c, w, "view %llu: closest of ray %d: %s, %s", frame, q, status_name(st), found ? "a hit" : "none");
		const bp_query_filter named = named_filter(r);
		size_t first_named = 0;
		while (first_named < want_n && !passes(x, want[first_named].index, &named))
			++first_named;
		st = bp_view_cast_ray_closest(v, o, d, max_t, &named, got, &found);
		if (st != BP_OK || found != (first_named < want_n) || (found && memcmp(got, &want[first_named], sizeof *got)))
			failf(c, w, "view %llu: closest of ray %d through categories %#llx/%#llx, kinds %u: %s, %s", frame, q,
				(unsigned long long)named.category, (unsigned long long)named.mask, named.kinds, status_name(st),
				found ? "a hit" : "none");
		if (want_n) { // the closest left out by handle, as by dense index
			bp_query_filter by_handle = bp_query_filter_default(), by_index = by_handle;
			by_handle.exclude_entity = x->handles[want[0].index];
			by_index.exclude = want[0].index;
			bp_hit h[2];
			bool f[2];
			bp_status s2[2] = {bp_view_cast_ray_closest(v, o, d, max_t, &by_handle, &h[0], &f[0]),
				bp_view_cast_ray_closest(v, o, d, max_t, &by_index, &h[1], &f[1])};
			if (s2[0] != BP_OK || s2[1] != BP_OK || f[0] != f[1] || (f[0] && (h[0].index != h[1].index ||
				h[0].index == want[0].index)))
				failf(c, w, "view %llu: ray %d leaving out entity %u by handle and by index: %s %s, %s %s", frame, q,
					want[0].index, status_name(s2[0]), f[0] ? "a hit" : "none", status_name(s2[1]), f[1] ? "a hit" : "none");
		}
		check_box_cast(c, w, v, x, from, d, max_t, got, want);
		float lo[3], hi[3];
		for (int a = 0; a < 3; ++a) {
			lo[a] = from[a] < to[3 + a] ? from[a] : to[3 + a];
			hi[a] = from[a] < to[3 + a] ? to[3 + a] : from[a];
			if (q == 2 && c->cfg->periodic && a == (int)(r % 3)) // huge: covers the torus on this axis
				lo[a] = fminf(lo[a], -1e20f), hi[a] = fmaxf(hi[a], 1e20f);
		}
		uint32_t *ids = (uint32_t *)want, *got_ids = (uint32_t *)got, box_n = 0;
		for (uint32_t i = 0; i < x->n; ++i) {
			bool in = true;
			for (int a = 0; a < c->dims; ++a)
				in = in && bf_axis_meets(c->cfg, a, lo[a], hi[a], x->box[i]);
			if (in)
				ids[box_n++] = i;
		}
		uint64_t before = bpi_periodic_query_work();
		st = bp_view_overlap_box(v, lo, hi, NULL, got_ids, x->n + 1, &got_n);
		check_work(c, w, v, before, x->n, "box", q);
		if (st != BP_OK || got_n != box_n || (box_n && memcmp(got_ids, ids, box_n * sizeof *ids)))
			failf(c, w, "view %llu: box query %d: %s, %zu hits, brute force %u (or others)", frame, q, status_name(st),
				got_n, box_n);
		// The same box through a filter of all bits (which sees every entity) that tests
		// spheres as balls (double, as shapes.c).
		bp_query_filter balls = bp_query_filter_default();
		balls.spheres_as_balls = true;
		uint32_t ball_n = 0;
		for (uint32_t k = 0; k < box_n; ++k) {
			const uint32_t i = ids[k];
			bool in = true;
			if (x->traits[i] & TRAIT_SPHERE) {
				double centre[3], radius = INFINITY, d2 = 0.0;
				for (int a = 0; a < c->dims; ++a) {
					centre[a] = 0.5 * ((double)x->box[i][a] + x->box[i][3 + a]);
					radius = fmin(radius, 0.5 * ((double)x->box[i][3 + a] - x->box[i][a]));
					const double g = centre[a] < lo[a] ? lo[a] - centre[a] : centre[a] > hi[a] ? centre[a] - hi[a] : 0.0;
					d2 += g * g;
				}
				in = d2 <= radius * radius;
			}
			if (in)
				ids[ball_n++] = i; // in place: ids[k] is read before
		}
		before = bpi_periodic_query_work();
		st = bp_view_overlap_box(v, lo, hi, &balls, got_ids, x->n + 1, &got_n);
		check_work(c, w, v, before, x->n, "box of balls", q);
		if (st != BP_OK || got_n != ball_n || (ball_n && memcmp(got_ids, ids, ball_n * sizeof *ids)))
			failf(c, w, "view %llu: box query %d of balls: %s, %zu hits, brute force %u (or others)", frame, q,
				status_name(st), got_n, ball_n);
		box_n = 0; // the plain box again, for the visitor
		for (uint32_t i = 0; i < x->n; ++i) {
			bool in = true;
			for (int a = 0; a < c->dims; ++a)
				in = in && bf_axis_meets(c->cfg, a, lo[a], hi[a], x->box[i]);
			if (in)
				ids[box_n++] = i;
		}
		visited in_box = {.ids = got_ids, .capacity = x->n + 1};
		before = bpi_periodic_query_work();
		st = bp_view_visit_overlap_box(v, lo, hi, NULL, visit_id, &in_box);
		check_work(c, w, v, before, x->n, "visited box", q);
		if (in_box.count <= in_box.capacity)
			qsort(got_ids, in_box.count, sizeof *got_ids, id_cmp);
		if (st != BP_OK || in_box.count != box_n || (box_n && memcmp(got_ids, ids, box_n * sizeof *ids)))
			failf(c, w, "view %llu: box %d visited: %s, %zu entities, brute force %u (or others)", frame, q,
				status_name(st), in_box.count, box_n);
		uint32_t named_n = 0;
		for (uint32_t k = 0; k < box_n; ++k)
			if (passes(x, ids[k], &named))
				ids[named_n++] = ids[k];
		st = bp_view_overlap_box(v, lo, hi, &named, got_ids, x->n + 1, &got_n);
		if (st != BP_OK || got_n != named_n || (named_n && memcmp(got_ids, ids, named_n * sizeof *ids)))
			failf(c, w, "view %llu: box query %d through categories %#llx/%#llx, kinds %u: %s, %zu hits, brute force "
				"%u (or others)", frame, q, (unsigned long long)named.category, (unsigned long long)named.mask,
				named.kinds, status_name(st), got_n, named_n);
		uint32_t k = 1 + (uint32_t)(r >> 40) % 9;
		for (uint32_t i = 0; i < x->n; ++i)
			want[i] = (bp_hit){i, bf_distance2(c->cfg, x->box[i], c->dims, p)};
		qsort(want, x->n, sizeof *want, hit_cmp);
		want_n = k < x->n ? k : x->n;
		for (size_t i = 0; i < want_n; ++i)
			want[i].distance = sqrtf(want[i].distance);
		before = bpi_periodic_query_work();
		st = bp_view_nearest(v, p, k, NULL, got, &got_n);
		check_work(c, w, v, before, x->n, "nearest", q);
		if (st != BP_OK || got_n != want_n || memcmp(got, want, want_n * sizeof *got))
			failf(c, w, "view %llu: %u nearest: %s, %zu, brute force %zu (or others, or another order)", frame, k,
				status_name(st), got_n, want_n);
		size_t named_k = 0;
		for (uint32_t i = 0; i < x->n && named_k < k; ++i)
			if (passes(x, want[i].index, &named))
				want[named_k++] = (bp_hit){want[i].index, i < want_n ? want[i].distance : sqrtf(want[i].distance)};
		st = bp_view_nearest(v, p, k, &named, got, &got_n);
		if (st != BP_OK || got_n != named_k || memcmp(got, want, named_k * sizeof *got))
			failf(c, w, "view %llu: %u nearest through categories %#llx/%#llx, kinds %u: %s, %zu, brute force %zu (or "
				"others, or another order)", frame, k, (unsigned long long)named.category, (unsigned long long)named.mask,
				named.kinds, status_name(st), got_n, named_k);
		check_sphere_point(c, w, v, x, p, r, q, (uint32_t *)want, (uint32_t *)got);
	}
	bp_hit batch[4];
	bp_status st = bp_view_cast_rays_closest(v, rays, (size_t)ray_count, NULL, batch);
	if (st != BP_OK || (ray_count && memcmp(batch, closest, (size_t)ray_count * sizeof *batch)))
		failf(c, w, "view %llu: a batch of %d rays: %s, or answers other than brute force's", frame, ray_count,
			status_name(st));
	// A filter each: the odd rays leave out their first hit, and find the one past it.
	bp_query_filter each[4];
	for (int i = 0; i < ray_count; ++i) {
		each[i] = bp_query_filter_default();
		each[i].exclude = i % 2 && closest[i].index != BP_HIT_NONE ? closest[i].index : BP_QUERY_NO_EXCLUDE;
	}
	st = bp_view_cast_rays_closest_each(v, rays, (size_t)ray_count, each, batch);
	int wrong = -1;
	for (int i = 0; i < ray_count && st == BP_OK && wrong < 0; ++i) {
		const bp_hit want_i = each[i].exclude == BP_QUERY_NO_EXCLUDE ? closest[i] : past_first[i];
		if (batch[i].index != want_i.index || memcmp(&batch[i].distance, &want_i.distance, sizeof want_i.distance))
			wrong = i;
	}
	if (st != BP_OK || wrong >= 0)
		failf(c, w, "view %llu: a batch of %d rays with a filter each: %s; ray %d differs from brute force", frame,
			ray_count, status_name(st), wrong);
	check_point_batches(c, w, v, x, rays, ray_count, each, batch, want);
	free(got), free(want);
}

/// Every handle of the view leads to its dense index; the next generation of a live
/// slot, a slot past every handle and the null handle to BP_ERR_STALE_HANDLE.
static void check_handles(ctx *c, int w, const bp_view *v, const frame_exp *x)
{
	unsigned long long frame = (unsigned long long)bp_view_frame(v);
	uint32_t dense = 0;
	for (uint32_t i = 0; i < x->n; ++i) {
		bp_status s = bp_view_dense_index(v, x->handles[i], &dense);
		if (s != BP_OK || dense != i)
			failf(c, w, "view %llu: dense index of entity {%u, %u}: %s, %u, expected %u", frame, x->handles[i].index1,
				x->handles[i].generation, status_name(s), dense, i);
		bp_entity_def def;
		s = bp_view_entity_get(v, i, &def);
		bool same = s == BP_OK && def.category == x->filter[i][0] && def.mask == x->filter[i][1] &&
			    def.user_key == x->keys[i] && def.kind == (x->traits[i] & TRAIT_STATIC ? BP_KIND_STATIC : BP_KIND_DYNAMIC) &&
			    def.shape == (x->traits[i] & TRAIT_SPHERE ? BP_SHAPE_SPHERE : BP_SHAPE_BOX);
		for (int a = 0; a < c->dims; ++a)
			same = same && !memcmp(&def.min[a], &x->box[i][a], 4) && !memcmp(&def.max[a], &x->box[i][3 + a], 4);
		if (!same)
			failf(c, w, "view %llu: entity %u's settings (%s) differ from the model's at submit: category %llx/%llx "
				"mask %llx/%llx key %llx/%llx kind %d/%d shape %d/%d min x %a/%a", frame, i, status_name(s),
				(unsigned long long)def.category, (unsigned long long)x->filter[i][0], (unsigned long long)def.mask,
				(unsigned long long)x->filter[i][1], (unsigned long long)def.user_key, (unsigned long long)x->keys[i],
				(int)def.kind, x->traits[i] & TRAIT_STATIC ? 1 : 0, (int)def.shape, x->traits[i] & TRAIT_SPHERE ? 1 : 0,
				(double)def.min[0], (double)x->box[i][0]);
		bp_entity next = {x->handles[i].index1, x->handles[i].generation + 1};
		if (i < 16 && bp_view_dense_index(v, next, &dense) != BP_ERR_STALE_HANDLE)
			failf(c, w, "view %llu: the next generation of entity {%u, %u} found", frame, next.index1, next.generation);
	}
	const bp_entity none[2] = {{0, 0}, {UINT32_MAX, 1}};
	for (int k = 0; k < 2; ++k)
		if (bp_view_dense_index(v, none[k], &dense) != BP_ERR_STALE_HANDLE)
			failf(c, w, "view %llu: handle {%u, %u} found", frame, none[k].index1, none[k].generation);
}

/// A view against its expectation: entities, keys, pairs, colliding, every neighbour list, events.
static void check_view(ctx *c, int w, const bp_view *v, const frame_exp *x)
{
	char buf[200];
	size_t count, deg;
	const bp_pair *pairs = bp_view_pairs(v, &count);
	const uint32_t *nb;
	unsigned long long frame = (unsigned long long)bp_view_frame(v);
	if (bp_view_entity_count(v) != x->n || bp_view_dims(v) != c->dims)
		failf(c, w, "view %llu: %u entities, expected %u", frame, bp_view_entity_count(v), x->n);
	if (x->n && (memcmp(bp_view_entities(v), x->handles, x->n * sizeof(bp_entity)) ||
					memcmp(bp_view_user_keys(v), x->keys, x->n * 8)))
		failf(c, w, "view %llu: handles or user keys differ from the snapshot", frame);
	if (pairs_differ(pairs, count, x->pairs, x->count, buf, sizeof buf))
		failf(c, w, "view %llu against the oracle: %s", frame, buf);
	uint32_t *degree = xalloc((x->n + 1) * 4), *at = xalloc((x->n + 1) * 4), *adj = xalloc(2 * x->count * 4);
	for (size_t i = 0; i < x->count; ++i)
		++degree[x->pairs[i].lo], ++degree[x->pairs[i].hi];
	for (uint32_t i = 1; i <= x->n; ++i)
		at[i] = at[i - 1] + degree[i - 1];
	for (size_t i = 0; i < x->count; ++i) // lists come out ascending: pairs are sorted by (lo, hi)
		adj[at[x->pairs[i].lo]++] = x->pairs[i].hi, adj[at[x->pairs[i].hi]++] = x->pairs[i].lo;
	for (uint32_t i = 0; i < x->n; ++i) {
		bp_status s = bp_view_neighbours(v, i, &nb, &deg);
		if (s == BP_ERR_OUT_OF_MEMORY && c->sd[w].build_limit) // the lists count against the frames' limit
			break;
		if (s != BP_OK || deg != degree[i] || (deg && memcmp(nb, adj + at[i] - deg, deg * 4)))
			failf(c, w, "view %llu: bp_view_neighbours(%u): %s, %zu neighbours, expected %u", frame, i, status_name(s),
				deg, degree[i]);
	}
	if (bp_view_neighbours(v, x->n, &nb, &deg) != BP_ERR_OUT_OF_RANGE)
		failf(c, w, "view %llu: bp_view_neighbours(%u) of %u entities accepted", frame, x->n, x->n);
	for (size_t i = 0; i < x->count && i < 8; ++i)
		if (!bp_view_colliding(v, x->pairs[i].hi, x->pairs[i].lo))
			failf(c, w, "view %llu: colliding(%u, %u) false", frame, x->pairs[i].hi, x->pairs[i].lo);
	free(degree), free(at), free(adj);
	check_events(c, w, v, x);
	check_queries(c, w, v, x);
	check_handles(c, w, v, x);
}

static void tr_view(const ctx *c, int w, const bp_pair *pairs, size_t count)
{
	tr_pairs(c, w, "bp_view_pairs(v, &count)", pairs, count, false);
	tr(c, w, "\tfor (uint32_t i = 0; i < bp_view_entity_count(v); ++i) {\n\t\tconst uint32_t *nb;\n\t\tsize_t degree;"
		"\n\t\tcr_assert_eq(bp_view_neighbours(v, i, &nb, &degree), BP_OK);\n\t}\n");
}

static void release_held(ctx *c, int w, int slot)
{
	side *s = &c->sd[w];
	if (!s->held[slot])
		return;
	check_view(c, w, s->held[slot], &s->held_exp[slot]);
	tr(c, w, "\tcr_assert_eq(bp_view_release(held[%d]), BP_OK);\n\theld[%d] = NULL;\n", slot, slot);
	bp_status st = bp_view_release(s->held[slot]);
	if (st != BP_OK)
		failf(c, w, "bp_view_release: %s", status_name(st));
	s->held[slot] = NULL;
	exp_free(&s->held_exp[slot]);
}

/// Keeps v in a slot (releasing the view there) with a copy of its expectation.
static void hold(ctx *c, int w, int slot, bp_view *v, const frame_exp *x)
{
	frame_exp copy = *x;
	copy.pairs = xalloc(x->count * sizeof(bp_pair)), copy.handles = xalloc(x->n * sizeof(bp_entity));
	copy.keys = xalloc(x->n * 8), copy.box = xalloc(x->n * sizeof *copy.box), copy.traits = xalloc(x->n + 1);
	copy.filter = xalloc(x->n * sizeof *copy.filter);
	memcpy(copy.traits, x->traits, x->n), memcpy(copy.filter, x->filter, x->n * sizeof *copy.filter);
	memcpy(copy.pairs, x->pairs, x->count * sizeof(bp_pair)), memcpy(copy.keys, x->keys, x->n * 8);
	memcpy(copy.handles, x->handles, x->n * sizeof(bp_entity)), memcpy(copy.box, x->box, x->n * sizeof *copy.box);
	release_held(c, w, slot);
	c->sd[w].held[slot] = v, c->sd[w].held_exp[slot] = copy;
	tr(c, w, "\theld[%d] = v;\n", slot);
}

/// A view just checked: kept in a slot with op->a & 4, else released.
static void hold_or_release(ctx *c, int w, const hist_op *op, bp_view *v, const frame_exp *x)
{
	if (op->a & 4) {
		hold(c, w, (op->a >> 3) % HELD, v, x);
		return;
	}
	tr(c, w, "\tcr_assert_eq(bp_view_release(v), BP_OK);\n");
	const bp_status st = bp_view_release(v);
	if (st != BP_OK)
		failf(c, w, "bp_view_release: %s", status_name(st));
}

/// Waits for a submit not waited for yet.
static void drain(ctx *c, int w)
{
	side *s = &c->sd[w];
	if (!s->pending)
		return;
	bp_status st = bp_frame_wait(s->w, s->submitted);
	tr(c, w, "\tcr_assert_eq(bp_frame_wait(w, %llu), %s);\n", (unsigned long long)s->submitted, status_name(st));
	if (st != s->pending_status && !(st == BP_ERR_UNSUPPORTED && s->pending_unsupported) &&
		!(st == BP_ERR_OUT_OF_MEMORY && s->pending_limited))
		failf(c, w, "bp_frame_wait(%llu): %s", (unsigned long long)s->submitted, status_name(st));
	s->published = st == BP_OK ? s->submitted : s->published, s->pending = false;
}

/// A world step (kind 0), a frame step (1) or a submit not waited for (2), on both worlds; op->k
/// may make the (k/4 % 160 + 1)-th allocation of the call on world a & 1 fail.
static void op_step(ctx *c, const hist_op *op, int kind)
{
	static const char *const names[3] = {"bp_world_step", "bp_frame_step", "bp_frame_submit"};
	uint32_t fault = kind == 2 || op->k % 4 ? 0 : op->k / 4u % 160u + 1;
	size_t count, got_count;
	bp_pair *want = oracle(c, &count);
	bp_status expected = step_expected(c);
	char buf[200];
	for (int w = 0; w < 2 && fault; ++w)
		drain(c, w); // no build may run while an allocation is set to fail
	for (int w = 0; w < 2; ++w) {
		side *s = &c->sd[w];
		uint32_t at = w == (op->a & 1) ? fault : 0;
		uint64_t frame = 0;
		bp_view *v = NULL;
		frame_exp x = expectation(c, w, want, count);
		at_world(c, w);
		if (at)
			tr(c, w, "\tsnip_fail_at = snip_allocs + %u; // allocation %u of the call fails\n", at, at);
		tr(c, w, kind == 0 ? "\ts = bp_world_step(w);\n" : kind == 1 ? "\tv = NULL;\n\ts = bp_frame_step(w, &v);\n" :
			"\ts = bp_frame_submit(w, NULL);\n");
		if (kind)
			s->build_limit = s->limit;
		arm(at);
		bp_status st = kind == 0 ? bp_world_step(s->w) : kind == 1 ? bp_frame_step(s->w, &v) : bp_frame_submit(s->w, &frame);
		arm(0);
		s->pending &= kind != 1; // a frame step waited for a later frame: a pending one was built or replaced
		tr(c, w, "%s\tcr_assert_eq(s, %s);\n", at ? "\tsnip_fail_at = 0;\n" : "", status_name(st));
		if (kind == 2) { // its build is checked when waited for, or acquired
			if (st != BP_OK || frame <= s->submitted)
				failf(c, w, "bp_frame_submit: %s, frame %llu after %llu", status_name(st), (unsigned long long)frame,
					(unsigned long long)s->submitted);
			s->submitted = frame, s->pending = true, s->pending_status = expected;
			s->pending_unsupported = unsupported_allowed(c, w, BP_ERR_UNSUPPORTED);
			s->pending_limited = s->limit != 0;
		} else if (st != BP_OK) {
			const bp_pair *got = bp_world_pairs(s->w, &got_count);
			if ((!((at || s->limit) && st == BP_ERR_OUT_OF_MEMORY) && st != expected && !unsupported_allowed(c, w, st)) ||
				v)
				failf(c, w, "%s: %s (%s), expected %s", names[kind], status_name(st), bp_world_last_error(s->w),
					status_name(expected));
			if (!kind && pairs_differ(got, got_count, s->last, s->last_count, buf, sizeof buf))
				failf(c, w, "a failed step (%s) did not keep the previous pairs: %s", status_name(st), buf);
		} else if (expected != BP_OK || (kind == 1 && bp_view_frame(v) <= s->submitted)) {
			failf(c, w, "%s returned BP_OK, expected %s (frame %llu after %llu)", names[kind], status_name(expected),
				(unsigned long long)(v ? bp_view_frame(v) : 0), (unsigned long long)s->submitted);
		} else if (kind == 0) {
			const bp_pair *got = bp_world_pairs(s->w, &got_count);
			bp_frame_stats stats = bp_world_stats(s->w);
			tr_pairs(c, w, "bp_world_pairs(w, &count)", want, count, !s->canonical);
			bp_pair *seen = xalloc(got_count * sizeof *seen); // in the world's order
			if (got_count)
				memcpy(seen, got, got_count * sizeof *seen);
			if (!s->canonical) { // the oracle's order, and the paths that merge must already give it
				bp_pair *sorted = xalloc(got_count * sizeof *sorted);
				if (got_count)
					memcpy(sorted, got, got_count * sizeof *sorted);
				bp_pairs_sort(sorted, got_count);
				if (stats.path != BP_PATH_FULL && pairs_differ(got, got_count, sorted, got_count, buf, sizeof buf))
					failf(c, w, "bp_world_step: a step that is not full left its pairs unsorted: %s", buf);
				if (pairs_differ(sorted, got_count, want, count, buf, sizeof buf))
					failf(c, w, "bp_world_step against the oracle: %s", buf);
				free(sorted);
			} else if (pairs_differ(got, got_count, want, count, buf, sizeof buf)) {
				failf(c, w, "bp_world_step against the oracle: %s", buf);
			}
			if (stats.entity_count != c->n || stats.pair_count != count || stats.algorithm == BP_ALGO_AUTO)
				failf(c, w, "stats: %u entities, %llu pairs", stats.entity_count, (unsigned long long)stats.pair_count);
			free(s->last);
			s->last = seen, s->last_count = got_count;
			check_step_events(c, w, want, count, at != 0);
			++c->steps;
		} else {
			frame = bp_view_frame(v), ++c->steps;
			s->submitted = frame;
			tr_view(c, w, want, count);
			check_view(c, w, v, &x);
			s->published = frame;
			hold_or_release(c, w, op, v, &x);
		}
		if (frame) {
			frame_exp *slot = &s->ring[frame % RING];
			if (slot->frame && slot->frame == s->published && slot->frame != frame) {
				exp_free(&s->kept); // the published frame stays findable however many fail after it
				s->kept = *slot;
			} else {
				exp_free(slot);
			}
			x.frame = frame, *slot = x;
		} else {
			exp_free(&x);
		}
	}
	free(want);
}

/// Whether op's world view fails an allocation on world w: on world a & 1, one op in eight.
static uint32_t view_fault(const hist_op *op, int w)
{
	return w == (op->a & 1) && op->s % 8 == 3 ? op->s / 8 % 4 + 1 : 0;
}

/// A world view of world w (bp_world_view) after its world step: the model's entities and
/// queries, no pairs and no events; held in a slot with op->a & 4, as frames are. A frame
/// submitted before is built by the view; with view_fault an allocation of the view fails.
static void world_view(ctx *c, int w, const hist_op *op)
{
	side *s = &c->sd[w];
	bp_view *v = NULL;
	const uint32_t at = view_fault(op, w);
	for (int other = 0; other < 2 && at; ++other)
		drain(c, other); // no build of either world may run while an allocation is set to fail
	if (at)
		tr(c, w, "\tsnip_fail_at = snip_allocs + %u; // allocation %u of the call fails\n", at, at);
	tr(c, w, "\tv = NULL;\n\ts = bp_world_view(w, &v);\n");
	s->build_limit = s->limit;
	arm(at);
	bp_status st = bp_world_view(s->w, &v);
	arm(0);
	tr(c, w, "%s\tcr_assert_eq(s, %s);\n", at ? "\tsnip_fail_at = 0;\n" : "", status_name(st));
	drain(c, w); // the view built it: its wait returns at once, with the build's status
	if (st != BP_OK) {
		if (st != BP_ERR_OUT_OF_MEMORY || !(at || s->limit) || v)
			failf(c, w, "bp_world_view: %s (%s)", status_name(st), bp_world_last_error(s->w));
		return;
	}
	const uint64_t number = bp_view_frame(v);
	if (number <= s->submitted)
		failf(c, w, "bp_world_view: number %llu after %llu", (unsigned long long)number,
			(unsigned long long)s->submitted);
	s->submitted = number;
	frame_exp x = expectation(c, w, NULL, 0);
	x.world_view = true;
	tr_view(c, w, NULL, 0);
	check_view(c, w, v, &x);
	hold_or_release(c, w, op, v, &x);
	exp_free(&x);
}

/// Acquires the latest frame of each world (after waiting for a submit) and holds it.
static void op_acquire(ctx *c, const hist_op *op)
{
	for (int w = 0; w < 2; ++w) {
		side *s = &c->sd[w];
		bp_view *v = NULL;
		at_world(c, w);
		drain(c, w);
		bp_status st = bp_frame_acquire(s->w, &v);
		if (st != BP_OK) {
			if (st != BP_ERR_NO_FRAME || v || s->published)
				failf(c, w, "bp_frame_acquire: %s", status_name(st));
			continue;
		}
		uint64_t frame = bp_view_frame(v);
		frame_exp *x = ring_find(s, frame);
		if (frame < s->published || frame > s->submitted || !x)
			failf(c, w, "bp_frame_acquire: frame %llu, published %llu, submitted %llu", (unsigned long long)frame,
				(unsigned long long)s->published, (unsigned long long)s->submitted);
		tr(c, w, "\tcr_assert_eq(bp_frame_acquire(w, &v), BP_OK);\n");
		tr_view(c, w, x->pairs, x->count);
		check_view(c, w, v, x);
		s->published = frame;
		hold(c, w, op->a % HELD, v, x);
	}
}

/// Thread count, debug flags or algorithm, the same on both worlds (no debug flag but
/// BP_DEBUG_NO_COHERENCE, BP_DEBUG_NO_SIMD and BP_DEBUG_NO_STATIC_TREE on the plain one).
/// A memory limit on both worlds: none, or 64 bytes to 128 KiB, so that steps
/// holding more pairs fail (and keep what they had) while smaller ones pass.
static void op_memory_limit(ctx *c, const hist_op *op)
{
	size_t limit = op->s % 3 == 0 ? 0 : (size_t)64 << (op->s / 3 % 12);
	for (int w = 0; w < 2; ++w) {
		tr(c, w, "\tcr_assert_eq(bp_world_set_memory_limit(w, %zu), BP_OK);\n", limit);
		expect_status(c, w, bp_world_set_memory_limit(c->sd[w].w, limit), BP_OK, "memory_limit");
		c->sd[w].limit = limit;
	}
}

static void op_config(ctx *c, const hist_op *op)
{
	if (op->a % 4 == 3) {
		if (op->a & 0x80)
			op_events(c, op);
		else
			op_memory_limit(c, op);
		return;
	}
	int what = op->a % 4;
	bp_algorithm algo = (bp_algorithm)(op->s % BP_ALGO_COUNT);
	algo = bp_algorithm_available(algo) ? algo : BP_ALGO_AUTO;
	for (int w = 0; w < 2; ++w) {
		const uint32_t flags = w ? BP_DEBUG_NO_COHERENCE | BP_DEBUG_NO_SIMD | BP_DEBUG_NO_STATIC_TREE : BP_DEBUG_ALL;
		uint32_t value = what == 0 ? op->s % 9 : what == 1 ? op->s & flags : (uint32_t)algo;
		static const char *const calls[3] = {"thread_count", "debug_flags", "algorithm"};
		tr(c, w, "\tcr_assert_eq(bp_world_set_%s(w, %u), BP_OK);\n", calls[what], value);
		expect_status(c, w, what == 0 ? bp_world_set_thread_count(c->sd[w].w, (int)value) : what == 1 ?
			bp_world_set_debug_flags(c->sd[w].w, value) : bp_world_set_algorithm(c->sd[w].w, algo), BP_OK, calls[what]);
	}
}

static void tr_header(ctx *c, const bp_world_def *d, const char *name, uint32_t slots, bool faults)
{
	FILE *f = c->tr;
	if (faults)
		fputs("// Fails one allocation on demand (bp_set_allocator), as history_soak does.\nstatic _Atomic long snip_allocs, "
			"snip_fail_at;\nstatic void *snip_alloc(size_t size, size_t align, void *user)\n{\n\t(void)user;\n\tif (++snip_"
			"allocs == snip_fail_at)\n\t\treturn NULL;\n\tvoid *p = NULL;\n\treturn posix_memalign(&p, align < sizeof p ? "
			"sizeof p : align, size ? size : 1) ? NULL : p;\n}\nstatic void snip_free(void *p, size_t size, size_t align, "
			"void *user)\n{\n\t(void)size, (void)align, (void)user;\n\tfree(p);\n}\n\n", f);
	if (d->executor == BP_EXECUTOR_HOST)
		fputs("static void *snip_enqueue(bp_task_fn *task, uint32_t count, uint32_t min_range, void *context, void *user)"
			"\n{\n\tuint32_t range = min_range ? min_range : 1, workers = (uint32_t)*(const int *)user;\n\tfor (uint32_t i = "
			"(uint32_t)(((uint64_t)count + range - 1) / range); i-- > 0;)\n\t\ttask(i * range, count - i * range > range ? "
			"i * range + range : count, i % workers, context);\n\treturn NULL;\n}\nstatic void snip_finish(void *task, void "
			"*user) { (void)task, (void)user; }\n\n", f);
	fprintf(f, "Test(history, %s, .timeout = 120)\n{\n", name);
	if (faults)
		fputs("\tstatic const bp_allocator allocator = {snip_alloc, snip_free, NULL};\n\tbp_set_allocator(&allocator);\n", f);
	if (c->cfg->threads_on_small)
		fputs("\tbpi_set_serial_step_entities(0); // step.h\n", f);
	if (c->cfg->settle_min)
		fprintf(f, "\tbpi_set_settle_min(%u); // incremental.h\n", c->cfg->settle_min);
	if (c->cfg->hierarchy)
		fprintf(f,
			"\tbpi_set_hierarchy_rules(%u, %u); // view_hierarchy.h\n\tbpi_set_hierarchy_refit(%u);\n"
			"\tbpi_view_set_dense_parts(%u, %u); // view.h\n",
			hierarchy_rules[c->cfg->hierarchy][0], hierarchy_rules[c->cfg->hierarchy][1],
			hierarchy_refit[c->cfg->hierarchy], dense_parts[c->cfg->hierarchy][0], dense_parts[c->cfg->hierarchy][1]);
	if (c->cfg->split)
		fputs("\tbpi_cells_set_split_min(1); // cells.h\n", f);
	if (c->cfg->moving)
		fputs("\tbpi_set_moving_always(true); // incremental.h\n", f);
	if (c->cfg->statics)
		fputs("\tbpi_set_statics_mover_share(1); // statics.h\n", f);
	if (c->cfg->merges_most)
		fprintf(f, "\tbpi_set_active_merges_most(%u); // incremental_active.h\n", c->cfg->merges_most);
	fprintf(f, "\tbp_world_def def = bp_world_def_default();\n\tdef.dims = %d, def.thread_count = %d, def.executor = %d;\n"
		"\tdef.algorithm = %d, def.canonical_pairs = %d, def.incremental = %d, def.debug_flags = %#x, def.margin = %s;\n"
		"\tdef.skin = %s, def.query_hierarchy_frames = %u;\n",
		d->dims, d->thread_count, (int)d->executor, (int)d->algorithm, d->canonical_pairs, d->incremental, d->debug_flags,
		F(d->margin), F(d->skin), d->query_hierarchy_frames);
	if (d->periodic)
		fprintf(f, "\tdef.periodic = true, def.period[0] = %s, def.period[1] = %s, def.period[2] = %s;\n", F(d->period[0]),
			F(d->period[1]), F(d->period[2]));
	if (d->executor == BP_EXECUTOR_HOST)
		fprintf(f, "\tstatic int workers = %d;\n\tdef.task_system = (bp_task_system){snip_enqueue, snip_finish, &workers, "
			"workers};\n", d->task_system.worker_count);
	fprintf(f, "\tbp_world *w = NULL;\n\tcr_assert_eq(bp_world_create(&def, &w), BP_OK);\n\tbp_entity *e = calloc(%u, sizeof "
		"*e);\n\tbp_entity_def d;\n\tbp_view *v = NULL, *held[3] = {NULL, NULL, NULL};\n\tsize_t count;\n\tconst bp_pair "
		"*p;\n\tbp_status s;\n\t(void)d, (void)v, (void)held, (void)count, (void)p, (void)s;\n", slots + 1);
}

uint64_t hist_run(const history *h, const hist_options *options)
{
	static bool installed;
	if (!installed) { // once: the library's threads of earlier histories may be alive
		static const bp_allocator allocator = {count_alloc, count_free, NULL};
		bp_set_allocator(&allocator);
		installed = true;
	}
	hist_options o = options ? *options : (hist_options){0};
	ctx c = {.h = h, .cfg = &h->cfg, .dims = h->cfg.dims, .max_entities = o.max_entities ? o.max_entities : 6000,
		.tr = o.trace, .tw = o.trace_world, .progress = o.progress};
	bpi_set_serial_step_entities(h->cfg.threads_on_small ? 0 : 2048);
	bpi_set_settle_min(h->cfg.settle_min ? h->cfg.settle_min : 1024);
	bpi_set_hierarchy_rules(hierarchy_rules[h->cfg.hierarchy][0], hierarchy_rules[h->cfg.hierarchy][1]);
	bpi_set_hierarchy_refit(hierarchy_refit[h->cfg.hierarchy]);
	bpi_view_set_dense_parts(dense_parts[h->cfg.hierarchy][0], dense_parts[h->cfg.hierarchy][1]);
	bpi_cells_set_split_min(h->cfg.split ? 1 : 0);
	bpi_set_moving_always(h->cfg.moving);
	bpi_set_statics_mover_share(h->cfg.statics ? 1 : 16); // 16: the library's share
	bpi_set_active_merges_most(h->cfg.merges_most ? h->cfg.merges_most : 8);
	bp_world_def def[2];
	for (int w = 0; w < 2; ++w) {
		bp_world_def *d = &def[w];
		*d = bp_world_def_default();
		d->dims = h->cfg.dims, d->thread_count = h->cfg.threads, d->executor = (bp_executor)h->cfg.executor;
		d->algorithm = (bp_algorithm)(w ? h->cfg.algo_plain : h->cfg.algo_target);
		d->algorithm = bp_algorithm_available(d->algorithm) ? d->algorithm : BP_ALGO_AUTO;
		d->incremental = !w, d->canonical_pairs = w || h->cfg.canonical, d->margin = w ? 0.0f : h->cfg.margin;
		c.sd[w].canonical = d->canonical_pairs;
		d->skin = w ? 0.0f : h->cfg.skin;
		d->query_hierarchy_frames = hierarchy_frames[h->cfg.hierarchy];
		d->debug_flags = w ? h->cfg.debug_flags & (BP_DEBUG_NO_COHERENCE | BP_DEBUG_NO_SIMD) : h->cfg.debug_flags;
		d->periodic = h->cfg.periodic;
		memcpy(d->period, h->cfg.period, sizeof d->period);
		c.sd[w].workers = h->cfg.threads ? h->cfg.threads : 3;
		d->task_system = (bp_task_system){host_enqueue, host_finish, &c.sd[w].workers, c.sd[w].workers};
		if (bp_world_create(d, &c.sd[w].w) != BP_OK)
			failf(&c, w, "bp_world_create: %s", bp_world_create_error());
	}
	if (c.tr) {
		uint32_t slots = 0;
		bool faults = false;
		for (uint32_t i = 0; i < h->count; ++i) {
			const hist_op *op = &h->ops[i];
			slots += op->code == OP_CREATE ? 1 : op->code == OP_CREATE_BULK ? 2700 : 0;
			faults |= (op->code == OP_STEP || op->code == OP_FRAME) && op->k % 4 == 0 && (op->a & 1) == c.tw;
			faults |= op->code == OP_STEP && (op->a & 2) && view_fault(op, c.tw);
		}
		tr_header(&c, &def[c.tw], o.trace_name ? o.trace_name : "replay", slots, faults);
	}
	for (c.op = 0; c.op < h->count; ++c.op) {
		const hist_op *op = &h->ops[c.op];
		if (c.progress)
			c.progress[0] = c.op, c.progress[1] = 0;
		if (c.tr)
			fprintf(c.tr, "\t// op %u: %s\n", c.op, code_names[op->code]), fflush(c.tr);
		switch (op->code) {
		case OP_CREATE: case OP_CREATE_BULK: op_create(&c, op, op->code == OP_CREATE_BULK); break;
		case OP_DESTROY: case OP_DESTROY_BULK: op_destroy(&c, op, op->code == OP_DESTROY_BULK); break;
		case OP_MOVE: case OP_MOVE_BULK: case OP_TELEPORT: case OP_FACE: op_move(&c, op); break;
		case OP_ATTR: op_attr(&c, op); break;
		case OP_STEP: case OP_FRAME: case OP_SUBMIT:
			op_step(&c, op, op->code - OP_STEP);
			for (int w = 0; w < 2 && op->code == OP_STEP && (op->a & 2); ++w)
				world_view(&c, w, op);
			break;
		case OP_ACQUIRE: op_acquire(&c, op); break;
		case OP_RELEASE: release_held(&c, 0, op->a % HELD), release_held(&c, 1, op->a % HELD); break;
		default: op_config(&c, op); break;
		}
		for (int w = 0; w < 2; ++w) { // both worlds hold the model's entities in its dense order
			const bp_entity *handles = bp_world_entities(c.sd[w].w);
			if (bp_world_entity_count(c.sd[w].w) != c.n)
				failf(&c, w, "%u entities, model %u", bp_world_entity_count(c.sd[w].w), c.n);
			for (uint32_t i = 0; i < c.n; ++i)
				if (handle_cmp(handles[i], c.e[c.dense[i]].h[w]))
					failf(&c, w, "dense %u holds entity {%u, %#x}, model {%u, %#x}", i, handles[i].index1,
						handles[i].generation, c.e[c.dense[i]].h[w].index1, c.e[c.dense[i]].h[w].generation);
		}
	}
	for (int w = 0; w < 2; ++w) { // worlds go first: views held stay valid and are checked once more
		drain(&c, w);
		bp_world_destroy(c.sd[w].w);
		tr(&c, w, "\tbp_world_destroy(w);\n");
		for (int i = 0; i < HELD; ++i)
			release_held(&c, w, i);
		for (int i = 0; i < RING; ++i)
			exp_free(&c.sd[w].ring[i]);
		exp_free(&c.sd[w].kept);
		free(c.sd[w].last), free(c.sd[w].named);
	}
	if (c.tr)
		fprintf(c.tr, "\tfree(e);\n%s%s%s%s%s%s%s}\n", c.cfg->threads_on_small ? "\tbpi_set_serial_step_entities(2048);\n" : "",
			c.cfg->split ? "\tbpi_cells_set_split_min(0);\n" : "",
			c.cfg->settle_min ? "\tbpi_set_settle_min(1024);\n" : "",
			c.cfg->hierarchy ? "\tbpi_set_hierarchy_rules(256, 16);\n\tbpi_set_hierarchy_refit(150);\n"
					   "\tbpi_view_set_dense_parts(0, 0);\n"
					 : "",
			c.cfg->moving ? "\tbpi_set_moving_always(false);\n" : "",
			c.cfg->merges_most ? "\tbpi_set_active_merges_most(8);\n" : "",
			c.cfg->statics ? "\tbpi_set_statics_mover_share(16);\n" : "");
	if (bp_allocated_bytes() != 0)
		failf(&c, -1, "leak: %lld bytes still allocated after every world and view is gone",
			(long long)bp_allocated_bytes());
	free(c.e), free(c.dense);
	return c.steps;
}
