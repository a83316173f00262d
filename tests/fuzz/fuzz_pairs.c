// SPDX-License-Identifier: MIT
// libFuzzer target: boxes decoded from bytes through every available algorithm with 1 and 2
// threads, checked against a brute-force oracle (same pair set) and across thread counts
// (same list, same order).
#include "fuzz_common.h"

enum { MAX_BOXES = 128 };

/// Input layout. Byte 0: bit 0 dims (2 or 3), bit 1 filters on, bits 2-3 coordinate
/// step, bits 4-6 cell size, bit 7 canonical pairs. Then per box: `dims` signed
/// coordinate bytes (lower corner), `dims` extent bytes (low 4 bits, so zero extents and
/// exact touching are common), and with filters one byte: category (bits 0-1, plus 1),
/// mask (bits 2-4; 0 means all), both spread to 64-bit layers by fuzz_filter, and static (bit 5).
typedef struct decoded {
	int dims;
	uint32_t n;
	float cell_size;
	bool canonical;
	fuzz_box boxes[MAX_BOXES];
	float soa[6][MAX_BOXES];
} decoded;

static void decode(fuzz_reader *r, decoded *d)
{
	static const float steps[4] = {1.0f, 0.25f, 1000.0f, 0.1f};
	static const float cells[8] = {0.0f, 0.0f, 0.5f, 1.0f, 3.0f, 16.0f, 1000.0f, 1e-3f};
	uint8_t head = fuzz_byte(r);
	d->dims = 2 + (head & 1);
	bool filtered = head & 2;
	float step = steps[(head >> 2) & 3];
	d->cell_size = cells[(head >> 4) & 7];
	d->canonical = head & 0x80;
	size_t per_box = (size_t)(2 * d->dims + (filtered ? 1 : 0));
	d->n = 0;
	while (d->n < MAX_BOXES && r->size - r->pos >= per_box) {
		fuzz_box *b = &d->boxes[d->n];
		*b = (fuzz_box){.category = 1, .mask = UINT64_MAX};
		for (int k = 0; k < d->dims; ++k)
			b->min[k] = (float)(int8_t)fuzz_byte(r) * step;
		for (int k = 0; k < d->dims; ++k)
			b->max[k] = b->min[k] + (float)(fuzz_byte(r) & 15) * step;
		if (filtered) {
			uint8_t f = fuzz_byte(r);
			fuzz_filter(f, &b->category, &b->mask);
			b->is_static = f & 0x20;
		}
		for (int k = 0; k < 3; ++k) {
			d->soa[k][d->n] = b->min[k];
			d->soa[3 + k][d->n] = b->max[k];
		}
		++d->n;
	}
}

/// Builds a world of the decoded boxes with the given algorithm and thread count,
/// steps it, checks the pairs against the oracle and returns a copy of the list.
static bp_pair *run_world(const decoded *d, bp_algorithm algo, int threads, const bp_pair *want, size_t want_count,
	size_t *count)
{
	char what[96];
	snprintf(what, sizeof what, "%s threads=%d dims=%d n=%u", bp_algorithm_name(algo), threads, d->dims, d->n);
	bp_world_def def = bp_world_def_default();
	def.dims = d->dims;
	def.algorithm = algo;
	def.thread_count = threads;
	def.cell_size = d->cell_size;
	def.canonical_pairs = d->canonical;
	bp_world *world;
	bp_status s = bp_world_create(&def, &world);
	FUZZ_CHECK(s == BP_OK, "%s: create: %s", what, bp_status_string(s));
	bp_bounds_arrays arrays = {d->soa[0], d->soa[1], d->soa[2], d->soa[3], d->soa[4], d->soa[5]};
	bp_entity_def common = bp_entity_def_default();
	if (d->n) {
		// Filters differ per box, so bulk-create and then set each entity's filter and kind.
		bp_entity handles[MAX_BOXES];
		s = bp_world_create_entities(world, d->n, &arrays, &common, handles);
		FUZZ_CHECK(s == BP_OK, "%s: create_entities: %s", what, bp_world_last_error(world));
		for (uint32_t i = 0; i < d->n; ++i) {
			const fuzz_box *b = &d->boxes[i];
			FUZZ_CHECK(bp_entity_set_filter(world, handles[i], b->category, b->mask) == BP_OK, "%s: filter", what);
			FUZZ_CHECK(bp_entity_set_kind(world, handles[i], b->is_static ? BP_KIND_STATIC : BP_KIND_DYNAMIC) ==
					BP_OK,
				"%s: kind", what);
		}
	}
	s = bp_world_step(world);
	FUZZ_CHECK(s == BP_OK, "%s: step: %s: %s", what, bp_status_string(s), bp_world_last_error(world));
	size_t got_count;
	const bp_pair *got = bp_world_pairs(world, &got_count);
	fuzz_expect_pairs(got, got_count, want, want_count, d->n, what);
	if (d->canonical)
		for (size_t i = 1; i < got_count; ++i)
			FUZZ_CHECK(fuzz_pair_compare(&got[i - 1], &got[i]) < 0, "%s: canonical pairs out of order at %zu", what,
				i);
	bp_pair *copy = malloc((got_count + 1) * sizeof *copy);
	FUZZ_CHECK(copy, "out of memory");
	if (got_count)
		memcpy(copy, got, got_count * sizeof *copy);
	// A second step of the unchanged world reuses the index: same list again.
	FUZZ_CHECK(bp_world_step(world) == BP_OK, "%s: second step", what);
	size_t again_count;
	const bp_pair *again = bp_world_pairs(world, &again_count);
	FUZZ_CHECK(again_count == got_count && (got_count == 0 || memcmp(again, copy, got_count * sizeof *copy) == 0),
		"%s: second step of the same world differs", what);
	bp_world_destroy(world);
	*count = got_count;
	return copy;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_use_malloc();
	int64_t start_bytes = bp_allocated_bytes();
	fuzz_reader r = {data, size, 0};
	static decoded d;
	decode(&r, &d);
	size_t want_count;
	bp_pair *want = fuzz_oracle_pairs(d.boxes, d.n, d.dims, &want_count);
	for (int algo = 0; algo < BP_ALGO_COUNT; ++algo) {
		if (!bp_algorithm_available((bp_algorithm)algo))
			continue;
		size_t count1, count2;
		bp_pair *one = run_world(&d, (bp_algorithm)algo, 1, want, want_count, &count1);
		bp_pair *two = run_world(&d, (bp_algorithm)algo, 2, want, want_count, &count2);
		FUZZ_CHECK(count1 == count2 && (count1 == 0 || memcmp(one, two, count1 * sizeof *one) == 0),
			"%s: pair list differs between 1 and 2 threads", bp_algorithm_name((bp_algorithm)algo));
		free(one);
		free(two);
	}
	free(want);
	FUZZ_CHECK(bp_allocated_bytes() == start_bytes, "leak: %lld bytes",
		(long long)(bp_allocated_bytes() - start_bytes));
	return 0;
}
