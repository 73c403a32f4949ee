#include "gnn/nn/norm/Normalization.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "gnn/nn/norm/DiffGroupNorm.h"
#include "gnn/nn/norm/GraphNorm.h"
#include "gnn/nn/norm/PairNorm.h"
#include "gnn/nn/norm/InstanceNorm.h"
#include "gnn/nn/norm/PyGBatchNorm.h"
#include "gnn/nn/norm/PyGLayerNorm.h"
#include "gnn/ops/Ops.h"

namespace gnn {

namespace {
// PyG's normalize_string: lower case, without '-', '_' and ' '.
std::string normalizedName(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != '-' && c != '_' && c != ' ') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// PyG's resolver matches a class's normalised name with or without the base's ("norm"): "batchnorm" or "batch".
bool matches(const std::string& query, const std::string& cls) {
  return query == cls || query == cls.substr(0, cls.size() - 4);
}
}  // namespace

Tensor normSegments(const NormBatch& b, int64_t rows) {
  if (!b.batch.defined()) return Tensor::fromVector<int64_t>({0, rows});
  GNN_CHECK_ARG(b.batch.dtype() == DType::I64 && b.batch.numel() == rows, "normalization: batch must be int64 with ",
                "one graph id per row (", rows, " rows), got ", dtypeName(b.batch.dtype()), " ",
                shapeString(b.batch.shape()));
  GNN_CHECK_ARG(b.numGraphs >= 1, "normalization: numGraphs must be >= 1, got ", b.numGraphs);
  return sortedIndexToPtr(b.batch, b.numGraphs);
}

bool isPyGBatchNorm(const nlohmann::json& name) {
  return name.is_string() && matches(normalizedName(name.get<std::string>()), "batchnorm");
}

std::unique_ptr<Normalization> normalizationFromPyG(const nlohmann::json& name, int64_t channels,
                                                    const nlohmann::json& kwargs, Generator& gen, DType dtype) {
  // (gen: DiffGroupNorm's Linear; the other norms start from fixed values, ones and zeros.)
  if (name.is_null()) return nullptr;
  GNN_CHECK_ARG(name.is_string(), "normalization: expected a PyG norm name (a string) or null, got ", name.dump());
  GNN_CHECK_ARG(kwargs.is_null() || kwargs.is_object(), "normalization: norm_kwargs must be a JSON object, got ",
                kwargs.dump());
  GNN_CHECK_ARG(!kwargs.is_object() || !kwargs.contains("in_channels"), "normalization: norm_kwargs must not give ",
                "in_channels (the model passes its width, ", channels, ")");
  nlohmann::json args = kwargs.is_object() ? kwargs : nlohmann::json::object();
  args["in_channels"] = channels;
  const std::string q = normalizedName(name.get<std::string>());
  if (matches(q, "batchnorm")) return PyGBatchNorm::fromPyG(args, dtype);
  if (matches(q, "layernorm")) return PyGLayerNorm::fromPyG(args, dtype);
  if (matches(q, "graphnorm")) return GraphNorm::fromPyG(args, dtype);
  if (matches(q, "instancenorm")) return InstanceNorm::fromPyG(args, dtype);
  if (matches(q, "pairnorm")) return PairNorm::fromPyG(args);
  if (matches(q, "diffgroupnorm")) return DiffGroupNorm::fromPyG(args, gen, dtype);
  // PyG 2.3.1's other norms (torch_geometric.nn.norm): known by name, not offered (their call signatures differ
  // from a BasicGNN's norm(x)).
  for (const char* other : {"heterobatchnorm", "heterolayernorm", "graphsizenorm", "meansubtractionnorm",
                            "messagenorm"})
    if (matches(q, other))
      invalidArgument("normalization: PyG's norm '", name.get<std::string>(), "' is not offered here (offered: ",
                      "BatchNorm, LayerNorm, GraphNorm, InstanceNorm, PairNorm, DiffGroupNorm)");
  invalidArgument("normalization: could not resolve '", name.get<std::string>(),
                  "' among PyG's norms offered here: BatchNorm (batch_norm), LayerNorm (layer_norm), GraphNorm "
                  "(graph_norm), InstanceNorm (instance_norm), PairNorm (pair_norm), DiffGroupNorm (diff_group_norm)");
}

}  // namespace gnn
