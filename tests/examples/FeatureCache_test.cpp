// The molecule programs' feature cache (a .npz under the temp folder): reused while intact, rebuilt with a
// note when damaged; a user's own damaged .npz stays an error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "app/MoleculeData.h"
#include "data/NpzDataset.h"

namespace gnn::app {
namespace {
namespace fs = std::filesystem;

std::string bytesOf(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

class FeatureCache : public ::testing::Test {
 protected:
  // The cache goes to $TMPDIR: a fresh folder per test, so no other run's cache is touched or reused.
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gnn_feature_cache_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "tmp");
    if (const char* t = std::getenv("TMPDIR")) oldTmp_ = t, hadTmp_ = true;
    ::setenv("TMPDIR", (dir_ / "tmp").c_str(), 1);
    std::ofstream csv(dir_ / "mols.csv");
    csv << "smiles,y\n";
    const char* smiles[] = {"CCO",     "CCN",  "CCC",  "c1ccccc1", "c1ccccc1O",
                            "CC(=O)O", "CCCl", "CCBr", "CC(C)O",   "C1CCCCC1"};
    for (int i = 0; i < 20; ++i) csv << smiles[i % 10] << (i >= 10 ? "C" : "") << "," << i * 0.5 << "\n";
    options_.path = (dir_ / "mols.csv").string();
    options_.targetColumns = {"y"};
    options_.threads = 1;
    options_.quiet = true;
  }
  void TearDown() override {
    ::unsetenv("GNN_FEATURE_CACHE_MB");
    if (hadTmp_)
      ::setenv("TMPDIR", oldTmp_.c_str(), 1);
    else
      ::unsetenv("TMPDIR");
    fs::remove_all(dir_);
  }

  // Opens the data as a program does; `note` gets what it printed on stderr.
  MoleculeData open(std::string& note) {
    ::testing::internal::CaptureStderr();
    MoleculeData d;
    try {
      d = openMoleculeData(options_);
    } catch (...) {
      note = ::testing::internal::GetCapturedStderr();
      throw;
    }
    note = ::testing::internal::GetCapturedStderr();
    return d;
  }

  // Builds the cache and returns its path and bytes.
  std::pair<std::string, std::string> build() {
    std::string note;
    MoleculeData d = open(note);
    EXPECT_EQ(fs::path(d.npzPath).parent_path(), dir_ / "tmp");
    EXPECT_GT(d.buildSeconds, 0);
    EXPECT_EQ(note, "");
    size_ = d.size;
    return {d.npzPath, bytesOf(d.npzPath)};
  }

  // The next open notices the damage, says so, rebuilds the cache and gives the same dataset.
  void expectRebuilt(const std::string& cache, const std::string& intact, const std::string& reason) {
    EXPECT_THROW(NpzDataset{cache}, std::runtime_error);  // the damage is real
    std::string note;
    MoleculeData d = open(note);
    EXPECT_EQ(d.npzPath, cache);
    EXPECT_NE(note.find("feature cache " + cache + " is damaged ("), std::string::npos) << note;
    EXPECT_NE(note.find(reason), std::string::npos) << note;
    EXPECT_NE(note.find("); rebuilding it\n"), std::string::npos) << note;
    EXPECT_EQ(d.size, size_);
    EXPECT_EQ(d.targetNames, std::vector<std::string>{"y"});
    EXPECT_TRUE(bytesOf(cache) == intact) << "the rebuilt cache differs from the first build";
    EXPECT_EQ(d.dataset->smiles(3), "c1ccccc1");
    // Healed: the run after it reuses the cache silently.
    d = {};
    MoleculeData again = open(note);
    EXPECT_EQ(note, "");
    EXPECT_EQ(again.buildSeconds, 0);
  }

  fs::path dir_;
  std::string oldTmp_;
  bool hadTmp_ = false;
  MoleculeDataOptions options_;
  int64_t size_ = 0;  // molecules of the first build (CCBrC and CCClC are rejected)
};

TEST_F(FeatureCache, AnIntactCacheIsReused) {
  const auto [cache, intact] = build();
  std::string note;
  MoleculeData d = open(note);
  EXPECT_EQ(d.npzPath, cache);
  EXPECT_EQ(d.buildSeconds, 0);
  EXPECT_EQ(note, "");
  EXPECT_TRUE(bytesOf(cache) == intact);
}

TEST_F(FeatureCache, AFlippedByteIsRebuilt) {
  const auto [cache, intact] = build();
  std::string damaged = intact;
  damaged[damaged.size() / 2] ^= 0x5a;
  std::ofstream(cache, std::ios::binary | std::ios::trunc) << damaged;
  expectRebuilt(cache, intact, "bad CRC-32");
}

TEST_F(FeatureCache, ATruncatedCacheIsRebuilt) {
  const auto [cache, intact] = build();
  fs::resize_file(cache, intact.size() / 2);
  expectRebuilt(cache, intact, "end-of-central-directory");
  fs::resize_file(cache, 0);
  expectRebuilt(cache, intact, "too short");
}

TEST_F(FeatureCache, AUsersOwnDamagedNpzIsStillAnError) {
  const auto [cache, intact] = build();
  const std::string own = (dir_ / "own.npz").string();
  std::string damaged = intact;
  damaged[damaged.size() / 2] ^= 0x5a;
  std::ofstream(own, std::ios::binary) << damaged;
  options_.path = own;
  std::string note;
  try {
    open(note);
    FAIL() << "a damaged --data file was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(own + ": "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad CRC-32"), std::string::npos) << e.what();
  }
  EXPECT_EQ(note.find("rebuilding"), std::string::npos) << note;
  EXPECT_TRUE(bytesOf(own) == damaged);  // left as it was
}

// A file of `bytes` bytes last used `hoursAgo` hours ago.
void oldFile(const fs::path& p, uintmax_t bytes, int hoursAgo) {
  std::ofstream(p, std::ios::binary) << std::string(bytes, 'x');
  fs::last_write_time(p, fs::file_time_type::clock::now() - std::chrono::hours(hoursAgo));
}

TEST_F(FeatureCache, ANewCacheRemovesTheLeastRecentlyUsedOthersBeyondTheBound) {
  const fs::path tmp = dir_ / "tmp";
  constexpr uintmax_t kMb = 1 << 20;
  oldFile(tmp / "gnn_molecules_1.npz", 2 * kMb, 30);  // oldest: goes first
  oldFile(tmp / "gnn_molecules_2.npz", 2 * kMb, 20);  // goes too: 2 + 2 MB and the new one exceed 3 MB
  oldFile(tmp / "gnn_molecules_3.npz", 2 * kMb, 10);  // the most recent other: stays
  oldFile(tmp / "gnn_molecules_4.npz.part", 2 * kMb, 40);  // not a cache (another run's file being written)
  oldFile(tmp / "user.npz", 2 * kMb, 50);                   // not a cache
  ::setenv("GNN_FEATURE_CACHE_MB", "3", 1);
  options_.quiet = false;
  std::string note;
  MoleculeData d = open(note);
  EXPECT_GT(d.buildSeconds, 0);
  EXPECT_TRUE(fs::exists(d.npzPath));
  EXPECT_FALSE(fs::exists(tmp / "gnn_molecules_1.npz"));
  EXPECT_FALSE(fs::exists(tmp / "gnn_molecules_2.npz"));
  EXPECT_TRUE(fs::exists(tmp / "gnn_molecules_3.npz"));
  EXPECT_TRUE(fs::exists(tmp / "gnn_molecules_4.npz.part"));
  EXPECT_TRUE(fs::exists(tmp / "user.npz"));
  EXPECT_NE(note.find("removed 2 least recently used feature cache(s) from " + tmp.string() +
                      " to keep them within GNN_FEATURE_CACHE_MB=3"),
            std::string::npos)
      << note;
}

TEST_F(FeatureCache, AReusedCacheCountsAsJustUsedAndIsKeptOverOlderOnes) {
  const auto [cache, intact] = build();
  fs::last_write_time(cache, fs::file_time_type::clock::now() - std::chrono::hours(48));
  std::string note;
  MoleculeData again = open(note);  // reused: marked as used now
  EXPECT_EQ(again.buildSeconds, 0);
  EXPECT_GT(fs::last_write_time(cache), fs::file_time_type::clock::now() - std::chrono::hours(1));
  EXPECT_TRUE(bytesOf(cache) == intact);
  // Another input's new cache with a bound of 0 keeps only itself: the reused one goes, however recent.
  oldFile(dir_ / "tmp" / "gnn_molecules_9.npz", 1024, 1);
  ::setenv("GNN_FEATURE_CACHE_MB", "0", 1);
  options_.limit = 15;
  MoleculeData other = open(note);
  EXPECT_GT(other.buildSeconds, 0);
  EXPECT_TRUE(fs::exists(other.npzPath));
  EXPECT_FALSE(fs::exists(cache));
  EXPECT_FALSE(fs::exists(dir_ / "tmp" / "gnn_molecules_9.npz"));
}

TEST_F(FeatureCache, AMalformedBoundIsRefusedBeforeFeaturising) {
  ::setenv("GNN_FEATURE_CACHE_MB", "4GB", 1);
  std::string note;
  try {
    open(note);
    FAIL() << "GNN_FEATURE_CACHE_MB=4GB was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("GNN_FEATURE_CACHE_MB=4GB: must be a whole number of megabytes"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp")) << "a cache was built";
}

}  // namespace
}  // namespace gnn::app
