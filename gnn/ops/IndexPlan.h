// IndexPlan: the index handling the graph ops share: a checked int64 copy of an index (what a backward saves,
// never the caller's tensor, which a device may overwrite in place before the backward runs) and the rows grouped
// by the index's value (a stable counting sort: each group in position order), which every deterministic reduction
// walks.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "gnn/system/Check.h"
#include "gnn/tensor/Tensor.h"

namespace gnn::ops {

// A checked int64 copy of an index: the ops read it, and their backward saves this copy (never the caller's
// tensor, which a device may overwrite in place before the backward runs).
inline Tensor indexValues(const char* op, const Tensor& index, int64_t limit) {
  GNN_CHECK_ARG(index.rank() == 1, op, ": index must be rank 1, got ", shapeString(index.shape()));
  Tensor out = Tensor::empty({index.numel()}, DType::I64);
  int64_t* v = out.data<int64_t>();
  dispatchIndex(index.dtype(), [&](auto* tag) {
    using I = std::remove_pointer_t<decltype(tag)>;
    const I* p = index.data<I>();
    for (int64_t i = 0; i < index.numel(); ++i) {
      GNN_CHECK_ARG(p[i] >= 0 && p[i] < limit, op, ": index ", p[i], " at position ", i, " is outside [0, ", limit,
                    ")");
      v[i] = p[i];
    }
  });
  return out;
}

// Rows grouped by target: bucket r holds positions perm[ptr[r]..ptr[r+1]) in increasing order (stable).
struct IndexPlan {
  std::vector<int64_t> ptr, perm;
};
// index: int64 values already checked against numOut (indexValues).
inline IndexPlan planFor(const Tensor& index, int64_t numOut) {
  const int64_t* idx = index.data<int64_t>();
  const size_t n = static_cast<size_t>(index.numel());
  IndexPlan p;
  p.ptr.assign(static_cast<size_t>(numOut) + 1, 0);
  for (size_t i = 0; i < n; ++i) ++p.ptr[idx[i] + 1];
  for (int64_t r = 0; r < numOut; ++r) p.ptr[r + 1] += p.ptr[r];
  p.perm.resize(n);
  std::vector<int64_t> fill(p.ptr.begin(), p.ptr.end() - 1);
  for (size_t i = 0; i < n; ++i) p.perm[fill[idx[i]]++] = static_cast<int64_t>(i);
  return p;
}

/// The rows of an index grouped by value as tensors: the gather order (int64 [E]) and the groups' row pointers
/// (int64 [numOut + 1]), for segment ops over the gathered rows.
inline std::pair<Tensor, Tensor> groupedRows(const char* op, const Tensor& index, int64_t numOut) {
  const IndexPlan plan = planFor(indexValues(op, index, numOut), numOut);
  Tensor perm = plan.perm.empty() ? Tensor::zeros({0}, DType::I64) : Tensor::fromVector(plan.perm);
  return {perm, Tensor::fromVector(plan.ptr)};
}

}  // namespace gnn::ops
