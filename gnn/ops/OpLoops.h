// Loops the ops in gnn/ops share: elementwise products, ordered sums of per-chunk partial results, the
// body of unary elementwise ops (value and derivative side by side), and the pieces of row-wise ops (sums
// and maxima over a row, vectorised exp) whose order and rounding are fixed by the row's width alone. All
// split work in fixed chunks (gnn/system/Parallel.h), so results do not depend on the thread count.
#pragma once
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "gnn/autograd/Variable.h"
#include "gnn/ops/Lanes.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"
#include "gnn/tensor/Tensor.h"

namespace gnn::ops {

/// Throws std::invalid_argument naming `op` unless edgeIndex is int64 [2, E].
inline void checkEdgeIndex(const char* op, const Tensor& edgeIndex) {
  GNN_CHECK_ARG(edgeIndex.rank() == 2 && edgeIndex.dim(0) == 2 && edgeIndex.dtype() == DType::I64, op,
                ": edge_index must be int64 [2, E], got ", dtypeName(edgeIndex.dtype()), " ",
                shapeString(edgeIndex.shape()));
}

// ---- row loops whose bits depend on the row's values and width only ----
//
// Eigen's expressions on a row of a row-major matrix (x.row(i).sum(), y.row(i) = x.row(i).exp()) peel scalar
// iterations until the destination is aligned: which elements take the vector code and which the scalar code,
// and the order of a reduction, then depend on the row's address, that is on where the row sits in the batch.
// The loops below fix both by the width: reductions run in lanes (element j into a lane chosen by j
// and the width, lanes added in a fixed tree), which is exactly what the vectorised code computes, and
// transcendental functions run on whole vectors (vectorBlocks).

/// Asks for a row's cache lines ahead of its use: the message ops read rows that sit anywhere in their arrays,
/// one edge after another, and prefetching the next node's rows hides most of each wait.
template <class T>
inline void prefetchRow(const T* row, int64_t width) {
  const char* p = reinterpret_cast<const char*>(row);
  for (int64_t off = 0; off < width * static_cast<int64_t>(sizeof(T)); off += 64) __builtin_prefetch(p + off);
}

/// a * b + c, rounded once where the target has a fused multiply-add (std::fma is then one instruction, and
/// loops over it vectorise), else twice. Row loops write every product that feeds a sum through it: GCC
/// contracts a * b + c at will in C++ (-ffp-contract=fast is its default outside ISO C), so a product left to
/// the compiler could be fused in the vector body and not in the scalar remainder, or the other way round.
template <class T>
inline T mulAdd(T a, T b, T c) {
  // FMA3 on x86 (GCC and Clang), GCC's own macro, Arm.
#if defined(__FMA__) || defined(__FP_FAST_FMA) || defined(__ARM_FEATURE_FMA)
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

/// Lanes of the row reductions: four AVX-512 vectors of floats (eight of doubles), independent chains of
/// additions, so a sum is not waiting on the latency of each vector addition.
constexpr int64_t kRowLanes = 64;

namespace detail {
// Lane l + W into lane l for l < W, then W / 2, ..., 1: constant trip counts, which GCC unrolls and
// vectorises.
template <int64_t W, class T, class Combine>
inline __attribute__((always_inline)) void foldLanes(T* acc, Combine combine) {
  for (int64_t l = 0; l < W; ++l) acc[l] = combine(acc[l], acc[l + W]);
  if constexpr (W > 1) foldLanes<W / 2>(acc, combine);
}
}  // namespace detail

/// A reduction over j < n: step(acc, j) folds term j into an accumulator, in increasing j, from `init`; the
/// accumulators are then combined pairwise (lane l + W / 2 into l, then + W / 4, ..., + 1). How many there
/// are depends on n: one below 16 terms (a plain sequence), 16 lanes (term j into lane j % 16) below
/// kRowLanes, and kRowLanes lanes from there: term j into lane j % kRowLanes, except in a last partial block,
/// which is read as the row's last kRowLanes terms (whole vectors, no masked loads), term j into lane
/// j - (n - kRowLanes), with the terms already counted left out by a select. The order depends on n alone,
/// and GCC vectorises the lanes without reassociating anything.
template <class T, class Step, class Combine>
inline __attribute__((always_inline)) T laneReduce(int64_t n, T init, Step step, Combine combine) {
  constexpr int64_t kNarrow = 16;
  if (n < kNarrow) {
    T acc = init;
    for (int64_t j = 0; j < n; ++j) step(acc, j);
    return acc;
  }
  if (n < kRowLanes) {
    T acc[kNarrow];
    for (int64_t l = 0; l < kNarrow; ++l) acc[l] = init;
    int64_t j = 0;
    for (; j + kNarrow <= n; j += kNarrow)
      for (int64_t l = 0; l < kNarrow; ++l) step(acc[l], j + l);
    for (int64_t l = 0; j < n; ++j, ++l) step(acc[l], j);
    detail::foldLanes<kNarrow / 2>(acc, combine);
    return acc[0];
  }
  T acc[kRowLanes];
  for (int64_t l = 0; l < kRowLanes; ++l) acc[l] = init;
  int64_t j = 0;
  for (; j + kRowLanes <= n; j += kRowLanes)
    for (int64_t l = 0; l < kRowLanes; ++l) step(acc[l], j + l);
  if (j < n) {
    const int64_t last = n - kRowLanes;
    for (int64_t l = 0; l < kRowLanes; ++l) {
      T t = acc[l];
      step(t, last + l);
      acc[l] = last + l >= j ? t : acc[l];
    }
  }
  detail::foldLanes<kRowLanes / 2>(acc, combine);
  return acc[0];
}

/// The sum over j < n of the terms step adds: step(acc, j) adds term j into acc (acc += x[j], or
/// acc = mulAdd(x[j], y[j], acc)), in the order of laneReduce.
template <class T, class Step>
inline __attribute__((always_inline)) T laneSum(int64_t n, Step step) {
  return laneReduce<T>(n, T(0), step, [](T a, T b) { return a + b; });
}

/// The largest of x[0..n) (-inf for n = 0; NaNs are skipped), in the order of laneReduce.
template <class T>
inline __attribute__((always_inline)) T laneMax(const T* __restrict x, int64_t n) {
  return laneReduce<T>(
      n, -std::numeric_limits<T>::infinity(), [x](T& acc, int64_t j) { acc = acc < x[j] ? x[j] : acc; },
      [](T a, T b) { return a < b ? b : a; });
}

namespace detail {
template <class T, class F, size_t... I, class... In>
void vectorBlocksImpl(int64_t n, F& f, T* out, std::index_sequence<I...>, const In*... in) {
  // 256 elements a block: the buffers stay in L1; a multiple of every packet size (16 floats, 8 doubles).
  constexpr int64_t kBlock = 256, kVector = 16;
  using Arr = Eigen::Array<T, Eigen::Dynamic, 1>;
  using Aligned = Eigen::Map<Arr, Eigen::Aligned64>;
  using Source = Eigen::Map<const Arr>;
  alignas(64) T buf[sizeof...(In) + 1][kBlock];
  const T* src[] = {in...};
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t m = std::min(kBlock, n - s), padded = (m + kVector - 1) / kVector * kVector;
    if (m == kBlock) {
      // A whole block reads its inputs where they are: the destination (aligned, whole vectors) decides
      // which code runs, and every element takes the vector code whatever the inputs' alignment.
      Aligned(buf[0], kBlock) = f(Source(src[I] + s, kBlock)...);
    } else {
      for (size_t k = 0; k < sizeof...(In); ++k) {
        const T* __restrict from = src[k] + s;
        T* __restrict to = buf[k + 1];
        for (int64_t j = 0; j < m; ++j) to[j] = from[j];  // inline copies: a call costs more at these sizes
        for (int64_t j = m; j < padded; ++j) to[j] = T(0);
      }
      Aligned(buf[0], padded) = f(Source(buf[I + 1], padded)...);
    }
    const T* __restrict res = buf[0];
    T* __restrict to = out + s;
    for (int64_t j = 0; j < m; ++j) to[j] = res[j];
  }
}
}  // namespace detail

namespace detail {
template <class F, size_t... I, class... In>
GNN_CPU_CLONES void lanesLoopImpl(int64_t n, const F& f, float* out, std::index_sequence<I...>, const In*... in) {
  constexpr int64_t W = Lanes::kWidth;
  int64_t i = 0;
  for (; i + W <= n; i += W) f(Lanes::load(in + i)...).store(out + i);
  if (i < n) {
    float buf[sizeof...(In) + 1][W] = {};
    const float* src[] = {in...};
    for (size_t k = 0; k < sizeof...(In); ++k)
      for (int64_t j = i; j < n; ++j) buf[k + 1][j - i] = src[k][j];
    f(Lanes::load(buf[I + 1])...).store(buf[0]);
    for (int64_t j = i; j < n; ++j) out[j] = buf[0][j - i];
  }
}
}  // namespace detail

/// out[j] = f(Lanes of in...)[j] for j < n, where f maps Lanes (gnn/ops/Lanes.h: sixteen floats, with exp and
/// tanh) to Lanes; the loop is compiled for every CPU level (GNN_CPU_CLONES), so f runs on the widest vectors of
/// the CPU at hand in any build. The tail goes through zero-padded Lanes: every element takes the same code
/// whatever its position. out may be one of the inputs.
template <class F, class... In>
void lanesLoop(int64_t n, const F& f, float* out, const In*... in) {
  static_assert(sizeof...(In) >= 1 && (std::is_same_v<float, In> && ...), "lanesLoop: float inputs");
  detail::lanesLoopImpl(n, f, out, std::index_sequence_for<In...>{}, in...);
}

/// out[j] = f(in...)[j] for j < n, where f maps arrays to an array expression with Eigen's array interface (e.g.
/// [](auto z) { return z.exp(); }). float: f gets Lanes (lanesLoop: the CPU's widest vectors in any build; Lanes
/// has the arithmetic, square, inverse, abs, max, min, exp and tanh). double: f gets Eigen arrays, evaluated in
/// blocks into an aligned buffer (the last block's inputs copied and padded with zeros to whole vectors), so every
/// element takes Eigen's vectorised code: its exp, log1p, ... round differently from the scalar ones that the
/// unaligned head and the tail of a plain Eigen expression take, and which elements those are depends on the
/// address. out may be one of the inputs.
template <class T, class F, class... In>
void vectorBlocks(int64_t n, F f, T* out, const In*... in) {
  static_assert(sizeof...(In) >= 1 && (std::is_same_v<T, In> && ...),
                "vectorBlocks: inputs of the output's type");
  if constexpr (std::is_same_v<T, float>)
    lanesLoop(n, f, out, in...);
  else
    detail::vectorBlocksImpl(n, f, out, std::index_sequence_for<In...>{}, in...);
}

/// Rows [b, e) of width c in groups of about 1,024 elements (at least one row each): f(groupBegin, groupEnd).
/// Row-wise ops run their elementwise vector code (vectorBlocks) over a whole group at once, so narrow rows
/// fill whole vectors and the vector exp's latency is spread over many rows.
template <class F>
inline __attribute__((always_inline)) void rowGroups(int64_t b, int64_t e, int64_t c, F&& f) {
  const int64_t rows = std::max<int64_t>(1, 1024 / std::max<int64_t>(c, 1));
  for (int64_t i = b; i < e; i += rows) f(i, std::min(e, i + rows));
}

/// out = x * y elementwise (all of one shape and dtype T).
template <class T>
void multiplyInto(Tensor& out, const Tensor& x, const Tensor& y) {
  const T* __restrict xp = x.data<T>();
  const T* __restrict yp = y.data<T>();
  T* __restrict o = out.data<T>();
  parallelElements(out.numel(), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t i = b; i < e; ++i) o[i] = xp[i] * yp[i];
  });
}

/// out = x * s elementwise.
template <class T>
void scaleInto(Tensor& out, const Tensor& x, T s) {
  const T* __restrict xp = x.data<T>();
  T* __restrict o = out.data<T>();
  parallelElements(out.numel(), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t i = b; i < e; ++i) o[i] = xp[i] * s;
  });
}

/// out[j] = partials[0][j] + partials[1][j] + ... in chunk order, for `chunks` rows of `width` values stored
/// one after another: how chunked reductions (weight gradients, norm parameters) finish deterministically.
template <class T>
void sumChunkPartials(const T* partials, int64_t chunks, int64_t width, T* out) {
  parallelFor(width, grainFor(chunks, 1024), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    std::copy(partials + b, partials + e, out + b);
    for (int64_t c = 1; c < chunks; ++c) {
      const T* __restrict pc = partials + c * width;
      for (int64_t j = b; j < e; ++j) out[j] += pc[j];
    }
  });
}

/// out[j] = the sum over i < rows of m[i][j] (m row-major [rows, cols]), in increasing i whatever the thread count:
/// split over column ranges, so every thread streams whole rows of its range (a bias gradient, a broadcast row's).
template <class T>
void columnSums(const T* m, int64_t rows, int64_t cols, T* out) {
  parallelFor(cols, grainFor(rows, 16), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    std::vector<T> acc(static_cast<size_t>(e - b), T(0));
    T* __restrict a = acc.data();
    for (int64_t i = 0; i < rows; ++i) {
      const T* __restrict row = m + i * cols + b;
      for (int64_t j = 0; j < e - b; ++j) a[j] += row[j];
    }
    std::copy(acc.begin(), acc.end(), out + b);
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
    parallelElements(X.numel(), cost, [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      for (int64_t i = b; i < e; ++i) y[i] = f(x[i]);
    });
    const int64_t n = X.numel(), bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{name, cost * n, bytes, bytes, (dcost + 1) * n};
    return Variable::record(info, Y, {a}, {from == From::Input ? X : Y},
                            [df, dcost](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
                              const Tensor& V = saved[0];
                              Tensor G = Tensor::empty(V.shape(), V.dtype());
                              const T* __restrict v = V.data<T>();
                              const T* __restrict g = gy.data<T>();
                              T* __restrict o = G.data<T>();
                              parallelElements(V.numel(), dcost + 1, [&](int64_t b, int64_t e) GNN_CPU_CLONES {
                                for (int64_t i = b; i < e; ++i) o[i] = g[i] * df(v[i]);
                              });
                              in[0].addGrad(G);
                            });
  });
}

}  // namespace gnn::ops
