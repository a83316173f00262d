// SPDX-License-Identifier: MIT
// libFuzzer target: bytes through bp_scene_parse (text or binary). A scene that parses is
// written back (text, then binary) and read again: same ids, bit-identical bounds. Text is
// read a second time through a small buffer, which must give the same answer. Every input
// returns the scene library's allocated bytes to where they started.
#include "fuzz_common.h"
#include <bp_scene.h>
#include <scene_binary.h>
#include <scene_text.h>
#include <unistd.h>

/// Scratch file per process (libFuzzer -jobs runs several processes in one directory).
static const char *scratch_path(void)
{
	static char path[64];
	if (!path[0]) {
		const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
		snprintf(path, sizeof path, "%s/bp-fuzz-scene-%ld", dir, (long)getpid());
	}
	return path;
}

static void expect_same_scene(const bp_scene *a, const bp_scene *b, const char *what)
{
	FUZZ_CHECK(a->dims == b->dims && a->count == b->count && a->frame_count == b->frame_count,
		"%s: dims %d/%d count %u/%u frames %u/%u", what, a->dims, b->dims, a->count, b->count, a->frame_count,
		b->frame_count);
	FUZZ_CHECK(a->count == 0 || memcmp(a->ids, b->ids, a->count * sizeof *a->ids) == 0, "%s: ids differ", what);
	size_t rows = (size_t)a->count * a->frame_count;
	for (int k = 0; k < a->dims; ++k) {
		if (rows == 0)
			continue;
		FUZZ_CHECK(memcmp(a->min[k], b->min[k], rows * sizeof(float)) == 0, "%s: min[%d] differs", what, k);
		FUZZ_CHECK(memcmp(a->max[k], b->max[k], rows * sizeof(float)) == 0, "%s: max[%d] differs", what, k);
	}
}

/// Scene invariants the header promises: unique ids, finite bounds with min <= max.
static void expect_valid_scene(const bp_scene *s)
{
	FUZZ_CHECK(s->dims == 2 || s->dims == 3, "dims %d", s->dims);
	FUZZ_CHECK(s->frame_count >= 1, "frame_count 0");
	FUZZ_CHECK(s->dims == 3 || (s->min[2] == NULL && s->max[2] == NULL), "2D scene with z arrays");
	for (uint32_t i = 0; i < s->count; ++i)
		for (uint32_t j = i + 1; j < s->count; ++j)
			FUZZ_CHECK(s->ids[i] != s->ids[j], "ids %u and %u repeat %u", i, j, s->ids[i]);
	size_t rows = (size_t)s->count * s->frame_count;
	for (int k = 0; k < s->dims; ++k)
		for (size_t r = 0; r < rows; ++r)
			FUZZ_CHECK(s->min[k][r] <= s->max[k][r] && s->min[k][r] - s->min[k][r] == 0.0f &&
					s->max[k][r] - s->max[k][r] == 0.0f,
				"row %zu axis %d: [%g, %g] not finite or inverted", r, k, (double)s->min[k][r],
				(double)s->max[k][r]);
}

static void round_trip(const bp_scene *scene, bool binary)
{
	const char *what = binary ? "binary round trip" : "text round trip";
	const char *path = scratch_path();
	bp_scene_error err;
	bp_status s = binary ? bp_scene_write_binary(scene, path, &err) : bp_scene_write_text(scene, path, &err);
	FUZZ_CHECK(s == BP_OK, "%s: write: %s: %s", what, bp_status_string(s), err.message);
	bp_scene *again = NULL;
	s = bp_scene_read(path, &again, &err);
	FUZZ_CHECK(s == BP_OK, "%s: read back: %s: %s", what, bp_status_string(s), err.message);
	expect_same_scene(scene, again, what);
	bp_scene_destroy(again);
	unlink(path);
}

/// The text reader over a buffer of a few bytes, so lines, CRLF pairs and numbers fall
/// across its refills, answers as it did over its normal buffer: same status, same
/// message, same scene.
static void expect_same_through_small_buffer(const uint8_t *data, size_t size, bp_status status,
	const bp_scene *scene, const bp_scene_error *err)
{
	if (size >= SCENEFILE_MAGIC_SIZE && memcmp(data, SCENEFILE_MAGIC, SCENEFILE_MAGIC_SIZE) == 0)
		return;
	scenefile_source source;
	scenefile_source_memory(&source, data, size);
	bp_scene *again = NULL;
	bp_scene_error again_err;
	const size_t buffer = 4 + size % 29;
	bp_status s = scenefile_read_text(&source, buffer, "fuzz", &again, &again_err);
	FUZZ_CHECK(s == status, "buffer %zu: %s, normal buffer %s", buffer, bp_status_string(s), bp_status_string(status));
	if (s == BP_OK) {
		expect_same_scene(scene, again, "small buffer");
		bp_scene_destroy(again);
	} else {
		FUZZ_CHECK(strcmp(again_err.message, err->message) == 0, "buffer %zu: '%s', normal buffer '%s'", buffer,
			again_err.message, err->message);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t start_bytes = bp_scene_allocated_bytes();
	bp_scene *scene = NULL;
	bp_scene_error err;
	memset(&err, 0x5a, sizeof err);
	bp_status s = bp_scene_parse((const char *)data, size, "fuzz", &scene, &err);
	expect_same_through_small_buffer(data, size, s, scene, &err);
	if (s == BP_OK) {
		FUZZ_CHECK(scene != NULL, "BP_OK without a scene");
		expect_valid_scene(scene);
		// An empty scene's frames cost no input in the binary form (24 bytes may say 2^32 - 1
		// frames) but one "# frame K" line each in text: round-trip only what text can hold.
		if (scene->count > 0 || scene->frame_count <= 4096)
			round_trip(scene, false);
		round_trip(scene, true);
		bp_scene_destroy(scene);
	} else {
		FUZZ_CHECK(scene == NULL, "error %s with a scene", bp_status_string(s));
		FUZZ_CHECK(memchr(err.message, '\0', sizeof err.message) != NULL, "error message not terminated");
		FUZZ_CHECK(strncmp(err.message, "fuzz:", 5) == 0, "message does not name the source: %.80s", err.message);
	}
	FUZZ_CHECK(bp_scene_allocated_bytes() == start_bytes, "leak: %lld bytes",
		(long long)(bp_scene_allocated_bytes() - start_bytes));
	return 0;
}
