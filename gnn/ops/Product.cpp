#include "gnn/ops/Product.h"

#include <algorithm>
#include <type_traits>

#include "gnn/ops/GemmProducts.h"
#include "gnn/ops/OpLoops.h"
#include "gnn/ops/RowBlocks.h"
#include "gnn/system/Check.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn::ops {
namespace {

// The tensor an operand reads its shape from.
const Tensor& held(const Operand& o) {
  GNN_ASSERT(o.stored || o.rounded, "product: an operand without values");
  return o.stored ? *o.stored : *o.rounded;
}
// op(o)'s rows and columns, o a matrix.
int64_t opRows(const Operand& o) { return held(o).dim(o.transposed ? 1 : 0); }
int64_t opCols(const Operand& o) { return held(o).dim(o.transposed ? 0 : 1); }
bool bothRounded(const Operand& a, const Operand& b) { return a.rounded && b.rounded; }

template <class T>
ConstMatrixMap<T> storedMatrix(const Operand& o) {
  GNN_ASSERT(o.stored, "product: the float values of an operand are needed");
  return o.stored->matrix<T>();
}

// out = lhs * rhs (+ bias on every row when bias is not null), each row rounded the same wherever it is (see
// kPanelRows): blocks of whole panels, and the matrix's last partial panel through a zero-padded copy. Eigen's
// products, for float64.
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

// out = op(a) op(b) (+ bias), op(a) not transposed: row blocks (float32 and bfloat16: GemmProducts.h).
template <class T>
void rowProduct(Tensor& out, const Operand& a, const Operand& b, const Tensor* bias) {
  const int64_t M = out.dim(0), N = out.dim(1), K = opCols(a);
  if constexpr (std::is_same_v<T, float>) {
    const float* bv = bias ? bias->data<float>() : nullptr;
    if (bothRounded(a, b))
      gemmRowsBf16(out.data<float>(), M, N, K, bf16Bits(*a.rounded), false, bf16Bits(*b.rounded), b.transposed, bv);
    else
      gemmRows(out.data<float>(), M, N, K, storedMatrix<float>(a).data(), false, K, storedMatrix<float>(b).data(),
               b.transposed, held(b).dim(1), bv);
  } else {
    const T* bv = bias ? bias->data<T>() : nullptr;
    if (b.transposed)
      rowStableProduct<T>(out.matrix<T>(), storedMatrix<T>(a), storedMatrix<T>(b).transpose(), bv);
    else
      rowStableProduct<T>(out.matrix<T>(), storedMatrix<T>(a), storedMatrix<T>(b), bv);
  }
}

// out [R, C] = P^T Q on one kernel call per row block, and the column sums of P when asked.
template <class T>
void unchunkedReduction(Tensor& out, const Operand& p, const Operand& q, Tensor* pSums) {
  const int64_t M = held(p).dim(0), R = out.dim(0), C = out.dim(1);
  if constexpr (std::is_same_v<T, float>) {
    if (bothRounded(p, q))
      gemmRowsBf16(out.data<T>(), R, C, M, bf16Bits(*p.rounded), true, bf16Bits(*q.rounded), false, nullptr);
    else
      gemmRows(out.data<T>(), R, C, M, storedMatrix<T>(p).data(), true, R, storedMatrix<T>(q).data(), false, C,
               nullptr);
  } else {
    auto pt = storedMatrix<T>(p).transpose();
    auto qm = storedMatrix<T>(q);
    MatrixMap<T> om = out.matrix<T>();
    RowBlocks<T>(R, M, C).forEach([&](int64_t b, int64_t e) {
      if (e > b) om.middleRows(b, e - b).noalias() = pt.middleRows(b, e - b) * qm;
    });
  }
  if (pSums) {
    *pSums = Tensor::empty({R}, out.dtype());
    columnSums(storedMatrix<T>(p).data(), M, R, pSums->data<T>());
  }
}

// out [R, C] = P^T Q for P [M, R] and Q [M, C], the shape of weight gradients (M = batch rows). With few
// output rows, row blocks are few and uneven (600 rows give 7 blocks of 96: one core idles a quarter of the
// time) and each block re-packs all of Q. So when M is long, the product is split over M instead: fixed
// chunks of rows (from the shapes only), partial products summed in chunk order, deterministic for any
// thread count. About four chunks (at least 256 rows each): every partial is written and read back once
// more, so fewer, longer chunks pay (eight chunks of 252 rows took GIN's bf16 step 3.8% longer than four of
// 502). The partials take at most 8 times out's size, so large outputs keep the row blocks.
// With pSums: also the column sums of P (a bias gradient) into pSums [R], from the same chunks while they
// are in cache. Both rounded: the bfloat16 products on the rounded values, the same kernel calls as rounding
// each chunk here.
template <class T>
void reductionProduct(Tensor& out, const Operand& p, const Operand& q, Tensor* pSums) {
  const int64_t M = held(p).dim(0), R = out.dim(0), C = out.dim(1);
  const int64_t chunk = evenChunk(M, std::max<int64_t>(256, (M + 4 * 32 - 1) / (4 * 32) * 32), 4);
  const int64_t chunks = (M + chunk - 1) / chunk;
  if (chunks < 2 || R >= 8 * 256 || R * C > (int64_t{1} << 21)) return unchunkedReduction<T>(out, p, q, pSums);
  const bool rounded = bothRounded(p, q);
  const T* P = p.stored ? p.stored->data<T>() : nullptr;
  const T* Q = q.stored ? q.stored->data<T>() : nullptr;
  Tensor partial = Tensor::empty({chunks, R * C}, out.dtype());
  Tensor partialSums = pSums ? Tensor::empty({chunks, R}, out.dtype()) : Tensor();
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
          gemmOnThreadBf16(true, false, R, C, n, bf16Bits(*p.rounded) + lo * R, R, bf16Bits(*q.rounded) + lo * C, C,
                           part + c * R * C, C);
        else if (transposed)
          gemmOnThread(true, false, C, R, n, Q + lo * C, C, P + lo * R, R, part + c * R * C, R);
        else
          gemmOnThread(true, false, R, C, n, P + lo * R, R, Q + lo * C, C, part + c * R * C, C);
      } else {
        MatrixMap<T>(part + c * R * C, R, C).noalias() =
            storedMatrix<T>(p).middleRows(lo, n).transpose() * storedMatrix<T>(q).middleRows(lo, n);
      }
      if (pSums) {
        T* __restrict cs = partialSums.data<T>() + c * R;
        std::fill(cs, cs + R, T(0));
        for (int64_t i = lo; i < lo + n; ++i) {
          const T* __restrict row = P + i * R;
          for (int64_t j = 0; j < R; ++j) cs[j] += row[j];
        }
      }
    }
  });
  if (pSums) {
    *pSums = Tensor::empty({R}, out.dtype());
    sumChunkPartials(partialSums.data<T>(), chunks, R, pSums->data<T>());
  }
  if (!transposed) return sumChunkPartials(part, chunks, R * C, out.data<T>());
  Tensor sumT = Tensor::empty({C, R}, out.dtype());
  sumChunkPartials(part, chunks, R * C, sumT.data<T>());
  out.matrix<T>() = sumT.matrix<T>().transpose();
}

// ---- batched products ----

// Rows per work item of a batched product out[b] = lhs[b] x rhs[b] ([rows, inner] x [inner, cols]). With 8 or
// more matrices (attention: batch x heads) each item is a whole matrix; with fewer, each matrix is split into
// row blocks (at least 32 rows and kGrainWork multiply-adds) so that there are about 8 items. It depends only
// on the shapes, so Eigen's blocking (and thus each element's rounding) never depends on the thread count.
int64_t batchRowBlock(int64_t batches, int64_t rows, int64_t inner, int64_t cols) {
  if (rows <= 32 || batches >= 8) return std::max<int64_t>(rows, 1);
  const int64_t perMatrix = (8 + batches - 1) / batches;
  const int64_t block = std::max(grainFor(inner * cols, 32), (rows + perMatrix - 1) / perMatrix);
  return std::min(rows, evenChunk(rows, block, 4));
}

// The i-th [rows, cols] matrix of a batch stored at p.
template <class T>
ConstMatrixMap<T> matrixAt(const T* p, int64_t i, int64_t rows, int64_t cols) {
  return ConstMatrixMap<T>(p + i * rows * cols, rows, cols);
}

// out[b] = lhs(b) x rhs(b) for b < batches; out is [batches, rows, cols], lhs(b) an Eigen expression of
// [rows, inner] and rhs(b) one of [inner, cols]. Work items are (matrix, row block) pairs, each computed whole
// by one thread with Eigen single-threaded.
template <class T, class Lhs, class Rhs>
void batchedMatrices(T* out, int64_t batches, int64_t rows, int64_t cols, int64_t inner, Lhs lhs, Rhs rhs) {
  const int64_t block = batchRowBlock(batches, rows, inner, cols);
  const int64_t perMatrix = (rows + block - 1) / block;
  parallelFor(batches * perMatrix, grainFor(block * std::max<int64_t>(inner, 1) * cols), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t m = t / perMatrix, r0 = (t % perMatrix) * block, n = std::min(block, rows - r0);
      MatrixMap<T>(out + m * rows * cols, rows, cols).middleRows(r0, n).noalias() =
          lhs(m).middleRows(r0, n) * rhs(m);
    }
  });
}

template <class T>
void batchedStored(T* out, int64_t batches, int64_t rows, int64_t cols, int64_t inner, const Operand& a,
                   const Operand& b) {
  const T* l = a.stored->data<T>();
  const T* r = b.stored->data<T>();
  auto lhs = [&](int64_t i) { return matrixAt(l, i, rows, inner); };
  auto lhsT = [&](int64_t i) { return matrixAt(l, i, inner, rows).transpose(); };
  auto rhs = [&](int64_t i) { return matrixAt(r, i, inner, cols); };
  auto rhsT = [&](int64_t i) { return matrixAt(r, i, cols, inner).transpose(); };
  if (a.transposed) batchedMatrices<T>(out, batches, rows, cols, inner, lhsT, rhs);
  else if (b.transposed) batchedMatrices<T>(out, batches, rows, cols, inner, lhs, rhsT);
  else batchedMatrices<T>(out, batches, rows, cols, inner, lhs, rhs);
}

}  // namespace

Tensor toBfloat16(const Tensor& t) {
  GNN_CHECK_ARG(t.dtype() == DType::F32 && t.rank() == 2, "toBfloat16: expected a float32 matrix, got ",
                dtypeName(t.dtype()), " ", shapeString(t.shape()));
  return roundToBf16(t.data<float>(), t.dim(0), t.dim(1), t.dim(1));
}

Tensor roundedOperand(const Tensor& t) {
  if (t.dtype() != DType::F32 || ExecutionContext::current().matmulPrecision() != MatmulPrecision::BFloat16)
    return Tensor();
  return toBfloat16(t);
}

Tensor product(const Operand& a, const Operand& b, const Tensor* bias, Tensor* aSums) {
  GNN_ASSERT(opCols(a) == opRows(b), "product: operands do not chain");
  GNN_ASSERT(!aSums || (a.transposed && !b.transposed && a.stored),
             "product: column sums are those of a weight gradient's P, from its float values");
  GNN_ASSERT(!(a.transposed && b.transposed), "product: both operands transposed");
  const DType dtype = a.stored ? a.stored->dtype() : DType::F32;
  Tensor out = Tensor::empty({opRows(a), opCols(b)}, dtype);
  dispatchFloat(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if (a.transposed)
      reductionProduct<T>(out, a, b, aSums);
    else
      rowProduct<T>(out, a, b, bias);
  });
  return out;
}

Tensor batchedProduct(const Operand& a, const Operand& b) {
  GNN_ASSERT(a.stored && b.stored && !(a.transposed && b.transposed), "batchedProduct: operands");
  const Tensor &A = *a.stored, &B = *b.stored;
  const int64_t rows = A.dim(a.transposed ? -1 : -2), inner = A.dim(a.transposed ? -2 : -1);
  const int64_t cols = B.dim(b.transposed ? -2 : -1);
  GNN_ASSERT(B.dim(b.transposed ? -1 : -2) == inner, "batchedProduct: operands do not chain");
  Shape shape(A.shape().begin(), A.shape().end() - 2);
  const int64_t batches = shapeNumel(shape);
  shape.push_back(rows);
  shape.push_back(cols);
  Tensor out = Tensor::empty(shape, A.dtype());
  dispatchFloat(A.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    batchedStored<T>(out.data<T>(), batches, rows, cols, inner, a, b);
  });
  return out;
}

}  // namespace gnn::ops
