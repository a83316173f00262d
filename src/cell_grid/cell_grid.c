// SPDX-License-Identifier: MIT
// Grid neighbourhoods (cell_grid.h): entities binned by centre into a fixed grid by a
// counting sort, and the 8/26-cell neighbourhood of a cell, bounded or toroidal.
#include <broadphase/cell_grid.h>

#include "parallel/parallel.h"
#include "parallel/threads.h"
#include "world/world_data.h"

#include <math.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#define CELL_GRID_SSE 1
#else
#define CELL_GRID_SSE 0
#endif

#define BP_CELL_GRID_COOKIE 0x42504347 // "BPCG": marks a def made by bp_cell_grid_def_default
#define BP_CELL_GRID_MAX_CELLS (UINT32_C(1) << 31)
#define BP_NEAR_MAX 27 // 26 neighbours + the cell itself

// Centres per chunk of the parallel pass: big enough that the per-chunk
// overhead vanishes, small enough that 2-16 threads share 1M entities evenly.
#define BP_CELL_GRID_GRAIN 16384

struct bp_cell_grid {
	int dims;
	bool toroidal;
	float origin[3];
	float cell_size;
	uint32_t cells[3];    ///< cells[2] is 1 in 2D
	uint32_t cell_count;
	/// cell_count + 1 entries: cell c holds entities[cell_start[c] .. cell_start[c + 1])
	BPI_ARRAY(uint32_t) cell_start;
	BPI_ARRAY(uint32_t) entities;    ///< dense indices in cell order, ascending within a cell
	BPI_ARRAY(uint32_t) entity_cell; ///< dense index -> cell
	uint32_t entity_count;
};

bp_cell_grid_def bp_cell_grid_def_default(void)
{
	return (bp_cell_grid_def){
		.dims = 3,
		.cell_size = 1.0f,
		.cells = {1, 1, 1},
		.internal_value = BP_CELL_GRID_COOKIE,
	};
}

bp_status bp_cell_grid_create(const bp_cell_grid_def *def, bp_cell_grid **out)
{
	if (!out)
		return BP_ERR_INVALID_ARGUMENT;
	*out = NULL;
	if (!def || def->internal_value != BP_CELL_GRID_COOKIE)
		return BP_ERR_INVALID_ARGUMENT; // def not initialised by bp_cell_grid_def_default
	if (def->dims != 2 && def->dims != 3)
		return BP_ERR_INVALID_ARGUMENT;
	if (!isfinite(def->cell_size))
		return BP_ERR_NOT_FINITE;
	if (!(def->cell_size > 0.0f))
		return BP_ERR_INVALID_ARGUMENT;
	uint64_t total = 1;
	for (int axis = 0; axis < def->dims; ++axis) {
		if (!isfinite(def->origin[axis]))
			return BP_ERR_NOT_FINITE;
		if (def->cells[axis] == 0)
			return BP_ERR_OUT_OF_RANGE;
		total *= def->cells[axis]; // at most 2^31 * 2^32 before the check below: no overflow
		if (total > BP_CELL_GRID_MAX_CELLS)
			return BP_ERR_OUT_OF_RANGE;
	}
	bp_cell_grid *g = bpi_alloc(sizeof *g);
	if (!g)
		return BP_ERR_OUT_OF_MEMORY;
	*g = (bp_cell_grid){
		.dims = def->dims,
		.toroidal = def->toroidal,
		.origin = {def->origin[0], def->origin[1], def->dims == 3 ? def->origin[2] : 0.0f},
		.cell_size = def->cell_size,
		.cells = {def->cells[0], def->cells[1], def->dims == 3 ? def->cells[2] : 1},
		.cell_count = (uint32_t)total,
	};
	// A 32-bit size_t that cannot even hold the byte count fails here too.
	if (!bpi_array_reserve(&g->cell_start, (size_t)total + 1)) {
		bpi_free(g, sizeof *g);
		return BP_ERR_OUT_OF_MEMORY;
	}
	memset(g->cell_start.data, 0, ((size_t)total + 1) * sizeof(uint32_t)); // every cell empty until the first assign
	*out = g;
	return BP_OK;
}

void bp_cell_grid_destroy(bp_cell_grid *g)
{
	if (!g)
		return;
	bpi_array_free(&g->cell_start);
	bpi_array_free(&g->entities);
	bpi_array_free(&g->entity_cell);
	bpi_free(g, sizeof *g);
}

// ---- point -> cell ---------------------------------------------------------

/// Cell coordinate on one axis of a finite coordinate x (double, so that the
/// centre of two floats and the quotient by a tiny cell never overflow).
static inline uint32_t axis_coord(const bp_cell_grid *g, int axis, double x)
{
	const double n = (double)g->cells[axis];
	double q = floor((x - (double)g->origin[axis]) / (double)g->cell_size);
	if (q >= 0.0 && q < n)
		return (uint32_t)q;
	if (!g->toroidal)
		return q < 0.0 ? 0 : g->cells[axis] - 1;
	// q is a whole number (perhaps far beyond 2^53); fmod of doubles is exact.
	q = fmod(q, n);
	if (q < 0.0)
		q += n;
	uint32_t c = (uint32_t)q;
	return c < g->cells[axis] ? c : g->cells[axis] - 1; // q + n rounding up to n: impossible below 2^53, kept as a guard
}

static inline uint32_t linear(const bp_cell_grid *g, uint32_t x, uint32_t y, uint32_t z)
{
	return x + g->cells[0] * (y + g->cells[1] * z);
}

// ---- assign ----------------------------------------------------------------

typedef struct assign_ctx {
	const bp_cell_grid *grid;
	const bpi_soa *soa;
	uint32_t *entity_cell;
} assign_ctx;

/// floor(q) clamped to [0, last] for each quotient (finite): for q >= 0 floor is
/// truncation, and every q < 0 goes to 0 either way, so clamping to [0, last]
/// and truncating is enough, in two-lane SSE2 (gcc leaves the scalar form's
/// double comparisons as branches and does not vectorize it).
static void bounded_coords(const double *quotient, uint32_t m, double last, uint32_t *coord)
{
	uint32_t i = 0;
#if CELL_GRID_SSE
	const __m128d hi = _mm_set1_pd(last), lo = _mm_setzero_pd();
	for (; i + 2 <= m; i += 2) {
		__m128d q = _mm_max_pd(_mm_min_pd(_mm_loadu_pd(quotient + i), hi), lo);
		_mm_storel_epi64((__m128i *)(void *)(coord + i), _mm_cvttpd_epi32(q));
	}
#endif
	for (; i < m; ++i) {
		double q = quotient[i] < last ? quotient[i] : last;
		coord[i] = (uint32_t)(q > 0.0 ? q : 0.0);
	}
}

/// Cells of entities [begin, end), a block at a time and one axis at a time so
/// that the float work vectorizes; bounded_coords gives axis_coord's bounded
/// answer, and toroidal mode redoes with axis_coord the rare quotients outside
/// [0, cells). Blocks make the assign much cheaper than calling axis_coord per
/// entity and axis (perf/README.md, "Grid neighbourhoods: cells by centre").
static void centre_cells(uint32_t begin, uint32_t end, uint32_t chunk, void *raw)
{
	(void)chunk;
	enum { BLOCK = 256 };
	const assign_ctx *ctx = raw;
	const bp_cell_grid *g = ctx->grid;
	const bpi_soa *soa = ctx->soa;
	double quotient[BLOCK];
	uint32_t coord[BLOCK];
	for (uint32_t first = begin; first < end; first += BLOCK) {
		const uint32_t m = BP_MIN((uint32_t)BLOCK, end - first);
		uint32_t *out = ctx->entity_cell + first;
		uint32_t stride = 1;
		for (int axis = 0; axis < g->dims; ++axis) {
			const float *lo = soa->min[axis] + first, *hi = soa->max[axis] + first;
			const double origin = g->origin[axis], size = g->cell_size, last = (double)(g->cells[axis] - 1);
			for (uint32_t i = 0; i < m; ++i)
				quotient[i] = (0.5 * ((double)lo[i] + (double)hi[i]) - origin) / size;
			bounded_coords(quotient, m, last, coord);
			if (g->toroidal)
				for (uint32_t i = 0; i < m; ++i)
					if (!(quotient[i] >= 0.0 && quotient[i] < last + 1.0))
						coord[i] = axis_coord(g, axis, 0.5 * ((double)lo[i] + (double)hi[i]));
			if (axis == 0)
				memcpy(out, coord, m * sizeof *coord);
			else
				for (uint32_t i = 0; i < m; ++i)
					out[i] += coord[i] * stride;
			stride *= g->cells[axis];
		}
	}
}

bp_status bp_cell_grid_assign(bp_cell_grid *g, const bp_world *world)
{
	if (!g || !world)
		return BP_ERR_INVALID_ARGUMENT;
	if (world->dims != g->dims)
		return BP_ERR_INVALID_ARGUMENT;
	const uint32_t n = world->count;
	// Room before anything is overwritten, each array grown keeping the previous
	// assign's entries: a failed assign leaves that one intact.
	if (!bpi_array_grow(&g->entities, g->entity_count, n) || !bpi_array_grow(&g->entity_cell, g->entity_count, n))
		return BP_ERR_OUT_OF_MEMORY;

	const int threads = bpi_resolve_threads(&world->executor, world->thread_count);
	bpi_team_failure team;
	if (bpi_executor_enter(&world->executor, threads, &team) != BP_OK)
		return BP_ERR_OUT_OF_MEMORY;

	// Nothing below can fail.
	assign_ctx ctx = {g, &world->soa, g->entity_cell.data};
	bpi_parallel_for(n, BP_CELL_GRID_GRAIN, threads, centre_cells, &ctx);
	bpi_executor_leave();

	// Stable counting sort. Counts, then inclusive prefix: start[c] = end of c.
	// Placing entities from the last down with --start[c] fills each cell from
	// its end, so a cell lists its entities ascending and start[c] ends at the
	// start of c. The cell ids were computed in parallel above (the float work);
	// this pass is memory-bound and stays serial: per-chunk histograms would
	// cost chunks x cells, which dwarfs the entities when cells are many.
	uint32_t *start = g->cell_start.data;
	const uint32_t *cell_of = g->entity_cell.data;
	memset(start, 0, ((size_t)g->cell_count + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; ++i)
		++start[cell_of[i]];
	uint32_t sum = 0;
	for (uint32_t c = 0; c < g->cell_count; ++c) {
		sum += start[c];
		start[c] = sum;
	}
	start[g->cell_count] = n;
	for (uint32_t i = n; i-- > 0;)
		g->entities.data[--start[cell_of[i]]] = i;
	g->entity_count = n;
	return BP_OK;
}

// ---- cells and coordinates -------------------------------------------------

uint32_t bp_cell_grid_cell_count(const bp_cell_grid *g) { return g ? g->cell_count : 0; }

uint32_t bp_cell_grid_entity_count(const bp_cell_grid *g) { return g ? g->entity_count : 0; }

static bp_status point_cell(const bp_cell_grid *g, const float *point, uint32_t *cell)
{
	uint32_t c[3] = {0, 0, 0};
	for (int axis = 0; axis < g->dims; ++axis) {
		if (!isfinite(point[axis]))
			return BP_ERR_NOT_FINITE;
		c[axis] = axis_coord(g, axis, (double)point[axis]);
	}
	*cell = linear(g, c[0], c[1], c[2]);
	return BP_OK;
}

bp_status bp_cell_grid_cell_of(const bp_cell_grid *g, const float *point, uint32_t *cell)
{
	if (!g || !point || !cell)
		return BP_ERR_INVALID_ARGUMENT;
	return point_cell(g, point, cell);
}

bp_status bp_cell_grid_cell_index(const bp_cell_grid *g, const uint32_t *coords, uint32_t *cell)
{
	if (!g || !coords || !cell)
		return BP_ERR_INVALID_ARGUMENT;
	for (int axis = 0; axis < g->dims; ++axis)
		if (coords[axis] >= g->cells[axis])
			return BP_ERR_OUT_OF_RANGE;
	*cell = linear(g, coords[0], coords[1], g->dims == 3 ? coords[2] : 0);
	return BP_OK;
}

static void coords_of(const bp_cell_grid *g, uint32_t cell, uint32_t coords[3])
{
	coords[0] = cell % g->cells[0];
	cell /= g->cells[0];
	coords[1] = cell % g->cells[1];
	coords[2] = cell / g->cells[1];
}

bp_status bp_cell_grid_cell_coords(const bp_cell_grid *g, uint32_t cell, uint32_t coords[3])
{
	if (!g || !coords)
		return BP_ERR_INVALID_ARGUMENT;
	if (cell >= g->cell_count)
		return BP_ERR_OUT_OF_RANGE;
	coords_of(g, cell, coords);
	return BP_OK;
}

bp_status bp_cell_grid_entity_cell(const bp_cell_grid *g, uint32_t entity, uint32_t *cell)
{
	if (!g || !cell)
		return BP_ERR_INVALID_ARGUMENT;
	if (entity >= g->entity_count)
		return BP_ERR_OUT_OF_RANGE;
	*cell = g->entity_cell.data[entity];
	return BP_OK;
}

bp_status bp_cell_grid_cell_entities(const bp_cell_grid *g, uint32_t cell, const uint32_t **entities, uint32_t *count)
{
	if (!g || !entities || !count)
		return BP_ERR_INVALID_ARGUMENT;
	if (cell >= g->cell_count)
		return BP_ERR_OUT_OF_RANGE;
	*entities = g->entities.data ? g->entities.data + g->cell_start.data[cell] : NULL;
	*count = g->cell_start.data[cell + 1] - g->cell_start.data[cell];
	return BP_OK;
}

// ---- neighbourhoods --------------------------------------------------------

/// The cells within one step of `cell` on every axis, ascending, the cell itself
/// included when include_self. Per axis the distinct reachable coordinates are
/// listed first (clipped or wrapped), so an axis of 1 or 2 cells in toroidal
/// mode yields each coordinate once; their product is then distinct cells.
static uint32_t near_cells(const bp_cell_grid *g, uint32_t cell, bool include_self, uint32_t out[BP_NEAR_MAX])
{
	uint32_t at[3];
	coords_of(g, cell, at);
	uint32_t axis_list[3][3], axis_len[3] = {1, 1, 1};
	axis_list[2][0] = 0; // 2D: z is the single coordinate 0
	for (int axis = 0; axis < g->dims; ++axis) {
		const int64_t n = g->cells[axis];
		uint32_t len = 0;
		for (int64_t offset = -1; offset <= 1; ++offset) {
			int64_t c = (int64_t)at[axis] + offset;
			if (g->toroidal)
				c = (c + n) % n;
			else if (c < 0 || c >= n)
				continue;
			bool seen = false;
			for (uint32_t k = 0; k < len; ++k)
				seen |= axis_list[axis][k] == (uint32_t)c;
			if (!seen)
				axis_list[axis][len++] = (uint32_t)c;
		}
		axis_len[axis] = len;
	}
	uint32_t count = 0;
	for (uint32_t z = 0; z < axis_len[2]; ++z)
		for (uint32_t y = 0; y < axis_len[1]; ++y)
			for (uint32_t x = 0; x < axis_len[0]; ++x) {
				uint32_t c = linear(g, axis_list[0][x], axis_list[1][y], axis_list[2][z]);
				if (c != cell || include_self)
					out[count++] = c;
			}
	// Insertion sort: wrapped coordinates come out of order, and at most 27.
	for (uint32_t i = 1; i < count; ++i) {
		uint32_t v = out[i], j = i;
		for (; j > 0 && out[j - 1] > v; --j)
			out[j] = out[j - 1];
		out[j] = v;
	}
	return count;
}

bp_status bp_cell_grid_neighbour_cells(const bp_cell_grid *g, uint32_t cell, uint32_t out[26], uint32_t *count)
{
	if (!g || !out || !count)
		return BP_ERR_INVALID_ARGUMENT;
	if (cell >= g->cell_count)
		return BP_ERR_OUT_OF_RANGE;
	uint32_t near[BP_NEAR_MAX];
	*count = near_cells(g, cell, false, near);
	BP_ASSERT(*count <= 26);
	memcpy(out, near, *count * sizeof *near);
	return BP_OK;
}

bp_status bp_cell_grid_for_each_near(const bp_cell_grid *g, uint32_t cell, bool include_cell,
	bool (*fn)(uint32_t entity, void *user), void *user)
{
	if (!g || !fn)
		return BP_ERR_INVALID_ARGUMENT;
	if (cell >= g->cell_count)
		return BP_ERR_OUT_OF_RANGE;
	uint32_t near[BP_NEAR_MAX];
	uint32_t cells = near_cells(g, cell, include_cell, near);
	for (uint32_t k = 0; k < cells; ++k)
		for (uint32_t i = g->cell_start.data[near[k]]; i < g->cell_start.data[near[k] + 1]; ++i)
			if (!fn(g->entities.data[i], user))
				return BP_OK;
	return BP_OK;
}

bp_status bp_cell_grid_reduce_near(const bp_cell_grid *g, uint32_t cell, bool include_cell,
	double (*fn)(double acc, uint32_t entity, void *user), void *user, double init, double *out)
{
	if (!g || !fn || !out)
		return BP_ERR_INVALID_ARGUMENT;
	if (cell >= g->cell_count)
		return BP_ERR_OUT_OF_RANGE;
	uint32_t near[BP_NEAR_MAX];
	uint32_t cells = near_cells(g, cell, include_cell, near);
	double acc = init;
	for (uint32_t k = 0; k < cells; ++k)
		for (uint32_t i = g->cell_start.data[near[k]]; i < g->cell_start.data[near[k] + 1]; ++i)
			acc = fn(acc, g->entities.data[i], user);
	*out = acc;
	return BP_OK;
}

bp_status bp_cell_grid_near_point(const bp_cell_grid *g, const float *point, uint32_t *out, size_t capacity,
	size_t *total_out)
{
	if (!g || !point || !total_out || (!out && capacity))
		return BP_ERR_INVALID_ARGUMENT;
	uint32_t cell;
	bp_status status = point_cell(g, point, &cell);
	if (status != BP_OK)
		return status;
	uint32_t near[BP_NEAR_MAX];
	uint32_t cells = near_cells(g, cell, true, near);
	size_t total = 0;
	for (uint32_t k = 0; k < cells; ++k) {
		const uint32_t begin = g->cell_start.data[near[k]], end = g->cell_start.data[near[k] + 1];
		if (total < capacity && end > begin) {
			size_t take = BP_MIN((size_t)(end - begin), capacity - total);
			memcpy(out + total, g->entities.data + begin, take * sizeof(uint32_t));
		}
		total += end - begin;
	}
	*total_out = total;
	return BPI_BUFFER_STATUS(total, capacity);
}
