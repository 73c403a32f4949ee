// The aggregation modules (gnn/nn/aggr): each reduction against a hand computation with an empty destination,
// finite-difference gradients, and the names PyG gives them.
#include <gtest/gtest.h>

#include "GradCheck.h"
#include "gnn/nn/aggr/MaxAggregation.h"
#include "gnn/nn/aggr/MeanAggregation.h"
#include "gnn/nn/aggr/SumAggregation.h"

namespace gnn {
namespace {

// Messages 0..4 to destinations 2, 0, 2, 2, 0 of 4 rows: row 1 and row 3 receive nothing.
Tensor index() { return Tensor::fromVector<int64_t>({2, 0, 2, 2, 0}, {5}); }
Tensor messages() { return Tensor::fromVector<double>({1, -1, 2, 5, -3, 0, 4, 4, 0.5, 7}, {5, 2}); }

TEST(Aggregation, ReducesEachDestinationsMessages) {
  const Variable x(messages());
  const Tensor sum = SumAggregation().forward(x, index(), 4).value();
  const Tensor mean = MeanAggregation().forward(x, index(), 4).value();
  const Tensor max = MaxAggregation().forward(x, index(), 4).value();
  // Row 0: messages 1 and 4; row 2: messages 0, 2 and 3.
  const std::vector<double> wantSum = {2.5, 12, 0, 0, 2, 3, 0, 0};
  const std::vector<double> wantMean = {1.25, 6, 0, 0, 2.0 / 3, 1, 0, 0};
  const std::vector<double> wantMax = {2, 7, 0, 0, 4, 4, 0, 0};
  for (int64_t i = 0; i < 8; ++i) {
    EXPECT_DOUBLE_EQ(sum.at(i), wantSum[i]) << i;
    EXPECT_DOUBLE_EQ(mean.at(i), wantMean[i]) << i;
    EXPECT_DOUBLE_EQ(max.at(i), wantMax[i]) << i;
  }
}

TEST(Aggregation, GradientsMatchFiniteDifferences) {
  for (const char* name : {"sum", "mean", "max"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<Aggregation> aggr = aggregationFromName(name);
    testing::expectGradientsMatch([&](const std::vector<Variable>& v) { return aggr->forward(v[0], index(), 4); },
                                  {testing::randomTensor({5, 3}, 11)});
  }
}

TEST(Aggregation, NamedAsPyGNamesThem) {
  EXPECT_STREQ(aggregationFromName("add")->name(), "sum");
  EXPECT_STREQ(aggregationFromName("mean")->name(), "mean");
  EXPECT_STREQ(aggregationFromName("max")->name(), "max");
  EXPECT_THROW(aggregationFromName("softmax"), std::invalid_argument);
  EXPECT_NE(dynamic_cast<MaxAggregation*>(aggregationFromName("max")->clone().get()), nullptr);
}

}  // namespace
}  // namespace gnn
