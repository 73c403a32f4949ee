// The loop of message sums with a product per message (filterMessageSum's forward, its gradient for x and for
// indexed filters): per output row, the elementwise products of two gathered rows summed over the row's bucket
// in bucket order from 0. Parallel over output rows in chunks of equal work; a row's sum never depends on the
// chunk it falls in, so results do not depend on the thread count.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "gnn/ops/Lanes.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"
#include "gnn/tensor/Tensor.h"

namespace gnn::ops {

namespace detail {
// Columns [f0, f0 + W) of out.row(r), summed over the bucket [k0, k1) in a fixed-size accumulator (registers:
// 8 AVX-512 vectors of floats for W = 128) and stored once: updating the output row in memory for every item
// made each product wait on the store of the previous one. Every element is the same sum in the same order as
// the plain loop, from 0 in bucket order. With kScaled, b's row is first multiplied by bScale[its row]; with
// outScale, the sum is multiplied by outScale[r] as it is stored.
template <class T, int W, bool kScaled, class RowOfA, class RowOfB>
inline __attribute__((always_inline)) void sumTile(ConstMatrixMap<T> a, RowOfA& rowOfA, ConstMatrixMap<T> b,
                                                   RowOfB& rowOfB, const T* bScale, const T* outScale,
                                                   int64_t k0, int64_t k1, const int64_t* perm, int64_t f0,
                                                   MatrixMap<T> out, int64_t r) {
  if constexpr (std::is_same_v<T, float> && W % Lanes::kWidth == 0) {
    // On Lanes: Eigen's fixed-size arrays keep the vector width the library was compiled for (SSE2 in a
    // portable build); the loop that calls this is compiled per CPU level.
    constexpr int64_t L = W / Lanes::kWidth;
    Lanes acc[L];
    for (int64_t l = 0; l < L; ++l) acc[l] = Lanes::splat(0.0f);
    for (int64_t k = k0; k < k1; ++k) {
      const int64_t e = perm[k];
      const float* x = a.row(rowOfA(e)).data() + f0;
      const int64_t rb = rowOfB(e);
      const float* y = b.row(rb).data() + f0;
      for (int64_t l = 0; l < L; ++l) {
        const Lanes xl = Lanes::load(x + l * Lanes::kWidth), yl = Lanes::load(y + l * Lanes::kWidth);
        if constexpr (kScaled)
          acc[l] = acc[l] + xl * (yl * bScale[rb]);
        else
          acc[l] = acc[l] + xl * yl;
      }
    }
    float* o = out.row(r).data() + f0;
    for (int64_t l = 0; l < L; ++l) (outScale ? acc[l] * outScale[r] : acc[l]).store(o + l * Lanes::kWidth);
    return;
  }
  using Tile = Eigen::Array<T, W, 1>;
  Tile acc = Tile::Zero();
  for (int64_t k = k0; k < k1; ++k) {
    const int64_t e = perm[k];
    const Eigen::Map<const Tile> x(a.row(rowOfA(e)).data() + f0);
    const int64_t rb = rowOfB(e);
    const Eigen::Map<const Tile> y(b.row(rb).data() + f0);
    if constexpr (kScaled)
      acc += x * (y * bScale[rb]);
    else
      acc += x * y;
  }
  if (outScale)
    Eigen::Map<Tile>(out.row(r).data() + f0) = acc * outScale[r];
  else
    Eigen::Map<Tile>(out.row(r).data() + f0) = acc;
}

template <class T, bool kScaled, class RowOfA, class RowOfB>
void gatherMultiplySumRows(ConstMatrixMap<T> a, RowOfA& rowOfA, ConstMatrixMap<T> b, RowOfB& rowOfB, const T* bScale,
                           const T* outScale, const int64_t* ptr, const int64_t* perm, int64_t items,
                           MatrixMap<T> out) {
  const int64_t rows = out.rows(), F = out.cols();
  // Chunks of equal work, not of equal rows: a row costs its items and its store (ptr[r] + r before row r).
  // Rows differ in items (atoms of small and large molecules; padding atoms have none, all at the end), and
  // equal row counts left one thread waiting. A row's sum does not depend on its chunk, so the chunk count may
  // follow the threads: a multiple of them, each thread an equal share.
  const int64_t work = items + rows;
  int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(rows, work * F / kGrainWork));
  const int64_t threads = std::max(1, numThreads());
  if (chunks > 1 && threads > 1) chunks = std::min<int64_t>(rows, (chunks + threads - 1) / threads * threads);
  auto firstRow = [&](int64_t c) {  // the first row r with ptr[r] + r >= c * work / chunks
    const int64_t target = c * work / chunks;
    int64_t lo = 0, hi = rows;
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (ptr[mid] + mid < target) lo = mid + 1; else hi = mid;
    }
    return c >= chunks ? rows : lo;
  };
  parallelFor(chunks, 1, [&](int64_t c0, int64_t c1) GNN_CPU_CLONES {
    for (int64_t r = firstRow(c0), hi = firstRow(c1); r < hi; ++r) {
      const int64_t k0 = ptr[r], k1 = ptr[r + 1];
      int64_t f0 = 0;
      for (; f0 + 128 <= F; f0 += 128)
        sumTile<T, 128, kScaled>(a, rowOfA, b, rowOfB, bScale, outScale, k0, k1, perm, f0, out, r);
      if (f0 + 64 <= F) {
        sumTile<T, 64, kScaled>(a, rowOfA, b, rowOfB, bScale, outScale, k0, k1, perm, f0, out, r);
        f0 += 64;
      }
      if (f0 < F) {
        auto o = out.row(r).tail(F - f0);
        o.setZero();
        for (int64_t k = k0; k < k1; ++k) {
          const int64_t e = perm[k], rb = rowOfB(e);
          if constexpr (kScaled)
            o.array() += a.row(rowOfA(e)).tail(F - f0).array() * (b.row(rb).tail(F - f0).array() * bScale[rb]);
          else
            o.array() += a.row(rowOfA(e)).tail(F - f0).array() * b.row(rb).tail(F - f0).array();
        }
        if (outScale) o *= outScale[r];
      }
    }
  });
}
}  // namespace detail

/// out.row(r) = sum over k in [ptr[r], ptr[r + 1]) of a.row(rowOfA(e)) * b.row(rowOfB(e)) elementwise, with
/// e = perm[k], summed in k order from 0: scatterSum(mul(gatherRows(a), gatherRows(b))) without its [items, F]
/// intermediates. `items` = perm's length (it sizes the parallel chunks). rowOfA and rowOfB are template
/// parameters (lambdas) so that the loop inlines into each op as if written there. With bScale, b's rows are
/// scaled first, b.row(i) * bScale[i] (rounded as a separate product would be); with outScale, out.row(r) is
/// the sum times outScale[r]: SchNet's cutoff on its filters without a scaled copy of them.
template <class T, class RowOfA, class RowOfB>
void gatherMultiplySum(ConstMatrixMap<T> a, RowOfA rowOfA, ConstMatrixMap<T> b, RowOfB rowOfB,
                       const int64_t* ptr, const int64_t* perm, int64_t items, MatrixMap<T> out,
                       const T* bScale = nullptr, const T* outScale = nullptr) {
  if (bScale)
    detail::gatherMultiplySumRows<T, true>(a, rowOfA, b, rowOfB, bScale, outScale, ptr, perm, items, out);
  else
    detail::gatherMultiplySumRows<T, false>(a, rowOfA, b, rowOfB, bScale, outScale, ptr, perm, items, out);
}

}  // namespace gnn::ops
