// SPDX-License-Identifier: MIT
// The `bp` executable: everything lives in the bp_cli library so tests can run it in-process.
#include <stdio.h>

#include "cli.h"

int main(int argc, char **argv)
{
	return bp_cli_main(argc, argv, stdout, stderr);
}
