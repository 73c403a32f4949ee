// How products cut their output rows into blocks run in parallel: whole kernel panels, sizes fixed by the
// shapes alone (never by the thread count), so a product's bits are the same for any thread count.
#pragma once
#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "gnn/kernels/Gemm.h"
#include "gnn/system/Parallel.h"

namespace gnn::ops {

// Rows of one panel. float32 products run through gnn/kernels/Gemm.h, whose rows are stable in whole panels of
// kGemmPanelRows. float64 ones run through Eigen's product kernel, whose panels are gebp's mr (24 doubles with
// AVX-512): rows inside a whole panel all get the same rounding, wherever the panel sits; the rows of a last,
// partial panel go through narrower kernels that add in another order. Forward products therefore cut their
// rows into whole panels and compute a last partial panel on a zero-padded copy, so a row's bits depend on its
// own values only, not on its position or on how many rows there are: a model's real rows come out identical
// whatever the padding of the batch (tests/gnn/ops/RowStableProduct_test.cpp).
template <class T>
constexpr int64_t kPanelRows =
    std::is_same_v<T, float> ? kernels::kGemmPanelRows : int64_t{Eigen::internal::gebp_traits<T, T>::mr};

// Rows a product's row block aims at: where the float32 kernels run near their peak.
constexpr int64_t kBlockRows = 256;

// Row block for products: about `target` rows, at least kGrainWork multiply-adds, but small enough for 8 blocks
// when the output has few rows. It depends only on the shapes.
inline int64_t rowBlock(int64_t m, int64_t k, int64_t n, int64_t target = kBlockRows) {
  auto up32 = [](int64_t v) { return std::max<int64_t>(32, (v + 31) / 32 * 32); };
  int64_t byWork = up32(grainFor(k * n, 1));
  int64_t forEight = up32((m + 7) / 8);
  return std::max(byWork, std::min<int64_t>(target, forEight));
}

// The rows of a product cut into blocks of whole kernel panels (the last block ends at the last row): about
// rowBlock rows each, and a count rounded up to a multiple of 4 (below 4: 1, 2 or 4), so that 2 or 4 threads
// get equal shares. Equal block sizes would leave 2 threads 4 blocks against 3 for GIN's 2,007 rows (7 blocks of
// 288), one thread idle a quarter of every product. Block sizes differ by at most a panel, and the cut depends
// only on the shapes.
template <class T>
class RowBlocks {
 public:
  RowBlocks(int64_t m, int64_t k, int64_t n, int64_t target = kBlockRows)
      : m_(m), panels_((m + kPanelRows<T> - 1) / kPanelRows<T>) {
    const int64_t rows = rowBlock(m, k, n, target);
    const int64_t want = (m + rows - 1) / rows;
    const int64_t rounded = want <= 1 ? 1 : want <= 2 ? 2 : (want + 3) / 4 * 4;
    count_ = std::max<int64_t>(1, std::min(rounded, panels_));
  }
  int64_t count() const { return count_; }
  int64_t begin(int64_t block) const { return std::min(m_, panels_ * block / count_ * kPanelRows<T>); }

  // f(rowBegin, rowEnd) for every block, in parallel.
  template <class F>
  void forEach(F&& f) const {
    parallelFor(count_, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) f(begin(b), begin(b + 1));
    });
  }

 private:
  int64_t m_, panels_, count_;
};

}  // namespace gnn::ops
