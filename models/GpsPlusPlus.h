// GpsPlusPlus: GPS++, the hybrid MPNN/Transformer of Masters et al., "GPS++: An Optimised Hybrid MPNN/Transformer
// for Molecular Property Prediction" (arXiv:2212.02229), as Graphcore trained it on PCQM4Mv2 on IPUs
// (graphcore/examples gnn/ogb_lsc_pcqm4mv2/tensorflow2, configs/GPS_PCQ_16gps_44M.yaml): 16 GpsLayers
// (message passing with edge and global updates, attention within each molecule, FFN), nodes 256 wide, edges 128,
// globals 64, FFN 1024, 32 heads, MLPs 4x wide with a LayerNorm on their hidden layer, GELU, and a decoder MLP on
// the sum of each molecule's node rows. 44M parameters, as the configuration's name says.
//
// What this model leaves out of GPS++ (its inputs, not its layers): the encoders of Laplacian eigenvectors, random
// walk probabilities and 3D distances (this project's datasets have none of them), the noisy-node and noisy-edge
// auxiliary heads, and input masking. The atoms and bonds are OGB's features through OGB's encoders (AtomEncoder
// to the node width, BondEncoder to the edge width), the globals start from a learned vector, and the attention
// bias is a learned value per head and shortest-path distance (models/SpatialEncoding.h), GPS++'s
// shortest_path_distances bias. Batches carry Graphormer's encodings (spatialPos; data/GraphormerEncodings.h),
// one node-pair block of side M = batch.maxNodesPerGraph per graph.
//
// Blocks: "input" (encoders, the attention bias and key mask), "layers/0" .. "layers/L-1", "head"; the state
// carries "h" [N, nodeDim], "e" [E, edgeDim], "g" [G, globalDim], "bias" [G, heads, M, M] and "mask" [G, M].
// Real graphs' outputs do not depend on padding (tests/models/GpsPlusPlus_test.cpp).
//
//   GpsOptions opt = GpsOptions::pcqm4mv2();       // the 44M configuration; tests use smaller ones
//   GpsPlusPlus model(opt, gen);
//   ExecutionContext::current().setRandomKey({seed, step, 0});
//   Variable pred = model.forward(batch);          // [numGraphs, tasks]; padding graphs' rows are 0
#pragma once
#include <memory>
#include <vector>

#include "models/AtomEncoder.h"
#include "models/BlockModel.h"
#include "models/BondEncoder.h"
#include "models/GpsLayer.h"
#include "models/GpsOptions.h"
#include "models/NormMlp.h"
#include "models/SpatialEncoding.h"

namespace gnn {

class GpsPlusPlus : public BlockModel {
 public:
  GpsPlusPlus(GpsOptions options, Generator& gen);
  const char* name() const { return "gps++"; }
  const GpsOptions& options() const { return opt_; }
  std::unique_ptr<Module> clone() const override;
  /// The graph-level vector the decoder reads, [numGraphs, nodeDim]: the sum of each graph's node rows after the
  /// last layer; padding graphs' rows are 0. forward() is the decoder applied to exactly these values.
  Variable graphEmbeddings(const Batch& batch);
  /// The key mask of a batch: [G, M] uint8, 1 for the atoms of real graphs.
  static Tensor keyMask(const Batch& batch);

 private:
  GpsOptions opt_;
  AtomEncoder atoms_;
  BondEncoder bonds_;
  SpatialEncoding spatial_;
  Variable* globalInit_;
  std::vector<std::unique_ptr<GpsLayer>> layers_;
  NormMlp decoder_;
};

}  // namespace gnn
