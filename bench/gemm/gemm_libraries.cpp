// GEMM libraries on the shapes our models run: the GEMMs of one GIN 5x300 training step (per layer Linear(D, 2D)
// and Linear(2D, D): forward X W^T, input gradient dY W, weight gradient dY^T X; M = the batch's nodes) timed
// through gnn's own op (gnn/kernels: oneDNN per fixed row block) and through OpenBLAS, oneDNN and BLIS, in fp32 and (oneDNN) with bf16 inputs and fp32 accumulation; beside the machine's FMA peak measured in the same run.
// Each library runs (a) with its own threads and (b) single-threaded per fixed row block in our parallel loop, the
// shape that keeps a row's bits independent of the thread count and of the other rows. For each it also checks
// (1) the same bits with 1 and 2 threads and (2) row stability: rows 0..99 computed alone equal the same rows of
// the whole product.
//
// Not part of the CMake build (the libraries are not dependencies of gnn): bench/gemm/run.sh builds and runs it.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <blis.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl.hpp>

#include "bench/FmaPeak.h"
#include "gnn/autograd/Variable.h"
#include "gnn/kernels/Gemm.h"
#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"
#include "gnn/system/Random.h"

namespace {

using Clock = std::chrono::steady_clock;

// C[M,N] = op(A) op(B), row-major, op given by transA / transB (A is MxK or KxM, B is KxN or NxK).
struct Gemm {
  bool transA, transB;
  int64_t M, N, K;
  double flop() const { return 2.0 * M * N * K; }
};

// The six GEMMs of one GIN layer pair for M nodes and hidden D (Linear weight W is [out, in]).
std::vector<Gemm> ginLayerGemms(int64_t M, int64_t D) {
  return {
      {false, true, M, 2 * D, D},  // h = x W1^T
      {false, true, M, D, 2 * D},  // y = h W2^T
      {false, false, M, 2 * D, D}, // dh = dy W2
      {true, false, D, 2 * D, M},  // dW2 = dy^T h   ([D, 2D])
      {false, false, M, D, 2 * D}, // dx = dh W1
      {true, false, 2 * D, D, M},  // dW1 = dh^T x   ([2D, D])
  };
}

using GemmFn = std::function<void(const Gemm&, const float*, const float*, float*, int threads)>;

int64_t lda(const Gemm& g) { return g.transA ? g.M : g.K; }
int64_t ldb(const Gemm& g) { return g.transB ? g.K : g.N; }

void openblasSgemm(const Gemm& g, const float* a, const float* b, float* c, int threads) {
  openblas_set_num_threads(threads);
  cblas_sgemm(CblasRowMajor, g.transA ? CblasTrans : CblasNoTrans, g.transB ? CblasTrans : CblasNoTrans, g.M, g.N,
              g.K, 1.0f, a, lda(g), b, ldb(g), 0.0f, c, g.N);
}

void dnnlSgemm(const Gemm& g, const float* a, const float* b, float* c, int threads) {
  omp_set_num_threads(threads);
  dnnl_sgemm(g.transA ? 'T' : 'N', g.transB ? 'T' : 'N', g.M, g.N, g.K, 1.0f, a, lda(g), b, ldb(g), 0.0f, c, g.N);
}

void blisSgemm(const Gemm& g, const float* a, const float* b, float* c, int threads) {
  bli_thread_set_num_threads(threads);
  float one = 1, zero = 0;
  // BLIS's own interface with general strides: row-major is row stride ld, column stride 1.
  bli_sgemm(g.transA ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, g.transB ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, g.M, g.N,
            g.K, &one, const_cast<float*>(a), lda(g), 1, const_cast<float*>(b), ldb(g), 1, &zero, c, g.N, 1);
}

// Debian's OpenBLAS 0.3.21 is built without BUILD_BFLOAT16: it exports no cblas_sbgemm, so oneDNN is the only
// bf16 GEMM of the candidates here.
uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

// oneDNN matmul primitive (bf16 x bf16 -> f32), created once per shape as a framework would cache it.
struct DnnlBf16 {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  struct Prim {
    dnnl::matmul mm;
    dnnl::memory::desc a, b, c;
  };
  Prim make(const Gemm& g) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    dnnl::memory::desc a({g.M, g.K}, dt::bf16, g.transA ? tag::ba : tag::ab);
    dnnl::memory::desc b({g.K, g.N}, dt::bf16, g.transB ? tag::ba : tag::ab);
    dnnl::memory::desc c({g.M, g.N}, dt::f32, tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), eng);
    return {dnnl::matmul(pd), a, b, c};
  }
  void run(Prim& p, const uint16_t* a, const uint16_t* b, float* c) {
    dnnl::memory am(p.a, eng, const_cast<uint16_t*>(a)), bm(p.b, eng, const_cast<uint16_t*>(b)), cm(p.c, eng, c);
    p.mm.execute(strm, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
    strm.wait();
  }
};

// Row-block mode: the library single-threaded on fixed blocks of 256 output rows (the block a row falls in
// depends only on its index), blocks shared between `threads` OpenMP threads.
void rowBlocks(const GemmFn& f, const Gemm& g, const float* a, const float* b, float* c, int threads) {
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (g.M + kBlock - 1) / kBlock;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < blocks; ++i) {
    const int64_t r0 = i * kBlock, rows = std::min(kBlock, g.M - r0);
    Gemm part = g;
    part.M = rows;
    // Row r0 of op(A): for A^T it is column r0 of A.
    const float* ab = g.transA ? a + r0 : a + r0 * lda(g);
    f(part, ab, b, c + r0 * g.N, 1);
  }
}

struct Operands {
  std::vector<std::vector<float>> a, b, c;
  std::vector<std::vector<uint16_t>> a16, b16;
};

Operands makeOperands(const std::vector<Gemm>& gemms) {
  Operands o;
  uint32_t s = 12345;
  auto rnd = [&] {
    s = s * 1664525u + 1013904223u;
    return static_cast<float>(s >> 8) / 16777216.0f - 0.5f;
  };
  for (const Gemm& g : gemms) {
    o.a.emplace_back(g.M * g.K);
    o.b.emplace_back(g.K * g.N);
    o.c.emplace_back(g.M * g.N);
    for (float& v : o.a.back()) v = rnd();
    for (float& v : o.b.back()) v = rnd();
    o.a16.emplace_back(o.a.back().size());
    o.b16.emplace_back(o.b.back().size());
    std::transform(o.a.back().begin(), o.a.back().end(), o.a16.back().begin(), toBf16);
    std::transform(o.b.back().begin(), o.b.back().end(), o.b16.back().begin(), toBf16);
  }
  return o;
}

// Best of `rounds` of the whole GEMM list, in GFLOP/s.
template <class F>
double rate(const std::vector<Gemm>& gemms, int rounds, F&& runAll) {
  double flop = 0;
  for (const Gemm& g : gemms) flop += g.flop();
  runAll();  // warm-up (packing buffers, JIT, thread pools)
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = Clock::now();
    runAll();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return flop / best / 1e9;
}

// (1) same bits with 1 and `threads` threads; (2) rows 0..99 alone equal the same rows of the whole product.
std::pair<bool, bool> checkBits(const std::function<void(const Gemm&, const float*, const float*, float*, int)>& f,
                                const Gemm& g, const float* a, const float* b, int threads) {
  std::vector<float> c1(g.M * g.N), c2(g.M * g.N);
  f(g, a, b, c1.data(), 1);
  f(g, a, b, c2.data(), threads);
  const bool sameThreads = std::memcmp(c1.data(), c2.data(), c1.size() * 4) == 0;
  bool rowStable = true;
  if (!g.transA) {
    Gemm part = g;
    part.M = 100;
    std::vector<float> cp(part.M * g.N);
    f(part, a, b, cp.data(), threads);
    rowStable = std::memcmp(cp.data(), c1.data(), cp.size() * 4) == 0;
  }
  return {sameThreads, rowStable};
}

// The command line: bench/gemm/run.sh [M] [D] [THREADS] [ROUNDS].
struct Options {
  int64_t M = 2007;  // GIN batch of 128 molecules: 2,007 nodes
  int64_t D = 300;
  int threads = 2;
  int rounds = 5;
};

Options parseArgs(int argc, char** argv) {
  Options o;
  if (argc > 1) o.M = std::atoll(argv[1]);
  if (argc > 2) o.D = std::atoll(argv[2]);
  if (argc > 3) o.threads = std::atoi(argv[3]);
  if (argc > 4) o.rounds = std::atoi(argv[4]);
  return o;
}

// gnn's own op: the same six GEMMs through linear's forward and backward (plus its bookkeeping), in GFLOP/s.
double gnnOpRate(const std::vector<Gemm>& gemms, const Options& opt) {
  gnn::setNumThreads(opt.threads);
  gnn::Generator g(1);
  gnn::Variable x(gnn::init::uniform({opt.M, opt.D}, -1, 1, g), true);
  gnn::Variable w1(gnn::init::uniform({2 * opt.D, opt.D}, -0.05, 0.05, g), true);
  gnn::Variable w2(gnn::init::uniform({opt.D, 2 * opt.D}, -0.05, 0.05, g), true);
  gnn::Tensor seed = gnn::init::uniform({opt.M, opt.D}, -1, 1, g);
  return rate(gemms, opt.rounds, [&] {
    gnn::linear(gnn::linear(x, w1), w2).backward(seed);
    x.zeroGrad();
    w1.zeroGrad();
    w2.zeroGrad();
  });
}

// One library's speed and bit checks over the GEMM list, with its own threads and in row blocks.
struct LibResult {
  const char* name;
  double own = 0, blk = 0;
  int same = 0, stable = 0, sameBlk = 0, stableBlk = 0, rowChecked = 0;
};

LibResult measureLib(const char* name, const GemmFn& f, const std::vector<Gemm>& gemms, Operands& o,
                     const Options& opt) {
  const size_t n = gemms.size();
  auto runLib = [&](bool blocks) {
    return rate(gemms, opt.rounds, [&] {
      for (size_t i = 0; i < n; ++i) {
        if (blocks)
          rowBlocks(f, gemms[i], o.a[i].data(), o.b[i].data(), o.c[i].data(), opt.threads);
        else
          f(gemms[i], o.a[i].data(), o.b[i].data(), o.c[i].data(), opt.threads);
      }
    });
  };
  LibResult res{name};
  res.own = runLib(false);
  res.blk = runLib(true);
  for (size_t i = 0; i < n; ++i) {
    res.rowChecked += !gemms[i].transA;  // a product with op(A) = A^T has no rows of its own to check
    auto [s, r] = checkBits(f, gemms[i], o.a[i].data(), o.b[i].data(), opt.threads);
    res.same += s, res.stable += r && !gemms[i].transA;
    GemmFn blocked = [&](const Gemm& g, const float* a, const float* b, float* c, int t) {
      rowBlocks(f, g, a, b, c, t);
    };
    auto [s2, r2] = checkBits(blocked, gemms[i], o.a[i].data(), o.b[i].data(), opt.threads);
    res.sameBlk += s2, res.stableBlk += r2 && !gemms[i].transA;
  }
  return res;
}

// bf16 inputs, fp32 accumulation and output, in GFLOP/s.
double dnnlBf16Rate(const std::vector<Gemm>& gemms, Operands& o, const Options& opt) {
  omp_set_num_threads(opt.threads);
  DnnlBf16 d;
  std::vector<DnnlBf16::Prim> prims;
  for (const Gemm& g : gemms) prims.push_back(d.make(g));
  return rate(gemms, opt.rounds, [&] {
    for (size_t i = 0; i < gemms.size(); ++i) d.run(prims[i], o.a16[i].data(), o.b16[i].data(), o.c[i].data());
  });
}

struct Results {
  double fmaPeak = 0, gnnOp = 0, bf16 = 0;
  std::vector<LibResult> libs;
};

void printJson(const Options& opt, size_t n, const Results& r) {
  std::printf("{\n  \"shapes\": \"GIN layer pair, M=%lld nodes, D=%lld (6 GEMMs)\", \"threads\": %d,\n",
              static_cast<long long>(opt.M), static_cast<long long>(opt.D), opt.threads);
  std::printf("  \"openblas_core\": \"%s\",\n", openblas_get_corename());
  std::printf("  \"fma_peak_gflop_per_s\": %.1f,\n", r.fmaPeak);
  std::printf("  \"gnn_op\": {\"gflop_per_s\": %.1f},\n", r.gnnOp);
  for (const LibResult& l : r.libs)
    std::printf("  \"%s\": {\"own_threads_gflop_per_s\": %.1f, \"row_blocks_gflop_per_s\": %.1f, "
                "\"own_threads_same_bits_1_vs_%d_threads\": \"%d/%zu\", \"own_threads_row_stable\": \"%d/%d\", "
                "\"row_blocks_same_bits\": \"%d/%zu\", \"row_blocks_row_stable\": \"%d/%d\"},\n",
                l.name, l.own, l.blk, opt.threads, l.same, n, l.stable, l.rowChecked, l.sameBlk, n, l.stableBlk,
                l.rowChecked);
  std::printf("  \"bf16\": {\"onednn_matmul_gflop_per_s\": %.1f, \"openblas_sbgemm\": \"not in Debian's build\"}\n}\n",
              r.bf16);
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parseArgs(argc, argv);
  const std::vector<Gemm> gemms = ginLayerGemms(opt.M, opt.D);
  Operands o = makeOperands(gemms);
  struct Lib {
    const char* name;
    GemmFn f;
  };
  const std::vector<Lib> libs = {{"openblas", openblasSgemm}, {"onednn", dnnlSgemm}, {"blis", blisSgemm}};
  Results r;
  r.fmaPeak = gnn::bench::measureFmaPeak(opt.threads, 50'000'000).gflops;
  r.gnnOp = gnnOpRate(gemms, opt);
  for (const Lib& lib : libs) r.libs.push_back(measureLib(lib.name, lib.f, gemms, o, opt));
  // oneDNN has no bfloat16 matmul below AVX-512 (an AVX2 CPU, or DNNL_MAX_CPU_ISA=AVX2): 0, as "none".
  if (gnn::kernels::bf16Supported()) r.bf16 = dnnlBf16Rate(gemms, o, opt);
  printJson(opt, gemms.size(), r);
  return 0;
}
