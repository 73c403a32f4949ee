// Attention's dense ops: batched products (Q K^T, P V; computed by gnn/ops/Product.h) and a softmax over the
// last axis with an additive bias (Graphormer's spatial and edge encodings) and a keep mask (padding). The fused
// multi-head self-attention built on them is in MultiHeadAttentionOps.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gnn/kernels/MaskedRow.h"
#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/ops/Product.h"
#include "gnn/system/Check.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

// Leading (batch) dimensions and the matrix of a rank 3 or 4 operand of a batched product.
struct Batched {
  Shape lead;
  int64_t count, rows, cols;
};
Batched batched(const char* op, const Tensor& a, const Tensor& b) {
  GNN_CHECK_ARG(a.rank() >= 3 && a.rank() <= 4 && b.rank() == a.rank(), op, ": expected two rank 3 or 4 tensors, got ",
                shapeString(a.shape()), " and ", shapeString(b.shape()), " (use matmul for rank 2)");
  Shape lead(a.shape().begin(), a.shape().end() - 2);
  GNN_CHECK_ARG(Shape(b.shape().begin(), b.shape().end() - 2) == lead, op, ": batch dimensions of ",
                shapeString(a.shape()), " and ", shapeString(b.shape()), " differ");
  GNN_CHECK_ARG(a.isFloating() && a.dtype() == b.dtype(), op, ": dtypes differ or are not floating (",
                dtypeName(a.dtype()), " vs ", dtypeName(b.dtype()), ")");
  return {lead, shapeNumel(lead), a.dim(-2), a.dim(-1)};
}

// ---- broadcasting over softmax rows ----

// Where each row of x (x seen as rows of its last dimension) finds its row of a tensor broadcast to x's shape
// (numpy rules: the tensor's shape padded with leading ones, each dimension x's or 1). Element j of x's row r
// pairs with element offset(r) + j * colStride of the tensor.
struct RowBroadcast {
  int64_t dims[3] = {1, 1, 1};    // x's leading dimensions, padded to 3 with leading ones
  int64_t stride[3] = {0, 0, 0};  // the tensor's element stride along each (0 where it is broadcast)
  int64_t colStride = 1;          // 1, or 0 when the tensor's last dimension is 1
  bool same = true;               // the tensor has x's shape exactly
  int64_t offset(int64_t r) const {
    const int64_t i2 = r % dims[2], i1 = (r / dims[2]) % dims[1], i0 = r / (dims[1] * dims[2]);
    return i0 * stride[0] + i1 * stride[1] + i2 * stride[2];
  }
};

RowBroadcast rowBroadcast(const char* op, const char* what, const Shape& x, const Shape& t, bool lastMayBeOne) {
  const int r = static_cast<int>(x.size());
  const auto fail = [&] {
    invalidArgument(op, ": ", what, " of shape ", shapeString(t), " does not broadcast to x ", shapeString(x),
                    " (each dimension must be x's or 1, the last ", lastMayBeOne ? "x's or 1)" : "x's)");
  };
  if (static_cast<int>(t.size()) > r) fail();
  Shape padded(static_cast<size_t>(r - static_cast<int>(t.size())), 1);
  padded.insert(padded.end(), t.begin(), t.end());
  for (int k = 0; k < r; ++k)
    if (padded[k] != x[k] && padded[k] != 1) fail();
  if (padded[r - 1] != x[r - 1] && !(lastMayBeOne && padded[r - 1] == 1)) fail();
  RowBroadcast b;
  b.same = padded == x;
  b.colStride = padded[r - 1] == x[r - 1] ? 1 : 0;
  int64_t s = padded[r - 1];
  for (int k = r - 2, slot = 2; k >= 0; --k, --slot) {
    b.dims[slot] = x[k];
    b.stride[slot] = padded[k] == 1 ? 0 : s;
    s *= padded[k];
  }
  return b;
}

}  // namespace

namespace {
// bmm (b read as [.., K, N]) and bmmNT (b read transposed from [.., N, K]): Y = A x B or A x B^T, with gradients
// gA = gY x B^T (bmm) or gY x B (bmmNT), and gB = A^T x gY (bmm) or gY^T x A (bmmNT).
Variable batchedMatmul(const char* op, const Variable& a, const Variable& b, bool nt) {
  const Tensor &A = a.value(), &B = b.value();
  const Batched s = batched(op, A, B);
  GNN_CHECK_ARG(B.dim(nt ? -1 : -2) == s.cols, op, ": shapes ", shapeString(A.shape()), " and ",
                shapeString(B.shape()), " do not chain ",
                nt ? "([.., M, K] x [.., N, K]^T)" : "([.., M, K] x [.., K, N])");
  const int64_t M = s.rows, K = s.cols, N = B.dim(nt ? -2 : -1), batches = s.count;
  Tensor Y = ops::batchedProduct({&A}, {&B, nt});
  const int64_t flops = 2 * batches * M * K * N;
  OpInfo info{op, flops, static_cast<int64_t>(A.nbytes() + B.nbytes()), static_cast<int64_t>(Y.nbytes()),
              flops * (a.requiresGrad() + b.requiresGrad())};
  // Each input's gradient needs the other input.
  return Variable::record(info, Y, {a, b}, {b.requiresGrad() ? A : Tensor(), a.requiresGrad() ? B : Tensor()},
                          [nt](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
    // gA [M, K] = gY [M, N] x (B^T or B) [N, K]
    if (in[0].requiresGrad()) in[0].addGrad(ops::batchedProduct({&gy}, {&saved[1], !nt}));
    // gB [N, K] = gY^T [N, M] x A [M, K] (bmmNT), or [K, N] = A^T [K, M] x gY [M, N] (bmm)
    if (in[1].requiresGrad())
      in[1].addGrad(nt ? ops::batchedProduct({&gy, true}, {&saved[0]}) : ops::batchedProduct({&saved[0], true}, {&gy}));
  });
}
}  // namespace

Variable bmm(const Variable& a, const Variable& b) { return batchedMatmul("bmm", a, b, false); }

Variable bmmNT(const Variable& a, const Variable& b) { return batchedMatmul("bmmNT", a, b, true); }

namespace {

// ---- softmax's row loops ----

// y = the softmax of each row of x + bias (x, y [rows, C]), exactly 0 where the mask is 0; bp and mp (null when
// absent) broadcast to x along bb and mb. Row loops of gnn/ops/OpLoops.h: a row's bits depend on its values
// and C, not on where it sits. The exp runs over groups of rows at once.
template <class T>
void softmaxForwardRows(const T* xp, const T* bp, const RowBroadcast& bb, const uint8_t* mp,
                        const RowBroadcast& mb, int64_t rows, int64_t C, T* yp) {
  parallelFor(rows, grainFor(16 * C), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    std::vector<uint8_t> kept;
    ops::rowGroups(b, e, C, [&](int64_t i0, int64_t i1) {
      kept.resize(static_cast<size_t>(i1 - i0));
      for (int64_t i = i0; i < i1; ++i) {
        const T* xr = xp + i * C;
        T* yr = yp + i * C;
        const T* br = bp ? bp + bb.offset(i) : nullptr;
        const uint8_t* mr = mp ? mp + mb.offset(i) : nullptr;
        // Scores (x + bias) into y, masked ones as -inf, minus their maximum (found in lanes: the loops
        // vectorise).
        if (br)
          for (int64_t j = 0; j < C; ++j) yr[j] = xr[j] + br[j];
        else
          std::copy(xr, xr + C, yr);
        bool any = true;
        if (mr) {
          any = false;
          for (int64_t j = 0; j < C; ++j) {
            if (mr[j * mb.colStride])
              any = true;
            else
              yr[j] = -std::numeric_limits<T>::infinity();
          }
        }
        kept[i - i0] = any;
        const T mx = ops::laneMax(static_cast<const T*>(yr), C);
        for (int64_t j = 0; j < C; ++j) yr[j] -= mx;
      }
      T* group = yp + i0 * C;
      ops::vectorBlocks((i1 - i0) * C, [](auto z) { return z.exp(); }, group, static_cast<const T*>(group));
      for (int64_t i = i0; i < i1; ++i) {
        T* yr = yp + i * C;
        if (!kept[i - i0]) {  // every entry masked: no distribution, all zeros
          std::fill(yr, yr + C, T(0));
          continue;
        }
        if (mp) {  // exactly 0 where masked, whatever the vectorised exp gives for -inf
          const uint8_t* mr = mp + mb.offset(i);
          for (int64_t j = 0; j < C; ++j)
            if (!mr[j * mb.colStride]) yr[j] = T(0);
        }
        const T sum = ops::laneSum<T>(C, [yr](T& acc, int64_t j) { acc += yr[j]; });
        for (int64_t j = 0; j < C; ++j) yr[j] /= sum;
      }
    });
  });
}

// gScores = y * (gy - sum(gy * y)) per row (y, gy and the result op [rows, C]): the gradient of x and, reduced
// over broadcast rows, of the bias. Masked entries have y = 0, so they get 0.
template <class T>
void softmaxGradientRows(const T* yp, const T* gp, int64_t rows, int64_t C, T* op) {
  parallelFor(rows, grainFor(4 * C), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t i = b; i < e; ++i) {
      const T* __restrict y = yp + i * C;
      const T* __restrict g = gp + i * C;
      T* __restrict o = op + i * C;
      const T dot = ops::laneSum<T>(C, [y, g](T& acc, int64_t j) { acc = ops::mulAdd(y[j], g[j], acc); });
      for (int64_t j = 0; j < C; ++j) o[j] = y[j] * (g[j] - dot);
    }
  });
}

// The bias's gradient gb [biasRows, C] from the scores' gradient op [rows, C], the bias broadcast along bb:
// each bias row sums the rows of op that broadcast from it, in increasing row order.
template <class T>
void biasGradientRows(const T* op, int64_t rows, int64_t C, const RowBroadcast& bb, int64_t biasRows, T* gb) {
  // The bias's own leading dimensions (padded to 3) and, for each, whether x runs over it.
  int64_t bd[3], stepX[3];
  for (int k = 0; k < 3; ++k) {
    bd[k] = bb.stride[k] ? bb.dims[k] : 1;
    stepX[k] = bb.dims[k];
  }
  const int64_t xRowStride[3] = {stepX[1] * stepX[2], stepX[2], 1};
  const int64_t fanIn = rows / std::max<int64_t>(biasRows, 1);
  parallelFor(biasRows, grainFor(fanIn * C), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t br = b; br < e; ++br) {
      const int64_t j2 = br % bd[2], j1 = (br / bd[2]) % bd[1], j0 = br / (bd[1] * bd[2]);
      const int64_t lo[3] = {j0, j1, j2};
      Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> acc(gb + br * C, C);
      acc.setZero();
      // x's rows over the broadcast dimensions (all of them) and the bias's own (just this row's index).
      for (int64_t i0 = bb.stride[0] ? lo[0] : 0; i0 < (bb.stride[0] ? lo[0] + 1 : stepX[0]); ++i0)
        for (int64_t i1 = bb.stride[1] ? lo[1] : 0; i1 < (bb.stride[1] ? lo[1] + 1 : stepX[1]); ++i1)
          for (int64_t i2 = bb.stride[2] ? lo[2] : 0; i2 < (bb.stride[2] ? lo[2] + 1 : stepX[2]); ++i2) {
            const int64_t xr = i0 * xRowStride[0] + i1 * xRowStride[1] + i2 * xRowStride[2];
            acc += Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(op + xr * C, C);
          }
    }
  });
}

}  // namespace

Variable softmax(const Variable& x, int axis, const Variable& bias, const Tensor& mask) {
  const Tensor& X = x.value();
  const int r = X.rank();
  GNN_CHECK_ARG(r >= 1, "softmax: expected rank 1 to 4, got shape ", shapeString(X.shape()));
  GNN_CHECK_ARG(axis == -1 || axis == r - 1, "softmax: axis ", axis, " of shape ", shapeString(X.shape()),
                " is not the last; move it last first (transpose or permute)");
  const bool hasBias = bias.defined(), hasMask = mask.defined();
  RowBroadcast bb, mb;
  if (hasBias) {
    const Tensor& Bv = bias.value();
    GNN_CHECK_ARG(Bv.dtype() == X.dtype(), "softmax: bias is ", dtypeName(Bv.dtype()), " but x is ",
                  dtypeName(X.dtype()));
    bb = rowBroadcast("softmax", "bias", X.shape(), Bv.shape(), false);
  }
  if (hasMask) {
    GNN_CHECK_ARG(mask.dtype() == DType::U8, "softmax: mask must be uint8 (1 = keep), got ", dtypeName(mask.dtype()));
    mb = rowBroadcast("softmax", "mask", X.shape(), mask.shape(), true);
  }
  const int64_t C = X.dim(-1), rows = C ? X.numel() / C : 0;
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty(X.shape(), X.dtype());
    const T* xp = X.data<T>();
    const T* bp = hasBias ? bias.value().data<T>() : nullptr;
    const uint8_t* mp = hasMask ? mask.data<uint8_t>() : nullptr;
    T* yp = Y.data<T>();
    softmaxForwardRows<T>(xp, bp, bb, mp, mb, rows, C, yp);
    std::vector<Variable> inputs{x};
    if (hasBias) inputs.push_back(bias);
    const bool biasGrad = hasBias && bias.requiresGrad();
    const int64_t n = X.numel(), bytes = static_cast<int64_t>(X.nbytes());
    OpInfo info{"softmax", (hasBias ? 15 : 14) * n,
                bytes + (hasBias ? static_cast<int64_t>(bias.value().nbytes()) : 0) + (hasMask ? mask.numel() : 0),
                bytes, (x.requiresGrad() || biasGrad ? 4 * n : 0) + (biasGrad && !bb.same ? n : 0)};
    Shape biasShape = hasBias ? bias.shape() : Shape();
    return Variable::record(info, Y, std::move(inputs), {Y},
                            [C, bb, biasShape](const Tensor& gy, std::vector<GradInput>& in,
                                               const std::vector<Tensor>& saved) {
      const Tensor& Y = saved[0];
      const bool needBias = in.size() > 1 && in[1].requiresGrad();
      const int64_t rows = C ? Y.numel() / C : 0;
      // gScores = y * (gy - sum(gy * y)) per row: the gradient of x and, reduced over broadcast rows, of the
      // bias. Masked entries have y = 0, so they get 0.
      Tensor G = Tensor::empty(Y.shape(), Y.dtype());
      softmaxGradientRows<T>(Y.data<T>(), gy.data<T>(), rows, C, G.data<T>());
      if (in[0].requiresGrad()) in[0].addGrad(G);
      if (!needBias) return;
      if (bb.same) {
        in[1].addGrad(G);
        return;
      }
      // Each bias row sums the rows of G that broadcast from it, in increasing row order.
      Tensor GB = Tensor::empty(biasShape, G.dtype());
      biasGradientRows<T>(G.data<T>(), rows, C, bb, C ? GB.numel() / C : 0, GB.data<T>());
      in[1].addGrad(GB);
    });
  });
}

}  // namespace gnn
