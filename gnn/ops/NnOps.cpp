// Log-softmax, layer norm and embedding lookup.
#include <algorithm>
#include <cmath>
#include <vector>

#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {

Variable logSoftmax(const Variable& a) {
  const Tensor& X = a.value();
  GNN_CHECK_ARG(X.rank() == 2, "logSoftmax: expected [M, C], got ", shapeString(X.shape()));
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty(X.shape(), X.dtype());
    const int64_t C = X.dim(1);
    const T* xp = X.data<T>();
    T* yp = Y.data<T>();
    // Row loops of gnn/ops/OpLoops.h: a row's bits depend on its values and C, not on where it sits. The exp
    // runs over groups of rows at once, with y as its scratch.
    parallelFor(X.dim(0), grainFor(C), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      std::vector<T> mx;
      ops::rowGroups(b, e, C, [&](int64_t i0, int64_t i1) {
        mx.resize(static_cast<size_t>(i1 - i0));
        for (int64_t i = i0; i < i1; ++i) {
          const T* __restrict xr = xp + i * C;
          T* __restrict zr = yp + i * C;
          const T m = mx[i - i0] = ops::laneMax(xr, C);
          for (int64_t j = 0; j < C; ++j) zr[j] = xr[j] - m;
        }
        T* group = yp + i0 * C;
        ops::vectorBlocks((i1 - i0) * C, [](auto z) { return z.exp(); }, group, static_cast<const T*>(group));
        for (int64_t i = i0; i < i1; ++i) {
          const T* __restrict xr = xp + i * C;
          T* __restrict yr = yp + i * C;
          const T lse = mx[i - i0] + std::log(ops::laneSum<T>(C, [yr](T& acc, int64_t j) { acc += yr[j]; }));
          for (int64_t j = 0; j < C; ++j) yr[j] = xr[j] - lse;
        }
      });
    });
    const int64_t n = X.numel(), bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{"logSoftmax", 12 * n, bytes, bytes, 13 * n};
    return Variable::record(info, Y, {a}, {Y}, [](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
      const Tensor& Y = saved[0];
      const int64_t C = Y.dim(1);
      // gx = gy - softmax * sum(gy) per row.
      Tensor G = Tensor::empty(Y.shape(), Y.dtype());
      T* gp = G.data<T>();
      const T* gyp = gy.data<T>();
      const T* yp = Y.data<T>();
      parallelFor(Y.dim(0), grainFor(C), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
        ops::rowGroups(b, e, C, [&](int64_t i0, int64_t i1) {
          // softmax = exp(y) into the gradient's rows, then gx = gy - softmax * sum(gy) in place.
          ops::vectorBlocks((i1 - i0) * C, [](auto y) { return y.exp(); }, gp + i0 * C, yp + i0 * C);
          for (int64_t i = i0; i < i1; ++i) {
            const T* __restrict go = gyp + i * C;
            T* __restrict g = gp + i * C;
            const T s = ops::laneSum<T>(C, [go](T& acc, int64_t j) { acc += go[j]; });
            for (int64_t j = 0; j < C; ++j) g[j] = ops::mulAdd(-g[j], s, go[j]);
          }
        });
      });
      in[0].addGrad(G);
    });
  });
}

namespace {
// Layer norm, optionally followed by ReLU in the same pass. Keeps the input and each row's mean and 1/std
// (x_hat is recomputed in the backward rather than stored: one [M, F] write and read fewer). With ReLU the
// backward recomputes the pre-activation from x_hat too, in the forward's own expression and so to its bits,
// for the ReLU's mask: the output is neither kept nor read back (a fourth [M, F] stream of the backward, and
// under bfloat16 products a tensor no other op keeps).
Variable layerNormImpl(const char* op, const Variable& x, const Variable& gamma, const Variable& beta, double eps,
                       bool withRelu) {
  const Tensor &X = x.value(), &Gm = gamma.value(), &Bt = beta.value();
  GNN_CHECK_ARG(X.rank() == 2, op, ": expected [M, F], got ", shapeString(X.shape()));
  GNN_CHECK_ARG(Gm.numel() == X.dim(1) && Bt.numel() == X.dim(1), op, ": gamma ", shapeString(Gm.shape()),
                " and beta ", shapeString(Bt.shape()), " must have ", X.dim(1), " elements");
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const int64_t M = X.dim(0), F = X.dim(1);
    Tensor Y = Tensor::empty(X.shape(), X.dtype()), Stats = Tensor::empty({M, 2}, X.dtype());
    const T* xp = X.data<T>();
    T* yp = Y.data<T>();
    T* st = Stats.data<T>();
    const T* __restrict g = Gm.data<T>();
    const T* __restrict bb = Bt.data<T>();
    const T count = static_cast<T>(F);
    // Plain loops with lane sums (gnn/ops/OpLoops.h): a row's bits depend on its values and F, not on where
    // it sits in the batch.
    parallelFor(M, rowChunk(M, F), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      for (int64_t i = b; i < e; ++i) {
        const T* __restrict xr = xp + i * F;
        T* __restrict yr = yp + i * F;
        const T mu = ops::laneSum<T>(F, [xr](T& acc, int64_t j) { acc += xr[j]; }) / count;
        const T var = ops::laneSum<T>(F, [xr, mu](T& acc, int64_t j) {
                        const T d = xr[j] - mu;
                        acc = ops::mulAdd(d, d, acc);
                      }) / count;
        const T rs = T(1) / std::sqrt(var + static_cast<T>(eps));
        st[2 * i] = mu;
        st[2 * i + 1] = rs;
        for (int64_t j = 0; j < F; ++j) {
          const T pre = ops::mulAdd((xr[j] - mu) * rs, g[j], bb[j]);
          yr[j] = withRelu ? (pre > T(0) ? pre : T(0)) : pre;
        }
      }
    });
    const int64_t bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{op, 8 * M * F, bytes + 2 * static_cast<int64_t>(Gm.nbytes()), bytes, 16 * M * F};
    return Variable::record(info, Y, {x, gamma, beta}, {X, Stats, Gm, withRelu ? Bt : Tensor()},
                            [F](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
      const Tensor &X = saved[0], &Stats = saved[1], &Gm = saved[2], &Bt = saved[3];
      const int64_t M = X.dim(0);
      const T* gyp = gy.data<T>();
      const T* xp = X.data<T>();
      const T* st = Stats.data<T>();
      const T* __restrict gam = Gm.data<T>();
      const T* __restrict bet = Bt.defined() ? Bt.data<T>() : nullptr;
      const T count = static_cast<T>(F);
      const bool needX = in[0].requiresGrad(), needParams = in[1].requiresGrad() || in[2].requiresGrad();
      Tensor G = needX ? Tensor::empty(X.shape(), X.dtype()) : Tensor();
      T* gxp = needX ? G.data<T>() : nullptr;
      // Row chunks fixed by the shape; each chunk sums its rows' gamma/beta gradients in row order, and the
      // chunks' partial sums are added in chunk order below: the same bits for any thread count.
      const int64_t chunk = rowChunk(M, F);
      const int64_t chunks = (M + chunk - 1) / chunk;
      Tensor partial = needParams ? Tensor({std::max<int64_t>(chunks, 1), 2 * F}, X.dtype()) : Tensor();
      T* partials = needParams ? partial.data<T>() : nullptr;
      parallelFor(M, chunk, [&](int64_t b, int64_t e) GNN_CPU_CLONES {
        T* pg = needParams ? partials + (b / chunk) * 2 * F : nullptr;
        T* pb = needParams ? pg + F : nullptr;
        // Row scratch: x_hat, the output gradient (through the ReLU's mask) and its product with gamma.
        std::vector<T> rowBuf(static_cast<size_t>(3 * F));
        T* __restrict xh = rowBuf.data();
        T* __restrict dy = xh + F;
        T* __restrict dxh = dy + F;
        for (int64_t i = b; i < e; ++i) {
          const T mu = st[2 * i], rs = st[2 * i + 1];
          const T* __restrict xr = xp + i * F;
          const T* __restrict gr = gyp + i * F;
          for (int64_t j = 0; j < F; ++j) xh[j] = (xr[j] - mu) * rs;
          if (bet) {
            for (int64_t j = 0; j < F; ++j) dy[j] = ops::mulAdd(xh[j], gam[j], bet[j]) > T(0) ? gr[j] : T(0);
          } else {
            std::copy(gr, gr + F, dy);
          }
          if (needParams)
            for (int64_t j = 0; j < F; ++j) {
              pg[j] = ops::mulAdd(dy[j], xh[j], pg[j]);
              pb[j] += dy[j];
            }
          if (needX) {
            for (int64_t j = 0; j < F; ++j) dxh[j] = dy[j] * gam[j];
            const T m1 = ops::laneSum<T>(F, [dxh](T& acc, int64_t j) { acc += dxh[j]; }) / count;
            const T m2 = ops::laneSum<T>(F, [dxh, xh](T& acc, int64_t j) {
                           acc = ops::mulAdd(dxh[j], xh[j], acc);
                         }) / count;
            T* __restrict gx = gxp + i * F;
            for (int64_t j = 0; j < F; ++j) gx[j] = rs * ops::mulAdd(-xh[j], m2, dxh[j] - m1);
          }
        }
      });
      if (needX) in[0].addGrad(G);
      if (needParams) {
        // [gamma gradient | beta gradient] per chunk, summed in chunk order.
        Tensor both = Tensor::empty({2 * F}, X.dtype());
        ops::sumChunkPartials(partial.data<T>(), std::max<int64_t>(chunks, 1), 2 * F, both.data<T>());
        Tensor gg = Tensor::empty(in[1].shape(), X.dtype()), gb = Tensor::empty(in[2].shape(), X.dtype());
        std::copy(both.data<T>(), both.data<T>() + F, gg.data<T>());
        std::copy(both.data<T>() + F, both.data<T>() + 2 * F, gb.data<T>());
        if (in[1].requiresGrad()) in[1].addGrad(gg);
        if (in[2].requiresGrad()) in[2].addGrad(gb);
      }
    });
  });
}
}  // namespace

Variable layerNorm(const Variable& x, const Variable& gamma, const Variable& beta, double eps) {
  return layerNormImpl("layerNorm", x, gamma, beta, eps, false);
}

Variable layerNormRelu(const Variable& x, const Variable& gamma, const Variable& beta, double eps) {
  return layerNormImpl("layerNormRelu", x, gamma, beta, eps, true);
}

Variable embedding(const Variable& weight, const Tensor& index) {
  GNN_CHECK_ARG(weight.value().rank() == 2, "embedding: weight must be [V, D], got ",
                shapeString(weight.value().shape()));
  return gatherRows(weight, index);
}

namespace {
// o += w over n elements; restrict-qualified parameters, so that GCC vectorises the loop without a check.
template <class T>
inline void addRow(T* __restrict o, const T* __restrict w, int64_t n) {
  for (int64_t j = 0; j < n; ++j) o[j] += w[j];
}
}  // namespace

Variable embeddingBag(const Variable& weight, const Tensor& index) {
  const Tensor& W = weight.value();
  GNN_CHECK_ARG(W.rank() == 2 && W.isFloating(), "embeddingBag: weight must be a float [V, D], got ",
                shapeString(W.shape()));
  GNN_CHECK_ARG(index.rank() == 2 && index.dtype() == DType::I64, "embeddingBag: index must be int64 [N, C], got ",
                dtypeName(index.dtype()), " ", shapeString(index.shape()));
  const int64_t N = index.dim(0), C = index.dim(1), V = W.dim(0), D = W.dim(1);
  const int64_t* idx = index.data<int64_t>();
  for (int64_t i = 0; i < N * C; ++i)
    GNN_CHECK_ARG(idx[i] >= 0 && idx[i] < V, "embeddingBag: index ", idx[i], " at row ", i / C, " column ", i % C,
                  " is outside [0, ", V, ")");
  return dispatchFloat(W.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({N, D}, W.dtype());
    auto wm = W.matrix<T>();
    auto ym = Y.matrix<T>();
    parallelFor(N, grainFor(C * D), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      // A plain loop: its clones run with the CPU's widest vectors in a portable build (gnn/system/CpuClones.h).
      for (int64_t i = b; i < e; ++i) {
        T* o = ym.row(i).data();
        for (int64_t j = 0; j < D; ++j) o[j] = T(0);  // 0 + w: the same rounding as a segment sum of gathered rows
        for (int64_t k = 0; k < C; ++k) addRow(o, wm.row(idx[i * C + k]).data(), D);
      }
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"embeddingBag", N * C * D, N * C * (8 + D * elem), N * D * elem, N * C * D};
    return Variable::record(info, Y, {weight}, {index}, [V, D](const Tensor& gy, std::vector<GradInput>& in,
                                                             const std::vector<Tensor>& saved) {
      const Tensor& index = saved[0];
      // gW[v] = sum of gy[i] over the (i, k) with index[i, k] = v, in increasing (i, k): split over column
      // ranges, so each thread reads gy once and every element keeps the same order for any thread count.
      Tensor G = Tensor::empty({V, D}, gy.dtype());
      const int64_t rows = index.dim(0), cols = index.dim(1);
      const int64_t* id = index.data<int64_t>();
      T* g = G.data<T>();
      const T* go = gy.data<T>();
      // Columns per chunk: one chunk per thread, in whole vectors of 16, with its V x width accumulators
      // within 256 KB (L2). Each column is summed on its own, so the cut changes no bits and may follow the
      // thread count; wide chunks read each row of gy in long runs, where chunks of 32 columns (GIN's bond
      // encoders: 10 chunks of a 300-wide row) each took a 128-byte piece of every row.
      const int64_t threads = std::max(1, numThreads());
      const int64_t fits = std::max<int64_t>(16, (int64_t{1} << 16) / std::max<int64_t>(V, 1) / 16 * 16);
      const int64_t width = std::min(fits, std::max<int64_t>(32, ((D + threads - 1) / threads + 15) / 16 * 16));
      parallelFor(D, width, [&](int64_t b, int64_t e) GNN_CPU_CLONES {
        const int64_t w = e - b;
        std::vector<T> acc(static_cast<size_t>(V * w), T(0));
        for (int64_t i = 0; i < rows; ++i) {
          const T* __restrict src = go + i * D + b;
          for (int64_t k = 0; k < cols; ++k) {
            T* __restrict dst = acc.data() + id[i * cols + k] * w;
            for (int64_t j = 0; j < w; ++j) dst[j] += src[j];
          }
        }
        for (int64_t v = 0; v < V; ++v) std::copy(acc.data() + v * w, acc.data() + (v + 1) * w, g + v * D + b);
      });
      in[0].addGrad(G);
    });
  });
}

}  // namespace gnn
