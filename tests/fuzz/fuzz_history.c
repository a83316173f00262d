// SPDX-License-Identifier: MIT
// libFuzzer target: the bytes are an API history (tests/fuzz/history.h) replayed on an
// incremental and a plain world side by side; every step, frame and held view is checked
// against a brute-force oracle and against the other world. A failed check aborts.
#define _POSIX_C_SOURCE 200809L // setenv
#include "history.h"

#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	setenv("OMP_WAIT_POLICY", "passive", 0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	history h;
	hist_decode(data, size, &h);
	hist_options options = {.max_entities = 3000};
	hist_run(&h, &options);
	hist_free(&h);
	return 0;
}
