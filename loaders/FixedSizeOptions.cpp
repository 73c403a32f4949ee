#include "loaders/FixedSizeOptions.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

namespace gnn {

void FixedSizeOptions::validate() const {
  GNN_CHECK_ARG(numGraphs >= 2, "FixedSizeOptions: numGraphs = ", numGraphs,
                " but one graph slot is always a padding graph: set numGraphs >= 2");
  GNN_CHECK_ARG(fits(1, 1, 1), "FixedSizeOptions: numNodes = ", numNodes, ", numEdges = ", numEdges,
                " leave no room for a real graph beside ", numGraphs - 1,
                " padding graph(s) of one node and one edge each: set numNodes, numEdges >= ", rowsNeeded(1, 1));
  GNN_CHECK_ARG(maxNodesPerGraph >= 0, "FixedSizeOptions: maxNodesPerGraph = ", maxNodesPerGraph,
                " must be >= 0 (0 = as large as the batch allows)");
}

int64_t FixedSizeOptions::maxGraphNodes() const {
  int64_t alone = nodeBudget(1);
  return maxNodesPerGraph > 0 ? std::min(alone, maxNodesPerGraph) : alone;
}

std::string FixedSizeOptions::misfit(int64_t nodes, int64_t edges, int64_t graphs) const {
  if (fits(nodes, edges, graphs)) return std::string();
  std::ostringstream os;
  if (graphs > numGraphs - 1) {
    os << graphs << " real graphs leave no graph slot for the padding graph in " << toString()
       << ": raise numGraphs to at least " << graphs + 1 << " or batch fewer graphs";
    return os.str();
  }
  const int64_t pads = numGraphs - graphs;
  const int64_t needNodes = rowsNeeded(nodes, graphs), needEdges = rowsNeeded(edges, graphs);
  const bool nodesShort = needNodes > numNodes, edgesShort = needEdges > numEdges;
  os << "the " << pads << " padding graph(s) need one node and one edge each (their self-loops), so";
  if (nodesShort) os << " " << nodes << " real nodes need numNodes >= " << needNodes;
  if (nodesShort && edgesShort) os << " and";
  if (edgesShort) os << " " << edges << " real edges need numEdges >= " << needEdges;
  os << ", but " << toString() << " has fewer: raise";
  if (nodesShort) os << " numNodes to at least " << needNodes;
  if (nodesShort && edgesShort) os << " and";
  if (edgesShort) os << " numEdges to at least " << needEdges;
  os << " or batch fewer graphs";
  return os.str();
}

std::string FixedSizeOptions::graphLimits() const {
  std::ostringstream os;
  os << "at most " << maxGraphNodes() << " nodes and " << maxGraphEdges() << " edges for one graph (" << toString()
     << " keeps one node and one edge for each of " << numGraphs - 1 << " padding graphs";
  if (maxNodesPerGraph > 0 && maxNodesPerGraph < nodeBudget(1)) os << ", and maxNodesPerGraph = " << maxNodesPerGraph;
  os << ")";
  return os.str();
}

std::string FixedSizeOptions::toString() const {
  std::ostringstream os;
  os << "FixedSizeOptions{numNodes=" << numNodes << ", numEdges=" << numEdges << ", numGraphs=" << numGraphs;
  if (maxNodesPerGraph > 0) os << ", maxNodesPerGraph=" << maxNodesPerGraph;
  os << "}";
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
  o.numNodes = o.rowsNeeded(std::max<int64_t>(maxNodes, 1) * (batchSize - 1), batchSize - 1);
  o.numEdges = o.rowsNeeded(std::max<int64_t>(maxEdges, 1) * (batchSize - 1), batchSize - 1);
  o.maxNodesPerGraph = std::max<int64_t>(maxNodes, 1);
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
  o.numNodes = std::max(o.rowsNeeded(static_cast<int64_t>(std::ceil(nodes / n * scale)), realGraphs),
                        o.rowsNeeded(std::max<int64_t>(maxNodes, 1), 1));
  o.numEdges = std::max(o.rowsNeeded(static_cast<int64_t>(std::ceil(edges / n * scale)), realGraphs),
                        o.rowsNeeded(std::max<int64_t>(maxEdges, 1), 1));
  o.maxNodesPerGraph = std::max<int64_t>(maxNodes, 1);
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
  s.options.numNodes = s.options.rowsNeeded(slotNodes * (batchSize - 1), batchSize - 1);
  s.options.numEdges = s.options.rowsNeeded(slotEdges * (batchSize - 1), batchSize - 1);
  // A graph above its slot may still fill a batch alone; only the dataset's largest graph bounds it.
  s.options.maxNodesPerGraph = std::max<int64_t>(*std::max_element(nodes.begin(), nodes.end()), 1);
  for (size_t i = 0; i < n; ++i) {
    if (nodes[i] > slotNodes || edges[i] > slotEdges) ++s.aboveSlot;
    if (!s.options.fitsGraph(nodes[i], edges[i])) ++s.overSize;
  }
  std::ostringstream os;
  os << "percentile " << percentile << ": slot of " << slotNodes << " nodes / " << slotEdges << " edges -> "
     << s.options.toString() << "; " << s.aboveSlot << " of " << n << " graphs exceed a slot, " << s.overSize
     << " exceed a whole batch and would be skipped or trimmed";
  s.summary = os.str();
  return s;
}

}  // namespace gnn
