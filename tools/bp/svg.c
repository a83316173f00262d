// SPDX-License-Identifier: MIT
// The SVG form of `bp render`: one <line> per cell line, one <rect> per entity (class "e" alone,
// "o" overlapping), styled once in a <style> block so a large scene costs ~45 bytes per entity.
#include "render.h"

static void put_colour(FILE *file, raster_rgb c)
{
	fprintf(file, "#%02x%02x%02x", c.r, c.g, c.b);
}

/// Writes text with the five XML special characters escaped.
static void put_text(FILE *file, const char *text)
{
	for (const char *c = text; *c; ++c) {
		switch (*c) {
		case '<': fputs("&lt;", file); break;
		case '>': fputs("&gt;", file); break;
		case '&': fputs("&amp;", file); break;
		case '"': fputs("&quot;", file); break;
		case '\'': fputs("&apos;", file); break;
		default: fputc(*c, file);
		}
	}
}

bool svg_write(FILE *file, const render_input *in)
{
	const render_view *v = &in->view;
	fprintf(file,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\">\n",
		v->width, v->height, v->width, v->height);
	fputs("<style>\n.g{stroke:", file);
	put_colour(file, RENDER_GRID);
	fputs(";stroke-width:1}\n.e{fill:none;stroke:", file);
	put_colour(file, RENDER_ENTITY);
	fputs(";stroke-width:1}\n.o{fill:", file);
	put_colour(file, RENDER_OVERLAP_FILL);
	fputs(";fill-opacity:0.6;stroke:", file);
	put_colour(file, RENDER_OVERLAP_EDGE);
	fputs(";stroke-width:1}\ntext{font:12px sans-serif}\n</style>\n", file);
	// The background is a path so that <rect> elements are exactly the entities.
	fprintf(file, "<path d=\"M0 0H%uV%uH0Z\" fill=\"", v->width, v->height);
	put_colour(file, RENDER_BACKGROUND);
	fputs("\"/>\n<text x=\"4\" y=\"14\">", file);
	put_text(file, in->title);
	fputs("</text>\n<text x=\"4\" y=\"28\"><tspan fill=\"", file);
	put_colour(file, RENDER_ENTITY);
	fputs("\">&#9633; entity</tspan> <tspan fill=\"", file);
	put_colour(file, RENDER_OVERLAP_EDGE);
	fputs("\">&#9632; in a pair</tspan> <tspan fill=\"", file);
	put_colour(file, RENDER_GRID);
	fputs("\">&#9472; cell</tspan></text>\n<g>\n", file);

	double top = render_py(v, v->max[1]), bottom = render_py(v, v->min[1]);
	double left = render_px(v, v->min[0]), right = render_px(v, v->max[0]);
	for (uint32_t i = 0; i < in->grid_count[0]; ++i) {
		double x = render_px(v, in->grid[0][i]);
		fprintf(file, "<line class=\"g\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", x, top, x, bottom);
	}
	for (uint32_t i = 0; i < in->grid_count[1]; ++i) {
		double y = render_py(v, in->grid[1][i]);
		fprintf(file, "<line class=\"g\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", left, y, right, y);
	}
	fputs("</g>\n<g>\n", file);
	// Lone entities first, so the highlighted ones are drawn on top.
	for (int pass = 0; pass < 2; ++pass) {
		for (uint32_t i = 0; i < in->count; ++i) {
			if ((in->overlapping[i] != 0) != (pass == 1))
				continue;
			double x0 = render_px(v, in->lo[0][i]), x1 = render_px(v, in->hi[0][i]);
			double y0 = render_py(v, in->hi[1][i]), y1 = render_py(v, in->lo[1][i]);
			fprintf(file, "<rect class=\"%c\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n",
				pass ? 'o' : 'e', x0, y0, x1 - x0, y1 - y0);
		}
	}
	fputs("</g>\n</svg>\n", file);
	return !ferror(file);
}
