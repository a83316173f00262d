// SPDX-License-Identifier: MIT
// The scene file entry points: bp_scene_read and bp_scene_parse, which tell binary from
// text by the magic and hand the bytes to that form's reader, the two writers' argument
// checks, and frame bounds.
#define _POSIX_C_SOURCE 200809L // fileno, fstat
#include "bp_scene.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scene_binary.h"
#include "scene_format.h"
#include "scene_text.h"

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
	char *copy = scenefile_malloc(size + 1);
	if (!copy)
		return scenefile_fail_status(BP_ERR_OUT_OF_MEMORY, err, name, 0, "out of memory (%zu bytes)", size + 1);
	if (size)
		memcpy(copy, data, size);
	copy[size] = '\0';
	bp_status status = scenefile_parse_text(copy, size, name, out, err);
	scenefile_free(copy);
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
	char *buf = scenefile_malloc(cap);
	if (!buf)
		return scenefile_fail_status(BP_ERR_OUT_OF_MEMORY, err, path, 0, "out of memory (%zu bytes)", cap);
	memcpy(buf, head, prefix);
	size_t len = prefix;
	for (;;) {
		if (len + 1 == cap) {
			size_t grown = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
			char *bigger = grown > cap ? scenefile_malloc(grown) : NULL;
			if (!bigger) {
				scenefile_free(buf);
				return scenefile_fail_status(BP_ERR_OUT_OF_MEMORY, err, path, 0, "out of memory (%zu bytes)",
					grown);
			}
			memcpy(bigger, buf, len);
			scenefile_free(buf);
			buf = bigger;
			cap = grown;
		}
		size_t got = fread(buf + len, 1, cap - 1 - len, f);
		len += got;
		if (got == 0) {
			if (ferror(f)) {
				int e = errno;
				scenefile_free(buf);
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
			scenefile_free(buf);
		}
	}
	fclose(f);
	return status;
}

// What both writers need: a known dims, at least one frame, and arrays behind any entity.
static bool writable(const bp_scene *s)
{
	if (!s || (s->dims != 2 && s->dims != 3) || s->frame_count == 0)
		return false;
	if (s->count == 0)
		return true;
	if (!s->ids)
		return false;
	for (int a = 0; a < s->dims; ++a)
		if (!s->min[a] || !s->max[a])
			return false;
	return true;
}

static bp_status not_writable(const bp_scene *scene, const char *path, bp_scene_error *err)
{
	if (!path)
		return scenefile_write_fail(BP_ERR_INVALID_ARGUMENT, err, "cannot write: no path");
	return scenefile_write_fail(BP_ERR_INVALID_ARGUMENT, err, "cannot write '%s': %s", path,
		scene ? "the scene has no dims, frames or arrays" : "no scene");
}

bp_status bp_scene_write_text(const bp_scene *scene, const char *path, bp_scene_error *err)
{
	if (!writable(scene) || !path)
		return not_writable(scene, path, err);
	return scenefile_write_text(scene, path, err);
}

bp_status bp_scene_write_binary(const bp_scene *scene, const char *path, bp_scene_error *err)
{
	if (!writable(scene) || !path)
		return not_writable(scene, path, err);
	return scenefile_write_binary(scene, path, err);
}
