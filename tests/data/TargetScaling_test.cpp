#include "data/TargetScaling.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gnn {
namespace {

Graph labelled(float a, float b, bool bLabelled = true) {
  Graph g;
  g.numNodes = 1;
  g.y = Tensor::fromVector<float>({a, b}, {1, 2});
  g.yMask = Tensor::fromVector<uint8_t>({1, static_cast<uint8_t>(bLabelled ? 1 : 0)}, {1, 2});
  return g;
}

TEST(TargetScaling, FitsTheTrainingPositionsLabelledValuesOnly) {
  InMemoryDataset ds({labelled(1, 5), labelled(3, 5), labelled(100, 100), labelled(5, 0, false)});
  TargetScaling s = TargetScaling::fit(ds, {0, 1, 3}, 2);
  ASSERT_TRUE(s.enabled());
  EXPECT_DOUBLE_EQ(s.mean[0], 3.0);
  EXPECT_DOUBLE_EQ(s.std[0], std::sqrt(8.0 / 3.0));
  EXPECT_DOUBLE_EQ(s.mean[1], 5.0);
  EXPECT_DOUBLE_EQ(s.std[1], 1.0);  // constant: std 1
  const Tensor y = Tensor::fromVector<float>({3.0f, 7.0f}, {1, 2});
  const Tensor z = s.standardize(y);
  EXPECT_FLOAT_EQ(z.at(0), 0.0f);
  EXPECT_FLOAT_EQ(z.at(1), 2.0f);
  EXPECT_TRUE(s.restore(z).bitEqual(y));
}

TEST(TargetScaling, JsonRoundTripAndRefusals) {
  TargetScaling s;
  s.mean = {1.5, -2.0};
  s.std = {0.25, 3.0};
  const TargetScaling back = TargetScaling::fromJson(s.toJson());
  EXPECT_EQ(back.mean, s.mean);
  EXPECT_EQ(back.std, s.std);
  EXPECT_TRUE(TargetScaling::identity().toJson().is_null());
  EXPECT_FALSE(TargetScaling::fromJson(nullptr).enabled());
  EXPECT_THROW(TargetScaling::fromJson({{"mean", {1.0}}, {"std", {1.0, 2.0}}}), std::runtime_error);
  EXPECT_THROW(TargetScaling::fromJson({{"mean", {1.0}}, {"std", {0.0}}}), std::runtime_error);
}

}  // namespace
}  // namespace gnn
