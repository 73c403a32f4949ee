#include "loaders/PaddingReport.h"

#include <cstdio>

#include "loaders/Batch.h"

namespace gnn {

void PaddingReport::add(const Batch& b) {
  ++batches;
  realNodes += b.numRealNodes;
  totalNodes += b.numNodes;
  realEdges += b.numRealEdges;
  totalEdges += b.numEdges;
  realGraphs += b.numRealGraphs;
  totalGraphs += b.numGraphs;
  if (b.spatialPos.defined() && b.ptr.defined()) {
    const int64_t* ptr = b.ptr.data<int64_t>();
    for (int64_t g = 0; g < b.numRealGraphs; ++g) realNodePairs += (ptr[g + 1] - ptr[g]) * (ptr[g + 1] - ptr[g]);
    totalNodePairs += b.numGraphs * b.maxNodesPerGraph * b.maxNodesPerGraph;
  }
}

void PaddingReport::merge(const PaddingReport& o) {
  batches += o.batches;
  realNodes += o.realNodes;
  totalNodes += o.totalNodes;
  realEdges += o.realEdges;
  totalEdges += o.totalEdges;
  realGraphs += o.realGraphs;
  totalGraphs += o.totalGraphs;
  skipped += o.skipped;
  trimmed += o.trimmed;
  trimmedNodes += o.trimmedNodes;
  trimmedEdges += o.trimmedEdges;
  realNodePairs += o.realNodePairs;
  totalNodePairs += o.totalNodePairs;
}

nlohmann::json PaddingReport::toJson() const {
  nlohmann::json j = {{"batches", batches},
          {"real_nodes", realNodes},
          {"total_nodes", totalNodes},
          {"real_edges", realEdges},
          {"total_edges", totalEdges},
          {"real_graphs", realGraphs},
          {"total_graphs", totalGraphs},
          {"node_efficiency", nodeEfficiency()},
          {"edge_efficiency", edgeEfficiency()},
          {"graph_efficiency", graphEfficiency()},
          {"real_graphs_per_batch", realGraphsPerBatch()},
          {"skipped", skipped},
          {"trimmed", trimmed},
          {"trimmed_nodes", trimmedNodes},
          {"trimmed_edges", trimmedEdges}};
  if (totalNodePairs > 0) {
    j["real_node_pairs"] = realNodePairs;
    j["total_node_pairs"] = totalNodePairs;
    j["node_pair_efficiency"] = nodePairEfficiency();
  }
  return j;
}

std::string PaddingReport::toString() const {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%lld batches: nodes %.2f%% real (%lld/%lld), edges %.2f%% (%lld/%lld), graphs %.2f%% (%lld/%lld), "
                "skipped %lld, trimmed %lld",
                static_cast<long long>(batches), 100 * nodeEfficiency(), static_cast<long long>(realNodes),
                static_cast<long long>(totalNodes), 100 * edgeEfficiency(), static_cast<long long>(realEdges),
                static_cast<long long>(totalEdges), 100 * graphEfficiency(), static_cast<long long>(realGraphs),
                static_cast<long long>(totalGraphs), static_cast<long long>(skipped), static_cast<long long>(trimmed));
  std::string s = buf;
  if (totalNodePairs > 0) {
    std::snprintf(buf, sizeof buf, ", node pairs %.2f%% real (%lld/%lld)", 100 * nodePairEfficiency(),
                  static_cast<long long>(realNodePairs), static_cast<long long>(totalNodePairs));
    s += buf;
  }
  return s;
}

}  // namespace gnn
