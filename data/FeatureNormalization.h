// FeatureNormalization: how the OGB readers (OgbNodeDataset, OgbHeteroDataset) rescale float node features, and
// the two rescalings themselves, applied in place to a [N, F] float32 matrix.
//
//   normalizeRows(x);                                  // PyG's NormalizeFeatures
//   standardizeFeatures(x, trainMask, mean, std);      // per feature, with the training nodes' statistics
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "gnn/tensor/Tensor.h"

namespace gnn {

/// How the loader rescales node features.
enum class FeatureNormalization {
  None,      ///< as read
  Row,       ///< PyG's NormalizeFeatures: shifted by the global minimum, rows divided by max(row sum, 1)
  Standard,  ///< per feature (x - mean) / std, mean and std over the training nodes (std 0 -> 1)
  Auto,      ///< Row when every feature is >= 0 (bag-of-words, TF-IDF), else Standard (real-valued embeddings)
};

/// "none", "row", "standard", "auto".
const char* featureNormalizationName(FeatureNormalization n);
/// The value of a name above; nullopt for any other text.
std::optional<FeatureNormalization> parseFeatureNormalization(std::string_view name);

/// PyG's NormalizeFeatures on float32 [N, F] features, in place.
void normalizeRows(Tensor& features);
/// Per-feature standardisation with the statistics of the nodes whose uint8 trainMask [N] is set, in place; mean
/// and sd receive each feature's training mean and divisor. At least one training node.
void standardizeFeatures(Tensor& features, const Tensor& trainMask, std::vector<double>& mean,
                         std::vector<double>& sd);

}  // namespace gnn
