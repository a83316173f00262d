// SPDX-License-Identifier: MIT
// `bp record --motion pile|rain|crowd`: a physics-like model stepped frame by frame, each
// frame's changes written to the trace.
#include "cli_record.h"

int cli_record_physics(const record_args *args, FILE *out, FILE *err)
{
	const cli_physics_model *model = args->model;
	const cli_physics_def def = {.n = args->gen.n, .dims = args->gen.dims, .seed = args->gen.seed};
	uint32_t statics = 0;
	void *state = model->start(&def, &statics);
	if (!state) {
		fprintf(err, "bp record: out of memory\n");
		return CLI_EXIT_RESOURCE;
	}
	// Every body may be created again under a new id on every frame of a churning model.
	const uint64_t ids =
		(uint64_t)statics + def.n + (model->churns ? (uint64_t)def.n * (args->gen.frames - 1) : 0);
	if (ids > (uint64_t)UINT32_MAX + 1) {
		fprintf(err, "bp record: --n %u --frames %u: %s may need %llu ids, past the 32-bit ids\n", def.n,
			args->gen.frames, model->name, (unsigned long long)ids);
		model->stop(state);
		return CLI_EXIT_USAGE;
	}
	cli_changes changes;
	bp_trace_writer *writer = NULL;
	int code = CLI_EXIT_OK;
	if (!cli_changes_init(&changes, def.dims, statics + def.n, def.n)) {
		fprintf(err, "bp record: out of memory\n");
		code = CLI_EXIT_RESOURCE;
	}
	if (code == CLI_EXIT_OK && (code = cli_record_open(args, def.dims, &writer, err)) == CLI_EXIT_OK) {
		record_totals totals = {0};
		bp_status status = BP_OK;
		for (uint32_t f = 0; status == BP_OK && f < args->gen.frames; ++f) {
			cli_changes_clear(&changes);
			model->step(state, f, &changes);
			status = cli_record_frame(writer, &changes, &totals);
		}
		char suffix[32];
		snprintf(suffix, sizeof suffix, " statics=%u", statics);
		code = cli_record_close(writer, status, args, def.n, def.dims, &totals, suffix, out, err);
	}
	cli_changes_free(&changes);
	model->stop(state);
	return code;
}
