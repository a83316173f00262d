// SPDX-License-Identifier: MIT
// bp_trace_reader: the header, trailer and index on open; frame records and keyframes on demand,
// each checked (sizes, checksum, values) before use; replay of frames into the reader's state.
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#include "trace/trace_format.h"
#include "trace/trace_read.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

bp_status bpi_trace_reader_fail(bp_trace_reader *r, bp_status status, const char *format, ...)
{
	char text[300];
	va_list args;
	va_start(args, format);
	vsnprintf(text, sizeof text, format, args);
	va_end(args);
	snprintf(r->error, sizeof r->error, "%s: %s", r->path, text);
	return status;
}

void bp_trace_reader_close(bp_trace_reader *r)
{
	if (!r)
		return;
	if (r->file)
		fclose(r->file);
	bpi_array_free(&r->index);
	bpi_array_free(&r->record);
	bpi_array_free(&r->destroys);
	bpi_array_free(&r->move_ids);
	bpi_array_free(&r->creates);
	bpi_array_free(&r->sets);
	for (int c = 0; c < 6; ++c) {
		bpi_array_free(&r->moves[c]);
		bpi_array_free(&r->run_bounds[c]);
	}
	bpi_trace_state_free(&r->state);
	bpi_trace_state_free(&r->before);
	bpi_array_free(&r->destroy_dense);
	bpi_array_free(&r->set_dense);
	bpi_array_free(&r->move_dense);
	bpi_array_free(&r->run_keys);
	bpi_free(r, sizeof *r);
}

/// Reads `size` bytes at `offset` into r->record.
static bp_status read_at(bp_trace_reader *r, uint64_t offset, size_t size, const char *what)
{
	if (!bpi_array_reserve(&r->record, size))
		return bpi_trace_reader_fail(r, BP_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", what, size);
	if (fseeko(r->file, (off_t)offset, SEEK_SET) != 0 || fread(r->record.data, 1, size, r->file) != size)
		return bpi_trace_reader_fail(r, BP_ERR_IO, "%s: cannot read %zu bytes at offset %llu%s%s", what, size,
			(unsigned long long)offset, ferror(r->file) ? ": " : "", ferror(r->file) ? strerror(errno) : "");
	return BP_OK;
}

// ---- opening --------------------------------------------------------------------------

static bp_status read_header(bp_trace_reader *r, uint64_t size)
{
	const uint64_t least = BPI_TRACE_HEADER_BYTES + BPI_TRACE_TRAILER_BYTES;
	if (size < 8)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE, "not a trace: %llu bytes, shorter than the magic",
			(unsigned long long)size);
	bp_status status = read_at(r, 0, 8, "header");
	if (status != BP_OK)
		return status;
	if (memcmp(r->record.data, BPI_TRACE_MAGIC, 8) != 0)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE, "not a trace: it does not start with the magic %s",
			BPI_TRACE_MAGIC);
	if (size < least)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE,
			"truncated: %llu bytes, less than a header and a trailer (%llu)", (unsigned long long)size,
			(unsigned long long)least);
	if ((status = read_at(r, 0, BPI_TRACE_HEADER_BYTES, "header")) != BP_OK)
		return status;
	const uint8_t *h = r->record.data;
	uint32_t version = bpi_trace_get32(h + 8), dims = bpi_trace_get32(h + 12);
	if (version < BPI_TRACE_OLDEST_VERSION || version > BP_TRACE_VERSION)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE, "trace format version %u; this library reads versions %u to %u",
			version, BPI_TRACE_OLDEST_VERSION, BP_TRACE_VERSION);
	if (dims != 2 && dims != 3)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE, "header: dims %u is not 2 or 3", dims);
	if (bpi_trace_get32(h + 16) || bpi_trace_get32(h + 20))
		return bpi_trace_reader_fail(r, BP_ERR_PARSE, "header: the flags and reserved words must be 0");
	r->version = version;
	r->dims = (int)dims;
	r->filter_words = bpi_trace_filter_words(version);
	return BP_OK;
}

/// Reads the trailer into r->record and its fields into the reader. The index must fill the
/// bytes between the records and the trailer exactly; index_offset is any 64-bit value in a
/// damaged file, so the check is made without sums that could wrap.
static bp_status read_trailer(bp_trace_reader *r, uint64_t size)
{
	bp_status status = read_at(r, size - BPI_TRACE_TRAILER_BYTES, BPI_TRACE_TRAILER_BYTES, "trailer");
	if (status != BP_OK)
		return status;
	const uint8_t *t = r->record.data;
	if (memcmp(t + 24, BPI_TRACE_END_MAGIC, 8) != 0)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE,
			"truncated: no trailer (%s) at the end; the file was cut short or its writer never closed",
			BPI_TRACE_END_MAGIC);
	r->index_offset = bpi_trace_get64(t);
	r->frame_count = bpi_trace_get32(t + 8);
	r->max_entities = bpi_trace_get32(t + 16);
	r->keyframe_interval = bpi_trace_get32(t + 20);
	const uint64_t index_bytes = (uint64_t)r->frame_count * BPI_TRACE_INDEX_ENTRY_BYTES;
	const uint64_t after_header = size - BPI_TRACE_HEADER_BYTES - BPI_TRACE_TRAILER_BYTES;
	if (index_bytes > after_header)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE,
			"trailer: frame_count %u needs an index of %llu bytes; the file holds %llu between its header and "
			"trailer: corrupt", r->frame_count, (unsigned long long)index_bytes, (unsigned long long)after_header);
	const uint64_t index_start = size - BPI_TRACE_TRAILER_BYTES - index_bytes;
	if (r->index_offset != index_start)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE,
			"trailer: index_offset %llu, where an index of frame_count %u frames ending at the trailer starts at "
			"%llu: truncated or corrupt", (unsigned long long)r->index_offset, r->frame_count,
			(unsigned long long)index_start);
	return BP_OK;
}

/// The counts the index checksum covers, checked against what the records before the index
/// can hold, so that no reader or host sizes anything by a count the file cannot reach: each
/// frame takes at least an empty record, and each entity live at once a create somewhere.
static bp_status check_counts(bp_trace_reader *r)
{
	const uint64_t records = r->index_offset - BPI_TRACE_HEADER_BYTES;
	const uint64_t frame_room = records / BPI_TRACE_FRAME_LEAST_BYTES;
	if (r->frame_count > frame_room)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE,
			"trailer: frame_count %u; the %llu bytes of records hold at most %llu frames: corrupt", r->frame_count,
			(unsigned long long)records, (unsigned long long)frame_room);
	const uint64_t payload = records - (uint64_t)r->frame_count * BPI_TRACE_FRAME_LEAST_BYTES;
	const uint64_t create_room = payload / bpi_trace_create_bytes((uint64_t)r->dims, r->filter_words);
	if (r->max_entities > create_room)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE,
			"trailer: max_entities %u; the records create at most %llu entities in the layout of version %u "
			"with dims %d: corrupt", r->max_entities, (unsigned long long)create_room, r->version, r->dims);
	return BP_OK;
}

/// Whether the writer puts a keyframe after frame k (docs/trace.md, Keyframe record).
static bool keyframe_expected(const bp_trace_reader *r, uint32_t k)
{
	return r->keyframe_interval && k > 0 && k % r->keyframe_interval == 0;
}

/// Records lie end to end from the header to the index, each keyframe right after its frame:
/// offsets start at the header and step by at least a record's least size, and the keyframes
/// are where keyframe_interval puts them. Each record's exact size is checked when it is read.
static bp_status check_offsets(bp_trace_reader *r)
{
	if (r->frame_count == 0 && r->index_offset != BPI_TRACE_HEADER_BYTES)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE,
			"trailer: no frame, yet index_offset %llu leaves bytes after the header: corrupt",
			(unsigned long long)r->index_offset);
	uint64_t next = BPI_TRACE_HEADER_BYTES; // where the next record starts at the earliest
	for (uint32_t k = 0; k < r->frame_count; ++k) {
		const uint64_t record = r->index.data[2 * (size_t)k], key = r->index.data[2 * (size_t)k + 1];
		const bool placed = k == 0 ? record == BPI_TRACE_HEADER_BYTES : record >= next;
		if (!placed || record > r->index_offset - BPI_TRACE_FRAME_LEAST_BYTES)
			return bpi_trace_reader_fail(r, BP_ERR_PARSE, "index: frame %u: offset %llu out of order", k,
				(unsigned long long)record);
		next = record + BPI_TRACE_FRAME_LEAST_BYTES;
		if ((key != 0) != keyframe_expected(r, k))
			return bpi_trace_reader_fail(r, BP_ERR_PARSE, "index: frame %u has %s keyframe; keyframe_interval %u %s",
				k, key ? "a" : "no", r->keyframe_interval, key ? "puts none there" : "puts one there");
		if (key && (key < next || key > r->index_offset - BPI_TRACE_KEYFRAME_LEAST_BYTES))
			return bpi_trace_reader_fail(r, BP_ERR_PARSE, "index: keyframe %u: offset %llu out of order", k,
				(unsigned long long)key);
		if (key)
			next = key + BPI_TRACE_KEYFRAME_LEAST_BYTES;
	}
	return BP_OK;
}

static bp_status read_index(bp_trace_reader *r)
{
	// The trailer is still in r->record: its counts follow the index in the checksum.
	const uint32_t expected_hash = bpi_trace_get32(r->record.data + 12);
	uint8_t words[12];
	memcpy(words, r->record.data + 8, 4);
	memcpy(words + 4, r->record.data + 16, 8);
	const size_t bytes = (size_t)r->frame_count * BPI_TRACE_INDEX_ENTRY_BYTES;
	bp_status status = read_at(r, r->index_offset, bytes, "index");
	if (status != BP_OK)
		return status;
	uint32_t hash = bpi_trace_fnv(BPI_TRACE_FNV_OFFSET, r->record.data, bytes);
	if (bpi_trace_fnv(hash, words, sizeof words) != expected_hash)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE, "index: checksum mismatch: the file is corrupt");
	if ((status = check_counts(r)) != BP_OK)
		return status;
	if (!bpi_array_reserve(&r->index, 2 * (size_t)r->frame_count))
		return bpi_trace_reader_fail(r, BP_ERR_OUT_OF_MEMORY, "index: out of memory");
	for (size_t i = 0; i < 2 * (size_t)r->frame_count; ++i)
		r->index.data[i] = bpi_trace_get64(r->record.data + 8 * i);
	return check_offsets(r);
}

bp_status bp_trace_reader_open(const char *path, bp_trace_reader **out)
{
	if (!out)
		return BP_ERR_INVALID_ARGUMENT;
	*out = NULL;
	if (!path) {
		snprintf(bpi_trace_open_error(), BPI_TRACE_OPEN_ERROR_BYTES, "bp_trace_reader_open: no path");
		return BP_ERR_INVALID_ARGUMENT;
	}
	bp_trace_reader *r = bpi_alloc(sizeof *r);
	if (!r) {
		snprintf(bpi_trace_open_error(), BPI_TRACE_OPEN_ERROR_BYTES, "%s: out of memory", path);
		return BP_ERR_OUT_OF_MEMORY;
	}
	memset(r, 0, sizeof *r);
	snprintf(r->path, sizeof r->path, "%s", path);
	bp_status status = BP_OK;
	if (!(r->file = fopen(path, "rb")))
		status = bpi_trace_reader_fail(r, BP_ERR_IO, "cannot open: %s", strerror(errno));
	int64_t size = -1;
	if (status == BP_OK && (fseeko(r->file, 0, SEEK_END) != 0 || (size = ftello(r->file)) < 0))
		status = bpi_trace_reader_fail(r, BP_ERR_IO, "cannot find its size: %s", strerror(errno));
	if (status == BP_OK)
		status = read_header(r, (uint64_t)size);
	if (status == BP_OK)
		status = read_trailer(r, (uint64_t)size);
	if (status == BP_OK)
		status = read_index(r);
	r->state.dims = r->before.dims = r->dims;
	if (status == BP_OK && !bpi_trace_state_reserve(&r->state, 0))
		status = bpi_trace_reader_fail(r, BP_ERR_OUT_OF_MEMORY, "out of memory");
	if (status != BP_OK) {
		snprintf(bpi_trace_open_error(), BPI_TRACE_OPEN_ERROR_BYTES, "%s", r->error);
		bp_trace_reader_close(r);
		return status;
	}
	*out = r;
	return BP_OK;
}

bp_trace_info bp_trace_reader_info(const bp_trace_reader *r)
{
	if (!r)
		return (bp_trace_info){0};
	return (bp_trace_info){.dims = r->dims, .frame_count = r->frame_count, .max_entities = r->max_entities,
		.keyframe_interval = r->keyframe_interval};
}

const char *bp_trace_reader_error(const bp_trace_reader *r) { return r ? r->error : ""; }

uint32_t bp_trace_reader_position(const bp_trace_reader *r) { return r ? r->position : 0; }

// ---- records --------------------------------------------------------------------------

static uint64_t frame_words(const bp_trace_reader *r, const uint8_t *head)
{
	return bpi_trace_frame_words((uint64_t)r->dims, r->filter_words, bpi_trace_get32(head + 8),
		bpi_trace_get32(head + 12), bpi_trace_get32(head + 16), bpi_trace_get32(head + 20));
}

static uint64_t keyframe_words(const bp_trace_reader *r, const uint8_t *head)
{
	return (uint64_t)bpi_trace_get32(head + 8) * (bpi_trace_entity_words(r->filter_words) + 2 * (uint64_t)r->dims);
}

/// A frame record or a keyframe record: its tag, its head (the last words of which count its
/// payload), and its column in an index entry.
typedef struct record_kind {
	const char *name;
	uint32_t tag, head_words;
	uint64_t (*payload_words)(const bp_trace_reader *r, const uint8_t *head);
	size_t index_column;
} record_kind;

static const record_kind frame_record = {"frame", BPI_TRACE_FRAME_TAG, BPI_TRACE_FRAME_HEAD_WORDS, frame_words, 0};
static const record_kind keyframe_record = {"keyframe", BPI_TRACE_KEYFRAME_TAG, BPI_TRACE_KEYFRAME_HEAD_WORDS,
	keyframe_words, 1};

/// Where a record of frame k ends: records lie end to end, so at the next one the index
/// names, or at the index after the last.
static uint64_t record_end(const bp_trace_reader *r, uint32_t k, const record_kind *kind)
{
	const uint64_t *entry = r->index.data + 2 * (size_t)k;
	if (kind->index_column == 0 && entry[1])
		return entry[1];
	return k + 1 < r->frame_count ? entry[2] : r->index_offset;
}

/// Reads frame k's record of `kind` into r->record, checking its tag, frame number, size and
/// checksum; the payload starts at r->record.data + 4 * kind->head_words. A size that differs
/// from the room the index gives it is a damaged count, or a header whose version or dims
/// are not those the file was written with.
static bp_status read_record(bp_trace_reader *r, uint32_t k, const record_kind *kind)
{
	const uint64_t offset = r->index.data[2 * (size_t)k + kind->index_column], end = record_end(r, k, kind);
	const size_t head = 4 * (size_t)kind->head_words; // check_offsets leaves room for it
	bp_status status = read_at(r, offset, head, kind->name);
	if (status != BP_OK)
		return status;
	if (bpi_trace_get32(r->record.data) != kind->tag || bpi_trace_get32(r->record.data + 4) != k)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE, "%s %u: the record at offset %llu is not this %s: corrupt",
			kind->name, k, (unsigned long long)offset, kind->name);
	const uint64_t size = head + 4 * kind->payload_words(r, r->record.data) + 4;
	if (size != end - offset)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE,
			"%s %u: its counts make %llu bytes in the layout of version %u with dims %d, where the index leaves "
			"%llu: corrupt", kind->name, k, (unsigned long long)size, r->version, r->dims,
			(unsigned long long)(end - offset));
	if ((status = read_at(r, offset, (size_t)size, kind->name)) != BP_OK)
		return status;
	if (bpi_trace_fnv(BPI_TRACE_FNV_OFFSET, r->record.data, (size_t)size - 4) !=
		bpi_trace_get32(r->record.data + size - 4))
		return bpi_trace_reader_fail(r, BP_ERR_PARSE, "%s %u: checksum mismatch: the file is corrupt", kind->name, k);
	return BP_OK;
}

/// Element i of the `filter_words` columns of n words at p: a low word, then (version 2 on)
/// a high word. A version 1 word of all bits stays all bits, so its "every category" (the default
/// mask) keeps meaning every category; any other is zero-extended.
static uint64_t get_filter(const uint8_t *p, size_t n, size_t i, uint32_t filter_words)
{
	const uint32_t low = bpi_trace_get32(p + 4 * i);
	if (filter_words == 1)
		return low == UINT32_MAX ? UINT64_MAX : low;
	return low | (uint64_t)bpi_trace_get32(p + 4 * (n + i)) << 32;
}

/// Decodes `count` entities from their columns at p (id, category, mask, flags, then with
/// `bounds` min per axis and max per axis), checking each; on a bad one returns why and sets *bad.
static const char *decode_entities(bp_trace_reader *r, const uint8_t *p, uint32_t count, bool bounds,
	bp_trace_entity *out, uint32_t *bad)
{
	const size_t n = count, lw = r->filter_words, head = (size_t)bpi_trace_entity_words(r->filter_words);
	for (uint32_t i = 0; i < count; ++i) {
		bp_trace_entity e = {.id = bpi_trace_get32(p + 4 * i), .category = get_filter(p + 4 * n, n, i, r->filter_words),
			.mask = get_filter(p + 4 * (1 + lw) * n, n, i, r->filter_words)};
		uint32_t flags = bpi_trace_get32(p + 4 * ((1 + 2 * lw) * n + i));
		e.kind = flags & BPI_TRACE_FLAG_STATIC ? BP_KIND_STATIC : BP_KIND_DYNAMIC;
		e.shape = flags & BPI_TRACE_FLAG_SPHERE ? BP_SHAPE_SPHERE : BP_SHAPE_BOX;
		for (int a = 0; bounds && a < r->dims; ++a) {
			e.min[a] = bpi_trace_bits_float(bpi_trace_get32(p + 4 * ((head + (size_t)a) * n + i)));
			e.max[a] = bpi_trace_bits_float(bpi_trace_get32(p + 4 * ((head + (size_t)r->dims + a) * n + i)));
		}
		out[i] = e;
		*bad = i;
		if (flags & ~BPI_TRACE_FLAGS_KNOWN)
			return "unknown flag bits";
		const char *why = bpi_trace_entity_problem(&e, r->dims, bounds);
		if (why)
			return why;
	}
	return NULL;
}

static bp_status decode_frame(bp_trace_reader *r, uint32_t k)
{
	const uint8_t *h = r->record.data;
	const uint32_t nd = bpi_trace_get32(h + 8), nc = bpi_trace_get32(h + 12), ns = bpi_trace_get32(h + 16),
		       nm = bpi_trace_get32(h + 20);
	bool ok = bpi_array_reserve(&r->destroys, nd) && bpi_array_reserve(&r->creates, nc) &&
		  bpi_array_reserve(&r->sets, ns) && bpi_array_reserve(&r->move_ids, nm);
	for (int c = 0; ok && c < 6; ++c)
		ok = bpi_array_reserve(&r->moves[c], nm);
	if (!ok)
		return bpi_trace_reader_fail(r, BP_ERR_OUT_OF_MEMORY, "frame %u: out of memory", k);
	const uint8_t *p = h + 4 * BPI_TRACE_FRAME_HEAD_WORDS;
	for (uint32_t i = 0; i < nd; ++i)
		r->destroys.data[i] = bpi_trace_get32(p + 4 * (size_t)i);
	p += 4 * (size_t)nd;
	uint32_t bad = 0;
	const char *why = decode_entities(r, p, nc, true, r->creates.data, &bad);
	if (why)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE, "frame %u: creates[%u]: id %u: %s", k, bad,
			r->creates.data[bad].id, why);
	const size_t entity_words = (size_t)bpi_trace_entity_words(r->filter_words);
	p += 4 * (size_t)nc * (entity_words + 2 * (size_t)r->dims);
	if ((why = decode_entities(r, p, ns, false, r->sets.data, &bad)))
		return bpi_trace_reader_fail(r, BP_ERR_PARSE, "frame %u: sets[%u]: id %u: %s", k, bad, r->sets.data[bad].id,
			why);
	p += 4 * (size_t)ns * entity_words;
	for (uint32_t i = 0; i < nm; ++i)
		r->move_ids.data[i] = bpi_trace_get32(p + 4 * (size_t)i);
	for (int c = 0; c < 2 * r->dims; ++c) {
		const uint8_t *column = p + 4 * (size_t)nm * (1 + (size_t)c);
		for (uint32_t i = 0; i < nm; ++i)
			r->moves[c].data[i] = bpi_trace_bits_float(bpi_trace_get32(column + 4 * (size_t)i));
	}
	for (uint32_t i = 0; i < nm; ++i)
		for (int a = 0; a < r->dims; ++a) {
			why = bpi_trace_bounds_problem(r->moves[a].data[i], r->moves[r->dims + a].data[i], a);
			if (why)
				return bpi_trace_reader_fail(r, BP_ERR_PARSE, "frame %u: moves[%u]: id %u: %s", k, i,
					r->move_ids.data[i], why);
		}
	const int d = r->dims;
	r->frame = (bp_trace_frame){.index = k, .destroy_count = nd, .destroys = r->destroys.data, .create_count = nc,
		.creates = r->creates.data, .set_count = ns, .sets = r->sets.data, .move_count = nm,
		.move_ids = r->move_ids.data,
		.moves = {.min_x = r->moves[0].data, .min_y = r->moves[1].data, .min_z = d == 3 ? r->moves[2].data : NULL,
			.max_x = r->moves[d].data, .max_y = r->moves[d + 1].data, .max_z = d == 3 ? r->moves[5].data : NULL}};
	return BP_OK;
}

bp_status bp_trace_reader_read(bp_trace_reader *r, uint32_t k, bp_trace_frame *out)
{
	if (!r || !out)
		return BP_ERR_INVALID_ARGUMENT;
	r->applied = false;
	if (k >= r->frame_count)
		return bpi_trace_reader_fail(r, BP_ERR_OUT_OF_RANGE, "frame %u: the trace has %u frames", k, r->frame_count);
	bp_status status = read_record(r, k, &frame_record);
	if (status == BP_OK)
		status = decode_frame(r, k);
	if (status == BP_OK)
		*out = r->frame;
	return status;
}

// ---- replay ---------------------------------------------------------------------------

/// Checks frame r->frame against the state: destroyed ids live and listed once, created ids
/// not live once the destroys are done and listed once, changed and moved ids live then.
static bp_status check_against_state(bp_trace_reader *r)
{
	const bp_trace_frame *f = &r->frame;
	bpi_trace_state *s = &r->state;
	const uint32_t epoch = ++r->epoch;
	for (uint32_t i = 0; i < f->destroy_count; ++i) {
		uint32_t d = bpi_trace_state_find(s, f->destroys[i]);
		if (d == BPI_TRACE_NONE || s->stamp.data[d] == epoch)
			return bpi_trace_reader_fail(r, BP_ERR_PARSE, "frame %u: destroys[%u]: id %u is %s", f->index, i,
				f->destroys[i], d == BPI_TRACE_NONE ? "not live" : "listed twice");
		s->stamp.data[d] = epoch;
	}
	uint32_t repeat;
	bool out_of_memory;
	if (bpi_trace_find_repeat(s, &f->creates[0].id, sizeof f->creates[0], f->create_count, &repeat, &out_of_memory))
		return bpi_trace_reader_fail(r, BP_ERR_PARSE, "frame %u: creates: id %u is listed twice", f->index, repeat);
	if (out_of_memory)
		return bpi_trace_reader_fail(r, BP_ERR_OUT_OF_MEMORY, "frame %u: out of memory", f->index);
	for (uint32_t i = 0; i < f->create_count; ++i) {
		uint32_t d = bpi_trace_state_find(s, f->creates[i].id);
		if (d != BPI_TRACE_NONE && s->stamp.data[d] != epoch)
			return bpi_trace_reader_fail(r, BP_ERR_PARSE, "frame %u: creates[%u]: id %u is already live", f->index,
				i, f->creates[i].id);
	}
	for (uint32_t i = 0; i < f->set_count + f->move_count; ++i) {
		const bool set = i < f->set_count;
		const uint32_t j = set ? i : i - f->set_count, id = set ? f->sets[j].id : f->move_ids[j];
		uint32_t d = bpi_trace_state_find(s, id);
		bool live = (d != BPI_TRACE_NONE && s->stamp.data[d] != epoch) || bpi_trace_sorted_has(s, f->create_count, id);
		if (!live)
			return bpi_trace_reader_fail(r, BP_ERR_PARSE, "frame %u: %s[%u]: id %u is not live", f->index,
				set ? "sets" : "moves", j, id);
	}
	// Destroys are live and listed once here, so they do not outnumber the live entities.
	const uint64_t live_after = (uint64_t)s->count - f->destroy_count + f->create_count;
	if (live_after > r->max_entities)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE,
			"frame %u: %llu entities live after it, more than the trailer's max_entities %u: corrupt", f->index,
			(unsigned long long)live_after, r->max_entities);
	const uint64_t live = (uint64_t)s->count + f->create_count;
	if (live > UINT32_MAX || !bpi_trace_state_reserve(s, (uint32_t)live) ||
		!bpi_array_reserve(&r->destroy_dense, f->destroy_count) || !bpi_array_reserve(&r->set_dense, f->set_count) ||
		!bpi_array_reserve(&r->move_dense, f->move_count))
		return bpi_trace_reader_fail(r, BP_ERR_OUT_OF_MEMORY, "frame %u: out of memory", f->index);
	return BP_OK;
}

static void apply_to_state(bp_trace_reader *r)
{
	const bp_trace_frame *f = &r->frame;
	bpi_trace_state *s = &r->state;
	r->count_before = s->count;
	for (uint32_t i = 0; i < f->destroy_count; ++i) {
		uint32_t d = bpi_trace_state_find(s, f->destroys[i]);
		r->destroy_dense.data[i] = d;
		bpi_trace_state_remove(s, d);
	}
	for (uint32_t i = 0; i < f->create_count; ++i)
		bpi_trace_state_append(s, &f->creates[i]);
	for (uint32_t i = 0; i < f->set_count; ++i) {
		const bp_trace_entity *e = &f->sets[i];
		uint32_t d = bpi_trace_state_find(s, e->id);
		r->set_dense.data[i] = d;
		s->category.data[d] = e->category;
		s->mask.data[d] = e->mask;
		s->kind.data[d] = e->kind;
		s->shape.data[d] = e->shape;
	}
	const float *bounds[6] = {f->moves.min_x, f->moves.min_y, f->moves.min_z, f->moves.max_x, f->moves.max_y,
		f->moves.max_z};
	for (uint32_t i = 0; i < f->move_count; ++i) {
		uint32_t d = bpi_trace_state_find(s, f->move_ids[i]);
		r->move_dense.data[i] = d;
		for (int a = 0; a < s->dims; ++a) {
			s->min[a].data[d] = bounds[a][i];
			s->max[a].data[d] = bounds[3 + a][i];
		}
	}
}

bp_status bp_trace_reader_next(bp_trace_reader *r, bp_trace_frame *out)
{
	if (!r || !out)
		return BP_ERR_INVALID_ARGUMENT;
	if (r->position >= r->frame_count) {
		r->applied = false;
		return bpi_trace_reader_fail(r, BP_ERR_OUT_OF_RANGE, "no frame after the last (%u frames)", r->frame_count);
	}
	bp_trace_frame frame;
	bp_status status = bp_trace_reader_read(r, r->position, &frame);
	if (status == BP_OK)
		status = check_against_state(r);
	if (status != BP_OK)
		return status;
	apply_to_state(r);
	r->position++;
	r->applied = true;
	*out = r->frame;
	return BP_OK;
}

/// Replaces the state by keyframe k's.
static bp_status load_keyframe(bp_trace_reader *r, uint32_t k)
{
	bp_status status = read_record(r, k, &keyframe_record);
	if (status != BP_OK)
		return status;
	const uint32_t count = bpi_trace_get32(r->record.data + 8);
	if (count > r->max_entities)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE,
			"keyframe %u: %u entities live, more than the trailer's max_entities %u: corrupt", k, count,
			r->max_entities);
	bpi_trace_state *s = &r->state;
	bpi_trace_state_clear(s);
	if (!bpi_array_reserve(&r->creates, count) || !bpi_trace_state_reserve(s, count))
		return bpi_trace_reader_fail(r, BP_ERR_OUT_OF_MEMORY, "keyframe %u: out of memory", k);
	uint32_t bad = 0;
	const char *why = decode_entities(r, r->record.data + 4 * BPI_TRACE_KEYFRAME_HEAD_WORDS, count, true,
		r->creates.data, &bad);
	if (why)
		return bpi_trace_reader_fail(r, BP_ERR_PARSE, "keyframe %u: entities[%u]: id %u: %s", k, bad,
			r->creates.data[bad].id, why);
	for (uint32_t i = 0; i < count; ++i) {
		if (bpi_trace_state_find(s, r->creates.data[i].id) != BPI_TRACE_NONE)
			return bpi_trace_reader_fail(r, BP_ERR_PARSE, "keyframe %u: entities[%u]: id %u is listed twice", k, i,
				r->creates.data[i].id);
		bpi_trace_state_append(s, &r->creates.data[i]);
	}
	r->position = k + 1;
	return BP_OK;
}

/// The last frame at or before k with a keyframe after it, or 0 (frame 0 starts from nothing).
static uint32_t last_keyframe_at_or_before(const bp_trace_reader *r, uint32_t k)
{
	while (k > 0 && r->index.data[2 * (size_t)k + 1] == 0)
		--k;
	return k;
}

/// Sets the state aside in r->before, for a failed seek to go back to, and leaves in r->state
/// where the seek starts: a copy of it when `from_here`, else no entity.
static bool set_state_aside(bp_trace_reader *r, bool from_here)
{
	if (from_here && !bpi_trace_state_copy(&r->before, &r->state))
		return false;
	bpi_trace_state_swap(&r->before, &r->state);
	if (!from_here)
		bpi_trace_state_clear(&r->state);
	return true;
}

bp_status bp_trace_reader_seek(bp_trace_reader *r, uint32_t k)
{
	if (!r)
		return BP_ERR_INVALID_ARGUMENT;
	r->applied = false;
	if (k >= r->frame_count)
		return bpi_trace_reader_fail(r, BP_ERR_OUT_OF_RANGE, "frame %u: the trace has %u frames", k, r->frame_count);
	if (r->position == k + 1)
		return BP_OK;
	const uint32_t key = last_keyframe_at_or_before(r, k), position = r->position;
	const bool from_here = position > 0 && position - 1 <= k && position - 1 >= key;
	if (!set_state_aside(r, from_here))
		return bpi_trace_reader_fail(r, BP_ERR_OUT_OF_MEMORY, "seek to frame %u: out of memory", k);
	bp_status status = BP_OK;
	if (!from_here) {
		r->position = 0;
		if (key > 0)
			status = load_keyframe(r, key);
	}
	bp_trace_frame frame;
	while (status == BP_OK && r->position <= k)
		status = bp_trace_reader_next(r, &frame);
	r->applied = false;
	if (status != BP_OK) {
		bpi_trace_state_swap(&r->before, &r->state);
		r->position = position;
	}
	return status;
}

bp_trace_state bp_trace_reader_state(const bp_trace_reader *r)
{
	if (!r)
		return (bp_trace_state){0};
	const bpi_trace_state *s = &r->state;
	const bool z = s->dims == 3;
	return (bp_trace_state){.frame = r->position ? r->position - 1 : 0, .count = s->count, .ids = s->ids.data,
		.bounds = {s->min[0].data, s->min[1].data, z ? s->min[2].data : NULL, s->max[0].data, s->max[1].data,
			z ? s->max[2].data : NULL},
		.category = s->category.data, .mask = s->mask.data, .kinds = s->kind.data, .shapes = s->shape.data};
}
