// SPDX-License-Identifier: MIT
// Scene files (docs/design.md "Scene and trace formats": the text interchange format and a binary form) and scene generators:
// a support library for bp, perf and the tests, built on the public API and not installed.
#ifndef BP_SCENE_H
#define BP_SCENE_H

#include <broadphase/broadphase.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A scene: `count` entities with unique 32-bit ids and `frame_count` frames of
/// bounds. Frame f of axis a lives at min[a][f * count .. f * count + count - 1].
/// In 2D min[2] and max[2] are NULL. Free with bp_scene_destroy.
typedef struct bp_scene {
	int dims;
	uint32_t count;
	uint32_t frame_count; ///< at least 1
	uint32_t *ids;        ///< count entries, unique
	float *min[3];
	float *max[3];
} bp_scene;

/// Where and why a scene file was rejected. `message` is "file:line: reason"
/// (line 0 when the problem is not tied to a line, such as an unreadable file).
/// From the writers it is "cannot write 'file': reason" (line 0).
typedef struct bp_scene_error {
	uint32_t line;
	char message[320];
} bp_scene_error;

/// Reads a scene, text or binary (told apart by the binary magic), from a file or
/// a pipe. Nothing is returned on error: *out is NULL and err (when not NULL) says
/// what and where. Reading streams: beyond the scene it holds one 1 MiB buffer
/// (and a line longer than that while it reads it); text that holds bytes no
/// text file has fails on the first buffer that shows them, and a binary file
/// whose size does not match its header fails before anything is allocated.
bp_status bp_scene_read(const char *path, bp_scene **out, bp_scene_error *err);
/// Parses scene text (or binary) from memory; `name` is used in messages.
bp_status bp_scene_parse(const char *data, size_t size, const char *name, bp_scene **out,
	bp_scene_error *err);
/// Writes the text form (values with %.9g, so they read back bit-exact). A regular file is
/// replaced only once the whole scene is written; a device, FIFO or /dev/stdout is written in
/// place; nothing is removed on failure (tools/output/output_file.h). BP_ERR_IO (or
/// BP_ERR_OUT_OF_MEMORY) with err (when not NULL) naming the path and the system's reason.
bp_status bp_scene_write_text(const bp_scene *scene, const char *path, bp_scene_error *err);
/// Writes the binary form (fast to load for 10M-entity scenes), as bp_scene_write_text does.
bp_status bp_scene_write_binary(const bp_scene *scene, const char *path, bp_scene_error *err);
void bp_scene_destroy(bp_scene *scene);
/// Bytes the scene library holds now (scenes and any temporary of a call in
/// progress), for tests that check nothing leaks.
int64_t bp_scene_allocated_bytes(void);
/// The most bytes the scene library has held at once since the last
/// bp_scene_reset_peak_bytes (or since start-up): what a read or a generate cost
/// at its worst, for tests and measurements.
int64_t bp_scene_peak_bytes(void);
void bp_scene_reset_peak_bytes(void);

/// Bounds arrays of one frame, ready for bp_world_create_entities/set_bounds.
bp_bounds_arrays bp_scene_frame_bounds(const bp_scene *scene, uint32_t frame);

/// Built-in scene distributions for `bp gen`, tests and benchmarks.
typedef enum bp_distribution {
	BP_DIST_UNIFORM = 0, ///< equal-ish boxes uniform in a cube sized for ~1.5 pairs per entity
	BP_DIST_CLUSTERED,   ///< boxes in Gaussian clusters
	BP_DIST_MIXED,       ///< as uniform, with 5% of entities 30x larger
	BP_DIST_LINE,        ///< spread along the x axis only
	BP_DIST_BOXPRUNE,    ///< the published box-pruning setup (3D, integer centres and extents)
	BP_DIST_COUNT
} bp_distribution;

const char *bp_distribution_name(bp_distribution dist);
bp_status bp_distribution_from_name(const char *name, bp_distribution *out);

typedef struct bp_gen_def {
	bp_distribution dist; ///< default BP_DIST_UNIFORM
	uint32_t n;           ///< entities. Default 1000.
	int dims;             ///< 2 or 3. Default 3 (boxprune is always 3).
	uint64_t seed;        ///< default 1
	uint32_t frames;      ///< frames of motion; default 1
} bp_gen_def;

bp_gen_def bp_gen_def_default(void);
/// Generates a scene; the same def always gives the same scene, bit for bit.
/// Ids are 0..n-1.
bp_status bp_scene_generate(const bp_gen_def *def, bp_scene **out);

#ifdef __cplusplus
}
#endif
#endif
