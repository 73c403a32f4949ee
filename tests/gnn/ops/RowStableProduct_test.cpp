// Forward products give each row the same bits wherever it sits and however many rows there are (the rows of
// a matrix's last partial kernel panel are computed on a zero-padded panel, gnn/ops/Product.cpp). This is
// what lets a model's real rows come out bit-identical with any amount of padding in the batch.
#include <gtest/gtest.h>

#include <cstring>

#include "PrecisionScope.h"
#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"

namespace gnn {
namespace {

using ProductFn = std::function<Variable(const Variable& x, const Variable& w, const Variable& b)>;

struct ProductCase {
  const char* name;
  ProductFn f;
  bool weightNK;  // weight stored [N, K] (linear, matmulNT) rather than [K, N] (matmul)
};

std::vector<ProductCase> cases() {
  return {
      {"linear", [](const Variable& x, const Variable& w, const Variable& b) { return linear(x, w, b); },
       true},
      {"linear_nobias", [](const Variable& x, const Variable& w, const Variable&) { return linear(x, w); },
       true},
      {"matmul", [](const Variable& x, const Variable& w, const Variable&) { return matmul(x, w); }, false},
      {"matmulNT", [](const Variable& x, const Variable& w, const Variable&) { return matmulNT(x, w); },
       true}};
}

struct Setting {
  DType dt;
  MatmulPrecision precision;
};

// float32 and bfloat16 products (gnn/kernels/Gemm.h) and float64 ones (Eigen). K = 1000 and 2048 are depths
// where oneDNN's own blocking would depend on the row count (gnn/kernels/Gemm.h cuts the depth itself).
TEST(RowStableProduct, RowBitsDoNotDependOnPositionOrRowCount) {
  for (Setting st : {Setting{DType::F32, MatmulPrecision::Float32}, Setting{DType::F32, MatmulPrecision::BFloat16},
                     Setting{DType::F64, MatmulPrecision::Float32}}) {
    const DType dt = st.dt;
    PrecisionScope precision(st.precision);
    for (auto [K, N] : std::vector<std::pair<int64_t, int64_t>>{
             {80, 240}, {7, 1}, {33, 5}, {300, 96}, {600, 300}, {1000, 300}, {1024, 64}, {2048, 128}}) {
      Generator g(K * 1000 + N);
      Tensor w = init::normal({N, K}, 1.0, g, dt), wkn = init::normal({K, N}, 1.0, g, dt);
      Tensor bias = init::normal({N}, 1.0, g, dt);
      Tensor probe = init::normal({1, K}, 1.0, g, dt);
      const size_t rowBytes = static_cast<size_t>(N) * dtypeSize(dt);
      for (const ProductCase& c : cases()) {
        const Variable W(c.weightNK ? w : wkn), B(bias);
        const Tensor alone = c.f(Variable(probe), W, B).value();
        for (int64_t M : {2, 5, 47, 48, 49, 100, 300, 1001, 2100}) {
          if (K >= 1000 && M > 300) continue;  // the long depths at few rows: enough to see the depth's blocking
          Tensor x = init::normal({M, K}, 1.0, g, dt);
          for (int64_t pos : {int64_t{0}, M / 2, M - 1}) {
            std::memcpy(static_cast<char*>(x.raw()) + pos * K * dtypeSize(dt), probe.raw(),
                        K * dtypeSize(dt));
            const Tensor y = c.f(Variable(x), W, B).value();
            EXPECT_EQ(std::memcmp(static_cast<const char*>(y.raw()) + pos * rowBytes, alone.raw(), rowBytes),
                      0)
                << c.name << " " << dtypeName(dt) << " " << matmulPrecisionName(st.precision) << " K=" << K << " N=" << N << " M=" << M << " row " << pos;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace gnn
