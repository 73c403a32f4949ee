// MappedReadAhead: page-cache advice over a mapped NpzDataset changes no bit a loader collates (edge_input
// included, with and without chunks), releases the file's pages from the process (RssFile), and keeps the
// pages held during a chunked epoch to about the windows being read.
#include "data/MappedReadAhead.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "data/MoleculeDatasetBuilder.h"
#include "data/MoleculeTestUtil.h"
#include "gnn/system/ResidentMemory.h"
#include "loaders/BatchFields.h"
#include "loaders/FixedSizeDataLoader.h"

namespace gnn {
namespace {

namespace fs = std::filesystem;

class MappedReadAheadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = testing::tempDir("mapped_read_ahead");
    BuildOptions o;
    o.source.path = testing::moleculeData("pcqm4mv2_style");
    o.graphormerMaxDist = 5;
    o.threads = 2;
    o.outPath = (dir_ / "pcqm.npz").string();
    MoleculeDatasetBuilder(o).run();
    path_ = o.outPath;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static fs::path dir_;
  static std::string path_;
};
fs::path MappedReadAheadTest::dir_;
std::string MappedReadAheadTest::path_;

bool sameBits(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  return !a.defined() || a.bitEqual(b);
}

// Batches as Graphormer trains on them (pad, K = 5, a split's positions), with and without advice, in both
// epoch orders: the same bits.
TEST_F(MappedReadAheadTest, AdviceChangesNoBatchBit) {
  auto ds = std::make_shared<NpzDataset>(path_);
  const std::vector<int64_t> train = ds->split("train");
  auto subset = std::make_shared<Subset>(ds, std::vector<size_t>(train.begin(), train.end()));
  FixedSizeOptions fixed = FixedSizeOptions::fromDataset(*ds, 65);
  for (bool chunked : {false, true}) {
    FixedSizeDataLoader::Options lo;
    lo.strategy = PackingStrategy::PadToMax;
    lo.seed = 2;
    if (chunked) lo.chunks = ChunkShuffle{256, 2};
    FixedSizeDataLoader plain(subset, fixed, lo);
    lo.readAhead = std::make_shared<MappedReadAhead>(ds, train);
    ASSERT_TRUE(lo.readAhead->active());
    FixedSizeDataLoader advised(subset, fixed, lo);
    int64_t batches = 0;
    for (int64_t epoch = 0; epoch < 2; ++epoch) {
      plain.startEpoch(epoch);
      advised.startEpoch(epoch);
      Batch a, b;
      while (plain.next(a)) {
        ASSERT_TRUE(advised.next(b));
        ASSERT_TRUE(a.edgeInput.defined());
        for (const BatchField& f : batchFields()) ASSERT_TRUE(sameBits(a.*f.inBatch, b.*f.inBatch)) << f.name;
        for (const CollatorField& f : collatorFields()) ASSERT_TRUE(sameBits(a.*f.inBatch, b.*f.inBatch)) << f.name;
        ++batches;
      }
      EXPECT_FALSE(advised.next(b));
    }
    EXPECT_GT(batches, 300);
    EXPECT_GT(lo.readAhead->releasedBytes(), 0);
    if (chunked) {
      EXPECT_GT(lo.readAhead->willNeedBytes(), static_cast<int64_t>(fs::file_size(path_) / 2));
    }
  }
}

// The file's pages leave the process: every molecule read brings the file into RssFile, releaseAll() takes it
// out; during a chunked epoch RssFile stays within a few windows of the whole file.
TEST_F(MappedReadAheadTest, ReleasedPagesLeaveTheProcess) {
  auto ds = std::make_shared<NpzDataset>(path_);
  MappedReadAhead ra(ds);
  const double fileMb = static_cast<double>(fs::file_size(path_)) / 1048576.0;
  ra.releaseAll();
  const double base = residentMemory().fileMb;
  ASSERT_GE(base, 0) << "no RssFile in /proc/self/status";
  for (size_t i = 0; i < ds->size(); ++i) ds->get(i);
  const double read = residentMemory().fileMb;
  ra.releaseAll();
  const double released = residentMemory().fileMb;
  std::printf("file %.1f MB; RssFile %.1f MB released, %.1f MB after reading every molecule, %.1f MB released again\n",
              fileMb, base, read, released);
  EXPECT_GT(read - base, 0.6 * fileMb);
  EXPECT_LT(released - base, 0.1 * fileMb);

  FixedSizeDataLoader::Options lo;
  lo.strategy = PackingStrategy::PadToMax;
  lo.chunks = ChunkShuffle{256, 2};
  lo.prefetch = 0;  // advice and collation on this thread, so RssFile can be read between batches
  lo.readAhead = std::make_shared<MappedReadAhead>(ds);
  lo.overSize = OverSizeStrategy::Skip;
  FixedSizeDataLoader loader(ds, FixedSizeOptions::fromDataset(*ds, 65), lo);
  // A first epoch brings the loader's own code in (the program's pages count as RssFile too).
  loader.startEpoch(0);
  for (Batch b; loader.next(b);) {
  }
  loader.startEpoch(1);  // releases what epoch 0 read
  const double start = residentMemory().fileMb;
  double most = 0;
  for (Batch b; loader.next(b);) most = std::max(most, residentMemory().fileMb - start);
  EXPECT_GT(lo.readAhead->releasedBytes(), static_cast<int64_t>(fs::file_size(path_) / 2));
  // A window of 512 molecules is about 0.5 MB of the file; two windows at once, and whole pages at the ends of
  // each chunk's range in every array.
  std::printf("chunked epoch: RssFile at most %.1f MB above the released state\n", most);
  EXPECT_LT(most, 0.35 * fileMb);
}

TEST_F(MappedReadAheadTest, RefusesPositionsOutsideTheDataset) {
  auto ds = std::make_shared<NpzDataset>(path_);
  EXPECT_THROW(MappedReadAhead(ds, {0, static_cast<int64_t>(ds->size())}), std::invalid_argument);
  MappedReadAhead ra(ds, {3, 1, 2});
  ra.willNeed(0, 3);
  ra.release(-5, 100);  // clamped to the items there are
  EXPECT_EQ(ra.size(), 3);
}

}  // namespace
}  // namespace gnn
