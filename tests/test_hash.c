// SPDX-License-Identifier: MIT
// hash against the brute-force oracle: sizes, distributions, cell sizes, threads, motion.
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "cells_fixture.h"

#define ALGO BP_ALGO_HASH
#define SUITE hash
#include "cells_suite.inc"
