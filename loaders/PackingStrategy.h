// PackingStrategy: how FixedSizeDataLoader fills its fixed-size batches with real graphs.
#pragma once
#include <string>

#include "gnn/system/Check.h"

namespace gnn {

enum class PackingStrategy {
  /// numGraphs − 1 real graphs per batch in sampler order, the rest padding (PopTorch's pad_to_max).
  PadToMax,
  /// Greedy in sampler order: a graph joins the open batch if one node and one edge stay free for every
  /// remaining padding graph, else the batch is closed (PopTorch's stream packing).
  StreamPack,
  /// Decreasing-size packing over a window of the shuffled epoch (each batch takes the largest graph that fits
  /// while it is light, else the smallest, so node budget and graph cap run out together), then the window's
  /// batches in a seeded random order: far less padding than streaming, reproducible for a seed (ours).
  PlannedPack,
};

inline const char* packingStrategyName(PackingStrategy s) {
  switch (s) {
    case PackingStrategy::PadToMax: return "pad";
    case PackingStrategy::StreamPack: return "stream";
    case PackingStrategy::PlannedPack: return "plan";
  }
  return "?";
}

/// "pad" | "stream" | "plan" (also the long names "pad_to_max", "stream_pack", "planned_pack").
inline PackingStrategy parsePackingStrategy(const std::string& s) {
  if (s == "pad" || s == "pad_to_max") return PackingStrategy::PadToMax;
  if (s == "stream" || s == "stream_pack") return PackingStrategy::StreamPack;
  if (s == "plan" || s == "planned_pack") return PackingStrategy::PlannedPack;
  invalidArgument("unknown packing strategy '", s, "': use pad, stream or plan");
}

}  // namespace gnn
