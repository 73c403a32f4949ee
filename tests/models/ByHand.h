// The library's models written out op by op from their named parameters, as they computed before they were
// made of blocks: the references that model tests compare with bit for bit.
#pragma once
#include <map>
#include <string>

#include "gnn/nn/Module.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/nn/pool/GlobalPooling.h"
#include "gnn/ops/Ops.h"
#include "loaders/Batch.h"
#include "models/BondEncoder.h"
#include "models/GraphModel.h"

namespace gnn::test {

inline std::map<std::string, Variable> paramsOf(const Module& m) {
  std::map<std::string, Variable> out;
  for (const auto& [name, v] : m.namedParameters()) out[name] = v;
  return out;
}

/// OGB's categorical encoder: the sum of one table row per column (offsets into the stacked table).
inline Variable categorical(const Variable& table, const std::vector<int64_t>& dims, const Tensor& x) {
  Tensor idx = x.clone();
  int64_t* p = idx.data<int64_t>();
  for (int64_t i = 0; i < x.dim(0); ++i) {
    int64_t offset = 0;
    for (size_t c = 0; c < dims.size(); ++c) {
      p[i * x.dim(1) + static_cast<int64_t>(c)] += offset;
      offset += dims[c];
    }
  }
  return embeddingBag(table, idx);
}

/// GINConv with edge features: MLP(h + sum ReLU(h_j + e_ji)) through the fused op with its self term.
inline Variable ginConv(std::map<std::string, Variable>& P, const std::string& prefix, const Variable& h,
                        const Batch& b) {
  Variable e = categorical(P[prefix + "bond_encoder.weight"], BondEncoder::featureDims(), b.edgeAttr);
  Variable z = reluMessageSum(h, e, b.edgeIndex, h.dim(0), 1.0);
  z = linear(z, P[prefix + "mlp.0.weight"], P[prefix + "mlp.0.bias"]);
  z = layerNormRelu(z, P[prefix + "mlp.1.weight"], P[prefix + "mlp.1.bias"]);
  return linear(z, P[prefix + "mlp.3.weight"], P[prefix + "mlp.3.bias"]);
}

/// GCNConv: D^-1/2 (A + I) D^-1/2 (h W^T) + b, W PyG's lin.weight [out, in].
inline Variable gcnConv(std::map<std::string, Variable>& P, const std::string& prefix, const Variable& h,
                        const Tensor& edgeIndex) {
  SparseMatrix a = GCNConv::normalizedAdjacency(edgeIndex, h.dim(0), true, true, h.dtype());
  return add(spmm(a, linear(h, P[prefix + "lin.weight"])), P[prefix + "bias"]);
}

/// GIN (atom and bond encoders) or GCN (atom encoder) with the model's options: encoder, layers with dropout
/// drawn from the current context, mean pooling, head, padding rows zeroed.
inline Variable graphModel(const GraphModel& model, const Batch& b, bool gin) {
  auto P = paramsOf(model);
  const GraphModelOptions& o = model.options();
  Variable h = categorical(P["atom_encoder.weight"], AtomEncoder::featureDims(), b.x);
  for (int64_t l = 0; l < o.layers; ++l) {
    const std::string conv = "convs." + std::to_string(l) + ".", norm = "norms." + std::to_string(l) + ".";
    const bool last = l + 1 == o.layers;
    if (gin) {
      Variable c = ginConv(P, conv, h, b);
      h = last ? layerNorm(c, P[norm + "weight"], P[norm + "bias"]) : layerNormRelu(c, P[norm + "weight"], P[norm + "bias"]);
    } else {
      h = gcnConv(P, conv, h, b.edgeIndex);
      if (!last) h = relu(h);
    }
    h = dropout(h, o.dropout, model.isTraining());
  }
  Variable out = linear(globalPool(o.pool, h, b.ptr, b.graphsMask), P["head.weight"], P["head.bias"]);
  return mul(out, Variable(maskColumn(b.graphsMask, out.dtype())));
}

}  // namespace gnn::test
