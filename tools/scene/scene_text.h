// SPDX-License-Identifier: MIT
// The text form of a scene (docs/design.md "Scene and trace formats"): its parser and its writer, for scene.c.
#ifndef BP_SCENE_TEXT_H
#define BP_SCENE_TEXT_H

#include "bp_scene.h"
#include "scene_source.h"

/// Reads a text scene from the source's first byte, line by line through a buffer
/// of `buffer` bytes (SCENEFILE_LINE_BUFFER; tests pass small ones). What it
/// holds beyond the scene is that buffer and, only while a line is longer, the
/// line. `name` is used in messages.
bp_status scenefile_read_text(scenefile_source *source, size_t buffer, const char *name, bp_scene **out,
	bp_scene_error *err);

/// Writes the text form through an output file (output_file.h); scene.c has checked the
/// scene and path. BP_ERR_IO when a write fails (the target as it was),
/// BP_ERR_OUT_OF_MEMORY without a buffer.
bp_status scenefile_write_text(const bp_scene *scene, const char *path, bp_scene_error *err);

#endif
