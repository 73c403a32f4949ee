// TopKPooling and SAGPooling: PyG 2.3.1's top-k pooling layers (Gao & Ji, ICML 2019, "Graph U-Nets"; Cangea et
// al. 2018; Lee et al., ICML 2019, "Self-Attention Graph Pooling"), keeping each graph's ceil(ratio n) nodes of
// highest score (gnn/nn/pool/TopKSelection.h):
//   TopKPooling  score = tanh(x . w / ||w||)                         state_dict "weight" [1, in_channels]
//   SAGPooling   score = tanh(GNN(x, edge_index)), GNN a GraphConv (or any convolution of ConvRegistry) from
//                in_channels to 1                                   state_dict "gnn.*"
// x' = x[kept] * score[kept] * multiplier. PyG's min_score (a softmax threshold instead of a ratio) is not offered;
// nonlinearity is tanh (or any of activationFromPyG's names). fixedSize keeps a fixed-size batch's shape.
//
//   auto pool = TopKPooling::fromPyG({{"in_channels", 64}, {"ratio", 0.5}}, gen);
//   PooledGraph p = pool->forward(x, b.edgeIndex, Variable(), b.batch, b.numGraphs);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "gnn/nn/Activation.h"
#include "gnn/nn/Module.h"
#include "gnn/nn/pool/TopKSelection.h"
#include "gnn/system/Random.h"

namespace gnn {

class TopKPooling : public Module {
 public:
  /// args: PyG's keyword arguments (in_channels, ratio, min_score (null only), multiplier, nonlinearity).
  TopKPooling(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);
  static std::unique_ptr<TopKPooling> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);
  PooledGraph forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr = Variable(),
                      const Tensor& batch = Tensor(), int64_t numGraphs = 1, bool fixedSize = false,
                      const Tensor& realNodes = Tensor());
  std::unique_ptr<Module> clone() const override;

 private:
  nlohmann::json args_;
  DType dtype_;
  int64_t in_;
  double ratio_, multiplier_;
  Activation act_;
  Variable* weight_;
};

class SAGPooling : public Module {
 public:
  /// args: PyG's keyword arguments (in_channels, ratio, GNN: a ConvRegistry class name (GraphConv), min_score (null
  /// only), multiplier, nonlinearity, and the GNN's own keyword arguments).
  SAGPooling(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);
  static std::unique_ptr<SAGPooling> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);
  PooledGraph forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr = Variable(),
                      const Tensor& batch = Tensor(), int64_t numGraphs = 1, bool fixedSize = false,
                      const Tensor& realNodes = Tensor());
  std::unique_ptr<Module> clone() const override;

 private:
  nlohmann::json args_;
  DType dtype_;
  double ratio_, multiplier_;
  std::string gnnClass_;
  Activation act_;
  std::unique_ptr<Module> gnn_;
};

}  // namespace gnn
