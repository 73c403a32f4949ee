// The loop of message sums with a product per message (filterMessageSum's forward, its gradient for x and for
// indexed filters): per output row, the elementwise products of two gathered rows summed over the row's bucket
// in bucket order from 0. Parallel over output rows in chunks fixed by the shapes, so results do not depend on
// the thread count.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "gnn/Parallel.h"
#include "gnn/Tensor.h"

namespace gnn::ops {

/// out.row(r) = sum over k in [ptr[r], ptr[r + 1]) of a.row(rowOfA(e)) * b.row(rowOfB(e)) elementwise, with
/// e = perm[k], summed in k order from 0: scatterSum(mul(gatherRows(a), gatherRows(b))) without its [items, F]
/// intermediates. `items` = perm's length (it sizes the parallel chunks). rowOfA and rowOfB are template
/// parameters (lambdas) so that the loop inlines into each op as if written there.
template <class T, class RowOfA, class RowOfB>
void gatherMultiplySum(ConstMatrixMap<T> a, RowOfA rowOfA, ConstMatrixMap<T> b, RowOfB rowOfB,
                       const std::vector<int64_t>& ptr, const std::vector<int64_t>& perm, int64_t items,
                       MatrixMap<T> out) {
  const int64_t rows = out.rows();
  parallelFor(rows, grainFor(std::max<int64_t>(1, items / std::max<int64_t>(rows, 1)) * out.cols()),
              [&](int64_t lo, int64_t hi) {
                for (int64_t r = lo; r < hi; ++r) {
                  auto o = out.row(r);
                  o.setZero();
                  for (int64_t k = ptr[r]; k < ptr[r + 1]; ++k) {
                    const int64_t e = perm[k];
                    o.array() += a.row(rowOfA(e)).array() * b.row(rowOfB(e)).array();
                  }
                }
              });
}

}  // namespace gnn::ops
