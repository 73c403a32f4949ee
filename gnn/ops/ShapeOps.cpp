// Shape and dtype ops: reshape (a view), transpose and permute (copies), cast between float16/32/64.
// Reshape and permute move elements without looking at them, so they work on every dtype (float16 included).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

int normaliseDim(const char* op, int d, int rank) {
  const int n = d < 0 ? d + rank : d;
  GNN_CHECK_ARG(n >= 0 && n < rank, op, ": dimension ", d, " is out of range for rank ", rank);
  return n;
}

// `to` with a -1 replaced by what makes its element count equal `from`'s.
Shape resolveShape(const Shape& from, Shape to) {
  const int64_t n = shapeNumel(from);
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < to.size(); ++i) {
    if (to[i] == -1) {
      GNN_CHECK_ARG(infer < 0, "reshape: more than one -1 in ", shapeString(to));
      infer = static_cast<int>(i);
    } else {
      GNN_CHECK_ARG(to[i] >= 0, "reshape: negative dimension in ", shapeString(to));
      known *= to[i];
    }
  }
  if (infer >= 0) {
    GNN_CHECK_ARG(known > 0 && n % known == 0, "reshape: cannot infer the -1 of ", shapeString(to), " for ",
                  shapeString(from), " (", n, " elements)");
    to[infer] = n / known;
  }
  GNN_CHECK_ARG(to.size() <= 4, "reshape: rank ", to.size(), " > 4 is not supported (", shapeString(to), ")");
  GNN_CHECK_ARG(shapeNumel(to) == n, "reshape: cannot view ", shapeString(from), " (", n, " elements) as ",
                shapeString(to), " (", shapeNumel(to), " elements)");
  return to;
}

// y = x with its dimensions reordered (output dimension k is x's dimension perm[k]), for elements of type E
// (an unsigned integer of the element's size: the copy never looks at values). Shapes are padded to rank 4
// with leading ones; each output row (last dimension) is one contiguous or strided read.
template <class E>
void permuteElements(const E* x, E* y, const Shape& inShape, const std::vector<int>& perm) {
  const int r = static_cast<int>(inShape.size()), pad = 4 - r;
  int64_t dims[4], stride[4];
  for (int k = 0; k < 4; ++k) dims[k] = k < pad ? 1 : inShape[k - pad];
  stride[3] = 1;
  for (int k = 2; k >= 0; --k) stride[k] = stride[k + 1] * dims[k + 1];
  int64_t od[4], os[4];
  for (int k = 0; k < 4; ++k) {
    const int src = k < pad ? k : pad + perm[k - pad];
    od[k] = dims[src];
    os[k] = stride[src];
  }
  const int64_t rows = od[0] * od[1] * od[2], n = od[3], s3 = os[3];
  parallelFor(rows, grainFor(n), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      const int64_t i2 = row % od[2], i1 = (row / od[2]) % od[1], i0 = row / (od[1] * od[2]);
      const E* __restrict src = x + i0 * os[0] + i1 * os[1] + i2 * os[2];
      E* __restrict dst = y + row * n;
      if (s3 == 1)
        std::copy(src, src + n, dst);
      else
        for (int64_t j = 0; j < n; ++j) dst[j] = src[j * s3];
    }
  });
}

// An 8 x 8 block of 4-byte elements (bits moved, never read as numbers): rows of x (stride sx) to columns of y
// (stride sy), eight loads, the register transpose of AVX (unpack, shuffle, swap halves) and eight stores, a
// third of the time of the element-by-element copy (the weight of Cora's first GAT layer, 64 x 1433, each step).
// In GCC's vector extensions, so that the loop that calls it, compiled per CPU level, runs it on that level's
// registers.
template <class E>
inline __attribute__((always_inline)) void transpose8x8(const E* __restrict x, int64_t sx, E* __restrict y,
                                                        int64_t sy) {
  static_assert(sizeof(E) == 4, "transpose8x8: 4-byte elements");
  typedef uint32_t Row __attribute__((vector_size(32)));
  Row r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) std::memcpy(&r[i], x + i * sx, sizeof(Row));
  for (int i = 0; i < 8; i += 2) {  // within each half: interleave the low pairs, then the high pairs
    t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int i = 0; i < 8; i += 4)
    for (int j = 0; j < 2; ++j) {  // four rows' elements side by side in each half
      u[i + 2 * j] = __builtin_shufflevector(t[i + j], t[i + j + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[i + 2 * j + 1] = __builtin_shufflevector(t[i + j], t[i + j + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  for (int c = 0; c < 4; ++c) {  // columns c and c + 4: the low and the high halves of rows 0-3 and 4-7
    const Row lo = __builtin_shufflevector(u[c], u[c + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    const Row hi = __builtin_shufflevector(u[c], u[c + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    std::memcpy(y + c * sy, &lo, sizeof(Row));
    std::memcpy(y + (c + 4) * sy, &hi, sizeof(Row));
  }
}

// y [B, C, R] = x [B, R, C] with its last two dimensions swapped, in 32 x 32 tiles: each tile's rows are read
// and written a few cache lines at a time, where a row-by-row copy reads a whole column (one element per cache
// line) for every output row. A linear layer's weight [out, in] transposed for a sparse product, say, 1433 x 16.
template <class E>
void transposeLastTwo(const E* x, E* y, int64_t batches, int64_t R, int64_t C) {
  constexpr int64_t kTile = 32;
  const int64_t tileRows = (R + kTile - 1) / kTile;
  // Items are (batch, band of 32 input rows); chunks of at least 64k elements, so small copies stay serial.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, kTile * C));
  parallelFor(batches * tileRows, grain, [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t item = b; item < e; ++item) {
      const int64_t batch = item / tileRows, r0 = (item % tileRows) * kTile, r1 = std::min(R, r0 + kTile);
      const E* __restrict src = x + batch * R * C;
      E* __restrict dst = y + batch * R * C;
      for (int64_t c0 = 0; c0 < C; c0 += kTile) {
        const int64_t c1 = std::min(C, c0 + kTile);
        int64_t rv = r0, cv = c0;  // [r0, rv) x [c0, cv): done in 8 x 8 blocks
        if constexpr (sizeof(E) == 4) {
          rv = r0 + (r1 - r0) / 8 * 8;
          cv = c0 + (c1 - c0) / 8 * 8;
          for (int64_t r = r0; r < rv; r += 8)
            for (int64_t c = c0; c < cv; c += 8) transpose8x8(src + r * C + c, C, dst + c * R + r, R);
        }
        for (int64_t c = c0; c < c1; ++c)
          for (int64_t r = (c < cv ? rv : r0); r < r1; ++r) dst[c * R + r] = src[r * C + c];
      }
    }
  });
}

// Whether perm swaps the last two dimensions and keeps the others in place.
bool swapsLastTwo(const std::vector<int>& perm) {
  const int r = static_cast<int>(perm.size());
  if (r < 2 || perm[r - 2] != r - 1 || perm[r - 1] != r - 2) return false;
  for (int k = 0; k < r - 2; ++k)
    if (perm[k] != k) return false;
  return true;
}

template <class E>
void permuteAs(const Tensor& x, Tensor& y, const std::vector<int>& perm) {
  const E* in = static_cast<const E*>(x.raw());
  E* out = static_cast<E*>(y.raw());
  if (swapsLastTwo(perm)) {
    const int r = x.rank();
    const int64_t R = x.dim(r - 2), C = x.dim(r - 1);
    return transposeLastTwo(in, out, R * C > 0 ? x.numel() / (R * C) : 0, R, C);
  }
  permuteElements(in, out, x.shape(), perm);
}

void permuteInto(const Tensor& x, Tensor& y, const std::vector<int>& perm) {
  switch (dtypeSize(x.dtype())) {
    case 1: return permuteAs<uint8_t>(x, y, perm);
    case 2: return permuteAs<uint16_t>(x, y, perm);
    case 4: return permuteAs<uint32_t>(x, y, perm);
    case 8: return permuteAs<uint64_t>(x, y, perm);
  }
  GNN_ASSERT(false, "permute: element size ", dtypeSize(x.dtype()));
}

Variable permuteImpl(const char* op, const Variable& a, const std::vector<int>& dims) {
  const Tensor& X = a.value();
  const int r = X.rank();
  std::string given = "[";
  for (size_t i = 0; i < dims.size(); ++i) given += (i ? ", " : "") + std::to_string(dims[i]);
  given += "]";
  GNN_CHECK_ARG(static_cast<int>(dims.size()) == r, op, ": ", dims.size(), " dimensions ", given, " for shape ",
                shapeString(X.shape()));
  std::vector<int> perm(dims.size()), inverse(dims.size(), -1);
  Shape outShape(dims.size());
  for (int k = 0; k < r; ++k) {
    perm[k] = normaliseDim(op, dims[k], r);
    GNN_CHECK_ARG(inverse[perm[k]] < 0, op, ": dimension ", perm[k], " appears twice in ", given);
    inverse[perm[k]] = k;
    outShape[k] = X.dim(perm[k]);
  }
  Tensor Y = Tensor::empty(outShape, X.dtype());
  permuteInto(X, Y, perm);
  const int64_t bytes = static_cast<int64_t>(X.nbytes());
  OpInfo info{op, 0, bytes, bytes, 0};
  // The gradient goes back through the inverse permutation.
  return Variable::record(info, Y, {a}, {}, [inverse](const Tensor& gy, std::vector<GradInput>& in,
                                                      const std::vector<Tensor>&) {
    Tensor G = Tensor::empty(in[0].shape(), gy.dtype());
    permuteInto(gy, G, inverse);
    in[0].addGrad(G);
  });
}

// Calls f with a typed null pointer for a float storage dtype (float16, float32, float64).
template <class F>
decltype(auto) dispatchStorage(DType d, F&& f) {
  switch (d) {
    case DType::F16:
      return f(static_cast<Eigen::half*>(nullptr));
    case DType::F32:
      return f(static_cast<float*>(nullptr));
    case DType::F64:
      return f(static_cast<double*>(nullptr));
    default:
      invalidArgument("cast: expected float16, float32 or float64, got ", dtypeName(d));
  }
}

// double -> float16 with a single rounding. Going through float rounds twice, and the first rounding can
// make a tie at float16 precision that was not there (1 + 2^-11 + 2^-30 would become 1 instead of
// 1 + 2^-10). Rounding to float by round-to-odd first keeps the discarded bits' trace in the last bit, which is
// enough for the second rounding to be exact (float has 13 more significand bits than float16).
Eigen::half halfFromDouble(double d) {
  float f = static_cast<float>(d);
  if (std::isfinite(f) && static_cast<double>(f) != d) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    if ((bits & 1u) == 0) f = std::nextafter(f, d > f ? std::numeric_limits<float>::infinity()
                                                       : -std::numeric_limits<float>::infinity());
  }
  return Eigen::half(f);
}

template <class Dst, class Src>
Dst convertValue(Src s) {
  if constexpr (std::is_same_v<Dst, Eigen::half>) {
    if constexpr (std::is_same_v<Src, double>)
      return halfFromDouble(s);
    else
      return Eigen::half(static_cast<float>(s));
  } else {
    return static_cast<Dst>(static_cast<std::conditional_t<std::is_same_v<Src, Eigen::half>, float, Src>>(s));
  }
}

Tensor convertFloat(const Tensor& x, DType to) {
  Tensor y = Tensor::empty(x.shape(), to);
  dispatchStorage(x.dtype(), [&](auto* stag) {
    using S = std::remove_pointer_t<decltype(stag)>;
    dispatchStorage(to, [&](auto* dtag) {
      using D = std::remove_pointer_t<decltype(dtag)>;
      const S* __restrict s = x.data<S>();
      D* __restrict d = y.data<D>();
      parallelElements(x.numel(), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) d[i] = convertValue<D>(s[i]);
      });
    });
  });
  return y;
}
}  // namespace

Variable reshape(const Variable& a, Shape shape) {
  const Tensor& X = a.value();
  Tensor Y = X.reshape(resolveShape(X.shape(), std::move(shape)));
  // A view: no element is read or written.
  OpInfo info{"reshape", 0, 0, 0, 0};
  return Variable::record(info, Y, {a}, {}, [](const Tensor& gy, std::vector<GradInput>& in,
                                               const std::vector<Tensor>&) {
    in[0].addGrad(gy.reshape(in[0].shape()));
  });
}

Variable transpose(const Variable& a, int dim0, int dim1) {
  const int r = a.value().rank();
  GNN_CHECK_ARG(r >= 1, "transpose: needs rank >= 1, got shape ", shapeString(a.shape()));
  const int d0 = normaliseDim("transpose", dim0, r), d1 = normaliseDim("transpose", dim1, r);
  std::vector<int> perm(static_cast<size_t>(r));
  for (int k = 0; k < r; ++k) perm[k] = k;
  std::swap(perm[d0], perm[d1]);
  return permuteImpl("transpose", a, perm);
}

Tensor transposed(const Tensor& matrix) {
  GNN_CHECK_ARG(matrix.rank() == 2, "transposed: needs a matrix, got shape ", shapeString(matrix.shape()));
  NoGradGuard noGrad;
  return transpose(Variable(matrix), 0, 1).value();
}

Variable permute(const Variable& a, const std::vector<int>& dims) { return permuteImpl("permute", a, dims); }

Variable cast(const Variable& a, DType dtype) {
  const Tensor& X = a.value();
  GNN_CHECK_ARG(X.isFloating(), "cast: expected a float16, float32 or float64 input, got ", dtypeName(X.dtype()),
                " ", shapeString(X.shape()));
  GNN_CHECK_ARG(dtype == DType::F16 || dtype == DType::F32 || dtype == DType::F64,
                "cast: the target must be float16, float32 or float64, got ", dtypeName(dtype));
  if (X.dtype() == dtype) return a;  // as torch's .to(): the variable itself
  Tensor Y = convertFloat(X, dtype);
  const DType from = X.dtype();
  OpInfo info{"cast", 0, static_cast<int64_t>(X.nbytes()), static_cast<int64_t>(Y.nbytes()), 0};
  return Variable::record(info, Y, {a}, {}, [from](const Tensor& gy, std::vector<GradInput>& in,
                                                   const std::vector<Tensor>&) {
    in[0].addGrad(convertFloat(gy, from));
  });
}

}  // namespace gnn
