// Elementwise math (exp, log, sin, cos, sqrt, pow, neg, reciprocal) and sums and means along an axis.
// Each elementwise op gives its value and its derivative side by side, and saves the one tensor (input or
// output) the derivative is computed from.
#include <algorithm>
#include <cmath>
#include <vector>

#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {
using ops::From;

template <class Fwd, class Deriv>
Variable unaryMath(const char* name, int64_t cost, int64_t dcost, From from, const Variable& a, Fwd f, Deriv df) {
  return ops::unaryOp(name, cost, dcost, from, a, f, df);
}

int normaliseAxis(const char* op, int axis, const Shape& s) {
  const int r = static_cast<int>(s.size());
  GNN_CHECK_ARG(r >= 1, op, ": needs rank >= 1, got shape ", shapeString(s));
  const int a = axis < 0 ? axis + r : axis;
  GNN_CHECK_ARG(a >= 0 && a < r, op, ": axis ", axis, " is out of range for shape ", shapeString(s));
  return a;
}

// Sum (or mean) along `axis`: x seen as [outer, A, inner], out[o, i] = sum over a of x[o, a, i], each in
// increasing a. Work items are (o, column block) pairs with blocks fixed by the shapes.
Variable reduceAxis(const char* op, const Variable& a, int axis, bool keepDim, bool mean) {
  const Tensor& X = a.value();
  const int ax = normaliseAxis(op, axis, X.shape());
  const Shape& s = X.shape();
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < ax; ++k) outer *= s[k];
  for (size_t k = static_cast<size_t>(ax) + 1; k < s.size(); ++k) inner *= s[k];
  const int64_t A = s[ax];
  GNN_CHECK_ARG(!mean || A > 0, op, ": mean over the empty axis ", axis, " of ", shapeString(s));
  Shape outShape = s;
  if (keepDim)
    outShape[ax] = 1;
  else
    outShape.erase(outShape.begin() + ax);
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty(outShape, X.dtype());
    const T* xp = X.data<T>();
    T* yp = Y.data<T>();
    const T count = static_cast<T>(A);
    if (inner == 1) {
      // Contiguous rows: one sum per row.
      parallelFor(outer, grainFor(A), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          T acc = T(0);
          const T* __restrict row = xp + o * A;
          for (int64_t k = 0; k < A; ++k) acc += row[k];
          yp[o] = mean ? acc / count : acc;
        }
      });
    } else {
      // Rows of `inner` values added in a-order into the output row, a column block at a time.
      const int64_t width = evenChunk(inner, std::max<int64_t>(64, grainFor(A)), 8);
      const int64_t blocks = (inner + width - 1) / width;
      parallelFor(outer * blocks, grainFor(A * width), [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          const int64_t o = t / blocks, c0 = (t % blocks) * width, w = std::min(width, inner - c0);
          T* __restrict out = yp + o * inner + c0;
          std::fill(out, out + w, T(0));
          for (int64_t k = 0; k < A; ++k) {
            const T* __restrict row = xp + (o * A + k) * inner + c0;
            for (int64_t j = 0; j < w; ++j) out[j] += row[j];
          }
          if (mean)
            for (int64_t j = 0; j < w; ++j) out[j] /= count;
        }
      });
    }
    const int64_t n = X.numel();
    OpInfo info{op, n + (mean ? Y.numel() : 0), static_cast<int64_t>(X.nbytes()), static_cast<int64_t>(Y.nbytes()),
                mean ? n : 0};
    return Variable::record(info, Y, {a}, {}, [outer, A, inner, mean](const Tensor& gy, std::vector<GradInput>& in,
                                                                      const std::vector<Tensor>&) {
      // Each output's gradient spreads over the A inputs it summed (divided by A for the mean).
      Tensor G = Tensor::empty(in[0].shape(), gy.dtype());
      const T* g = gy.data<T>();
      T* o = G.data<T>();
      const T scale = mean ? T(1) / static_cast<T>(A) : T(1);
      parallelFor(outer * A, grainFor(inner), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const T* __restrict src = g + (r / A) * inner;
          T* __restrict dst = o + r * inner;
          if (mean)
            for (int64_t j = 0; j < inner; ++j) dst[j] = src[j] * scale;
          else
            std::copy(src, src + inner, dst);
        }
      });
      in[0].addGrad(G);
    });
  });
}
}  // namespace

Variable exp(const Variable& a) {
  return unaryMath(
      "exp", 10, 0, From::Output, a, [](auto x) { return std::exp(x); }, [](auto y) { return y; });
}

Variable log(const Variable& a) {
  return unaryMath(
      "log", 10, 1, From::Input, a, [](auto x) { return std::log(x); }, [](auto x) { return 1 / x; });
}

Variable sin(const Variable& a) {
  return unaryMath(
      "sin", 10, 10, From::Input, a, [](auto x) { return std::sin(x); }, [](auto x) { return std::cos(x); });
}

Variable cos(const Variable& a) {
  return unaryMath(
      "cos", 10, 10, From::Input, a, [](auto x) { return std::cos(x); }, [](auto x) { return -std::sin(x); });
}

Variable sqrt(const Variable& a) {
  // d sqrt(x) / dx = 1 / (2 sqrt(x)): from the output.
  return unaryMath(
      "sqrt", 1, 2, From::Output, a, [](auto x) { return std::sqrt(x); }, [](auto y) { return 1 / (2 * y); });
}

Variable pow(const Variable& a, double p) {
  // p x^(p-1) from the input (from the output it would be p y / x, which fails at x = 0).
  return unaryMath(
      "pow", 10, 11, From::Input, a, [p](auto x) { return static_cast<decltype(x)>(std::pow(x, p)); },
      [p](auto x) {
        using T = decltype(x);
        if (p == 0) return T(0);
        if (p == 1) return T(1);
        return static_cast<T>(p * std::pow(x, p - 1));
      });
}

Variable clamp(const Variable& a, double lo, double hi) {
  GNN_CHECK_ARG(lo <= hi, "clamp: min ", lo, " above max ", hi);
  // torch's clamp: the gradient passes where lo <= x <= hi (both bounds included).
  return unaryMath(
      "clamp", 2, 2, From::Input, a,
      [lo, hi](auto x) {
        using T = decltype(x);
        return x < static_cast<T>(lo) ? static_cast<T>(lo) : x > static_cast<T>(hi) ? static_cast<T>(hi) : x;
      },
      [lo, hi](auto x) {
        using T = decltype(x);
        return x >= static_cast<T>(lo) && x <= static_cast<T>(hi) ? T(1) : T(0);
      });
}

Variable neg(const Variable& a) {
  const Tensor& A = a.value();
  return dispatchFloat(A.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty(A.shape(), A.dtype());
    ops::scaleInto<T>(Y, A, T(-1));  // x * -1 is exactly -x
    const int64_t bytes = static_cast<int64_t>(Y.nbytes());
    OpInfo info{"neg", Y.numel(), bytes, bytes, Y.numel()};
    return Variable::record(info, Y, {a}, {}, [](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>&) {
      Tensor g = Tensor::empty(gy.shape(), gy.dtype());
      ops::scaleInto<T>(g, gy, T(-1));
      in[0].addGrad(g);
    });
  });
}

Variable reciprocal(const Variable& a) {
  return unaryMath(
      "reciprocal", 1, 2, From::Output, a, [](auto x) { return 1 / x; }, [](auto y) { return -(y * y); });
}

Variable sumAxis(const Variable& a, int axis, bool keepDim) { return reduceAxis("sumAxis", a, axis, keepDim, false); }

Variable meanAxis(const Variable& a, int axis, bool keepDim) { return reduceAxis("meanAxis", a, axis, keepDim, true); }

}  // namespace gnn
