// IpuSpec: the hardware figures the memory and cost models read, each with its source (../shared/ipu/README.md
// holds the notes; the per-op terms come from device/CostFit.h). Mk2 GC200 is the default; Bow is the same chip at
// 1.85 GHz. Figures the sources do not confirm are marked "unconfirmed" and are plain fields, so a user with better
// numbers can set them.
//
//   IpuSpec s = IpuSpec::byName("bow");
//   s.memoryBytes();            // 940,572,672 B In-Processor-Memory per IPU
//   s.peakFlops(true);          // fp16: 128 FLOP/cycle/tile x 1,472 tiles x 1.85 GHz
#pragma once
#include <cstdint>
#include <string>

#include "device/CostFit.h"

namespace gnn {

struct IpuSpec {
  std::string name = "mk2";
  std::string description = "Graphcore Mk2 GC200 IPU (IPU-M2000)";
  // Graphcore's launch post of the 2nd-generation IPU: 1,472 tiles, 6 hardware threads each.
  int64_t tiles = 1472;
  // 624 KiB per tile: PopART's available_memory_proportion test and Poplar's out-of-memory message.
  int64_t bytesPerTile = 638976;
  // 1.330 GHz (Mk2), 1.850 GHz (Bow): third-party, from Poplar's getTileClockFrequency (IPUToolkit.jl).
  double clockHz = 1.33e9;
  // IPU-POD64 datasheet: 15.978 PFLOPS fp16.16 and 3.994 PFLOPS fp32 for 64 IPUs at 1.33 GHz, i.e. 128 and 32
  // FLOP per cycle per tile (the AMP unit).
  double flopsPerCycleFp16 = 128, flopsPerCycleFp32 = 32;
  // Graphcore's optimisation guide: "about 47 TB/s" of memory bandwidth within an IPU (at 1.33 GHz): the peak,
  // reported beside the fitted element-wise rate below (which reaches about a tenth of it).
  double onChipBytesPerSecond = 47.5e12;
  // IPU-Links: 10 per IPU, 320 GB/s in total (unconfirmed), i.e. 32 GB/s per link.
  double ipuLinkBytesPerSecond = 32e9;
  int64_t linksBetweenStages = 2;  // assumption: a pipeline's neighbouring IPUs use two links
  double ipuLinkLatencySeconds = 2e-6;  // assumption, per message between pipeline stages
  // Collectives between replicas (device/Collectives.h), from the only published GCL timings: Graphcore's
  // replicated_collectives tool as quoted in graphcore/poplibs commit messages (2020; 16 IPUs; meet-in-the-middle
  // rings, the method GCL's AUTO took there; fp16 elements). All-reduces of 1K, 4K, 16K and 128K elements took
  // 74,752, 105,487, 92,560 and 101,218 cycles (commit d3f278d8), one of 6 MB 498,363 cycles (commit c866d315).
  // The small ones' mean over the all-reduce's 16 steps (8 per phase) is the latency of a step; the 6 MB one less
  // that latency is the bandwidth through each IPU: 2 x 15/16 x 6 MiB in 404,859 cycles. Cycles are taken at the
  // Mk2 clock on both specs (the commits do not name the generation; the links do not speed up with Bow's clock).
  double collectiveStepSeconds = 93504.0 / 16 / 1.33e9;                // 4.39 us
  double collectiveBytesPerSecond = 11796480.0 / 404859.0 * 1.33e9;    // 38.8 GB/s per IPU, meet-in-the-middle
  // The quad-directional ring sends quarters round two rings in both directions where meet-in-the-middle uses
  // one ring's two directions: assumed twice the bandwidth (unpublished; 1x..2x is the plausible range).
  double quadRingBandwidthFactor = 2.0;
  // GW-Links between PODs: 2 x 100 Gb/s per IPU-Machine of 4 IPUs (IPU-M2000 and Bow-2000 datasheets), 6.25 GB/s
  // per IPU; the latency of a ring step across them is unpublished (assumption: 10 us, RoCE's order).
  double gwLinkBytesPerSecondPerIpu = 25e9 / 4;
  double gwLinkStepSeconds = 10e-6;
  // Host: IPU-M2000 gateway, 2 x 100 GbE RoCE = 25 GB/s shared by its 4 IPUs (unconfirmed; PCIe Gen4 x16 64 GB/s
  // on direct-attach systems).
  double hostBytesPerSecondPerIpu = 25e9 / 4;
  // What one host request (one call of a PopTorch program) costs besides its transfers: PopTorch's call, the
  // host-device synchronisation and the returned outputs, paid once per deviceIterations weight updates. From
  // the device-bound SchNet sweep on HydroNet-500k of Helal et al. (graphcore-research/hydronet-gnn
  // experiments/strong_scaling.ipynb, synthetic data, Bow, replicas x device iterations = 64): the time per update
  // grows 114.3 -> 116.9 ms from 8 to 64 replicas while the requests per update grow 8-fold; less the collectives'
  // growth, a least-squares fit gives 2.64 ms per request (bench/published_plans.py re-derives it: fits.host_call).
  // The QM9 sweep of the same notebook is held out to check it (docs/device.md, "Validation"). Was an assumed 50 us.
  double hostCallSeconds = 2.64e-3;
  // Streaming memory (DDR4 on the IPU-Machine, 256-448 GB per machine: datasheets). Bandwidth unconfirmed.
  double streamingBytesPerIpu = 64e9;
  double streamingBytesPerSecond = 20e9;
  // Always-resident bytes per tile Poplar needs besides the model's tensors: vertex and control code and
  // exchange buffers. Assumption (PopVision profiles of mid-sized models show roughly 10-20% of tile memory
  // for these); a parameter, not a measured constant.
  int64_t codeAndExchangeBytesPerTile = 96 * 1024;
  // Per-op terms fitted to published kernel-level measurements (device/CostFit.h, written by
  // device/costfit/fit.py from device/costfit/kernels.csv): GC200 tile cycles, the same on Mk2 and Bow.
  // Every op but gathers and scatters: a fixed cost (was an assumed 2,000 cycles) and element-wise bytes per cycle
  // (was a quarter of the 47.5 TB/s peak); matmuls reach matmulPeakShare x h / (h + matmulHalfDim) of the AMP
  // peak, h = MKN / (MK + KN + MN), about the smallest dimension (was an assumed 0.6 x w / (w + 64k FLOP/tile)).
  double opCycles = costfit::kOpCycles;
  double elementwiseBytesPerCycle = costfit::kElementwiseBytesPerCycle;
  double matmulPeakShare = costfit::kMatmulPeakShare;
  double matmulHalfDim = costfit::kMatmulHalfDim;
  // Gathers and scatters on the tile exchange (were charged at a quarter of an unconfirmed 8 TB/s): fixed
  // cycles, cycles per index and per table row, bytes per cycle (device/CostModel.cpp says which ops are which).
  double gatherCycles = costfit::kGatherCycles;
  double gatherCyclesPerIndex = costfit::kGatherCyclesPerIndex;
  double gatherCyclesPerTableRow = costfit::kGatherCyclesPerTableRow;
  double gatherBytesPerCycle = costfit::kGatherBytesPerCycle;
  double scatterCycles = costfit::kScatterCycles;
  double scatterCyclesPerIndex = costfit::kScatterCyclesPerIndex;
  double scatterBytesPerCycle = costfit::kScatterBytesPerCycle;

  static IpuSpec mk2();
  static IpuSpec bow();
  /// "mk2" or "bow"; throws naming the choices otherwise.
  static IpuSpec byName(const std::string& name);
  /// The spec `options` plan for: its ipuSpec, with its bytesPerTile when set.
  static IpuSpec of(const struct IpuOptions& options);

  int64_t memoryBytes() const { return tiles * bytesPerTile; }
  double peakFlops(bool fp16) const {
    return static_cast<double>(tiles) * (fp16 ? flopsPerCycleFp16 : flopsPerCycleFp32) * clockHz;
  }
  int64_t codeAndExchangeBytes() const { return tiles * codeAndExchangeBytesPerTile; }
};

}  // namespace gnn
