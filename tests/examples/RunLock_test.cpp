// One run per --checkpoint-dir, and --resume continuing only the command that wrote the checkpoints: a second
// run on a held folder is refused naming the holder (and takes the folder over once the holder was killed);
// --resume with another --lr is refused naming both values while --load may change it; a new run is refused a
// folder that already holds checkpoints; build_dataset refuses an output another build is writing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "RunProgram.h"
#include "ScratchFolder.h"
#include "gnn/io/Checkpoint.h"
#include "gnn/system/FolderLock.h"

namespace {
namespace fs = std::filesystem;
using Result = gnn::testing::ProgramResult;
using gnn::testing::expectUsageError;
using gnn::testing::runExample;

const std::string kBin = std::string(GNN_BINARY_DIR) + "/examples/";
// A few seconds per epoch at most: the checks are about the folder, not the training.
const std::string kArgs = "--limit 300 --layers 1 --hidden 16 --threads 1 --quiet";

class RunLock : public gnn::testing::ScratchFolderTest {
 protected:
};

// The pid a lock file names, once its holder has written it (0 when it did not within 60 s).
long long holderPid(const fs::path& lockFile, pid_t alive) {
  for (int i = 0; i < 600 && kill(alive, 0) == 0; ++i) {
    std::ifstream in(lockFile);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("pid")) return j["pid"].get<long long>();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return 0;
}

TEST_F(RunLock, ASecondRunOnAHeldFolderIsRefusedNamingTheHolderAndTakesOverOnceItWasKilled) {
  const std::string ck = path("ck");
  const std::string cmd = kBin + "molecule_property " + kArgs + " --epochs 1000 --checkpoint-dir " + ck +
                          " --resume > " + path("first.txt") + " 2>&1";
  const pid_t first = fork();
  if (first == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(first, 0);
  const long long holder = holderPid(fs::path(ck) / ".gnn-lock", first);
  EXPECT_EQ(holder, static_cast<long long>(first));
  // Another command on the same folder (here another --lr): refused before any work, the holder named.
  Result second = runExample("molecule_property", kArgs + " --epochs 2 --lr 0.01 --checkpoint-dir " + ck + " --resume");
  expectUsageError(second, "--checkpoint-dir " + ck + " is in use by pid " + std::to_string(first) + " on host ");
  EXPECT_NE(second.out.find("(command: " + kBin + "molecule_property " + kArgs + " --epochs 1000"), std::string::npos)
      << second.out;
  EXPECT_NE(second.out.find("wait for it to end or use another --checkpoint-dir"), std::string::npos) << second.out;
  kill(first, SIGKILL);
  int status = 0;
  waitpid(first, &status, 0);
  // The lock died with its holder (its file stays, naming it): once the killed run's checkpoints are removed, a
  // new run takes the folder, saying whose lock it took over, and removes the lock file as it ends.
  ASSERT_TRUE(fs::exists(fs::path(ck) / ".gnn-lock"));
  for (const auto& e : fs::directory_iterator(ck))
    if (e.path().extension() == ".ckpt") fs::remove(e.path());
  Result again = runExample("molecule_property", "--limit 300 --layers 1 --hidden 16 --threads 1 --epochs 1 "
                                                 "--checkpoint-dir " + ck);
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find("took over the lock of pid " + std::to_string(first)), std::string::npos) << again.out;
  EXPECT_FALSE(fs::exists(fs::path(ck) / ".gnn-lock")) << "the lock file stays after the run";
}

TEST_F(RunLock, ResumeRefusesOtherTrainingFlagsAndLoadAcceptsThem) {
  const std::string ck = path("ck");
  Result first = runExample("molecule_property", kArgs + " --epochs 1 --checkpoint-dir " + ck);
  ASSERT_EQ(first.code, 0) << first.out;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(ck)) files.push_back(e.path().string());
  ASSERT_EQ(files.size(), 1u) << "one checkpoint and no lock file after the run";
  const std::string written = files[0];
  const gnn::Checkpoint c1 = gnn::Checkpoint::load(written);
  ASSERT_TRUE(c1.meta.contains("run")) << c1.meta.dump();
  const std::string id = c1.meta["run"]["id"].get<std::string>();
  EXPECT_EQ(id.size(), 16u);
  EXPECT_EQ(c1.meta["run"]["training"]["lr"].get<double>(), 1e-3);
  EXPECT_EQ(c1.meta["run"]["training"]["epochs"].get<int64_t>(), 1);

  // --resume with another --lr (and --epochs): refused naming each flag with both values.
  Result other = runExample("molecule_property", kArgs + " --epochs 2 --lr 0.01 --checkpoint-dir " + ck + " --resume");
  expectUsageError(other, "--resume: " + written + " belongs to run " + id + ", trained with ");
  EXPECT_NE(other.out.find("--lr 0.001 (this command: 0.01)"), std::string::npos) << other.out;
  EXPECT_NE(other.out.find("--epochs 1 (this command: 2)"), std::string::npos) << other.out;
  EXPECT_NE(other.out.find("--resume continues the same command: to continue that run with other flags use --load " +
                           written + ", or use another --checkpoint-dir"),
            std::string::npos)
      << other.out;
  EXPECT_EQ(other.out.find("--optimizer"), std::string::npos) << "only the flags that differ: " << other.out;

  // --load may change them; its checkpoints keep the run's id and record the new flags, so the same command
  // then resumes.
  Result loaded =
      runExample("molecule_property", kArgs + " --epochs 2 --lr 0.01 --load " + written + " --checkpoint-dir " + ck);
  ASSERT_EQ(loaded.code, 0) << loaded.out;
  std::vector<std::string> after;
  for (const auto& e : fs::directory_iterator(ck)) after.push_back(e.path().string());
  std::sort(after.begin(), after.end());
  ASSERT_EQ(after.size(), 2u);
  const gnn::Checkpoint c2 = gnn::Checkpoint::load(after.back());
  EXPECT_EQ(c2.meta["run"]["id"], id);
  EXPECT_EQ(c2.meta["run"]["training"]["lr"].get<double>(), 0.01);
  Result resumed = runExample("molecule_property", kArgs + " --epochs 2 --lr 0.01 --checkpoint-dir " + ck + " --resume");
  EXPECT_EQ(resumed.code, 0) << resumed.out;

  // A checkpoint from before runs were named (no "run") is continued as before, whatever the flags.
  gnn::Checkpoint old = gnn::Checkpoint::load(after.back());
  old.meta.erase("run");
  old.save(after.back());
  Result unnamed = runExample("molecule_property", kArgs + " --epochs 3 --lr 0.02 --checkpoint-dir " + ck + " --resume");
  EXPECT_EQ(unnamed.code, 0) << unnamed.out;
}

TEST_F(RunLock, ANewRunIsRefusedAFolderHoldingCheckpoints) {
  const std::string ck = path("ck");
  ASSERT_EQ(runExample("molecule_property", kArgs + " --epochs 1 --checkpoint-dir " + ck).code, 0);
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(ck)) files.push_back(e.path().string());
  ASSERT_EQ(files.size(), 1u);
  Result fresh = runExample("molecule_property", kArgs + " --epochs 1 --checkpoint-dir " + ck);
  expectUsageError(fresh, "--checkpoint-dir " + ck + " holds the checkpoints of an earlier run (newest " + files[0] +
                              ") that a new run would replace; add --resume to continue that run, or remove them or "
                              "choose another folder");
  EXPECT_TRUE(fs::exists(files[0]));
  // The same on cora_gcn (the flags are shared): and an empty folder is fine.
  const std::string empty = path("empty");
  fs::create_directories(empty);
  EXPECT_EQ(runExample("cora_gcn", "--epochs 1 --quiet --checkpoint-dir " + empty).code, 0);
  expectUsageError(runExample("cora_gcn", "--epochs 1 --quiet --checkpoint-dir " + empty), "holds the checkpoints");
}

TEST_F(RunLock, BuildDatasetRefusesAnOutputAnotherBuildIsWriting) {
  std::ofstream(dir_ / "m.smi") << "CCO\nCCN\n";
  const std::string out = path("m.npz");
  {
    // This process stands for the other build: it holds the output's lock.
    gnn::FolderLock held = gnn::FolderLock::forFile(out, "--out");
    Result r = gnn::testing::runProgram(kBin + "build_dataset --input " + path("m.smi") + " --no-progress --out " + out +
                                        " --resume");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("--out " + out + " is in use by pid " + std::to_string(getpid())), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(out + ".resume"));
  }
  Result r = gnn::testing::runProgram(kBin + "build_dataset --input " + path("m.smi") + " --no-progress --out " + out);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".lock"));
}

}  // namespace
