#include "data/FeatureNormalization.h"

#include <algorithm>
#include <cmath>

namespace gnn {

const char* featureNormalizationName(FeatureNormalization n) {
  switch (n) {
    case FeatureNormalization::None: return "none";
    case FeatureNormalization::Row: return "row";
    case FeatureNormalization::Standard: return "standard";
    case FeatureNormalization::Auto: return "auto";
  }
  return "?";
}

std::optional<FeatureNormalization> parseFeatureNormalization(std::string_view name) {
  for (FeatureNormalization n : {FeatureNormalization::None, FeatureNormalization::Row, FeatureNormalization::Standard,
                                 FeatureNormalization::Auto})
    if (name == featureNormalizationName(n)) return n;
  return std::nullopt;
}

// PyG's NormalizeFeatures (torch_geometric/transforms/normalize_features.py):
//   x = x - x.min();  x /= x.sum(dim=-1, keepdim=True).clamp(min=1)
// The minimum is the whole matrix's: features with negative values are all shifted by the same amount to be
// non-negative before rows are summed, and a row whose sum is below 1 (an all-zero row among them) is divided by 1,
// i.e. left as it is, so no row is divided by zero or by a sum near it. Bag-of-words counts (minimum 0, every
// non-empty row summing to at least 1) are neither shifted nor clamped: their rows sum to 1 as in Kipf & Welling.
void normalizeRows(Tensor& features) {
  auto x = features.matrix<float>();
  // Subtracting 0 changes no bits, so the common case skips the pass.
  if (float lowest = x.minCoeff(); lowest != 0) x.array() -= lowest;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    float s = x.row(i).sum();
    if (s > 1) x.row(i) /= s;
  }
}

// Per-feature standardisation with the training nodes' statistics (each counted once, in node order, in double;
// the population std), applied to every node. A feature constant over the training nodes keeps its scale (std 1):
// the constant is detected exactly rather than from a rounded variance, whose tiny non-zero remainder would
// multiply the other nodes' differences from it by ~1e16.
void standardizeFeatures(Tensor& features, const Tensor& trainMask, std::vector<double>& mean,
                         std::vector<double>& sd) {
  auto x = features.matrix<float>();
  const Eigen::Index n = x.rows(), f = x.cols();
  const uint8_t* train = trainMask.data<uint8_t>();
  std::vector<double> sum(static_cast<size_t>(f), 0.0);
  std::vector<float> lo(static_cast<size_t>(f), INFINITY), hi(static_cast<size_t>(f), -INFINITY);
  int64_t count = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!train[i]) continue;
    ++count;
    for (Eigen::Index j = 0; j < f; ++j) {
      const float v = x(i, j);
      sum[j] += v;
      lo[j] = std::min(lo[j], v);
      hi[j] = std::max(hi[j], v);
    }
  }
  mean.assign(static_cast<size_t>(f), 0.0);
  sd.assign(static_cast<size_t>(f), 1.0);
  std::vector<double> sq(static_cast<size_t>(f), 0.0);
  for (Eigen::Index j = 0; j < f; ++j) mean[j] = lo[j] == hi[j] ? lo[j] : sum[j] / static_cast<double>(count);
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!train[i]) continue;
    for (Eigen::Index j = 0; j < f; ++j) {
      const double d = x(i, j) - mean[j];
      sq[j] += d * d;
    }
  }
  for (Eigen::Index j = 0; j < f; ++j) {
    const double s = lo[j] == hi[j] ? 0.0 : std::sqrt(sq[j] / static_cast<double>(count));
    sd[j] = s > 0 ? s : 1.0;
  }
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < f; ++j) x(i, j) = static_cast<float>((x(i, j) - mean[j]) / sd[j]);
}
}  // namespace gnn
