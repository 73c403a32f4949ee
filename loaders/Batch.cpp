#include "loaders/Batch.h"

#include <cstring>

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

Tensor stackRows(const std::vector<Batch>& parts, Tensor Batch::*field) {
  const Tensor& first = parts.front().*field;
  if (!first.defined()) return Tensor();
  Shape shape = first.shape();
  shape[0] = 0;
  for (const Batch& p : parts) {
    const Tensor& t = p.*field;
    GNN_CHECK_ARG(t.defined() && t.dtype() == first.dtype() && t.rank() == first.rank() && t.cols() == first.cols(),
                  "stackMicroBatches: micro-batches disagree on a field (", shapeString(first.shape()), " vs ",
                  t.defined() ? shapeString(t.shape()) : std::string("undefined"), ")");
    shape[0] += t.dim(0);
  }
  Tensor out(shape, first.dtype());
  auto* dst = static_cast<unsigned char*>(out.raw());
  for (const Batch& p : parts) {
    const Tensor& t = p.*field;
    std::memcpy(dst, t.raw(), t.nbytes());
    dst += t.nbytes();
  }
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
  if (x.defined()) GNN_CHECK_ARG(x.dim(0) == numNodes, "Batch: x has ", x.dim(0), " rows, expected ", numNodes);
  if (edgeAttr.defined())
    GNN_CHECK_ARG(edgeAttr.dim(0) == numEdges, "Batch: edge_attr has ", edgeAttr.dim(0), " rows, expected ", numEdges);
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
  Batch s;
  int64_t k = static_cast<int64_t>(parts.size());
  s.numNodes = f.numNodes * k;
  s.numEdges = f.numEdges * k;
  s.numGraphs = f.numGraphs * k;
  for (const Batch& p : parts) {
    s.numRealNodes += p.numRealNodes;
    s.numRealEdges += p.numRealEdges;
    s.numRealGraphs += p.numRealGraphs;
    s.graphIndex.insert(s.graphIndex.end(), p.graphIndex.begin(), p.graphIndex.end());
    s.nodeIndex.insert(s.nodeIndex.end(), p.nodeIndex.begin(), p.nodeIndex.end());
  }
  for (Tensor Batch::*field : {&Batch::x, &Batch::edgeAttr, &Batch::y, &Batch::yMask, &Batch::pos, &Batch::z,
                               &Batch::trainMask, &Batch::validMask, &Batch::testMask, &Batch::batch, &Batch::ptr,
                               &Batch::edgePtr, &Batch::graphsMask, &Batch::nodesMask, &Batch::edgesMask})
    s.*field = stackRows(parts, field);
  // edge_index stays [2, K·E] (PopTorch's layout): micro-batch i owns columns [i·E, (i+1)·E) of both rows.
  Tensor ei({2, s.numEdges}, DType::I64);
  int64_t* dst = ei.data<int64_t>();
  for (int64_t i = 0; i < k; ++i) {
    const int64_t* src = parts[i].edgeIndex.data<int64_t>();
    std::memcpy(dst + i * f.numEdges, src, sizeof(int64_t) * f.numEdges);
    std::memcpy(dst + s.numEdges + i * f.numEdges, src + f.numEdges, sizeof(int64_t) * f.numEdges);
  }
  s.edgeIndex = ei;
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
  for (Tensor Batch::*field : {&Batch::x, &Batch::edgeAttr, &Batch::y, &Batch::yMask, &Batch::pos, &Batch::z,
                               &Batch::trainMask, &Batch::validMask, &Batch::testMask, &Batch::batch, &Batch::graphsMask,
                               &Batch::nodesMask, &Batch::edgesMask})
    b.*field = sliceRows(st.*field, k, count);
  b.ptr = st.ptr.slice(k * (b.numGraphs + 1), (k + 1) * (b.numGraphs + 1));
  b.edgePtr = st.edgePtr.slice(k * (b.numGraphs + 1), (k + 1) * (b.numGraphs + 1));
  Tensor ei({2, b.numEdges}, DType::I64);
  const int64_t* src = st.edgeIndex.data<int64_t>();
  std::memcpy(ei.data<int64_t>(), src + k * b.numEdges, sizeof(int64_t) * b.numEdges);
  std::memcpy(ei.data<int64_t>() + b.numEdges, src + st.numEdges + k * b.numEdges, sizeof(int64_t) * b.numEdges);
  b.edgeIndex = ei;
  b.numRealNodes = countOnes(b.nodesMask);
  b.numRealEdges = countOnes(b.edgesMask);
  b.numRealGraphs = countOnes(b.graphsMask);
  int64_t before = countOnes(st.graphsMask.slice(0, k * b.numGraphs));
  if (static_cast<int64_t>(st.graphIndex.size()) >= before + b.numRealGraphs)
    b.graphIndex.assign(st.graphIndex.begin() + before, st.graphIndex.begin() + before + b.numRealGraphs);
  return b;
}

}  // namespace gnn
