// Op-level speed beside the machine's own limits, measured in the same run: a plain Eigen GEMM (FLOP/s)
// and memcpy (bytes/s) are the references; our matmul, SpMM, gather/scatter and a GCN layer step are
// reported as achieved FLOP/s or bytes/s and as a fraction of the reference.
//
//   build/release/bench/bench_core_ops --benchmark_format=json
#include <benchmark/benchmark.h>

#include <cstring>

#include "gnn/GCNConv.h"
#include "gnn/Init.h"
#include "gnn/Ops.h"
#include "gnn/Parallel.h"

using namespace gnn;

namespace {

void BM_ReferenceEigenGemm(benchmark::State& st) {
  const int64_t n = st.range(0);
  RowMatrix<float> a = RowMatrix<float>::Random(n, n), b = RowMatrix<float>::Random(n, n), c(n, n);
  for (auto _ : st) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  st.counters["flops"] = benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ReferenceMemcpy(benchmark::State& st) {
  const size_t bytes = static_cast<size_t>(st.range(0)) << 20;
  std::vector<char> a(bytes, 1), b(bytes);
  for (auto _ : st) {
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::DoNotOptimize(b.data());
  }
  st.counters["bytes_per_s"] = benchmark::Counter(2.0 * bytes, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Matmul(benchmark::State& st) {
  const int64_t n = st.range(0);
  Generator g(1);
  Variable a(init::uniform({n, n}, -1, 1, g)), b(init::uniform({n, n}, -1, 1, g));
  for (auto _ : st) benchmark::DoNotOptimize(matmul(a, b).value().raw());
  st.counters["flops"] = benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);
}

// A random graph with `nodes` nodes and 10 edges per node, features of width f.
struct RandomGraph {
  Tensor edgeIndex;
  Variable x;
};
RandomGraph randomGraph(int64_t nodes, int64_t f) {
  Generator g(2);
  int64_t e = nodes * 10;
  std::vector<int64_t> ei(static_cast<size_t>(2 * e));
  for (auto& v : ei) v = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(nodes)));
  return {Tensor::fromVector(ei, {2, e}), Variable(init::uniform({nodes, f}, -1, 1, g))};
}

void BM_Spmm(benchmark::State& st) {
  RandomGraph rg = randomGraph(st.range(0), 64);
  SparseMatrix a = GCNConv::normalizedAdjacency(rg.edgeIndex, st.range(0));
  for (auto _ : st) benchmark::DoNotOptimize(spmm(a, rg.x).value().raw());
  st.counters["flops"] = benchmark::Counter(2.0 * a.nnz() * 64, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_GatherScatter(benchmark::State& st) {
  RandomGraph rg = randomGraph(st.range(0), 64);
  Tensor src = rg.edgeIndex.slice(0, 1).reshape({rg.edgeIndex.dim(1)});
  Tensor dst = rg.edgeIndex.slice(1, 2).reshape({rg.edgeIndex.dim(1)});
  for (auto _ : st) benchmark::DoNotOptimize(scatterSum(gatherRows(rg.x, src), dst, st.range(0)).value().raw());
  // Each edge reads and writes one 64-float row twice (gather, then scatter).
  st.counters["bytes_per_s"] =
      benchmark::Counter(4.0 * 64 * 4 * rg.edgeIndex.dim(1), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_GcnLayerTrainStep(benchmark::State& st) {
  RandomGraph rg = randomGraph(st.range(0), 64);
  Generator g(3);
  GCNConv conv(64, 64, g);
  for (auto _ : st) {
    Variable loss = mean(relu(conv.forward(rg.x, rg.edgeIndex)));
    loss.backward();
    conv.zeroGrad();
  }
}

}  // namespace

BENCHMARK(BM_ReferenceEigenGemm)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReferenceMemcpy)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Matmul)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Spmm)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GatherScatter)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GcnLayerTrainStep)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

int main(int argc, char** argv) {
  setNumThreads(0);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
