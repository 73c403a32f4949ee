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

namespace detail {
// Columns [f0, f0 + W) of out.row(r), summed over the bucket [k0, k1) in a fixed-size accumulator (registers:
// 8 AVX-512 vectors of floats for W = 128) and stored once: updating the output row in memory for every item
// made each product wait on the store of the previous one. Every element is the same sum in the same order as
// the plain loop, from 0 in bucket order.
template <class T, int W, class RowOfA, class RowOfB>
inline void sumTile(ConstMatrixMap<T> a, RowOfA& rowOfA, ConstMatrixMap<T> b, RowOfB& rowOfB, int64_t k0, int64_t k1,
                    const std::vector<int64_t>& perm, int64_t f0, MatrixMap<T> out, int64_t r) {
  using Tile = Eigen::Array<T, W, 1>;
  Tile acc = Tile::Zero();
  for (int64_t k = k0; k < k1; ++k) {
    const int64_t e = perm[k];
    acc += Eigen::Map<const Tile>(a.row(rowOfA(e)).data() + f0) * Eigen::Map<const Tile>(b.row(rowOfB(e)).data() + f0);
  }
  Eigen::Map<Tile>(out.row(r).data() + f0) = acc;
}
}  // namespace detail

/// out.row(r) = sum over k in [ptr[r], ptr[r + 1]) of a.row(rowOfA(e)) * b.row(rowOfB(e)) elementwise, with
/// e = perm[k], summed in k order from 0: scatterSum(mul(gatherRows(a), gatherRows(b))) without its [items, F]
/// intermediates. `items` = perm's length (it sizes the parallel chunks). rowOfA and rowOfB are template
/// parameters (lambdas) so that the loop inlines into each op as if written there.
template <class T, class RowOfA, class RowOfB>
void gatherMultiplySum(ConstMatrixMap<T> a, RowOfA rowOfA, ConstMatrixMap<T> b, RowOfB rowOfB,
                       const std::vector<int64_t>& ptr, const std::vector<int64_t>& perm, int64_t items,
                       MatrixMap<T> out) {
  const int64_t rows = out.rows(), F = out.cols();
  parallelFor(rows, grainFor(std::max<int64_t>(1, items / std::max<int64_t>(rows, 1)) * F),
              [&](int64_t lo, int64_t hi) {
                for (int64_t r = lo; r < hi; ++r) {
                  int64_t f0 = 0;
                  for (; f0 + 128 <= F; f0 += 128) detail::sumTile<T, 128>(a, rowOfA, b, rowOfB, ptr[r], ptr[r + 1], perm, f0, out, r);
                  if (f0 + 64 <= F) {
                    detail::sumTile<T, 64>(a, rowOfA, b, rowOfB, ptr[r], ptr[r + 1], perm, f0, out, r);
                    f0 += 64;
                  }
                  if (f0 < F) {
                    auto o = out.row(r).tail(F - f0);
                    o.setZero();
                    for (int64_t k = ptr[r]; k < ptr[r + 1]; ++k) {
                      const int64_t e = perm[k];
                      o.array() += a.row(rowOfA(e)).tail(F - f0).array() * b.row(rowOfB(e)).tail(F - f0).array();
                    }
                  }
                }
              });
}

}  // namespace gnn::ops
