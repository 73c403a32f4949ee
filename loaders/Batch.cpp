#include "loaders/Batch.h"

#include <cstring>

#include "loaders/BatchFields.h"

namespace gnn {
namespace {

int64_t countOnes(const Tensor& mask) {
  const uint8_t* m = mask.data<uint8_t>();
  int64_t n = 0;
  for (int64_t i = 0; i < mask.numel(); ++i) n += m[i] != 0;
  return n;
}

// Rows [k·rows, (k+1)·rows) of a stacked tensor; edge_index is [2, K·E] so it is sliced by columns instead.
Tensor sliceRows(const Tensor& t, int64_t k, int64_t count) {
  if (!t.defined()) return t;
  int64_t rows = t.dim(0) / count;
  return t.slice(k * rows, (k + 1) * rows);
}

// Concatenation along dimension 0 (axis 0) or, for edge_index's [2, E], along dimension 1: every part is
// [2, E] and part i owns columns [i·E, (i+1)·E) of both rows.
Tensor stackParts(const std::vector<Batch>& parts, Tensor Batch::*field, const char* name, bool columns) {
  const Tensor& first = parts.front().*field;
  for (const Batch& p : parts) {
    const Tensor& t = p.*field;
    GNN_CHECK_ARG(t.defined() == first.defined(), "stackMicroBatches: ", name, " is in some micro-batches but not in others");
    if (!t.defined()) continue;
    GNN_CHECK_ARG(t.dtype() == first.dtype() && t.rank() == first.rank() && t.cols() == first.cols() &&
                      (!columns || t.dim(1) == first.dim(1)),
                  "stackMicroBatches: micro-batches disagree on ", name, " (", shapeString(first.shape()), " vs ",
                  shapeString(t.shape()), ")");
  }
  if (!first.defined()) return Tensor();
  Shape shape = first.shape();
  const int64_t k = static_cast<int64_t>(parts.size());
  if (columns) {
    shape[1] *= k;
    Tensor out(shape, first.dtype());
    const size_t half = first.nbytes() / 2;  // one row of [2, E]
    auto* dst = static_cast<unsigned char*>(out.raw());
    for (int64_t i = 0; i < k; ++i) {
      const auto* src = static_cast<const unsigned char*>((parts[i].*field).raw());
      std::memcpy(dst + i * half, src, half);
      std::memcpy(dst + k * half + i * half, src + half, half);
    }
    return out;
  }
  shape[0] = 0;
  for (const Batch& p : parts) shape[0] += (p.*field).dim(0);
  Tensor out(shape, first.dtype());
  auto* dst = static_cast<unsigned char*>(out.raw());
  for (const Batch& p : parts) {
    const Tensor& t = p.*field;
    std::memcpy(dst, t.raw(), t.nbytes());
    dst += t.nbytes();
  }
  return out;
}

// Columns [k·E, (k+1)·E) of a stacked [2, K·E] tensor, copied.
Tensor sliceColumns(const Tensor& t, int64_t k, int64_t count) {
  if (!t.defined()) return t;
  const int64_t e = t.dim(1) / count;
  Tensor out({2, e}, t.dtype());
  const size_t bytes = static_cast<size_t>(e) * dtypeSize(t.dtype());
  const auto* src = static_cast<const unsigned char*>(t.raw());
  auto* dst = static_cast<unsigned char*>(out.raw());
  std::memcpy(dst, src + k * bytes, bytes);
  std::memcpy(dst + bytes, src + static_cast<size_t>(t.dim(1)) * dtypeSize(t.dtype()) + k * bytes, bytes);
  return out;
}

}  // namespace

void Batch::validate() const {
  GNN_CHECK_ARG(numGraphs >= 1 && numRealGraphs <= numGraphs && numRealNodes <= numNodes && numRealEdges <= numEdges,
                "Batch: inconsistent counts");
  GNN_CHECK_ARG(batch.defined() && batch.numel() == numNodes, "Batch: `batch` has ", batch.numel(), " rows, expected ",
                numNodes);
  GNN_CHECK_ARG(ptr.numel() == numGraphs + 1 && edgePtr.numel() == numGraphs + 1, "Batch: ptr/edgePtr must have ",
                numGraphs + 1, " entries");
  GNN_CHECK_ARG(edgeIndex.defined() && edgeIndex.dim(0) == 2 && edgeIndex.dim(1) == numEdges,
                "Batch: edge_index has shape ", shapeString(edgeIndex.shape()), ", expected [2, ", numEdges, "]");
  for (const BatchField& f : batchFields()) {
    const Tensor& t = this->*f.inBatch;
    if (!t.defined() || f.nodeIds) continue;
    switch (f.level) {
      case FieldLevel::Node:
        GNN_CHECK_ARG(t.rank() >= 1 && t.dim(0) == numNodes, "Batch: node field ", f.name, " has shape ",
                      shapeString(t.shape()), ", expected ", numNodes, " rows");
        break;
      case FieldLevel::Edge:
        GNN_CHECK_ARG(t.rank() >= 1 && t.dim(0) == numEdges, "Batch: edge field ", f.name, " has shape ",
                      shapeString(t.shape()), ", expected ", numEdges, " rows");
        break;
      case FieldLevel::Graph:  // targets: one row per graph, or per node for node-level tasks
        GNN_CHECK_ARG(t.rank() >= 1 && (t.dim(0) == numGraphs || t.dim(0) == numNodes), "Batch: ", f.name,
                      " has shape ", shapeString(t.shape()), ", expected ", numGraphs, " rows (or ", numNodes,
                      " for node-level targets)");
        break;
      case FieldLevel::NodePair:
        GNN_CHECK_ARG(maxNodesPerGraph >= 1 && t.rank() >= 2 && t.dim(0) == numGraphs * maxNodesPerGraph &&
                          t.dim(1) == maxNodesPerGraph,
                      "Batch: node-pair field ", f.name, " has shape ", shapeString(t.shape()), ", expected [",
                      numGraphs, "·", maxNodesPerGraph, ", ", maxNodesPerGraph, ", ...]");
        break;
    }
  }
  if (yMask.defined())
    GNN_CHECK_ARG(y.defined() && yMask.shape() == y.shape(), "Batch: y_mask shape differs from y's");
  GNN_CHECK_ARG(graphsMask.numel() == numGraphs && nodesMask.numel() == numNodes && edgesMask.numel() == numEdges,
                "Batch: mask sizes differ from the row counts");
  GNN_CHECK_ARG(countOnes(graphsMask) == numRealGraphs && countOnes(nodesMask) == numRealNodes &&
                    countOnes(edgesMask) == numRealEdges,
                "Batch: masks do not mark exactly the real rows");
  const int64_t* p = ptr.data<int64_t>();
  const int64_t* ep = edgePtr.data<int64_t>();
  const int64_t* b = batch.data<int64_t>();
  const int64_t* e = edgeIndex.data<int64_t>();
  const uint8_t* gm = graphsMask.data<uint8_t>();
  const uint8_t* nm = nodesMask.data<uint8_t>();
  const uint8_t* em = edgesMask.data<uint8_t>();
  GNN_CHECK_ARG(p[0] == 0 && p[numGraphs] == numNodes && ep[0] == 0 && ep[numGraphs] == numEdges,
                "Batch: ptr/edgePtr do not span the rows");
  for (int64_t g = 0; g < numGraphs; ++g) {
    GNN_CHECK_ARG(p[g] <= p[g + 1] && ep[g] <= ep[g + 1], "Batch: ptr not sorted at graph ", g);
    GNN_CHECK_ARG((gm[g] != 0) == (g < numRealGraphs), "Batch: graphsMask wrong at graph ", g,
                  " (real graphs must come first)");
    if (gm[g] && (spatialPos.defined() || edgeInput.defined()))
      GNN_CHECK_ARG(p[g + 1] - p[g] <= maxNodesPerGraph, "Batch: graph ", g, " has ", p[g + 1] - p[g],
                    " nodes, more than its node-pair block's ", maxNodesPerGraph);
    for (int64_t i = p[g]; i < p[g + 1]; ++i) {
      GNN_CHECK_ARG(b[i] == g, "Batch: batch[", i, "] = ", b[i], ", expected ", g);
      GNN_CHECK_ARG(nm[i] == gm[g], "Batch: nodesMask[", i, "] disagrees with its graph's mask");
    }
    for (int64_t j = ep[g]; j < ep[g + 1]; ++j) {
      GNN_CHECK_ARG(em[j] == gm[g], "Batch: edgesMask[", j, "] disagrees with its graph's mask");
      for (int r = 0; r < 2; ++r)
        GNN_CHECK_ARG(e[r * numEdges + j] >= p[g] && e[r * numEdges + j] < p[g + 1], "Batch: edge ", j,
                      " leaves its graph ", g);
      if (!gm[g]) GNN_CHECK_ARG(e[j] == p[g] && e[numEdges + j] == p[g], "Batch: pad edge ", j,
                                " is not a self-loop on its pad graph's first node");
    }
  }
}

Batch stackMicroBatches(const std::vector<Batch>& parts) {
  GNN_CHECK_ARG(!parts.empty(), "stackMicroBatches: no micro-batches");
  const Batch& f = parts.front();
  for (const Batch& p : parts)
    GNN_CHECK_ARG(p.numNodes == f.numNodes && p.numEdges == f.numEdges && p.numGraphs == f.numGraphs,
                  "stackMicroBatches: micro-batches must share their fixed sizes, got [", p.numNodes, ", ", p.numEdges,
                  ", ", p.numGraphs, "] and [", f.numNodes, ", ", f.numEdges, ", ", f.numGraphs, "]");
  for (const Batch& p : parts)
    GNN_CHECK_ARG(p.maxNodesPerGraph == f.maxNodesPerGraph, "stackMicroBatches: micro-batches have node-pair blocks of ",
                  p.maxNodesPerGraph, " and ", f.maxNodesPerGraph, " nodes");
  Batch s;
  int64_t k = static_cast<int64_t>(parts.size());
  s.maxNodesPerGraph = f.maxNodesPerGraph;
  s.numNodes = f.numNodes * k;
  s.numEdges = f.numEdges * k;
  s.numGraphs = f.numGraphs * k;
  for (const Batch& p : parts) {
    s.numRealNodes += p.numRealNodes;
    s.numRealEdges += p.numRealEdges;
    s.numRealGraphs += p.numRealGraphs;
    s.graphIndex.insert(s.graphIndex.end(), p.graphIndex.begin(), p.graphIndex.end());
    s.nodeIndex.insert(s.nodeIndex.end(), p.nodeIndex.begin(), p.nodeIndex.end());
    s.numSeeds += p.numSeeds;
    s.inputId.insert(s.inputId.end(), p.inputId.begin(), p.inputId.end());
  }
  for (const BatchField& f : batchFields()) s.*f.inBatch = stackParts(parts, f.inBatch, f.name, f.nodeIds);
  for (const CollatorField& f : collatorFields()) s.*f.inBatch = stackParts(parts, f.inBatch, f.name, false);
  return s;
}

Batch microBatch(const Batch& st, int64_t k, int64_t count) {
  GNN_CHECK_ARG(count >= 1 && k >= 0 && k < count && st.numNodes % count == 0 && st.numEdges % count == 0 &&
                    st.numGraphs % count == 0,
                "microBatch: cannot take part ", k, " of ", count, " from a stack of ", st.numNodes, " nodes");
  Batch b;
  b.numNodes = st.numNodes / count;
  b.numEdges = st.numEdges / count;
  b.numGraphs = st.numGraphs / count;
  b.maxNodesPerGraph = st.maxNodesPerGraph;
  for (const BatchField& f : batchFields())
    b.*f.inBatch = f.nodeIds ? sliceColumns(st.*f.inBatch, k, count) : sliceRows(st.*f.inBatch, k, count);
  // ptr and edgePtr have numGraphs + 1 entries per micro-batch: dimension 0 still splits evenly.
  for (const CollatorField& f : collatorFields()) b.*f.inBatch = sliceRows(st.*f.inBatch, k, count);
  b.numRealNodes = countOnes(b.nodesMask);
  b.numRealEdges = countOnes(b.edgesMask);
  b.numRealGraphs = countOnes(b.graphsMask);
  int64_t before = countOnes(st.graphsMask.slice(0, k * b.numGraphs));
  if (static_cast<int64_t>(st.graphIndex.size()) >= before + b.numRealGraphs)
    b.graphIndex.assign(st.graphIndex.begin() + before, st.graphIndex.begin() + before + b.numRealGraphs);
  return b;
}

}  // namespace gnn
