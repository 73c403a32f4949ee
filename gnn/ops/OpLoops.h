// Loops the ops in gnn/ops share: elementwise products and ordered sums of per-chunk partial results. Both
// split work in fixed chunks (gnn/Parallel.h), so results do not depend on the thread count.
#pragma once
#include <algorithm>

#include "gnn/Parallel.h"
#include "gnn/Tensor.h"

namespace gnn::ops {

/// out = x * y elementwise (all of one shape and dtype T).
template <class T>
void multiplyInto(Tensor& out, const Tensor& x, const Tensor& y) {
  const T* __restrict xp = x.data<T>();
  const T* __restrict yp = y.data<T>();
  T* __restrict o = out.data<T>();
  parallelElements(out.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) o[i] = xp[i] * yp[i];
  });
}

/// out = x * s elementwise.
template <class T>
void scaleInto(Tensor& out, const Tensor& x, T s) {
  const T* __restrict xp = x.data<T>();
  T* __restrict o = out.data<T>();
  parallelElements(out.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) o[i] = xp[i] * s;
  });
}

/// out[j] = partials[0][j] + partials[1][j] + ... in chunk order, for `chunks` rows of `width` values stored
/// one after another: how chunked reductions (weight gradients, norm parameters) finish deterministically.
template <class T>
void sumChunkPartials(const T* partials, int64_t chunks, int64_t width, T* out) {
  parallelFor(width, grainFor(chunks, 1024), [&](int64_t b, int64_t e) {
    std::copy(partials + b, partials + e, out + b);
    for (int64_t c = 1; c < chunks; ++c) {
      const T* __restrict pc = partials + c * width;
      for (int64_t j = b; j < e; ++j) out[j] += pc[j];
    }
  });
}

}  // namespace gnn::ops
