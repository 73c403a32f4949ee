#include "loaders/FixedSizeCollator.h"

#include <algorithm>
#include <cstring>

namespace gnn {
namespace {

// Fills rows [begin, end) of t with v, whatever t's dtype.
void fillRows(Tensor& t, int64_t begin, int64_t end, double v) {
  if (!t.defined() || begin >= end) return;
  int64_t c = t.cols();
  auto fill = [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    std::fill(p + begin * c, p + end * c, static_cast<T>(v));
  };
  switch (t.dtype()) {
    case DType::F32: fill(t.data<float>()); break;
    case DType::F64: fill(t.data<double>()); break;
    case DType::I32: fill(t.data<int32_t>()); break;
    case DType::I64: fill(t.data<int64_t>()); break;
    case DType::U8: fill(t.data<uint8_t>()); break;
    default: invalidArgument("FixedSizeCollator: cannot pad a ", dtypeName(t.dtype()), " tensor");
  }
}

// Output tensor for a per-node (or per-edge) field: all graphs must agree on dtype and row width. An empty
// graph (no nodes, no edges, e.g. H2 without hydrogens) may leave the field undefined.
Tensor allocLike(const std::vector<const Graph*>& gs, Tensor Graph::*field, int64_t rows, const char* name,
                 const std::vector<int64_t>& indices) {
  const Tensor* tmpl = nullptr;
  for (const Graph* g : gs)
    if ((g->*field).defined() && (!tmpl || (tmpl->dim(0) == 0 && (g->*field).dim(0) > 0))) tmpl = &(g->*field);
  if (!tmpl) return Tensor();
  for (size_t i = 0; i < gs.size(); ++i) {
    const Tensor& t = gs[i]->*field;
    bool empty = gs[i]->numNodes == 0 && gs[i]->numEdges() == 0;
    bool same = t.defined() ? (t.dtype() == tmpl->dtype() && t.rank() == tmpl->rank() &&
                               (t.dim(0) == 0 || t.cols() == tmpl->cols()))
                            : empty;
    GNN_CHECK_ARG(same, "collate: graph ", indices.empty() ? static_cast<int64_t>(i) : indices[i], "'s ", name,
                  " (", t.defined() ? shapeString(t.shape()) : "undefined", ") does not match another graph's (",
                  shapeString(tmpl->shape()), ")");
  }
  Shape shape = tmpl->shape();
  shape[0] = rows;
  return Tensor(shape, tmpl->dtype());
}

void copyRows(Tensor& out, int64_t rowOffset, const Tensor& in) {
  if (!in.defined() || in.numel() == 0) return;
  size_t rowBytes = out.dim(0) ? out.nbytes() / static_cast<size_t>(out.dim(0)) : 0;
  std::memcpy(static_cast<unsigned char*>(out.raw()) + rowOffset * rowBytes, in.raw(), in.nbytes());
}

// The one collation routine: real graphs, then (numGraphs − real) padding graphs. When pad is false the sizes
// are the real totals and there is no padding graph.
Batch collateImpl(const std::vector<const Graph*>& gs, const std::vector<int64_t>& indices, int64_t numNodes,
                  int64_t numEdges, int64_t numGraphs, const FixedSizeOptions* pad, bool nodeLevel) {
  GNN_CHECK_ARG(!gs.empty(), "collate: no graphs");
  const int64_t real = static_cast<int64_t>(gs.size());
  int64_t realNodes = 0, realEdges = 0;
  for (const Graph* g : gs) {
    realNodes += g->numNodes;
    realEdges += g->numEdges();
  }
  const int64_t padGraphs = numGraphs - real;
  if (pad) {
    GNN_CHECK_ARG(padGraphs >= 1 && realNodes + padGraphs <= numNodes && realEdges <= numEdges,
                  "FixedSizeCollator: ", real, " graphs with ", realNodes, " nodes and ", realEdges,
                  " edges do not fit ", pad->toString(), " (at most ", numGraphs - 1,
                  " real graphs, and one node per padding graph): raise the sizes or batch fewer graphs");
  }

  Batch b;
  b.numNodes = numNodes;
  b.numEdges = numEdges;
  b.numGraphs = numGraphs;
  b.numRealNodes = realNodes;
  b.numRealEdges = realEdges;
  b.numRealGraphs = real;
  b.graphIndex = indices;

  b.x = allocLike(gs, &Graph::x, numNodes, "x", indices);
  b.pos = allocLike(gs, &Graph::pos, numNodes, "pos", indices);
  b.z = allocLike(gs, &Graph::z, numNodes, "z", indices);
  b.trainMask = allocLike(gs, &Graph::trainMask, numNodes, "train_mask", indices);
  b.validMask = allocLike(gs, &Graph::validMask, numNodes, "valid_mask", indices);
  b.testMask = allocLike(gs, &Graph::testMask, numNodes, "test_mask", indices);
  b.edgeAttr = allocLike(gs, &Graph::edgeAttr, numEdges, "edge_attr", indices);
  if (nodeLevel) {
    b.y = allocLike(gs, &Graph::y, numNodes, "y", indices);
  } else if (gs.front()->y.defined()) {
    // Graph-level targets: each graph's y (shape [T], [1, T] or []) becomes one row of [numGraphs, T].
    int64_t t = gs.front()->y.numel();
    for (size_t i = 0; i < gs.size(); ++i)
      GNN_CHECK_ARG(gs[i]->y.defined() && gs[i]->y.numel() == t && gs[i]->y.dtype() == gs.front()->y.dtype(),
                    "collate: graph ", indices.empty() ? static_cast<int64_t>(i) : indices[i],
                    " has a different number or type of targets than the first graph");
    b.y = Tensor({numGraphs, t}, gs.front()->y.dtype());
  }
  if (b.y.defined()) b.yMask = Tensor(b.y.shape(), DType::U8);

  Tensor ei({2, numEdges}, DType::I64);
  Tensor batchVec({numNodes}, DType::I64);
  Tensor ptr({numGraphs + 1}, DType::I64), edgePtr({numGraphs + 1}, DType::I64);
  Tensor gm({numGraphs}, DType::U8), nm({numNodes}, DType::U8), em({numEdges}, DType::U8);
  int64_t* src = ei.data<int64_t>();
  int64_t* dst = src + numEdges;
  int64_t* bv = batchVec.data<int64_t>();
  int64_t* p = ptr.data<int64_t>();
  int64_t* ep = edgePtr.data<int64_t>();

  int64_t node = 0, edge = 0;
  for (int64_t gi = 0; gi < real; ++gi) {
    const Graph& g = *gs[gi];
    p[gi] = node;
    ep[gi] = edge;
    int64_t n = g.numNodes, m = g.numEdges();
    copyRows(b.x, node, g.x);
    copyRows(b.pos, node, g.pos);
    copyRows(b.z, node, g.z);
    copyRows(b.trainMask, node, g.trainMask);
    copyRows(b.validMask, node, g.validMask);
    copyRows(b.testMask, node, g.testMask);
    copyRows(b.edgeAttr, edge, g.edgeAttr);
    if (m) {
      const int64_t* e = g.edgeIndex.data<int64_t>();
      for (int64_t j = 0; j < m; ++j) {
        src[edge + j] = e[j] + node;
        dst[edge + j] = e[m + j] + node;
      }
    }
    std::fill(bv + node, bv + node + n, gi);
    if (b.y.defined()) {
      if (nodeLevel) {
        copyRows(b.y, node, g.y);
        if (g.yMask.defined())
          copyRows(b.yMask, node, g.yMask);
        else
          fillRows(b.yMask, node, node + n, 1);
      } else {
        copyRows(b.y, gi, g.y.reshape({1, g.y.numel()}));
        if (g.yMask.defined())
          copyRows(b.yMask, gi, g.yMask.reshape({1, g.yMask.numel()}));
        else
          fillRows(b.yMask, gi, gi + 1, 1);
      }
    }
    node += n;
    edge += m;
  }
  GNN_ASSERT(node == realNodes && edge == realEdges, "real rows miscounted");
  std::fill(gm.data<uint8_t>(), gm.data<uint8_t>() + real, uint8_t{1});
  std::fill(nm.data<uint8_t>(), nm.data<uint8_t>() + realNodes, uint8_t{1});
  std::fill(em.data<uint8_t>(), em.data<uint8_t>() + realEdges, uint8_t{1});

  if (padGraphs > 0) {
    // Leftover rows split evenly: the first (leftover % padGraphs) pad graphs take one extra row.
    const int64_t leftNodes = numNodes - realNodes, leftEdges = numEdges - realEdges;
    double nodePad = pad ? pad->nodePadValue : 0.0;
    fillRows(b.x, realNodes, numNodes, nodePad);
    fillRows(b.pos, realNodes, numNodes, nodePad);
    fillRows(b.z, realNodes, numNodes, nodePad);
    fillRows(b.edgeAttr, realEdges, numEdges, pad ? pad->edgePadValue : 0.0);
    if (b.y.defined()) fillRows(b.y, nodeLevel ? realNodes : real, b.y.dim(0), pad ? pad->graphPadValue : 0.0);
    for (int64_t k = 0; k < padGraphs; ++k) {
      int64_t gi = real + k;
      int64_t n = leftNodes / padGraphs + (k < leftNodes % padGraphs ? 1 : 0);
      int64_t m = leftEdges / padGraphs + (k < leftEdges % padGraphs ? 1 : 0);
      p[gi] = node;
      ep[gi] = edge;
      std::fill(bv + node, bv + node + n, gi);
      std::fill(src + edge, src + edge + m, node);
      std::fill(dst + edge, dst + edge + m, node);
      node += n;
      edge += m;
    }
  }
  p[numGraphs] = node;
  ep[numGraphs] = edge;
  GNN_ASSERT(node == numNodes && edge == numEdges, "padding rows miscounted");

  b.edgeIndex = ei;
  b.batch = batchVec;
  b.ptr = ptr;
  b.edgePtr = edgePtr;
  b.graphsMask = gm;
  b.nodesMask = nm;
  b.edgesMask = em;
  return b;
}

}  // namespace

FixedSizeCollator::FixedSizeCollator(FixedSizeOptions options, bool nodeLevelTargets)
    : options_(options), nodeLevelTargets_(nodeLevelTargets) {
  options_.validate();
}

bool FixedSizeCollator::fits(int64_t nodes, int64_t edges, int64_t count) const {
  int64_t padGraphs = options_.numGraphs - count;
  return padGraphs >= 1 && nodes + padGraphs <= options_.numNodes && edges + padGraphs <= options_.numEdges;
}

Batch FixedSizeCollator::collate(const std::vector<const Graph*>& graphs, const std::vector<int64_t>& indices) const {
  return collateImpl(graphs, indices, options_.numNodes, options_.numEdges, options_.numGraphs, &options_,
                     nodeLevelTargets_);
}

Batch FixedSizeCollator::collate(const std::vector<Graph>& graphs, const std::vector<int64_t>& indices) const {
  std::vector<const Graph*> ptrs;
  ptrs.reserve(graphs.size());
  for (const Graph& g : graphs) ptrs.push_back(&g);
  return collate(ptrs, indices);
}

Batch FixedSizeCollator::concatenate(const std::vector<const Graph*>& graphs, const std::vector<int64_t>& indices,
                                     bool nodeLevelTargets) {
  int64_t n = 0, m = 0;
  for (const Graph* g : graphs) {
    n += g->numNodes;
    m += g->numEdges();
  }
  return collateImpl(graphs, indices, n, m, static_cast<int64_t>(graphs.size()), nullptr, nodeLevelTargets);
}

}  // namespace gnn
