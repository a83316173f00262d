// SPDX-License-Identifier: MIT
// The RGB canvas of raster.h. Rectangles are clipped once and written row by row, so drawing a
// box costs its visible pixels only: 1M sub-pixel boxes are 1M single-pixel writes.
#include "raster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool raster_create(raster_canvas *canvas, uint32_t width, uint32_t height, raster_rgb background)
{
	*canvas = (raster_canvas){0};
	if (width == 0 || height == 0 || width > RASTER_MAX_EDGE || height > RASTER_MAX_EDGE)
		return false;
	size_t row = (size_t)width * 3;
	uint8_t *rgb = malloc(row * height);
	if (!rgb)
		return false;
	for (uint32_t x = 0; x < width; ++x)
		memcpy(rgb + (size_t)x * 3, &(uint8_t[3]){background.r, background.g, background.b}, 3);
	for (uint32_t y = 1; y < height; ++y)
		memcpy(rgb + row * y, rgb, row);
	*canvas = (raster_canvas){.width = width, .height = height, .rgb = rgb};
	return true;
}

void raster_destroy(raster_canvas *canvas)
{
	free(canvas->rgb);
	*canvas = (raster_canvas){0};
}

static inline void put(raster_canvas *c, uint32_t x, uint32_t y, raster_rgb colour)
{
	uint8_t *p = c->rgb + ((size_t)y * c->width + x) * 3;
	p[0] = colour.r;
	p[1] = colour.g;
	p[2] = colour.b;
}

/// Orders and clips [lo, hi] to [0, limit); false when nothing is left.
static bool clip_span(int64_t *lo, int64_t *hi, uint32_t limit)
{
	if (*lo > *hi) {
		int64_t t = *lo;
		*lo = *hi;
		*hi = t;
	}
	if (*hi < 0 || *lo >= (int64_t)limit)
		return false;
	if (*lo < 0)
		*lo = 0;
	if (*hi >= (int64_t)limit)
		*hi = (int64_t)limit - 1;
	return true;
}

void raster_fill_rect(raster_canvas *canvas, int64_t x0, int64_t y0, int64_t x1, int64_t y1, raster_rgb colour)
{
	if (!clip_span(&x0, &x1, canvas->width) || !clip_span(&y0, &y1, canvas->height))
		return;
	for (int64_t y = y0; y <= y1; ++y)
		for (int64_t x = x0; x <= x1; ++x)
			put(canvas, (uint32_t)x, (uint32_t)y, colour);
}

void raster_outline_rect(raster_canvas *canvas, int64_t x0, int64_t y0, int64_t x1, int64_t y1, raster_rgb colour)
{
	if (x0 > x1) {
		int64_t t = x0;
		x0 = x1;
		x1 = t;
	}
	if (y0 > y1) {
		int64_t t = y0;
		y0 = y1;
		y1 = t;
	}
	raster_fill_rect(canvas, x0, y0, x1, y0, colour);
	raster_fill_rect(canvas, x0, y1, x1, y1, colour);
	raster_fill_rect(canvas, x0, y0, x0, y1, colour);
	raster_fill_rect(canvas, x1, y0, x1, y1, colour);
}

/// Liang-Barsky: clips the segment p + t (q - p), t in [0, 1], to [lo, hi] on both axes.
static bool clip_segment(double *x0, double *y0, double *x1, double *y1, double lo_x, double lo_y, double hi_x,
	double hi_y)
{
	double dx = *x1 - *x0, dy = *y1 - *y0;
	double p[4] = {-dx, dx, -dy, dy};
	double q[4] = {*x0 - lo_x, hi_x - *x0, *y0 - lo_y, hi_y - *y0};
	double t0 = 0, t1 = 1;
	for (int k = 0; k < 4; ++k) {
		if (p[k] == 0) {
			if (q[k] < 0)
				return false;
			continue;
		}
		double t = q[k] / p[k];
		if (p[k] < 0) {
			if (t > t1)
				return false;
			if (t > t0)
				t0 = t;
		} else {
			if (t < t0)
				return false;
			if (t < t1)
				t1 = t;
		}
	}
	double sx = *x0, sy = *y0;
	*x0 = sx + t0 * dx;
	*y0 = sy + t0 * dy;
	*x1 = sx + t1 * dx;
	*y1 = sy + t1 * dy;
	return true;
}

void raster_line(raster_canvas *canvas, double x0, double y0, double x1, double y1, raster_rgb colour)
{
	if (!(isfinite(x0) && isfinite(y0) && isfinite(x1) && isfinite(y1)))
		return;
	// Clipping to the pixel centres' box keeps every rounded point on the canvas
	// and the Bresenham loop no longer than the canvas diagonal.
	if (!clip_segment(&x0, &y0, &x1, &y1, 0, 0, canvas->width - 1.0, canvas->height - 1.0))
		return;
	int64_t ax = llround(x0), ay = llround(y0), bx = llround(x1), by = llround(y1);
	int64_t dx = ax < bx ? bx - ax : ax - bx, dy = ay < by ? ay - by : by - ay;
	int64_t sx = ax < bx ? 1 : -1, sy = ay < by ? 1 : -1;
	int64_t error = dx + dy;
	for (;;) {
		put(canvas, (uint32_t)ax, (uint32_t)ay, colour);
		if (ax == bx && ay == by)
			break;
		int64_t e2 = 2 * error;
		if (e2 >= dy) {
			error += dy;
			ax += sx;
		}
		if (e2 <= dx) {
			error += dx;
			ay += sy;
		}
	}
}

raster_rgb raster_get(const raster_canvas *canvas, uint32_t x, uint32_t y)
{
	if (x >= canvas->width || y >= canvas->height)
		return (raster_rgb){0, 0, 0};
	const uint8_t *p = canvas->rgb + ((size_t)y * canvas->width + x) * 3;
	return (raster_rgb){p[0], p[1], p[2]};
}
