// SPDX-License-Identifier: MIT
// Binary scene form: "BPSCENE1", little-endian uint32 dims, count, frame_count, reserved,
// the ids, then per frame and per axis the min array and the max array (float32).
#include "scene_binary.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "output_file.h"
#include "scene_format.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define SCENE_BIG_ENDIAN 1
#else
#define SCENE_BIG_ENDIAN 0
#endif

static uint32_t swap32(uint32_t v)
{
	return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
}

static void from_le32(void *data, size_t n)
{
#if SCENE_BIG_ENDIAN
	uint32_t *w = data;
	for (size_t i = 0; i < n; ++i)
		w[i] = swap32(w[i]);
#else
	(void)data;
	(void)n;
	(void)swap32;
#endif
}

static bool read_exactly(scenefile_source *source, void *dst, size_t size)
{
	return scenefile_source_read(source, dst, size) == size;
}

static bp_status read_fail(const scenefile_source *source, bp_scene_error *err, const char *name)
{
	if (source->error)
		return scenefile_fail_status(BP_ERR_IO, err, name, 0, "%s", strerror(source->error));
	return scenefile_fail_status(BP_ERR_IO, err, name, 0, "unexpected end of file");
}

static bp_status check_bounds(const bp_scene *s, const char *name, bp_scene_error *err)
{
	const size_t count = s->count;
	// No entities: nothing to check, and frame_count (up to 2^32 - 1 from a 24-byte file) must not cost time.
	for (uint32_t f = 0; f < s->frame_count && count > 0; ++f) {
		for (int a = 0; a < s->dims; ++a) {
			const float *lo = s->min[a] + (size_t)f * count, *hi = s->max[a] + (size_t)f * count;
			// Branch-free scan first; the slow loop below only runs to name the culprit.
			unsigned bad = 0;
			for (size_t i = 0; i < count; ++i)
				bad |= !(lo[i] <= hi[i]) | !isfinite(lo[i]) | !isfinite(hi[i]);
			if (!bad)
				continue;
			for (size_t i = 0; i < count; ++i) {
				const char axis = "xyz"[a];
				if (!isfinite(lo[i]) || !isfinite(hi[i]))
					return scenefile_fail(err, name, 0, "entity %zu (id %u), frame %u: %s_%c is %s", i, s->ids[i],
						f, isfinite(lo[i]) ? "max" : "min", axis,
						isnan(isfinite(lo[i]) ? hi[i] : lo[i]) ? "NaN" : "infinite");
				if (lo[i] > hi[i])
					return scenefile_fail(err, name, 0, "entity %zu (id %u), frame %u: min_%c > max_%c (%.9g > %.9g)",
						i, s->ids[i], f, axis, axis, (double)lo[i], (double)hi[i]);
			}
		}
	}
	return BP_OK;
}

bp_status scenefile_read_binary(scenefile_source *source, const char *name, bp_scene **out, bp_scene_error *err)
{
	*out = NULL;
	const uint64_t total = source->size;
	if (source->size_known && total < SCENEFILE_HEADER_SIZE)
		return scenefile_fail(err, name, 0, "truncated binary header (%llu bytes, need %d)",
			(unsigned long long)total, SCENEFILE_HEADER_SIZE);
	unsigned char magic[SCENEFILE_MAGIC_SIZE];
	uint32_t h[4];
	if (!read_exactly(source, magic, sizeof magic) || !read_exactly(source, h, sizeof h)) {
		if (source->error)
			return read_fail(source, err, name);
		return scenefile_fail(err, name, 0, "truncated binary header (%llu bytes, need %d)",
			(unsigned long long)source->offset, SCENEFILE_HEADER_SIZE);
	}
	if (memcmp(magic, SCENEFILE_MAGIC, SCENEFILE_MAGIC_SIZE) != 0)
		return scenefile_fail(err, name, 0, "not a binary scene (no %s magic)", SCENEFILE_MAGIC);
	from_le32(h, 4);
	const uint32_t dims = h[0], count = h[1], frames = h[2], reserved = h[3];
	if (dims != 2 && dims != 3)
		return scenefile_fail(err, name, 0, "dims must be 2 or 3 (got %u)", dims);
	if (frames == 0)
		return scenefile_fail(err, name, 0, "frame_count is 0 (at least 1)");
	if (reserved != 0)
		return scenefile_fail(err, name, 0, "reserved header field is %u (must be 0)", reserved);
	// rows < 2^64 always; rows * 8 * dims + 4 * count + 24 fits in 64 bits unless huge.
	const uint64_t rows = (uint64_t)count * frames;
	const uint64_t per_row = 2ull * dims * sizeof(float);
	if (rows > (UINT64_MAX - SCENEFILE_HEADER_SIZE - 4ull * count) / per_row)
		return scenefile_fail(err, name, 0, "header sizes overflow (count %u, frames %u)", count, frames);
	const uint64_t expected = SCENEFILE_HEADER_SIZE + 4ull * count + rows * per_row;
	if (source->size_known && total != expected)
		return scenefile_fail(err, name, 0,
			"size mismatch: dims %u, count %u, frames %u need %llu bytes, the data has %llu", dims, count, frames,
			(unsigned long long)expected, (unsigned long long)total);
	if (rows > SIZE_MAX / sizeof(float))
		return scenefile_fail_status(BP_ERR_OUT_OF_MEMORY, err, name, 0, "scene too large for this machine");

	bp_scene *s;
	bp_status status = scenefile_alloc((int)dims, count, (size_t)rows, &s);
	if (status != BP_OK)
		return scenefile_fail_status(status, err, name, 0, "out of memory (%u entities x %u frames)", count, frames);
	s->count = count;
	s->frame_count = frames;
	bool ok = read_exactly(source, s->ids, (size_t)count * sizeof(uint32_t));
	for (uint32_t f = 0; f < frames && ok && count > 0; ++f)
		for (uint32_t a = 0; a < dims && ok; ++a) {
			ok = read_exactly(source, s->min[a] + (size_t)f * count, (size_t)count * sizeof(float));
			ok = ok && read_exactly(source, s->max[a] + (size_t)f * count, (size_t)count * sizeof(float));
		}
	// A pipe's size shows only now: it ran out early, or bytes follow the scene.
	unsigned char extra;
	if (!source->size_known && !source->error && (!ok || scenefile_source_read(source, &extra, 1) == 1))
		status = scenefile_fail(err, name, 0,
			"size mismatch: dims %u, count %u, frames %u need %llu bytes, the data has %s%llu", dims, count, frames,
			(unsigned long long)expected, ok ? "more than " : "", (unsigned long long)(ok ? expected : source->offset));
	else if (!ok || source->error)
		status = read_fail(source, err, name);
	if (status != BP_OK) {
		bp_scene_destroy(s);
		return status;
	}
	from_le32(s->ids, count);
	for (uint32_t a = 0; a < dims; ++a) {
		from_le32(s->min[a], (size_t)rows);
		from_le32(s->max[a], (size_t)rows);
	}
	status = check_bounds(s, name, err);
	if (status == BP_OK) {
		bool found;
		uint32_t first, second;
		status = scenefile_find_duplicate(s->ids, count, &found, &first, &second);
		if (status != BP_OK)
			status = scenefile_fail_status(status, err, name, 0, "out of memory");
		else if (found)
			status = scenefile_fail(err, name, 0, "duplicate id %u (entities %u and %u)", s->ids[second], first,
				second);
	}
	if (status != BP_OK) {
		bp_scene_destroy(s);
		return status;
	}
	*out = s;
	return BP_OK;
}

// Writes n 32-bit words little-endian.
static bool write_le32(FILE *f, const void *data, size_t n)
{
#if SCENE_BIG_ENDIAN
	uint32_t chunk[4096];
	const uint32_t *w = data;
	while (n > 0) {
		size_t k = SCENE_MIN(n, sizeof chunk / sizeof chunk[0]);
		for (size_t i = 0; i < k; ++i)
			chunk[i] = swap32(w[i]);
		if (fwrite(chunk, sizeof(uint32_t), k, f) != k)
			return false;
		w += k;
		n -= k;
	}
	return true;
#else
	return n == 0 || fwrite(data, sizeof(uint32_t), n, f) == n;
#endif
}

bp_status scenefile_write_binary(const bp_scene *scene, const char *path, bp_scene_error *err)
{
	bp_output output;
	if (!bp_output_open(&output, path))
		return scenefile_write_fail(BP_ERR_IO, err, "%s", output.message);
	FILE *f = output.file;
	const size_t count = scene->count;
	uint32_t h[4] = {(uint32_t)scene->dims, scene->count, scene->frame_count, 0};
	bool ok = fwrite(SCENEFILE_MAGIC, 1, SCENEFILE_MAGIC_SIZE, f) == SCENEFILE_MAGIC_SIZE;
	ok = ok && write_le32(f, h, 4);
	ok = ok && write_le32(f, scene->ids, count);
	for (uint32_t fr = 0; fr < scene->frame_count && ok && count > 0; ++fr)
		for (int a = 0; a < scene->dims && ok; ++a) {
			ok = write_le32(f, scene->min[a] + (size_t)fr * count, count);
			ok = ok && write_le32(f, scene->max[a] + (size_t)fr * count, count);
		}
	if (!ok)
		bp_output_abort(&output, errno ? errno : EIO);
	else if (bp_output_commit(&output))
		return BP_OK;
	return scenefile_write_fail(BP_ERR_IO, err, "%s", output.message);
}
