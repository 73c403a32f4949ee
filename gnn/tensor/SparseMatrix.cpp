#include "gnn/tensor/SparseMatrix.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace gnn {

SparseMatrix SparseMatrix::fromCoo(int64_t rows, int64_t cols, const std::vector<int64_t>& rowIdx,
                                   const std::vector<int64_t>& colIdx, const std::vector<double>& values,
                                   DType dtype) {
  GNN_CHECK_ARG(rowIdx.size() == colIdx.size() && rowIdx.size() == values.size(),
                "SparseMatrix::fromCoo: row, column and value arrays differ in length (", rowIdx.size(), ", ",
                colIdx.size(), ", ", values.size(), ")");
  GNN_CHECK_ARG(cols <= INT32_MAX, "SparseMatrix: more than 2^31 columns");
  for (size_t k = 0; k < rowIdx.size(); ++k)
    GNN_CHECK_ARG(rowIdx[k] >= 0 && rowIdx[k] < rows && colIdx[k] >= 0 && colIdx[k] < cols,
                  "SparseMatrix::fromCoo: entry ", k, " at (", rowIdx[k], ", ", colIdx[k], ") is outside [", rows,
                  ", ", cols, "]");
  // The entries by (row, column), equal ones in input order. Two stable counting passes (by column, then by row)
  // give exactly std::stable_sort's order in O(nnz + rows + cols); the comparison sort stays for very wide
  // matrices, whose column counts would outweigh the entries. ChebConv builds its Laplacian every forward: at 100k
  // edges the sort was most of its step.
  const size_t nnz = rowIdx.size();
  std::vector<size_t> order(nnz);
  if (static_cast<uint64_t>(cols) <= 4 * static_cast<uint64_t>(nnz) + 1024 &&
      static_cast<uint64_t>(rows) <= 4 * static_cast<uint64_t>(nnz) + 1024) {
    std::vector<size_t> byCol(nnz), count(static_cast<size_t>(std::max(rows, cols)) + 1);
    auto pass = [&](const std::vector<int64_t>& key, int64_t range, const size_t* from, size_t* to) {
      std::fill(count.begin(), count.begin() + range + 1, size_t{0});
      for (size_t k = 0; k < nnz; ++k) ++count[static_cast<size_t>(key[from ? from[k] : k]) + 1];
      for (int64_t r = 0; r < range; ++r) count[static_cast<size_t>(r) + 1] += count[static_cast<size_t>(r)];
      for (size_t k = 0; k < nnz; ++k) {
        const size_t e = from ? from[k] : k;
        to[count[static_cast<size_t>(key[e])]++] = e;
      }
    };
    pass(colIdx, cols, nullptr, byCol.data());
    pass(rowIdx, rows, byCol.data(), order.data());
  } else {
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return rowIdx[a] != rowIdx[b] ? rowIdx[a] < rowIdx[b] : colIdx[a] < colIdx[b];
    });
  }
  std::vector<int64_t> rp(static_cast<size_t>(rows) + 1, 0);
  std::vector<int32_t> ci;
  std::vector<double> vals;
  for (size_t k = 0; k < order.size(); ++k) {
    size_t o = order[k];
    if (k > 0 && rowIdx[o] == rowIdx[order[k - 1]] && colIdx[o] == colIdx[order[k - 1]]) {
      vals.back() += values[o];  // duplicates are summed
      continue;
    }
    ci.push_back(static_cast<int32_t>(colIdx[o]));
    vals.push_back(values[o]);
    ++rp[rowIdx[o] + 1];
  }
  for (int64_t r = 0; r < rows; ++r) rp[r + 1] += rp[r];
  Tensor v = Tensor::fromVector(vals).to(dtype);
  return fromCsr(rows, cols, std::move(rp), std::move(ci), std::move(v));
}

SparseMatrix SparseMatrix::fromCsr(int64_t rows, int64_t cols, std::vector<int64_t> rowPtr,
                                   std::vector<int32_t> colIdx, Tensor values) {
  GNN_CHECK_ARG(static_cast<int64_t>(rowPtr.size()) == rows + 1 && rowPtr.front() == 0 &&
                    rowPtr.back() == static_cast<int64_t>(colIdx.size()),
                "SparseMatrix::fromCsr: row pointer of length ", rowPtr.size(), " does not fit ", rows, " rows and ",
                colIdx.size(), " entries");
  GNN_CHECK_ARG(values.isFloating() && values.numel() == static_cast<int64_t>(colIdx.size()),
                "SparseMatrix::fromCsr: need ", colIdx.size(), " float values, got ", values.numel(), " ",
                dtypeName(values.dtype()));
  for (int64_t r = 0; r < rows; ++r)
    GNN_CHECK_ARG(rowPtr[r] <= rowPtr[r + 1], "SparseMatrix::fromCsr: row pointer decreases at row ", r);
  for (int32_t c : colIdx) GNN_CHECK_ARG(c >= 0 && c < cols, "SparseMatrix::fromCsr: column ", c, " >= ", cols);
  SparseMatrix m;
  m.rows_ = rows;
  m.cols_ = cols;
  m.pattern_->rowPtr = std::move(rowPtr);
  m.pattern_->colIdx = std::move(colIdx);
  m.values_ = std::move(values);
  return m;
}

SparseMatrix SparseMatrix::withValues(Tensor values) const {
  GNN_CHECK_ARG(values.numel() == nnz() && values.isFloating(), "SparseMatrix::withValues: need ", nnz(),
                " float values, got ", values.numel());
  SparseMatrix m;
  m.rows_ = rows_;
  m.cols_ = cols_;
  m.values_ = std::move(values);
  m.pattern_ = pattern_;
  return m;
}

SparseMatrix SparseMatrix::rowNormalized() const {
  const auto& rowPtr_ = pattern_->rowPtr;
  Tensor v = values_.clone();
  dispatchFloat(v.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* p = v.data<T>();
    for (int64_t r = 0; r < rows_; ++r) {
      T s = 0;
      for (int64_t k = rowPtr_[r]; k < rowPtr_[r + 1]; ++k) s += p[k];
      if (s != 0)
        for (int64_t k = rowPtr_[r]; k < rowPtr_[r + 1]; ++k) p[k] /= s;
    }
  });
  return withValues(std::move(v));
}

bool SparseMatrix::symmetric() const {
  std::call_once(transposed_->symmetricOnce, [this] {
    if (rows_ != cols_) return;
    const int64_t* rp = pattern_->rowPtr.data();
    const int32_t* ci = pattern_->colIdx.data();
    // One pass in row order. The mirror of entry (r, c) above the diagonal is (c, r) below it, and as r grows
    // the mirrors asked of row c come in its column order: a cursor per row walks its entries below the
    // diagonal, each of which must be the next mirror asked for, with the same bits, and all of them asked for
    // by the time row c is read. Each entry is visited once (no search), nothing is copied; columns must be
    // strictly increasing within a row. Sequential: a cursor moves in row order.
    bool ok = true;
    dispatchFloat(values_.dtype(), [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      const T* v = values_.data<T>();
      std::vector<int64_t> next(rp, rp + rows_);
      for (int64_t r = 0; r < rows_ && ok; ++r) {
        // Every mirror row r can be asked for came from a row above it: its cursor must have passed all of its
        // entries below the diagonal.
        if (next[r] < rp[r + 1] && ci[next[r]] < r) {
          ok = false;
          break;
        }
        for (int64_t k = rp[r]; k < rp[r + 1]; ++k) {
          const int32_t c = ci[k];
          if (k > rp[r] && ci[k - 1] >= c) {
            ok = false;
            break;
          }
          if (c <= r) continue;
          const int64_t m = next[c];
          if (m >= rp[c + 1] || ci[m] != r || std::memcmp(&v[k], &v[m], sizeof(T)) != 0) {
            ok = false;
            break;
          }
          ++next[c];
        }
      }
    });
    transposed_->symmetric = ok;
  });
  return transposed_->symmetric;
}

const SparseMatrix& SparseMatrix::transposed() const {
  if (symmetric()) return *this;
  std::call_once(pattern_->once, [this] {
    Pattern& p = *pattern_;
    const auto& rowPtr_ = p.rowPtr;
    const auto& colIdx_ = p.colIdx;
    p.tRowPtr.assign(static_cast<size_t>(cols_) + 1, 0);
    for (int32_t c : colIdx_) ++p.tRowPtr[c + 1];
    for (int64_t c = 0; c < cols_; ++c) p.tRowPtr[c + 1] += p.tRowPtr[c];
    p.tColIdx.resize(colIdx_.size());
    p.tPerm.resize(colIdx_.size());
    std::vector<int64_t> fill(p.tRowPtr.begin(), p.tRowPtr.end() - 1);
    for (int64_t r = 0; r < rows_; ++r)
      for (int64_t k = rowPtr_[r]; k < rowPtr_[r + 1]; ++k) {
        int64_t d = fill[colIdx_[k]]++;
        p.tColIdx[d] = static_cast<int32_t>(r);
        p.tPerm[d] = k;
      }
  });
  std::call_once(transposed_->once, [this] {
    const Pattern& p = *pattern_;
    Tensor tv = Tensor::empty(values_.shape(), values_.dtype());
    dispatchFloat(values_.dtype(), [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      const T* src = values_.data<T>();
      T* dst = tv.data<T>();
      for (size_t d = 0; d < p.tPerm.size(); ++d) dst[d] = src[p.tPerm[d]];
    });
    auto t = std::make_shared<SparseMatrix>();
    t->rows_ = cols_;
    t->cols_ = rows_;
    t->pattern_->rowPtr = p.tRowPtr;
    t->pattern_->colIdx = p.tColIdx;
    t->values_ = std::move(tv);
    transposed_->matrix = std::move(t);
  });
  return *transposed_->matrix;
}

Tensor SparseMatrix::toDense() const {
  const auto& rowPtr_ = pattern_->rowPtr;
  const auto& colIdx_ = pattern_->colIdx;
  Tensor d({rows_, cols_}, values_.dtype());
  dispatchFloat(d.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    auto m = d.matrix<T>();
    const T* v = values_.data<T>();
    for (int64_t r = 0; r < rows_; ++r)
      for (int64_t k = rowPtr_[r]; k < rowPtr_[r + 1]; ++k) m(r, colIdx_[k]) += v[k];
  });
  return d;
}

}  // namespace gnn
