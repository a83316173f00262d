// SPDX-License-Identifier: MIT
// Byte sources for the scene readers: a file or memory, read in pieces, with a peek at the
// first bytes (the binary magic) that works on pipes too.
#define _POSIX_C_SOURCE 200809L // fileno, fstat
#include "scene_source.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "scene_format.h"

void scenefile_source_memory(scenefile_source *source, const void *data, size_t size)
{
	*source = (scenefile_source){.data = data, .size = size, .size_known = true, .seekable = true};
}

bp_status scenefile_source_open(scenefile_source *source, const char *path, bp_scene_error *err)
{
	*source = (scenefile_source){0};
	FILE *f = fopen(path, "rb");
	if (!f)
		return scenefile_fail_status(BP_ERR_IO, err, path, 0, "%s", strerror(errno));
	struct stat st;
	int e = fstat(fileno(f), &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
	if (e) {
		fclose(f);
		return scenefile_fail_status(BP_ERR_IO, err, path, 0, "%s", strerror(e));
	}
	source->file = f;
	// Pipes and devices: no size to check against, no going back.
	source->size_known = source->seekable = S_ISREG(st.st_mode);
	source->size = S_ISREG(st.st_mode) && st.st_size > 0 ? (uint64_t)st.st_size : 0;
	return BP_OK;
}

void scenefile_source_close(scenefile_source *source)
{
	if (source->file)
		fclose(source->file);
	source->file = NULL;
}

static size_t read_file(scenefile_source *source, unsigned char *dst, size_t size)
{
	// One fread can move gigabytes; loop only for the short reads pipes give.
	size_t got = 0;
	while (got < size) {
		size_t n = fread(dst + got, 1, size - got, source->file);
		if (n == 0) {
			if (ferror(source->file))
				source->error = errno ? errno : EIO;
			break;
		}
		got += n;
	}
	return got;
}

static size_t read_raw(scenefile_source *source, unsigned char *dst, size_t size)
{
	if (source->file)
		return read_file(source, dst, size);
	uint64_t left = source->size - source->offset;
	size_t n = size < left ? size : (size_t)left;
	if (n)
		memcpy(dst, source->data + source->offset, n);
	return n;
}

size_t scenefile_source_read(scenefile_source *source, void *dst, size_t size)
{
	unsigned char *p = dst;
	size_t got = 0;
	if (source->head_at < source->head_len) {
		got = SCENE_MIN(size, (size_t)(source->head_len - source->head_at));
		memcpy(p, source->head + source->head_at, got);
		source->head_at += (unsigned)got;
	}
	if (got < size)
		got += read_raw(source, p + got, size - got);
	source->offset += got;
	return got;
}

size_t scenefile_source_peek(scenefile_source *source, void *dst, size_t size)
{
	size = SCENE_MIN(size, sizeof source->head);
	if (source->offset == 0 && source->head_len == 0) {
		if (!source->file) {
			size = (size_t)SCENE_MIN((uint64_t)size, source->size);
			if (size)
				memcpy(dst, source->data, size);
			return size;
		}
		source->head_len = (unsigned)read_file(source, source->head, sizeof source->head);
	}
	size = SCENE_MIN(size, (size_t)source->head_len);
	memcpy(dst, source->head, size);
	return size;
}

uint64_t scenefile_source_left(const scenefile_source *source)
{
	return source->size_known && source->size > source->offset ? source->size - source->offset : 0;
}

bool scenefile_source_rewind(scenefile_source *source)
{
	if (!source->seekable || (source->file && fseek(source->file, 0, SEEK_SET) != 0))
		return false;
	if (source->file)
		clearerr(source->file);
	source->offset = 0;
	source->head_len = source->head_at = 0;
	source->error = 0;
	return true;
}
