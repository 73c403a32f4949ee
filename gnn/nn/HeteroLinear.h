// HeteroLinear: PyG 2.3.1's HeteroLinear (torch_geometric/nn/dense/linear.py), a Linear per type: row k of x goes
// through the Linear of its type, x'_k = x_k W_t^T + b_t with t = type_vec[k]. PyG's Linear's initialisation
// (torch's: U(+-1/sqrt(in)) for weight and bias). State_dict "lins.<t>.weight" [out, in], "lins.<t>.bias" [out]:
// PyG's keys without pyg_lib (as on the machine its references come from); PyG with pyg_lib holds the same
// numbers as "weight" [num_types, in, out] (W_t transposed) and "bias" [num_types, out], which are not read.
//
//   auto lin = HeteroLinear::fromPyG({{"in_channels", 16}, {"out_channels", 32}, {"num_types", 3}}, gen);
//   Variable h = lin->forward(x, typeVec);               // x [N, 16], typeVec int64 [N] -> [N, 32]
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "gnn/nn/Linear.h"

namespace gnn {

class HeteroLinear : public Module {
 public:
  HeteroLinear(int64_t inChannels, int64_t outChannels, int64_t numTypes, Generator& gen, bool isSorted = false,
               bool bias = true, DType dtype = DType::F32);
  /// From PyG's keyword arguments (in_channels as an int, out_channels, num_types, is_sorted, bias).
  static std::unique_ptr<HeteroLinear> fromPyG(const nlohmann::json& args, Generator& gen, DType dtype = DType::F32);

  /// x [N, in], typeVec int64 [N] (values < num_types) -> [N, out].
  Variable forward(const Variable& x, const Tensor& typeVec) const;
  std::unique_ptr<Module> clone() const override;

 private:
  int64_t in_, out_, types_;
  bool isSorted_, bias_;
  DType dtype_;
  std::vector<std::unique_ptr<Linear>> lins_;
};

}  // namespace gnn
