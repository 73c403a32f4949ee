#include "data/HeteroGraph.h"

#include <algorithm>
#include <numeric>

#include "gnn/system/Check.h"

namespace gnn {

NodeStore& HeteroGraph::addNodeType(const std::string& type, int64_t numNodes) {
  GNN_CHECK_ARG(!hasNodeType(type), "HeteroGraph::addNodeType: node type '", type, "' exists already");
  GNN_CHECK_ARG(numNodes >= 0, "HeteroGraph::addNodeType: node type '", type, "' with ", numNodes, " nodes");
  nodes_.emplace_back(type, NodeStore{});
  nodes_.back().second.numNodes = numNodes;
  return nodes_.back().second;
}

EdgeStore& HeteroGraph::addEdgeType(const EdgeType& type, Tensor edgeIndex) {
  GNN_CHECK_ARG(!hasEdgeType(type), "HeteroGraph::addEdgeType: edge type ", type.str(), " exists already");
  edges_.emplace_back(type, EdgeStore{});
  edges_.back().second.edgeIndex = std::move(edgeIndex);
  return edges_.back().second;
}

bool HeteroGraph::hasNodeType(const std::string& type) const {
  return std::any_of(nodes_.begin(), nodes_.end(), [&](const auto& n) { return n.first == type; });
}

bool HeteroGraph::hasEdgeType(const EdgeType& type) const {
  return std::any_of(edges_.begin(), edges_.end(), [&](const auto& e) { return e.first == type; });
}

NodeStore& HeteroGraph::node(const std::string& type) {
  return const_cast<NodeStore&>(std::as_const(*this).node(type));
}

const NodeStore& HeteroGraph::node(const std::string& type) const {
  for (const auto& n : nodes_)
    if (n.first == type) return n.second;
  throw std::invalid_argument("HeteroGraph: no node type '" + type + "'");
}

EdgeStore& HeteroGraph::edge(const EdgeType& type) {
  return const_cast<EdgeStore&>(std::as_const(*this).edge(type));
}

const EdgeStore& HeteroGraph::edge(const EdgeType& type) const {
  for (const auto& e : edges_)
    if (e.first == type) return e.second;
  throw std::invalid_argument("HeteroGraph: no edge type " + type.str());
}

int64_t HeteroGraph::numNodes() const {
  int64_t n = 0;
  for (const auto& s : nodes_) n += s.second.numNodes;
  return n;
}

int64_t HeteroGraph::numEdges() const {
  int64_t n = 0;
  for (const auto& s : edges_) n += s.second.numEdges();
  return n;
}

std::vector<std::string> HeteroGraph::nodeTypes() const {
  std::vector<std::string> out;
  for (const auto& n : nodes_) out.push_back(n.first);
  return out;
}

std::vector<EdgeType> HeteroGraph::edgeTypes() const {
  std::vector<EdgeType> out;
  for (const auto& e : edges_) out.push_back(e.first);
  return out;
}

std::pair<std::vector<std::string>, std::vector<EdgeType>> HeteroGraph::metadata() const {
  return {nodeTypes(), edgeTypes()};
}

namespace {

void checkRows(const Tensor& t, int64_t rows, const std::string& what, const char* name) {
  if (!t.defined()) return;
  GNN_CHECK_ARG(t.rank() >= 1 && t.dim(0) == rows, what, ": ", name, " has shape ", shapeString(t.shape()), " but ",
                rows, " rows were expected");
}

void checkIds(const std::vector<int64_t>& ids, int64_t n, const std::string& what, const char* name) {
  for (int64_t v : ids)
    GNN_CHECK_ARG(v >= 0 && v < n, what, ": ", name, " lists node ", v, " but the type has ", n, " nodes");
}

}  // namespace

void HeteroGraph::validate() const {
  for (const auto& [type, s] : nodes_) {
    const std::string what = "node type '" + type + "'";
    GNN_CHECK_ARG(s.numNodes >= 0, what, ": negative node count");
    checkRows(s.x, s.numNodes, what, "x");
    checkRows(s.y, s.numNodes, what, "y");
    if (s.y.defined())
      GNN_CHECK_ARG(s.y.rank() == 1 || (s.y.rank() == 2 && s.y.dim(1) == 1), what, ": y has shape ",
                    shapeString(s.y.shape()), ", expected [N] or [N, 1]");
    for (const auto& [name, t] : s.nodeFiles) checkRows(t, s.numNodes, what, name.c_str());
    checkIds(s.trainIdx, s.numNodes, what, "train split");
    checkIds(s.validIdx, s.numNodes, what, "valid split");
    checkIds(s.testIdx, s.numNodes, what, "test split");
  }
  for (const auto& [type, s] : edges_) {
    const std::string what = "edge type " + type.str();
    GNN_CHECK_ARG(hasNodeType(type.src), what, ": unknown source node type '", type.src, "'");
    GNN_CHECK_ARG(hasNodeType(type.dst), what, ": unknown destination node type '", type.dst, "'");
    if (!s.edgeIndex.defined()) continue;
    const Tensor& ei = s.edgeIndex;
    GNN_CHECK_ARG(ei.rank() == 2 && ei.dim(0) == 2 && ei.dtype() == DType::I64, what,
                  ": edge_index must be int64 [2, E], got ", dtypeName(ei.dtype()), " ", shapeString(ei.shape()));
    const int64_t E = ei.dim(1), ns = numNodes(type.src), nd = numNodes(type.dst);
    const int64_t* e = ei.data<int64_t>();
    for (int64_t k = 0; k < E; ++k) {
      GNN_CHECK_ARG(e[k] >= 0 && e[k] < ns, what, ": edge ", k, " leaves node ", e[k], " but '", type.src, "' has ",
                    ns, " nodes");
      GNN_CHECK_ARG(e[E + k] >= 0 && e[E + k] < nd, what, ": edge ", k, " enters node ", e[E + k], " but '",
                    type.dst, "' has ", nd, " nodes");
    }
    checkRows(s.edgeAttr, E, what, "edge_attr");
    checkRows(s.edgeReltype, E, what, "edge_reltype");
  }
}

namespace {

// The rows of `in` (2E rows: the features, then the same again for the flipped edges) gathered in `order` and
// reduced over each run of equal edges: group g covers order[start[g] .. start[g+1]).
template <class T>
Tensor reduceRows(const Tensor& in, const std::vector<int64_t>& order, const std::vector<int64_t>& start,
                  EdgeReduce reduce) {
  const int64_t groups = static_cast<int64_t>(start.size()) - 1, w = in.cols(), E = in.rows();
  Shape shape = in.shape();
  shape[0] = groups;
  Tensor out = Tensor::empty(shape, in.dtype());
  const T* src = in.data<T>();
  T* o = out.data<T>();
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t j = 0; j < w; ++j) {
      auto at = [&](int64_t k) { return src[(order[k] % E) * w + j]; };
      T acc = at(start[g]);
      for (int64_t k = start[g] + 1; k < start[g + 1]; ++k) {
        const T v = at(k);
        switch (reduce) {
          case EdgeReduce::Add:
          case EdgeReduce::Mean: acc = static_cast<T>(acc + v); break;
          case EdgeReduce::Mul: acc = static_cast<T>(acc * v); break;
          case EdgeReduce::Min: acc = std::min(acc, v); break;
          case EdgeReduce::Max: acc = std::max(acc, v); break;
        }
      }
      if (reduce == EdgeReduce::Mean) acc = static_cast<T>(acc / static_cast<T>(start[g + 1] - start[g]));
      o[g * w + j] = acc;
    }
  }
  return out;
}

// PyG's utils.to_undirected then utils.coalesce (torch_geometric/utils/undirected.py, coalesce.py, 2.3.1):
//   row, col = cat([row, col]), cat([col, row]);  attr = cat([attr, attr])
//   sort by row * num_nodes + col;  keep the first of each run of equal (row, col);  scatter(attr, run, reduce)
// The sort is stable here, so duplicates are reduced in the order they were listed (the original edges first).
void mergeUndirected(EdgeStore& s, EdgeReduce reduce, const std::string& what) {
  const int64_t E = s.numEdges();
  const int64_t* e = std::as_const(s.edgeIndex).data<int64_t>();
  // Edge k of the 2E: the original edge k, then for k >= E the flip of edge k - E, whose row is that edge's column,
  // e[E + k - E] = e[k]: the rows of the 2E edges are e[0 .. 2E) as they lie.
  auto row = [&](int64_t k) { return e[k]; };
  auto col = [&](int64_t k) { return k < E ? e[E + k] : e[k - E]; };
  std::vector<int64_t> order(static_cast<size_t>(2 * E));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return std::make_pair(row(a), col(a)) < std::make_pair(row(b), col(b));
  });
  std::vector<int64_t> start;
  for (int64_t k = 0; k < 2 * E; ++k)
    if (k == 0 || row(order[k]) != row(order[k - 1]) || col(order[k]) != col(order[k - 1])) start.push_back(k);
  const int64_t groups = static_cast<int64_t>(start.size());
  start.push_back(2 * E);
  Tensor merged = Tensor::empty({2, groups}, DType::I64);
  int64_t* m = merged.data<int64_t>();
  for (int64_t g = 0; g < groups; ++g) {
    m[g] = row(order[start[g]]);
    m[groups + g] = col(order[start[g]]);
  }
  const bool duplicates = groups < 2 * E;
  for (Tensor* attr : {&s.edgeAttr, &s.edgeReltype}) {
    if (!attr->defined() || attr->rank() < 1 || attr->dim(0) != E) continue;
    // Without duplicates PyG returns cat([attr, attr]) permuted, never divided; with them, its mean divides an
    // integer sum by an integer count with '/', which gives floats: an int64 edge_reltype would change type.
    GNN_CHECK_ARG(!(duplicates && reduce == EdgeReduce::Mean && !attr->isFloating()), what,
                  ": reduce 'mean' over the integer features of duplicate edges (PyG turns them into floats); use "
                  "add, min, max or mul");
    switch (attr->dtype()) {
      case DType::F32: *attr = reduceRows<float>(*attr, order, start, reduce); break;
      case DType::F64: *attr = reduceRows<double>(*attr, order, start, reduce); break;
      case DType::I64: *attr = reduceRows<int64_t>(*attr, order, start, reduce); break;
      case DType::I32: *attr = reduceRows<int32_t>(*attr, order, start, reduce); break;
      default:
        throw std::invalid_argument(what + ": toUndirected merges float32/64 and int32/64 edge features, not " +
                                    dtypeName(attr->dtype()));
    }
  }
  s.edgeIndex = std::move(merged);
}

Tensor flipped(const Tensor& edgeIndex) {
  const int64_t E = edgeIndex.dim(1);
  Tensor out = Tensor::empty({2, E}, DType::I64);
  const int64_t* e = edgeIndex.data<int64_t>();
  std::copy(e + E, e + 2 * E, out.data<int64_t>());
  std::copy(e, e + E, out.data<int64_t>() + E);
  return out;
}

}  // namespace

void HeteroGraph::toUndirected(EdgeReduce reduce, bool merge) {
  // PyG loops over list(data.edge_stores): the types present when it starts, each store read as it is by then (an
  // earlier bipartite relation may have overwritten a "rev_" type that comes later in the list).
  const std::vector<EdgeType> types = edgeTypes();
  for (const EdgeType& type : types) {
    EdgeStore& s = edge(type);
    if (!s.edgeIndex.defined()) continue;  // PyG: `if 'edge_index' not in store: continue`
    GNN_CHECK_ARG(s.edgeIndex.rank() == 2 && s.edgeIndex.dim(0) == 2 && s.edgeIndex.dtype() == DType::I64,
                  "HeteroGraph::toUndirected: edge type ", type.str(), ": edge_index must be int64 [2, E], got ",
                  dtypeName(s.edgeIndex.dtype()), " ", shapeString(s.edgeIndex.shape()));
    if (type.src == type.dst && merge) {
      mergeUndirected(s, reduce, "HeteroGraph::toUndirected: edge type " + type.str());
      continue;
    }
    const EdgeType rev{type.dst, "rev_" + type.rel, type.src};
    const int64_t E = s.numEdges();
    Tensor revIndex = flipped(s.edgeIndex);
    EdgeStore& r = hasEdgeType(rev) ? edge(rev) : addEdgeType(rev, Tensor());
    const EdgeStore& from = s;  // still valid: adding to a deque keeps references to its elements
    r.edgeIndex = std::move(revIndex);
    // PyG copies every tensor whose first dimension is the edge count, sharing it (no copy of the data).
    if (from.edgeAttr.defined() && from.edgeAttr.rank() >= 1 && from.edgeAttr.dim(0) == E) r.edgeAttr = from.edgeAttr;
    if (from.edgeReltype.defined() && from.edgeReltype.rank() >= 1 && from.edgeReltype.dim(0) == E)
      r.edgeReltype = from.edgeReltype;
  }
}

}  // namespace gnn
