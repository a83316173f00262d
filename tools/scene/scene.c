// SPDX-License-Identifier: MIT
// The scene file entry points: bp_scene_read and bp_scene_parse, which tell binary from
// text by the magic and hand the source to that form's reader, the two writers' argument
// checks, and frame bounds.
#include "bp_scene.h"

#include <string.h>

#include "scene_binary.h"
#include "scene_format.h"
#include "scene_lines.h"
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

// Binary or text, told by the first bytes; either reader streams from the source.
static bp_status read_source(scenefile_source *source, const char *name, bp_scene **out, bp_scene_error *err)
{
	unsigned char head[SCENEFILE_MAGIC_SIZE];
	size_t got = scenefile_source_peek(source, head, sizeof head);
	if (source->error)
		return scenefile_fail_status(BP_ERR_IO, err, name, 0, "%s", strerror(source->error));
	if (has_magic(head, got))
		return scenefile_read_binary(source, name, out, err);
	return scenefile_read_text(source, SCENEFILE_LINE_BUFFER, name, out, err);
}

bp_status bp_scene_parse(const char *data, size_t size, const char *name, bp_scene **out, bp_scene_error *err)
{
	if (!name)
		name = "<memory>";
	if (!out || (!data && size > 0))
		return scenefile_fail_status(BP_ERR_INVALID_ARGUMENT, err, name, 0, "no data or no output");
	*out = NULL;
	scenefile_source source;
	scenefile_source_memory(&source, data, size);
	return read_source(&source, name, out, err);
}

bp_status bp_scene_read(const char *path, bp_scene **out, bp_scene_error *err)
{
	if (!path || !out)
		return scenefile_fail_status(BP_ERR_INVALID_ARGUMENT, err, path ? path : "?", 0,
			"no path or no output");
	*out = NULL;
	scenefile_source source;
	bp_status status = scenefile_source_open(&source, path, err);
	if (status != BP_OK)
		return status;
	status = read_source(&source, path, out, err);
	scenefile_source_close(&source);
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
