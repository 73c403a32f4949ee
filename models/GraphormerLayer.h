// GraphormerLayer: one Graphormer encoder layer in the pre-LayerNorm form of the paper (Ying et al. 2021,
// eq. 8, and Graphormer's PCQM4M code, graphormer/model.py of its v1 release):
//   h' = h + dropout(attention(LN(h), bias, keyMask))        attention dropout on the probabilities inside
//   out = h' + dropout(fc2(activationDropout(GELU(fc1(LN(h'))))))
// over G graphs of T = max_node + 1 rows (graph token first) stored as [G·T, hidden], or packed (each graph's
// real rows only, forwardPacked: the same values for those rows, no work on padding). Linear layers are
// initialised as Graphormer's init_graphormer_params: weights N(0, 0.02), biases 0 (graphormerInit below).
//
//   GraphormerLayer layer(80, 8, 80, 0.0, 0.1, 0.1, gen);
//   Variable out = layer.forward(h, numGraphs, bias, keyMask);   // h [G·T, 80], bias [G, 8, T, T]
#pragma once
#include "gnn/nn/Linear.h"
#include "gnn/nn/MultiheadSelfAttention.h"
#include "gnn/nn/norm/LayerNorm.h"

namespace gnn {

/// Graphormer's initialisation of a Linear layer: weight N(0, 0.02), bias 0 (init_graphormer_params).
void graphormerInit(Linear& layer, Generator& gen);

class GraphormerLayer : public Module {
 public:
  GraphormerLayer(int64_t hidden, int64_t heads, int64_t ffn, double dropout, double attentionDropout,
                  double activationDropout, Generator& gen, DType dtype = DType::F32);
  /// h [graphs·T, hidden] -> the same shape; bias [graphs, heads, T, T], keyMask uint8 [graphs, T].
  Variable forward(const Variable& h, int64_t graphs, const Variable& bias, const Tensor& keyMask) const;
  /// Packed rows: h [R, hidden] holds graph g's rows in rowPtr[g] .. rowPtr[g+1] - 1 (at most maxRows), no
  /// padding rows; bias [graphs, heads, maxRows, maxRows].
  Variable forwardPacked(const Variable& h, const Tensor& rowPtr, int64_t maxRows,
                         const Variable& bias) const;
  std::unique_ptr<Module> clone() const override;

 private:
  /// The residual around the attention's output a, then the feed-forward block (every op per row).
  Variable afterAttention(const Variable& h, const Variable& a) const;

  int64_t hidden_, heads_, ffn_;
  double dropout_, attentionDropout_, activationDropout_;
  DType dtype_;
  LayerNorm attnNorm_;
  MultiheadSelfAttention attn_;
  LayerNorm ffnNorm_;
  Linear fc1_, fc2_;
};

}  // namespace gnn
