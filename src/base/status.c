// SPDX-License-Identifier: MIT
// Text for every bp_status.
#include "base/core.h"

static const char *const status_text[BP_STATUS_COUNT] = {
	[BP_OK] = "ok",
	[BP_ERR_INVALID_ARGUMENT] = "invalid argument",
	[BP_ERR_NOT_FINITE] = "bound is NaN or infinite",
	[BP_ERR_INVERTED_BOUNDS] = "bound has min > max",
	[BP_ERR_STALE_HANDLE] = "null or stale handle",
	[BP_ERR_OUT_OF_RANGE] = "index or count out of range",
	[BP_ERR_OUT_OF_MEMORY] = "out of memory",
	[BP_ERR_UNKNOWN_ALGORITHM] = "unknown or unavailable algorithm",
	[BP_ERR_PARSE] = "malformed scene file",
	[BP_ERR_IO] = "file could not be read or written",
	[BP_ERR_UNSUPPORTED] = "not supported",
	[BP_ERR_NO_FRAME] = "no frame published yet",
	[BP_ERR_NOT_SUBMITTED] = "frame not submitted yet",
	[BP_ERR_PERIODIC_EXTENT] = "extent exceeds period / 2",
};

const char *bp_status_string(bp_status status)
{
	if ((unsigned)status >= BP_STATUS_COUNT)
		return "unknown status";
	return status_text[status];
}
