// DegreeScalerAggregation: PNA's aggregation (Corso et al. 2020, "Principal Neighbourhood Aggregation for Graph
// Nets"), as PyG 2.3.1's torch_geometric.nn.aggr.DegreeScalerAggregation: several aggregators side by side
// (PyG's MultiAggregation, mode "cat"), each result then scaled by every scaler of the in-degree d:
//   identity 1, amplification log(d + 1) / avg_deg_log, attenuation avg_deg_log / log(max(d, 1) + 1),
//   linear d / avg_deg_lin, inverse_linear avg_deg_lin / max(d, 1),
// outputs [N, scalers x aggregators x F] (scaler-major, then aggregator, then feature: PyG's order). avg_deg_lin
// and avg_deg_log come from the training set's in-degree histogram and are state_dict entries under PyG's
// names: buffers, or trained parameters with trainNorm (PyG's train_norm).
//
//   DegreeScalerAggregation aggr({"mean", "max"}, {"identity", "amplification"}, {0, 4, 10, 2});
//   Variable h = aggr.forward(messages, dst, numNodes);         // [numNodes, 2 * 2 * F]
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gnn/nn/aggr/Aggregation.h"

namespace gnn {

class DegreeScalerAggregation : public Aggregation {
 public:
  /// aggregators: names aggregationFromName knows; scalers: the five above; deg: deg[k] = how many training
  /// nodes have in-degree k (PyG's `deg`, PNAConv.get_degree_histogram). std::invalid_argument for an unknown
  /// name or an empty histogram.
  DegreeScalerAggregation(std::vector<std::string> aggregators, std::vector<std::string> scalers,
                          std::vector<int64_t> deg, bool trainNorm = false, DType dtype = DType::F32);

  Variable forward(const Variable& x, const Tensor& index, int64_t dimSize) const override;
  const char* name() const override { return "degree_scaler"; }
  std::unique_ptr<Module> clone() const override;

  /// PyG's init_avg_deg_lin = sum_k k deg[k] / sum_k deg[k] and init_avg_deg_log = sum_k log(k + 1) deg[k] /
  /// sum_k deg[k], with PyG's roundings (float32 sums, then the float32 buffer).
  static double averageDegreeLinear(const std::vector<int64_t>& deg);
  static double averageDegreeLog(const std::vector<int64_t>& deg);
  /// Output columns per input column: aggregators x scalers.
  int64_t widthFactor() const { return static_cast<int64_t>(aggrNames_.size() * scalers_.size()); }
  const std::vector<std::string>& aggregators() const { return aggrNames_; }
  const std::vector<std::string>& scalers() const { return scalers_; }
  /// forward's two halves, for a layer that forms the messages itself (PNAConv: gnn/ops/PnaAggregate.h) or
  /// applies the scalers inside its next product. Per scaler, its factor per node [dimSize, 1] in dtype from the
  /// in-degrees counted in index (undefined for identity); with train_norm, a function of the averages.
  std::vector<Variable> scalerFactors(const Tensor& index, int64_t dimSize, DType dtype) const;
  /// The aggregators' output [N, aggregators x F] times each scaler's factors, side by side (PyG's order).
  static Variable scale(const Variable& aggregated, const std::vector<Variable>& factors);
  Variable& avgDegLin() { return *avgLin_; }
  Variable& avgDegLog() { return *avgLog_; }

 private:
  std::vector<std::string> aggrNames_, scalers_;
  std::vector<int64_t> deg_;
  bool trainNorm_;
  DType dtype_;
  Variable* avgLin_;
  Variable* avgLog_;
};

}  // namespace gnn
