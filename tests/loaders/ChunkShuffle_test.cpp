// ChunkShuffle: shuffled chunks of consecutive items, shuffled within windows of chunks; the loaders' order
// without chunks is unchanged; and the quality of the shuffle against a full one, on the shipped PCQM4Mv2-style
// gaps in file order (docs/loaders.md quotes the figures these tests print).
#include "loaders/ChunkShuffle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>

#include "data/GzLineReader.h"
#include "loaders/EpochSampler.h"
#include "loaders/FixedSizeDataLoader.h"
#include "loaders/SyntheticGraphs.h"

namespace gnn {
namespace {

TEST(ChunkShuffle, EveryEpochIsAPermutationMadeOfWholeChunksPerWindow) {
  const ChunkShuffle cs{100, 4};
  for (int64_t n : {1, 99, 100, 1000, 1234}) {
    Generator g(5);
    const ChunkShuffle::Epoch e = cs.plan(n, g);
    std::vector<int64_t> sorted = e.order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> all(static_cast<size_t>(n));
    std::iota(all.begin(), all.end(), int64_t{0});
    ASSERT_EQ(sorted, all) << n;
    ASSERT_EQ(static_cast<int64_t>(e.chunks.size()), cs.numChunks(n));
    ASSERT_EQ(e.windowStarts.back(), n);
    for (size_t w = 0; w + 1 < e.windowStarts.size(); ++w) {
      // The window's items are exactly its chunks' items.
      std::set<int64_t> items(e.order.begin() + e.windowStarts[w], e.order.begin() + e.windowStarts[w + 1]), fromChunks;
      for (int64_t c : e.windowChunks(w))
        for (int64_t i = cs.chunkBegin(c); i < cs.chunkEnd(c, n); ++i) fromChunks.insert(i);
      ASSERT_EQ(items, fromChunks) << "n " << n << " window " << w;
      for (int64_t p = e.windowStarts[w]; p < e.windowStarts[w + 1]; ++p) ASSERT_EQ(e.windowOf(p), w);
    }
  }
}

TEST(ChunkShuffle, OrderDependsOnSeedAndEpochOnly) {
  EpochSampler a(5000, true, 7), b(5000, true, 7), c(5000, true, 8);
  for (EpochSampler* s : {&a, &b, &c}) s->setChunks(ChunkShuffle{256, 4});
  EXPECT_EQ(a.order(3), b.order(3));
  EXPECT_EQ(a.order(3), a.chunkEpoch(3).order);
  EXPECT_NE(a.order(3), a.order(4));
  EXPECT_NE(a.order(3), c.order(3));
  // Unshuffled: the file's order.
  EpochSampler u(5000, false, 7);
  u.setChunks(ChunkShuffle{256, 4});
  std::vector<int64_t> identity(5000);
  std::iota(identity.begin(), identity.end(), int64_t{0});
  EXPECT_EQ(u.order(2), identity);
  EXPECT_THROW((ChunkShuffle{0, 1}.plan(10, *std::make_unique<Generator>(1))), std::invalid_argument);
}

// Without chunks the order is the Fisher-Yates shuffle it always was (runs and checkpoints repeat bit for bit).
TEST(ChunkShuffle, WithoutChunksTheOrderIsTheFullShuffleAsBefore) {
  const EpochSampler s(3000, true, 11);
  for (int64_t epoch : {0, 5}) {
    std::vector<int64_t> expected(3000);
    std::iota(expected.begin(), expected.end(), int64_t{0});
    Generator g = s.generator(epoch, 0);
    shuffleInPlace(expected, g);
    EXPECT_EQ(s.order(epoch), expected);
  }
}

// The shipped PCQM4Mv2-style gaps in file order, repeated to n items (as bench/molecule_scale.py repeats them).
std::vector<double> shippedGaps(size_t n) {
  GzLineReader r(std::string(GNN_SOURCE_DIR) + "/examples/data/pcqm4mv2_style/raw/data.csv.gz");
  std::string_view line;
  std::vector<double> gaps;
  r.next(line);  // header
  while (r.next(line)) {
    const std::string gap(line.substr(line.rfind(',') + 1));
    if (!gap.empty()) gaps.push_back(std::stod(gap));  // test molecules have no gap (as in PCQM4Mv2)
  }
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = gaps[i % gaps.size()];
  return out;
}

struct Quality {
  double positionCorrelation;  // Pearson correlation of (position in the epoch, item index)
  double batchMeanVariance;    // variance of the label means of consecutive batches of 64
};

Quality quality(const std::vector<int64_t>& order, const std::vector<double>& label) {
  const double n = static_cast<double>(order.size());
  double sp = 0, si = 0, spp = 0, sii = 0, spi = 0;
  for (size_t p = 0; p < order.size(); ++p) {
    const double x = static_cast<double>(p), y = static_cast<double>(order[p]);
    sp += x, si += y, spp += x * x, sii += y * y, spi += x * y;
  }
  const double cov = spi / n - sp / n * si / n;
  const double corr = cov / std::sqrt((spp / n - sp * sp / n / n) * (sii / n - si * si / n / n));
  std::vector<double> means;
  for (size_t b = 0; b + 64 <= order.size(); b += 64) {
    double s = 0;
    for (size_t k = b; k < b + 64; ++k) s += label[static_cast<size_t>(order[k])];
    means.push_back(s / 64);
  }
  const double m = std::accumulate(means.begin(), means.end(), 0.0) / static_cast<double>(means.size());
  double v = 0;
  for (double x : means) v += (x - m) * (x - m);
  return {corr, v / static_cast<double>(means.size() - 1)};
}

// Quality against a full shuffle, averaged over epochs: an item's place in the epoch tells nothing of its place in
// the file, and batches of 64 have label means as spread as a full shuffle's (a chunk's molecules are alike: the
// shipped set lists related molecules together, so chunks alone, window 1, would spread them more).
TEST(ChunkShuffle, ShufflesAsWellAsAFullShuffleOnPcqmGapsInFileOrder) {
  const int64_t n = 1000000;
  const std::vector<double> gaps = shippedGaps(static_cast<size_t>(n));
  std::vector<double> sortedGaps = gaps;
  std::sort(sortedGaps.begin(), sortedGaps.end());
  auto measure = [&](ChunkShuffle cs, const std::vector<double>& labels) {
    EpochSampler s(n, true, 1);
    if (cs.enabled()) s.setChunks(cs);
    Quality q{0, 0};
    const int epochs = 4;
    for (int64_t e = 0; e < epochs; ++e) {
      const Quality one = quality(s.order(e), labels);
      q.positionCorrelation = std::max(q.positionCorrelation, std::fabs(one.positionCorrelation));
      q.batchMeanVariance += one.batchMeanVariance / epochs;
    }
    return q;
  };
  const Quality full = measure({}, gaps), chunks = measure({1024, 64}, gaps), window1 = measure({1024, 1}, gaps);
  const Quality window16 = measure({1024, 16}, gaps), window32 = measure({1024, 32}, gaps);
  const Quality fullSorted = measure({}, sortedGaps), chunksSorted = measure({1024, 64}, sortedGaps);
  const double ratio = chunks.batchMeanVariance / full.batchMeanVariance;
  std::printf("full shuffle: |corr| %.4f, batch-mean variance %.5f; chunks 1024 x 64: |corr| %.4f, variance %.5f "
              "(%.3fx); 1024 x 1: %.3fx, 1024 x 16: %.3fx, 1024 x 32: %.3fx; labels sorted: 1024 x 64 %.3fx\n",
              full.positionCorrelation, full.batchMeanVariance, chunks.positionCorrelation, chunks.batchMeanVariance,
              ratio, window1.batchMeanVariance / full.batchMeanVariance,
              window16.batchMeanVariance / full.batchMeanVariance, window32.batchMeanVariance / full.batchMeanVariance,
              chunksSorted.batchMeanVariance / fullSorted.batchMeanVariance);
  // 977 chunks in random order: the correlation of a random permutation of that many is about 1 / sqrt(977).
  EXPECT_LT(full.positionCorrelation, 0.01);
  EXPECT_LT(chunks.positionCorrelation, 0.1);  // ~0.03
  EXPECT_GT(ratio, 0.95);
  EXPECT_LT(ratio, 1.08);  // 1.05
  // The measure can fail: with labels sorted in the file, chunks of a window are far apart in label, and the
  // batch means spread more than a full shuffle's.
  EXPECT_GT(chunksSorted.batchMeanVariance / fullSorted.batchMeanVariance, 1.5);
  EXPECT_GT(window1.batchMeanVariance / full.batchMeanVariance, 2.0);
}

// A loader with chunks collates its batches in the chunk epoch's order, the same with and without prefetch.
TEST(ChunkShuffle, LoaderBatchesFollowTheChunkOrder) {
  auto ds = test::randomDataset(3000, 4, 1, 12);
  FixedSizeDataLoader::Options lo;
  lo.strategy = PackingStrategy::PadToMax;
  lo.seed = 9;
  lo.chunks = ChunkShuffle{128, 3};
  const FixedSizeOptions fixed = FixedSizeOptions::fromDataset(*ds, 33);
  FixedSizeDataLoader a(ds, fixed, lo);
  lo.prefetch = 0;
  FixedSizeDataLoader b(ds, fixed, lo);
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    a.startEpoch(epoch);
    b.startEpoch(epoch);
    std::vector<int64_t> seen;
    Batch x, y;
    while (a.next(x)) {
      ASSERT_TRUE(b.next(y));
      ASSERT_TRUE(x.x.bitEqual(y.x));
      for (int64_t g : x.graphIndex)
        if (g >= 0 && g < 3000) seen.push_back(g);
    }
    EXPECT_EQ(seen, a.chunkEpoch().order) << "epoch " << epoch;
  }
}

}  // namespace
}  // namespace gnn
