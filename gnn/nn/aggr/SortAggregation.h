// SortAggregation: the sort pooling of Zhang et al. (AAAI 2018, DGCNN) as PyG 2.3.1's SortAggregation: each
// destination's messages sorted by their last channel, largest first, the first k kept (fewer padded with
// zeros) -> [dimSize, k F]. The index must be sorted (a batch vector), as PyG asserts; ties in the last channel
// keep the messages' order. The gradient flows to the kept messages.
//
//   SortAggregation readout(30);
//   Variable g = readout.forward(h, batch.batch, batch.numGraphs);     // [numGraphs, 30 F]
#pragma once
#include "gnn/nn/aggr/Aggregation.h"

namespace gnn {

class SortAggregation : public Aggregation {
 public:
  explicit SortAggregation(int64_t k);
  Variable forward(const Variable& x, const Tensor& index, int64_t dimSize) const override;
  const char* name() const override { return "sort"; }
  nlohmann::json spec() const override { return {{"class", "SortAggregation"}, {"args", {{"k", k_}}}}; }
  std::unique_ptr<Module> clone() const override { return std::make_unique<SortAggregation>(k_); }

 private:
  int64_t k_;
};

}  // namespace gnn
