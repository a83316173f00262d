// SPDX-License-Identifier: MIT
// The radix sort (src/parallel/sort.c) against qsort with an explicit stability tie-break,
// the float key map against float comparison, and thread-count independence.
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "base/bits.h"
#include "parallel/pairs.h"
#include "parallel/sort.h"

// Reference: (key, input position) pairs sorted by qsort on key, then position,
// which is what a stable sort must produce.
typedef struct ref_item {
	uint32_t key;
	uint32_t position;
	uint32_t index;
} ref_item;

static int compare_ref(const void *a, const void *b)
{
	const ref_item *p = a, *q = b;
	if (p->key != q->key)
		return p->key < q->key ? -1 : 1;
	return p->position < q->position ? -1 : p->position > q->position;
}

// Sorts items (given) with the radix sort on `threads` threads and checks the
// result against the stable qsort reference, item by item.
static void check_sort(const bpi_sort_item *input, uint32_t n, int threads)
{
	ref_item *ref = malloc((n ? n : 1) * sizeof *ref);
	bpi_sort_item *items = malloc((n ? n : 1) * sizeof *items);
	cr_assert(ref && items);
	for (uint32_t i = 0; i < n; ++i) {
		ref[i] = (ref_item){bpi_sort_item_key(input[i]), i, bpi_sort_item_index(input[i])};
		items[i] = input[i];
	}
	qsort(ref, n, sizeof *ref, compare_ref);
	bpi_radix_scratch scratch = {0};
	cr_assert_eq(bpi_radix_sort_items(&scratch, items, n, threads), BP_OK);
	for (uint32_t i = 0; i < n; ++i) {
		cr_assert_eq(bpi_sort_item_key(items[i]), ref[i].key, "n=%u threads=%d: key at %u", n, threads, i);
		cr_assert_eq(bpi_sort_item_index(items[i]), ref[i].index, "n=%u threads=%d: index at %u (stability)", n,
			threads, i);
	}
	bpi_radix_sort_free(&scratch);
	free(ref);
	free(items);
}

// Items with keys from floats and indices scrambled, so ties are not already in
// index order and stability is visible.
static bpi_sort_item *items_from_floats(const float *values, uint32_t n)
{
	bpi_sort_item *items = malloc((n ? n : 1) * sizeof *items);
	cr_assert_not_null(items);
	for (uint32_t i = 0; i < n; ++i)
		items[i] = bpi_sort_item_make(bpi_radix_float_key(values[i]), (i * 2654435761u) ^ 0x5bd1e995u);
	return items;
}

static const float special[] = {
	-INFINITY, -FLT_MAX, -1e30f, -3e6f, -1.0f, -FLT_MIN, -1e-45f /* largest negative denormal */,
	-0.0f, 0.0f, 1e-45f /* smallest denormal */, 1e-40f, FLT_MIN, 0.5f, 1.0f, 1.0000001f, 3e6f, FLT_MAX,
	INFINITY,
};
#define SPECIAL_COUNT (sizeof special / sizeof special[0])

Test(sort, float_key_preserves_order)
{
	// The list is in increasing order, with -0.0 placed before +0.0 (the map
	// orders them so; they compare equal as floats).
	for (size_t a = 0; a < SPECIAL_COUNT; ++a) {
		for (size_t b = 0; b < SPECIAL_COUNT; ++b) {
			uint32_t ka = bpi_radix_float_key(special[a]), kb = bpi_radix_float_key(special[b]);
			cr_assert_eq(a < b, ka < kb, "%g (%zu) vs %g (%zu)", special[a], a, special[b], b);
			if (special[a] < special[b])
				cr_assert_lt(ka, kb);
		}
	}
}

Test(sort, special_values_small_sizes)
{
	test_rng rng = {7};
	float values[200] = {0};
	for (uint32_t n = 0; n <= 200; n += n < 80 ? 1 : 17) {
		for (uint32_t i = 0; i < n; ++i)
			values[i] = special[test_rng_below(&rng, SPECIAL_COUNT)];
		bpi_sort_item *items = items_from_floats(values, n);
		check_sort(items, n, 1);
		check_sort(items, n, 2);
		free(items);
	}
}

Test(sort, many_equal_keys_are_stable, .timeout = 60)
{
	// 100003 items (several chunks, not a multiple of anything) with 5 distinct keys.
	const uint32_t n = 100003;
	float *values = malloc(n * sizeof *values);
	test_rng rng = {11};
	for (uint32_t i = 0; i < n; ++i)
		values[i] = special[5 + test_rng_below(&rng, 5)];
	bpi_sort_item *items = items_from_floats(values, n);
	check_sort(items, n, 1);
	check_sort(items, n, 3);
	free(items);
	free(values);
}

Test(sort, all_keys_equal_skips_every_pass, .timeout = 60)
{
	const uint32_t n = 70000;
	float *values = malloc(n * sizeof *values);
	for (uint32_t i = 0; i < n; ++i)
		values[i] = 2.5f;
	bpi_sort_item *items = items_from_floats(values, n);
	check_sort(items, n, 2);
	free(items);
	free(values);
}

Test(sort, keys_differing_in_low_digit_only, .timeout = 60)
{
	// Consecutive floats above 1.0: only the lowest 11-bit digit varies, so the
	// upper passes are skipped and the single pass must still leave items sorted.
	const uint32_t n = 50000;
	float *values = malloc(n * sizeof *values);
	test_rng rng = {3};
	for (uint32_t i = 0; i < n; ++i) {
		uint32_t u = 0x3f800000u + test_rng_below(&rng, 1500);
		memcpy(&values[i], &u, sizeof u);
	}
	bpi_sort_item *items = items_from_floats(values, n);
	check_sort(items, n, 2);
	free(items);
	free(values);
}

Test(sort, random_floats_many_sizes, .timeout = 120)
{
	const uint32_t sizes[] = {65, 100, 1000, 4097, 32768, 32769, 65536 + 7, 200000};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
		uint32_t n = sizes[s];
		float *values = malloc(n * sizeof *values);
		test_rng rng = {100 + s};
		for (uint32_t i = 0; i < n; ++i)
			values[i] = test_rng_below(&rng, 50) == 0 ? special[test_rng_below(&rng, SPECIAL_COUNT)]
								  : test_rng_float(&rng, -3e6f, 3e6f);
		bpi_sort_item *items = items_from_floats(values, n);
		check_sort(items, n, 1);
		check_sort(items, n, 2);
		free(items);
		free(values);
	}
}

Test(sort, million_identical_for_threads_1_2_3_8, .timeout = 120)
{
	const uint32_t n = 1000000;
	float *values = malloc(n * sizeof *values);
	test_rng rng = {42};
	for (uint32_t i = 0; i < n; ++i) // a coarse grid of values: many ties across chunks
		values[i] = (float)test_rng_below(&rng, 20000) * 0.25f - 2500.0f;
	bpi_sort_item *input = items_from_floats(values, n);
	check_sort(input, n, 1);
	bpi_sort_item *first = malloc(n * sizeof *first);
	bpi_sort_item *again = malloc(n * sizeof *again);
	bpi_radix_scratch scratch = {0};
	memcpy(first, input, n * sizeof *first);
	cr_assert_eq(bpi_radix_sort_items(&scratch, first, n, 1), BP_OK);
	const int threads[] = {2, 3, 8};
	for (size_t t = 0; t < 3; ++t) {
		memcpy(again, input, n * sizeof *again);
		cr_assert_eq(bpi_radix_sort_items(&scratch, again, n, threads[t]), BP_OK);
		cr_assert_eq(memcmp(first, again, n * sizeof *first), 0, "threads=%d differs from 1 thread", threads[t]);
	}
	bpi_radix_sort_free(&scratch);
	free(first);
	free(again);
	free(input);
	free(values);
}

Test(sort, reused_scratch_allocates_nothing)
{
	const uint32_t n = 40000;
	float *values = malloc(n * sizeof *values);
	test_rng rng = {5};
	for (uint32_t i = 0; i < n; ++i)
		values[i] = test_rng_float(&rng, -1.0f, 1.0f);
	bpi_sort_item *items = items_from_floats(values, n);
	bpi_radix_scratch scratch = {0};
	cr_assert_eq(bpi_radix_sort_items(&scratch, items, n, 2), BP_OK);
	int64_t before = bp_allocated_bytes();
	free(items);
	items = items_from_floats(values, n);
	cr_assert_eq(bpi_radix_sort_items(&scratch, items, n, 2), BP_OK);
	cr_assert_eq(bpi_radix_sort_items(&scratch, items, n / 2, 2), BP_OK);
	cr_assert_eq(bp_allocated_bytes(), before, "a sort that fits the scratch allocated");
	bpi_radix_sort_free(&scratch);
	free(items);
	free(values);
}

static int compare_float_values(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

static int compare_double_values(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

// bpi_select_* against qsort: every k of arrays with few distinct values (many
// ties), sorted and reversed runs, and infinities.
Test(sort, select_matches_sorted_order, .timeout = 60)
{
	test_rng rng = {77};
	float v[300], work[300], sorted[300];
	double dv[300], dwork[300], dsorted[300];
	for (int round = 0; round < 200; ++round) {
		size_t n = 1 + test_rng_below(&rng, 300);
		uint32_t distinct = 1 + test_rng_below(&rng, round % 2 ? 4 : 1000);
		for (size_t i = 0; i < n; ++i) {
			v[i] = (float)test_rng_below(&rng, distinct) * 0.25f;
			if (round % 7 == 3)
				v[i] = (float)i; // ascending
			if (round % 7 == 4)
				v[i] = (float)(n - i); // descending
			if (round % 11 == 5 && i % 17 == 0)
				v[i] = i % 2 ? INFINITY : -INFINITY;
			dv[i] = (double)v[i] * 1.5;
		}
		memcpy(sorted, v, n * sizeof *v);
		qsort(sorted, n, sizeof *sorted, compare_float_values);
		memcpy(dsorted, dv, n * sizeof *dv);
		qsort(dsorted, n, sizeof *dsorted, compare_double_values);
		for (size_t k = 0; k < n; ++k) {
			memcpy(work, v, n * sizeof *v);
			cr_assert_eq(bpi_select_float(work, n, k), sorted[k], "round %d n=%zu k=%zu", round, n, k);
			memcpy(dwork, dv, n * sizeof *dv);
			cr_assert_eq(bpi_select_double(dwork, n, k), dsorted[k], "round %d n=%zu k=%zu", round, n, k);
		}
	}
}

// ---- pairs by (lo, hi) ------------------------------------------------------------

static int compare_pair(const void *a, const void *b)
{
	const bp_pair *p = a, *q = b;
	if (p->lo != q->lo)
		return p->lo < q->lo ? -1 : 1;
	return (p->hi > q->hi) - (p->hi < q->hi);
}

// Index widths from 0 to 32 bits on each side (the digits the sort takes follow
// them), with repeats, against qsort.
Test(sort, pairs_canonical_matches_qsort_at_every_index_width, .timeout = 60)
{
	uint64_t rng = 7;
	bp_pair *scratch = malloc(3000 * sizeof *scratch);
	cr_assert(scratch);
	for (int lo_bits = 0; lo_bits <= 32; lo_bits += 4)
		for (int hi_bits = 0; hi_bits <= 32; hi_bits += 8)
			for (size_t n = 0; n < 3000; n = n * 3 + 1) {
				bp_pair *pairs = malloc((n ? n : 1) * sizeof *pairs), *ref = malloc((n ? n : 1) * sizeof *ref);
				cr_assert(pairs && ref);
				for (size_t i = 0; i < n; ++i) {
					rng = bp_splitmix64(rng);
					uint64_t lo_mask = lo_bits == 32 ? UINT32_MAX : ((uint64_t)1 << lo_bits) - 1;
					uint64_t hi_mask = hi_bits == 32 ? UINT32_MAX : ((uint64_t)1 << hi_bits) - 1;
					pairs[i] = (bp_pair){(uint32_t)(rng & lo_mask), (uint32_t)((rng >> 32) & hi_mask)};
					if (i && (rng & 7) == 0)
						pairs[i] = pairs[i - 1]; // repeats
					ref[i] = pairs[i];
				}
				qsort(ref, n, sizeof *ref, compare_pair);
				cr_assert(bpi_pairs_sort_canonical(pairs, n, scratch, 1));
				cr_assert(n == 0 || memcmp(pairs, ref, n * sizeof *ref) == 0, "lo %d bits, hi %d bits, %zu pairs",
					lo_bits, hi_bits, n);
				free(pairs);
				free(ref);
			}
	free(scratch);
}

// Sparse lists, which sort by lo first and then put each lo's pairs in order of hi:
// pairs written by entity as a step writes them (each lo's run in order of hi, runs
// shuffled), runs reversed (a few moves each, within the budget), and one lo holding
// a reversed run longer than the budget of moves allows (the whole key takes over),
// against qsort.
Test(sort, pairs_canonical_sparse_lists_with_runs_of_one_lo, .timeout = 60)
{
	uint64_t rng = 13;
	const size_t most = 40000;
	bp_pair *pairs = malloc(most * sizeof *pairs), *ref = malloc(most * sizeof *ref),
		*scratch = malloc(most * sizeof *scratch);
	cr_assert(pairs && ref && scratch);
	for (int shape = 0; shape < 3; ++shape)
		for (size_t n = 2; n <= most; n *= 3) {
			const size_t run = shape == 2 ? n / 2 + 1 : 1 + n % 7;
			uint32_t lo = 0;
			for (size_t i = 0; i < n; ++i) {
				size_t at = i % run;
				if (at == 0) {
					rng = bp_splitmix64(rng);
					lo = (uint32_t)(rng % (1u << 20));
				}
				uint32_t hi = shape == 0 ? (uint32_t)at : (uint32_t)(run - at);
				pairs[i] = (bp_pair){lo, (1u << 20) + 3 * hi + (uint32_t)(rng >> 60)};
				ref[i] = pairs[i];
			}
			qsort(ref, n, sizeof *ref, compare_pair);
			cr_assert(bpi_pairs_sort_canonical(pairs, n, scratch, 1));
			cr_assert(memcmp(pairs, ref, n * sizeof *ref) == 0, "shape %d, %zu pairs, runs of %zu", shape, n, run);
		}
	free(pairs);
	free(ref);
	free(scratch);
}

// Lists large enough to go by buckets of lo: every lo width the buckets take and
// the ones past them, lo values with many pairs (sorted by comparison), repeats,
// and hi below and above lo's width; against qsort. Once as the sort chooses, which
// leaves sparse lists of wide lo to LSD, and once with every list it can by buckets.
Test(sort, pairs_canonical_by_buckets_matches_qsort, .timeout = 120)
{
	uint64_t rng = 11;
	const size_t n = 150000;
	bp_pair *pairs = malloc(n * sizeof *pairs), *ref = malloc(n * sizeof *ref), *scratch = malloc(n * sizeof *scratch);
	cr_assert(pairs && ref && scratch);
	for (int forced = 0; forced < 2; ++forced) {
		for (int lo_bits = 8; lo_bits <= 32; lo_bits += 3)
			for (int hi_bits = 4; hi_bits <= 32; hi_bits += 14)
				for (int crowded = 0; crowded < 2; ++crowded) {
					uint64_t lo_mask = lo_bits == 32 ? UINT32_MAX : ((uint64_t)1 << lo_bits) - 1;
					uint64_t hi_mask = hi_bits == 32 ? UINT32_MAX : ((uint64_t)1 << hi_bits) - 1;
					for (size_t i = 0; i < n; ++i) {
						rng = bp_splitmix64(rng);
						pairs[i] = (bp_pair){(uint32_t)(rng & lo_mask), (uint32_t)((rng >> 32) & hi_mask)};
						if (crowded && (rng & 3) == 0)
							pairs[i].lo = (uint32_t)(lo_mask / 3); // one lo with a quarter of the pairs
						if (i && ((rng >> 29) & 7) == 0)
							pairs[i] = pairs[i - 1];
						ref[i] = pairs[i];
					}
					qsort(ref, n, sizeof *ref, compare_pair);
					bpi_pairs_set_bucket_pairs_min(forced ? 0 : BPI_PAIRS_BUCKET_PAIRS_MIN);
					cr_assert(bpi_pairs_sort_canonical(pairs, n, scratch, 4));
					bpi_pairs_set_bucket_pairs_min(BPI_PAIRS_BUCKET_PAIRS_MIN);
					cr_assert(memcmp(pairs, ref, n * sizeof *ref) == 0, "lo %d bits, hi %d bits, crowded %d, forced %d",
						lo_bits, hi_bits, crowded, forced);
				}
	}
	free(pairs);
	free(ref);
	free(scratch);
}

static void *refuse_alloc(size_t size, size_t align, void *user)
{
	(void)size;
	(void)align;
	(void)user;
	return NULL;
}

static void refuse_free(void *ptr, size_t size, size_t align, void *user)
{
	(void)size;
	(void)align;
	(void)user;
	cr_assert_null(ptr, "nothing was allocated, so nothing is freed");
}

// The public sort, on either side of its switch to the linear sort, with lo above
// hi in some pairs (the caller's array need not be canonical), and with its buffer
// refused: always qsort's order.
Test(sort, public_pairs_sort_matches_qsort_with_and_without_its_buffer, .timeout = 60)
{
	const size_t sizes[] = {0, 1, 2, 100, 4095, 4096, 4097, 150000};
	const bp_allocator refusing = {refuse_alloc, refuse_free, NULL};
	uint64_t rng = 13;
	for (int refuse = 0; refuse < 2; ++refuse)
		for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
			size_t n = sizes[s];
			bp_pair *pairs = malloc((n ? n : 1) * sizeof *pairs), *ref = malloc((n ? n : 1) * sizeof *ref);
			cr_assert(pairs && ref);
			for (size_t i = 0; i < n; ++i) {
				rng = bp_splitmix64(rng);
				pairs[i] = (bp_pair){(uint32_t)(rng % 50000), (uint32_t)((rng >> 32) % 50000)};
				ref[i] = pairs[i];
			}
			qsort(ref, n, sizeof *ref, compare_pair);
			bp_set_allocator(refuse ? &refusing : NULL);
			bp_pairs_sort(pairs, n);
			bp_set_allocator(NULL);
			cr_assert(n == 0 || memcmp(pairs, ref, n * sizeof *ref) == 0, "%zu pairs, buffer %s", n,
				refuse ? "refused" : "given");
			free(pairs);
			free(ref);
		}
	cr_assert_eq(bp_allocated_bytes(), 0);
}

// ---- merging two sorted lists ------------------------------------------------------------

/// The merge of the two lists, one pair at a time, leaving out a's pairs marked in drop.
static size_t merge_by_hand(const bp_pair *a, size_t na, const bp_pair *b, size_t nb, const uint64_t *drop,
	bp_pair *out)
{
	size_t i = 0, j = 0, k = 0;
	while (i < na || j < nb) {
		bool take_a = j == nb || (i < na && compare_pair(&a[i], &b[j]) < 0);
		if (!take_a)
			out[k++] = b[j++];
		else if (drop && (bpi_bit_get(drop, a[i].lo) || bpi_bit_get(drop, a[i].hi)))
			++i;
		else
			out[k++] = a[i++];
	}
	return k;
}

// Lists of many chunks of the first list and none, the second all before, all after or
// between the first's pairs, with no pairs left out, a few and most (so that chunks end on
// pairs left out), on 1, 2 and 5 threads: the same pairs as merged by hand, and nothing
// written past them.
Test(sort, pairs_merge_matches_a_merge_by_hand, .timeout = 120)
{
	enum { ENTITIES = 3000, MOST = 300000 };
	bp_pair *all = malloc(2 * MOST * sizeof *all), *a = malloc(MOST * sizeof *a), *b = malloc(MOST * sizeof *b);
	bp_pair *got = malloc(2 * MOST * sizeof *got), *want = malloc(2 * MOST * sizeof *want);
	bp_pair *scratch = malloc(2 * MOST * sizeof *scratch);
	// A repeat's hi may pass ENTITIES.
	uint64_t *drop = malloc(bpi_bit_words(ENTITIES + 2 * MOST) * sizeof *drop);
	size_t *counts = malloc(bpi_pairs_merge_chunks(MOST) * sizeof *counts);
	cr_assert(all && a && b && got && want && scratch && drop && counts);
	uint64_t rng = 5;
	const size_t sizes[][2] = {{0, 0}, {0, 1000}, {1000, 0}, {200000, 30000}, {65536, 1}, {65537, 65536},
		{280000, 5000}};
	for (size_t t = 0; t < sizeof sizes / sizeof *sizes; ++t)
		for (int layout = 0; layout < 3; ++layout)
			for (int dropping = 0; dropping < 3; ++dropping) {
				const size_t na = sizes[t][0], nb = sizes[t][1];
				// Distinct pairs, sorted; a and b drawn from them (layout 0: mixed; 1: b below a; 2: b above).
				for (size_t i = 0; i < na + nb; ++i) {
					rng = bp_splitmix64(rng);
					uint32_t lo = (uint32_t)(rng % (ENTITIES - 1));
					all[i] = (bp_pair){lo, lo + 1 + (uint32_t)((rng >> 32) % (ENTITIES - 1 - lo))};
				}
				cr_assert(bpi_pairs_sort_canonical(all, na + nb, scratch, 1));
				for (size_t i = 1; i < na + nb; ++i) // distinct: a repeat moves past its predecessor
					if (compare_pair(&all[i], &all[i - 1]) <= 0)
						all[i] = (bp_pair){all[i - 1].lo, all[i - 1].hi + 1};
				size_t ia = 0, ib = 0;
				for (size_t i = 0; i < na + nb; ++i) {
					bool to_b = layout == 1 ? i < nb : layout == 2 ? i >= na : (bp_splitmix64(rng + i) % (na + nb)) < nb;
					if ((to_b && ib < nb) || ia == na)
						b[ib++] = all[i];
					else
						a[ia++] = all[i];
				}
				const uint64_t one_in = dropping == 1 ? 50 : 2;
				for (uint32_t e = 0; e < ENTITIES + 2 * MOST; ++e)
					bpi_bits_fill(drop, e, e + 1, dropping && bp_splitmix64(rng ^ e) % one_in == 0);
				size_t n_want = merge_by_hand(a, na, b, nb, dropping ? drop : NULL, want);
				for (int threads = 1; threads <= 5; threads += threads == 1 ? 1 : 3) {
					const bp_pair unwritten = {UINT32_MAX, UINT32_MAX};
					for (size_t i = 0; i < na + nb; ++i)
						got[i] = unwritten;
					size_t n_got = bpi_pairs_merge(a, na, b, nb, dropping ? drop : NULL, got, counts, threads);
					cr_assert(n_got == n_want && (n_got == 0 || memcmp(got, want, n_got * sizeof *got) == 0),
						"%zu + %zu pairs, layout %d, dropping %d, %d threads: %zu pairs, want %zu", na, nb, layout,
						dropping, threads, n_got, n_want);
					for (size_t i = n_got; i < na + nb; ++i)
						cr_assert(got[i].lo == unwritten.lo && got[i].hi == unwritten.hi,
							"%zu + %zu pairs, layout %d, dropping %d, %d threads: slot %zu past the %zu pairs written",
							na, nb, layout, dropping, threads, i, n_got);
				}
			}
	free(all), free(a), free(b), free(got), free(want), free(scratch), free(drop), free(counts);
}

// The bit sets the merge leaves pairs out by: ranges filled on and off, within one word,
// across words and to their ends, against a byte per index.
Test(sort, bit_set_fill_sets_its_range_alone)
{
	enum { BITS = 300 };
	uint64_t bits[(BITS + 63) / 64];
	bool want[BITS];
	uint64_t rng = 11;
	for (int on = 0; on < 2; ++on) {
		memset(bits, on ? 0 : 0xff, sizeof bits);
		memset(want, !on, sizeof want);
		for (int k = 0; k < 200; ++k) {
			rng = bp_splitmix64(rng);
			uint32_t from = (uint32_t)(rng % BITS), to = from + (uint32_t)((rng >> 32) % (BITS + 1 - from));
			bool value = k % 3 ? on : !on;
			bpi_bits_fill(bits, from, to, value);
			for (uint32_t i = from; i < to; ++i)
				want[i] = value;
			for (uint32_t i = 0; i < BITS; ++i)
				cr_assert_eq(bpi_bit_get(bits, i), want[i], "fill %u of [%u, %u) to %d: bit %u", k, from, to, value, i);
		}
	}
}
