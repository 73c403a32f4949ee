// edgeMatVec: NNConv's messages x_j Theta_e as one op (ops/Ops.h): each edge's source row times its own
// [in, out] matrix, read in edge order (the [E, in out] matrices are the largest tensor of the layer: read once
// forward, once backward, the gradient written once), without the gathered [E, in] rows of gather + bmm.
// The backward's source-row gradients are per-edge rows summed per source in edge order: the same bits for any
// thread count.
#include <vector>

#include "gnn/ops/IndexPlan.h"
#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {

namespace {
// The row kernels are always inlined into the edge loops compiled per CPU level (GNN_CPU_CLONES); left to the
// inliner, some stayed calls to their baseline (SSE2) build in a portable one (the forward took 2.4x).

// m[k] = sum over c of x[c] theta[c out + k] (theta row-major [in, out]), the terms added in c order.
template <class T>
__attribute__((always_inline)) inline void rowTimesMatrix(const T* __restrict x, const T* __restrict theta,
                                                          int64_t in, int64_t out, T* __restrict m) {
  for (int64_t k = 0; k < out; ++k) m[k] = T(0);
  for (int64_t c = 0; c < in; ++c) {
    const T xc = x[c];
    const T* __restrict row = theta + c * out;
    for (int64_t k = 0; k < out; ++k) m[k] = ops::mulAdd(xc, row[k], m[k]);
  }
}

// The same for a width OUT dividing 16, in 16 lanes (16 / OUT rows of theta at a time, lane l holding row
// c + l / OUT, column l % OUT): 16 independent sums instead of OUT chains of `in` dependent multiply-adds; the
// lanes of one column are added at the end in lane order. Rows past the last whole group follow, in order.
template <class T, int OUT>
__attribute__((always_inline)) inline void rowTimesMatrixLanes(const T* __restrict x,
                                                               const T* __restrict theta, int64_t in,
                                                               T* __restrict m) {
  constexpr int L = 16, R = L / OUT;
  T acc[L] = {};
  int64_t c = 0;
  for (; c + R <= in; c += R) {
    const T* __restrict chunk = theta + c * OUT;
    for (int l = 0; l < L; ++l) acc[l] = ops::mulAdd(x[c + l / OUT], chunk[l], acc[l]);
  }
  for (int k = 0; k < OUT; ++k) {
    T v = acc[k];
    for (int r = 1; r < R; ++r) v += acc[r * OUT + k];
    m[k] = v;
  }
  for (; c < in; ++c)
    for (int k = 0; k < OUT; ++k) m[k] = ops::mulAdd(x[c], theta[c * OUT + k], m[k]);
}

template <class T>
__attribute__((always_inline)) inline void messageOf(const T* x, const T* theta, int64_t in, int64_t out, T* m) {
  switch (out) {
    case 1: return rowTimesMatrixLanes<T, 1>(x, theta, in, m);
    case 2: return rowTimesMatrixLanes<T, 2>(x, theta, in, m);
    case 4: return rowTimesMatrixLanes<T, 4>(x, theta, in, m);
    case 8: return rowTimesMatrixLanes<T, 8>(x, theta, in, m);
    case 16: return rowTimesMatrixLanes<T, 16>(x, theta, in, m);
    default: return rowTimesMatrix(x, theta, in, out, m);
  }
}

// dtheta[c out + k] = x[c] g[k], dx[c] = sum over k of theta[c out + k] g[k].
template <class T>
__attribute__((always_inline)) inline void edgeBackward(const T* __restrict x, const T* __restrict theta,
                                                        const T* __restrict g, int64_t in, int64_t out,
                                                        T* __restrict dtheta, T* __restrict dx) {
  for (int64_t c = 0; c < in; ++c) {
    const T* __restrict row = theta + c * out;
    T* __restrict drow = dtheta ? dtheta + c * out : nullptr;
    T acc = 0;
    for (int64_t k = 0; k < out; ++k) {
      if (drow) drow[k] = x[c] * g[k];
      acc = ops::mulAdd(row[k], g[k], acc);
    }
    if (dx) dx[c] = acc;
  }
}

// edgeBackward for a width OUT dividing 16, 16 lanes at a time (16 / OUT rows of theta): each lane's product
// once, the gradient rows written whole and each row's OUT products added in column order.
template <class T, int OUT>
__attribute__((always_inline)) inline void edgeBackwardLanes(const T* __restrict x, const T* __restrict theta,
                                                             const T* __restrict g, int64_t in,
                                                             T* __restrict dtheta, T* __restrict dx) {
  constexpr int L = 16, R = L / OUT;
  T gl[L], prod[L];
  for (int l = 0; l < L; ++l) gl[l] = g[l % OUT];
  int64_t c = 0;
  for (; c + R <= in; c += R) {
    const T* __restrict chunk = theta + c * OUT;
    if (dtheta) {
      T* __restrict dchunk = dtheta + c * OUT;
      for (int l = 0; l < L; ++l) dchunk[l] = x[c + l / OUT] * gl[l];
    }
    if (dx) {
      for (int l = 0; l < L; ++l) prod[l] = chunk[l] * gl[l];
      for (int r = 0; r < R; ++r) {
        T v = prod[r * OUT];
        for (int k = 1; k < OUT; ++k) v += prod[r * OUT + k];
        dx[c + r] = v;
      }
    }
  }
  if (c < in) edgeBackward(x + c, theta + c * OUT, g, in - c, OUT, dtheta ? dtheta + c * OUT : nullptr,
                           dx ? dx + c : nullptr);
}

template <class T>
__attribute__((always_inline)) inline void gradientsOf(const T* x, const T* theta, const T* g, int64_t in,
                                                       int64_t out, T* dtheta, T* dx) {
  switch (out) {
    case 1:
      return edgeBackwardLanes<T, 1>(x, theta, g, in, dtheta, dx);
    case 2: return edgeBackwardLanes<T, 2>(x, theta, g, in, dtheta, dx);
    case 4: return edgeBackwardLanes<T, 4>(x, theta, g, in, dtheta, dx);
    case 8: return edgeBackwardLanes<T, 8>(x, theta, g, in, dtheta, dx);
    case 16: return edgeBackwardLanes<T, 16>(x, theta, g, in, dtheta, dx);
    default: return edgeBackward(x, theta, g, in, out, dtheta, dx);
  }
}

}  // namespace

Variable edgeMatVec(const Variable& x, const Variable& theta, const Tensor& src) {
  const Tensor &X = x.value(), &W = theta.value();
  GNN_CHECK_ARG(X.rank() == 2 && X.isFloating() && W.rank() == 3 && W.dtype() == X.dtype() && W.dim(1) == X.dim(1),
                "edgeMatVec: x [N, in] ", shapeString(X.shape()), " and theta [E, in, out] ", shapeString(W.shape()),
                " must be float with one in");
  const int64_t N = X.dim(0), in = X.dim(1), E = W.dim(0), out = W.dim(2);
  GNN_CHECK_ARG(src.numel() == E, "edgeMatVec: ", src.numel(), " source indices for ", E, " edge matrices");
  Tensor srcs = ops::indexValues("edgeMatVec", src.reshape({E}), N);
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor M = Tensor::empty({E, out}, X.dtype());
    const T *xp = X.data<T>(), *wp = W.data<T>();
    const int64_t* s = srcs.data<int64_t>();
    T* mp = M.data<T>();
    parallelFor(E, grainFor(in * out), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      for (int64_t t = b; t < e; ++t) messageOf(xp + s[t] * in, wp + t * in * out, in, out, mp + t * out);
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"edgeMatVec", 2 * E * in * out, E * (8 + (in + in * out) * elem), E * out * elem, 4 * E * in * out};
    return Variable::record(
        info, M, {x, theta}, {X, W, srcs},
        [N, in, out, E](const Tensor& gm, std::vector<GradInput>& ins, const std::vector<Tensor>& saved) {
          const T *xp = saved[0].data<T>(), *wp = saved[1].data<T>(), *g = gm.data<T>();
          const int64_t* s = saved[2].data<int64_t>();
          const bool wantX = ins[0].requiresGrad(), wantW = ins[1].requiresGrad();
          Tensor DW = wantW ? Tensor::empty({E, in, out}, gm.dtype()) : Tensor();
          Tensor DXE = wantX ? Tensor::empty({E, in}, gm.dtype()) : Tensor();  // each edge's part of dx
          parallelFor(E, grainFor(in * out * 2), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
            for (int64_t t = b; t < e; ++t)
              gradientsOf(xp + s[t] * in, wp + t * in * out, g + t * out, in, out,
                          wantW ? DW.data<T>() + t * in * out : nullptr, wantX ? DXE.data<T>() + t * in : nullptr);
          });
          if (wantX) {
            Tensor srcT = saved[2];
            const ops::IndexPlan bySrc = ops::planFor(srcT, N);
            Tensor DX = Tensor::zeros({N, in}, gm.dtype());
            const T* dxe = DXE.data<T>();
            parallelFor(N, grainFor(in * std::max<int64_t>(1, E / std::max<int64_t>(N, 1))),
                        [&](int64_t b, int64_t e) GNN_CPU_CLONES {
                          for (int64_t j = b; j < e; ++j) {
                            T* __restrict o = DX.data<T>() + j * in;
                            for (int64_t q = bySrc.ptr[j]; q < bySrc.ptr[j + 1]; ++q) {
                              const T* __restrict r = dxe + bySrc.perm[q] * in;
                              for (int64_t c = 0; c < in; ++c) o[c] += r[c];
                            }
                          }
                        });
            ins[0].addGrad(DX);
          }
          if (wantW) ins[1].addGrad(DW);
        });
  });
}

}  // namespace gnn
