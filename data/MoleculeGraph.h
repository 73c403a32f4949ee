// MoleculeGraph: one molecule's graph in flat, reusable std::vector buffers (int64 like Graph). The
// featuriser fills it without per-atom allocations; toGraph() makes the Tensor-based gnn::Graph.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/Graph.h"

namespace gnn {

struct MoleculeGraph {
  static constexpr int kAtomFeatures = 9;
  static constexpr int kBondFeatures = 3;

  int64_t numNodes = 0;
  /// The molecule as SMILES, stored with the graph in datasets: the input's text for SMILES sources, RDKit's
  /// canonical SMILES for SDF records, empty for XYZ (no bonds to write one from).
  std::string smiles;
  std::vector<int64_t> x;         // [N * 9]
  std::vector<int64_t> src, dst;  // [E] each: edge k goes src[k] -> dst[k]
  std::vector<int64_t> edgeAttr;  // [E * 3]
  std::vector<float> pos;         // [N * 3] or empty
  std::vector<int64_t> z;         // [N] or empty
  std::vector<float> y;           // [T]
  std::vector<uint8_t> yMask;     // [T]
  // Graphormer encodings (empty unless computed): see GraphormerEncodings.h.
  int maxDist = 0;                  // K of edgeInput
  std::vector<int64_t> spatialPos;  // [N * N]
  std::vector<int64_t> inDegree;    // [N]
  std::vector<int16_t> edgeInput;   // [N * N * K * 3]; int16 (values <= 1031): it grows as N^2
  /// [N * N] Floyd-Warshall's last improving intermediate node of each pair, -1 when there is none (i == j,
  /// one bond, unreachable): edgeInput for any K follows from it (data/EdgeInputGather.h).
  std::vector<int32_t> pathVia;

  int64_t numEdges() const { return static_cast<int64_t>(src.size()); }
  /// Empties every buffer but keeps its capacity, so a reused MoleculeGraph stops allocating.
  void clear();
  Graph toGraph() const;
};

}  // namespace gnn
