// SPDX-License-Identifier: MIT
// The `bp` executable: everything lives in the bp_cli library so tests can run it in-process.
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/// `bp frames` runs host work beside the builder. libgomp's idle workers spin,
/// and on 2 cores they starved the host thread: build 78-109 ms and query p99
/// 14-20 ms with the default policy, 42-51 ms and 0.4-8 ms with passive (100K
/// uniform, grid). libgomp reads OMP_WAIT_POLICY once, when it loads, so a
/// setenv in main is too late: the command runs itself again with it set,
/// unless the user chose a policy.
static void exec_with_passive_omp(char **argv)
{
	if (getenv("OMP_WAIT_POLICY"))
		return;
	if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0)
		return;
	execv("/proc/self/exe", argv);
	// Not reached unless execv failed; then run as we are.
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "frames") == 0)
		exec_with_passive_omp(argv);
	return bp_cli_main(argc, argv, stdout, stderr);
}
