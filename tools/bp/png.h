// SPDX-License-Identifier: MIT
// A PNG writer with no external library, for `bp render`: 8-bit RGB, one zlib stream in IDAT chunks.
#ifndef BP_PNG_H
#define BP_PNG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum png_deflate {
	PNG_DEFLATE_STORED = 0, ///< stored deflate blocks: no compression, simplest to decode
	PNG_DEFLATE_RLE,        ///< one fixed-Huffman block of literals and distance-1 runs (default)
} png_deflate;

/// Writes width x height pixels of `rgb` (row 0 at the top, 3 bytes per pixel)
/// as a PNG file. Returns false when a write fails (errno says why) or memory runs out.
bool png_write_rgb(FILE *file, const uint8_t *rgb, uint32_t width, uint32_t height, png_deflate deflate);

/// CRC-32 (ISO 3309, as PNG uses it) of data, continuing from crc (start with 0).
uint32_t png_crc32(uint32_t crc, const uint8_t *data, size_t size);
/// Adler-32 (RFC 1950) of data, continuing from adler (start with 1).
uint32_t png_adler32(uint32_t adler, const uint8_t *data, size_t size);

#endif
