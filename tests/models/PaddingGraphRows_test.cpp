// zeroPaddingGraphRows: padding graphs' rows are exactly 0 whatever they held, real rows keep their bits, the
// gradient reaches real rows only; without a graphsMask the output passes as it is; a mask of another length
// is refused by name.
#include "models/PaddingGraphRows.h"

#include <gtest/gtest.h>

#include "gnn/nn/Init.h"

namespace gnn {
namespace {

Batch masked(const std::vector<uint8_t>& mask) {
  Batch b;
  b.numGraphs = static_cast<int64_t>(mask.size());
  b.graphsMask = Tensor::fromVector(mask);
  return b;
}

TEST(ZeroPaddingGraphRows, PaddingRowsAreZeroRealRowsUntouchedGradientOnlyToRealRows) {
  const Batch b = masked({1, 0, 1, 1, 0});
  for (DType dt : {DType::F32, DType::F64}) {
    Generator g(3);
    Tensor x64 = init::uniform({5, 3}, -2, 2, g, DType::F64);
    // What a head makes of a padding graph: its bias, or a large value; either must come out as 0.
    for (int64_t c = 0; c < 3; ++c) x64.data<double>()[1 * 3 + c] = 1e30, x64.data<double>()[4 * 3 + c] = -0.5;
    Variable x(x64.to(dt), true);
    Variable y = zeroPaddingGraphRows(x, b);
    ASSERT_EQ(y.shape(), (Shape{5, 3}));
    Tensor seed = init::uniform({5, 3}, -1, 1, g, dt);
    y.backward(seed);
    ASSERT_TRUE(x.hasGrad());
    for (int64_t r = 0; r < 5; ++r)
      for (int64_t c = 0; c < 3; ++c) {
        const int64_t i = r * 3 + c;
        if (r == 1 || r == 4) {
          EXPECT_EQ(y.value().at(i), 0.0) << dtypeName(dt) << " padding row " << r;
          EXPECT_EQ(x.grad().at(i), 0.0) << dtypeName(dt) << " gradient of padding row " << r;
        } else {
          EXPECT_EQ(y.value().at(i), x.value().at(i)) << dtypeName(dt) << " real row " << r;
          EXPECT_EQ(x.grad().at(i), seed.at(i)) << dtypeName(dt) << " gradient of real row " << r;
        }
      }
  }
}

TEST(ZeroPaddingGraphRows, WithoutAMaskTheOutputPasses) {
  Generator g(4);
  Variable x(init::uniform({3, 2}, -1, 1, g, DType::F32), true);
  Batch b;
  b.numGraphs = 3;
  Variable y = zeroPaddingGraphRows(x, b);
  EXPECT_TRUE(y.value().bitEqual(x.value()));
  Tensor seed = init::uniform({3, 2}, -1, 1, g, DType::F32);
  y.backward(seed);
  EXPECT_TRUE(x.grad().bitEqual(seed));
}

TEST(ZeroPaddingGraphRows, AMaskOfAnotherLengthIsRefused) {
  Variable x(Tensor::zeros({4, 1}));
  try {
    zeroPaddingGraphRows(x, masked({1, 1, 0}));
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("graphsMask has 3 entries for an output of shape [4, 1]"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gnn
