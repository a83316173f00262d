// SPDX-License-Identifier: MIT
// grid against the brute-force oracle: sizes, distributions, cell sizes, threads, motion.
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "cells_fixture.h"

#define ALGO BP_ALGO_GRID
#define SUITE grid
#include "cells_suite.inc"
