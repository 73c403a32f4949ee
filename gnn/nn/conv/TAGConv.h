// TAGConv: the topology adaptive graph convolution of Du et al. (2017) as PyG 2.3.1's TAGConv,
//   X' = sum_{k=0..K} (A_hat^k X) W_k^T + b,
// A_hat the symmetric normalisation D^-1/2 A D^-1/2 without added self-loops (gcn_norm with add_self_loops=False;
// a node without incoming edges propagates 0) or, without normalize, the edges as they are. State_dict:
// "lins.<k>.weight" [out, in] for k = 0..K (no biases), "bias" [out] (zeros at first). The matrix is cached per
// graph as GCNConv's.
//
//   auto conv = TAGConv::fromPyG({{"in_channels", 16}, {"out_channels", 32}, {"K", 3}}, gen);
//   Variable h = conv->forward(x, edgeIndex);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class TAGConv : public MessagePassing {
 public:
  TAGConv(int64_t inChannels, int64_t outChannels, Generator& gen, int64_t K = 3, bool bias = true,
          bool normalize = true, DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels, out_channels, K, bias, normalize).
  static std::unique_ptr<TAGConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  Variable forward(const Variable& x, const Tensor& edgeIndex);
  std::unique_ptr<Module> clone() const override;

 protected:
  Variable messageAndAggregate(const Tensor& edgeIndex, const Variable& x, const Variable& edgeAttr,
                               int64_t numNodes) override;

 private:
  int64_t in_, out_, k_;
  bool hasBias_, normalize_;
  DType dtype_;
  std::vector<std::unique_ptr<Linear>> lins_;
  Variable* bias_ = nullptr;
  std::shared_ptr<GCNConv::AdjacencyCache> cache_ = std::make_shared<GCNConv::AdjacencyCache>(1);
};

}  // namespace gnn
