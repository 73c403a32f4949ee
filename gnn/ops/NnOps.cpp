// Log-softmax, layer norm and embedding lookup.
#include <cmath>

#include "gnn/Ops.h"
#include "gnn/Parallel.h"

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
    return Variable::record(Y, {a}, [Y](const Tensor& gy, std::vector<Variable>& in) {
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

Variable layerNorm(const Variable& x, const Variable& gamma, const Variable& beta, double eps) {
  const Tensor &X = x.value(), &Gm = gamma.value(), &Bt = beta.value();
  GNN_CHECK_ARG(X.rank() == 2, "layerNorm: expected [M, F], got ", shapeString(X.shape()));
  GNN_CHECK_ARG(Gm.numel() == X.dim(1) && Bt.numel() == X.dim(1), "layerNorm: gamma ", shapeString(Gm.shape()),
                " and beta ", shapeString(Bt.shape()), " must have ", X.dim(1), " elements");
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const int64_t M = X.dim(0), F = X.dim(1);
    Tensor Y = Tensor::empty(X.shape(), X.dtype()), Xhat = Tensor::empty(X.shape(), X.dtype()),
           Rstd = Tensor::empty({M}, X.dtype());
    auto xm = X.matrix<T>();
    auto xh = Xhat.matrix<T>();
    auto ym = Y.matrix<T>();
    T* rs = Rstd.data<T>();
    auto g = Gm.flat<T>().matrix().transpose();
    auto bb = Bt.flat<T>().matrix().transpose();
    parallelFor(M, grainFor(F), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        T mu = xm.row(i).mean();
        T var = (xm.row(i).array() - mu).square().mean();
        rs[i] = T(1) / std::sqrt(var + static_cast<T>(eps));
        xh.row(i) = (xm.row(i).array() - mu) * rs[i];
        ym.row(i) = xh.row(i).cwiseProduct(g) + bb;
      }
    });
    return Variable::record(Y, {x, gamma, beta}, [Xhat, Rstd, Gm, F](const Tensor& gy, std::vector<Variable>& in) {
      auto go = gy.matrix<T>();
      auto xh = Xhat.matrix<T>();
      if (in[0].requiresGrad()) {
        Tensor G = Tensor::empty(Xhat.shape(), Xhat.dtype());
        auto gm = G.matrix<T>();
        auto gam = Gm.flat<T>().matrix().transpose();
        const T* rs = Rstd.data<T>();
        parallelFor(gm.rows(), grainFor(gm.cols()), [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) {
            auto dxh = go.row(i).cwiseProduct(gam).eval();
            T m1 = dxh.mean();
            T m2 = dxh.cwiseProduct(xh.row(i)).mean();
            gm.row(i) = rs[i] * (dxh.array() - m1 - xh.row(i).array() * m2).matrix();
          }
        });
        in[0].addGrad(G);
      }
      if (in[1].requiresGrad() || in[2].requiresGrad()) {
        Tensor gg({F}, Xhat.dtype()), gb({F}, Xhat.dtype());
        T* ggp = gg.data<T>();
        T* gbp = gb.data<T>();
        // Column sums in row order (deterministic), split over column ranges.
        parallelFor(F, grainFor(go.rows(), 16), [&](int64_t b, int64_t e) {
          for (int64_t i = 0; i < go.rows(); ++i) {
            const T* gr = gy.data<T>() + i * F;
            const T* xr = Xhat.data<T>() + i * F;
            for (int64_t j = b; j < e; ++j) {
              ggp[j] += gr[j] * xr[j];
              gbp[j] += gr[j];
            }
          }
        });
        if (in[1].requiresGrad()) in[1].addGrad(gg.reshape(in[1].shape()));
        if (in[2].requiresGrad()) in[2].addGrad(gb.reshape(in[2].shape()));
      }
    });
  });
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
    return Variable::record(Y, {weight}, [index, V, D](const Tensor& gy, std::vector<Variable>& in) {
      // gW[v] = sum of gy[i] over the (i, k) with index[i, k] = v, in increasing (i, k): split over column
      // ranges, so each thread reads gy once and every element keeps the same order for any thread count.
      Tensor G({V, D}, gy.dtype());
      const int64_t rows = index.dim(0), cols = index.dim(1);
      const int64_t* id = index.data<int64_t>();
      T* g = G.data<T>();
      const T* go = gy.data<T>();
      parallelFor(D, grainFor(rows * cols, 16), [&](int64_t b, int64_t e) {
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t k = 0; k < cols; ++k) {
            T* dst = g + id[i * cols + k] * D;
            const T* src = go + i * D;
            for (int64_t j = b; j < e; ++j) dst[j] += src[j];
          }
      });
      in[0].addGrad(G);
    });
  });
}

}  // namespace gnn
