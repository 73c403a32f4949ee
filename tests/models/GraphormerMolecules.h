// Molecules with Graphormer's encodings for model tests: SMILES featurised as OGB does and encoded by
// data/GraphormerEncodings (as build_dataset --graphormer-max-dist does), atom permutations of them, the
// first molecules of the shipped PCQM4Mv2-style set, and fixed-size batches of given graphs.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "data/GraphormerEncodings.h"
#include "data/MoleculeSource.h"
#include "data/SmilesFeaturizer.h"
#include "loaders/FixedSizeCollator.h"

namespace gnn::test {

inline MoleculeGraph featurized(const std::string& smiles, float y = 0) {
  static const SmilesFeaturizer featurizer;
  MoleculeGraph g;
  std::string why;
  EXPECT_TRUE(featurizer.featurize(smiles, g, why)) << smiles << ": " << why;
  g.y = {y};
  g.yMask = {1};
  return g;
}

/// g with Graphormer's encodings (multi_hop_max_dist k), as a Graph.
inline Graph encoded(MoleculeGraph g, int k = 5) {
  GraphormerEncodings(k).compute(g);
  return g.toGraph();
}

/// g with its atoms renumbered: atom i becomes atom perm[i]; bonds keep their order and features.
inline MoleculeGraph permuted(const MoleculeGraph& g, const std::vector<int64_t>& perm) {
  MoleculeGraph p = g;
  for (int64_t i = 0; i < g.numNodes; ++i)
    for (int c = 0; c < MoleculeGraph::kAtomFeatures; ++c)
      p.x[perm[i] * MoleculeGraph::kAtomFeatures + c] = g.x[i * MoleculeGraph::kAtomFeatures + c];
  for (int64_t e = 0; e < g.numEdges(); ++e) {
    p.src[e] = perm[g.src[e]];
    p.dst[e] = perm[g.dst[e]];
  }
  return p;
}

/// The first `count` molecules of examples/data/pcqm4mv2_style with at most maxAtoms atoms, encoded (k = 5).
inline std::vector<Graph> pcqmStyle(int64_t count, int64_t maxAtoms = 30) {
  MoleculeSourceOptions o;
  o.path = std::string(GNN_SOURCE_DIR) + "/examples/data/pcqm4mv2_style";
  auto src = openMoleculeSource(o);
  static const SmilesFeaturizer featurizer;
  std::vector<Graph> out;
  MoleculeRecord r;
  MoleculeGraph g;
  std::string why;
  while (static_cast<int64_t>(out.size()) < count && src->next(r)) {
    if (!r.error.empty() || !featurizer.featurize(r.smiles, g, why) || g.numNodes > maxAtoms) continue;
    g.y = r.y;
    g.yMask = r.yMask;
    out.push_back(encoded(g));
  }
  return out;
}

/// One fixed-size batch of exactly these graphs: numGraphs = graphs + padGraphs, numNodes and numEdges their
/// totals (at least maxNodes) plus the padding graphs' share plus `extraRows`, node-pair blocks of side
/// maxNodes.
inline Batch batchOf(const std::vector<Graph>& graphs, int64_t maxNodes, int64_t padGraphs = 1,
                     int64_t extraRows = 0) {
  FixedSizeOptions o;
  int64_t nodes = 0, edges = 0;
  for (const Graph& g : graphs) nodes += g.numNodes, edges += g.numEdges();
  o.numGraphs = static_cast<int64_t>(graphs.size()) + padGraphs;
  // At least maxNodes nodes beside the padding graphs' (FixedSizeOptions::maxGraphNodes), so blocks have side
  // maxNodes even for a single small graph.
  o.numNodes = std::max(nodes, maxNodes) + padGraphs + extraRows;
  o.numEdges = edges + padGraphs + 2 * extraRows;
  o.maxNodesPerGraph = maxNodes;
  return FixedSizeCollator(o).collate(graphs);
}

}  // namespace gnn::test
