// SPDX-License-Identifier: MIT
// Umbrella header: everything a host needs from broadphase.
#ifndef BROADPHASE_BROADPHASE_H
#define BROADPHASE_BROADPHASE_H

#include "base.h"
#include "types.h"
#include "world.h"
#include "frame.h"
#include "cell_grid.h"
#include "trace.h"

#endif
