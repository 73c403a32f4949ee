// scaledBlockSum (gnn/ops/ScaledBlockSum.h): the forward and the three gradients in row loops, parallel over
// rows, each row's numbers independent of the chunk it falls in.
#include <algorithm>
#include <vector>

#include "gnn/ops/OpLoops.h"
#include "gnn/ops/ScaledBlockSum.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

// o += c * y.
template <class T>
inline void addScaled(T* __restrict o, const T* __restrict y, T c, int64_t F) {
  for (int64_t f = 0; f < F; ++f) {
    const T p = y[f] * c;
    o[f] += p;
  }
}
template <class T>
inline void addScaledRowInto(T* __restrict o, const T* __restrict y, int64_t F) {
  for (int64_t f = 0; f < F; ++f) o[f] += y[f];
}
template <class T>
inline void scaleInto(T* __restrict o, const T* __restrict g, T c, int64_t F) {
  for (int64_t f = 0; f < F; ++f) o[f] = g[f] * c;
}
template <class T>
inline T dot(const T* __restrict a, const T* __restrict b, int64_t F) {
  T s = 0;
  for (int64_t f = 0; f < F; ++f) s = ops::mulAdd(a[f], b[f], s);
  return s;
}

template <class T>
const T* scaledSavedValue(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

// The gradients of blocks (gy scaled per block) and of the factors that need one (each row's dot product of
// gy with its block).
template <class T>
void scaledBlockBackward(const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved,
                         const std::vector<int>& slot, int64_t S) {
  const int64_t N = gy.dim(0), F = gy.dim(1);
  in[0].addGrad(gy);
  std::vector<const T*> factor(static_cast<size_t>(S));
  std::vector<T*> gf(static_cast<size_t>(S), nullptr);
  std::vector<Tensor> GF(static_cast<size_t>(S));
  for (int64_t s = 0; s < S; ++s) {
    factor[s] = scaledSavedValue<T>(saved[1 + s]);
    if (slot[s] >= 0 && in[slot[s]].requiresGrad()) {
      GF[s] = Tensor::empty(in[slot[s]].shape(), gy.dtype());
      gf[s] = GF[s].data<T>();
    }
  }
  const bool blocksGrad = in[1].requiresGrad();
  Tensor GB = blocksGrad ? Tensor::empty({N, S * F}, gy.dtype()) : Tensor();
  T* gb = blocksGrad ? GB.data<T>() : nullptr;
  const T *g = gy.data<T>(), *y = scaledSavedValue<T>(saved[0]);
  parallelFor(N, grainFor(2 * S * F), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t n = b; n < e; ++n)
      for (int64_t s = 0; s < S; ++s) {
        if (gb) {
          T* o = gb + (n * S + s) * F;
          if (factor[s])
            scaleInto(o, g + n * F, factor[s][n], F);
          else
            std::copy(g + n * F, g + (n + 1) * F, o);
        }
        if (gf[s]) gf[s][n] = dot(g + n * F, y + (n * S + s) * F, F);
      }
  });
  if (gb) in[1].addGrad(GB);
  for (int64_t s = 0; s < S; ++s)
    if (gf[s]) in[slot[s]].addGrad(GF[s]);
}

}  // namespace

Variable scaledBlockSum(const Variable& base, const Variable& blocks, const std::vector<Variable>& factors) {
  const char* op = "scaledBlockSum";
  const Tensor &X = base.value(), &B = blocks.value();
  const int64_t S = static_cast<int64_t>(factors.size());
  GNN_CHECK_ARG(X.rank() == 2 && X.isFloating() && S > 0, op,
                ": expected a float [N, F] base and a factor, got ", dtypeName(X.dtype()), " ",
                shapeString(X.shape()), " and ", S, " factors");
  const int64_t N = X.dim(0), F = X.dim(1);
  GNN_CHECK_ARG(B.rank() == 2 && B.dim(0) == N && B.dim(1) == S * F && B.dtype() == X.dtype(), op,
                ": blocks ", dtypeName(B.dtype()), " ", shapeString(B.shape()), " for ", S,
                " blocks of base ", dtypeName(X.dtype()), " ", shapeString(X.shape()));
  for (const Variable& f : factors)
    GNN_CHECK_ARG(!f.defined() || (f.value().numel() == N && f.dtype() == X.dtype() && f.value().rank() <= 2),
                  op, ": a factor must hold one ", dtypeName(X.dtype()), " per row (", N, "), got ",
                  dtypeName(f.dtype()), " ", shapeString(f.shape()));
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({N, F}, X.dtype());
    std::vector<const T*> factor;
    for (const Variable& f : factors) factor.push_back(f.defined() ? f.value().data<T>() : nullptr);
    const T *x = X.data<T>(), *y = B.data<T>();
    T* out = Y.data<T>();
    parallelFor(N, grainFor(2 * S * F), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      for (int64_t n = b; n < e; ++n) {
        T* o = out + n * F;
        std::copy(x + n * F, x + (n + 1) * F, o);
        for (int64_t s = 0; s < S; ++s) {
          const T* row = y + (n * S + s) * F;
          if (factor[s])
            addScaled(o, row, factor[s][n], F);
          else
            addScaledRowInto(o, row, F);
        }
      }
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    std::vector<Variable> inputs = {base, blocks};
    std::vector<int> slot;  // factor s's position in inputs (-1: undefined)
    std::vector<Tensor> saved = {Tensor()};
    bool factorGrad = false;
    for (const Variable& f : factors) {
      slot.push_back(f.defined() ? static_cast<int>(inputs.size()) : -1);
      if (f.defined()) inputs.push_back(f);
      factorGrad |= f.defined() && f.requiresGrad();
      saved.push_back(f.defined() && blocks.requiresGrad() ? f.value() : Tensor());
    }
    if (factorGrad) saved[0] = B;
    OpInfo info{op, 2 * S * N * F, (1 + S) * N * F * elem + S * N * elem, N * F * elem,
                (blocks.requiresGrad() ? S * N * F : 0) + (factorGrad ? 2 * S * N * F : 0)};
    return Variable::record(info, Y, std::move(inputs), std::move(saved),
                            [slot, S](const Tensor& gy, std::vector<GradInput>& in,
                                      const std::vector<Tensor>& sv) { scaledBlockBackward<T>(gy, in, sv, slot, S); });
  });
}

}  // namespace gnn
