// SPDX-License-Identifier: MIT
// Scene objects: allocation and destroy, frame bounds, errors, the duplicate-id check,
// and bp_scene_read/bp_scene_parse, which tell binary from text by the magic.
#define _POSIX_C_SOURCE 200809L
#include "scene_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

void bp_scene_destroy(bp_scene *scene)
{
	if (!scene)
		return;
	free(scene->ids);
	for (int a = 0; a < 3; ++a) {
		free(scene->min[a]);
		free(scene->max[a]);
	}
	free(scene);
}

bp_status scenefile_alloc(int dims, size_t id_capacity, size_t row_capacity, bp_scene **out)
{
	*out = NULL;
	if (dims != 2 && dims != 3)
		return BP_ERR_INVALID_ARGUMENT;
	if (id_capacity > SIZE_MAX / sizeof(uint32_t) || row_capacity > SIZE_MAX / sizeof(float))
		return BP_ERR_OUT_OF_MEMORY;
	bp_scene *s = calloc(1, sizeof *s);
	if (!s)
		return BP_ERR_OUT_OF_MEMORY;
	s->dims = dims;
	s->frame_count = 1;
	bool ok = (s->ids = scenefile_malloc(id_capacity * sizeof(uint32_t))) != NULL;
	for (int a = 0; a < dims && ok; ++a) {
		ok = (s->min[a] = scenefile_malloc(row_capacity * sizeof(float))) != NULL;
		ok = ok && (s->max[a] = scenefile_malloc(row_capacity * sizeof(float))) != NULL;
	}
	if (!ok) {
		bp_scene_destroy(s);
		return BP_ERR_OUT_OF_MEMORY;
	}
	*out = s;
	return BP_OK;
}

bp_bounds_arrays bp_scene_frame_bounds(const bp_scene *scene, uint32_t frame)
{
	bp_bounds_arrays b = {0};
	if (!scene || frame >= scene->frame_count || (scene->dims != 2 && scene->dims != 3))
		return b;
	size_t at = (size_t)frame * scene->count;
	b.min_x = scene->min[0] + at;
	b.min_y = scene->min[1] + at;
	b.max_x = scene->max[0] + at;
	b.max_y = scene->max[1] + at;
	if (scene->dims == 3) {
		b.min_z = scene->min[2] + at;
		b.max_z = scene->max[2] + at;
	}
	return b;
}

static bp_status fail_v(bp_status status, bp_scene_error *err, const char *name, uint64_t line, const char *fmt,
	va_list args)
{
	if (!err)
		return status;
	err->line = line > UINT32_MAX ? UINT32_MAX : (uint32_t)line;
	int used = snprintf(err->message, sizeof err->message, "%s:%llu: ", name ? name : "?",
		(unsigned long long)line);
	if (used >= 0 && (size_t)used < sizeof err->message)
		vsnprintf(err->message + used, sizeof err->message - (size_t)used, fmt, args);
	return status;
}

bp_status scenefile_fail(bp_scene_error *err, const char *name, uint64_t line, const char *fmt, ...)
{
	va_list args;
	va_start(args, fmt);
	bp_status status = fail_v(BP_ERR_PARSE, err, name, line, fmt, args);
	va_end(args);
	return status;
}

bp_status scenefile_fail_status(bp_status status, bp_scene_error *err, const char *name, uint64_t line,
	const char *fmt, ...)
{
	va_list args;
	va_start(args, fmt);
	fail_v(status, err, name, line, fmt, args);
	va_end(args);
	return status;
}

// LSD radix sort of uint32, 8 bits a pass. Scenes reach 50M entities, where
// qsort takes seconds; this takes a few hundred milliseconds.
static void radix_sort_u32(uint32_t *keys, uint32_t *scratch, size_t n)
{
	for (int shift = 0; shift < 32; shift += 8) {
		size_t offsets[256] = {0};
		for (size_t i = 0; i < n; ++i)
			++offsets[(keys[i] >> shift) & 0xff];
		size_t sum = 0;
		for (int b = 0; b < 256; ++b) {
			size_t c = offsets[b];
			offsets[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; ++i)
			scratch[offsets[(keys[i] >> shift) & 0xff]++] = keys[i];
		uint32_t *t = keys;
		keys = scratch;
		scratch = t;
	}
	// Four passes: the sorted keys are back in the caller's `keys` array.
}

bp_status scenefile_find_duplicate(const uint32_t *ids, uint32_t count, bool *found, uint32_t *first,
	uint32_t *second)
{
	*found = false;
	// Fast path: generated and most written scenes list ids in increasing order.
	uint32_t i = 1;
	while (i < count && ids[i - 1] < ids[i])
		++i;
	if (i >= count)
		return BP_OK;
	size_t bytes = (size_t)count * sizeof(uint32_t);
	uint32_t *sorted = malloc(bytes);
	uint32_t *scratch = malloc(bytes);
	if (!sorted || !scratch) {
		free(sorted);
		free(scratch);
		return BP_ERR_OUT_OF_MEMORY;
	}
	memcpy(sorted, ids, bytes);
	radix_sort_u32(sorted, scratch, count);
	// Keep one copy of every id that repeats (the rest of the work is the error path).
	size_t repeated = 0;
	for (size_t k = 1; k < count; ++k)
		if (sorted[k] == sorted[k - 1] && (repeated == 0 || sorted[repeated - 1] != sorted[k]))
			sorted[repeated++] = sorted[k];
	if (repeated > 0) {
		// Walk in array order; the first repeated id seen twice is the earliest repeat.
		uint32_t *seen = scratch; // position + 1 of the first occurrence, 0 = not yet
		memset(seen, 0, repeated * sizeof(uint32_t));
		for (uint32_t k = 0; k < count && !*found; ++k) {
			size_t lo = 0, hi = repeated;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (sorted[mid] < ids[k])
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < repeated && sorted[lo] == ids[k]) {
				if (seen[lo]) {
					*found = true;
					*first = seen[lo] - 1;
					*second = k;
				} else {
					seen[lo] = k + 1;
				}
			}
		}
	}
	free(sorted);
	free(scratch);
	return BP_OK;
}

static bool has_magic(const void *data, size_t size)
{
	return size >= SCENEFILE_MAGIC_SIZE && memcmp(data, SCENEFILE_MAGIC, SCENEFILE_MAGIC_SIZE) == 0;
}

typedef struct memory_source {
	const unsigned char *at;
	size_t left;
} memory_source;

static bool memory_read(void *ctx, void *dst, size_t size)
{
	memory_source *m = ctx;
	if (size > m->left)
		return false;
	memcpy(dst, m->at, size);
	m->at += size;
	m->left -= size;
	return true;
}

static bool file_read(void *ctx, void *dst, size_t size)
{
	// One fread can move gigabytes; loop only for the short reads some systems give.
	FILE *f = ctx;
	unsigned char *p = dst;
	while (size > 0) {
		size_t got = fread(p, 1, size, f);
		if (got == 0)
			return false;
		p += got;
		size -= got;
	}
	return true;
}

bp_status bp_scene_parse(const char *data, size_t size, const char *name, bp_scene **out, bp_scene_error *err)
{
	if (!name)
		name = "<memory>";
	if (!out || (!data && size > 0))
		return scenefile_fail_status(BP_ERR_INVALID_ARGUMENT, err, name, 0, "no data or no output");
	*out = NULL;
	if (has_magic(data, size)) {
		memory_source m = {(const unsigned char *)data + SCENEFILE_MAGIC_SIZE, size - SCENEFILE_MAGIC_SIZE};
		scenefile_byte_source source = {memory_read, &m, size};
		return scenefile_read_binary(&source, name, out, err);
	}
	// The tokenizer needs a terminating NUL, which caller memory need not have.
	if (size == SIZE_MAX)
		return scenefile_fail_status(BP_ERR_OUT_OF_MEMORY, err, name, 0, "out of memory");
	char *copy = malloc(size + 1);
	if (!copy)
		return scenefile_fail_status(BP_ERR_OUT_OF_MEMORY, err, name, 0, "out of memory (%zu bytes)", size + 1);
	if (size)
		memcpy(copy, data, size);
	copy[size] = '\0';
	bp_status status = scenefile_parse_text(copy, size, name, out, err);
	free(copy);
	return status;
}

// Reads the rest of a file into one NUL-terminated buffer. `prefix` bytes were
// already read into head; `hint` is the file size when known (0 for pipes).
static bp_status read_whole(FILE *f, const char *path, const unsigned char *head, size_t prefix, size_t hint,
	char **out_buf, size_t *out_size, bp_scene_error *err)
{
	size_t cap = SCENE_MAX(hint, prefix) + 1;
	if (cap < 65536)
		cap = 65536;
	char *buf = malloc(cap);
	if (!buf)
		return scenefile_fail_status(BP_ERR_OUT_OF_MEMORY, err, path, 0, "out of memory (%zu bytes)", cap);
	memcpy(buf, head, prefix);
	size_t len = prefix;
	for (;;) {
		if (len + 1 == cap) {
			size_t grown = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
			char *bigger = grown > cap ? malloc(grown) : NULL;
			if (!bigger) {
				free(buf);
				return scenefile_fail_status(BP_ERR_OUT_OF_MEMORY, err, path, 0, "out of memory (%zu bytes)",
					grown);
			}
			memcpy(bigger, buf, len);
			free(buf);
			buf = bigger;
			cap = grown;
		}
		size_t got = fread(buf + len, 1, cap - 1 - len, f);
		len += got;
		if (got == 0) {
			if (ferror(f)) {
				int e = errno;
				free(buf);
				return scenefile_fail_status(BP_ERR_IO, err, path, 0, "%s", strerror(e ? e : EIO));
			}
			break;
		}
	}
	buf[len] = '\0';
	*out_buf = buf;
	*out_size = len;
	return BP_OK;
}

bp_status bp_scene_read(const char *path, bp_scene **out, bp_scene_error *err)
{
	if (!path || !out)
		return scenefile_fail_status(BP_ERR_INVALID_ARGUMENT, err, path ? path : "?", 0,
			"no path or no output");
	*out = NULL;
	FILE *f = fopen(path, "rb");
	if (!f)
		return scenefile_fail_status(BP_ERR_IO, err, path, 0, "%s", strerror(errno));
	struct stat st;
	if (fstat(fileno(f), &st) != 0) {
		int e = errno;
		fclose(f);
		return scenefile_fail_status(BP_ERR_IO, err, path, 0, "%s", strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		fclose(f);
		return scenefile_fail_status(BP_ERR_IO, err, path, 0, "%s", strerror(EISDIR));
	}
	uint64_t file_size = S_ISREG(st.st_mode) && st.st_size > 0 ? (uint64_t)st.st_size : 0;
	unsigned char head[SCENEFILE_MAGIC_SIZE];
	size_t prefix = fread(head, 1, sizeof head, f);
	if (prefix < sizeof head && ferror(f)) {
		int e = errno;
		fclose(f);
		return scenefile_fail_status(BP_ERR_IO, err, path, 0, "%s", strerror(e ? e : EIO));
	}
	bp_status status;
	if (has_magic(head, prefix) && S_ISREG(st.st_mode)) {
		// Binary straight from the file into the scene arrays: no second copy.
		scenefile_byte_source source = {file_read, f, file_size};
		status = scenefile_read_binary(&source, path, out, err);
	} else {
		if (file_size > SIZE_MAX - 1) {
			fclose(f);
			return scenefile_fail_status(BP_ERR_OUT_OF_MEMORY, err, path, 0, "file too large");
		}
		char *buf = NULL;
		size_t size = 0;
		status = read_whole(f, path, head, prefix, (size_t)file_size, &buf, &size, err);
		if (status == BP_OK) {
			if (has_magic(buf, size)) {
				memory_source m = {(const unsigned char *)buf + SCENEFILE_MAGIC_SIZE, size - SCENEFILE_MAGIC_SIZE};
				scenefile_byte_source source = {memory_read, &m, size};
				status = scenefile_read_binary(&source, path, out, err);
			} else {
				status = scenefile_parse_text(buf, size, path, out, err);
			}
			free(buf);
		}
	}
	fclose(f);
	return status;
}
