// SPDX-License-Identifier: MIT
// Where the scene readers take their bytes from: a file (regular, or a pipe) or memory,
// read in pieces so that no reader needs the whole input in memory at once.
#ifndef BP_SCENE_SOURCE_H
#define BP_SCENE_SOURCE_H

#include "bp_scene.h"
#include <stdbool.h>
#include <stdio.h>

typedef struct scenefile_source {
	FILE *file;                ///< NULL for memory
	const unsigned char *data; ///< memory: the bytes
	uint64_t size;             ///< bytes in the whole input, when size_known
	bool size_known;           ///< memory and regular files; not pipes
	bool seekable;             ///< scenefile_source_rewind works
	uint64_t offset;           ///< bytes handed out so far
	int error;                 ///< errno of a failed read; 0 while none
	unsigned char head[8];     ///< file bytes a peek took, handed out first
	unsigned head_len, head_at;
} scenefile_source;

/// A source over size bytes at data (which must outlive it).
void scenefile_source_memory(scenefile_source *source, const void *data, size_t size);
/// Opens a file (not a directory); on failure fills err with "path:0: reason"
/// and returns BP_ERR_IO. Close with scenefile_source_close.
bp_status scenefile_source_open(scenefile_source *source, const char *path, bp_scene_error *err);
void scenefile_source_close(scenefile_source *source);

/// Reads up to size bytes into dst and returns how many; fewer only at the end of
/// the input or on a read error (then source->error is set).
size_t scenefile_source_read(scenefile_source *source, void *dst, size_t size);
/// Copies up to size (at most 8) of the first bytes into dst without consuming
/// them; only before the first read. Returns how many there were.
size_t scenefile_source_peek(scenefile_source *source, void *dst, size_t size);
/// Bytes not yet read, when the size is known (0 otherwise).
uint64_t scenefile_source_left(const scenefile_source *source);
/// Goes back to the first byte; false when the source cannot (a pipe).
bool scenefile_source_rewind(scenefile_source *source);

#endif
