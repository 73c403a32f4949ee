#include "loaders/BatchFields.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>

#include "data/GraphormerEncodings.h"

namespace gnn {

const char* fieldLevelName(FieldLevel level) {
  switch (level) {
    case FieldLevel::Node: return "node";
    case FieldLevel::Edge: return "edge";
    case FieldLevel::Graph: return "graph";
    case FieldLevel::NodePair: return "node-pair";
  }
  return "?";
}

double BatchField::padValue(const FixedSizeOptions& o) const {
  switch (pad) {
    case FieldPad::NodeValue: return o.nodePadValue;
    case FieldPad::EdgeValue: return o.edgePadValue;
    case FieldPad::GraphValue: return o.graphPadValue;
    case FieldPad::PairValue: return o.pairPadValue;
    case FieldPad::Zero:
    case FieldPad::SelfLoop: return 0.0;
  }
  return 0.0;
}

namespace {

using L = FieldLevel;
using P = FieldPad;
constexpr BatchField kFields[] = {
    {"x", L::Node, &Graph::x, &Batch::x, P::NodeValue},
    {"edge_index", L::Edge, &Graph::edgeIndex, &Batch::edgeIndex, P::SelfLoop, false, /*nodeIds=*/true},
    {"edge_attr", L::Edge, &Graph::edgeAttr, &Batch::edgeAttr, P::EdgeValue},
    {"y", L::Graph, &Graph::y, &Batch::y, P::GraphValue, /*target=*/true},
    {"y_mask", L::Graph, &Graph::yMask, &Batch::yMask, P::Zero, /*target=*/true, false, /*labelMask=*/true},
    {"pos", L::Node, &Graph::pos, &Batch::pos, P::NodeValue},
    {"z", L::Node, &Graph::z, &Batch::z, P::NodeValue},
    {"spatial_pos", L::NodePair, &Graph::spatialPos, &Batch::spatialPos, P::PairValue, false, false, false, 0,
     GraphormerEncodings::kUnreachable},
    {"in_degree", L::Node, &Graph::inDegree, &Batch::inDegree, P::NodeValue},
    {"edge_input", L::NodePair, &Graph::edgeInput, &Batch::edgeInput, P::PairValue, false, false, false,
     GraphormerEncodings::kFeatureOffset},
    {"train_mask", L::Node, &Graph::trainMask, &Batch::trainMask, P::Zero},
    {"valid_mask", L::Node, &Graph::validMask, &Batch::validMask, P::Zero},
    {"test_mask", L::Node, &Graph::testMask, &Batch::testMask, P::Zero},
    {"graph_features", L::Graph, &Graph::graphFeatures, &Batch::graphFeatures, P::Zero},
    {"node_features", L::Node, &Graph::nodeFeatures, &Batch::nodeFeatures, P::Zero},
};

constexpr CollatorField kCollatorFields[] = {
    {"batch", &Batch::batch},          {"ptr", &Batch::ptr},
    {"edge_ptr", &Batch::edgePtr},     {"graphs_mask", &Batch::graphsMask},
    {"nodes_mask", &Batch::nodesMask}, {"edges_mask", &Batch::edgesMask},
};

// A Graph or Batch tensor missing from the tables would be dropped silently by every loader: these make adding
// one a build error until the tables describe it.
static_assert(sizeof(Graph) == sizeof(int64_t) + std::size(kFields) * sizeof(Tensor),
              "Graph's tensors and batchFields() differ: describe every Graph tensor in kFields");
// (The counts: the seven sizes and numSeeds; the index vectors: graphIndex, nodeIndex, inputId, nodesPerHop,
// edgesPerHop.)
static_assert(sizeof(Batch) == 8 * sizeof(int64_t) + (std::size(kFields) + std::size(kCollatorFields)) * sizeof(Tensor) +
                                   5 * sizeof(std::vector<int64_t>),
              "Batch's tensors and the field tables differ: describe every Batch tensor in kFields or kCollatorFields");

}  // namespace

const std::vector<BatchField>& batchFields() {
  static const std::vector<BatchField> fields(std::begin(kFields), std::end(kFields));
  return fields;
}

const std::vector<CollatorField>& collatorFields() {
  static const std::vector<CollatorField> fields(std::begin(kCollatorFields), std::end(kCollatorFields));
  return fields;
}

bool hasFieldShape(const BatchField& f, const Graph& g, bool nodeLevelTargets) {
  const Tensor& t = g.*f.inGraph;
  if (!t.defined()) return true;
  // Shapes are read directly (not through Tensor::dim's checks): this runs for every field of every graph.
  const Shape& s = t.shape();
  const int64_t n = g.numNodes;
  if (f.nodeIds) return s.size() == 2 && s[0] == 2 && t.dtype() == DType::I64;
  if (f.labelMask) return g.y.defined() && s == g.y.shape();
  switch (f.levelFor(nodeLevelTargets)) {
    case FieldLevel::Node: return !s.empty() && s[0] == n;
    case FieldLevel::Edge: return !s.empty() && s[0] == (g.edgeIndex.defined() ? g.edgeIndex.shape()[1] : 0);
    case FieldLevel::Graph: return true;
    case FieldLevel::NodePair: return s.size() >= 2 && s[0] == n && s[1] == n;
  }
  return false;
}

void checkFieldShape(const BatchField& f, const Graph& g, bool nodeLevelTargets, const std::string& what) {
  if (hasFieldShape(f, g, nodeLevelTargets)) return;
  const Tensor& t = g.*f.inGraph;
  if (!t.defined()) return;
  const int64_t n = g.numNodes, m = g.numEdges();
  if (f.nodeIds) {
    GNN_CHECK_ARG(t.rank() == 2 && t.dim(0) == 2 && t.dtype() == DType::I64, what, ": edge_index must be int64 [2, E], got ",
                  dtypeName(t.dtype()), " ", shapeString(t.shape()));
    return;
  }
  if (f.labelMask) {
    GNN_CHECK_ARG(g.y.defined() && t.shape() == g.y.shape(), what, ": y_mask has shape ", shapeString(t.shape()),
                  " but y has ", g.y.defined() ? shapeString(g.y.shape()) : std::string("none"));
    return;
  }
  switch (f.levelFor(nodeLevelTargets)) {
    case FieldLevel::Node:
      GNN_CHECK_ARG(t.rank() >= 1 && t.dim(0) == n, what, ": node field ", f.name, " has shape ", shapeString(t.shape()),
                    " but the graph has ", n, " nodes: expected [", n, ", ...]");
      break;
    case FieldLevel::Edge:
      GNN_CHECK_ARG(t.rank() >= 1 && t.dim(0) == m, what, ": edge field ", f.name, " has shape ", shapeString(t.shape()),
                    " but the graph has ", m, " edges: expected [", m, ", ...]");
      break;
    case FieldLevel::Graph:
      break;  // any shape: its values become one row
    case FieldLevel::NodePair:
      GNN_CHECK_ARG(t.rank() >= 2 && t.dim(0) == n && t.dim(1) == n, what, ": node-pair field ", f.name,
                    " has shape ", shapeString(t.shape()), " but the graph has ", n, " nodes: expected [", n, ", ", n,
                    ", ...]");
      break;
  }
}

namespace detail {

Tensor takeRows(const Tensor& t, const std::vector<int64_t>& rows) {
  if (!t.defined()) return t;
  Shape shape = t.shape();
  shape[0] = static_cast<int64_t>(rows.size());
  Tensor out = Tensor::empty(shape, t.dtype());
  size_t rowBytes = t.dim(0) ? t.nbytes() / static_cast<size_t>(t.dim(0)) : 0;
  const auto* src = static_cast<const unsigned char*>(t.raw());
  auto* dst = static_cast<unsigned char*>(out.raw());
  for (size_t i = 0; i < rows.size(); ++i) std::memcpy(dst + i * rowBytes, src + rows[i] * rowBytes, rowBytes);
  return out;
}

Tensor takePairs(const Tensor& t, const std::vector<int64_t>& rows) {
  if (!t.defined()) return t;
  const int64_t n = t.dim(0), r = static_cast<int64_t>(rows.size());
  Shape shape = t.shape();
  shape[0] = shape[1] = r;
  Tensor out = Tensor::empty(shape, t.dtype());
  const size_t entry = n ? t.nbytes() / static_cast<size_t>(n * n) : 0;  // bytes of one (i, j) entry
  const auto* src = static_cast<const unsigned char*>(t.raw());
  auto* dst = static_cast<unsigned char*>(out.raw());
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < r; ++j)
      std::memcpy(dst + static_cast<size_t>(i * r + j) * entry, src + static_cast<size_t>(rows[i] * n + rows[j]) * entry,
                  entry);
  return out;
}

namespace {
template <class T>
bool representable(double v) {
  if (std::isnan(v)) return std::numeric_limits<T>::has_quiet_NaN;
  if (!std::numeric_limits<T>::is_integer) return true;
  return v == std::floor(v) && v >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
         v <= static_cast<double>(std::numeric_limits<T>::max());
}
}  // namespace

void fillRows(Tensor& t, int64_t begin, int64_t end, double v, const char* field) {
  if (!t.defined() || begin >= end) return;
  const int64_t c = t.cols();
  auto fill = [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    GNN_CHECK_ARG(representable<T>(v), "cannot pad ", field, " (", dtypeName(t.dtype()), ") with ", v,
                  ": choose a pad value of its type in FixedSizeOptions");
    std::fill(p + begin * c, p + end * c, static_cast<T>(v));
  };
  switch (t.dtype()) {
    case DType::F32: fill(t.data<float>()); break;
    case DType::F64: fill(t.data<double>()); break;
    case DType::I32: fill(t.data<int32_t>()); break;
    case DType::I64: fill(t.data<int64_t>()); break;
    case DType::U8: fill(t.data<uint8_t>()); break;
    default: invalidArgument("cannot pad ", field, ": its type ", dtypeName(t.dtype()), " is not supported by the loaders");
  }
}

}  // namespace detail

Graph selectSubgraph(const Graph& g, const std::vector<int64_t>& nodes, const std::vector<int64_t>& edges,
                     Tensor edgeIndex, bool nodeLevelTargets) {
  Graph out;
  out.numNodes = static_cast<int64_t>(nodes.size());
  for (const BatchField& f : batchFields()) {
    const Tensor& t = g.*f.inGraph;
    Tensor& o = out.*f.inGraph;
    if (f.nodeIds) {
      o = std::move(edgeIndex);
      continue;
    }
    if (!t.defined()) continue;
    switch (f.levelFor(nodeLevelTargets)) {
      case FieldLevel::Node: o = detail::takeRows(t, nodes); break;
      case FieldLevel::Edge: o = detail::takeRows(t, edges); break;
      case FieldLevel::Graph: o = t; break;
      case FieldLevel::NodePair: o = detail::takePairs(t, nodes); break;
    }
  }
  return out;
}

}  // namespace gnn
