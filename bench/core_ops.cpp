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

// The fused ops of a GIN layer at the shapes of one PlannedPack batch of the PCQM4Mv2-style set (2007 nodes,
// 4148 edges, width 300), forward and backward. bytes_per_s counts each [rows, 300] float array read or
// written once per pass, to set beside BM_ReferenceMemcpy.
constexpr int64_t kGinNodes = 2007, kGinEdges = 4148, kGinWidth = 300;

void BM_GinEmbeddingBag(benchmark::State& st) {
  Generator g(4);
  Variable table(init::uniform({13, kGinWidth}, -1, 1, g), true);
  Tensor index({kGinEdges, 3}, DType::I64);
  for (int64_t i = 0; i < index.numel(); ++i)
    index.data<int64_t>()[i] = static_cast<int64_t>(g.nextBelow(4)) + 4 * (i % 3);
  Tensor seed = init::uniform({kGinEdges, kGinWidth}, -1, 1, g);
  for (auto _ : st) {
    embeddingBag(table, index).backward(seed);
    table.zeroGrad();
  }
  st.counters["bytes_per_s"] =
      benchmark::Counter(2.0 * 4 * kGinEdges * kGinWidth, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_GinReluMessageSum(benchmark::State& st) {
  RandomGraph rg = randomGraph(kGinNodes, kGinWidth);
  Generator g(5);
  std::vector<int64_t> idx(static_cast<size_t>(2 * kGinEdges));
  for (auto& v : idx) v = static_cast<int64_t>(g.nextBelow(kGinNodes));
  Tensor ei = Tensor::fromVector(idx, {2, kGinEdges});
  Variable x(rg.x.value(), true), e(init::uniform({kGinEdges, kGinWidth}, -1, 1, g), true);
  Tensor seed = init::uniform({kGinNodes, kGinWidth}, -1, 1, g);
  for (auto _ : st) {
    reluMessageSum(x, e, ei, kGinNodes).backward(seed);
    x.zeroGrad();
    e.zeroGrad();
  }
  // forward: x rows and e read, out written; backward: x, e, seed rows read, edge gradient written, read and
  // summed into x's gradient.
  st.counters["bytes_per_s"] = benchmark::Counter(4.0 * kGinWidth * (8 * kGinEdges + 2 * kGinNodes),
                                                  benchmark::Counter::kIsIterationInvariantRate);
}

void BM_GinLayerNormRelu(benchmark::State& st) {
  Generator g(6);
  Variable x(init::uniform({kGinNodes, 2 * kGinWidth}, -1, 1, g), true);
  Variable gamma(init::uniform({2 * kGinWidth}, 0.5, 1.5, g), true), beta(init::uniform({2 * kGinWidth}, -1, 1, g), true);
  Tensor seed = init::uniform({kGinNodes, 2 * kGinWidth}, -1, 1, g);
  for (auto _ : st) {
    layerNormRelu(x, gamma, beta).backward(seed);
    x.zeroGrad();
    gamma.zeroGrad();
    beta.zeroGrad();
  }
  // forward: x read, y written; backward: seed, x, y read, gradient written.
  st.counters["bytes_per_s"] =
      benchmark::Counter(6.0 * 4 * kGinNodes * 2 * kGinWidth, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_GinLinear(benchmark::State& st) {
  Generator g(7);
  Variable x(init::uniform({kGinNodes, kGinWidth}, -1, 1, g), true);
  Variable w(init::uniform({2 * kGinWidth, kGinWidth}, -1, 1, g), true), b(init::uniform({2 * kGinWidth}, -1, 1, g), true);
  Tensor seed = init::uniform({kGinNodes, 2 * kGinWidth}, -1, 1, g);
  for (auto _ : st) {
    linear(x, w, b).backward(seed);
    x.zeroGrad();
    w.zeroGrad();
    b.zeroGrad();
  }
  st.counters["flops"] = benchmark::Counter(3 * 2.0 * kGinNodes * kGinWidth * 2 * kGinWidth,
                                            benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(BM_ReferenceEigenGemm)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReferenceMemcpy)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Matmul)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Spmm)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GatherScatter)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GinEmbeddingBag)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GinReluMessageSum)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GinLayerNormRelu)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GinLinear)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GcnLayerTrainStep)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

int main(int argc, char** argv) {
  setNumThreads(0);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
