// SPDX-License-Identifier: MIT
// The trace writing of `bp record`, the same for the random walk and the physics-like motions.
#include "cli_record.h"

int cli_record_open(const record_args *args, int dims, bp_trace_writer **out, FILE *err)
{
	bp_trace_writer_def def = bp_trace_writer_def_default();
	def.dims = dims;
	def.keyframe_interval = args->keyframes;
	if (bp_trace_writer_open(args->path, &def, out) != BP_OK) {
		fprintf(err, "bp record: %s\n", bp_trace_open_error());
		return CLI_EXIT_RESOURCE;
	}
	return CLI_EXIT_OK;
}

bp_status cli_record_frame(bp_trace_writer *writer, const cli_changes *changes, record_totals *totals)
{
	const cli_changes *c = changes;
	const bp_bounds_arrays bounds = {c->bounds[0], c->bounds[1], c->bounds[2], c->bounds[3], c->bounds[4],
		c->bounds[5]};
	bp_status status = bp_trace_destroy(writer, c->destroy_count, c->destroys);
	if (status == BP_OK)
		status = bp_trace_create(writer, c->create_count, c->creates);
	if (status == BP_OK)
		status = bp_trace_move(writer, c->move_count, c->move_ids, &bounds);
	if (status == BP_OK)
		status = bp_trace_end_frame(writer);
	totals->destroys += c->destroy_count;
	totals->creates += c->create_count;
	totals->moves += c->move_count;
	return status;
}

int cli_record_close(bp_trace_writer *writer, bp_status status, const record_args *args, uint32_t n, int dims,
	const record_totals *totals, const char *suffix, FILE *out, FILE *err)
{
	if (status != BP_OK)
		fprintf(err, "bp record: %s: %s\n", args->path, bp_trace_writer_error(writer));
	bp_status closed = bp_trace_writer_close(writer);
	if (status == BP_OK && closed != BP_OK)
		fprintf(err, "bp record: %s\n", bp_trace_open_error());
	if (status == BP_OK)
		status = closed;
	if (status == BP_OK)
		fprintf(out, "recorded=%s frames=%u n=%u dims=%d creates=%llu destroys=%llu moves=%llu%s\n", args->path,
			args->gen.frames, n, dims, (unsigned long long)totals->creates,
			(unsigned long long)totals->destroys, (unsigned long long)totals->moves, suffix);
	return status == BP_OK ? CLI_EXIT_OK : status == BP_ERR_IO ? CLI_EXIT_RESOURCE : cli_exit_for_status(status);
}
