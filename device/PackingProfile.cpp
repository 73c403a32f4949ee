#include "device/PackingProfile.h"

#include <algorithm>
#include <sstream>

#include "device/PlanFormat.h"
#include "loaders/FixedSizeDataLoader.h"

namespace gnn {

using planfmt::fmt;
using planfmt::pct;

double PackingProfile::graphSlotFill() const {
  const int64_t slots = std::max<int64_t>(1, graphSlotsPerPack - 1);
  return realGraphsPerPack / static_cast<double>(slots);
}

PackingProfile PackingProfile::fromPlan(const EpochPlan& plan, const FixedSizeOptions& fixed, PackingStrategy strategy,
                                        int64_t packsPerMicroBatch) {
  PackingProfile p;
  p.known = true;
  p.strategy = packingStrategyName(strategy);
  p.packsPerMicroBatch = packsPerMicroBatch;
  p.nodesPerPack = fixed.numNodes;
  p.edgesPerPack = fixed.numEdges;
  p.graphSlotsPerPack = fixed.numGraphs;
  p.epochPacks = static_cast<int64_t>(plan.batches.size());
  if (plan.batches.empty()) return p;
  // The least-filled pack (fewest graphs, then fewest nodes): the epoch's remainder, left out of the steady state.
  size_t least = 0;
  auto nodesOf = [&](size_t i) {
    int64_t n = 0;
    for (const PlannedGraph& g : plan.batches[i]) n += g.numNodes;
    return n;
  };
  for (size_t i = 1; i < plan.batches.size(); ++i) {
    const size_t a = plan.batches[i].size(), b = plan.batches[least].size();
    if (a < b || (a == b && nodesOf(i) < nodesOf(least))) least = i;
  }
  const bool leaveOut = plan.batches.size() > 1;
  int64_t graphs = 0, nodes = 0, edges = 0;
  for (size_t i = 0; i < plan.batches.size(); ++i) {
    if (leaveOut && i == least) continue;
    graphs += static_cast<int64_t>(plan.batches[i].size());
    for (const PlannedGraph& g : plan.batches[i]) {
      nodes += g.numNodes;
      edges += g.numEdges;
    }
  }
  p.packs = p.epochPacks - (leaveOut ? 1 : 0);
  p.leftOutGraphs = leaveOut ? static_cast<int64_t>(plan.batches[least].size()) : 0;
  const double n = static_cast<double>(p.packs);
  p.realGraphsPerPack = static_cast<double>(graphs) / n;
  p.realNodesPerPack = static_cast<double>(nodes) / n;
  p.realEdgesPerPack = static_cast<double>(edges) / n;
  return p;
}

PackingProfile PackingProfile::of(const FixedSizeDataLoader& loader) {
  return fromPlan(loader.plan(), loader.fixedSizeOptions(), loader.options().strategy);
}

std::string PackingProfile::describe() const {
  std::ostringstream s;
  const char* how = strategy == "pad" ? "padded to a fixed number of graphs" : strategy == "stream" ? "stream packing" : "planned packing";
  s << packsPerMicroBatch << " pack(s) of " << graphSlotsPerPack << " graph slots (one for padding), " << nodesPerPack
    << " nodes, " << edgesPerPack << " edges (" << how << "); " << fmt("%.2f", realGraphsPerPack)
    << " real graphs per pack on average (graph slots " << pct(graphSlotFill()) << " used, nodes " << pct(nodeFill())
    << ", edges " << pct(edgeFill()) << ") over " << packs << " of the epoch's " << epochPacks << " packs";
  if (epochPacks > packs) s << " (its least-filled, " << leftOutGraphs << " graphs, left out: the epoch's remainder)";
  s << "; samples/s counts real graphs: graphs/s = packs/s x " << fmt("%.2f", realGraphsPerPack);
  return s.str();
}

nlohmann::json PackingProfile::toJson(double microBatchesPerSecond) const {
  const double packsPerSecond = microBatchesPerSecond * static_cast<double>(packsPerMicroBatch);
  return {{"strategy", strategy},
          {"packs_per_micro_batch", packsPerMicroBatch},
          {"nodes_per_pack", nodesPerPack},
          {"edges_per_pack", edgesPerPack},
          {"graph_slots_per_pack", graphSlotsPerPack},
          {"real_graphs_per_pack", realGraphsPerPack},
          {"real_nodes_per_pack", realNodesPerPack},
          {"real_edges_per_pack", realEdgesPerPack},
          {"graph_slot_fill", graphSlotFill()},
          {"node_fill", nodeFill()},
          {"edge_fill", edgeFill()},
          {"packs_averaged", packs},
          {"epoch_packs", epochPacks},
          {"left_out_pack_graphs", leftOutGraphs},
          {"real_graphs_per_micro_batch", realGraphsPerMicroBatch()},
          {"micro_batches_per_s", microBatchesPerSecond},
          {"packs_per_s", packsPerSecond},
          {"graphs_per_s", packsPerSecond * realGraphsPerPack}};
}

}  // namespace gnn
