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
#include "models/NormMlp.h"
#include "models/SpatialEncoding.h"

namespace gnn {

struct GpsOptions {
  // GPS_PCQ_16gps_44M.yaml: layer_repeats 16, node_latent 256, edge_latent 128, global_latent 64,
  // node_exp_ratio 4 (edges and globals inherit it), ffn_dim 1024, n_attn_heads 32.
  int64_t layers = 16;
  int64_t nodeDim = 256, edgeDim = 128, globalDim = 64;
  int64_t expansion = 4;
  int64_t ffn = 1024;
  int64_t heads = 32;
  int64_t tasks = 1;
  // Its dropouts: node_dropout 0.3, edge_dropout 0.0035, global_dropout 0.35, attention_dropout_rate 0.3,
  // graph_dropout_rate 0.3 (stochastic depth of the attention and the FFN, growing linearly to it over the layers;
  // 0 for the MPNN: override_graph_dropout_rate.MPNN).
  double nodeDropout = 0.3, edgeDropout = 0.0035, globalDropout = 0.35;
  double attentionDropout = 0.3, graphDropout = 0.3;
  DType dtype = DType::F32;

  /// The 44M configuration above (the defaults).
  static GpsOptions pcqm4mv2() { return GpsOptions{}; }
  /// Throws std::invalid_argument naming the first option out of range.
  void validate() const;
  /// Weights of the model these options build (its encoders with OGB's vocabularies included).
  int64_t parameterCount() const;
};

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
