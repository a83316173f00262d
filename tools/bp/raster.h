// SPDX-License-Identifier: MIT
// A tiny 8-bit RGB canvas for `bp render`: filled rectangles, rectangle outlines and lines,
// every one clipped to the canvas, so callers may pass coordinates far outside it.
#ifndef BP_RASTER_H
#define BP_RASTER_H

#include <stdbool.h>
#include <stdint.h>

typedef struct raster_rgb {
	uint8_t r, g, b;
} raster_rgb;

/// width x height pixels, row 0 at the top, 3 bytes per pixel (r, g, b).
typedef struct raster_canvas {
	uint32_t width;
	uint32_t height;
	uint8_t *rgb;
} raster_canvas;

/// Largest edge accepted by raster_create (a 16384^2 canvas is 768 MiB).
#define RASTER_MAX_EDGE 16384u

/// Allocates a canvas filled with `background`. False when out of memory or
/// when an edge is 0 or above RASTER_MAX_EDGE.
bool raster_create(raster_canvas *canvas, uint32_t width, uint32_t height, raster_rgb background);
void raster_destroy(raster_canvas *canvas);

/// Fills the pixels [x0, x1] x [y0, y1] (inclusive, either order), clipped.
void raster_fill_rect(raster_canvas *canvas, int64_t x0, int64_t y0, int64_t x1, int64_t y1, raster_rgb colour);
/// The one-pixel border of the same rectangle, clipped.
void raster_outline_rect(raster_canvas *canvas, int64_t x0, int64_t y0, int64_t x1, int64_t y1, raster_rgb colour);
/// A one-pixel line between two pixel centres (Bresenham), clipped to the canvas first.
void raster_line(raster_canvas *canvas, double x0, double y0, double x1, double y1, raster_rgb colour);

/// The colour at (x, y); black outside the canvas.
raster_rgb raster_get(const raster_canvas *canvas, uint32_t x, uint32_t y);

#endif
