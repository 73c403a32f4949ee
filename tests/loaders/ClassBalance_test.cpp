// Class balance (--class-balance): the sampler yields as many positives as negatives per epoch in Chemprop's
// alternation, draws the larger class anew each epoch, and a fixed-size loader that keeps the sampler order
// (pad, stream) hands out batches whose classes differ by at most one.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "SyntheticGraphs.h"
#include "loaders/EpochSampler.h"
#include "loaders/FixedSizeDataLoader.h"

namespace gnn {
namespace {

// 30 items, 7 positives at scattered positions.
std::vector<uint8_t> marks() {
  std::vector<uint8_t> m(30, 0);
  for (int i : {2, 3, 11, 17, 20, 26, 29}) m[static_cast<size_t>(i)] = 1;
  return m;
}

TEST(ClassBalance, EachEpochAlternatesAsManyPositivesAsNegatives) {
  const std::vector<uint8_t> positive = marks();
  const EpochSampler s(30, /*shuffle=*/true, 5, positive);
  EXPECT_TRUE(s.balanced());
  EXPECT_EQ(s.epochSize(), 14);  // 2 min(7, 23)
  std::set<int64_t> negativesSeen;
  for (int64_t epoch = 0; epoch < 4; ++epoch) {
    const std::vector<int64_t> o = s.order(epoch);
    ASSERT_EQ(o.size(), 14u);
    // Positive, negative, positive, ...: every prefix of even length is balanced.
    for (size_t k = 0; k < o.size(); ++k)
      EXPECT_EQ(positive[static_cast<size_t>(o[k])], k % 2 == 0 ? 1 : 0) << k;
    // Each item at most once; every positive (the smaller class) every epoch.
    EXPECT_EQ(std::set<int64_t>(o.begin(), o.end()).size(), o.size());
    for (size_t k = 1; k < o.size(); k += 2) negativesSeen.insert(o[k]);
    EXPECT_EQ(s.order(epoch), o);  // (seed, epoch) alone decides it
  }
  // The larger class is drawn anew: four epochs of 7 negatives reach more than 7 of the 23.
  EXPECT_GT(negativesSeen.size(), 7u);
  EXPECT_NE(s.order(0), EpochSampler(30, true, 6, positive).order(0));
}

TEST(ClassBalance, UnshuffledTakesTheFirstOfEachClassInOrder) {
  // Chemprop without shuffle: zip(positives, negatives) in index order.
  const std::vector<int64_t> o = EpochSampler(30, /*shuffle=*/false, 0, marks()).order(3);
  EXPECT_EQ(o, (std::vector<int64_t>{2, 0, 3, 1, 11, 4, 17, 5, 20, 6, 26, 7, 29, 8}));
  // More positives than negatives: the negatives bound the epoch.
  std::vector<uint8_t> mostly(10, 1);
  mostly[4] = mostly[7] = 0;
  EXPECT_EQ(EpochSampler(10, false, 0, mostly).order(0), (std::vector<int64_t>{0, 4, 1, 7}));
  EXPECT_FALSE(EpochSampler(10, false, 0).balanced());
  EXPECT_EQ(EpochSampler(10, false, 0).epochSize(), 10);
  EXPECT_THROW(EpochSampler(10, false, 0, std::vector<uint8_t>(9, 1)), std::invalid_argument);
}

TEST(ClassBalance, LoaderBatchesKeepTheBalanceWithPadAndStream) {
  auto ds = test::randomDataset(30, 3, 2, 9);
  const std::vector<uint8_t> positive = marks();
  for (PackingStrategy strategy :
       {PackingStrategy::PadToMax, PackingStrategy::StreamPack, PackingStrategy::PlannedPack}) {
    FixedSizeDataLoader::Options lo;
    lo.strategy = strategy;
    lo.seed = 11;
    lo.prefetch = 0;
    lo.classBalance = positive;
    const FixedSizeOptions fixed = strategy == PackingStrategy::PadToMax
                                       ? FixedSizeOptions::fromDataset(*ds, 5)
                                       : FixedSizeOptions::forPacking(*ds, 4);
    FixedSizeDataLoader loader(ds, fixed, lo);
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      loader.startEpoch(epoch);
      int64_t pos = 0, neg = 0;
      for (Batch b; loader.next(b);) {
        int64_t p = 0;
        for (int64_t g : b.graphIndex) p += positive[static_cast<size_t>(g)];
        const int64_t n = static_cast<int64_t>(b.graphIndex.size()) - p;
        // pad and stream keep the sampler's alternation in every batch; plan packs by size (balanced per
        // epoch).
        if (strategy != PackingStrategy::PlannedPack) {
          EXPECT_LE(std::abs(p - n), 1) << epoch;
        }
        pos += p;
        neg += n;
      }
      EXPECT_EQ(pos, 7);
      EXPECT_EQ(neg, 7);
    }
  }
}

}  // namespace
}  // namespace gnn
