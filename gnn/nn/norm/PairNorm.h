// PairNorm: the normalisation of Zhao & Akoglu (ICLR 2020) against over-smoothing, as PyG 2.3.1's PairNorm:
// per graph, the rows centred on the graph's mean, then scaled to the graph's mean squared row norm,
//   x' = scale (x - mean_g) / sqrt(eps + mean_g ||x - mean_g||^2),
// or each row to its own norm (scale_individually: scale (x - mean_g) / (eps + ||x - mean_g||)). No parameters.
// Padding rows (b.nodeMask) are normalised but never counted in a graph's statistics. PyG's normalization_resolver
// passes the width first, which PairNorm takes as its scale: a BasicGNN with norm="pair_norm" scales to its
// hidden width, and so does normalizationFromPyG here (PyGArgs' "in_channels" is that scale unless "scale" is
// given).
//
//   PairNorm norm(1.0);
//   Variable h = norm.forward(x, {b.batch, b.numGraphs, b.nodesMask});
#pragma once
#include <memory>

#include "gnn/nn/norm/Normalization.h"

namespace gnn {

class PairNorm : public Normalization {
 public:
  explicit PairNorm(double scale = 1.0, bool scaleIndividually = false, double eps = 1e-5);
  /// From PyG's keyword arguments (scale, scale_individually, eps; in_channels as the scale, see above).
  static std::unique_ptr<PairNorm> fromPyG(const nlohmann::json& args);
  Variable forward(const Variable& x, const NormBatch& b) override;
  std::unique_ptr<Module> clone() const override;

 private:
  double scale_;
  bool individually_;
  double eps_;
};

}  // namespace gnn
