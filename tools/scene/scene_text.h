// SPDX-License-Identifier: MIT
// The text form of a scene (DESIGN §7): its parser and its writer, for scene.c.
#ifndef BP_SCENE_TEXT_H
#define BP_SCENE_TEXT_H

#include "bp_scene.h"

/// Parses a whole text scene; `name` is used in messages. buf[size] must be '\0'
/// (the tokenizer leans on it).
bp_status scenefile_parse_text(const char *buf, size_t size, const char *name, bp_scene **out,
	bp_scene_error *err);

/// Writes the text form through an output file (output_file.h); scene.c has checked the
/// scene and path. BP_ERR_IO when a write fails (the target as it was),
/// BP_ERR_OUT_OF_MEMORY without a buffer.
bp_status scenefile_write_text(const bp_scene *scene, const char *path, bp_scene_error *err);

#endif
