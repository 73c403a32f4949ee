// Single-threaded GEMM kernels behind the products of gnn/ops (matmul, matmulNT, linear): float32 through
// libxsmm's JIT kernels when neither operand is stored transposed (C = A B; 5-17% faster than oneDNN on one core
// at SchNet's and GIN's shapes, docs/core.md) and oneDNN's JIT sgemm otherwise, and bfloat16 inputs with float32
// accumulation through oneDNN's matmul. Both libraries generate their kernels for the CPU they run on (AVX2,
// AVX-512, AVX512_BF16, AMX), so a portable build reaches the same speed as a -march=native one. The ops split
// rows into blocks fixed by the shapes and call these kernels from their own threads: a kernel never starts
// threads of its own (see Gemm.cpp).
//
// Row stability. A row of C must come out with the same bits wherever it sits and however many rows the
// product has, so that padding never changes a real graph's result. oneDNN promises nothing about it, and its
// sgemm driver does cut the depth K into blocks that depend on M when K is large (K = 1000, N >= 128 differ
// between 48 and 96 rows). With K cut here into chunks of at most kGemmDepthChunk (fixed by K alone, summed
// in order) and M in whole panels of kGemmPanelRows rows, every row came out the same for heights 48..480 at
// any offset over K in 7..2048 and N in 1..1200, both transpositions of B, float32 and bfloat16
// (tests/gnn/kernels/GemmKernels_test.cpp checks it on this CPU); the ops pad a last partial panel with zero rows.
// bfloat16 calls take longer chunks (kGemmDepthChunkBf16): their rows held without the cut at those depths.
#pragma once
#include <cstdint>
#include <string>

namespace gnn::kernels {

/// Rows of a panel: products are cut into whole panels (the last one padded with zero rows by the caller).
constexpr int64_t kGemmPanelRows = 48;
/// Depth of one float32 kernel call: longer inner dimensions are summed over chunks of at most this many.
constexpr int64_t kGemmDepthChunk = 512;
/// The same for bfloat16 calls. oneDNN's bfloat16 matmul keeps rows stable at depths up to 2,048 (the row
/// stability test), and each extra chunk reads and writes C once more through the sum post-op: GIN's
/// 2,007 x 600 x 300 forward ran at 739 GFLOP/s in two chunks of 300 and 799 in one (bench_core_ops,
/// BM_LinearShape), its layer's forward and backward 9% faster.
constexpr int64_t kGemmDepthChunkBf16 = 1024;

/// C [M, N] (row-major, leading dimension ldc) = op(A) op(B), plus C when accumulate. op(A) is [M, K]:
/// A is stored [M, K] (lda >= K), or [K, M] when transA (lda >= M); op(B) is [K, N]: B is stored [K, N], or
/// [N, K] when transB. Runs on the calling thread only.
void gemmF32(bool transA, bool transB, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda,
             const float* B, int64_t ldb, float* C, int64_t ldc, bool accumulate);

/// True when gemmF32 runs C = A B (neither operand stored transposed) on a faster kernel than C = A B^T, for an
/// output N columns wide: the ops then store B as [K, N] first (GemmProducts.cpp). libxsmm's kernels of one output
/// column are scalar (15 against oneDNN's 52 GFLOP/s at 256 x 300 x 1), so those stay on oneDNN.
bool plainLayoutFaster(int64_t N);

/// The same with bfloat16 inputs (the upper 16 bits of a float32, gnn/kernels/BFloat16.h) and float32 output
/// and accumulation. Without native bfloat16 dot products oneDNN emulates them on AVX-512; below AVX-512 the
/// inputs go through the float32 kernel (slower; the same products, summed in another order).
void gemmBf16(bool transA, bool transB, int64_t M, int64_t N, int64_t K, const uint16_t* A, int64_t lda,
              const uint16_t* B, int64_t ldb, float* C, int64_t ldc, bool accumulate);

/// One small float32 product: oneDNN generates its GEMM kernels at its first call (about 20 ms on AVX-512
/// CPUs), which a program can do on a spare thread while it reads its data (app::Program does) instead of in
/// its first training step.
void warmUp();

/// How many oneDNN matmul primitives gemmBf16 has made in this process. Their number is bounded by the shapes a
/// program's products have, not by its batches: a product's depth is either a feature width or, for op(A) = A^T
/// (weight gradients, depth = a batch's row count), any depth on one primitive.
int64_t bf16PrimitivesMade();

/// True when oneDNN runs gemmBf16's matmuls on this CPU (it needs AVX-512); false: the float32 fallback.
bool bf16Supported();
/// True when the CPU has native bfloat16 dot products (AVX512_BF16 or AMX).
bool bf16Native();
/// The instruction set oneDNN's kernels use on this CPU ("avx512_core_bf16", "avx2", ...), for reports.
std::string gemmIsa();
/// The target libxsmm generates the float32 kernels of plain layouts for ("skx", "cpx", "hsw", ...).
std::string plainGemmTarget();

}  // namespace gnn::kernels
