#include "app/CheckpointDir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace gnn::app {
namespace {
namespace fs = std::filesystem;

TEST(CheckpointDir, KeepsTheNewestAndFindsTheNewestValid) {
  const fs::path dir = fs::temp_directory_path() / ("gnn_ckdir_" + std::to_string(getpid()));
  fs::create_directories(dir);
  CheckpointDir d(dir.string(), 2);
  for (int64_t step : {5, 12, 9, 30}) {
    Checkpoint ck;
    ck.meta["step"] = step;
    d.write(ck, step);
  }
  std::vector<std::string> files = d.files();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_NE(files[0].find("ckpt-000000000030.ckpt"), std::string::npos);
  EXPECT_NE(files[1].find("ckpt-000000000012.ckpt"), std::string::npos);
  fs::resize_file(files[0], fs::file_size(files[0]) - 3);  // the newest is truncated
  std::ostringstream report;
  auto found = d.newestValid(report);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->checkpoint.meta["step"], 12);
  EXPECT_NE(report.str().find("ckpt-000000000030.ckpt: cannot be used"), std::string::npos) << report.str();
  fs::remove_all(dir);
}

TEST(CheckpointDir, RemovesOnlyOurOwnStaleTemporaries) {
  const fs::path dir = fs::temp_directory_path() / ("gnn_stale_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(2);
  // PID 999999999 exceeds pid_max: no process has it.
  const std::vector<std::string> ours = {"run.ckpt.tmp.999999999", "d.npz.tmp-999999999", "d.npz.tmp-999999999.3.0",
                                         "p.csv.tmp-999999999", "l.jsonl.tmp-999999999"};
  const std::vector<std::string> kept = {"results.tmp-2023.csv", "notes.tmp-1", "run.ckpt",
                                         "live.ckpt.tmp." + std::to_string(getpid())};
  for (const auto& n : ours) std::ofstream(dir / n) << "x";
  for (const auto& n : kept) std::ofstream(dir / n) << "x";
  for (const auto& e : fs::directory_iterator(dir)) fs::last_write_time(e.path(), old);
  std::ofstream(dir / "young.ckpt.tmp.999999998") << "x";  // too recent: left alone
  EXPECT_EQ(CheckpointDir::removeStaleTemporaries(dir.string()), static_cast<int>(ours.size()));
  for (const auto& n : ours) EXPECT_FALSE(fs::exists(dir / n)) << n;
  for (const auto& n : kept) EXPECT_TRUE(fs::exists(dir / n)) << n;
  EXPECT_TRUE(fs::exists(dir / "young.ckpt.tmp.999999998"));
  fs::remove_all(dir);
}

// A writer holding the output's lock: the output's temporaries of a process that is gone go at once (one killed
// while writing, seconds ago); a live process's, another output's and the output itself stay.
TEST(CheckpointDir, RemovesAKilledWritersFreshTemporariesOfTheLockedOutput) {
  const fs::path dir = fs::temp_directory_path() / ("gnn_own_tmp_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "hiv.npz").string();
  auto touch = [&](const std::string& name) { std::ofstream(dir / name) << "x"; };
  const std::string gone = "999999999";  // above pid_max: no process has it
  const std::string alive = std::to_string(getpid());
  const std::vector<std::string> kept{"hiv.npz", "hiv.npz.tmp-" + alive, "other.npz.tmp-" + gone, "hiv.npz.tmp-12x"};
  for (const std::string& name : kept) touch(name);
  touch("hiv.npz.tmp-" + gone);
  touch("hiv.npz.tmp-" + gone + ".3.1");
  EXPECT_EQ(CheckpointDir::removeTemporariesOf(out), 2);
  EXPECT_FALSE(fs::exists(dir / ("hiv.npz.tmp-" + gone)));
  EXPECT_FALSE(fs::exists(dir / ("hiv.npz.tmp-" + gone + ".3.1")));
  for (const std::string& name : kept) EXPECT_TRUE(fs::exists(dir / name)) << name;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gnn::app
