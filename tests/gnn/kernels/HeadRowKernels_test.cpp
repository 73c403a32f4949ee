// gnn/kernels/HeadRowSum.h and HeadRowDot.h: the register kernels of the graph attentions give the bits of the
// plain loops they replace (GraphAttentionKernels.h's axpyHeads and dotHeads), for every head count and width
// they take (whole and partial vectors, heads straddling vectors), masked or not; and they decline the shapes
// they do not take.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gnn/kernels/HeadRowDot.h"
#include "gnn/kernels/HeadRowSum.h"
#include "gnn/ops/GraphAttentionKernels.h"
#include "gnn/system/CpuClones.h"

namespace gnn {
namespace {

template <class T>
std::vector<T> uniformValues(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(u(gen));
  return v;
}

template <class T>
bool sameBits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// 7 rows of H x C summed with weights (and masks), by the kernel and by axpyHeads; returns whether the kernel
// took the shape.
template <class T>
bool headRowSumMatches(int64_t H, int64_t C, bool masked) {
  const int64_t HC = H * C, rows = 7;
  const auto v = uniformValues<T>(static_cast<size_t>(rows * HC), 1);
  const auto a = uniformValues<T>(static_cast<size_t>(rows * H), 2);
  const auto m = uniformValues<T>(static_cast<size_t>(rows * H), 3);
  std::vector<T> plain(static_cast<size_t>(HC), T(0)), fast(static_cast<size_t>(HC) + 16, T(-7));
  // The plain loop as the ops run it: in a portable build inside the clone for this CPU, whose multiply-adds the
  // kernels' fused ones must match.
  [&]() GNN_CPU_CLONES {
    for (int64_t r = 0; r < rows; ++r) {
      if (masked)
        graph_attention::axpyHeads<true>(std::integral_constant<int64_t, 0>{}, plain.data(), &a[r * H], &m[r * H],
                                         &v[r * HC], H, C);
      else
        graph_attention::axpyHeads<false>(std::integral_constant<int64_t, 0>{}, plain.data(), &a[r * H],
                                          static_cast<const T*>(nullptr), &v[r * HC], H, C);
    }
  }();
  bool took = false;
  kernels::withHeadRowSum<T>(H, C, [&](auto acc) {
    if constexpr (decltype(acc)::kRegisters) {
      took = true;
      acc.zero();
      for (int64_t r = 0; r < rows; ++r) {
        if (masked)
          acc.template add<true>(&a[r * H], &m[r * H], &v[r * HC]);
        else
          acc.template add<false>(&a[r * H], nullptr, &v[r * HC]);
      }
      acc.store(fast.data());
    }
  });
  if (!took) return false;
  // Nothing written past the row.
  for (size_t j = static_cast<size_t>(HC); j < fast.size(); ++j) EXPECT_EQ(fast[j], T(-7)) << H << "x" << C;
  fast.resize(static_cast<size_t>(HC));
  EXPECT_TRUE(sameBits(plain, fast)) << H << " heads x " << C << (masked ? " masked" : "");
  return true;
}

TEST(HeadRowSum, GivesTheBitsOfThePlainLoopForEveryWidthItTakes) {
  int taken = 0;
  for (int64_t H : {1, 2, 3, 4, 7, 8, 16})
    for (int64_t C : {1, 3, 7, 8, 9, 16, 31})
      for (bool masked : {false, true}) {
        taken += headRowSumMatches<float>(H, C, masked);
        taken += headRowSumMatches<double>(H, C, masked);
      }
  // Taken wherever the AVX-512 kernels run: a native AVX-512 build, or a portable one on an x86-64-v4 CPU.
  if (!kernels::avx512Kernels()) {
    EXPECT_EQ(taken, 0);
    return;
  }
  EXPECT_GT(taken, 100);  // GAT's Cora layers among them: 8 x 8 and 8 x 7
  EXPECT_TRUE(headRowSumMatches<float>(8, 8, true));
  EXPECT_TRUE(headRowSumMatches<float>(8, 7, false));
  EXPECT_FALSE(headRowSumMatches<float>(8, 64, false));  // 512 floats: the memory loop
  EXPECT_FALSE(headRowSumMatches<double>(16, 2, false));  // 16 weights do not fit 8 lanes
}

// 5 rows' per-head dots with one fixed row, by the kernel (times a scale when scaled), against their definition
// (each head's sum one chain of fused multiply-adds in increasing c) and, in a native build, against dotHeads, the
// plain loop the kernel replaces (a chain below 16 channels; from 16 on, partial sums). (In a portable build's AVX-512 clone GCC vectorises dotHeads' loop over the
// channels as an in-order reduction whose products are not fused: other bits, where the kernel keeps the native
// build's.)
bool headRowDotMatches(int64_t H, int64_t C, bool scaled) {
  const int64_t HC = H * C, rows = 5;
  const auto x = uniformValues<float>(static_cast<size_t>(HC), 4);
  const auto y = uniformValues<float>(static_cast<size_t>(rows * HC), 5);
  const auto s = uniformValues<float>(static_cast<size_t>(rows * H), 6);
  std::vector<float> chain(static_cast<size_t>(rows * H)), fast(static_cast<size_t>(rows * H) + 16, -7.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < H; ++h) {
      float acc = 0;
      for (int64_t c = 0; c < C; ++c) acc = std::fma(x[h * C + c], y[r * HC + h * C + c], acc);
      chain[r * H + h] = scaled ? acc * s[r * H + h] : acc;
    }
#if GNN_AVX512_KERNELS && !GNN_AVX512_AT_RUN_TIME
  std::vector<float> plain(static_cast<size_t>(rows * H));
  for (int64_t r = 0; r < rows; ++r)
    graph_attention::dotHeads(std::integral_constant<int64_t, 0>{}, x.data(), &y[r * HC], H, C, &plain[r * H],
                              scaled ? &s[r * H] : nullptr);
  if (C < 16) {
    EXPECT_TRUE(sameBits(plain, chain)) << H << " heads x " << C << (scaled ? " scaled" : "");
  }
#endif
  bool took = false;
  kernels::withHeadRowDot<float>(H, C, [&](auto dot) {
    if constexpr (decltype(dot)::kRegisters) {
      took = true;
      dot.setFixed(x.data());
      for (int64_t r = 0; r < rows; ++r) {
        if (scaled)
          dot.template dotsInto<true>(&y[r * HC], &fast[r * H], &s[r * H]);
        else
          dot.dotsInto(&y[r * HC], &fast[r * H]);
      }
    }
  });
  if (!took) return false;
  for (size_t j = static_cast<size_t>(rows * H); j < fast.size(); ++j) EXPECT_EQ(fast[j], -7.0f);
  fast.resize(static_cast<size_t>(rows * H));
  EXPECT_TRUE(sameBits(chain, fast)) << H << " heads x " << C << (scaled ? " scaled" : "");
  return true;
}

TEST(HeadRowDot, GivesTheBitsOfThePlainLoopForEveryWidthItTakes) {
  int taken = 0;
  for (int64_t H : {1, 2, 3, 4, 5, 8, 16})
    for (int64_t C : {1, 2, 3, 7, 8, 12, 15, 16})
      for (bool scaled : {false, true}) taken += headRowDotMatches(H, C, scaled);
  if (!kernels::avx512Kernels()) {
    EXPECT_EQ(taken, 0);
    return;
  }
  EXPECT_GT(taken, 40);
  EXPECT_TRUE(headRowDotMatches(8, 8, true));   // GAT's first Cora layer: four vectors
  EXPECT_TRUE(headRowDotMatches(8, 7, false));  // its second: heads straddle vectors
  EXPECT_TRUE(headRowDotMatches(3, 15, false));  // three vectors
  EXPECT_FALSE(headRowDotMatches(1, 8, false));   // one head: the plain loop
  EXPECT_FALSE(headRowDotMatches(8, 16, false));  // 16 channels: the plain loop's partial sums
}

}  // namespace
}  // namespace gnn
