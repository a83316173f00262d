// SPDX-License-Identifier: MIT
// sap's sweep kernels (sap_sweep.c) over the region-major layout of sap_regions.h.
#ifndef BP_SAP_SWEEP_H
#define BP_SAP_SWEEP_H

#include "algorithms/sap_regions.h"

/// One sweep over the layout.
typedef struct bpi_sap_sweep {
	const bpi_scene *scene;
	const bpi_sap_layout *layout;
	const float *min0, *max0, *min1, *max1, *min2, *max2;
	bpi_pair_chunks *chunks;
	int dims;
	bool filtered;
	bool simd;
} bpi_sap_sweep;

/// Sweeps positions [begin, end) (chunk `chunk`), every segment on its own; a
/// bpi_range_fn with ctx = const bpi_sap_sweep *.
void bpi_sap_sweep_chunk(uint32_t begin, uint32_t end, uint32_t chunk, void *ctx);
/// False when the scene asks for BP_DEBUG_NO_SIMD or the CPU lacks AVX2.
bool bpi_sap_simd_enabled(const bpi_scene *scene);

#endif
