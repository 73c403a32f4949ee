// MultiAggregation: several aggregations of the same messages combined, as PyG 2.3.1's MultiAggregation (what
// `aggr=["mean", "max"]` builds): mode "cat" (side by side, [N, K F]), "proj" (concatenated, then
// Linear(sum of in_channels, out_channels): mode_kwargs in_channels, out_channels, bias), "sum" or "mean" (the K
// results added or averaged elementwise). State_dict: "aggrs.<k>.*" (learnt temperatures), "lin.*" (proj).
// PyG's max, min, logsumexp, std, var and attn modes are refused by name.
//
//   auto multi = aggregationFromPyG({{"class", "MultiAggregation"},
//                                    {"args", {{"aggrs", {"mean", "max", "std"}}, {"mode", "cat"}}}}, gen);
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gnn/nn/Linear.h"
#include "gnn/nn/aggr/Aggregation.h"

namespace gnn {

class MultiAggregation : public Aggregation {
 public:
  /// modeKwargs: {"in_channels": int or list, "out_channels": int, "bias": bool} for proj.
  MultiAggregation(std::vector<std::unique_ptr<Aggregation>> aggrs, const std::string& mode,
                   const nlohmann::json& modeKwargs, Generator& gen, DType dtype = DType::F32);
  Variable forward(const Variable& x, const Tensor& index, int64_t dimSize) const override;
  const char* name() const override { return "multi"; }
  nlohmann::json spec() const override;
  std::unique_ptr<Module> clone() const override;
  /// The output width for messages of width `in` (PyG's get_out_channels).
  int64_t outChannels(int64_t in) const;

 private:
  std::vector<std::unique_ptr<Aggregation>> aggrs_;
  std::string mode_;
  nlohmann::json modeKwargs_;
  DType dtype_;
  std::unique_ptr<Linear> lin_;  // proj
};

}  // namespace gnn
