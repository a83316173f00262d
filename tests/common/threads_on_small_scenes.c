// SPDX-License-Identifier: MIT
// The suites check that pairs do not depend on the thread count, mostly on scenes of a few
// thousand entities or fewer, which a world steps on the caller alone
// (BP_SERIAL_STEP_ENTITIES). Every test program linked with this file steps them on all the
// threads asked for instead; tests/test_threads.c checks the rule itself.
#include "step/step.h"

__attribute__((constructor)) static void threads_on_small_scenes(void) { bpi_set_serial_step_entities(0); }
