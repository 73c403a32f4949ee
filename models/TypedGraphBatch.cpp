#include "models/TypedGraphBatch.h"

#include <cstring>
#include <string>

#include "gnn/system/Check.h"

namespace gnn {

int64_t TypedBatchLayout::numNodes() const { return offset(rows.size()); }

int64_t TypedBatchLayout::offset(size_t t) const {
  int64_t n = 0;
  for (size_t u = 0; u < t; ++u) n += rows[u];
  return n;
}

namespace {

// Elements of x: every featured type's rows x width.
int64_t featureElements(const TypedBatchLayout& layout) {
  int64_t n = 0;
  for (size_t t = 0; t < layout.rows.size(); ++t) n += layout.rows[t] * layout.widths[t];
  return n;
}

// The featured types' rows flattened into one float vector, type after type (a view when one type has them).
Tensor flattenFeatures(const TypedBatchLayout& layout, const std::vector<Tensor>& features) {
  std::vector<size_t> featured;
  for (size_t t = 0; t < layout.rows.size(); ++t) {
    const Tensor& f = features[t];
    if (layout.widths[t] <= 0 || layout.rows[t] == 0) continue;
    GNN_CHECK_ARG(f.defined() && f.dtype() == DType::F32 && f.rank() == 2 && f.dim(0) == layout.rows[t] &&
                      f.dim(1) == layout.widths[t],
                  "typedGraphBatch: node type ", t, " needs float features [", layout.rows[t], ", ", layout.widths[t],
                  "], got ", f.defined() ? shapeString(f.shape()) : std::string("none"));
    featured.push_back(t);
  }
  if (featured.empty()) return Tensor();
  if (featured.size() == 1) return features[featured[0]].reshape({featureElements(layout)});
  Tensor x({featureElements(layout)}, DType::F32);
  auto* out = static_cast<unsigned char*>(x.raw());
  for (size_t t : featured) {
    std::memcpy(out, features[t].raw(), features[t].nbytes());
    out += features[t].nbytes();
  }
  return x;
}

}  // namespace

Batch typedGraphBatch(const TypedBatchLayout& layout, const std::vector<Tensor>& features, const Tensor& edgeIndex,
                      const Tensor& edgeType, const Tensor& y, const Tensor& trainMask) {
  GNN_CHECK_ARG(layout.widths.size() == layout.rows.size() && features.size() == layout.rows.size(),
                "typedGraphBatch: ", features.size(), " feature tensors and ", layout.widths.size(), " widths for ",
                layout.rows.size(), " node types");
  GNN_CHECK_ARG(edgeIndex.defined() && edgeIndex.rank() == 2 && edgeIndex.dim(0) == 2 &&
                    edgeIndex.dtype() == DType::I64 && edgeType.defined() && edgeType.dtype() == DType::I64 &&
                    edgeType.numel() == edgeIndex.dim(1),
                "typedGraphBatch: the edges must be int64 [2, E] with int64 [E] relations");
  GNN_CHECK_ARG(y.defined() && y.numel() == layout.targetRows && trainMask.defined() &&
                    trainMask.dtype() == DType::U8 && trainMask.numel() == layout.targetRows,
                "typedGraphBatch: labels and training mask need ", layout.targetRows, " rows (the target type's)");
  Batch b;
  b.numNodes = b.numRealNodes = layout.numNodes();
  b.numEdges = b.numRealEdges = edgeIndex.dim(1);
  b.numGraphs = b.numRealGraphs = 1;
  b.x = flattenFeatures(layout, features);
  b.edgeIndex = edgeIndex;
  b.edgeAttr = edgeType.reshape({b.numEdges});
  b.y = y.reshape({layout.targetRows});
  b.trainMask = trainMask.reshape({layout.targetRows});
  b.ptr = Tensor::fromVector<int64_t>({0, b.numNodes}, {2});
  b.edgePtr = Tensor::fromVector<int64_t>({0, b.numEdges}, {2});
  b.graphsMask = Tensor::full({1}, 1, DType::U8);
  b.nodesMask = Tensor::full({b.numNodes}, 1, DType::U8);
  b.edgesMask = Tensor::full({b.numEdges}, 1, DType::U8);
  return b;
}

std::vector<Tensor> typedFeatures(const Batch& b, const TypedBatchLayout& layout) {
  const int64_t elements = featureElements(layout);
  GNN_CHECK_ARG(elements == 0 || (b.x.defined() && b.x.dtype() == DType::F32 && b.x.numel() == elements),
                "typedFeatures: x holds ", b.x.defined() ? b.x.numel() : 0, " values, the layout's featured rows ",
                elements);
  std::vector<Tensor> out(layout.rows.size());
  const Tensor flat = elements > 0 ? b.x.reshape({elements}) : Tensor();
  int64_t first = 0;
  for (size_t t = 0; t < layout.rows.size(); ++t) {
    const int64_t n = layout.rows[t] * layout.widths[t];
    if (layout.widths[t] <= 0) continue;
    if (layout.rows[t] == 0) {  // a featured type without rows in this batch: its empty feature matrix
      out[t] = Tensor::zeros({0, layout.widths[t]});
      continue;
    }
    out[t] = flat.slice(first, first + n).reshape({layout.rows[t], layout.widths[t]});
    first += n;
  }
  return out;
}

void setTypedNodeIds(Batch& b, const TypedBatchLayout& layout, const std::vector<Tensor>& nodeIds) {
  GNN_CHECK_ARG(nodeIds.size() == layout.rows.size(), "setTypedNodeIds: ", nodeIds.size(), " id tensors for ",
                layout.rows.size(), " node types");
  Tensor z = Tensor::zeros({layout.numNodes()}, DType::I64);
  int64_t* out = z.data<int64_t>();
  for (size_t t = 0; t < layout.rows.size(); ++t) {
    const Tensor& ids = nodeIds[t];
    if (layout.widths[t] > 0) {
      out += layout.rows[t];
      continue;
    }
    GNN_CHECK_ARG(ids.defined() && ids.dtype() == DType::I64 && ids.numel() == layout.rows[t],
                  "setTypedNodeIds: node type ", t, " needs int64 ids [", layout.rows[t], "], got ",
                  ids.defined() ? shapeString(ids.shape()) : std::string("none"));
    std::memcpy(out, ids.raw(), ids.nbytes());
    out += layout.rows[t];
  }
  b.z = z;
}

std::vector<Tensor> typedNodeIds(const Batch& b, const TypedBatchLayout& layout) {
  GNN_CHECK_ARG(b.z.defined() && b.z.dtype() == DType::I64 && b.z.numel() == layout.numNodes(),
                "typedNodeIds: z must hold int64 [", layout.numNodes(), "] node ids");
  std::vector<Tensor> out(layout.rows.size());
  for (size_t t = 0; t < layout.rows.size(); ++t)
    if (layout.widths[t] <= 0) out[t] = b.z.slice(layout.offset(t), layout.offset(t) + layout.rows[t]);
  return out;
}

}  // namespace gnn
