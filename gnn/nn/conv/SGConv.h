// SGConv: the simplified graph convolution of Wu et al. (ICML 2019) as PyG 2.3.1's SGConv,
//   X' = (D^-1/2 (A + I) D^-1/2)^K X W^T + b,
// GCN's normalised adjacency (gcn_norm: every node exactly one self-loop with add_self_loops, the degree counting
// duplicates) applied K times, then one Linear. State_dict: "lin.weight" [out, in], "lin.bias" [out] (bias).
// PyG's `cached` keeps the first call's propagated features for every later call (transductive use); here the
// normalised adjacency is cached per graph instead (as GCNConv's), which gives the same outputs and also serves
// batches. When out < in the projection runs first (A^K X W^T: the same map, fewer columns to propagate).
//
//   auto conv = SGConv::fromPyG({{"in_channels", 1433}, {"out_channels", 7}, {"K", 2}}, gen);
//   Variable logits = conv->forward(x, edgeIndex);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class SGConv : public MessagePassing {
 public:
  SGConv(int64_t inChannels, int64_t outChannels, Generator& gen, int64_t K = 1, bool addSelfLoops = true,
         bool bias = true, DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels, out_channels, K, cached, add_self_loops, bias).
  static std::unique_ptr<SGConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  Variable forward(const Variable& x, const Tensor& edgeIndex);
  std::unique_ptr<Module> clone() const override;

 protected:
  Variable messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                               int64_t numNodes) override;

 private:
  int64_t in_, out_, k_;
  bool addSelfLoops_, bias_;
  DType dtype_;
  std::unique_ptr<Linear> lin_;
  std::shared_ptr<GCNConv::AdjacencyCache> cache_ = std::make_shared<GCNConv::AdjacencyCache>(1);
};

}  // namespace gnn
