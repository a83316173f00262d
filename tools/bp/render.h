// SPDX-License-Identifier: MIT
// What `bp render` draws, shared by its PNG path (cli_render.c) and its SVG writer (svg.c):
// the palette, the world -> pixel view, and the scene with its overlap marks and cell lines.
#ifndef BP_RENDER_H
#define BP_RENDER_H

#include <broadphase/broadphase.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "raster.h"

/// The palette. Overlapping entities are filled, the others only outlined, so a
/// lone box's interior keeps the background (or grid) colour.
#define RENDER_BACKGROUND ((raster_rgb){255, 255, 255})
#define RENDER_GRID ((raster_rgb){210, 214, 230})
#define RENDER_ENTITY ((raster_rgb){40, 90, 200})
#define RENDER_OVERLAP_FILL ((raster_rgb){255, 196, 140})
#define RENDER_OVERLAP_EDGE ((raster_rgb){215, 40, 30})

/// At most this many cell lines per axis; a finer grid would only paint the image grey.
#define RENDER_MAX_GRID_LINES 512u

/// World -> pixels. The bounding box of the drawn axes, scaled alike on both
/// axes, fills the image less `margin` = size / 32 pixels on every side; +y is up.
typedef struct render_view {
	int axis[2];       ///< world axes drawn as image x and image y (0 = x, 1 = y, 2 = z)
	double min[2];     ///< bounding box of the drawn axes, world units
	double max[2];
	double scale;      ///< pixels per world unit
	double margin;     ///< pixels
	uint32_t width;    ///< pixels
	uint32_t height;
} render_view;

static inline double render_px(const render_view *v, double world_x)
{
	return v->margin + (world_x - v->min[0]) * v->scale;
}

static inline double render_py(const render_view *v, double world_y)
{
	return (double)v->height - v->margin - (world_y - v->min[1]) * v->scale;
}

/// One frame of a scene ready to draw.
typedef struct render_input {
	const char *title;           ///< SVG title line
	uint32_t count;              ///< entities
	const float *lo[2], *hi[2];  ///< bounds on the drawn axes, `count` each
	const uint8_t *overlapping;  ///< 1 for an entity in at least one pair
	render_view view;
	uint32_t grid_count[2];      ///< cell lines per image axis (0 = no grid)
	const double *grid[2];       ///< their world coordinates
} render_input;

/// Writes the SVG form. False when a write fails (errno says why).
bool svg_write(FILE *file, const render_input *input);

#endif
