#include "models/HeteroRGCN.h"

#include <set>
#include <utility>

#include "gnn/autograd/Block.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Check.h"

namespace gnn {

HeteroRGCN::HeteroRGCN(HeteroRGCNOptions options, Generator& gen) : opt_(std::move(options)) {
  GNN_CHECK_ARG(!opt_.nodeTypes.empty(), "HeteroRGCN: no node type");
  GNN_CHECK_ARG(opt_.layers >= 1 && opt_.hidden >= 1 && opt_.outChannels >= 1 && opt_.numRelations >= 1,
                "HeteroRGCN: layers, hidden, outChannels and numRelations must be positive, got ", opt_.layers, ", ",
                opt_.hidden, ", ", opt_.outChannels, ", ", opt_.numRelations);
  GNN_CHECK_ARG(opt_.targetType >= -1 && opt_.targetType < static_cast<int64_t>(opt_.nodeTypes.size()),
                "HeteroRGCN: target type ", opt_.targetType, " is not one of the ", opt_.nodeTypes.size(),
                " node types");
  std::set<int64_t> widths;
  for (const HeteroRGCNNodeType& t : opt_.nodeTypes)
    if (t.features > 0) widths.insert(t.features);
  project_ = widths.size() > 1;
  in_ = widths.size() == 1 ? *widths.begin() : opt_.hidden;
  for (const HeteroRGCNNodeType& t : opt_.nodeTypes) {
    // A type without nodes has no rows to give: neither an embedding (torch's would be [0, in]) nor a Linear.
    const bool embedded = t.features <= 0 && t.numNodes > 0;
    embs_.push_back(embedded ? std::make_unique<Embedding>(t.numNodes, in_, gen) : nullptr);
    if (embs_.back()) registerModule("emb." + t.name, *embs_.back());
  }
  for (const HeteroRGCNNodeType& t : opt_.nodeTypes) {
    const bool projected = project_ && t.features > 0;
    lins_.push_back(projected ? std::make_unique<Linear>(t.features, opt_.hidden, gen) : nullptr);
    if (lins_.back()) registerModule("lin." + t.name, *lins_.back());
  }
  for (int64_t l = 0; l < opt_.layers; ++l) {
    const int64_t in = l == 0 ? in_ : opt_.hidden, out = l + 1 == opt_.layers ? opt_.outChannels : opt_.hidden;
    convs_.push_back(std::make_unique<RGCNConv>(in, out, opt_.numRelations, gen, opt_.numBases));
    registerModule("convs." + std::to_string(l), *convs_.back());
  }
}

std::unique_ptr<Module> HeteroRGCN::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<HeteroRGCN>(opt_, unused));
}

Variable HeteroRGCN::featuredRows(size_t t, const Tensor& x, int64_t rows) {
  const HeteroRGCNNodeType& type = opt_.nodeTypes[t];
  GNN_CHECK_ARG(x.defined() && x.rank() == 2 && x.dim(0) == rows && x.dim(1) == type.features,
                "HeteroRGCN: node type '", type.name, "' needs features [", rows, ", ", type.features, "], got ",
                x.defined() ? shapeString(x.shape()) : std::string("none"));
  return lins_[t] ? lins_[t]->forward(Variable(x)) : Variable(x);
}

Variable HeteroRGCN::inputRows(const std::vector<Tensor>& features) {
  GNN_CHECK_ARG(features.size() == opt_.nodeTypes.size(), "HeteroRGCN: ", features.size(),
                " feature tensors for ", opt_.nodeTypes.size(), " node types");
  std::vector<Variable> parts;
  for (size_t t = 0; t < opt_.nodeTypes.size(); ++t) {
    const HeteroRGCNNodeType& type = opt_.nodeTypes[t];
    if (type.numNodes == 0) continue;
    if (embs_[t]) {
      parts.push_back(embs_[t]->weight());  // every row, in node order: the lookup of 0 .. N-1 without the gather
      continue;
    }
    parts.push_back(featuredRows(t, features[t], type.numNodes));
  }
  return concatRows(parts);
}

Variable HeteroRGCN::batchInputRows(const std::vector<Tensor>& features, const std::vector<Tensor>& nodeIds,
                                    std::vector<int64_t>& rows) {
  GNN_CHECK_ARG(features.size() == opt_.nodeTypes.size() && nodeIds.size() == opt_.nodeTypes.size(), "HeteroRGCN: ",
                features.size(), " feature tensors and ", nodeIds.size(), " node id tensors for ",
                opt_.nodeTypes.size(), " node types");
  std::vector<Variable> parts;
  for (size_t t = 0; t < opt_.nodeTypes.size(); ++t) {
    const HeteroRGCNNodeType& type = opt_.nodeTypes[t];
    if (type.features > 0) {
      rows.push_back(features[t].defined() ? features[t].dim(0) : 0);
      parts.push_back(featuredRows(t, features[t], rows.back()));
      continue;
    }
    const Tensor& ids = nodeIds[t];
    GNN_CHECK_ARG(ids.defined() && ids.dtype() == DType::I64 && ids.rank() == 1, "HeteroRGCN: node type '",
                  type.name, "' has no features and needs its rows' node ids, int64 [rows]");
    rows.push_back(ids.dim(0));
    // A type without nodes has no embedding; the batch still gives it its padding row, which no real row reads.
    parts.push_back(embs_[t] ? embs_[t]->forward(ids) : Variable(Tensor::zeros({rows.back(), in_})));
  }
  return concatRows(parts);
}

Variable HeteroRGCN::forward(const std::vector<Tensor>& features, const Tensor& edgeIndex, const Tensor& edgeType) {
  Variable h;
  {
    BlockScope scope("input");
    h = inputRows(features);
  }
  std::vector<int64_t> rows;
  for (const HeteroRGCNNodeType& t : opt_.nodeTypes) rows.push_back(t.numNodes);
  const int64_t targetRows = opt_.targetType >= 0 ? rows[static_cast<size_t>(opt_.targetType)] : 0;
  return layers(h, rows, edgeIndex, edgeType, targetRows);
}

Variable HeteroRGCN::forward(const std::vector<Tensor>& features, const std::vector<Tensor>& nodeIds,
                             const Tensor& edgeIndex, const Tensor& edgeType, int64_t targetRows) {
  Variable h;
  std::vector<int64_t> rows;
  {
    BlockScope scope("input");
    h = batchInputRows(features, nodeIds, rows);
  }
  GNN_CHECK_ARG(opt_.targetType < 0 || (targetRows >= 0 && targetRows <= rows[static_cast<size_t>(opt_.targetType)]),
                "HeteroRGCN: ", targetRows, " target rows asked of the batch's ",
                opt_.targetType < 0 ? 0 : rows[static_cast<size_t>(opt_.targetType)]);
  return layers(h, rows, edgeIndex, edgeType, targetRows);
}

Variable HeteroRGCN::layers(Variable h, const std::vector<int64_t>& rows, const Tensor& edgeIndex,
                            const Tensor& edgeType, int64_t targetRows) {
  for (size_t l = 0; l < convs_.size(); ++l) {
    BlockScope scope("layers/" + std::to_string(l));
    h = layer(l, h, rows, edgeIndex, edgeType, targetRows);
  }
  return h;
}

Variable HeteroRGCN::layer(size_t l, const Variable& h, const std::vector<int64_t>& rows, const Tensor& edgeIndex,
                           const Tensor& edgeType, int64_t targetRows) {
  GNN_CHECK_ARG(l < convs_.size(), "HeteroRGCN: layer ", l, " of ", convs_.size());
  if (opt_.targetType >= 0 && l + 1 == convs_.size()) {
    // Rows of the typed graph are type after type: the target's start after the types before it.
    int64_t first = 0;
    for (int64_t t = 0; t < opt_.targetType; ++t) first += rows[static_cast<size_t>(t)];
    return lastLayerOnTarget(h, first, targetRows, edgeIndex, edgeType);
  }
  Variable out = convs_[l]->forward(h, edgeIndex, edgeType);
  return l + 1 < convs_.size() ? reluDropout(out, opt_.dropout, isTraining()) : out;
}

Variable HeteroRGCN::lastLayerOnTarget(const Variable& h, int64_t first, int64_t count, const Tensor& edgeIndex,
                                       const Tensor& edgeType) {
  const int64_t E = edgeIndex.dim(1);
  const Tensor srcT = edgeRow(edgeIndex, 0), dstT = edgeRow(edgeIndex, 1);
  const int64_t *src = srcT.data<int64_t>(), *dst = dstT.data<int64_t>(), *type = edgeType.data<int64_t>();
  std::vector<int64_t> sources, targets, types;
  for (int64_t e = 0; e < E; ++e) {
    if (dst[e] < first || dst[e] >= first + count) continue;
    sources.push_back(src[e]);
    targets.push_back(dst[e] - first);
    types.push_back(type[e]);
  }
  const int64_t kept = static_cast<int64_t>(sources.size());
  sources.insert(sources.end(), targets.begin(), targets.end());
  const Tensor edges = kept > 0 ? Tensor::fromVector(sources, {2, kept}) : Tensor::zeros({2, 0}, DType::I64);
  const Tensor edgeTypes = kept > 0 ? Tensor::fromVector(types) : Tensor::zeros({0}, DType::I64);
  return convs_.back()->forward(h, sliceRows(h, first, first + count), edges, edgeTypes);
}

}  // namespace gnn
