// SPDX-License-Identifier: MIT
// sap's region grid and the region-major sorted layout (sap_regions.c), which sap.c plans
// and builds each step and the sweep kernels (sap_sweep.h) read.
#ifndef BP_SAP_REGIONS_H
#define BP_SAP_REGIONS_H

#include "algorithms/index.h"
#include "parallel/sort.h"

// Sentinel slots (+inf sweep-axis min) after every region's segment, so the sweep's
// single compare stops at the segment end and the AVX2 path may load 8 floats from
// any slot of a segment.
#define SAP_PAD 8

/// The coarse grid of regions over the axes other than the sweep axis (one in 2D,
/// two in 3D). Every box is inserted into each region its extent touches on those
/// axes; each region is swept on its own.
typedef struct bpi_sap_grid {
	int axes[2];  ///< scene axes of the region grid
	int count;    ///< region axes: dims - 1
	float origin[2];
	float inv_edge[2];
	uint32_t cells[2]; ///< cells per region axis, >= 1; 1 on an unused axis
	uint32_t regions;  ///< cells[0] * cells[1]
} bpi_sap_grid;

/// The cell of coordinate v on region axis k: floor((v - origin) * inv_edge),
/// clamped to [0, cells - 1]. Monotone non-decreasing in v (every step rounds
/// monotonically), which is all the dedup rule needs to be exact (sap_regions.c).
/// The only place a coordinate becomes a cell.
static inline uint32_t bpi_sap_cell(const bpi_sap_grid *g, int k, float v)
{
	float t = (v - g->origin[k]) * g->inv_edge[k];
	if (!(t > 0.0f)) // NaN never reaches here; it would land in cell 0
		return 0;
	if (t >= (float)g->cells[k])
		return g->cells[k] - 1;
	return (uint32_t)t;
}

/// The region-major sorted layout and its scratch, reused across frames.
typedef struct bpi_sap_layout {
	// Sorted SoA: 2 * dims float arrays of `stride` floats in one 64-byte aligned
	// block: sweep axis min, max, then (min, max) of each other axis. Position p
	// holds one inserted copy of box index[p]; each segment is followed by SAP_PAD
	// sentinels (min0 = +inf).
	BPI_ARRAY(float) soa;
	size_t stride;
	BPI_ARRAY(uint32_t) index;
	/// Per position: bit k set when the region is the box's first cell on region
	/// axis k (bit 1 always set in 2D). A pair in a region is reported iff the OR
	/// of its two boxes' bits is 3: that region holds the intersection's lower corner.
	BPI_ARRAY(uint8_t) corner;
	// Non-empty regions, in region order: positions [seg_begin, seg_end).
	uint32_t *seg_begin, *seg_end; ///< both inside seg_bounds
	BPI_ARRAY(uint32_t) seg_bounds; ///< two per region
	uint32_t segments;
	uint32_t positions; ///< last segment's end + SAP_PAD (0 when empty)
	// Counting sort by region: per (region, chunk) counts, then offsets.
	BPI_ARRAY(uint32_t) histogram;
	BPI_ARRAY(uint64_t) chunk_sums;
	/// Per box, in index order: cell ranges lo0, hi0, lo1, hi1 of the final grid
	/// (written by the plan when there is more than one region).
	BPI_ARRAY(uint32_t) ranges;
} bpi_sap_layout;

void bpi_sap_layout_free(bpi_sap_layout *layout);

/// Plans the region grid for a sweep along `axis`: bounds and median extents of the
/// region axes, the cell edge, the region cap, and coarsening until the inserted
/// copies stay within budget. A pure function of the scene.
bp_status bpi_sap_grid_plan(bpi_sap_layout *layout, const bpi_scene *s, int axis, bpi_sap_grid *grid);

/// Builds the layout from `items` (the boxes sorted by sweep-axis min, then index):
/// a stable counting sort by region, so positions are in (region, min, index)
/// order, then the copy of the bounds into the sorted SoA with sentinels.
bp_status bpi_sap_layout_build(bpi_sap_layout *layout, const bpi_scene *s, int axis, const bpi_sap_grid *grid,
	const bpi_sort_item *items);

#endif
