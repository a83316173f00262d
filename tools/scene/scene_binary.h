// SPDX-License-Identifier: MIT
// The binary form of a scene: its layout, its reader and its writer, for scene.c.
#ifndef BP_SCENE_BINARY_H
#define BP_SCENE_BINARY_H

#include "bp_scene.h"
#include <stdbool.h>

/// Binary form: magic, then little-endian uint32 dims, count, frame_count, reserved.
#define SCENEFILE_MAGIC "BPSCENE1"
#define SCENEFILE_MAGIC_SIZE 8
#define SCENEFILE_HEADER_SIZE (SCENEFILE_MAGIC_SIZE + 4 * 4)

/// Where the binary reader takes its bytes from: a file or memory.
typedef struct scenefile_byte_source {
	/// Reads exactly size bytes; false on a short read or an IO error (errno set).
	bool (*read)(void *ctx, void *dst, size_t size);
	void *ctx;
	uint64_t total_size; ///< bytes in the whole source, magic included
} scenefile_byte_source;

/// Binary reader; the source is positioned just after the magic.
bp_status scenefile_read_binary(scenefile_byte_source *source, const char *name, bp_scene **out,
	bp_scene_error *err);

/// Writes the binary form through an output file (output_file.h); scene.c has checked the
/// scene and path. BP_ERR_IO when a write fails, the target as it was.
bp_status scenefile_write_binary(const bp_scene *scene, const char *path, bp_scene_error *err);

#endif
