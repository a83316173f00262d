// SPDX-License-Identifier: MIT
// libFuzzer target: traces. An input that starts with the trace magic is a trace file: it is
// read (every damage refused with a message, never a crash) and what reads is replayed, then
// read again with its index checksum matched to its trailer, so that changed counts get past
// the checksum. Any other input is a history of writer calls (create, destroy, set, move, end
// of frame, with ids and bounds from the bytes) whose refusals must leave the file as if they
// were never made; the trace written is then replayed. A replay drives a plain and an
// incremental world through bp_trace_reader_apply: each frame's pairs must equal the
// brute-force oracle over the reader's state, the incremental world's byte for byte the plain
// world's, and frame K read alone through the index (seek, then load into a new world) must
// pair as the replay did. Every trace that opens is sought to every frame and past the end: a
// failed seek changes nothing. A world sized by its max_entities must be made under a block
// limit, and no frame may hold more. Then each header and trailer field in turn is set to a
// value drawn from the input's hash, checksum matched: the trace must be refused with a
// message naming the field, or read as before.
#include "fuzz_common.h"
#include "../common/trace_fields.h"
#include <unistd.h>

enum { MAX_IDS = 48, MAX_FRAMES = 24, MAX_SEEKS = 64 };

/// Far above any block a trace of a few KiB needs, far below what a forged count asks for.
#define TRACE_BLOCK_LIMIT ((size_t)16 << 20)

enum scratch { SCRATCH_FILE, SCRATCH_WRITTEN, SCRATCH_MUTATED, SCRATCH_COUNT };

static const char *trace_scratch_path(enum scratch which)
{
	static const char *const names[SCRATCH_COUNT] = {"file", "write", "mutated"};
	static char path[SCRATCH_COUNT][64];
	if (!path[which][0]) {
		const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
		snprintf(path[which], sizeof path[which], "%s/bp-fuzz-trace-%s-%ld", dir, names[which], (long)getpid());
	}
	return path[which];
}

static void write_scratch(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	FUZZ_CHECK(f && fwrite(data, 1, size, f) == size && fclose(f) == 0, "scratch file %s", path);
}

/// The whole file (free it).
static uint8_t *read_whole(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	FUZZ_CHECK(f && fseek(f, 0, SEEK_END) == 0, "cannot read %s", path);
	const long end = ftell(f);
	FUZZ_CHECK(end >= 0 && fseek(f, 0, SEEK_SET) == 0, "cannot read %s", path);
	uint8_t *bytes = malloc((size_t)end + 1);
	FUZZ_CHECK(bytes && fread(bytes, 1, (size_t)end, f) == (size_t)end, "cannot read %s", path);
	fclose(f);
	*size = (size_t)end;
	return bytes;
}

static uint64_t fnv64(uint64_t hash, const void *bytes, size_t count)
{
	const uint8_t *p = bytes;
	for (size_t i = 0; i < count; ++i)
		hash = (hash ^ p[i]) * 1099511628211u;
	return hash;
}

/// The reader's position and state as one number: equal numbers, equal states.
static uint64_t state_sum(const bp_trace_reader *r, int dims)
{
	const bp_trace_state s = bp_trace_reader_state(r);
	const uint32_t position = bp_trace_reader_position(r);
	const size_t n = s.count;
	uint64_t h = fnv64(14695981039346656037u, &position, sizeof position);
	h = fnv64(h, &s.count, sizeof s.count);
	h = fnv64(h, s.ids, n * sizeof *s.ids);
	h = fnv64(h, s.category, n * sizeof *s.category);
	h = fnv64(h, s.mask, n * sizeof *s.mask);
	h = fnv64(h, s.kinds, n * sizeof *s.kinds);
	h = fnv64(h, s.shapes, n * sizeof *s.shapes);
	const float *bounds[6] = {s.bounds.min_x, s.bounds.min_y, s.bounds.min_z, s.bounds.max_x, s.bounds.max_y,
		s.bounds.max_z};
	for (int c = 0; c < 6; ++c)
		if (c % 3 < dims)
			h = fnv64(h, bounds[c], n * sizeof(float));
	return h;
}

static bp_world *new_world(int dims, bool incremental)
{
	bp_world_def def = bp_world_def_default();
	def.dims = dims;
	def.canonical_pairs = true;
	def.incremental = incremental;
	def.thread_count = 1;
	bp_world *w = NULL;
	FUZZ_CHECK(bp_world_create(&def, &w) == BP_OK, "bp_world_create: %s", bp_world_create_error());
	return w;
}

/// Brute force over the reader's state (boxes only: the writer below makes no sphere, and a
/// file's spheres are left to the worlds' agreement).
static bp_pair *trace_oracle(const bp_trace_state *s, int dims, size_t *count, bool *spheres)
{
	fuzz_box *boxes = calloc((size_t)s->count + 1, sizeof *boxes);
	FUZZ_CHECK(boxes, "out of memory");
	const float *b[6] = {s->bounds.min_x, s->bounds.min_y, s->bounds.min_z, s->bounds.max_x, s->bounds.max_y,
		s->bounds.max_z};
	*spheres = false;
	for (uint32_t i = 0; i < s->count; ++i) {
		for (int a = 0; a < dims; ++a)
			boxes[i].min[a] = b[a][i], boxes[i].max[a] = b[3 + a][i];
		boxes[i].category = s->category[i], boxes[i].mask = s->mask[i];
		boxes[i].is_static = s->kinds[i] == BP_KIND_STATIC;
		*spheres |= s->shapes[i] == BP_SHAPE_SPHERE;
	}
	bp_pair *pairs = fuzz_oracle_pairs(boxes, s->count, dims, count);
	free(boxes);
	return pairs;
}

static const bp_pair *step_pairs(bp_world *w, size_t *count)
{
	bp_status status = bp_world_step(w);
	FUZZ_CHECK(status == BP_OK, "step: %s", bp_world_last_error(w));
	return bp_world_pairs(w, count);
}

/// A host may size a world by max_entities (docs/trace.md): one so sized must be made.
static void expect_world_fits_max_entities(const bp_trace_info *info)
{
	bp_world_def def = bp_world_def_default();
	def.dims = info->dims;
	def.capacity = info->max_entities;
	def.thread_count = 1;
	bp_world *w = NULL;
	FUZZ_CHECK(bp_world_create(&def, &w) == BP_OK, "a world sized by max_entities %u: %s", info->max_entities,
		bp_world_create_error());
	bp_world_destroy(w);
}

/// Seeks to frame k. One that succeeds is after frame k, with the replay's state when `states`
/// holds it (the first `known` frames; NULL when a file's keyframes may disagree with its frames,
/// being checked as records only); one that fails leaves the position and state as they were.
static void seek_once(bp_trace_reader *r, int dims, uint32_t k, const uint64_t *states, uint32_t known,
	bool must_succeed)
{
	const uint32_t frames = bp_trace_reader_info(r).frame_count, position = bp_trace_reader_position(r);
	const uint64_t before = state_sum(r, dims);
	const bp_status status = bp_trace_reader_seek(r, k);
	if (status == BP_OK) {
		FUZZ_CHECK(k < frames && bp_trace_reader_position(r) == k + 1, "seek %u of %u frames: at position %u", k,
			frames, bp_trace_reader_position(r));
		FUZZ_CHECK(!states || k >= known || state_sum(r, dims) == states[k], "seek %u: the state differs from the "
			"replay's", k);
		return;
	}
	FUZZ_CHECK(status == (k < frames ? BP_ERR_PARSE : BP_ERR_OUT_OF_RANGE), "seek %u of %u frames: %s: %s", k,
		frames, bp_status_string(status), bp_trace_reader_error(r));
	FUZZ_CHECK(!must_succeed || k >= frames, "seek %u of a written trace: %s", k, bp_trace_reader_error(r));
	FUZZ_CHECK(bp_trace_reader_error(r)[0] && bp_trace_reader_position(r) == position &&
			state_sum(r, dims) == before,
		"seek %u failed (%s) and moved the reader: position %u, was %u", k, bp_trace_reader_error(r),
		bp_trace_reader_position(r), position);
}

/// Seeks to every frame (the first MAX_SEEKS), from the last back to the first and on again,
/// then past the end: frame_count, frame_count + 1 and UINT32_MAX.
static void check_seeks(bp_trace_reader *r, int dims, const uint64_t *states, uint32_t known, bool must_succeed)
{
	const uint32_t frames = bp_trace_reader_info(r).frame_count, reach = frames < MAX_SEEKS ? frames : MAX_SEEKS;
	for (uint32_t t = reach; t-- > 0;)
		seek_once(r, dims, t, states, known, must_succeed);
	for (uint32_t t = 0; t < reach; ++t)
		seek_once(r, dims, t, states, known, must_succeed);
	const uint32_t past[] = {frames, frames + 1, UINT32_MAX}; // frame_count is far below UINT32_MAX here
	for (int i = 0; i < 3; ++i)
		seek_once(r, dims, past[i], states, known, must_succeed);
}

/// What a replay read: whether the trace opened, its frame count, and the state after each of
/// the first `known` frames.
typedef struct replayed {
	bool opened;
	int dims;
	uint32_t frames, known;
	uint64_t states[MAX_FRAMES];
} replayed;

/// Replays a trace that opens; checks each frame as the header says, then the seeks.
/// `written`: the writer made it, so every frame and keyframe reads, and frame K read alone pairs
/// as the replay did (a file may hold keyframes that pass their checks yet disagree with the
/// frames before them: a reader checks a keyframe as a record, not by replaying).
static replayed replay(const char *path, bool written)
{
	replayed out = {0};
	bp_trace_reader *r = NULL;
	if (bp_trace_reader_open(path, &r) != BP_OK) {
		FUZZ_CHECK(strstr(bp_trace_open_error(), path), "open error without the path: %s", bp_trace_open_error());
		return out;
	}
	const bp_trace_info info = bp_trace_reader_info(r);
	out = (replayed){.opened = true, .dims = info.dims, .frames = info.frame_count};
	expect_world_fits_max_entities(&info);
	bp_world *plain = new_world(info.dims, false), *incremental = new_world(info.dims, true);
	uint32_t k = 0;
	uint64_t sums[MAX_FRAMES] = {0};
	for (; k < info.frame_count && k < MAX_FRAMES; ++k) {
		bp_trace_frame f;
		if (bp_trace_reader_next(r, &f) != BP_OK) {
			FUZZ_CHECK(bp_trace_reader_error(r)[0], "a refused frame without a message");
			FUZZ_CHECK(bp_trace_reader_position(r) == k, "a refused frame moved the reader");
			break;
		}
		bp_trace_state s = bp_trace_reader_state(r);
		FUZZ_CHECK(s.count <= info.max_entities, "frame %u: %u live, more than max_entities %u", k, s.count,
			info.max_entities);
		out.states[k] = state_sum(r, info.dims);
		FUZZ_CHECK(bp_trace_reader_apply(r, plain) == BP_OK, "apply: %s", bp_trace_reader_error(r));
		FUZZ_CHECK(bp_trace_reader_apply(r, incremental) == BP_OK, "apply: %s", bp_trace_reader_error(r));
		if (s.count > 400) {
			++k;
			break; // the oracle is quadratic
		}
		size_t n_plain, n_incremental, n_want;
		bool spheres;
		const bp_pair *p = step_pairs(plain, &n_plain), *q = step_pairs(incremental, &n_incremental);
		FUZZ_CHECK(n_plain == n_incremental && (n_plain == 0 || !memcmp(p, q, n_plain * sizeof *p)),
			"frame %u: incremental %zu pairs, plain %zu", k, n_incremental, n_plain);
		bp_pair *want = trace_oracle(&s, info.dims, &n_want, &spheres);
		if (!spheres)
			fuzz_expect_pairs(p, n_plain, want, n_want, s.count, "plain world");
		free(want);
		sums[k] = bp_pairs_checksum(p, n_plain, s.ids) ^ n_plain;
	}
	out.known = k;
	for (uint32_t j = k; j-- > 0;) { // frame j alone, through the index
		const uint32_t position = bp_trace_reader_position(r);
		if (bp_trace_reader_seek(r, j) != BP_OK) {
			FUZZ_CHECK(!written, "seek %u: %s", j, bp_trace_reader_error(r));
			FUZZ_CHECK(bp_trace_reader_error(r)[0] && bp_trace_reader_position(r) == position, "a failed seek moved");
			break;
		}
		if (bp_trace_reader_state(r).count > 400)
			continue; // its pairs were not counted
		bp_world *alone = new_world(info.dims, false);
		FUZZ_CHECK(bp_trace_reader_load(r, alone) == BP_OK, "load: %s", bp_trace_reader_error(r));
		size_t n;
		const bp_pair *p = step_pairs(alone, &n);
		FUZZ_CHECK(!written || (bp_pairs_checksum(p, n, bp_trace_reader_state(r).ids) ^ n) == sums[j],
			"frame %u alone differs", j);
		bp_world_destroy(alone);
	}
	check_seeks(r, info.dims, written ? out.states : NULL, out.known, written);
	bp_world_destroy(plain);
	bp_world_destroy(incremental);
	bp_trace_reader_close(r);
	return out;
}

// ---- header and trailer fields, one at a time (docs/trace.md, Layout) ----------------------

static const trace_field trace_fields[] = TRACE_FIELDS;

static uint64_t splitmix(uint64_t *seed)
{
	uint64_t z = (*seed += 0x9E3779B97F4A7C15u);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
	return z ^ (z >> 31);
}

/// A value for a field `width` bytes wide that holds `original`: near it, at an edge of the
/// width, with one bit flipped, doubled or halved, or any.
static uint64_t field_value(uint64_t original, int width, uint64_t *seed)
{
	const uint64_t top = width == 8 ? UINT64_MAX : UINT32_MAX, r = splitmix(seed), pick = r >> 8;
	const uint64_t edges[] = {0, 1, top >> 1, (top >> 1) + 1, top - 1, top};
	switch (r % 5) {
	case 0: return (original + (pick & 0xFF) - 128) & top;
	case 1: return edges[pick % 6];
	case 2: return original ^ (UINT64_C(1) << (pick % (8 * (unsigned)width)));
	case 3: return (pick & 1 ? original * 2 : original / 2) & top;
	default: return splitmix(seed) & top;
	}
}

/// The trace with one field set is refused with a message naming the file and the field, or
/// reads as the original did: the same frame count and the same state after each of the first
/// `before->known` frames, and seeks that keep the contract (with the original's states when
/// its keyframes agree with its frames).
static void expect_refused_by_name_or_read_as_before(const char *path, const trace_field *field, uint64_t value,
	const replayed *before, bool keyframes_agree)
{
	bp_trace_reader *r = NULL;
	if (bp_trace_reader_open(path, &r) != BP_OK) {
		const char *why = bp_trace_open_error();
		FUZZ_CHECK(strstr(why, path) && strstr(why, field->named), "%s %#llx: '%s' does not name it", field->name,
			(unsigned long long)value, why);
		return;
	}
	const bp_trace_info info = bp_trace_reader_info(r);
	FUZZ_CHECK(info.frame_count == before->frames, "%s %#llx: %u frames, were %u", field->name,
		(unsigned long long)value, info.frame_count, before->frames);
	expect_world_fits_max_entities(&info);
	for (uint32_t k = 0; k < before->known; ++k) {
		bp_trace_frame f;
		if (bp_trace_reader_next(r, &f) != BP_OK) {
			const char *why = bp_trace_reader_error(r);
			FUZZ_CHECK(strstr(why, path) && strstr(why, field->named), "%s %#llx: frame %u: '%s' does not name it",
				field->name, (unsigned long long)value, k, why);
			break;
		}
		FUZZ_CHECK(state_sum(r, info.dims) == before->states[k], "%s %#llx: frame %u reads otherwise", field->name,
			(unsigned long long)value, k);
	}
	check_seeks(r, info.dims, keyframes_agree ? before->states : NULL, before->known, false);
	bp_trace_reader_close(r);
}

/// Each header and trailer field in turn set to a value drawn from `seed`, the index checksum
/// matched when it covers the field.
static void mutate_fields(const uint8_t *bytes, size_t size, const replayed *before, bool keyframes_agree,
	uint64_t seed)
{
	if (size < TRACE_HEADER_BYTES + TRACE_TRAILER_BYTES)
		return;
	uint8_t *copy = malloc(size);
	FUZZ_CHECK(copy, "out of memory");
	const char *path = trace_scratch_path(SCRATCH_MUTATED);
	for (size_t i = 0; i < sizeof trace_fields / sizeof trace_fields[0]; ++i) {
		const trace_field *field = &trace_fields[i];
		memcpy(copy, bytes, size);
		uint8_t *at = copy + field->offset + (field->in_trailer ? size - TRACE_TRAILER_BYTES : 0);
		const uint64_t original = trace_le_get(at, field->width), value = field_value(original, field->width, &seed);
		if (value == original)
			continue;
		trace_le_put(at, value, field->width);
		if (field->checksummed)
			trace_fix_checksum(copy, size);
		write_scratch(path, copy, size);
		expect_refused_by_name_or_read_as_before(path, field, value, before, keyframes_agree);
	}
	unlink(path);
	free(copy);
}

static float writer_coordinate(fuzz_reader *in)
{
	return (float)(fuzz_byte(in) % 32) * 0.5f;
}

/// One writer call from the bytes; refused calls are expected to change nothing. *touched: the
/// open frame holds a change.
static void writer_call(fuzz_reader *in, bp_trace_writer *w, int dims, bool *touched)
{
	const uint8_t code = fuzz_byte(in) % 6;
	uint32_t count = fuzz_byte(in) % 4 + 1, ids[4];
	bp_trace_entity e[4];
	float b[6][4];
	for (uint32_t i = 0; i < count; ++i) {
		ids[i] = fuzz_byte(in) % MAX_IDS;
		e[i] = (bp_trace_entity){.id = ids[i], .category = fuzz_layers(1u << (fuzz_byte(in) % 3)),
			.mask = fuzz_layers(fuzz_byte(in) % 8),
			.kind = fuzz_byte(in) % 4 == 0 ? BP_KIND_STATIC : BP_KIND_DYNAMIC};
		for (int a = 0; a < 3; ++a) {
			float lo = writer_coordinate(in), extent = writer_coordinate(in) - 1.0f; // -1: inverted, refused
			e[i].min[a] = b[a][i] = lo;
			e[i].max[a] = b[3 + a][i] = lo + extent;
		}
	}
	(void)dims;
	bp_bounds_arrays bounds = {b[0], b[1], b[2], b[3], b[4], b[5]};
	bp_status status = BP_OK;
	switch (code) {
	case 0: case 1: status = bp_trace_create(w, count, e); break;
	case 2: status = bp_trace_destroy(w, count, ids); break;
	case 3: status = bp_trace_set(w, count, e); break;
	case 4: status = bp_trace_move(w, count, ids, &bounds); break;
	default: status = bp_trace_end_frame(w); break;
	}
	FUZZ_CHECK(status == BP_OK || bp_trace_writer_error(w)[0], "a refused call without a message");
	if (status == BP_OK) // changes in the open frame, which closing writes
		*touched = code != 5;
}

static void write_and_replay(const uint8_t *data, size_t size)
{
	fuzz_reader in = {data, size, 0};
	bp_trace_writer_def def = bp_trace_writer_def_default();
	def.dims = 2 + fuzz_byte(&in) % 2;
	def.keyframe_interval = fuzz_byte(&in) % 5;
	const char *path = trace_scratch_path(SCRATCH_WRITTEN);
	bp_trace_writer *w = NULL;
	FUZZ_CHECK(bp_trace_writer_open(path, &def, &w) == BP_OK, "%s", bp_trace_open_error());
	bool touched = false;
	for (int calls = 0; fuzz_more(&in) && calls < 200 && bp_trace_writer_frames(w) < MAX_FRAMES; ++calls)
		writer_call(&in, w, def.dims, &touched);
	const uint32_t frames = bp_trace_writer_frames(w) + (touched ? 1 : 0);
	FUZZ_CHECK(bp_trace_writer_close(w) == BP_OK, "close: %s", bp_trace_open_error());
	const replayed read = replay(path, true);
	const uint32_t expected = frames < MAX_FRAMES ? frames : MAX_FRAMES;
	FUZZ_CHECK(read.opened && read.known == expected, "%u of %u frames of a written trace replayed", read.known,
		expected);
	size_t written_size = 0;
	uint8_t *written = read_whole(path, &written_size);
	mutate_fields(written, written_size, &read, true, fnv64(14695981039346656037u, data, size));
	free(written);
	unlink(path);
}

/// A trace file as given, then with its index checksum matched to its trailer (so that changed
/// counts reach the checks behind it), then with each field set in turn.
static void read_file_input(const uint8_t *data, size_t size)
{
	const char *path = trace_scratch_path(SCRATCH_FILE);
	write_scratch(path, data, size);
	const replayed read = replay(path, false);
	uint8_t *matched = malloc(size);
	FUZZ_CHECK(matched, "out of memory");
	memcpy(matched, data, size);
	trace_fix_checksum(matched, size);
	if (memcmp(matched, data, size) != 0) {
		write_scratch(path, matched, size);
		replay(path, false);
	}
	free(matched);
	if (read.opened)
		mutate_fields(data, size, &read, false, fnv64(14695981039346656037u, data, size));
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_use_malloc();
	fuzz_block_limit = TRACE_BLOCK_LIMIT;
	if (size >= 8 && memcmp(data, "BPTRACE1", 8) == 0)
		read_file_input(data, size);
	else
		write_and_replay(data, size);
	fuzz_block_limit = 0;
	FUZZ_CHECK(bp_allocated_bytes() == 0, "%lld bytes left allocated", (long long)bp_allocated_bytes());
	return 0;
}
