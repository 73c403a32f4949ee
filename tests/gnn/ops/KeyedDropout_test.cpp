// keyedDropout (gnn/ops/KeyedDropout.h): a row's mask depends on (stream key, row key, column) only, whatever rows
// share the tensor, where the row sits, the thread count or the dtype; the keep rate is 1 - p; the backward is
// the gradient times the mask (finite differences); bad arguments are refused with the sizes named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "GradCheck.h"
#include "gnn/ops/KeyedDropout.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

std::vector<uint64_t> keysOf(int64_t rows, uint64_t group) {
  std::vector<uint64_t> k;
  for (int64_t r = 0; r < rows; ++r) k.push_back(keyedDropoutRow(group, static_cast<uint64_t>(r)));
  return k;
}

TEST(KeyedDropout, RowMaskFollowsItsKeyNotItsPosition) {
  const int64_t cols = 37;  // not a multiple of 4: the last draw is split
  const std::vector<uint64_t> keys = keysOf(50, 7);
  const uint64_t key = keyedDropoutStream(1, 2, 3);
  Tensor all = keyedDropoutMask({50, cols}, DType::F32, 0.3, keys, key);
  // The rows reversed and surrounded by other rows: each keeps its mask bit for bit.
  std::vector<uint64_t> shuffled = keysOf(20, 99);
  for (int64_t r = 49; r >= 0; --r) shuffled.push_back(keys[static_cast<size_t>(r)]);
  Tensor moved = keyedDropoutMask({70, cols}, DType::F32, 0.3, shuffled, key);
  for (int64_t r = 0; r < 50; ++r)
    for (int64_t c = 0; c < cols; ++c)
      ASSERT_EQ(all.matrix<float>()(r, c), moved.matrix<float>()(20 + 49 - r, c)) << "row " << r << " column " << c;
  // float64 masks keep the same elements.
  Tensor wide = keyedDropoutMask({50, cols}, DType::F64, 0.3, keys, key);
  for (int64_t i = 0; i < all.numel(); ++i) ASSERT_EQ(all.at(i) == 0, wide.at(i) == 0) << i;
}

TEST(KeyedDropout, KeepRateAndScale) {
  const double p = 0.25;
  Tensor m = keyedDropoutMask({4000, 64}, DType::F32, p, keysOf(4000, 1), keyedDropoutStream(0, 0, 0));
  int64_t kept = 0;
  for (int64_t i = 0; i < m.numel(); ++i) {
    const double v = m.at(i);
    ASSERT_TRUE(v == 0 || std::abs(v - 1 / (1 - p)) < 1e-6) << v;
    kept += v != 0;
  }
  // 256,000 Bernoulli(0.75) draws: the standard deviation of the rate is 0.00086.
  EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(m.numel()), 1 - p, 0.004);
}

TEST(KeyedDropout, StreamsDifferBySeedSampleAndSite) {
  const std::vector<uint64_t> keys = keysOf(64, 3);
  const Tensor base = keyedDropoutMask({64, 32}, DType::F32, 0.5, keys, keyedDropoutStream(1, 0, 0));
  for (uint64_t key : {keyedDropoutStream(2, 0, 0), keyedDropoutStream(1, 1, 0), keyedDropoutStream(1, 0, 1)}) {
    Tensor other = keyedDropoutMask({64, 32}, DType::F32, 0.5, keys, key);
    int64_t same = 0;
    for (int64_t i = 0; i < base.numel(); ++i) same += (base.at(i) == 0) == (other.at(i) == 0);
    // Independent masks agree on about half of 2,048 elements.
    EXPECT_NEAR(static_cast<double>(same) / 2048.0, 0.5, 0.06);
  }
}

TEST(KeyedDropout, SameBitsForAnyThreadCount) {
  const std::vector<uint64_t> keys = keysOf(3000, 5);
  setNumThreads(1);
  Tensor one = keyedDropoutMask({3000, 96}, DType::F32, 0.1, keys, 42);
  setNumThreads(2);
  Tensor two = keyedDropoutMask({3000, 96}, DType::F32, 0.1, keys, 42);
  setNumThreads(0);
  EXPECT_EQ(std::memcmp(one.raw(), two.raw(), one.nbytes()), 0);
}

TEST(KeyedDropout, GradientMatchesFiniteDifferences) {
  const std::vector<uint64_t> keys = keysOf(6, 11);
  const uint64_t key = keyedDropoutStream(4, 1, 2);
  testing::expectGradientsMatch(
      [&](const std::vector<Variable>& x) { return keyedDropout(x[0], 0.4, keys, key); },
      {testing::randomTensor({6, 5}, 3)});
  // The output is the input times the mask.
  Tensor x = testing::randomTensor({6, 5}, 3);
  Tensor y = keyedDropout(Variable(x), 0.4, keys, key).value();
  Tensor m = keyedDropoutMask({6, 5}, DType::F64, 0.4, keys, key);
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(y.at(i), x.at(i) * m.at(i));
}

TEST(KeyedDropout, RefusesBadArguments) {
  Variable x(Tensor::zeros({4, 3}));
  EXPECT_THROW(keyedDropout(x, 1.0, keysOf(4, 0), 0), std::invalid_argument);
  EXPECT_THROW(keyedDropout(x, -0.1, keysOf(4, 0), 0), std::invalid_argument);
  try {
    keyedDropout(x, 0.5, keysOf(3, 0), 0);
    FAIL() << "3 keys for 4 rows accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("3 row keys"), std::string::npos) << e.what();
  }
  // p = 0: the input itself.
  EXPECT_EQ(keyedDropout(x, 0.0, keysOf(4, 0), 0).value().raw(), x.value().raw());
}

}  // namespace
}  // namespace gnn
