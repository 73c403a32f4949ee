#include "gnn/ops/GemmProducts.h"

#include <algorithm>
#include <vector>

#include "gnn/kernels/BFloat16.h"
#include "gnn/kernels/Gemm.h"
#include "gnn/ops/RowBlocks.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn::ops {
namespace {

// Per-thread scratch reused across calls: a training loop with fixed shapes allocates it once.
template <class T>
T* scratch(size_t n, int slot) {
  thread_local std::vector<T> buffers[3];
  std::vector<T>& b = buffers[slot];
  if (b.size() < n) b.resize(n);
  return b.data();
}

// rows x K of op(A) starting at row r0, densely into out (row-major [rows, K]) as float or bfloat16 (rounded
// here, or already: S = uint16_t); rows past `valid` are zero (the padding of a last partial panel).
template <class T, class S = float>
void gatherRows(const S* A, bool transA, int64_t lda, int64_t r0, int64_t valid, int64_t rows, int64_t K, T* out) {
  for (int64_t i = 0; i < rows; ++i) {
    T* o = out + i * K;
    if (i >= valid) {
      std::fill(o, o + K, T(0));
      continue;
    }
    if (!transA) {
      if constexpr (std::is_same_v<T, S>) {
        std::copy(A + (r0 + i) * lda, A + (r0 + i) * lda + K, o);
      } else {
        kernels::toBf16Rows(A + (r0 + i) * lda, 1, K, lda, o);
      }
    } else {
      for (int64_t k = 0; k < K; ++k) {
        const S v = A[k * lda + r0 + i];
        if constexpr (std::is_same_v<T, S>) o[k] = v; else o[k] = kernels::toBf16(v);
      }
    }
  }
}

// Rows of a bfloat16 product's row blocks: twice float32's. The bfloat16 kernel does the same work in about
// half the time, so each call's fixed costs weigh twice as much; on GIN's 2,007 x 300 x 600 linear
// (bench_core_ops, GinLinearBf16) 512-row blocks ran 3% faster. Rows are stable, so the bits do not change.
constexpr int64_t kBf16BlockRows = 2 * kBlockRows;

void fillBias(float* C, int64_t rows, int64_t N, int64_t ldc, const float* bias) {
  for (int64_t i = 0; i < rows; ++i) std::copy(bias, bias + N, C + i * ldc);
}

}  // namespace

void gemmRows(float* C, int64_t M, int64_t N, int64_t K, const float* A, bool transA, int64_t lda, const float* B,
              bool transB, int64_t ldb, const float* bias) {
  if (M == 0 || N == 0) return;
  const int64_t panel = kernels::kGemmPanelRows;
  const bool bf16 = ExecutionContext::current().matmulPrecision() == MatmulPrecision::BFloat16;
  // bfloat16: B rounded once for all blocks (stored as given, densely), each block's rows of A in its own scratch.
  std::vector<uint16_t> b16;
  const int64_t bRows = transB ? N : K, bCols = transB ? K : N;
  if (bf16) {
    b16.resize(static_cast<size_t>(bRows * bCols));
    kernels::toBf16Rows(B, bRows, bCols, ldb, b16.data());
  }
  // float32 with B stored [N, K] (linear's weight): B transposed once here, for all blocks, to [K, N]: the
  // kernels without a transposed operand are the faster ones (gnn/kernels/Gemm.h).
  std::vector<float> bT;
  if (!bf16 && transB && !transA && kernels::plainLayoutFaster(N)) {
    bT.resize(static_cast<size_t>(K * N));
    // In 16 x 16 tiles: the strided side of a tile stays within 16 cache lines.
    for (int64_t n0 = 0; n0 < N; n0 += 16)
      for (int64_t k0 = 0; k0 < K; k0 += 16) {
        const int64_t n1 = std::min(N, n0 + 16), k1 = std::min(K, k0 + 16);
        for (int64_t k = k0; k < k1; ++k)
          for (int64_t n = n0; n < n1; ++n) bT[static_cast<size_t>(k * N + n)] = B[n * ldb + k];
      }
    B = bT.data();
    ldb = N;
    transB = false;
  }
  RowBlocks<float>(M, K, N, bf16 ? kBf16BlockRows : kBlockRows).forEach([&](int64_t b, int64_t e) {
    if (e <= b) return;
    const int64_t whole = b + (e - b) / panel * panel;
    // rows [r0, r0 + valid) of C through a dense copy of op(A)'s rows padded to `rows` (a multiple of the panel).
    auto viaCopy = [&](int64_t r0, int64_t valid, int64_t rows) {
      float* out = valid == rows ? C + r0 * N : scratch<float>(static_cast<size_t>(rows * N), 0);
      if (bias) fillBias(out, rows, N, N, bias);
      if (bf16) {
        uint16_t* a = scratch<uint16_t>(static_cast<size_t>(rows * K), 1);
        gatherRows(A, transA, lda, r0, valid, rows, K, a);
        kernels::gemmBf16(false, transB, rows, N, K, a, K, b16.data(), bCols, out, N, bias != nullptr);
      } else {
        float* a = scratch<float>(static_cast<size_t>(rows * K), 2);
        gatherRows(A, transA, lda, r0, valid, rows, K, a);
        kernels::gemmF32(false, transB, rows, N, K, a, K, B, ldb, out, N, bias != nullptr);
      }
      if (out != C + r0 * N) std::copy(out, out + valid * N, C + r0 * N);
    };
    if (whole > b) {
      if (bf16) {
        viaCopy(b, whole - b, whole - b);
      } else {
        if (bias) fillBias(C + b * N, whole - b, N, N, bias);
        const float* a = transA ? A + b : A + b * lda;
        kernels::gemmF32(transA, transB, whole - b, N, K, a, lda, B, ldb, C + b * N, N, bias != nullptr);
      }
    }
    if (whole < e) viaCopy(whole, e - whole, panel);
  });
}

void gemmOnThread(bool transA, bool transB, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda,
                  const float* B, int64_t ldb, float* C, int64_t ldc) {
  if (ExecutionContext::current().matmulPrecision() != MatmulPrecision::BFloat16) {
    kernels::gemmF32(transA, transB, M, N, K, A, lda, B, ldb, C, ldc, false);
    return;
  }
  const int64_t aRows = transA ? K : M, aCols = transA ? M : K, bRows = transB ? N : K, bCols = transB ? K : N;
  uint16_t* a = scratch<uint16_t>(static_cast<size_t>(aRows * aCols), 1);
  kernels::toBf16Rows(A, aRows, aCols, lda, a);
  uint16_t* b = scratch<uint16_t>(static_cast<size_t>(bRows * bCols), 2);
  kernels::toBf16Rows(B, bRows, bCols, ldb, b);
  kernels::gemmBf16(transA, transB, M, N, K, a, aCols, b, bCols, C, ldc, false);
}

Tensor roundToBf16(const float* A, int64_t rows, int64_t cols, int64_t ld) {
  Tensor out = Tensor::empty({rows, cols}, DType::BF16);
  uint16_t* o = reinterpret_cast<uint16_t*>(out.data<Eigen::bfloat16>());
  parallelFor(rows, grainFor(cols), [&](int64_t b, int64_t e) {
    kernels::toBf16Rows(A + b * ld, e - b, cols, ld, o + b * cols);
  });
  return out;
}

const uint16_t* bf16Bits(const Tensor& t) {
  GNN_CHECK_ARG(t.dtype() == DType::BF16, "expected a bfloat16 tensor, got ", dtypeName(t.dtype()));
  return reinterpret_cast<const uint16_t*>(t.data<Eigen::bfloat16>());
}

// The bfloat16 branch of gemmRows with A and B rounded beforehand: whole panels straight from A (dense, so the
// leading dimension is K as in gemmRows' copies), a last partial panel through a zero-padded copy.
void gemmRowsBf16(float* C, int64_t M, int64_t N, int64_t K, const uint16_t* A, bool transA, const uint16_t* B,
                  bool transB, const float* bias) {
  if (M == 0 || N == 0) return;
  const int64_t panel = kernels::kGemmPanelRows, bCols = transB ? K : N;
  RowBlocks<float>(M, K, N, kBf16BlockRows).forEach([&](int64_t b, int64_t e) {
    if (e <= b) return;
    const int64_t whole = b + (e - b) / panel * panel;
    auto product = [&](const uint16_t* a, float* out, int64_t rows) {
      if (bias) fillBias(out, rows, N, N, bias);
      kernels::gemmBf16(false, transB, rows, N, K, a, K, B, bCols, out, N, bias != nullptr);
    };
    auto viaCopy = [&](int64_t r0, int64_t valid, int64_t rows) {
      float* out = valid == rows ? C + r0 * N : scratch<float>(static_cast<size_t>(rows * N), 0);
      uint16_t* a = scratch<uint16_t>(static_cast<size_t>(rows * K), 1);
      gatherRows<uint16_t, uint16_t>(A, transA, transA ? M : K, r0, valid, rows, K, a);
      product(a, out, rows);
      if (out != C + r0 * N) std::copy(out, out + valid * N, C + r0 * N);
    };
    if (whole > b) {
      if (transA) viaCopy(b, whole - b, whole - b); else product(A + b * K, C + b * N, whole - b);
    }
    if (whole < e) viaCopy(whole, e - whole, panel);
  });
}

void gemmOnThreadBf16(bool transA, bool transB, int64_t M, int64_t N, int64_t K, const uint16_t* A, int64_t lda,
                      const uint16_t* B, int64_t ldb, float* C, int64_t ldc) {
  kernels::gemmBf16(transA, transB, M, N, K, A, lda, B, ldb, C, ldc, false);
}

}  // namespace gnn::ops
