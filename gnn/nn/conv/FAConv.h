// FAConv: the frequency adaptive graph convolution of Bo et al. (AAAI 2021, FAGCN) as PyG 2.3.1's FAConv,
//   x'_i = eps x0_i + sum_{j -> i} tanh(a_l . x_j + a_r . x_i) / sqrt(d_i d_j) x_j,
// over gcn_norm's edges (the graph's self-loops replaced by one per node with add_self_loops; d the in-degree),
// the attention coefficients dropped with `dropout` in training. State_dict: "att_l.weight", "att_r.weight"
// ([1, C], no biases). PyG's normalize=False needs edge weights passed to forward, which this layer does not take.
//
//   auto conv = FAConv::fromPyG({{"channels", 64}, {"eps", 0.3}}, gen);
//   Variable h = conv->forward(x, x0, edgeIndex);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class FAConv : public MessagePassing {
 public:
  FAConv(int64_t channels, Generator& gen, double eps = 0.1, double dropout = 0.0, bool addSelfLoops = true,
         DType dtype = DType::F32);
  /// From PyG's keyword arguments (channels, eps, dropout, cached, add_self_loops; normalize must be true).
  static std::unique_ptr<FAConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, C], x0 [N, C] (the initial features), edgeIndex [2, E] -> [N, C].
  Variable forward(const Variable& x, const Variable& x0, const Tensor& edgeIndex);
  std::unique_ptr<Module> clone() const override;

 private:
  int64_t channels_;
  double eps_, dropout_;
  bool addSelfLoops_;
  DType dtype_;
  std::unique_ptr<Linear> attL_, attR_;
};

}  // namespace gnn
