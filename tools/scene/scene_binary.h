// SPDX-License-Identifier: MIT
// The binary form of a scene: its layout, its reader and its writer, for scene.c.
#ifndef BP_SCENE_BINARY_H
#define BP_SCENE_BINARY_H

#include "bp_scene.h"
#include "scene_source.h"
#include <stdbool.h>

/// Binary form: magic, then little-endian uint32 dims, count, frame_count, reserved.
#define SCENEFILE_MAGIC "BPSCENE1"
#define SCENEFILE_MAGIC_SIZE 8
#define SCENEFILE_HEADER_SIZE (SCENEFILE_MAGIC_SIZE + 4 * 4)

/// Binary reader, from the source's first byte (the magic). A source of known size
/// is checked against the header before anything is allocated; from a pipe, a
/// short input or one with bytes after the scene is found while reading.
bp_status scenefile_read_binary(scenefile_source *source, const char *name, bp_scene **out, bp_scene_error *err);

/// Writes the binary form through an output file (output_file.h); scene.c has checked the
/// scene and path. BP_ERR_IO when a write fails, the target as it was.
bp_status scenefile_write_binary(const bp_scene *scene, const char *path, bp_scene_error *err);

#endif
