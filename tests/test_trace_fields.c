// SPDX-License-Identifier: MIT
// The header and trailer, one field at a time: in a trace the writer wrote, each field is set
// to values around its own and at the edges of its type, the index checksum made to match, and
// the file must be refused with a message naming the field, or read exactly as the original
// (its states checked against the writer's history, not the reader). No reading may allocate
// more than the original's reading did, give or take: a trailer field must not size memory.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capped_heap.h"
#include "tmpfiles.h"
#include "trace_bytes.h"
#include "trace_history.h"

static void make_tmp_dir(void) { test_tmp_dir_make("bp_trace_fields_"); }

TestSuite(trace_fields, .init = make_tmp_dir, .fini = test_tmp_dir_remove, .timeout = 120);

/// A small 3D trace with keyframes (after frames 2, 4, 6 and 8), and its bytes.
typedef struct written_trace {
	trace_history h;
	uint8_t *bytes;
	size_t size;
} written_trace;

static written_trace write_trace(void)
{
	written_trace t;
	const char *path = test_tmp_path("original.bpt");
	trace_history_write(path, 3, 8, 9, 2, 31, &t.h);
	t.bytes = (uint8_t *)test_read_file(path, &t.size);
	return t;
}

static void free_trace(written_trace *t)
{
	trace_history_free(&t->h);
	free(t->bytes);
}

/// Writes the bytes to `path` and returns it.
static const char *write_file(const char *path, const uint8_t *bytes, size_t size)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(bytes, 1, size, f), size);
	cr_assert_eq(fclose(f), 0);
	return path;
}

/// Why a read stopped: BP_OK when every frame replayed and every seek gave the history's state.
typedef struct read_outcome {
	bp_status status;
	char message[512];
} read_outcome;

static read_outcome refused(bp_status status, const char *message)
{
	read_outcome o = {.status = status};
	snprintf(o.message, sizeof o.message, "%s", message);
	return o;
}

/// Opens the file, replays every frame, then seeks to each from the last back to the first,
/// each state checked against the history.
static read_outcome read_against_history(const char *path, const trace_history *h)
{
	bp_trace_reader *r = NULL;
	bp_status status = bp_trace_reader_open(path, &r);
	if (status != BP_OK)
		return refused(status, bp_trace_open_error());
	cr_assert_eq(bp_trace_reader_info(r).frame_count, h->frames, "a trace that opens has the frames written");
	bp_trace_frame f;
	for (uint32_t k = 0; status == BP_OK && k < h->frames; ++k)
		if ((status = bp_trace_reader_next(r, &f)) == BP_OK) {
			bp_trace_state s = bp_trace_reader_state(r);
			trace_history_expect_state(h, k, &s);
		}
	for (uint32_t k = h->frames; status == BP_OK && k-- > 0;)
		if ((status = bp_trace_reader_seek(r, k)) == BP_OK) {
			bp_trace_state s = bp_trace_reader_state(r);
			trace_history_expect_state(h, k, &s);
		}
	read_outcome o = refused(status, status == BP_OK ? "" : bp_trace_reader_error(r));
	bp_trace_reader_close(r);
	return o;
}

/// The bytes the original's reading held at most, under a cap no reading should come near.
static int64_t original_peak(const written_trace *t)
{
	capped_heap_reset();
	read_outcome o = read_against_history(write_file(test_tmp_path("peak.bpt"), t->bytes, t->size), &t->h);
	cr_assert_eq(o.status, BP_OK, "%s", o.message);
	return capped_heap_peak();
}

/// Values around `original` and at the edges of a field `width` bytes wide, each bit flipped too.
static size_t candidate_values(uint64_t original, int width, uint64_t *out)
{
	const uint64_t top = width == 8 ? UINT64_MAX : UINT32_MAX;
	const uint64_t fixed[] = {0, 1, 2, 3, 4, 23, 24, 25, 0x100, 0x10000, top >> 1, (top >> 1) + 1, top - 1, top,
		original - 1, original + 1, original - 16, original + 16, original * 2, original / 2, original + 0x100000000u};
	size_t n = 0;
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i)
		out[n++] = fixed[i] & top;
	for (int bit = 0; bit < 8 * width; ++bit)
		out[n++] = original ^ (UINT64_C(1) << bit);
	return n;
}

/// Each value of the field: refused, naming the file and the field, or read as the original.
/// Returns how many were refused.
static int mutate_field(const written_trace *t, const trace_field *field, int64_t peak_bound)
{
	uint8_t *bytes = malloc(t->size);
	const uint64_t original = trace_field_get(t->bytes, t->size, field);
	uint64_t values[96];
	const size_t n = candidate_values(original, field->width, values);
	int refusals = 0;
	const char *path = test_tmp_path("mutated.bpt");
	for (size_t i = 0; i < n; ++i) {
		if (values[i] == original)
			continue;
		memcpy(bytes, t->bytes, t->size);
		trace_field_set(bytes, t->size, field, values[i]);
		write_file(path, bytes, t->size);
		capped_heap_reset();
		read_outcome o = read_against_history(path, &t->h);
		cr_assert(capped_heap_refusals() == 0 && capped_heap_peak() <= peak_bound,
			"%s %#llx: the reading held %lld bytes (the original's, doubled: %lld)", field->name,
			(unsigned long long)values[i], (long long)capped_heap_peak(), (long long)peak_bound);
		if (o.status == BP_OK)
			continue;
		++refusals;
		cr_assert(o.status == BP_ERR_PARSE && strstr(o.message, path) && strstr(o.message, field->named),
			"%s %#llx: %s: '%s' does not name the file and '%s'", field->name, (unsigned long long)values[i],
			bp_status_string(o.status), o.message, field->named);
	}
	free(bytes);
	return refusals;
}

Test(trace_fields, each_header_and_trailer_field_is_refused_by_name_or_harmless)
{
	capped_heap_install(INT64_C(1) << 30);
	written_trace t = write_trace();
	const int64_t peak_bound = 2 * original_peak(&t);
	for (size_t i = 0; i < trace_field_count; ++i) {
		const trace_field *field = &trace_fields[i];
		const int refusals = mutate_field(&t, field, peak_bound);
		cr_assert_gt(refusals, 0, "%s: no value was refused", field->name);
	}
	free_trace(&t);
	cr_assert_eq(bp_allocated_bytes(), 0);
	capped_heap_remove();
}

/// The trace with one trailer field set (checksum matched), opened: the status and message.
static bp_status open_with(const written_trace *t, const char *field, uint64_t value)
{
	uint8_t *bytes = malloc(t->size);
	memcpy(bytes, t->bytes, t->size);
	trace_field_set(bytes, t->size, trace_field_named(field), value);
	bp_trace_reader *r = NULL;
	bp_status status = bp_trace_reader_open(write_file(test_tmp_path("set.bpt"), bytes, t->size), &r);
	bp_trace_reader_close(r);
	free(bytes);
	return status;
}

// The tracker's case: every command that made a world from this trace asked for 4,294,967,294
// entities. No file's records can create that many, so the reader refuses it on open.
Test(trace_fields, max_entities_0xFFFFFFFF_is_refused_on_open)
{
	written_trace t = write_trace();
	cr_assert_eq(open_with(&t, "max_entities", UINT32_MAX), BP_ERR_PARSE);
	cr_assert(strstr(bp_trace_open_error(), "trailer: max_entities 4294967295; the records create at most"), "%s",
		bp_trace_open_error());
	free_trace(&t);
}

// max_entities is the most live at once: above it, as far as the records could create, it
// reads the same (and is reported as written); below it, the first frame past it is refused.
Test(trace_fields, max_entities_bounds_what_frames_reach)
{
	written_trace t = write_trace();
	const trace_field *field = trace_field_named("max_entities");
	const uint32_t most = (uint32_t)trace_field_get(t.bytes, t.size, field);
	uint32_t first_past = 0;
	while (t.h.counts[first_past] < most)
		++first_past;
	uint8_t *bytes = malloc(t.size);
	const char *path = test_tmp_path("most.bpt");
	for (uint32_t value = most - 1; value <= most + 1; value += 2) {
		memcpy(bytes, t.bytes, t.size);
		trace_field_set(bytes, t.size, field, value);
		write_file(path, bytes, t.size);
		read_outcome o = read_against_history(path, &t.h);
		if (value >= most) {
			cr_assert_eq(o.status, BP_OK, "%s", o.message);
			continue;
		}
		char says[128];
		snprintf(says, sizeof says, "frame %u: %u entities live after it, more than the trailer's max_entities %u",
			first_past, most, value);
		cr_assert(o.status == BP_ERR_PARSE && strstr(o.message, says), "'%s' does not say '%s'", o.message, says);
	}
	free(bytes);
	free_trace(&t);
}

// frame_count and index_offset changed together so that they still meet at the trailer: an
// index of 2^32 - 1 frames would start before the file does (index_offset wraps), and reading
// it would ask for 64 GiB.
Test(trace_fields, an_index_larger_than_the_file_is_refused_before_it_is_read)
{
	capped_heap_install(INT64_C(1) << 30);
	written_trace t = write_trace();
	uint8_t *bytes = malloc(t.size);
	memcpy(bytes, t.bytes, t.size);
	const uint64_t index_bytes = 16 * (uint64_t)UINT32_MAX;
	trace_field_set(bytes, t.size, trace_field_named("frame_count"), UINT32_MAX);
	trace_field_set(bytes, t.size, trace_field_named("index_offset"), t.size - TRACE_TRAILER_BYTES - index_bytes);
	capped_heap_reset();
	bp_trace_reader *r = NULL;
	cr_assert_eq(bp_trace_reader_open(write_file(test_tmp_path("wrapped.bpt"), bytes, t.size), &r), BP_ERR_PARSE);
	cr_assert(strstr(bp_trace_open_error(), "trailer: frame_count 4294967295 needs an index of"), "%s",
		bp_trace_open_error());
	cr_assert(capped_heap_refusals() == 0 && capped_heap_peak() < 65536, "%lld bytes", (long long)capped_heap_peak());
	free(bytes);
	free_trace(&t);
	capped_heap_remove();
}

// A header whose version or dims differ from the file's records opens (the header carries no
// checksum) but its first frame is refused by the layout it names.
Test(trace_fields, a_version_or_dims_the_records_were_not_written_in_is_named)
{
	written_trace t = write_trace();
	const struct {
		const char *field;
		uint32_t value;
		const char *says;
	} cases[] = {{"version", 1, "frame 0: its counts make"}, {"dims", 2, "frame 0: its counts make"}};
	const char *path = test_tmp_path("layout.bpt");
	for (size_t i = 0; i < 2; ++i) {
		uint8_t *bytes = malloc(t.size);
		memcpy(bytes, t.bytes, t.size);
		trace_field_set(bytes, t.size, trace_field_named(cases[i].field), cases[i].value);
		read_outcome o = read_against_history(write_file(path, bytes, t.size), &t.h);
		cr_assert(o.status == BP_ERR_PARSE && strstr(o.message, cases[i].says), "%s", o.message);
		char named[64];
		snprintf(named, sizeof named, "%s %u", cases[i].field, cases[i].value);
		cr_assert(strstr(o.message, named), "'%s' does not say '%s'", o.message, named);
		free(bytes);
	}
	free_trace(&t);
}
