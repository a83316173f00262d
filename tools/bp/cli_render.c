// SPDX-License-Identifier: MIT
// `bp render`: steps one frame of a scene and draws what the broadphase saw (entities, the base
// cells of the algorithm, entities in a pair highlighted) as a PNG (png.c) or an SVG (svg.c).
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "output_file.h"
#include "png.h"
#include "raster.h"
#include "render.h"

enum { OPT_OUT, OPT_ALGO, OPT_THREADS, OPT_FRAME, OPT_SIZE, OPT_AXES, OPT_NO_CELLS, OPT_COUNT };

/// Above this many entities an SVG is tens of megabytes and slow to open.
#define SVG_WARN_ENTITIES 200000u
#define RENDER_MAX_SIZE 8192u
#define RENDER_MIN_SIZE 64u

typedef enum render_format { FORMAT_PNG, FORMAT_SVG } render_format;

typedef struct render_args {
	const char *scene_path;
	const char *out_path;
	render_format format;
	bp_algorithm algorithm;
	int threads;
	uint32_t frame;
	uint32_t size;
	int axis[2];
	bool cells;
} render_args;

static bool ends_with(const char *text, const char *suffix)
{
	size_t n = strlen(text), m = strlen(suffix);
	return n > m && strcasecmp(text + n - m, suffix) == 0;
}

static int parse_args(int argc, char **argv, render_args *a, FILE *out, FILE *err, bool *help)
{
	cli_option options[OPT_COUNT] = {
		[OPT_OUT] = CLI_VALUE("-o"), [OPT_ALGO] = CLI_VALUE("--algo"), [OPT_THREADS] = CLI_VALUE("--threads"),
		[OPT_FRAME] = CLI_VALUE("--frame"), [OPT_SIZE] = CLI_VALUE("--size"), [OPT_AXES] = CLI_VALUE("--axes"),
		[OPT_NO_CELLS] = CLI_FLAG("--no-cells"),
	};
	const char *scene_path;
	int code = cli_parse_scene_command("render", argc, argv, options, OPT_COUNT, &scene_path, help, out, err);
	if (code != CLI_EXIT_OK || *help)
		return code;
	*a = (render_args){.scene_path = scene_path, .out_path = options[OPT_OUT].value,
		.algorithm = BP_ALGO_AUTO, .size = 1024, .axis = {0, 1}, .cells = !options[OPT_NO_CELLS].seen};
	if (!a->out_path) {
		fprintf(err, "bp render: missing -o OUT.png or -o OUT.svg\n");
		return CLI_EXIT_USAGE;
	}
	if (ends_with(a->out_path, ".png")) {
		a->format = FORMAT_PNG;
	} else if (ends_with(a->out_path, ".svg")) {
		a->format = FORMAT_SVG;
	} else {
		fprintf(err, "bp render: -o: the name must end in .png or .svg, got '%s'\n", a->out_path);
		return CLI_EXIT_USAGE;
	}
	uint64_t value;
	if (options[OPT_ALGO].seen &&
		!cli_parse_algorithm("render", options[OPT_ALGO].name, options[OPT_ALGO].value, &a->algorithm, err))
		return CLI_EXIT_USAGE;
	if (!cli_parse_threads("render", &options[OPT_THREADS], &a->threads, err))
		return CLI_EXIT_USAGE;
	if (!cli_parse_frame("render", &options[OPT_FRAME], &a->frame, err))
		return CLI_EXIT_USAGE;
	if (options[OPT_SIZE].seen) {
		if (!cli_parse_u64("render", "--size", options[OPT_SIZE].value, RENDER_MIN_SIZE, RENDER_MAX_SIZE, &value,
			    err))
			return CLI_EXIT_USAGE;
		a->size = (uint32_t)value;
	}
	if (options[OPT_AXES].seen) {
		const char *axes = options[OPT_AXES].value;
		if (strcmp(axes, "xy") == 0) {
			a->axis[0] = 0, a->axis[1] = 1;
		} else if (strcmp(axes, "xz") == 0) {
			a->axis[0] = 0, a->axis[1] = 2;
		} else if (strcmp(axes, "yz") == 0) {
			a->axis[0] = 1, a->axis[1] = 2;
		} else {
			fprintf(err, "bp render: --axes: expected xy, xz or yz, got '%s'\n", axes);
			return CLI_EXIT_USAGE;
		}
	}
	return CLI_EXIT_OK;
}

/// Fits the bounding box of the drawn axes into a size x size square less the margin.
static render_view fit_view(const render_input *in, uint32_t size)
{
	render_view v = {.margin = floor(size / 32.0)};
	for (int k = 0; k < 2; ++k) {
		v.min[k] = in->count ? INFINITY : 0;
		v.max[k] = in->count ? -INFINITY : 1;
		for (uint32_t i = 0; i < in->count; ++i) {
			v.min[k] = fmin(v.min[k], in->lo[k][i]);
			v.max[k] = fmax(v.max[k], in->hi[k][i]);
		}
	}
	// Doubles: the extent of two float bounds near +-FLT_MAX still fits.
	double span = fmax(v.max[0] - v.min[0], v.max[1] - v.min[1]);
	if (!(span > 0))
		span = 1;
	v.scale = (size - 2 * v.margin) / span;
	for (int k = 0; k < 2; ++k) {
		double edge = ceil((v.max[k] - v.min[k]) * v.scale + 2 * v.margin);
		uint32_t pixels = (uint32_t)fmin(fmax(edge, 1), size);
		if (k == 0)
			v.width = pixels;
		else
			v.height = pixels;
	}
	return v;
}

/// Cell lines of one drawn axis: origin + j * cell inside [min, max]. The
/// step reports where its cells start (bp_frame_stats.cell_origin).
/// False (and count 0) when there would be more than RENDER_MAX_GRID_LINES.
static bool grid_lines(double origin, double cell, double min, double max, double *lines, uint32_t *count)
{
	*count = 0;
	double first = ceil((min - origin) / cell), last = floor((max - origin) / cell);
	if (last - first + 1 > RENDER_MAX_GRID_LINES)
		return false;
	for (double j = first; j <= last; ++j)
		lines[(*count)++] = origin + j * cell;
	return true;
}

static void draw_png(raster_canvas *canvas, const render_input *in)
{
	const render_view *v = &in->view;
	double top = render_py(v, v->max[1]), bottom = render_py(v, v->min[1]);
	double left = render_px(v, v->min[0]), right = render_px(v, v->max[0]);
	for (uint32_t i = 0; i < in->grid_count[0]; ++i) {
		double x = floor(render_px(v, in->grid[0][i]));
		raster_line(canvas, x, floor(top), x, floor(bottom), RENDER_GRID);
	}
	for (uint32_t i = 0; i < in->grid_count[1]; ++i) {
		double y = floor(render_py(v, in->grid[1][i]));
		raster_line(canvas, floor(left), y, floor(right), y, RENDER_GRID);
	}
	// Three passes: lone outlines, then the highlighted fills over them, then the
	// highlighted outlines, so every overlapping box stays visible.
	for (int pass = 0; pass < 3; ++pass) {
		for (uint32_t i = 0; i < in->count; ++i) {
			if ((in->overlapping[i] != 0) != (pass > 0))
				continue;
			// The view maps the bounding box inside the canvas, so these are small.
			int64_t x0 = (int64_t)floor(render_px(v, in->lo[0][i]));
			int64_t x1 = (int64_t)floor(render_px(v, in->hi[0][i]));
			int64_t y0 = (int64_t)floor(render_py(v, in->hi[1][i]));
			int64_t y1 = (int64_t)floor(render_py(v, in->lo[1][i]));
			if (pass == 0)
				raster_outline_rect(canvas, x0, y0, x1, y1, RENDER_ENTITY);
			else if (pass == 1)
				raster_fill_rect(canvas, x0, y0, x1, y1, RENDER_OVERLAP_FILL);
			else
				raster_outline_rect(canvas, x0, y0, x1, y1, RENDER_OVERLAP_EDGE);
		}
	}
}

/// Writes the image whole or not at all (output_file.h): the SVG from `in`, the PNG from the
/// canvas already drawn. Returns the exit code.
static int write_image(const render_args *a, const render_input *in, const raster_canvas *canvas, FILE *err)
{
	if (a->format == FORMAT_SVG && in->count > SVG_WARN_ENTITIES)
		fprintf(err, "bp render: warning: %u entities make an SVG of about %u MB; PNG is smaller\n", in->count,
			(unsigned)((uint64_t)in->count * 64 / 1000000));
	bp_output output;
	if (!bp_output_open(&output, a->out_path)) {
		fprintf(err, "bp render: %s\n", output.message);
		return CLI_EXIT_RESOURCE;
	}
	bool written = a->format == FORMAT_SVG
		? svg_write(output.file, in)
		: png_write_rgb(output.file, canvas->rgb, canvas->width, canvas->height, PNG_DEFLATE_RLE);
	if (!written)
		bp_output_abort(&output, errno ? errno : EIO);
	if (!written || !bp_output_commit(&output)) {
		fprintf(err, "bp render: %s\n", output.message);
		return CLI_EXIT_RESOURCE;
	}
	return CLI_EXIT_OK;
}

/// Fills the grid part of `in` from the step's cell size; says on err when it is left out.
static void choose_grid(const render_args *a, const bp_frame_stats *stats, render_input *in,
	double lines[2][RENDER_MAX_GRID_LINES], FILE *err)
{
	if (!a->cells || !(stats->cell_size > 0) || !isfinite(stats->cell_size))
		return;
	bool fits = true;
	for (int k = 0; k < 2 && fits; ++k) {
		double origin = stats->cell_origin[in->view.axis[k]];
		fits = grid_lines(origin, stats->cell_size, in->view.min[k], in->view.max[k], lines[k], &in->grid_count[k]);
		in->grid[k] = lines[k];
	}
	if (!fits) {
		in->grid_count[0] = in->grid_count[1] = 0;
		fprintf(err, "bp render: cells of %g are finer than %u lines per axis: grid not drawn\n",
			(double)stats->cell_size, RENDER_MAX_GRID_LINES);
	}
}

int cli_render(int argc, char **argv, FILE *out, FILE *err)
{
	render_args args;
	bool help;
	int code = parse_args(argc, argv, &args, out, err, &help);
	if (code != CLI_EXIT_OK || help)
		return code;

	bp_scene *scene = NULL;
	bp_world *world = NULL;
	raster_canvas canvas = {0};
	uint8_t *overlapping = NULL;
	double (*lines)[RENDER_MAX_GRID_LINES] = NULL;
	code = cli_load_scene(args.scene_path, &scene, err);
	if (code == CLI_EXIT_OK && (args.axis[0] >= scene->dims || args.axis[1] >= scene->dims)) {
		fprintf(err, "bp render: --axes: a %dD scene has no z axis\n", scene->dims);
		code = CLI_EXIT_USAGE;
	}
	if (code == CLI_EXIT_OK)
		code = cli_world_from_scene("render", scene, args.frame, args.algorithm, args.threads, &world, err);
	// Checked before the step so that a bad path fails before the work; written only after
	// it, so that a failed step leaves an existing image as it was.
	bp_output probe;
	if (code == CLI_EXIT_OK && !bp_output_check(&probe, args.out_path)) {
		fprintf(err, "bp render: %s\n", probe.message);
		code = CLI_EXIT_RESOURCE;
	}
	if (code == CLI_EXIT_OK) {
		overlapping = calloc(scene->count ? scene->count : 1, 1);
		lines = malloc(2 * sizeof *lines);
		if (!overlapping || !lines) {
			fprintf(err, "bp render: out of memory\n");
			code = CLI_EXIT_RESOURCE;
		}
	}
	if (code == CLI_EXIT_OK) {
		bp_status status = bp_world_step(world);
		if (status != BP_OK) {
			fprintf(err, "bp render: %s\n", bp_world_last_error(world));
			code = cli_exit_for_status(status);
		}
	}
	if (code == CLI_EXIT_OK) {
		size_t pair_count;
		const bp_pair *pairs = bp_world_pairs(world, &pair_count);
		// Dense index i is scene entity i (cli_world_from_scene).
		for (size_t i = 0; i < pair_count; ++i)
			overlapping[pairs[i].lo] = overlapping[pairs[i].hi] = 1;
		bp_frame_stats stats = bp_world_stats(world);
		size_t offset = (size_t)args.frame * scene->count;
		render_input in = {.count = scene->count, .overlapping = overlapping};
		for (int k = 0; k < 2; ++k) {
			in.lo[k] = scene->min[args.axis[k]] + offset;
			in.hi[k] = scene->max[args.axis[k]] + offset;
		}
		in.view = fit_view(&in, args.size);
		in.view.axis[0] = args.axis[0];
		in.view.axis[1] = args.axis[1];
		choose_grid(&args, &stats, &in, lines, err);
		char title[512];
		snprintf(title, sizeof title, "%s frame %u (%c%c): %u entities, %zu pairs, algo %s, cell %g", args.scene_path,
			args.frame, "xyz"[args.axis[0]], "xyz"[args.axis[1]], scene->count, pair_count,
			bp_algorithm_name(stats.algorithm), (double)stats.cell_size);
		in.title = title;
		if (args.format == FORMAT_PNG) {
			if (raster_create(&canvas, in.view.width, in.view.height, RENDER_BACKGROUND)) {
				draw_png(&canvas, &in);
			} else {
				fprintf(err, "bp render: out of memory for a %ux%u image\n", in.view.width, in.view.height);
				code = CLI_EXIT_RESOURCE;
			}
		}
		if (code == CLI_EXIT_OK)
			code = write_image(&args, &in, &canvas, err);
		if (code == CLI_EXIT_OK)
			fprintf(out, "rendered=%s entities=%u pairs=%zu algo=%s cell=%g\n", args.out_path, scene->count,
				pair_count, bp_algorithm_name(stats.algorithm), (double)stats.cell_size);
	}
	raster_destroy(&canvas);
	free(lines);
	free(overlapping);
	bp_world_destroy(world);
	bp_scene_destroy(scene);
	return code;
}
