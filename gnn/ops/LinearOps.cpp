// Dense algebra: matmul, broadcasting add/sub/mul, scale, concat, sum, mean.
#include <algorithm>
#include <vector>

#include "gnn/ops/GemmProducts.h"
#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/ops/RowBlocks.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn {
using ops::kPanelRows;
using ops::RowBlocks;
namespace {
template <class T>
using Mat = RowMatrix<T>;

// out = op(a) * op(b) for a row block range of out, a and b given as Eigen expressions producers.
template <class T, class LhsRows, class Rhs>
void blockedProduct(MatrixMap<T> out, LhsRows lhsRows, const Rhs& rhs) {
  const int64_t inner = out.rows() ? static_cast<int64_t>(rhs.rows()) : 0;
  RowBlocks<T>(out.rows(), inner, out.cols()).forEach([&](int64_t b, int64_t e) {
    if (e > b) out.middleRows(b, e - b).noalias() = lhsRows(b, e - b) * rhs;
  });
}

// out = lhs * rhs (+ bias on every row when bias is not null), each row rounded the same wherever it is (see
// kPanelRows): blocks of whole panels, and the matrix's last partial panel through a zero-padded copy.
template <class T, class Lhs, class Rhs>
void rowStableProduct(MatrixMap<T> out, const Lhs& lhs, const Rhs& rhs, const T* bias) {
  const int64_t M = out.rows(), K = lhs.cols(), N = out.cols(), panel = kPanelRows<T>;
  const auto biasRow = ConstMatrixMap<T>(bias ? bias : nullptr, 1, bias ? N : 0);
  auto product = [&](auto&& o, const auto& l) {
    if (bias) {
      o.rowwise() = biasRow.row(0);
      o.noalias() += l * rhs;
    } else {
      o.noalias() = l * rhs;
    }
  };
  // Eigen evaluates a product with rows + inner + cols below EIGEN_GEMM_TO_COEFFBASED_THRESHOLD coefficient by
  // coefficient, another summation order than its GEMM and GEMV kernels: a row alone in a small product (a
  // panel of 6 doubles with K = 7, N = 1 without AVX) would round differently from the same row in a large
  // one. So a block too small for the kernels is computed on a zero-padded copy tall enough for them.
  const int64_t kernelRows = std::max<int64_t>(panel, (EIGEN_GEMM_TO_COEFFBASED_THRESHOLD + panel - 1) / panel * panel);
  RowBlocks<T>(M, K, N).forEach([&](int64_t b, int64_t e) {
    if (e <= b) return;
    int64_t whole = b + (e - b) / panel * panel;
    if (whole - b + K + N < EIGEN_GEMM_TO_COEFFBASED_THRESHOLD) whole = b;
    if (whole > b) product(out.middleRows(b, whole - b), lhs.middleRows(b, whole - b));
    if (whole < e) {
      const int64_t rows = std::max(kernelRows, (e - whole + panel - 1) / panel * panel);
      RowMatrix<T> l = RowMatrix<T>::Zero(rows, K), o(rows, N);
      l.topRows(e - whole) = lhs.middleRows(whole, e - whole);
      product(o, l);
      out.middleRows(whole, e - whole) = o.topRows(e - whole);
    }
  });
}

enum class Broadcast { Same, Row, Column };
Broadcast broadcastKind(const char* op, const Tensor& a, const Tensor& b) {
  if (a.shape() == b.shape()) return Broadcast::Same;
  int64_t cols = a.rank() >= 2 ? a.cols() : -1;
  if (cols >= 0 && ((b.rank() == 1 && b.dim(0) == cols) || (b.rank() == 2 && b.dim(0) == 1 && b.dim(1) == cols)))
    return Broadcast::Row;
  if (a.rank() == 2 && b.rank() == 2 && b.dim(0) == a.dim(0) && b.dim(1) == 1) return Broadcast::Column;
  invalidArgument(op, ": cannot broadcast shape ", shapeString(b.shape()), " onto ", shapeString(a.shape()),
                  " (expected equal shapes, a row [", cols, "] or a column [", a.rows(), ", 1])");
}

void checkSameFloat(const char* op, const Tensor& a, const Tensor& b) {
  GNN_CHECK_ARG(a.isFloating() && a.dtype() == b.dtype(), op, ": dtypes differ or are not floating (",
                dtypeName(a.dtype()), " vs ", dtypeName(b.dtype()), ")");
}

// Reduces g [M, N] to the shape of b under the broadcast kind (sums over broadcast rows/columns).
// Each output element sums its inputs in increasing row (or column) order whatever the thread count.
template <class T>
Tensor reduceTo(const Tensor& g, const Shape& bShape, Broadcast kind) {
  if (kind == Broadcast::Same) return g;
  Tensor r = Tensor::empty(bShape, g.dtype());
  auto gm = g.matrix<T>();
  T* rv = r.data<T>();
  if (kind == Broadcast::Row) {
    // Column sums, split over column ranges so every thread streams whole rows of its range.
    parallelFor(gm.cols(), grainFor(gm.rows(), 16), [&](int64_t b, int64_t e) {
      std::vector<T> acc(static_cast<size_t>(e - b), T(0));
      T* __restrict a = acc.data();
      for (int64_t i = 0; i < gm.rows(); ++i) {
        const T* __restrict row = g.data<T>() + i * gm.cols() + b;
        for (int64_t j = 0; j < e - b; ++j) a[j] += row[j];
      }
      std::copy(acc.begin(), acc.end(), rv + b);
    });
  } else {
    parallelFor(gm.rows(), grainFor(gm.cols()), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) rv[i] = gm.row(i).sum();
    });
  }
  return r;
}
// out [R, C] = P^T Q for P [M, R] and Q [M, C], the shape of weight gradients (M = batch rows). With few
// output rows, row blocks are few and uneven (600 rows give 7 blocks of 96: one core idles a quarter of the
// time) and each block re-packs all of Q. So when M is long, the product is split over M instead: fixed
// chunks of rows (from the shapes only), partial products summed in chunk order, deterministic for any
// thread count. About four chunks (at least 256 rows each): every partial is written and read back once
// more, so fewer, longer chunks pay (eight chunks of 252 rows took GIN's bf16 step 3.8% longer than four of
// 502). The partials take at most 8 times out's size, so large outputs keep the row blocks.
// With colSums: also the column sums of P (a bias gradient) into colSums [R], from the same chunks while they
// are in cache. With P16 and Q16 (P and Q rounded to bfloat16 already, ops::roundToBf16): the bfloat16
// products on them, the same kernel calls as rounding each chunk here.
template <class T>
void transposedProduct(Tensor& out, const Tensor& P, const Tensor& Q, Tensor* colSums = nullptr,
                       const Tensor* P16 = nullptr, const Tensor* Q16 = nullptr) {
  auto om = out.matrix<T>();
  auto pm = P.matrix<T>();
  const int64_t M = pm.rows(), R = om.rows(), C = om.cols();
  const int64_t chunk = evenChunk(M, std::max<int64_t>(256, (M + 4 * 32 - 1) / (4 * 32) * 32), 4);
  const int64_t chunks = (M + chunk - 1) / chunk;
  const bool rounded = P16 && Q16;
  if (chunks < 2 || R >= 8 * 256 || R * C > (int64_t{1} << 21)) {
    if constexpr (std::is_same_v<T, float>) {
      if (rounded)
        ops::gemmRowsBf16(out.data<T>(), R, C, M, ops::bf16Bits(*P16), true, ops::bf16Bits(*Q16), false, nullptr);
      else
        ops::gemmRows(out.data<T>(), R, C, M, P.data<T>(), true, R, Q.data<T>(), false, C, nullptr);
    } else {
      auto pt = pm.transpose();
      blockedProduct<T>(om, [&](int64_t s, int64_t n) { return pt.middleRows(s, n); }, Q.matrix<T>());
    }
    if (colSums) *colSums = reduceTo<T>(P, {R}, Broadcast::Row);
    return;
  }
  Tensor partial = Tensor::empty({chunks, R * C}, out.dtype());
  Tensor partialSums = colSums ? Tensor::empty({chunks, R}, out.dtype()) : Tensor();
  T* part = partial.data<T>();
  // The kernels store whole vectors of 16 floats across an output row: a narrow output whose width is not a
  // multiple of 16 (SchNet's first filter layer: [128, 50] from 50 Gaussians) wastes a quarter of each row's
  // last vector, so its transpose [C, R] is computed instead (R a multiple of 16) and transposed once at the
  // end: that kernel ran 20% faster on [50 x 375] x [375 x 128].
  const bool transposed = std::is_same_v<T, float> && !rounded && C % 16 != 0 && R % 16 == 0 && C < R;
  parallelFor(chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t lo = c * chunk, n = std::min(M, lo + chunk) - lo;
      if constexpr (std::is_same_v<T, float>) {
        if (rounded)
          ops::gemmOnThreadBf16(true, false, R, C, n, ops::bf16Bits(*P16) + lo * R, R, ops::bf16Bits(*Q16) + lo * C, C,
                                part + c * R * C, C);
        else if (transposed)
          ops::gemmOnThread(true, false, C, R, n, Q.data<T>() + lo * C, C, P.data<T>() + lo * R, R, part + c * R * C,
                            R);
        else
          ops::gemmOnThread(true, false, R, C, n, P.data<T>() + lo * R, R, Q.data<T>() + lo * C, C, part + c * R * C,
                            C);
      } else {
        MatrixMap<T>(part + c * R * C, R, C).noalias() =
            pm.middleRows(lo, n).transpose() * Q.matrix<T>().middleRows(lo, n);
      }
      if (colSums) {
        T* __restrict cs = partialSums.data<T>() + c * R;
        std::fill(cs, cs + R, T(0));
        for (int64_t i = lo; i < lo + n; ++i) {
          const T* __restrict row = P.data<T>() + i * R;
          for (int64_t j = 0; j < R; ++j) cs[j] += row[j];
        }
      }
    }
  });
  if (colSums) {
    *colSums = Tensor::empty({R}, out.dtype());
    ops::sumChunkPartials(partialSums.data<T>(), chunks, R, colSums->data<T>());
  }
  if (!transposed) {
    ops::sumChunkPartials(part, chunks, R * C, out.data<T>());
    return;
  }
  Tensor sumT = Tensor::empty({C, R}, out.dtype());
  ops::sumChunkPartials(part, chunks, R * C, sumT.data<T>());
  om = sumT.matrix<T>().transpose();
}

// linear's backward in bfloat16 precision: its forward kept X and W rounded (X16 [M, K], W16 [N, K]); the output
// gradient is rounded once for both products. The same kernel calls, and bits, as matmulNTBackward rounding
// every operand of every product itself.
void linearBf16Backward(const Tensor& X16, const Tensor& W16, const Tensor& gy, GradInput& x, GradInput& w,
                        GradInput* bias) {
  const int64_t M = gy.dim(0), N = gy.dim(1);
  const bool withBias = bias && bias->requiresGrad();
  if (!x.requiresGrad() && !w.requiresGrad()) {
    if (withBias) bias->addGrad(reduceTo<float>(gy, {N}, Broadcast::Row).reshape(bias->shape()));
    return;
  }
  const Tensor gy16 = ops::roundToBf16(gy.data<float>(), M, N, N);
  if (x.requiresGrad()) {
    const int64_t K = W16.dim(1);
    Tensor gx = Tensor::empty(x.shape(), gy.dtype());
    ops::gemmRowsBf16(gx.data<float>(), M, K, N, ops::bf16Bits(gy16), false, ops::bf16Bits(W16), false, nullptr);
    x.addGrad(gx);
  }
  if (w.requiresGrad()) {
    Tensor gw = Tensor::empty(w.shape(), gy.dtype());
    Tensor gbias;
    transposedProduct<float>(gw, gy, Tensor(), withBias ? &gbias : nullptr, &gy16, &X16);
    w.addGrad(gw);
    if (withBias) bias->addGrad(gbias.reshape(bias->shape()));
  } else if (withBias) {
    bias->addGrad(reduceTo<float>(gy, {N}, Broadcast::Row).reshape(bias->shape()));
  }
}

// Gradients of Y = A B^T (A [M, K], B [N, K]) into a and b, for those that need them.
// With bias: also the bias gradient (column sums of gY), computed with the weight gradient's chunks.
template <class T>
void matmulNTBackward(const Tensor& A, const Tensor& B, const Tensor& gy, GradInput& a, GradInput& b,
                      GradInput* bias = nullptr) {
  auto gm = gy.matrix<T>();
  if (a.requiresGrad()) {
    Tensor ga = Tensor::empty(a.shape(), gy.dtype());
    if constexpr (std::is_same_v<T, float>) {
      const int64_t M = gy.dim(0), N = gy.dim(1), K = B.dim(1);
      ops::gemmRows(ga.data<T>(), M, K, N, gy.data<T>(), false, N, B.data<T>(), false, K, nullptr);
    } else {
      auto bm = B.matrix<T>();
      blockedProduct<T>(ga.matrix<T>(), [&](int64_t s, int64_t n) { return gm.middleRows(s, n); }, bm);
    }
    a.addGrad(ga);
  }
  if (b.requiresGrad()) {
    // gB [N, K] = gY^T [N, M] x A [M, K]
    Tensor gb = Tensor::empty(b.shape(), gy.dtype());
    Tensor gbias;
    const bool withBias = bias && bias->requiresGrad();
    transposedProduct<T>(gb, gy, A, withBias ? &gbias : nullptr);
    b.addGrad(gb);
    if (withBias) bias->addGrad(gbias.reshape(bias->shape()));
  } else if (bias && bias->requiresGrad()) {
    bias->addGrad(reduceTo<T>(gy, {gy.dim(1)}, Broadcast::Row).reshape(bias->shape()));
  }
}
}  // namespace

Variable matmul(const Variable& a, const Variable& b) {
  const Tensor &A = a.value(), &B = b.value();
  GNN_CHECK_ARG(A.rank() == 2 && B.rank() == 2 && A.dim(1) == B.dim(0), "matmul: shapes ", shapeString(A.shape()),
                " and ", shapeString(B.shape()), " do not chain ([M, K] x [K, N])");
  checkSameFloat("matmul", A, B);
  return dispatchFloat(A.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({A.dim(0), B.dim(1)}, A.dtype());
    if constexpr (std::is_same_v<T, float>)
      ops::gemmRows(Y.data<T>(), A.dim(0), B.dim(1), A.dim(1), A.data<T>(), false, A.dim(1), B.data<T>(), false, B.dim(1), nullptr);
    else
      rowStableProduct<T>(Y.matrix<T>(), A.matrix<T>(), B.matrix<T>(), nullptr);
    const int64_t flops = 2 * A.dim(0) * A.dim(1) * B.dim(1);
    OpInfo info{"matmul", flops, static_cast<int64_t>(A.nbytes() + B.nbytes()), static_cast<int64_t>(Y.nbytes()),
                flops * (a.requiresGrad() + b.requiresGrad())};
    // Each input's gradient needs the other input.
    return Variable::record(info, Y, {a, b}, {b.requiresGrad() ? A : Tensor(), a.requiresGrad() ? B : Tensor()},
                            [](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
      const Tensor &A = saved[0], &B = saved[1];
      auto gm = gy.matrix<T>();
      if (in[0].requiresGrad()) {
        Tensor ga = Tensor::empty(in[0].shape(), gy.dtype());
        if constexpr (std::is_same_v<T, float>) {
          const int64_t M = gy.dim(0), N = gy.dim(1), K = B.dim(0);
          ops::gemmRows(ga.data<T>(), M, K, N, gy.data<T>(), false, N, B.data<T>(), true, N, nullptr);
        } else {
          auto bt = B.matrix<T>().transpose();
          blockedProduct<T>(ga.matrix<T>(), [&](int64_t s, int64_t n) { return gm.middleRows(s, n); }, bt);
        }
        in[0].addGrad(ga);
      }
      if (in[1].requiresGrad()) {
        Tensor gb = Tensor::empty(in[1].shape(), gy.dtype());
        transposedProduct<T>(gb, A, gy);
        in[1].addGrad(gb);
      }
    });
  });
}

Variable matmulNT(const Variable& a, const Variable& b) {
  const Tensor &A = a.value(), &B = b.value();
  GNN_CHECK_ARG(A.rank() == 2 && B.rank() == 2 && A.dim(1) == B.dim(1), "matmulNT: shapes ",
                shapeString(A.shape()), " and ", shapeString(B.shape()), " do not chain ([M, K] x [N, K]^T)");
  checkSameFloat("matmulNT", A, B);
  return dispatchFloat(A.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({A.dim(0), B.dim(0)}, A.dtype());
    if constexpr (std::is_same_v<T, float>)
      ops::gemmRows(Y.data<T>(), A.dim(0), B.dim(0), A.dim(1), A.data<T>(), false, A.dim(1), B.data<T>(), true, B.dim(1), nullptr);
    else
      rowStableProduct<T>(Y.matrix<T>(), A.matrix<T>(), B.matrix<T>().transpose(), nullptr);
    const int64_t flops = 2 * A.dim(0) * A.dim(1) * B.dim(0);
    OpInfo info{"matmulNT", flops, static_cast<int64_t>(A.nbytes() + B.nbytes()), static_cast<int64_t>(Y.nbytes()),
                flops * (a.requiresGrad() + b.requiresGrad())};
    return Variable::record(info, Y, {a, b}, {b.requiresGrad() ? A : Tensor(), a.requiresGrad() ? B : Tensor()},
                            [](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
                              matmulNTBackward<T>(saved[0], saved[1], gy, in[0], in[1]);
                            });
  });
}

Variable linear(const Variable& x, const Variable& weight, const Variable& bias) {
  const Tensor &X = x.value(), &W = weight.value();
  GNN_CHECK_ARG(X.rank() == 2 && W.rank() == 2 && X.dim(1) == W.dim(1), "linear: input ", shapeString(X.shape()),
                " does not match weight ", shapeString(W.shape()), " ([M, K] and [N, K])");
  checkSameFloat("linear", X, W);
  const bool hasBias = bias.defined();
  if (hasBias) {
    GNN_CHECK_ARG(bias.value().numel() == W.dim(0), "linear: bias ", shapeString(bias.shape()), " for ", W.dim(0),
                  " outputs");
    checkSameFloat("linear", X, bias.value());
  }
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({X.dim(0), W.dim(0)}, X.dtype());
    const int64_t M = X.dim(0), K = X.dim(1), N = W.dim(0);
    // bfloat16 precision: X and W rounded once, here, and kept rounded for the backward (half of float32's
    // bytes), which would otherwise round them again.
    Tensor X16, W16;
    if constexpr (std::is_same_v<T, float>) {
      if (ExecutionContext::current().matmulPrecision() == MatmulPrecision::BFloat16) {
        X16 = ops::roundToBf16(X.data<T>(), M, K, K);
        W16 = ops::roundToBf16(W.data<T>(), N, K, K);
        ops::gemmRowsBf16(Y.data<T>(), M, N, K, ops::bf16Bits(X16), false, ops::bf16Bits(W16), true,
                          hasBias ? bias.value().data<T>() : nullptr);
      } else {
        ops::gemmRows(Y.data<T>(), M, N, K, X.data<T>(), false, K, W.data<T>(), true, K,
                      hasBias ? bias.value().data<T>() : nullptr);
      }
    } else {
      rowStableProduct<T>(Y.matrix<T>(), X.matrix<T>(), W.matrix<T>().transpose(),
                          hasBias ? bias.value().data<T>() : nullptr);
    }
    std::vector<Variable> inputs{x, weight};
    if (hasBias) inputs.push_back(bias);
    const int64_t flops = 2 * M * K * N;
    const bool biasGrad = hasBias && bias.requiresGrad();
    OpInfo info{"linear", flops + (hasBias ? M * N : 0),
                static_cast<int64_t>(X.nbytes() + W.nbytes() + (hasBias ? bias.value().nbytes() : 0)),
                static_cast<int64_t>(Y.nbytes()),
                flops * (x.requiresGrad() + weight.requiresGrad()) + (biasGrad ? M * N : 0)};
    const bool rounded = X16.defined();
    return Variable::record(info, Y, std::move(inputs),
                            {weight.requiresGrad() ? (rounded ? X16 : X) : Tensor(),
                             x.requiresGrad() ? (rounded ? W16 : W) : Tensor()},
                            [rounded](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
                              GradInput* b = in.size() > 2 ? &in[2] : nullptr;
                              if constexpr (std::is_same_v<T, float>) {
                                if (rounded) return linearBf16Backward(saved[0], saved[1], gy, in[0], in[1], b);
                              }
                              matmulNTBackward<T>(saved[0], saved[1], gy, in[0], in[1], b);
                            });
  });
}

namespace {
// Shared body of add and sub: y = a + sign * b with broadcasting.
Variable addSigned(const char* op, const Variable& a, const Variable& b, double sign) {
  const Tensor &A = a.value(), &B = b.value();
  checkSameFloat(op, A, B);
  Broadcast kind = broadcastKind(op, A, B);
  return dispatchFloat(A.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    // One pass writing Y (no copy of A first).
    Tensor Y = Tensor::empty(A.shape(), A.dtype());
    T s = static_cast<T>(sign);
    if (kind == Broadcast::Same) {
      auto y = Y.flat<T>();
      auto av = A.flat<T>(), bv = B.flat<T>();
      parallelElements(Y.numel(), [&](int64_t b, int64_t e) {
        y.segment(b, e - b) = av.segment(b, e - b) + s * bv.segment(b, e - b);
      });
    } else {
      auto ym = Y.matrix<T>();
      auto am = A.matrix<T>();
      auto bv = (s * B.flat<T>()).matrix().eval();
      parallelFor(ym.rows(), grainFor(ym.cols()), [&](int64_t b, int64_t e) {
        if (kind == Broadcast::Row)
          ym.middleRows(b, e - b) = am.middleRows(b, e - b).rowwise() + bv.transpose();
        else
          ym.middleRows(b, e - b) = am.middleRows(b, e - b).colwise() + bv.segment(b, e - b);
      });
    }
    Shape bShape = B.shape();
    const int64_t bytes = static_cast<int64_t>(Y.nbytes());
    OpInfo info{op, Y.numel(), bytes + static_cast<int64_t>(B.nbytes()), bytes, b.requiresGrad() ? 2 * Y.numel() : 0};
    return Variable::record(info, Y, {a, b}, {}, [kind, bShape, s](const Tensor& gy, std::vector<GradInput>& in,
                                                                   const std::vector<Tensor>&) {
      if (in[0].requiresGrad()) in[0].addGrad(gy);
      if (in[1].requiresGrad()) {
        Tensor g = reduceTo<T>(gy, bShape, kind);
        if (s != T(1)) {
          Tensor n = Tensor::empty(g.shape(), g.dtype());
          auto nv = n.flat<T>();
          auto gv = g.flat<T>();
          parallelElements(n.numel(), [&](int64_t b, int64_t e) { nv.segment(b, e - b) = s * gv.segment(b, e - b); });
          g = std::move(n);
        }
        in[1].addGrad(g);
      }
    });
  });
}
}  // namespace

Variable add(const Variable& a, const Variable& b) { return addSigned("add", a, b, 1.0); }
Variable sub(const Variable& a, const Variable& b) { return addSigned("sub", a, b, -1.0); }

Variable mul(const Variable& a, const Variable& b) {
  const Tensor &A = a.value(), &B = b.value();
  checkSameFloat("mul", A, B);
  Broadcast kind = broadcastKind("mul", A, B);
  return dispatchFloat(A.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if (kind == Broadcast::Column) {
      // b [M, 1] scales each row of a (a mask, SchNet's cutoff on its filters): row by row, no [M, N] copy of b.
      Tensor Y = Tensor::empty(A.shape(), A.dtype());
      auto am = A.matrix<T>();
      auto ym = Y.matrix<T>();
      const T* bv = B.data<T>();
      parallelFor(am.rows(), grainFor(am.cols()), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) ym.row(r) = am.row(r) * bv[r];
      });
      Shape bShape = B.shape();
      const int64_t bytes = static_cast<int64_t>(Y.nbytes());
      OpInfo info{"mul", Y.numel(), bytes + static_cast<int64_t>(B.nbytes()), bytes,
                  Y.numel() * (a.requiresGrad() + 2 * b.requiresGrad())};
      return Variable::record(
          info, Y, {a, b}, {b.requiresGrad() ? A : Tensor(), a.requiresGrad() ? B : Tensor()},
          [bShape](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
            auto gm = gy.matrix<T>();
            if (in[0].requiresGrad()) {
              const T* bv = saved[1].data<T>();
              Tensor g = Tensor::empty(gy.shape(), gy.dtype());
              auto om = g.matrix<T>();
              parallelFor(gm.rows(), grainFor(gm.cols()), [&](int64_t r0, int64_t r1) {
                for (int64_t r = r0; r < r1; ++r) om.row(r) = gm.row(r) * bv[r];
              });
              in[0].addGrad(g);
            }
            if (in[1].requiresGrad()) {
              auto am = saved[0].matrix<T>();
              Tensor g = Tensor::empty(bShape, gy.dtype());
              T* o = g.data<T>();
              parallelFor(gm.rows(), grainFor(gm.cols()), [&](int64_t r0, int64_t r1) {
                for (int64_t r = r0; r < r1; ++r) o[r] = gm.row(r).dot(am.row(r));
              });
              in[1].addGrad(g);
            }
          });
    }
    // Expands b to a's shape once; forward and backward then work elementwise.
    Tensor Bx = B;
    if (kind != Broadcast::Same) {
      Bx = Tensor::empty(A.shape(), A.dtype());
      auto bm = Bx.matrix<T>();
      auto bv = B.flat<T>();
      parallelFor(bm.rows(), grainFor(bm.cols()), [&](int64_t b, int64_t e) {
        if (kind == Broadcast::Row)
          bm.middleRows(b, e - b).rowwise() = bv.matrix().transpose();
        else
          bm.middleRows(b, e - b).colwise() = bv.segment(b, e - b).matrix();
      });
    }
    Tensor Y = Tensor::empty(A.shape(), A.dtype());
    ops::multiplyInto<T>(Y, A, Bx);
    Shape bShape = B.shape();
    const int64_t bytes = static_cast<int64_t>(Y.nbytes());
    OpInfo info{"mul", Y.numel(), bytes + static_cast<int64_t>(B.nbytes()), bytes,
                Y.numel() * (a.requiresGrad() + 2 * b.requiresGrad())};
    return Variable::record(info, Y, {a, b}, {b.requiresGrad() ? A : Tensor(), a.requiresGrad() ? Bx : Tensor()},
                            [bShape, kind](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
      const Tensor &A = saved[0], &Bx = saved[1];
      if (in[0].requiresGrad()) {
        Tensor g = Tensor::empty(gy.shape(), gy.dtype());
        ops::multiplyInto<T>(g, gy, Bx);
        in[0].addGrad(g);
      }
      if (in[1].requiresGrad()) {
        Tensor g = Tensor::empty(gy.shape(), gy.dtype());
        ops::multiplyInto<T>(g, gy, A);
        in[1].addGrad(reduceTo<T>(g, bShape, kind));
      }
    });
  });
}

Variable scale(const Variable& a, double s) {
  const Tensor& A = a.value();
  return dispatchFloat(A.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty(A.shape(), A.dtype());
    ops::scaleInto<T>(Y, A, static_cast<T>(s));
    const int64_t bytes = static_cast<int64_t>(Y.nbytes());
    OpInfo info{"scale", Y.numel(), bytes, bytes, Y.numel()};
    return Variable::record(info, Y, {a}, {}, [s](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>&) {
      Tensor g = Tensor::empty(gy.shape(), gy.dtype());
      ops::scaleInto<T>(g, gy, static_cast<T>(s));
      in[0].addGrad(g);
    });
  });
}

Variable concatCols(const std::vector<Variable>& parts) {
  GNN_CHECK_ARG(!parts.empty(), "concatCols: no inputs");
  const Tensor& first = parts[0].value();
  int64_t rows = first.dim(0), cols = 0;
  for (const auto& p : parts) {
    const Tensor& t = p.value();
    GNN_CHECK_ARG(t.rank() == 2 && t.dim(0) == rows && t.dtype() == first.dtype(), "concatCols: part of shape ",
                  shapeString(t.shape()), " (", dtypeName(t.dtype()), ") does not match ", rows, " rows of ",
                  dtypeName(first.dtype()));
    cols += t.dim(1);
  }
  return dispatchFloat(first.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({rows, cols}, first.dtype());
    std::vector<int64_t> offsets;
    int64_t off = 0;
    for (const auto& p : parts) {
      offsets.push_back(off);
      Y.matrix<T>().middleCols(off, p.dim(1)) = p.value().matrix<T>();
      off += p.dim(1);
    }
    const int64_t bytes = static_cast<int64_t>(Y.nbytes());
    OpInfo info{"concatCols", 0, bytes, bytes, 0};
    return Variable::record(info, Y, parts, {}, [offsets](const Tensor& gy, std::vector<GradInput>& in,
                                                          const std::vector<Tensor>&) {
      for (size_t i = 0; i < in.size(); ++i) {
        if (!in[i].requiresGrad()) continue;
        Tensor g(in[i].shape(), gy.dtype());
        g.matrix<T>() = gy.matrix<T>().middleCols(offsets[i], in[i].dim(1));
        in[i].addGrad(g);
      }
    });
  });
}

Variable sum(const Variable& a) {
  const Tensor& A = a.value();
  return dispatchFloat(A.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::scalar(0, A.dtype());
    // Plain sequential sum: deterministic; reductions here are small (losses).
    T acc = 0;
    const T* p = A.data<T>();
    for (int64_t i = 0; i < A.numel(); ++i) acc += p[i];
    Y.data<T>()[0] = acc;
    Shape shape = A.shape();
    OpInfo info{"sum", A.numel(), static_cast<int64_t>(A.nbytes()), static_cast<int64_t>(Y.nbytes()), A.numel()};
    return Variable::record(info, Y, {a}, {}, [shape](const Tensor& gy, std::vector<GradInput>& in,
                                                      const std::vector<Tensor>&) {
      in[0].addGrad(Tensor::full(shape, gy.item(), gy.dtype()));
    });
  });
}

Variable mean(const Variable& a) {
  int64_t n = a.value().numel();
  GNN_CHECK_ARG(n > 0, "mean of an empty tensor");
  return scale(sum(a), 1.0 / static_cast<double>(n));
}

}  // namespace gnn
