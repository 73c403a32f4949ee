// The float32 and bfloat16 back end of gnn/ops/Product.h (which alone calls it) on gnn/kernels/Gemm.h, in the
// current context's matmul precision (gnn/ops/MatmulPrecision.h): rows cut into RowBlocks run in parallel, each
// block one single-threaded kernel call, so results are the same for any thread count.
#pragma once
#include <cstdint>

#include "gnn/ops/MatmulPrecision.h"
#include "gnn/tensor/Tensor.h"

namespace gnn::ops {

/// C [M, N] (dense, row-major) = op(A) op(B) (+ bias on every row when bias is not null). op(A) is [M, K]:
/// A stored [M, K] with leading dimension lda, or [K, M] when transA; op(B) is [K, N]: B stored [K, N], or
/// [N, K] when transB. Row-stable: a row's bits depend on its own values, never on its position or on M
/// (whole panels in place, a last partial panel on a zero-padded copy).
void gemmRows(float* C, int64_t M, int64_t N, int64_t K, const float* A, bool transA, int64_t lda, const float* B,
              bool transB, int64_t ldb, const float* bias);

/// C [M, N] (leading dimension ldc) = op(A) op(B) on the calling thread, in the current precision: for callers
/// that split the work themselves (weight gradients summed over chunks of rows).
void gemmOnThread(bool transA, bool transB, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda,
                  const float* B, int64_t ldb, float* C, int64_t ldc);

/// A [rows, cols] float32 matrix (row stride ld) rounded to bfloat16 (gnn/kernels/BFloat16.h) into a dense
/// BF16 tensor, rows in parallel: for an input that several products use (linear's input serves its forward and
/// its weight gradient; the output gradient both backward products), rounded once instead of once per product.
Tensor roundToBf16(const float* A, int64_t rows, int64_t cols, int64_t ld);
/// The raw bfloat16 bits of a BF16 tensor.
const uint16_t* bf16Bits(const Tensor& t);

/// gemmRows on inputs already rounded (dense BF16 data: A [M, K], or [K, M] when transA; B [K, N], or [N, K]
/// when transB): the same kernel calls, and bits, as gemmRows in bfloat16 precision on their float32 originals.
void gemmRowsBf16(float* C, int64_t M, int64_t N, int64_t K, const uint16_t* A, bool transA, const uint16_t* B,
                  bool transB, const float* bias);

/// gemmOnThread's bfloat16 product on inputs already rounded (leading dimensions given).
void gemmOnThreadBf16(bool transA, bool transB, int64_t M, int64_t N, int64_t K, const uint16_t* A, int64_t lda,
                      const uint16_t* B, int64_t ldb, float* C, int64_t ldc);

}  // namespace gnn::ops
