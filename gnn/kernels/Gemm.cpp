#include "gnn/kernels/Gemm.h"

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <mutex>
#include <libxsmm.h>
#include <oneapi/dnnl/dnnl.hpp>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "gnn/kernels/BFloat16.h"

namespace gnn::kernels {
namespace {

// oneDNN (Debian's build uses the OpenMP runtime) runs a call on omp_get_max_threads() threads unless it is
// already inside a parallel region. The ops call kernels from their own row blocks, and a block may run on
// the thread that called the op, outside any region: one thread is set for the call, so the kernel neither
// oversubscribes the cores nor splits the work (and its rounding) by the thread count.
class OneThread {
 public:
  OneThread() : previous_(omp_get_max_threads()) {
    if (previous_ != 1) omp_set_num_threads(1);
  }
  ~OneThread() {
    if (previous_ != 1) omp_set_num_threads(previous_);
  }
  OneThread(const OneThread&) = delete;
  OneThread& operator=(const OneThread&) = delete;

 private:
  int previous_;
};

// The depth cut into `count` chunks of at most maxChunk: all of `size` but the last, `last` (count = 1 for K = 0).
struct DepthChunks {
  int64_t count, size, last;
  DepthChunks(int64_t K, int64_t maxChunk)
      : count(std::max<int64_t>(1, (K + maxChunk - 1) / maxChunk)),
        size((K + count - 1) / count),
        last(K - (count - 1) * size) {}
};

// f(k0, k) for each chunk of the depth, in order.
template <class F>
void forDepthChunks(int64_t K, int64_t maxChunk, F&& f) {
  const DepthChunks d(K, maxChunk);
  for (int64_t c = 0; c < d.count; ++c) f(c * d.size, c == d.count - 1 ? d.last : d.size);
}

void check(dnnl_status_t s, const char* what) {
  if (s != dnnl_success) throw std::runtime_error(std::string("oneDNN ") + what + " failed (status " + std::to_string(s) + ")");
}

// bfloat16 matmul primitives by shape and layout. Creating one costs tens of microseconds (oneDNN generates
// its kernel); a training loop with fixed shapes uses a handful, created at its first step.
using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool, bool, bool>;
struct Bf16Matmul {
  dnnl::matmul primitive;
  size_t scratchBytes = 0;
};
struct Bf16Cache {
  std::mutex mutex;
  std::map<Key, Bf16Matmul> primitives;
  int64_t created = 0;
};
Bf16Cache& bf16Cache() {
  static Bf16Cache* cache = new Bf16Cache;  // never destroyed: kernels may run during static destruction
  return *cache;
}
dnnl::engine& cpuEngine() {
  static dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

struct Bf16Descs {
  dnnl::memory::desc a, b, c;
};
// K is DNNL_RUNTIME_DIM_VAL in a primitive made for any depth.
Bf16Descs bf16Descs(bool transA, bool transB, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc) {
  using dt = dnnl::memory::data_type;
  using dims = dnnl::memory::dims;
  return {dnnl::memory::desc({M, K}, dt::bf16, transA ? dims{1, lda} : dims{lda, 1}),
          dnnl::memory::desc({K, N}, dt::bf16, transB ? dims{1, ldb} : dims{ldb, 1}),
          dnnl::memory::desc({M, N}, dt::f32, dims{ldc, 1})};
}

// The depth a primitive is made for: any (run-time K) when A is stored [K, M]. Those are the weight gradients
// (X^T dY), whose depth is the batch's row count: a different one in nearly every batch of packed graphs, and
// oneDNN's fixed-shape kernel for a new depth takes milliseconds to make (about 100 were made in bfloat16 SchNet's
// first epoch, 2.7-4.3 ms each), its run-time-K kernel 0.07 ms, once. Other products' depths are feature widths.
int64_t primitiveDepth(bool transA, int64_t K) { return transA ? DNNL_RUNTIME_DIM_VAL : K; }

// Scratch memory is the caller's (scratchpad_mode::user), one buffer per thread: threads run one cached
// primitive at once, and oneDNN's own scratchpad would be shared between them (packed inputs overwritten by
// another thread's call).
Bf16Matmul bf16Primitive(bool transA, bool transB, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb,
                         int64_t ldc, bool accumulate) {
  Bf16Cache& cache = bf16Cache();
  K = primitiveDepth(transA, K);
  const Key key{M, N, K, lda, ldb, ldc, transA, transB, accumulate};
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto it = cache.primitives.find(key);
  if (it != cache.primitives.end()) return it->second;
  ++cache.created;
  const Bf16Descs d = bf16Descs(transA, transB, M, N, K, lda, ldb, ldc);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (accumulate) {
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attr.set_post_ops(ops);
  }
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(d.a, d.b, d.c), attr, cpuEngine());
  const Bf16Matmul m{dnnl::matmul(pd), pd.scratchpad_desc().get_size()};
  cache.primitives.emplace(key, m);
  return m;
}

// An empty product: nothing to do when C has no elements; zeros (or C as it is, when accumulating) when the
// sum is over nothing, K = 0 (a batch without edges), which oneDNN refuses with leading dimensions of 0.
bool sumOverNothing(int64_t M, int64_t N, int64_t K, float* C, int64_t ldc, bool accumulate) {
  if (M == 0 || N == 0) return true;
  if (K != 0) return false;
  if (!accumulate)
    for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, 0.0f);
  return true;
}

// Row-major C = A B (neither stored transposed) through libxsmm: column-major C^T = B^T A^T, so libxsmm's m is
// N, its n is M and B its first operand. The depth in the chunks oneDNN's calls have (DepthChunks: equal chunks
// but the last, so at most three kernels, dispatched before any runs). False, with C untouched, when libxsmm
// has no kernel for one of them.
bool xsmmF32(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
             int64_t ldc, bool accumulate) {
  const DepthChunks d(K, kGemmDepthChunk);
  const int64_t chunks = d.count, chunk = d.size, last = d.last;
  auto kernel = [&](int64_t depth, bool sum) {
    const libxsmm_blasint m = N, n = M, k = depth, la = ldb, lb = lda, lc = ldc;
    const float alpha = 1.0f, beta = sum ? 1.0f : 0.0f;
    const int flags = LIBXSMM_GEMM_FLAGS('N', 'N'), prefetch = LIBXSMM_PREFETCH_NONE;
    return libxsmm_smmdispatch(m, n, k, &la, &lb, &lc, &alpha, &beta, &flags, &prefetch);
  };
  const libxsmm_smmfunction first = kernel(chunks == 1 ? last : chunk, accumulate);
  const libxsmm_smmfunction middle = chunks > 2 ? kernel(chunk, true) : first;
  const libxsmm_smmfunction end = chunks > 1 ? kernel(last, true) : first;
  if (!first || !middle || !end) return false;
  for (int64_t c = 0; c < chunks; ++c) {
    const libxsmm_smmfunction f = c == 0 ? first : c == chunks - 1 ? end : middle;
    f(B + c * chunk * ldb, A + c * chunk, C);
  }
  return true;
}

}  // namespace

void gemmF32(bool transA, bool transB, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda,
             const float* B, int64_t ldb, float* C, int64_t ldc, bool accumulate) {
  if (sumOverNothing(M, N, K, C, ldc, accumulate)) return;
  if (!transA && !transB && plainLayoutFaster(N) && xsmmF32(M, N, K, A, lda, B, ldb, C, ldc, accumulate)) return;
  OneThread one;
  forDepthChunks(K, kGemmDepthChunk, [&](int64_t k0, int64_t k) {
    const float* a = transA ? A + k0 * lda : A + k0;
    const float* b = transB ? B + k0 : B + k0 * ldb;
    const float beta = accumulate || k0 > 0 ? 1.0f : 0.0f;
    check(dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', M, N, k, 1.0f, a, lda, b, ldb, beta, C, ldc), "sgemm");
  });
}

void warmUp() {
  std::vector<float> a(kGemmPanelRows * 16, 0.0f), b(16 * 16, 0.0f), c(kGemmPanelRows * 16);
  gemmF32(false, true, kGemmPanelRows, 16, 16, a.data(), 16, b.data(), 16, c.data(), 16, false);
}

void gemmBf16(bool transA, bool transB, int64_t M, int64_t N, int64_t K, const uint16_t* A, int64_t lda,
              const uint16_t* B, int64_t ldb, float* C, int64_t ldc, bool accumulate) {
  if (sumOverNothing(M, N, K, C, ldc, accumulate)) return;
  if (!bf16Supported()) {
    // oneDNN has no bfloat16 matmul below AVX-512: the inputs widened back to float32 (exactly: a bfloat16
    // is a float32 with a shorter mantissa) through the float32 kernel, the same products summed in another order.
    const int64_t ar = transA ? K : M, ac = transA ? M : K, br = transB ? N : K, bc = transB ? K : N;
    std::vector<float> a(static_cast<size_t>(ar * ac)), b(static_cast<size_t>(br * bc));
    for (int64_t i = 0; i < ar; ++i)
      for (int64_t j = 0; j < ac; ++j) a[static_cast<size_t>(i * ac + j)] = fromBf16(A[i * lda + j]);
    for (int64_t i = 0; i < br; ++i)
      for (int64_t j = 0; j < bc; ++j) b[static_cast<size_t>(i * bc + j)] = fromBf16(B[i * ldb + j]);
    gemmF32(transA, transB, M, N, K, a.data(), ac, b.data(), bc, C, ldc, accumulate);
    return;
  }
  OneThread one;
  thread_local dnnl::stream stream(cpuEngine());
  forDepthChunks(K, kGemmDepthChunkBf16, [&](int64_t k0, int64_t k) {
    const uint16_t* a = transA ? A + k0 * lda : A + k0;
    const uint16_t* b = transB ? B + k0 : B + k0 * ldb;
    const bool acc = accumulate || k0 > 0;
    const Bf16Matmul m = bf16Primitive(transA, transB, M, N, k, lda, ldb, ldc, acc);
    const Bf16Descs d = bf16Descs(transA, transB, M, N, k, lda, ldb, ldc);
    dnnl::memory am(d.a, cpuEngine(), const_cast<uint16_t*>(a)), bm(d.b, cpuEngine(), const_cast<uint16_t*>(b)),
        cm(d.c, cpuEngine(), C);
    thread_local std::vector<std::byte> scratch;
    if (scratch.size() < m.scratchBytes + 64) scratch.resize(m.scratchBytes + 64);
    void* aligned = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
    dnnl::memory sm(dnnl::memory::desc({std::max<int64_t>(1, static_cast<int64_t>(m.scratchBytes))}, dnnl::memory::data_type::u8,
                                       dnnl::memory::format_tag::a),
                    cpuEngine(), aligned);
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}};
    if (m.scratchBytes > 0) args.emplace(DNNL_ARG_SCRATCHPAD, sm);
    m.primitive.execute(stream, args);
  });
  stream.wait();
}

int64_t bf16PrimitivesMade() {
  Bf16Cache& cache = bf16Cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  return cache.created;
}

bool bf16Supported() {
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core || isa == dnnl::cpu_isa::avx512_core_vnni || bf16Native();
}

bool bf16Native() {
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

bool plainLayoutFaster(int64_t N) { return N > 1; }

std::string plainGemmTarget() {
  const char* arch = libxsmm_get_target_arch();
  return arch ? arch : "none";
}

std::string gemmIsa() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

}  // namespace gnn::kernels
