// SparseMatrix::fromCoo: the CSR form of any list of entries (rows sorted, columns sorted within a row, duplicates
// summed in input order), by the counting sort (matrices no wider than their entries) and by the comparison sort
// (very wide ones) alike, checked against a plain map of the entries.
#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "gnn/system/Random.h"
#include "gnn/tensor/SparseMatrix.h"

namespace gnn {
namespace {

void expectCsrOf(int64_t rows, int64_t cols, int64_t nnz, uint64_t seed) {
  Generator g(seed);
  std::vector<int64_t> r(static_cast<size_t>(nnz)), c(static_cast<size_t>(nnz));
  std::vector<double> v(static_cast<size_t>(nnz));
  // Entries drawn from a few rows and columns, so many repeat (and are summed).
  const uint64_t rowRange = static_cast<uint64_t>(std::min<int64_t>(rows, 40));
  for (int64_t k = 0; k < nnz; ++k) {
    r[static_cast<size_t>(k)] = static_cast<int64_t>(g.nextBelow(rowRange)) * (rows / static_cast<int64_t>(rowRange));
    c[static_cast<size_t>(k)] = static_cast<int64_t>(g.nextBelow(50)) * (cols / 50);
    v[static_cast<size_t>(k)] = 1.0 / static_cast<double>(1 + g.nextBelow(7));
  }
  std::map<std::pair<int64_t, int64_t>, double> want;  // summed in input order, as fromCoo does
  for (int64_t k = 0; k < nnz; ++k) want[{r[static_cast<size_t>(k)], c[static_cast<size_t>(k)]}] += v[static_cast<size_t>(k)];
  const SparseMatrix m = SparseMatrix::fromCoo(rows, cols, r, c, v, DType::F64);
  ASSERT_EQ(m.nnz(), static_cast<int64_t>(want.size()));
  auto it = want.begin();
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t k = m.rowPtr()[static_cast<size_t>(row)]; k < m.rowPtr()[static_cast<size_t>(row) + 1]; ++k, ++it) {
      ASSERT_EQ(it->first.first, row);
      ASSERT_EQ(it->first.second, m.colIdx()[static_cast<size_t>(k)]);
      ASSERT_EQ(it->second, m.values().at(k));  // the same additions in the same order: the same bits
    }
}

TEST(SparseMatrix, FromCooSortsAndSumsLikeAMapByCountingAndByComparison) {
  expectCsrOf(100, 100, 3000, 1);           // counting sort
  expectCsrOf(40, 5000000, 300, 2);         // 5M columns over 300 entries: the comparison sort
  expectCsrOf(1, 1, 10, 3);                 // one cell, every entry a duplicate
}

}  // namespace
}  // namespace gnn
