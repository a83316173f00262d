// SPDX-License-Identifier: MIT
// Scene generators for `bp gen`, tests and benchmarks. Every density is chosen
// analytically from the expected pair count; each formula is worked below.
#include "scene_format.h"

#include <math.h>
#include <string.h>

static const char *const dist_names[BP_DIST_COUNT] = {"uniform", "clustered", "mixed", "line", "boxprune"};

const char *bp_distribution_name(bp_distribution dist)
{
	return (unsigned)dist < BP_DIST_COUNT ? dist_names[dist] : "?";
}

bp_status bp_distribution_from_name(const char *name, bp_distribution *out)
{
	if (!name || !out)
		return BP_ERR_INVALID_ARGUMENT;
	for (int d = 0; d < BP_DIST_COUNT; ++d)
		if (strcmp(name, dist_names[d]) == 0) {
			*out = (bp_distribution)d;
			return BP_OK;
		}
	return BP_ERR_INVALID_ARGUMENT;
}

bp_gen_def bp_gen_def_default(void)
{
	return (bp_gen_def){.dist = BP_DIST_UNIFORM, .n = 1000, .dims = 3, .seed = 1, .frames = 1};
}

// xoshiro256** seeded through splitmix64: our own generator, so scenes are the
// same on every platform and C library (rand() is neither).
typedef struct gen_rng {
	uint64_t s[4];
} gen_rng;

static void rng_seed(gen_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; ++i)
		r->s[i] = bp_splitmix64(seed + (uint64_t)i * 0x9E3779B97F4A7C15ull);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rng_next(gen_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/// Uniform in [0, 1).
static inline double rng_unit(gen_rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }
static inline double rng_range(gen_rng *r, double lo, double hi) { return lo + (hi - lo) * rng_unit(r); }
/// Uniform in [0, bound); exact for the power-of-two bounds boxprune uses.
static inline uint32_t rng_below(gen_rng *r, uint32_t bound)
{
	return (uint32_t)(((rng_next(r) >> 32) * bound) >> 32);
}

static double rng_gauss(gen_rng *r)
{
	// Box-Muller, one value per call: simpler than caching the twin, and fast enough.
	double u = 1.0 - rng_unit(r); // (0, 1], so log is finite
	double v = rng_unit(r);
	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

// Extents ("small" boxes) are uniform in [0.5, 1.5] per axis. Two boxes overlap on
// an axis iff their centres are within d = (ea + eb) / 2, E[d] = 1,
// E[d^2] = 1 + Var(ea + eb) / 4 = 1 + (2 / 12) / 4 = 1 + 1/24.
#define SMALL_LO 0.5
#define SMALL_HI 1.5
#define SMALL_D2 (1.0 + 1.0 / 24.0)

// Side L of an axis on which centres are uniform so that a pair overlaps on it with
// probability p. For centres uniform on [0, L], P(|ca - cb| <= d) = (2dL - d^2) / L^2
// (d <= L), so p = (2 E[d] L - E[d^2]) / L^2 with E[d] = 1, i.e. p L^2 - 2 L + E[d^2] = 0:
// L = (1 + sqrt(1 - p E[d^2])) / p. For large n this is 2 / p, the V = 8n/3 (3D) and
// A = 4n/3 (2D) of the plain estimate; the root also counts the boxes cut by the edges.
static double side_for_probability(double p, double d2)
{
	if (p > 0.5)
		p = 0.5; // tiny n: no side reaches the target, take a compact world
	return (1.0 + sqrt(1.0 - p * d2)) / p;
}

// Expected pairs n (n - 1) / 2 * p^dims = target_per_entity * n gives the per-axis p.
static double axis_probability(uint32_t n, int dims, double target_per_entity, double other_axes_p)
{
	double m = n > 1 ? (double)(n - 1) : 1.0;
	double p_all = 2.0 * target_per_entity / m;
	return pow(p_all / other_axes_p, 1.0 / dims);
}

// clustered: n/64 centres, members Gaussian around them with this sigma per axis.
// Within a cluster a pair overlaps on an axis with P(|N(0, 2 sigma^2)| <= d) = erf(d / (2 sigma)),
// about erf(1 / (2 sigma)). Each entity has 63 cluster mates, so pairs per entity
// (pairs / n) ~ 63 / 2 * erf^dims; ~8 needs erf^dims ~ 0.25: sigma ~ 0.75 (3D), 1.0 (2D).
// Measured with brute at n = 5000, seeds 1-3 (cross-cluster pairs included):
// 3D 9.4-10.0, 2D 9.5-9.8 pairs per entity.
#define CLUSTER_SIZE 64
#define CLUSTER_SIGMA_3D 0.75
#define CLUSTER_SIGMA_2D 1.0

// mixed: a fraction b = 5% of boxes is 30x larger (extents uniform in [15, 45], mean 30).
// Per axis E[ea + eb] is 2 (small-small), 31 (small-big), 60 (big-big); axes are
// independent, so with s = 1 - b the expected pairs are
//   n (n - 1) / 2 * S / V,  S = s^2 2^dims + 2 s b 31^dims + b^2 60^dims
// (3D: S = 7.22 + 2830.1 + 540 = 3377; 2D: S = 3.61 + 91.3 + 9.0 = 103.9).
// V = (n - 1) S / (2 * 3) gives 3 pairs per entity, nearly all small-big; edges
// cut the big boxes' share, so measured values are lower: brute at n = 5000, seeds
// 1-3: 3D 2.3-2.6, 2D 2.6-3.0 pairs per entity.
#define MIXED_BIG_FRACTION 0.05
#define MIXED_SCALE 30.0
#define MIXED_PAIRS_PER_ENTITY 3.0

// uniform and line: 1.5 pairs per entity. Measured with brute at n = 5000, seeds 1-3:
// uniform 2D 1.50-1.53, 3D 1.48-1.53; line 2D 1.50-1.53, 3D 1.48-1.51.
// line: y (and z) sides are LINE_WIDTH; x is long, chosen for 1.5 pairs per entity.
#define LINE_WIDTH 3.0
#define PAIRS_PER_ENTITY 1.5

// Motion: each axis moves by up to 5% of the box's extent per frame.
#define SPEED_FRACTION 0.05

typedef struct gen_params {
	int dims;
	double side[3];      ///< centres uniform in [0, side) per axis
	uint32_t clusters;
	double sigma;
	double *centres;     ///< clusters * dims
} gen_params;

static void plan(const bp_gen_def *def, gen_params *g)
{
	const int dims = def->dims;
	const uint32_t n = def->n;
	g->dims = dims;
	switch (def->dist) {
	case BP_DIST_UNIFORM:
	case BP_DIST_CLUSTERED: {
		double p = axis_probability(n, dims, PAIRS_PER_ENTITY, 1.0);
		double side = side_for_probability(p, SMALL_D2);
		for (int a = 0; a < 3; ++a)
			g->side[a] = side;
		g->clusters = SCENE_MAX(1u, n / CLUSTER_SIZE);
		g->sigma = dims == 3 ? CLUSTER_SIGMA_3D : CLUSTER_SIGMA_2D;
		break;
	}
	case BP_DIST_MIXED: {
		const double b = MIXED_BIG_FRACTION, s = 1.0 - b;
		const double S = s * s * pow(2.0, dims) + 2.0 * s * b * pow(1.0 + MIXED_SCALE, dims) +
			b * b * pow(2.0 * MIXED_SCALE, dims);
		const double m = n > 1 ? (double)(n - 1) : 1.0;
		const double volume = m * S / (2.0 * MIXED_PAIRS_PER_ENTITY);
		const double side = SCENE_MAX(pow(volume, 1.0 / dims), 2.0 * MIXED_SCALE);
		for (int a = 0; a < 3; ++a)
			g->side[a] = side;
		break;
	}
	case BP_DIST_LINE: {
		const double w = LINE_WIDTH;
		const double p_thin = (2.0 * w - SMALL_D2) / (w * w); // exact, as side_for_probability
		const double p_thin_all = dims == 3 ? p_thin * p_thin : p_thin;
		const double px = axis_probability(n, 1, PAIRS_PER_ENTITY, p_thin_all);
		g->side[0] = SCENE_MAX(side_for_probability(px, SMALL_D2), w);
		g->side[1] = g->side[2] = w;
		break;
	}
	default: // boxprune: fixed integer ranges, see make_entity
		for (int a = 0; a < 3; ++a)
			g->side[a] = 4096.0;
		break;
	}
}

// Draws entity bounds for frame 0 as a centre and a half extent per axis.
static void make_entity(bp_distribution dist, const gen_params *g, gen_rng *r, double c[3], double h[3])
{
	const int dims = g->dims;
	switch (dist) {
	case BP_DIST_UNIFORM:
	case BP_DIST_LINE:
		for (int a = 0; a < dims; ++a) {
			h[a] = 0.5 * rng_range(r, SMALL_LO, SMALL_HI);
			c[a] = g->side[a] * rng_unit(r);
		}
		break;
	case BP_DIST_CLUSTERED: {
		const double *centre = g->centres + (size_t)rng_below(r, g->clusters) * (size_t)dims;
		for (int a = 0; a < dims; ++a) {
			h[a] = 0.5 * rng_range(r, SMALL_LO, SMALL_HI);
			c[a] = centre[a] + g->sigma * rng_gauss(r);
		}
		break;
	}
	case BP_DIST_MIXED: {
		const double scale = rng_unit(r) < MIXED_BIG_FRACTION ? MIXED_SCALE : 1.0;
		for (int a = 0; a < dims; ++a) {
			h[a] = 0.5 * scale * rng_range(r, SMALL_LO, SMALL_HI);
			c[a] = g->side[a] * rng_unit(r);
		}
		break;
	}
	default:
		// boxprune: integer centres in [-2048, 2047], integer half extents in [0, 127].
		for (int a = 0; a < dims; ++a) {
			c[a] = (double)rng_below(r, 4096) - 2048.0;
			h[a] = (double)rng_below(r, 128);
		}
		break;
	}
}

typedef struct motion {
	float *centre[3], *half[3], *velocity[3];
} motion;

static void motion_free(motion *m)
{
	for (int a = 0; a < 3; ++a) {
		scenefile_free(m->centre[a]);
		scenefile_free(m->half[a]);
		scenefile_free(m->velocity[a]);
	}
}

static bool motion_alloc(motion *m, int dims, uint32_t n)
{
	memset(m, 0, sizeof *m);
	const size_t bytes = (size_t)n * sizeof(float);
	bool ok = true;
	for (int a = 0; a < dims && ok; ++a) {
		ok = (m->centre[a] = scenefile_malloc(bytes)) != NULL;
		ok = ok && (m->half[a] = scenefile_malloc(bytes)) != NULL;
		ok = ok && (m->velocity[a] = scenefile_malloc(bytes)) != NULL;
	}
	if (!ok)
		motion_free(m);
	return ok;
}

// Frames 1.. : every centre moves by its velocity and bounces off the box spanned by
// the frame-0 centres, so the density stays that of frame 0.
static void move_frames(bp_scene *s, motion *m)
{
	const size_t n = s->count;
	for (int a = 0; a < s->dims; ++a) {
		float lo = INFINITY, hi = -INFINITY;
		for (size_t i = 0; i < n; ++i) {
			lo = fminf(lo, m->centre[a][i]);
			hi = fmaxf(hi, m->centre[a][i]);
		}
		float *c = m->centre[a], *h = m->half[a], *v = m->velocity[a];
		for (uint32_t f = 1; f < s->frame_count; ++f) {
			float *mn = s->min[a] + (size_t)f * n, *mx = s->max[a] + (size_t)f * n;
			for (size_t i = 0; i < n; ++i) {
				float x = c[i] + v[i];
				if (x < lo) {
					x = lo + (lo - x);
					v[i] = -v[i];
				}
				if (x > hi) {
					x = hi - (x - hi);
					v[i] = -v[i];
				}
				x = fminf(fmaxf(x, lo), hi);
				c[i] = x;
				mn[i] = x - h[i];
				mx[i] = x + h[i];
			}
		}
	}
}

bp_status bp_scene_generate(const bp_gen_def *def, bp_scene **out)
{
	if (out)
		*out = NULL;
	if (!def || !out || (unsigned)def->dist >= BP_DIST_COUNT || (def->dims != 2 && def->dims != 3) ||
		def->frames == 0 || (def->dist == BP_DIST_BOXPRUNE && def->dims != 3))
		return BP_ERR_INVALID_ARGUMENT;
	const uint32_t n = def->n;
	const int dims = def->dims;
	if ((uint64_t)n * def->frames > SIZE_MAX / sizeof(float))
		return BP_ERR_OUT_OF_MEMORY;
	const size_t rows = (size_t)n * def->frames;

	gen_params g = {0};
	plan(def, &g);
	gen_rng r;
	rng_seed(&r, def->seed);
	if (def->dist == BP_DIST_CLUSTERED) {
		g.centres = scenefile_malloc((size_t)g.clusters * (size_t)dims * sizeof(double));
		if (!g.centres)
			return BP_ERR_OUT_OF_MEMORY;
		for (size_t k = 0; k < (size_t)g.clusters * (size_t)dims; ++k)
			g.centres[k] = g.side[k % (size_t)dims] * rng_unit(&r);
	}
	bp_scene *s;
	bp_status status = scenefile_alloc(dims, n, rows, &s);
	motion m = {0};
	if (status == BP_OK && def->frames > 1 && !motion_alloc(&m, dims, n)) {
		bp_scene_destroy(s);
		status = BP_ERR_OUT_OF_MEMORY;
	}
	if (status != BP_OK) {
		scenefile_free(g.centres);
		return status;
	}
	s->count = n;
	s->frame_count = def->frames;
	// Velocities come from their own stream, so frame 0 is the same scene whatever
	// the number of frames.
	gen_rng rv;
	rng_seed(&rv, def->seed ^ 0x6D6F74696F6E0000ull);
	for (uint32_t i = 0; i < n; ++i) {
		double c[3], h[3];
		make_entity(def->dist, &g, &r, c, h);
		s->ids[i] = i;
		for (int a = 0; a < dims; ++a) {
			// c - h <= c + h in double, and rounding to float keeps the order.
			s->min[a][i] = (float)(c[a] - h[a]);
			s->max[a][i] = (float)(c[a] + h[a]);
			if (def->frames > 1) {
				m.centre[a][i] = (float)c[a];
				m.half[a][i] = (float)h[a];
				m.velocity[a][i] = (float)(SPEED_FRACTION * 2.0 * h[a] * rng_range(&rv, -1.0, 1.0));
			}
		}
	}
	if (def->frames > 1) {
		move_frames(s, &m);
		motion_free(&m);
	}
	scenefile_free(g.centres);
	*out = s;
	return BP_OK;
}
