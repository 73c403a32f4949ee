// FiLMConv: the feature-wise linear modulation layer of Brockschmidt (ICML 2020, GNN-FiLM) as PyG 2.3.1's FiLMConv,
//   x'_i = act(gamma_skip,i * W_skip x_i + beta_skip,i)
//          + sum_r aggr_{j -> i, type r} act(gamma_r,i * W_r x_j + beta_r,i),
//   (beta_r,i, gamma_r,i) = film_r(x_i)  (the first out_channels columns beta, the next gamma),
// aggr "mean" by default, act relu by default (any of activationFromPyG's names, or null), film_r a Linear(in,
// 2 out) (the skip one without bias) or, given nn (a PyG MLP spec), one MLP per relation and one for the skip.
// With num_relations > 1, forward takes each edge's type (int64 [E], values < num_relations). State_dict:
// "lins.<r>.weight", "films.<r>.*", "lin_skip.weight", "film_skip.*".
//
//   auto conv = FiLMConv::fromPyG({{"in_channels", 16}, {"out_channels", 32}, {"num_relations", 3}}, gen);
//   Variable h = conv->forward(x, edgeIndex, edgeType);
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "gnn/nn/Activation.h"
#include "gnn/nn/conv/MessagePassing.h"

namespace gnn {

class FiLMConv : public MessagePassing {
 public:
  /// nn: null (Linear films) or a PyG MLP spec {"class": "MLP", "args": {...}} mapping in -> 2 out.
  FiLMConv(int64_t inChannels, int64_t outChannels, Generator& gen, int64_t numRelations = 1,
           const nlohmann::json& nn = nullptr, const nlohmann::json& act = "relu", const nlohmann::json& aggr = "mean",
           DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels as an int, out_channels, num_relations, nn, act, aggr).
  static std::unique_ptr<FiLMConv> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in], edgeIndex [2, E], edgeType int64 [E] (needed with num_relations > 1) -> [N, out].
  Variable forward(const Variable& x, const Tensor& edgeIndex, const Tensor& edgeType = Tensor());
  std::unique_ptr<Module> clone() const override;

 private:
  /// film(x) through the Linear or the MLP.
  static Variable film(Module& m, const Variable& x);
  std::unique_ptr<Module> makeFilm(Generator& gen, bool bias) const;

  int64_t in_, out_, relations_;
  nlohmann::json nnSpec_, actName_;
  Activation act_;
  DType dtype_;
  std::vector<std::unique_ptr<Module>> lins_, films_;
  std::unique_ptr<Module> linSkip_, filmSkip_;
};

}  // namespace gnn
