// SPDX-License-Identifier: MIT
// libFuzzer target: traces. An input that starts with the trace magic is a trace file: it is
// read (every damage refused with a message, never a crash) and what reads is replayed. Any
// other input is a history of writer calls (create, destroy, set, move, end of frame, with ids
// and bounds from the bytes) whose refusals must leave the file as if they were never made;
// the trace written is then replayed. A replay drives a plain and an incremental world through
// bp_trace_reader_apply: each frame's pairs must equal the brute-force oracle over the reader's
// state, the incremental world's byte for byte the plain world's, and frame K read alone
// through the index (seek, then load into a new world) must pair as the replay did.
#include "fuzz_common.h"
#include <unistd.h>

enum { MAX_IDS = 48, MAX_FRAMES = 24 };

static const char *scratch_path(const char *what)
{
	static char path[2][64];
	const int i = what[0] == 'w';
	if (!path[i][0]) {
		const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
		snprintf(path[i], sizeof path[i], "%s/bp-fuzz-trace-%s-%ld", dir, what, (long)getpid());
	}
	return path[i];
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
static bp_pair *oracle(const bp_trace_state *s, int dims, size_t *count, bool *spheres)
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

static const bp_pair *step(bp_world *w, size_t *count)
{
	bp_status status = bp_world_step(w);
	FUZZ_CHECK(status == BP_OK, "step: %s", bp_world_last_error(w));
	return bp_world_pairs(w, count);
}

/// Replays a trace that opens; checks each frame as the header says. Returns the frames replayed.
/// `written`: the writer made it, so every frame and keyframe reads, and frame K read alone pairs
/// as the replay did (a file may hold keyframes that pass their checks yet disagree with the
/// frames before them: a reader checks a keyframe as a record, not by replaying).
static uint32_t replay(const char *path, bool written)
{
	bp_trace_reader *r = NULL;
	if (bp_trace_reader_open(path, &r) != BP_OK) {
		FUZZ_CHECK(strstr(bp_trace_open_error(), path), "open error without the path: %s", bp_trace_open_error());
		return 0;
	}
	const bp_trace_info info = bp_trace_reader_info(r);
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
		FUZZ_CHECK(bp_trace_reader_apply(r, plain) == BP_OK, "apply: %s", bp_trace_reader_error(r));
		FUZZ_CHECK(bp_trace_reader_apply(r, incremental) == BP_OK, "apply: %s", bp_trace_reader_error(r));
		bp_trace_state s = bp_trace_reader_state(r);
		if (s.count > 400)
			break; // the oracle is quadratic
		size_t n_plain, n_incremental, n_want;
		bool spheres;
		const bp_pair *p = step(plain, &n_plain), *q = step(incremental, &n_incremental);
		FUZZ_CHECK(n_plain == n_incremental && (n_plain == 0 || !memcmp(p, q, n_plain * sizeof *p)),
			"frame %u: incremental %zu pairs, plain %zu", k, n_incremental, n_plain);
		bp_pair *want = oracle(&s, info.dims, &n_want, &spheres);
		if (!spheres)
			fuzz_expect_pairs(p, n_plain, want, n_want, s.count, "plain world");
		free(want);
		sums[k] = bp_pairs_checksum(p, n_plain, s.ids) ^ n_plain;
	}
	for (uint32_t j = k; j-- > 0;) { // frame j alone, through the index
		const uint32_t position = bp_trace_reader_position(r);
		if (bp_trace_reader_seek(r, j) != BP_OK) {
			FUZZ_CHECK(!written, "seek %u: %s", j, bp_trace_reader_error(r));
			FUZZ_CHECK(bp_trace_reader_error(r)[0] && bp_trace_reader_position(r) == position, "a failed seek moved");
			break;
		}
		bp_world *alone = new_world(info.dims, false);
		FUZZ_CHECK(bp_trace_reader_load(r, alone) == BP_OK, "load: %s", bp_trace_reader_error(r));
		size_t n;
		const bp_pair *p = step(alone, &n);
		FUZZ_CHECK(!written || (bp_pairs_checksum(p, n, bp_trace_reader_state(r).ids) ^ n) == sums[j],
			"frame %u alone differs", j);
		bp_world_destroy(alone);
	}
	bp_world_destroy(plain);
	bp_world_destroy(incremental);
	bp_trace_reader_close(r);
	return k;
}

static float coordinate(fuzz_reader *in)
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
			float lo = coordinate(in), extent = coordinate(in) - 1.0f; // -1: inverted, refused
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
	const char *path = scratch_path("write");
	bp_trace_writer *w = NULL;
	FUZZ_CHECK(bp_trace_writer_open(path, &def, &w) == BP_OK, "%s", bp_trace_open_error());
	bool touched = false;
	for (int calls = 0; fuzz_more(&in) && calls < 200 && bp_trace_writer_frames(w) < MAX_FRAMES; ++calls)
		writer_call(&in, w, def.dims, &touched);
	const uint32_t frames = bp_trace_writer_frames(w) + (touched ? 1 : 0);
	FUZZ_CHECK(bp_trace_writer_close(w) == BP_OK, "close: %s", bp_trace_open_error());
	const uint32_t replayed = replay(path, true), expected = frames < MAX_FRAMES ? frames : MAX_FRAMES;
	FUZZ_CHECK(replayed == expected, "%u of %u frames of a written trace replayed", replayed, expected);
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_use_malloc();
	if (size >= 8 && memcmp(data, "BPTRACE1", 8) == 0) {
		const char *path = scratch_path("file");
		FILE *f = fopen(path, "wb");
		FUZZ_CHECK(f && fwrite(data, 1, size, f) == size && fclose(f) == 0, "scratch file");
		replay(path, false);
		unlink(path);
	} else {
		write_and_replay(data, size);
	}
	FUZZ_CHECK(bp_allocated_bytes() == 0, "%lld bytes left allocated", (long long)bp_allocated_bytes());
	return 0;
}
