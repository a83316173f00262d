// SPDX-License-Identifier: MIT
// Traces for the commands: telling one from a scene file, opening it, and a world at frame K.
#include "cli.h"

#include <stdlib.h>
#include <string.h>

bool cli_is_trace(const char *path)
{
	FILE *file = fopen(path, "rb");
	if (!file)
		return false;
	char magic[8];
	bool trace = fread(magic, 1, sizeof magic, file) == sizeof magic && memcmp(magic, "BPTRACE", 7) == 0;
	fclose(file);
	return trace;
}

int cli_open_trace(const char *command, const char *path, bp_trace_reader **out, FILE *err)
{
	bp_status status = bp_trace_reader_open(path, out);
	if (status == BP_OK)
		return CLI_EXIT_OK;
	fprintf(err, "%s %s: %s\n", cli_program, command, bp_trace_open_error());
	return cli_exit_for_status(status);
}

bp_world_def cli_trace_world_def(const bp_trace_reader *reader, const bp_world_def *settings)
{
	bp_world_def def = *settings;
	def.dims = bp_trace_reader_info(reader).dims;
	// What the reader holds, not the trailer's max_entities: a world grows as frames come.
	def.capacity = bp_trace_reader_state(reader).count;
	return def;
}

int cli_world_from_trace(const char *command, const char *path, uint32_t frame, const bp_world_def *settings,
	bp_world **out, uint32_t **ids, FILE *err)
{
	*out = NULL;
	*ids = NULL;
	bp_trace_reader *reader = NULL;
	int code = cli_open_trace(command, path, &reader, err);
	if (code != CLI_EXIT_OK)
		return code;
	const uint32_t frames = bp_trace_reader_info(reader).frame_count;
	if (frame >= frames) {
		fprintf(err, "%s %s: --frame: the trace has %u frame%s, got %u\n", cli_program, command, frames,
			frames == 1 ? "" : "s", frame);
		bp_trace_reader_close(reader);
		return CLI_EXIT_USAGE;
	}
	bp_status status = bp_trace_reader_seek(reader, frame);
	const char *why = bp_trace_reader_error(reader);
	bp_world_def def = cli_trace_world_def(reader, settings);
	if (status == BP_OK && (status = bp_world_create(&def, out)) != BP_OK)
		why = bp_world_create_error();
	if (status == BP_OK && (status = bp_trace_reader_load(reader, *out)) != BP_OK)
		why = bp_trace_reader_error(reader);
	bp_trace_state state = bp_trace_reader_state(reader);
	if (status == BP_OK && !(*ids = malloc(((size_t)state.count + 1) * sizeof(uint32_t)))) {
		status = BP_ERR_OUT_OF_MEMORY;
		why = "out of memory";
	}
	if (status == BP_OK)
		memcpy(*ids, state.ids, (size_t)state.count * sizeof(uint32_t));
	else
		fprintf(err, "%s %s: %s\n", cli_program, command, why);
	bp_trace_reader_close(reader);
	if (status != BP_OK) {
		bp_world_destroy(*out);
		*out = NULL;
	}
	return cli_exit_for_status(status);
}
