// Log-softmax, layer norm and embedding lookup.
#include <algorithm>
#include <cmath>
#include <vector>

#include "gnn/Ops.h"
#include "gnn/Parallel.h"
#include "gnn/ops/OpLoops.h"

namespace gnn {

Variable logSoftmax(const Variable& a) {
  const Tensor& X = a.value();
  GNN_CHECK_ARG(X.rank() == 2, "logSoftmax: expected [M, C], got ", shapeString(X.shape()));
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty(X.shape(), X.dtype());
    auto x = X.matrix<T>();
    auto y = Y.matrix<T>();
    parallelFor(x.rows(), grainFor(x.cols()), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        T mx = x.row(i).maxCoeff();
        T lse = mx + std::log((x.row(i).array() - mx).exp().sum());
        y.row(i).array() = x.row(i).array() - lse;
      }
    });
    const int64_t n = X.numel(), bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{"logSoftmax", 12 * n, bytes, bytes, 13 * n};
    return Variable::record(info, Y, {a}, {Y}, [](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
      const Tensor& Y = saved[0];
      // gx = gy - softmax * sum(gy) per row.
      Tensor G = Tensor::empty(Y.shape(), Y.dtype());
      auto g = G.matrix<T>();
      auto go = gy.matrix<T>();
      auto yo = Y.matrix<T>();
      parallelFor(g.rows(), grainFor(g.cols()), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) g.row(i) = go.row(i) - yo.row(i).array().exp().matrix() * go.row(i).sum();
      });
      in[0].addGrad(G);
    });
  });
}

namespace {
// Layer norm, optionally followed by ReLU in the same pass. Keeps the input and each row's mean and 1/std
// (x_hat is recomputed in the backward rather than stored: one [M, F] write and read fewer); with ReLU, the
// output too, whose sign is the ReLU's mask.
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
    auto xm = X.matrix<T>();
    auto ym = Y.matrix<T>();
    T* st = Stats.data<T>();
    auto g = Gm.flat<T>().matrix().transpose();
    auto bb = Bt.flat<T>().matrix().transpose();
    parallelFor(M, grainFor(F), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        T mu = xm.row(i).mean();
        T var = (xm.row(i).array() - mu).square().mean();
        T rs = T(1) / std::sqrt(var + static_cast<T>(eps));
        st[2 * i] = mu;
        st[2 * i + 1] = rs;
        auto pre = ((xm.row(i).array() - mu) * rs) * g.array() + bb.array();
        if (withRelu)
          ym.row(i) = (pre > T(0)).select(pre, T(0)).matrix();
        else
          ym.row(i) = pre.matrix();
      }
    });
    Tensor Yk = withRelu ? Y : Tensor();
    const int64_t bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{op, 8 * M * F, bytes + 2 * static_cast<int64_t>(Gm.nbytes()), bytes, 16 * M * F};
    return Variable::record(info, Y, {x, gamma, beta}, {X, Yk, Stats, Gm},
                            [F](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
      const Tensor &X = saved[0], &Yk = saved[1], &Stats = saved[2], &Gm = saved[3];
      const int64_t M = X.dim(0);
      auto go = gy.matrix<T>();
      auto xm = X.matrix<T>();
      const T* st = Stats.data<T>();
      auto gam = Gm.flat<T>().matrix().transpose();
      const bool needX = in[0].requiresGrad(), needParams = in[1].requiresGrad() || in[2].requiresGrad();
      Tensor G = needX ? Tensor::empty(X.shape(), X.dtype()) : Tensor();
      // Row chunks fixed by the shape; each chunk sums its rows' gamma/beta gradients in row order, and the
      // chunks' partial sums are added in chunk order below: the same bits for any thread count.
      const int64_t chunk = grainFor(F);
      const int64_t chunks = (M + chunk - 1) / chunk;
      Tensor partial = needParams ? Tensor({std::max<int64_t>(chunks, 1), 2 * F}, X.dtype()) : Tensor();
      parallelFor(M, chunk, [&](int64_t b, int64_t e) {
        T* pg = needParams ? partial.data<T>() + (b / chunk) * 2 * F : nullptr;
        T* pb = needParams ? pg + F : nullptr;
        Eigen::Matrix<T, 1, Eigen::Dynamic> dy(F), xh(F);
        for (int64_t i = b; i < e; ++i) {
          const T mu = st[2 * i], rs = st[2 * i + 1];
          xh = (xm.row(i).array() - mu) * rs;
          if (Yk.defined())
            dy = (Yk.matrix<T>().row(i).array() > T(0)).select(go.row(i), T(0));
          else
            dy = go.row(i);
          if (needParams) {
            Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>(pg, F) += dy.cwiseProduct(xh);
            Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>(pb, F) += dy;
          }
          if (needX) {
            auto dxh = dy.cwiseProduct(gam);
            T m1 = dxh.mean();
            T m2 = dxh.cwiseProduct(xh).mean();
            G.matrix<T>().row(i) = rs * (dxh.array() - m1 - xh.array() * m2).matrix();
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
    parallelFor(N, grainFor(C * D), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        auto o = ym.row(i);
        o.setZero();  // 0 + w: the same rounding as a segment sum of gathered rows
        for (int64_t k = 0; k < C; ++k) o += wm.row(idx[i * C + k]);
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
      constexpr int64_t kWidth = 32;  // columns per chunk: a chunk's accumulators stay in L1
      parallelFor(D, kWidth, [&](int64_t b, int64_t e) {
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
