// Dense algebra: matmul, broadcasting add/sub/mul, scale, concat, sum, mean. Their products go through
// gnn/ops/Product.h, which owns how a product is computed.
#include <algorithm>
#include <vector>

#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/ops/Product.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {
using ops::Operand;
namespace {

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
    ops::columnSums(g.data<T>(), gm.rows(), gm.cols(), rv);
  } else {
    parallelFor(gm.rows(), grainFor(gm.cols()), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) rv[i] = gm.row(i).sum();
    });
  }
  return r;
}

// An input of a product as the product reads it: its float values, or its bfloat16 rounding (a BF16 tensor that
// linear kept for its backward).
Operand operand(const Tensor& t, bool transposed) {
  return t.dtype() == DType::BF16 ? Operand{nullptr, transposed, &t} : Operand{&t, transposed, nullptr};
}

// Gradients of Y = A op(B) (op(B) = B^T when bT: matmulNT and linear; B when not: matmul) into a and b, for
// those that need them: gA = gY op(B)^T, gB = A^T gY (B) or gY^T A (B^T). With bias: also the bias gradient
// (column sums of gY), from the weight gradient's chunks. A and B may be kept rounded to bfloat16 (linear in
// bfloat16 precision); gY is then rounded once for both products.
void productBackward(const Tensor& A, const Tensor& B, bool bT, const Tensor& gy, GradInput& a, GradInput& b,
                     GradInput* bias) {
  const bool biasGrad = bias && bias->requiresGrad();
  auto isRounded = [](const Tensor& t) { return t.defined() && t.dtype() == DType::BF16; };
  const bool rounded = isRounded(A) || isRounded(B);
  const Tensor gy16 = rounded && (a.requiresGrad() || b.requiresGrad()) ? ops::toBfloat16(gy) : Tensor();
  const Operand g{&gy, false, gy16.defined() ? &gy16 : nullptr}, gT{&gy, true, g.rounded};
  if (a.requiresGrad()) a.addGrad(ops::product(g, operand(B, !bT)));
  Tensor biasSums;
  if (b.requiresGrad())
    b.addGrad(bT ? ops::product(gT, operand(A, false), nullptr, biasGrad ? &biasSums : nullptr)
                 : ops::product(operand(A, true), g));
  if (!biasGrad) return;
  if (!biasSums.defined()) {
    biasSums = dispatchFloat(gy.dtype(), [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      return reduceTo<T>(gy, {gy.dim(1)}, Broadcast::Row);
    });
  }
  bias->addGrad(biasSums.reshape(bias->shape()));
}

// The forward of Y = A op(B) (+ bias): its FLOPs and bytes, the tape entry, and the backward (productBackward).
// A16 and B16: A and B rounded to bfloat16, when the product ran on them; the backward then reads them in place
// of A and B.
Variable recordProduct(const char* op, const Tensor& Y, const Variable& a, const Variable& b, const Variable& bias,
                       bool bT, const Tensor& A16, const Tensor& B16) {
  const Tensor &A = a.value(), &B = b.value();
  const int64_t M = Y.dim(0), N = Y.dim(1), K = A.dim(1);
  const bool hasBias = bias.defined(), biasGrad = hasBias && bias.requiresGrad();
  std::vector<Variable> inputs{a, b};
  if (hasBias) inputs.push_back(bias);
  const int64_t flops = 2 * M * K * N;
  OpInfo info{op, flops + (hasBias ? M * N : 0),
              static_cast<int64_t>(A.nbytes() + B.nbytes() + (hasBias ? bias.value().nbytes() : 0)),
              static_cast<int64_t>(Y.nbytes()), flops * (a.requiresGrad() + b.requiresGrad()) + (biasGrad ? M * N : 0)};
  // Each input's gradient needs the other input.
  return Variable::record(info, Y, std::move(inputs),
                          {b.requiresGrad() ? (A16.defined() ? A16 : A) : Tensor(),
                           a.requiresGrad() ? (B16.defined() ? B16 : B) : Tensor()},
                          [bT](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
                            productBackward(saved[0], saved[1], bT, gy, in[0], in[1], in.size() > 2 ? &in[2] : nullptr);
                          });
}
}  // namespace

Variable matmul(const Variable& a, const Variable& b) {
  const Tensor &A = a.value(), &B = b.value();
  GNN_CHECK_ARG(A.rank() == 2 && B.rank() == 2 && A.dim(1) == B.dim(0), "matmul: shapes ", shapeString(A.shape()),
                " and ", shapeString(B.shape()), " do not chain ([M, K] x [K, N])");
  checkSameFloat("matmul", A, B);
  const Tensor Y = ops::product({&A}, {&B});
  return recordProduct("matmul", Y, a, b, Variable(), false, Tensor(), Tensor());
}

Variable matmulNT(const Variable& a, const Variable& b) {
  const Tensor &A = a.value(), &B = b.value();
  GNN_CHECK_ARG(A.rank() == 2 && B.rank() == 2 && A.dim(1) == B.dim(1), "matmulNT: shapes ",
                shapeString(A.shape()), " and ", shapeString(B.shape()), " do not chain ([M, K] x [N, K]^T)");
  checkSameFloat("matmulNT", A, B);
  const Tensor Y = ops::product({&A}, {&B, true});
  return recordProduct("matmulNT", Y, a, b, Variable(), true, Tensor(), Tensor());
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
  // bfloat16 precision: X and W rounded once, here, and kept rounded for the backward (half of float32's
  // bytes), which would otherwise round them again.
  const Tensor X16 = ops::roundedOperand(X), W16 = ops::roundedOperand(W);
  const Tensor Y = ops::product({&X, false, X16.defined() ? &X16 : nullptr}, {&W, true, W16.defined() ? &W16 : nullptr},
                                hasBias ? &bias.value() : nullptr);
  return recordProduct("linear", Y, x, weight, bias, true, X16, W16);
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
    // Plain loops compiled per CPU level (Eigen's expressions keep the vector width the library was built for).
    const T* __restrict ap = A.data<T>();
    T* __restrict yp = Y.data<T>();
    if (kind == Broadcast::Same) {
      const T* __restrict bp = B.data<T>();
      parallelElements(Y.numel(), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
        for (int64_t i = b; i < e; ++i) yp[i] = ap[i] + s * bp[i];
      });
    } else {
      std::vector<T> scaled(static_cast<size_t>(B.numel()));
      for (int64_t i = 0; i < B.numel(); ++i) scaled[static_cast<size_t>(i)] = s * B.data<T>()[i];
      const T* __restrict bv = scaled.data();
      const int64_t R = A.rows(), C = A.cols();
      const bool row = kind == Broadcast::Row;
      parallelFor(R, grainFor(C), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
        for (int64_t i = b; i < e; ++i)
          for (int64_t j = 0; j < C; ++j) yp[i * C + j] = ap[i * C + j] + (row ? bv[j] : bv[i]);
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

Variable concatRows(const std::vector<Variable>& parts) {
  GNN_CHECK_ARG(!parts.empty(), "concatRows: no inputs");
  if (parts.size() == 1) return parts[0];
  const int64_t cols = parts[0].dim(1);
  int64_t rows = 0;
  std::vector<Variable> flat;
  for (const Variable& p : parts) {
    GNN_CHECK_ARG(p.value().rank() == 2 && p.dim(1) == cols, "concatRows: part of shape ", shapeString(p.shape()),
                  " does not match ", cols, " columns");
    rows += p.dim(0);
    flat.push_back(reshape(p, {1, p.dim(0) * cols}));
  }
  return reshape(concatCols(flat), {rows, cols});
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

namespace {
// The sum of p[0 .. n) in one fixed order: sixteen running sums (element i into sum i % 16), then those folded in
// halves (8 + 8, 4 + 4, 2 + 2, 1 + 1). One thread, no multiply, so the same bits on every CPU level and thread
// count; the sixteen sums are independent, so each clone keeps them in vector registers instead of waiting on one
// chain of dependent adds (a loss over a 10,000 x 64 output took 0.4 ms that way, 0.8 in a portable build).
template <class T>
GNN_CPU_CLONES T sumInOrder(const T* __restrict p, int64_t n) {
  constexpr int64_t W = 16;
  T acc[W] = {};
  int64_t i = 0;
  for (; i + W <= n; i += W)
    for (int64_t j = 0; j < W; ++j) acc[j] += p[i + j];
  for (int64_t j = 0; i + j < n; ++j) acc[j] += p[i + j];
  for (int64_t w = W / 2; w >= 1; w /= 2)
    for (int64_t j = 0; j < w; ++j) acc[j] += acc[j + w];
  return acc[0];
}
}  // namespace

Variable sum(const Variable& a) {
  const Tensor& A = a.value();
  return dispatchFloat(A.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::scalar(0, A.dtype());
    Y.data<T>()[0] = sumInOrder(A.data<T>(), A.numel());
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
