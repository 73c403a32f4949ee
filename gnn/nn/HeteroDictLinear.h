// HeteroDictLinear: PyG 2.3.1's HeteroDictLinear (torch_geometric/nn/dense/linear.py), a Linear per node type over
// a dictionary of features: x'_t = x_t W_t^T + b_t for each type t given. in_channels is one width for every type
// of `types`, or a width per type ({"paper": 128, "author": 64}); PyG's Linear initialisation (torch's). State_dict
// "lins.<type>.weight" [out, in_t], "lins.<type>.bias" [out], in the order of `types` (of in_channels' keys, sorted
// by name as JSON objects are here, where PyG keeps the dictionary's order: the keys are the same).
//
//   auto lin = HeteroDictLinear::fromPyG({{"in_channels", {{"paper", 128}, {"author", 64}}}, {"out_channels", 32}},
//                                        gen);
//   std::map<std::string, Variable> h = lin->forward({{"paper", xPaper}, {"author", xAuthor}});
#pragma once
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gnn/nn/Linear.h"

namespace gnn {

class HeteroDictLinear : public Module {
 public:
  /// inChannels: each type and its width, in the order the Linears are registered.
  HeteroDictLinear(std::vector<std::pair<std::string, int64_t>> inChannels, int64_t outChannels, Generator& gen,
                   bool bias = true, DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels an int with types, or a dict type -> int; out_channels; types;
  /// bias).
  static std::unique_ptr<HeteroDictLinear> fromPyG(const nlohmann::json& args, Generator& gen,
                                                   DType dtype = DType::F32);

  /// Each given type's features [N_t, in_t] through its Linear -> [N_t, out]; a type the layer lacks is an error.
  std::map<std::string, Variable> forward(const std::map<std::string, Variable>& xDict) const;
  const std::vector<std::pair<std::string, int64_t>>& inChannels() const { return in_; }
  std::unique_ptr<Module> clone() const override;

 private:
  std::vector<std::pair<std::string, int64_t>> in_;
  int64_t out_;
  bool bias_;
  DType dtype_;
  std::map<std::string, std::unique_ptr<Linear>> lins_;
};

}  // namespace gnn
