// ChebConv: the Chebyshev spectral graph convolution of Defferrard et al. (NeurIPS 2016) as PyG 2.3.1's ChebConv,
//   X' = sum_{k=0..K-1} T_k(L_hat) X W_k^T + b,  T_0 = I, T_1 = L_hat, T_k = 2 L_hat T_{k-1} - T_{k-2},
//   L_hat = 2 L / lambda_max - I,
// L the graph Laplacian of the edges without their self-loops (get_laplacian): "sym" I - D^-1/2 A D^-1/2, "rw"
// I - D^-1 A, none D - A, D the out-degree (edges counted at their source, as PyG's). lambda_max as PyG's: given
// (one value, or one per graph of the batch), else 2 x the largest entry of L (so 2 for sym and rw: L_hat = L - I).
// State_dict: "lins.<k>.weight" [out, in] (Glorot, no bias) for k < K, "bias" [out] (zeros at first).
//
//   auto conv = ChebConv::fromPyG({{"in_channels", 16}, {"out_channels", 32}, {"K", 3}}, gen);
//   Variable h = conv->forward(x, edgeIndex);
//   Variable h = conv->forward(x, edgeIndex, {1.9});                 // lambda_max given
//   Variable h = conv->forward(x, edgeIndex, {1.9, 2.0}, b.batch);   // one per graph
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class ChebConv : public MessagePassing {
 public:
  /// normalization: "sym", "rw" or "" (PyG's None).
  ChebConv(int64_t inChannels, int64_t outChannels, int64_t K, Generator& gen, const std::string& normalization = "sym",
           bool bias = true, DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels, out_channels, K, normalization: "sym" | "rw" | null, bias).
  static std::unique_ptr<ChebConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// lambdaMax: empty (PyG's default), one value, or one per graph with batch (int64 [N], each node's graph).
  Variable forward(const Variable& x, const Tensor& edgeIndex, const std::vector<double>& lambdaMax = {},
                   const Tensor& batch = Tensor());
  std::unique_ptr<Module> clone() const override;
  /// L_hat (row = target): the matrix each step multiplies by.
  SparseMatrix scaledLaplacian(const Tensor& edgeIndex, int64_t numNodes, DType dtype,
                               const std::vector<double>& lambdaMax, const Tensor& batch) const;

 private:
  int64_t in_, out_, k_;
  std::string normalization_;
  bool hasBias_;
  DType dtype_;
  std::vector<std::unique_ptr<Linear>> lins_;
  Variable* bias_ = nullptr;
};

}  // namespace gnn
