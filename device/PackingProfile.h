// PackingProfile: what one micro-batch holds as the loader fills it: packs of fixed shape (nodes, edges, graph
// slots), each holding several real graphs, as Graphcore's packed SchNet and GPS++ ran. The plan counts its
// throughput in real graphs: graphs/s = packs/s x mean real graphs per pack, never packs or graph slots. Read
// from the loader's epoch plan, which knows every pack's graphs before any of them is collated.
//
//   PackingProfile p = PackingProfile::of(loader);   // a FixedSizeDataLoader: one pack per micro-batch
//   options.samplesPerMicroBatch = p.realGraphsPerMicroBatch();
//   std::cout << p.describe();
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "loaders/BatchPlanner.h"

namespace gnn {

class FixedSizeDataLoader;

struct PackingProfile {
  bool known = false;                 // false: the plan was given a number of samples, not a loader
  std::string strategy;               // "pad", "stream", "plan" (loaders/PackingStrategy.h)
  int64_t packsPerMicroBatch = 1;     // a FixedSizeDataLoader's micro-batch is one pack
  int64_t nodesPerPack = 0, edgesPerPack = 0;  // fixed rows, padding included
  int64_t graphSlotsPerPack = 0;      // numGraphs, the padding graph's slot included
  // Over the epoch's packs, its least-filled one left out when it has more than one: the remainder of the
  // epoch (a partial last batch, a packing window's leftovers), which a long run does not see in its steady
  // state and PopTorch's DataLoader drops (drop_last).
  int64_t packs = 0;                  // packs the means are taken over
  int64_t epochPacks = 0;             // packs in the epoch
  int64_t leftOutGraphs = 0;          // real graphs in the pack left out (0 when none was)
  double realGraphsPerPack = 0, realNodesPerPack = 0, realEdgesPerPack = 0;

  /// The samples one micro-batch trains on: packs x mean real graphs per pack.
  double realGraphsPerMicroBatch() const { return static_cast<double>(packsPerMicroBatch) * realGraphsPerPack; }
  /// Real graphs over the slots that can hold one (every slot but the padding graph's).
  double graphSlotFill() const;
  double nodeFill() const { return nodesPerPack ? realNodesPerPack / static_cast<double>(nodesPerPack) : 0.0; }
  double edgeFill() const { return edgesPerPack ? realEdgesPerPack / static_cast<double>(edgesPerPack) : 0.0; }

  /// From an epoch's plan and its fixed shapes.
  static PackingProfile fromPlan(const EpochPlan& plan, const FixedSizeOptions& fixed, PackingStrategy strategy,
                                 int64_t packsPerMicroBatch = 1);
  /// The loader's current epoch (startEpoch called).
  static PackingProfile of(const FixedSizeDataLoader& loader);

  /// "1 pack of 65 graph slots, 480 nodes, 960 edges (planned packing); 31.6 real graphs per pack on average ..."
  std::string describe() const;
  /// Its fields, and packs/s and graphs/s at `microBatchesPerSecond`.
  nlohmann::json toJson(double microBatchesPerSecond) const;
};

}  // namespace gnn
