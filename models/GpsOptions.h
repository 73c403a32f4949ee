// GpsOptions: the sizes and dropouts of a GPS++ model (models/GpsPlusPlus.h) and of each of its layers
// (models/GpsLayer.h); the defaults are the 44M configuration Graphcore trained on PCQM4Mv2.
#pragma once
#include <cstdint>

#include "gnn/tensor/Tensor.h"

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

}  // namespace gnn
