#include "data/HeteroToHomogeneous.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "gnn/system/Check.h"

namespace gnn {

int64_t HomogeneousGraph::nodeTypeIndex(const std::string& type) const {
  for (size_t t = 0; t < nodeTypeNames.size(); ++t)
    if (nodeTypeNames[t] == type) return static_cast<int64_t>(t);
  throw std::invalid_argument("HomogeneousGraph: no node type '" + type + "'");
}

namespace {

// One store's share of a combined feature: its rows (the store's node or edge count) and its tensor, undefined
// where the store lacks the feature.
struct FeaturePart {
  int64_t rows;
  const Tensor* value;
};

Shape trailingShape(const Tensor& t) { return Shape(t.shape().begin() + 1, t.shape().end()); }

// PyG's dummy value (fill_dummy_): NaN for a floating-point feature, -1 for an integer one.
void fillDummy(void* out, int64_t count, DType dtype, const std::string& key) {
  switch (dtype) {
    case DType::F32: std::fill_n(static_cast<float*>(out), count, std::numeric_limits<float>::quiet_NaN()); break;
    case DType::F64: std::fill_n(static_cast<double*>(out), count, std::numeric_limits<double>::quiet_NaN()); break;
    case DType::I64: std::fill_n(static_cast<int64_t*>(out), count, int64_t{-1}); break;
    case DType::I32: std::fill_n(static_cast<int32_t*>(out), count, int32_t{-1}); break;
    default:
      throw std::invalid_argument("toHomogeneous: feature '" + key + "' is " + dtypeName(dtype) +
                                  ": dummy values are NaN (float32/64) or -1 (int32/64)");
  }
}

// PyG's fill_dummy_ then _consistent_size for one key: the parts concatenated along rows, or an undefined
// tensor when PyG leaves the key out (trailing shapes differ, or, without dummy values, a store lacks it);
// `required`: the key was named in node_attrs / edge_attrs, where PyG fails instead of leaving it out.
Tensor combineFeature(const std::vector<FeaturePart>& parts, bool dummyValues, const std::string& key, bool required) {
  // A feature named in node_attrs / edge_attrs that cannot be combined: PyG fails on it (KeyError, torch.cat).
  auto leftOut = [&](const char* why) {
    GNN_CHECK_ARG(!required, "toHomogeneous: feature '", key, "' was asked for, but ", why);
    return Tensor();
  };
  const Tensor* ref = nullptr;
  bool everyStore = true;
  for (const FeaturePart& p : parts) {
    if (!p.value->defined()) {
      everyStore = false;
      continue;
    }
    GNN_CHECK_ARG(p.value->rank() >= 1 && p.value->dim(0) == p.rows, "toHomogeneous: feature '", key,
                  "' has shape ", shapeString(p.value->shape()), " for a type of ", p.rows, " rows");
    if (!ref) {
      ref = p.value;
      continue;
    }
    if (trailingShape(*p.value) != trailingShape(*ref)) return leftOut("its types give it different shapes");
    GNN_CHECK_ARG(p.value->dtype() == ref->dtype(), "toHomogeneous: feature '", key, "' is ",
                  dtypeName(ref->dtype()), " in one type and ", dtypeName(p.value->dtype()), " in another");
  }
  if (!ref) return leftOut("no type has it");
  if (!everyStore && !dummyValues) return leftOut("not every type has it (and no dummy values)");
  Shape shape = ref->shape();
  shape[0] = 0;
  for (const FeaturePart& p : parts) shape[0] += p.rows;
  Tensor out = Tensor::empty(shape, ref->dtype());
  const int64_t rowElems = shapeNumel(trailingShape(*ref));
  const size_t elem = dtypeSize(ref->dtype());
  auto* o = static_cast<unsigned char*>(out.raw());
  for (const FeaturePart& p : parts) {
    if (p.value->defined())
      std::memcpy(o, p.value->raw(), p.value->nbytes());
    else
      fillDummy(o, p.rows * rowElems, ref->dtype(), key);
    o += static_cast<size_t>(p.rows * rowElems) * elem;
  }
  return out;
}

// Whether a feature is combined: every one when no list was given, else the ones named.
bool combinesFeature(const std::optional<std::vector<std::string>>& attrs, const std::string& key) {
  return !attrs || std::find(attrs->begin(), attrs->end(), key) != attrs->end();
}

// Each type's id repeated over its slice (PyG: arange(len(sizes)).repeat_interleave(sizes)).
Tensor typeVector(const std::vector<int64_t>& slices) {
  Tensor out = Tensor::empty({slices.back()}, DType::I64);
  int64_t* o = out.data<int64_t>();
  for (size_t t = 0; t + 1 < slices.size(); ++t) std::fill(o + slices[t], o + slices[t + 1], static_cast<int64_t>(t));
  return out;
}

// offset_edge_index for every edge type with an edge_index, concatenated in order (to_homogeneous_edge_index).
void combineEdges(const HeteroGraph& g, const ToHomogeneousOptions& options, HomogeneousGraph& h) {
  std::vector<const EdgeStore*> stores;
  h.edgeSlices = {0};
  for (const EdgeType& type : g.edgeTypes()) {
    const EdgeStore& s = g.edge(type);
    if (!s.edgeIndex.defined()) continue;  // PyG's edge_index_dict holds the stores with one
    GNN_CHECK_ARG(s.edgeIndex.rank() == 2 && s.edgeIndex.dim(0) == 2 && s.edgeIndex.dtype() == DType::I64,
                  "toHomogeneous: edge type ", type.str(), ": edge_index must be int64 [2, E], got ",
                  dtypeName(s.edgeIndex.dtype()), " ", shapeString(s.edgeIndex.shape()));
    h.edgeTypeNames.push_back(type);
    stores.push_back(&s);
    h.edgeSlices.push_back(h.edgeSlices.back() + s.numEdges());
  }
  if (stores.empty()) return;
  const int64_t E = h.edgeSlices.back();
  h.edgeIndex = Tensor::empty({2, E}, DType::I64);
  int64_t* src = h.edgeIndex.data<int64_t>();
  int64_t* dst = src + E;
  for (size_t k = 0; k < stores.size(); ++k) {
    const EdgeType& type = h.edgeTypeNames[k];
    const int64_t n = stores[k]->numEdges(), at = h.edgeSlices[k];
    const int64_t srcOffset = h.nodeOffset(type.src), dstOffset = h.nodeOffset(type.dst);
    const int64_t* e = stores[k]->edgeIndex.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      src[at + i] = e[i] + srcOffset;
      dst[at + i] = e[n + i] + dstOffset;
    }
  }
  if (options.addEdgeType) h.edgeType = typeVector(h.edgeSlices);
  std::vector<FeaturePart> attr, reltype;
  for (size_t k = 0; k < stores.size(); ++k) {
    attr.push_back({stores[k]->numEdges(), &stores[k]->edgeAttr});
    reltype.push_back({stores[k]->numEdges(), &stores[k]->edgeReltype});
  }
  const bool required = options.edgeAttrs.has_value();
  if (combinesFeature(options.edgeAttrs, "edge_attr"))
    h.edgeAttr = combineFeature(attr, options.dummyValues, "edge_attr", required);
  if (combinesFeature(options.edgeAttrs, "edge_reltype"))
    h.edgeReltype = combineFeature(reltype, options.dummyValues, "edge_reltype", required);
}

}  // namespace

HomogeneousGraph toHomogeneous(const HeteroGraph& g, const ToHomogeneousOptions& options) {
  HomogeneousGraph h;
  h.nodeTypeNames = g.nodeTypes();
  h.nodeSlices = {0};
  std::vector<FeaturePart> x, y;
  std::map<std::string, std::vector<FeaturePart>> files;
  static const Tensor kNone;
  for (const std::string& type : h.nodeTypeNames) {
    const NodeStore& s = g.node(type);
    h.nodeSlices.push_back(h.nodeSlices.back() + s.numNodes);
    x.push_back({s.numNodes, &s.x});
    y.push_back({s.numNodes, &s.y});
    for (const auto& [name, t] : s.nodeFiles) files[name];  // every name any type has
  }
  for (auto& [name, parts] : files)
    for (const std::string& type : h.nodeTypeNames) {
      const NodeStore& s = g.node(type);
      const auto it = s.nodeFiles.find(name);
      parts.push_back({s.numNodes, it == s.nodeFiles.end() ? &kNone : &it->second});
    }
  h.numNodes = h.nodeSlices.back();
  const bool required = options.nodeAttrs.has_value();
  if (combinesFeature(options.nodeAttrs, "x")) h.x = combineFeature(x, options.dummyValues, "x", required);
  if (combinesFeature(options.nodeAttrs, "y")) h.y = combineFeature(y, options.dummyValues, "y", required);
  for (const auto& [name, parts] : files) {
    if (!combinesFeature(options.nodeAttrs, name)) continue;
    Tensor t = combineFeature(parts, options.dummyValues, name, required);
    if (t.defined()) h.nodeFiles[name] = std::move(t);
  }
  if (options.nodeAttrs)  // a name no type has is never met above
    for (const std::string& name : *options.nodeAttrs)
      GNN_CHECK_ARG(name == "x" || name == "y" || files.count(name), "toHomogeneous: feature '", name,
                    "' was asked for, but no type has it");
  if (options.addNodeType) h.nodeType = typeVector(h.nodeSlices);
  combineEdges(g, options, h);
  return h;
}

}  // namespace gnn
