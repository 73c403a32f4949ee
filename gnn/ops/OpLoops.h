// Loops the ops in gnn/ops share: elementwise products, ordered sums of per-chunk partial results, and the
// body of unary elementwise ops (value and derivative side by side). Both
// split work in fixed chunks (gnn/Parallel.h), so results do not depend on the thread count.
#pragma once
#include <algorithm>

#include <vector>

#include "gnn/Parallel.h"
#include "gnn/Tensor.h"
#include "gnn/Variable.h"

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

/// Which value an elementwise op's derivative is computed from: the tape saves only that one.
enum class From { Input, Output };

/// y = f(x); backward: gx = gy * df(v) with v = x or y as `from` says. `cost` = FLOPs per element of f (a
/// transcendental function counts as 10, a square root or division as 1), `dcost` of df.
template <class Fwd, class Deriv>
Variable unaryOp(const char* name, int64_t cost, int64_t dcost, From from, const Variable& a, Fwd f, Deriv df) {
  const Tensor& X = a.value();
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty(X.shape(), X.dtype());
    const T* __restrict x = X.data<T>();
    T* __restrict y = Y.data<T>();
    parallelElements(X.numel(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = f(x[i]);
    });
    const int64_t n = X.numel(), bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{name, cost * n, bytes, bytes, (dcost + 1) * n};
    return Variable::record(info, Y, {a}, {from == From::Input ? X : Y},
                            [df](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
                              const Tensor& V = saved[0];
                              Tensor G = Tensor::empty(V.shape(), V.dtype());
                              const T* __restrict v = V.data<T>();
                              const T* __restrict g = gy.data<T>();
                              T* __restrict o = G.data<T>();
                              parallelElements(V.numel(), [&](int64_t b, int64_t e) {
                                for (int64_t i = b; i < e; ++i) o[i] = g[i] * df(v[i]);
                              });
                              in[0].addGrad(G);
                            });
  });
}

}  // namespace gnn::ops
