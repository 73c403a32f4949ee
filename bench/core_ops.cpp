// Op-level speed beside the machine's own limits, measured in the same run: a plain Eigen GEMM (FLOP/s)
// and memcpy (bytes/s) are the references; our matmul, SpMM, gather/scatter, GIN's fused ops, attention's
// batched products and softmax, SchNet's edge distances and a GCN layer step are reported as achieved FLOP/s
// or bytes/s, to be divided by the reference's counter of the same run (the program prints the counters, not
// the fractions). Flags are Google Benchmark's; values it would answer with its help and exit code 0, and an
// output file it cannot write, are refused here as a bad command line (exit 2), as the examples do.
//
//   build/release/bench/bench_core_ops --benchmark_format=json
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "app/Program.h"
#include "app/TrainingFlags.h"
#include "data/RadiusGraph.h"
#include "gnn/kernels/Gemm.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/conv/CFConv.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/ops/GraphAttention.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

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

// GAT's fused attention on a Cora-sized graph (2,708 nodes, 10 random edges each), heads x C = range(0) x
// range(1): the forward alone (evaluation) and with its backward (training, attention dropout 0.6 as the GAT
// paper's).
void BM_GatAttention(benchmark::State& st) {
  const int64_t H = st.range(0), C = st.range(1);
  RandomGraph rg = randomGraph(2708, H * C);
  Generator g(4);
  Variable as(init::uniform({2708, H}, -1, 1, g), true), ad(init::uniform({2708, H}, -1, 1, g), true);
  Variable h(rg.x.value(), true);
  const bool train = st.range(2) != 0;
  GraphAttentionOptions o;
  o.training = train;
  o.dropout = train ? 0.6 : 0.0;
  for (auto _ : st) {
    Variable y = gatAttention(h, as, ad, rg.edgeIndex, Variable(), Variable(), o);
    if (train) sum(y).backward();
    benchmark::DoNotOptimize(y.value().raw());
  }
  st.counters["terms_per_s"] = benchmark::Counter(static_cast<double>(rg.edgeIndex.dim(1) + 2708),
                                                  benchmark::Counter::kIsIterationInvariantRate);
}

// GATv2's fused attention on the same graph, heads x C = range(0) x range(1), xl and xr distinct, evaluation
// (range(2) 0) or training with attention dropout 0.5 and the backward.
void BM_Gatv2Attention(benchmark::State& st) {
  const int64_t H = st.range(0), C = st.range(1);
  RandomGraph rg = randomGraph(2708, H * C);
  Generator g(5);
  Variable xl(rg.x.value(), true), xr(init::uniform({2708, H * C}, -1, 1, g), true);
  Variable att(init::uniform({H, C}, -1, 1, g), true);
  const bool train = st.range(2) != 0;
  GraphAttentionOptions o;
  o.training = train;
  o.dropout = train ? 0.5 : 0.0;
  for (auto _ : st) {
    Variable y = gatv2Attention(xl, xr, att, rg.edgeIndex, Variable(), Variable(), o);
    if (train) sum(y).backward();
    benchmark::DoNotOptimize(y.value().raw());
  }
  st.counters["terms_per_s"] = benchmark::Counter(static_cast<double>(rg.edgeIndex.dim(1) + 2708),
                                                  benchmark::Counter::kIsIterationInvariantRate);
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

// A layer's weight transposed for a sparse product (GCNConv's [out, in] weight on Cora: [16, 1433] -> [1433, 16],
// and its gradient back), to set beside BM_ReferenceMemcpy: bytes_per_s counts one read and one write.
void BM_TransposeWeight(benchmark::State& st) {
  Generator g(4);
  const Variable w(init::uniform({st.range(0), st.range(1)}, -1, 1, g));
  for (auto _ : st) benchmark::DoNotOptimize(transpose(w, 0, 1).value().raw());
  st.counters["bytes_per_s"] = benchmark::Counter(8.0 * static_cast<double>(st.range(0) * st.range(1)),
                                                  benchmark::Counter::kIsIterationInvariantRate);
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

// LayerNorm at Graphormer-slim's shape: 64 molecules padded to 30 atoms, 80 wide (narrow rows: the per-row
// work is small beside a parallel loop's cost).
void BM_GraphormerLayerNorm(benchmark::State& st) {
  constexpr int64_t kRows = 64 * 30, kWidth = 80;
  Generator g(9);
  Variable x(init::uniform({kRows, kWidth}, -1, 1, g), true);
  Variable gamma(init::uniform({kWidth}, 0.5, 1.5, g), true), beta(init::uniform({kWidth}, -1, 1, g), true);
  Tensor seed = init::uniform({kRows, kWidth}, -1, 1, g);
  for (auto _ : st) {
    layerNorm(x, gamma, beta).backward(seed);
    x.zeroGrad();
    gamma.zeroGrad();
    beta.zeroGrad();
  }
  // forward: x read, y written; backward: seed and x read, gradient written.
  st.counters["bytes_per_s"] = benchmark::Counter(5.0 * 4 * kRows * kWidth, benchmark::Counter::kIsIterationInvariantRate);
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

// The same product with bfloat16 inputs (--precision bf16), and beside it the bare kernel: oneDNN's bfloat16
// matmul on inputs already rounded, the three products of a forward and backward (Y = X W^T, gX = gY W,
// gW = gY^T X) in two row halves on the cores: what the op would cost without its conversions and sums.
void BM_GinLinearBf16(benchmark::State& st) {
  Generator g(7);
  Variable x(init::uniform({kGinNodes, kGinWidth}, -1, 1, g), true);
  Variable w(init::uniform({2 * kGinWidth, kGinWidth}, -1, 1, g), true), b(init::uniform({2 * kGinWidth}, -1, 1, g), true);
  Tensor seed = init::uniform({kGinNodes, 2 * kGinWidth}, -1, 1, g);
  ExecutionContext& ctx = ExecutionContext::current();
  const MatmulPrecision before = ctx.matmulPrecision();
  ctx.setMatmulPrecision(MatmulPrecision::BFloat16);
  for (auto _ : st) {
    linear(x, w, b).backward(seed);
    x.zeroGrad();
    w.zeroGrad();
    b.zeroGrad();
  }
  ctx.setMatmulPrecision(before);
  st.counters["flops"] = benchmark::Counter(3 * 2.0 * kGinNodes * kGinWidth * 2 * kGinWidth,
                                            benchmark::Counter::kIsIterationInvariantRate);
}

void BM_GinLinearBf16Kernel(benchmark::State& st) {
  if (!kernels::bf16Supported()) {
    st.SkipWithError("no bfloat16 matmul on this CPU");
    return;
  }
  const int64_t M = kGinNodes, K = kGinWidth, N = 2 * kGinWidth, half = (M / 2 + 47) / 48 * 48;
  std::vector<uint16_t> x(static_cast<size_t>(M * K), 0x3f80), w(static_cast<size_t>(N * K), 0x3f80),
      gy(static_cast<size_t>(M * N), 0x3f80);
  std::vector<float> y(static_cast<size_t>(M * N)), gx(static_cast<size_t>(M * K)), gw(static_cast<size_t>(2 * N * K));
  for (auto _ : st) {
    parallelFor(2, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t r0 = t * half, rows = std::min(M, r0 + half) - r0;
        kernels::gemmBf16(false, true, rows, N, K, x.data() + r0 * K, K, w.data(), K, y.data() + r0 * N, N, false);
        kernels::gemmBf16(false, false, rows, K, N, gy.data() + r0 * N, N, w.data(), K, gx.data() + r0 * K, K, false);
        kernels::gemmBf16(true, false, N, K, rows, gy.data() + r0 * N, N, x.data() + r0 * K, K, gw.data() + t * N * K, K,
                          false);
      }
    });
    benchmark::DoNotOptimize(gw.data());
  }
  st.counters["flops"] = benchmark::Counter(3 * 2.0 * M * K * N, benchmark::Counter::kIsIterationInvariantRate);
}

// linear at the shapes of the models' steps, forward alone and forward with backward: range(0) rows M,
// range(1) inputs K, range(2) outputs N (with a bias), range(3) = 1 for the backward too, range(4) = 1 for
// bfloat16 products. The input's gradient is left out when K is 50 (SchNet's filter network needs none for
// its 50 Gaussians). Shapes: SchNet's step (32 QM7 molecules: 2,969 atom pairs, 448 atom rows, 128 filters)
// and GIN's (2,007 atoms, 300 -> 600 -> 300).
void BM_LinearShape(benchmark::State& st) {
  Generator g(17);
  const int64_t M = st.range(0), K = st.range(1), N = st.range(2);
  const bool backward = st.range(3) != 0, inputGrad = K != 50;
  Variable x(init::uniform({M, K}, -1, 1, g), inputGrad);
  Variable w(init::uniform({N, K}, -1, 1, g), true), b(init::uniform({N}, -1, 1, g), true);
  Tensor seed = init::uniform({M, N}, -1, 1, g);
  ExecutionContext& ctx = ExecutionContext::current();
  const MatmulPrecision before = ctx.matmulPrecision();
  if (st.range(4) != 0) ctx.setMatmulPrecision(MatmulPrecision::BFloat16);
  for (auto _ : st) {
    Variable y = linear(x, w, b);
    if (backward) {
      y.backward(seed);
      x.zeroGrad();
      w.zeroGrad();
      b.zeroGrad();
    }
    benchmark::DoNotOptimize(y.value().data<float>());
  }
  ctx.setMatmulPrecision(before);
  const double products = backward ? (inputGrad ? 3.0 : 2.0) : 1.0;
  st.counters["flops"] =
      benchmark::Counter(products * 2.0 * M * K * N, benchmark::Counter::kIsIterationInvariantRate);
}

// Graphormer's attention at the shapes of Graphormer-slim (80 hidden, 8 heads of 10; Ying et al. 2021) on a
// batch of 64 molecules padded to 32 atoms: scores Q K^T, softmax with the spatial/edge bias and the padding
// mask, and P V, forward and backward.
constexpr int64_t kAttBatch = 64, kAttHeads = 8, kAttNodes = 32, kAttHeadDim = 10;

void BM_AttentionScores(benchmark::State& st) {
  Generator g(8);
  const Shape s{kAttBatch, kAttHeads, kAttNodes, kAttHeadDim};
  Variable q(init::uniform(s, -1, 1, g), true), k(init::uniform(s, -1, 1, g), true);
  Tensor seed = init::uniform({kAttBatch, kAttHeads, kAttNodes, kAttNodes}, -1, 1, g);
  for (auto _ : st) {
    bmmNT(q, k).backward(seed);
    q.zeroGrad();
    k.zeroGrad();
  }
  st.counters["flops"] = benchmark::Counter(3 * 2.0 * kAttBatch * kAttHeads * kAttNodes * kAttNodes * kAttHeadDim,
                                            benchmark::Counter::kIsIterationInvariantRate);
}

void BM_AttentionSoftmax(benchmark::State& st) {
  Generator g(9);
  const Shape s{kAttBatch, kAttHeads, kAttNodes, kAttNodes};
  Variable x(init::uniform(s, -3, 3, g), true), bias(init::uniform(s, -1, 1, g), true);
  // Key padding: molecule b has 16 + b % 17 atoms.
  Tensor mask({kAttBatch, 1, 1, kAttNodes}, DType::U8);
  for (int64_t b = 0; b < kAttBatch; ++b)
    for (int64_t j = 0; j < kAttNodes; ++j) mask.data<uint8_t>()[b * kAttNodes + j] = j < 16 + b % 17;
  Tensor seed = init::uniform(s, -1, 1, g);
  for (auto _ : st) {
    softmax(x, -1, bias, mask).backward(seed);
    x.zeroGrad();
    bias.zeroGrad();
  }
  // forward: x and bias read, y written; backward: y and seed read, one gradient written (shared by x and bias).
  st.counters["bytes_per_s"] = benchmark::Counter(6.0 * 4 * shapeNumel(s), benchmark::Counter::kIsIterationInvariantRate);
}

// Graphormer-slim's fused attention as it trains: 64 molecules of up to 30 atoms plus the graph token (31
// positions, molecule b keeping 16 + b % 15 atoms), 8 heads of 10, the spatial/edge bias, attention dropout 0.1.
void BM_GraphormerAttention(benchmark::State& st) {
  constexpr int64_t kB = 64, kT = 31, kH = 8, kD = 10;
  Generator g(12);
  Variable qkv(init::uniform({kB, kT, 3 * kH * kD}, -1, 1, g), true), bias(init::uniform({kB, kH, kT, kT}, -1, 1, g), true);
  Tensor mask({kB, kT}, DType::U8);
  for (int64_t b = 0; b < kB; ++b)
    for (int64_t j = 0; j < kT; ++j) mask.data<uint8_t>()[b * kT + j] = j <= 16 + b % 15;
  Tensor seed = init::uniform({kB, kT, kH * kD}, -1, 1, g);
  ExecutionContext::current().setRandomKey({5, 0, 0});
  for (auto _ : st) {
    multiHeadAttention(qkv, kH, bias, mask, 0.1, true).backward(seed);
    qkv.zeroGrad();
    bias.zeroGrad();
  }
  // As the op counts it: forward 4 T^2 d + 8 T^2 + T^2 (dropout) per head, backward twice the products.
  st.counters["flops"] = benchmark::Counter(static_cast<double>(kB * kH) * (12.0 * kT * kT * kD + 17.0 * kT * kT),
                                            benchmark::Counter::kIsIterationInvariantRate);
}

// SchNet's shifted softplus on a filter network's hidden layer: 3,000 atom pairs (a batch of 32 QM7
// molecules) x 128 filters, forward and backward.
void BM_ShiftedSoftplus(benchmark::State& st) {
  Generator g(11);
  constexpr int64_t kPairs = 3000, kFilters = 128;
  Variable x(init::uniform({kPairs, kFilters}, -6, 6, g), true);
  Tensor seed = init::uniform({kPairs, kFilters}, -1, 1, g);
  for (auto _ : st) {
    shiftedSoftplus(x).backward(seed);
    x.zeroGrad();
  }
  st.counters["elements_per_s"] =
      benchmark::Counter(static_cast<double>(kPairs * kFilters), benchmark::Counter::kIsIterationInvariantRate);
}

// SchNet's filtered message sum (CFConv) on a batch of 32 molecules of 14 atoms, every atom within the
// cutoff of every other (5,824 directed edges, 2,912 pairs, one filter row per pair), 128 filters, forward and
// backward.
void BM_FilterMessageSum(benchmark::State& st) {
  constexpr int64_t kMolecules = 32, kAtoms = 14, kFilters = 128;
  std::vector<int64_t> src, dst;
  for (int64_t m = 0; m < kMolecules; ++m)
    for (int64_t i = 0; i < kAtoms; ++i)
      for (int64_t j = 0; j < kAtoms; ++j)
        if (i != j) {
          src.push_back(m * kAtoms + j);
          dst.push_back(m * kAtoms + i);
        }
  const int64_t E = static_cast<int64_t>(src.size()), N = kMolecules * kAtoms;
  src.insert(src.end(), dst.begin(), dst.end());
  const Tensor ei = Tensor::fromVector(src, {2, E});
  const EdgePairs pairs = edgePairs(ei);
  Generator g(13);
  Variable x(init::uniform({N, kFilters}, -1, 1, g), true);
  Variable w(init::uniform({pairs.edgeIndex.dim(1), kFilters}, -1, 1, g), true);
  Tensor seed = init::uniform({N, kFilters}, -1, 1, g);
  for (auto _ : st) {
    filterMessageSum(x, w, ei, N, pairs.pairOf).backward(seed);
    x.zeroGrad();
    w.zeroGrad();
  }
  st.counters["edges_per_s"] = benchmark::Counter(static_cast<double>(E), benchmark::Counter::kIsIterationInvariantRate);
}

// SchNet's distances: 2007 atoms (one batch of the GIN benchmarks above), 20 neighbours each.
void BM_EdgeDistances(benchmark::State& st) {
  RandomGraph rg = randomGraph(kGinNodes, 3);
  Generator g(10);
  std::vector<int64_t> idx(static_cast<size_t>(2 * 20 * kGinNodes));
  for (auto& v : idx) v = static_cast<int64_t>(g.nextBelow(kGinNodes));
  Tensor ei = Tensor::fromVector(idx, {2, 20 * kGinNodes});
  Variable pos(rg.x.value(), true);
  Tensor seed = init::uniform({20 * kGinNodes}, -1, 1, g);
  for (auto _ : st) {
    edgeDistances(pos, ei).backward(seed);
    pos.zeroGrad();
  }
  st.counters["edges_per_s"] = benchmark::Counter(20.0 * kGinNodes, benchmark::Counter::kIsIterationInvariantRate);
}

// SchNet's neighbour lists (10 A, 32 neighbours) for one molecule of st.range(0) atoms at an organic
// molecule's density (~0.1 atoms per cubic Angstrom), all pairs (st.range(1) = 0) or the cell list (1): where
// the two meet sets kCellListAtoms.
void BM_RadiusGraph(benchmark::State& st) {
  const int64_t n = st.range(0);
  const double side = std::cbrt(static_cast<double>(n) / 0.1);
  Generator g(12);
  Tensor pos = init::uniform({n, 3}, 0, side, g);
  const int64_t from = st.range(1) ? 0 : n + 1;
  for (auto _ : st) benchmark::DoNotOptimize(radiusGraph(pos, 10.0, 32, from));
  st.counters["atoms_per_s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(BM_RadiusGraph)
    ->ArgsProduct({{20, 50, 150, 300, 1000, 3000, 10000}, {0, 1}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_ReferenceEigenGemm)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReferenceMemcpy)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Matmul)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TransposeWeight)->Args({16, 1433})->Args({1433, 16})->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Spmm)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GatAttention)
    ->Args({8, 8, 0})
    ->Args({8, 7, 0})
    ->Args({8, 8, 1})
    ->Args({8, 7, 1})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_Gatv2Attention)
    ->Args({1, 64, 0})
    ->Args({1, 7, 0})
    ->Args({1, 64, 1})
    ->Args({1, 7, 1})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_GatherScatter)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GinEmbeddingBag)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GinReluMessageSum)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GinLayerNormRelu)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GraphormerLayerNorm)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_GinLinear)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GinLinearBf16)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GinLinearBf16Kernel)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AttentionScores)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AttentionSoftmax)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GraphormerAttention)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LinearShape)
    ->ArgNames({"M", "K", "N", "bwd", "bf16"})
    ->Args({2969, 50, 128, 0, 0})->Args({2969, 128, 128, 0, 0})->Args({448, 128, 128, 0, 0})
    ->Args({2969, 50, 128, 1, 0})->Args({2969, 128, 128, 1, 0})->Args({448, 128, 128, 1, 0})
    ->Args({2007, 300, 600, 0, 0})->Args({2007, 600, 300, 0, 0})->Args({2007, 300, 600, 1, 0})->Args({2007, 600, 300, 1, 0})
    ->Args({2007, 300, 600, 0, 1})->Args({2007, 600, 300, 0, 1})->Args({2007, 300, 600, 1, 1})->Args({2007, 600, 300, 1, 1})
    ->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_ShiftedSoftplus)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_FilterMessageSum)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_EdgeDistances)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GcnLayerTrainStep)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

namespace {

constexpr const char* kName = "bench_core_ops";

void printHelp() {
  std::cout
      << kName << ": op speed beside the machine's GEMM and memcpy speed, measured in the same run.\n\n"
      << "Measures: per op (matmul, SpMM, gather/scatter, GIN's fused ops, attention's batched products and\n"
         "  softmax, SchNet's edge distances, a GCN layer step; forward and backward where the op has one) "
         "the\n"
         "  time per iteration and a rate counter: flops (FLOP/s), bytes_per_s (array bytes read and "
         "written\n"
         "  per second) or edges_per_s. All cores.\n"
         "Compared with: BM_ReferenceEigenGemm (a plain Eigen GEMM, FLOP/s) and BM_ReferenceMemcpy "
         "(bytes/s)\n"
         "  of the same run: an op's share of the machine's limit = its counter / the reference's counter.\n"
         "  No stored figures are compared.\n\n"
         "Flags are Google Benchmark's, e.g. --benchmark_filter=Gin --benchmark_format=json:\n";
  benchmark::PrintDefaultHelp();
}

int usageError(const std::string& what) {
  std::cerr << kName << ": " << what << " (see " << kName << " --help)\n";
  return 2;
}

// Google Benchmark answers a value it does not know with its help and exit code 0, and a file it cannot
// write with a bare message; a script would take the first for success. Checked here in the examples' terms
// (exit 2, message naming the flag). Returns the exit code, or -1 when the command line is fine.
int checkFlags(int argc, char** argv) {
  auto valueOf = [](const std::string& arg, const std::string& flag, std::string& v) {
    if (arg.rfind(flag + "=", 0) != 0) return false;
    v = arg.substr(flag.size() + 1);
    return true;
  };
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      std::string v;
      if (valueOf(arg, "--benchmark_format", v))
        app::requireOneOf("--benchmark_format", v, {"console", "json", "csv"});
      if (valueOf(arg, "--benchmark_out_format", v))
        app::requireOneOf("--benchmark_out_format", v, {"json", "console", "csv"});
      if (valueOf(arg, "--benchmark_time_unit", v))
        app::requireOneOf("--benchmark_time_unit", v, {"ns", "us", "ms", "s"});
      if (valueOf(arg, "--benchmark_color", v))
        app::requireOneOf("--benchmark_color", v, {"auto", "true", "false"});
      if (valueOf(arg, "--benchmark_out", v)) app::checkWritable("--benchmark_out", v);
    }
  } catch (const app::UsageError& e) {
    return usageError(e.what());
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  // -h as in the other programs; Google Benchmark knows only --help.
  static char help[] = "--help";
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "-h") == 0) argv[i] = help;
  if (int code = checkFlags(argc, argv); code >= 0) return code;
  benchmark::Initialize(&argc, argv, printHelp);
  // Initialize leaves what it does not know (a misspelt flag, a value that does not parse) in argv.
  if (argc > 1) return usageError(std::string("unrecognised option '") + argv[1] + "'");
  try {
    // GNN_BENCH_THREADS: the op threads (default 0: every core), e.g. 1 to compare kernels on a busy machine.
    const char* threads = std::getenv("GNN_BENCH_THREADS");
    setNumThreads(threads ? std::atoi(threads) : 0);
    if (benchmark::RunSpecifiedBenchmarks() == 0)
      return usageError("--benchmark_filter '" + benchmark::GetBenchmarkFilter() + "' matches no benchmark");
    benchmark::Shutdown();
  } catch (const std::exception& e) {
    std::cerr << kName << ": error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
