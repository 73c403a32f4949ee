// CostFit: the IPU cost model's per-op terms, fitted to published kernel-level measurements of Graphcore
// IPUs (device/costfit/kernels.csv; sources in device/costfit/README.md). Written by device/costfit/fit.py;
// do not edit by hand (tests/device/CostFit_test.cpp checks that the script reproduces it). Cycles are
// GC200 tile cycles: a Mk2 IPU (1.33 GHz) and a Bow IPU (1.85 GHz) run the same cycles, at their clocks.
#pragma once

namespace gnn::costfit {

// Gathers (index_select: indices = rows gathered, table rows, bytes as gatherRows counts them).
inline constexpr double kGatherCycles = 1811;
inline constexpr double kGatherCyclesPerIndex = 0.02681;
inline constexpr double kGatherCyclesPerTableRow = 2.33;
inline constexpr double kGatherBytesPerCycle = 2618;
// Scatter-adds (indices = rows scattered; bytes as scatterSum counts them, the target rows included).
inline constexpr double kScatterCycles = 3310;
inline constexpr double kScatterCyclesPerIndex = 1.383;
inline constexpr double kScatterBytesPerCycle = 634.9;
// Every other op: a fixed cost (PopTorch's op granularity), element-wise bytes, and matmul efficiency
// eff(h) = kMatmulPeakShare x h / (h + kMatmulHalfDim), h = MKN / (MK + KN + MN), of the AMP units' peak.
inline constexpr double kOpCycles = 3984;
inline constexpr double kElementwiseBytesPerCycle = 3761;
inline constexpr double kMatmulPeakShare = 0.597;
inline constexpr double kMatmulHalfDim = 0;

// The fit: 1785 points; fitted / measured per set (rms of relative error, median |log ratio|, range).
//   gather (availableMemoryProportion default, 594 points): rms 0.26, median 0.18, 0.37..1.93
//   gather (availableMemoryProportion 0.1, held out, 594 points): rms 0.32, median 0.24, 0.22..2.04
//   scatter_add (availableMemoryProportion default, 594 points): rms 0.32, median 0.20, 0.30..1.96
//   scatter_add (availableMemoryProportion 0.1, held out, 594 points): rms 0.34, median 0.24, 0.27..2.11
//   schnet_interaction_block (availableMemoryProportion default, 594 points): rms 0.09, median 0.05, 0.72..1.32
//   schnet_interaction_block (availableMemoryProportion 0.1, held out, 594 points): rms 0.11, median 0.06, 0.60..1.33
//   matmul (availableMemoryProportion default, 3 points): rms 0.03, median 0.02, 0.96..1.02

}  // namespace gnn::costfit
