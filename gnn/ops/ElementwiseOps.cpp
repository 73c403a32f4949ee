// Elementwise activations and dropout. Each activation gives its value and its derivative (from the input x
// and the output y) side by side in one place.
#include <algorithm>
#include <cmath>
#include <vector>

#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

using ops::From;

// Activations: the derivative costs about the value's cost (cost + 1 FLOPs per element with the product).
template <class Fwd, class Deriv>
Variable unary(const char* name, int64_t cost, From from, const Variable& a, Fwd f, Deriv df) {
  return ops::unaryOp(name, cost, cost, from, a, f, df);
}

// Shifted softplus of float32 on Lanes (gnn/ops/Lanes.h: the CPU's widest vectors). log1p(u) for u = e^-|x| in (0,
// 1] is 2 atanh(s) with s = u / (2 + u) in (0, 1/3]: a series in s^2 <= 1/9 needs no range reduction (the general
// log's exponent split and its select), and seven terms leave a relative error below 2e-8. SchNet's filter networks
// spend most of this op's time in these two functions.
void shiftedSoftplusF32(const float* x, float* y, int64_t n) {
  ops::lanesLoop(
      n,
      [](ops::Lanes v) {
        const ops::Lanes u = (-v.abs()).exp();
        const ops::Lanes s = u / (u + 2.0f);
        const ops::Lanes z = s * s;
        ops::Lanes p = ops::Lanes::splat(1.0f / 13);
        for (float c : {1.0f / 11, 1.0f / 9, 1.0f / 7, 1.0f / 5, 1.0f / 3, 1.0f}) p = p * z + c;
        return v.max(0.0f) + ((s + s) * p - static_cast<float>(M_LN2));
      },
      y, x);
}

// Its derivative sigmoid(x) times the output gradient, from the output y (see shiftedSoftplus for why):
// e^-(y + log 2) = 1 / (1 + e^x), so sigmoid(x) = 1 - e^-y / 2, kept >= 0 (where sigmoid(x) is below an ulp of 1,
// x < -16, the difference rounds to a few 1e-8 either side of it).
void shiftedSoftplusGradF32(const float* y, const float* g, float* out, int64_t n) {
  ops::lanesLoop(
      n, [](ops::Lanes v, ops::Lanes gv) { return gv * (1.0f - 0.5f * (-v).exp()).max(0.0f); }, out, y, g);
}
}  // namespace

Variable relu(const Variable& a) {
  // y > 0 exactly where x > 0, so the output serves the backward.
  return unary(
      "relu", 1, From::Output, a, [](auto x) { return x > 0 ? x : decltype(x)(0); },
      [](auto y) { return y > 0 ? decltype(y)(1) : decltype(y)(0); });
}

Variable elu(const Variable& a, double alpha) {
  // For alpha > 0, y > 0 exactly where x > 0, and below zero dy/dx = y + alpha: the output serves the backward.
  GNN_CHECK_ARG(alpha > 0, "elu: alpha must be positive, got ", alpha);
  return unary(
      "elu", 10, From::Output, a, [alpha](auto x) { return x > 0 ? x : static_cast<decltype(x)>(alpha * std::expm1(x)); },
      [alpha](auto y) { return y > 0 ? decltype(y)(1) : static_cast<decltype(y)>(y + alpha); });
}

Variable leakyRelu(const Variable& a, double negativeSlope) {
  // For a positive slope, y > 0 exactly where x > 0: the output serves the backward.
  GNN_CHECK_ARG(negativeSlope > 0, "leakyRelu: negative_slope must be positive, got ", negativeSlope);
  return unary(
      "leakyRelu", 2, From::Output, a,
      [negativeSlope](auto x) { return x > 0 ? x : static_cast<decltype(x)>(negativeSlope * x); },
      [negativeSlope](auto y) { return y > 0 ? decltype(y)(1) : static_cast<decltype(y)>(negativeSlope); });
}

namespace {
// erf for float as a rational function of x on [-4, 4] (beyond, erf is +-1 in float): the approximation
// Eigen 3.4 (generic_fast_erf_float) and XLA use, within a few float ulps of erf. Branch-free plain
// arithmetic, for a float or for Lanes (gnn/ops/Lanes.h, the same operations on sixteen at once): an element's
// bits do not depend on its position (the library's glibc erf is scalar only and costs ~10x more per element).
inline float clampErf(float x) { return std::min(4.0f, std::max(-4.0f, x)); }
inline ops::Lanes clampErf(ops::Lanes x) { return x.max(-4.0f).min(4.0f); }
inline float erfMulAdd(float a, float b, float c) { return ops::mulAdd(a, b, c); }
template <class B>
inline ops::Lanes erfMulAdd(ops::Lanes a, B b, float c) { return a * b + c; }  // fused where the build has FMA
template <class V>
inline V erfApprox(V x) {
  x = clampErf(x);
  const V x2 = x * x;
  V p = erfMulAdd(x2, -2.72614225801306e-10f, 2.77068142495902e-08f);
  p = erfMulAdd(x2, p, -2.10102402082508e-06f);
  p = erfMulAdd(x2, p, -5.69250639462346e-05f);
  p = erfMulAdd(x2, p, -7.34990630326855e-04f);
  p = erfMulAdd(x2, p, -2.95459980854025e-03f);
  p = erfMulAdd(x2, p, -1.60960333262415e-02f);
  V q = erfMulAdd(x2, -1.45660718464996e-05f, -2.13374055278905e-04f);
  q = erfMulAdd(x2, q, -1.68282697438203e-03f);
  q = erfMulAdd(x2, q, -7.37332916720468e-03f);
  q = erfMulAdd(x2, q, -1.42647390514189e-02f);
  return x * p / q;
}
// Phi(x), the standard normal CDF: float and Lanes through erfApprox, double through the C library's erf.
template <class V>
inline V normalCdf(V x) {
  return 0.5f * (1.0f + erfApprox(x * static_cast<float>(M_SQRT1_2)));
}
inline double normalCdf(double x) {
  return 0.5 * (1.0 + std::erf(x * M_SQRT1_2));
}
}  // namespace

Variable gelu(const Variable& a) {
  // x * Phi(x) (PyTorch's exact GELU); d/dx = Phi(x) + x * phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
  const Tensor& X = a.value();
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty(X.shape(), X.dtype());
    const T* __restrict x = X.data<T>();
    T* __restrict y = Y.data<T>();
    parallelElements(X.numel(), 10, [&](int64_t b, int64_t e) {
      if constexpr (std::is_same_v<T, float>)
        ops::lanesLoop(e - b, [](ops::Lanes v) { return v * normalCdf(v); }, y + b, x + b);
      else
        for (int64_t i = b; i < e; ++i) y[i] = x[i] * normalCdf(x[i]);
    });
    const int64_t n = X.numel(), bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{"gelu", 10 * n, bytes, bytes, 11 * n};
    return Variable::record(
        info, Y, {a}, {X},
        [](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
          const Tensor& X = saved[0];
          Tensor G = Tensor::empty(X.shape(), X.dtype());
          const T* __restrict x = X.data<T>();
          const T* __restrict g = gy.data<T>();
          T* __restrict o = G.data<T>();
          parallelElements(X.numel(), 11, [&](int64_t b, int64_t e) {
            if constexpr (std::is_same_v<T, float>) {
              ops::lanesLoop(
                  e - b,
                  [](ops::Lanes xs, ops::Lanes gs) {
                    return gs * (normalCdf(xs) + xs * (-0.5f * xs.square()).exp() * 0.3989422804014327f);
                  },
                  o + b, x + b, g + b);
            } else {
              // Phi from the C library's erf, then Eigen's vectorised exp for phi on whole vectors for every
              // element (gnn/ops/OpLoops.h), so an element's bits do not depend on its position.
              for (int64_t i = b; i < e; ++i) o[i] = normalCdf(x[i]);
              ops::vectorBlocks(
                  e - b,
                  [](auto cdf, auto xs, auto gs) {
                    return gs * (cdf + xs * (T(-0.5) * xs.square()).exp() * T(0.3989422804014327));
                  },
                  o + b, static_cast<const T*>(o + b), x + b, g + b);
            }
          });
          in[0].addGrad(G);
        });
  });
}

namespace {
// An activation whose value runs on Eigen's vector code (vectorBlocks: every element takes it, whatever its
// position) and whose derivative comes from the output: value(xs) and deriv(ys, gs) map Eigen arrays. The C
// library's scalar tanh and exp took 10 ns an element (GatedGraphConv's GRU, ResGatedGraphConv's gates).
template <class Value, class Deriv>
Variable vectorActivation(const char* name, int64_t cost, const Variable& a, Value value, Deriv deriv) {
  const Tensor& X = a.value();
  GNN_CHECK_ARG(X.dtype() == DType::F32 || X.dtype() == DType::F64, name, ": float input expected, got ",
                dtypeName(X.dtype()));
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty(X.shape(), X.dtype());
    const T* x = X.data<T>();
    T* y = Y.data<T>();
    parallelElements(X.numel(), cost, [&](int64_t b, int64_t e) { ops::vectorBlocks(e - b, value, y + b, x + b); });
    const int64_t n = X.numel(), bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{name, cost * n, bytes, bytes, (cost + 1) * n};
    return Variable::record(info, Y, {a}, {Y}, [deriv, cost](const Tensor& gy, std::vector<GradInput>& in,
                                                             const std::vector<Tensor>& saved) {
      const Tensor& V = saved[0];
      Tensor G = Tensor::empty(V.shape(), V.dtype());
      const T* v = V.data<T>();
      const T* g = gy.data<T>();
      T* o = G.data<T>();
      parallelElements(V.numel(), cost, [&](int64_t b, int64_t e) { ops::vectorBlocks(e - b, deriv, o + b, v + b, g + b); });
      in[0].addGrad(G);
    });
  });
}
}  // namespace

Variable tanh(const Variable& a) {
  return vectorActivation(
      "tanh", 10, a, [](auto xs) { return xs.tanh(); }, [](auto ys, auto gs) { return gs * (1 - ys.square()); });
}

Variable sigmoid(const Variable& a) {
  return vectorActivation(
      "sigmoid", 10, a, [](auto xs) { return 1 / (1 + (-xs).exp()); }, [](auto ys, auto gs) { return gs * (ys * (1 - ys)); });
}

Variable softplus(const Variable& a, double beta, double threshold) {
  return unary(
      "softplus", 10, From::Input, a,
      [beta, threshold](auto x) {
        using T = decltype(x);
        return x * beta > threshold ? x : static_cast<T>(std::log1p(std::exp(beta * x)) / beta);
      },
      [beta, threshold](auto x) {
        using T = decltype(x);
        return x * beta > threshold ? T(1) : static_cast<T>(1 / (1 + std::exp(-beta * x)));
      });
}

Variable shiftedSoftplus(const Variable& a) {
  // log(1 + e^x) - log 2 = max(x, 0) + log1p(e^-|x|) - log 2, stable for large |x| (SchNet, Schuett et al.
  // 2017). On Eigen arrays so exp and log1p run vectorised: SchNet's filter networks apply it to [pairs, 128]
  // twice per interaction, where the scalar C library calls took a third of a training step. Every element
  // takes the vector code (ops::vectorBlocks), so its bits do not depend on its position. The backward keeps
  // the output, not the input: in SchNet's filter network the next Linear keeps that same output for its
  // weight gradient, so the input, a [pairs, 128] tensor per interaction, is freed at once instead of staying
  // in memory until the backward (the filter products then find their buffers in cache). The derivative from
  // the output is off by at most a few 1e-8 in float where sigmoid(x) is that small (x < -16).
  const Tensor& X = a.value();
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty(X.shape(), X.dtype());
    const T* x = X.data<T>();
    T* y = Y.data<T>();
    parallelElements(X.numel(), 12, [&](int64_t b, int64_t e) {
      if constexpr (std::is_same_v<T, float>)
        shiftedSoftplusF32(x + b, y + b, e - b);
      else
        ops::vectorBlocks(
            e - b, [](auto xs) { return xs.max(T(0)) + (-xs.abs()).exp().log1p() - T(M_LN2); }, y + b, x + b);
    });
    const int64_t n = X.numel(), bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{"shiftedSoftplus", 12 * n, bytes, bytes, 13 * n};
    return Variable::record(info, Y, {a}, {Y}, [](const Tensor& gy, std::vector<GradInput>& in,
                                                  const std::vector<Tensor>& saved) {
      // d/dx = sigmoid(x) = 1 - e^-y / 2 >= 0.
      const Tensor& V = saved[0];
      Tensor G = Tensor::empty(V.shape(), V.dtype());
      const T* v = V.data<T>();
      const T* g = gy.data<T>();
      T* o = G.data<T>();
      parallelElements(V.numel(), 13, [&](int64_t b, int64_t e) {
        if constexpr (std::is_same_v<T, float>)
          shiftedSoftplusGradF32(v + b, g + b, o + b, e - b);
        else
          ops::vectorBlocks(
              e - b, [](auto vs, auto gs) { return gs * (T(1) - T(0.5) * (-vs).exp()).max(T(0)); }, o + b, v + b, g + b);
      });
      in[0].addGrad(G);
    });
  });
}

namespace {
// Elements [b, e) of a dropout mask: keep or 0 from the draws (u: e - b of scratch). Branch-free so it vectorises
// (a random branch here mispredicts half the time); compiled per CPU level, as the draws' 64-bit multiplies
// vectorise only with AVX-512.
template <class T>
GNN_CPU_CLONES void dropoutMaskChunk(const Generator& g, uint64_t first, int64_t b, int64_t e, uint32_t threshold,
                                     T keep, uint16_t* __restrict u, T* __restrict m) {
  g.uniform16(first, b, e, u);
  for (int64_t i = 0; i < e - b; ++i) m[i] = static_cast<T>(u[i] >= threshold) * keep;
}
}  // namespace

Tensor dropoutMask(const Shape& shape, DType dtype, double p, Generator& gen) {
  GNN_CHECK_ARG(p >= 0 && p < 1, "dropout: p must be in [0, 1), got ", p);
  Tensor M = Tensor::empty(shape, dtype);
  const int64_t n = M.numel();
  // Element i's draw depends only on (seed, counter + i): the same mask for any thread count.
  uint64_t first = gen.reserve(Generator::dropoutCounters(static_cast<uint64_t>(n)));
  const uint32_t threshold = Generator::dropoutThreshold(p);
  const Generator& g = gen;
  dispatchFloat(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T keep = static_cast<T>(1 / (1 - p));
    T* m = M.data<T>();
    // Chunks are multiples of 4 elements (parallelElements cuts multiples of 16), so each 64-bit draw feeds
    // four elements of one chunk.
    parallelElements(n, [&](int64_t b, int64_t e) {
      std::vector<uint16_t> u(static_cast<size_t>(e - b));
      dropoutMaskChunk(g, first, b, e, threshold, keep, u.data(), m + b);
    });
  });
  return M;
}

Variable dropout(const Variable& a, double p, Generator& gen, bool training) {
  GNN_CHECK_ARG(p >= 0 && p < 1, "dropout: p must be in [0, 1), got ", p);
  if (!training || p == 0) return a;
  const Tensor& X = a.value();
  GNN_CHECK_ARG(X.isFloating(), "dropout: expected a float tensor, got ", dtypeName(X.dtype()));
  Tensor M = dropoutMask(X.shape(), X.dtype(), p, gen);
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty(X.shape(), X.dtype());
    ops::multiplyInto<T>(Y, X, M);
    const int64_t bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{"dropout", X.numel(), 2 * bytes, bytes, X.numel()};
    return Variable::record(info, Y, {a}, {M}, [](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
      Tensor G = Tensor::empty(gy.shape(), gy.dtype());
      ops::multiplyInto<T>(G, gy, saved[0]);
      in[0].addGrad(G);
    });
  });
}

Variable dropout(const Variable& a, double p, bool training) {
  GNN_CHECK_ARG(p >= 0 && p < 1, "dropout: p must be in [0, 1), got ", p);
  if (!training || p == 0) return a;
  // The stream comes from the context's key and this op's index in the step, not from shared state.
  Generator gen = ExecutionContext::current().nextRandomStream();
  return dropout(a, p, gen, training);
}

SparseMatrix dropoutValues(const SparseMatrix& x, double p) {
  const Tensor& values = x.values();
  Generator gen = ExecutionContext::current().nextRandomStream();
  Tensor mask = dropoutMask(values.shape(), values.dtype(), p, gen);
  Tensor v = Tensor::empty(values.shape(), values.dtype());
  dispatchFloat(v.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    v.flat<T>() = values.flat<T>() * mask.flat<T>();
  });
  return x.withValues(std::move(v));
}

}  // namespace gnn
