// SparseMatrix: a constant CSR matrix (float32 or float64 values) used on the left of sparse-dense products:
// the normalised adjacency of GCN, or sparse bag-of-words node features (Cora). Its transpose, needed by
// the backward of spmm, is built once on first use and cached.
//
//   SparseMatrix a = SparseMatrix::fromCoo(rows, cols, src, dst, values);   // duplicates are summed
//   Variable y = spmm(a, x);                                                // ops/GraphOps.cpp
#pragma once
#include <memory>
#include <mutex>
#include <vector>

#include "gnn/tensor/Tensor.h"

namespace gnn {

class SparseMatrix {
 public:
  SparseMatrix() = default;
  /// From coordinates (any order; duplicates summed; within a row, columns end up sorted).
  static SparseMatrix fromCoo(int64_t rows, int64_t cols, const std::vector<int64_t>& rowIdx,
                              const std::vector<int64_t>& colIdx, const std::vector<double>& values,
                              DType dtype = DType::F32);
  /// From CSR arrays (validated).
  static SparseMatrix fromCsr(int64_t rows, int64_t cols, std::vector<int64_t> rowPtr, std::vector<int32_t> colIdx,
                              Tensor values);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t nnz() const { return static_cast<int64_t>(pattern_->colIdx.size()); }
  DType dtype() const { return values_.dtype(); }
  const std::vector<int64_t>& rowPtr() const { return pattern_->rowPtr; }
  const std::vector<int32_t>& colIdx() const { return pattern_->colIdx; }
  const Tensor& values() const { return values_; }

  /// Same pattern, new values (e.g. dropout on the non-zeros).
  SparseMatrix withValues(Tensor values) const;
  /// Same pattern and values in another float dtype.
  SparseMatrix to(DType dtype) const { return withValues(values_.to(dtype)); }
  /// Rows scaled to sum to one (PyG's NormalizeFeatures; rows summing to zero are left as they are).
  SparseMatrix rowNormalized() const;
  /// Whether the matrix equals its transpose bit for bit (a GCN adjacency of an undirected graph: every edge
  /// listed both ways). Checked once per matrix (rows in parallel, the same answer for any thread count).
  bool symmetric() const;
  /// The transpose, built once and cached (thread-safe). A symmetric matrix is its own transpose: nothing is
  /// built (a transpose in CSR costs 16 bytes per non-zero and a scatter over all of them), and products with it
  /// have the bits a built transpose gives (its rows list the same columns in the same order, same values).
  const SparseMatrix& transposed() const;
  /// Dense copy, for tests.
  Tensor toDense() const;

 private:
  int64_t rows_ = 0, cols_ = 0;
  Tensor values_;
  // The pattern, and its transpose once built, are shared by every matrix made from this one by withValues
  // (dropout on the non-zeros makes a new matrix each step: no copy of the pattern, and its transpose
  // costs one gather, not a counting sort).
  struct Pattern {
    std::vector<int64_t> rowPtr{0};
    std::vector<int32_t> colIdx;
    std::once_flag once;
    std::vector<int64_t> tRowPtr, tPerm;
    std::vector<int32_t> tColIdx;
  };
  struct Transposed {
    std::once_flag once, symmetricOnce;
    std::shared_ptr<SparseMatrix> matrix;
    bool symmetric = false;
  };
  std::shared_ptr<Pattern> pattern_ = std::make_shared<Pattern>();
  std::shared_ptr<Transposed> transposed_ = std::make_shared<Transposed>();
};

}  // namespace gnn
