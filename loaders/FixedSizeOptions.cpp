#include "loaders/FixedSizeOptions.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

namespace gnn {

void FixedSizeOptions::validate() const {
  GNN_CHECK_ARG(numGraphs >= 2, "FixedSizeOptions: numGraphs = ", numGraphs,
                " but one graph slot is always a padding graph: set numGraphs >= 2");
  GNN_CHECK_ARG(numNodes >= numGraphs && numEdges >= numGraphs, "FixedSizeOptions: numNodes = ", numNodes,
                ", numEdges = ", numEdges, " leave no room for a real graph beside ", numGraphs - 1,
                " padding graph(s) of one node and one edge each: set numNodes, numEdges >= ", numGraphs);
}

std::string FixedSizeOptions::toString() const {
  std::ostringstream os;
  os << "FixedSizeOptions{numNodes=" << numNodes << ", numEdges=" << numEdges << ", numGraphs=" << numGraphs << "}";
  return os.str();
}

FixedSizeOptions FixedSizeOptions::fromDataset(const Dataset& dataset, int64_t batchSize) {
  GNN_CHECK_ARG(batchSize >= 2, "FixedSizeOptions::fromDataset: batchSize = ", batchSize,
                " counts the padding graph too: use batchSize >= 2");
  GNN_CHECK_ARG(dataset.size() > 0, "FixedSizeOptions::fromDataset: empty dataset");
  int64_t maxNodes = 0, maxEdges = 0;
  for (size_t i = 0; i < dataset.size(); ++i) {
    maxNodes = std::max(maxNodes, dataset.numNodes(i));
    maxEdges = std::max(maxEdges, dataset.numEdges(i));
  }
  FixedSizeOptions o;
  o.numGraphs = batchSize;
  o.numNodes = maxNodes * (batchSize - 1) + 1;
  o.numEdges = maxEdges * (batchSize - 1) + 1;
  return o;
}

FixedSizeOptions FixedSizeOptions::forPacking(const Dataset& dataset, int64_t realGraphs, double headroom) {
  GNN_CHECK_ARG(realGraphs >= 1, "FixedSizeOptions::forPacking: realGraphs = ", realGraphs, ", need >= 1");
  GNN_CHECK_ARG(dataset.size() > 0, "FixedSizeOptions::forPacking: empty dataset");
  double nodes = 0, edges = 0;
  int64_t maxNodes = 0, maxEdges = 0;
  for (size_t i = 0; i < dataset.size(); ++i) {
    nodes += static_cast<double>(dataset.numNodes(i));
    edges += static_cast<double>(dataset.numEdges(i));
    maxNodes = std::max(maxNodes, dataset.numNodes(i));
    maxEdges = std::max(maxEdges, dataset.numEdges(i));
  }
  double n = static_cast<double>(dataset.size()), scale = static_cast<double>(realGraphs) * (1.0 + headroom);
  FixedSizeOptions o;
  o.numGraphs = realGraphs + 1;
  // Never below what the largest graph needs on its own beside the padding graphs.
  o.numNodes = std::max(static_cast<int64_t>(std::ceil(nodes / n * scale)) + 1, maxNodes + realGraphs);
  o.numEdges = std::max(static_cast<int64_t>(std::ceil(edges / n * scale)) + 1, maxEdges + realGraphs);
  return o;
}

FixedSizeOptions::PercentileSizing FixedSizeOptions::fromPercentile(const Dataset& dataset, int64_t batchSize,
                                                                    double percentile) {
  GNN_CHECK_ARG(batchSize >= 2, "FixedSizeOptions::fromPercentile: batchSize = ", batchSize, ", need >= 2");
  GNN_CHECK_ARG(percentile > 0 && percentile <= 100, "FixedSizeOptions::fromPercentile: percentile ", percentile,
                " not in (0, 100]");
  size_t n = dataset.size();
  GNN_CHECK_ARG(n > 0, "FixedSizeOptions::fromPercentile: empty dataset");
  std::vector<int64_t> nodes(n), edges(n);
  for (size_t i = 0; i < n; ++i) {
    nodes[i] = dataset.numNodes(i);
    edges[i] = dataset.numEdges(i);
  }
  // Nearest-rank percentile: the smallest value with at least p% of the graphs at or below it.
  auto rank = [&](std::vector<int64_t> v) {
    size_t k = static_cast<size_t>(std::ceil(percentile / 100.0 * static_cast<double>(n)));
    k = std::min(std::max<size_t>(k, 1), n) - 1;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
  };
  int64_t slotNodes = std::max<int64_t>(rank(nodes), 1), slotEdges = std::max<int64_t>(rank(edges), 1);
  PercentileSizing s;
  s.options.numGraphs = batchSize;
  s.options.numNodes = slotNodes * (batchSize - 1) + 1;
  s.options.numEdges = slotEdges * (batchSize - 1) + 1;
  for (size_t i = 0; i < n; ++i) {
    if (nodes[i] > slotNodes || edges[i] > slotEdges) ++s.aboveSlot;
    if (nodes[i] > s.options.maxGraphNodes() || edges[i] > s.options.maxGraphEdges()) ++s.overSize;
  }
  std::ostringstream os;
  os << "percentile " << percentile << ": slot of " << slotNodes << " nodes / " << slotEdges << " edges -> "
     << s.options.toString() << "; " << s.aboveSlot << " of " << n << " graphs exceed a slot, " << s.overSize
     << " exceed a whole batch and would be skipped or trimmed";
  s.summary = os.str();
  return s;
}

}  // namespace gnn
