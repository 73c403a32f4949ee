// EGConv: the efficient graph convolution of Tailor et al. (ICLR 2022 GNNSys workshop, "Do We Need Anisotropic
// Graph Neural Networks?") as PyG 2.3.1's EGConv: B shared bases of width out/H, aggregated by each of A
// aggregators ("symnorm" GCN's normalisation, "sum", "mean", "min", "max", "var", "std"), combined per node and
// head by weights computed from the node,
//   bases = x W_b^T [N, B C'],  w = x W_c^T + b_c  viewed [N, H, A B],  out = w . stack_a(aggr_a(bases)) + bias,
// over the edges with one self-loop per node (add_self_loops; the graph's own replaced, as gcn_norm; without
// "symnorm" PyG 2.3.1 takes the node count for those loops from the largest node id in the edges, so a last node
// without edges gets no loop there: here every node gets one, whatever follows it in the batch). State_dict:
// "bases_lin.weight" [B C', in] (Glorot), "comb_lin.weight", "comb_lin.bias" [H A B, ...], "bias" [out].
//
//   auto conv = EGConv::fromPyG({{"in_channels", 64}, {"out_channels", 64}, {"aggregators", {"symnorm", "max"}}},
//                               gen);
//   Variable h = conv->forward(x, edgeIndex);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class EGConv : public MessagePassing {
 public:
  EGConv(int64_t inChannels, int64_t outChannels, Generator& gen, std::vector<std::string> aggregators = {"symnorm"},
         int64_t numHeads = 8, int64_t numBases = 4, bool addSelfLoops = true, bool bias = true,
         DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels, out_channels, aggregators, num_heads, num_bases, cached,
  /// add_self_loops, bias).
  static std::unique_ptr<EGConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  Variable forward(const Variable& x, const Tensor& edgeIndex);
  std::unique_ptr<Module> clone() const override;

 private:
  int64_t in_, out_;
  std::vector<std::string> aggregators_;
  int64_t heads_, bases_;
  bool addSelfLoops_, hasBias_;
  DType dtype_;
  std::unique_ptr<Linear> basesLin_, combLin_;
  Variable* bias_ = nullptr;
};

}  // namespace gnn
