// FolderLock: a folder held by another process is refused with the holder named; a holder killed with SIGKILL
// leaves a lock the next process takes over (and reports); release removes the file; processes racing for the
// lock never hold it together.
#include "gnn/system/FolderLock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace gnn {
namespace {
namespace fs = std::filesystem;

class FolderLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gnn_folder_lock_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// A child process that takes the lock of `folder`, says so on a pipe and waits to be killed.
pid_t holdInChild(const std::string& folder) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(ready[0]);
    try {
      FolderLock lock = FolderLock::acquire(folder, "--checkpoint-dir");
      const char ok = 'y';
      if (write(ready[1], &ok, 1) != 1) _exit(3);
      for (;;) pause();
    } catch (...) {
      _exit(2);
    }
  }
  close(ready[1]);
  char c = 0;
  const bool held = read(ready[0], &c, 1) == 1 && c == 'y';
  close(ready[0]);
  if (!held) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return -1;
  }
  return pid;
}

std::string hostName() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

TEST_F(FolderLockTest, HeldByAnotherProcessIsRefusedNamingTheHolder) {
  const pid_t holder = holdInChild(dir_.string());
  ASSERT_GT(holder, 0);
  try {
    FolderLock lock = FolderLock::acquire(dir_.string(), "--checkpoint-dir");
    ADD_FAILURE() << "took a lock pid " << holder << " holds";
  } catch (const FolderInUse& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("--checkpoint-dir " + dir_.string() + " is in use by pid " + std::to_string(holder) +
                       " on host " + hostName() + " (command: "),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("gnn_tests"), std::string::npos) << msg;  // the holder's command line
    EXPECT_NE(msg.find("), started 20"), std::string::npos) << msg;
    EXPECT_NE(msg.find("; wait for it to end or use another --checkpoint-dir"), std::string::npos) << msg;
  }
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
}

TEST_F(FolderLockTest, AKilledHoldersLockIsTakenOverAndReported) {
  const pid_t holder = holdInChild(dir_.string());
  ASSERT_GT(holder, 0);
  kill(holder, SIGKILL);  // no destructor runs: the file stays, naming the holder
  waitpid(holder, nullptr, 0);
  ASSERT_TRUE(fs::exists(dir_ / ".gnn-lock"));
  std::ostringstream report;
  FolderLock lock = FolderLock::acquire(dir_.string(), "--checkpoint-dir", &report);
  EXPECT_EQ(report.str(), "--checkpoint-dir " + dir_.string() + ": took over the lock of pid " +
                              std::to_string(holder) + " on host " + hostName() + " (no longer running)\n");
  // The file now names this process.
  std::ifstream in(lock.path());
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["pid"].get<long long>(), static_cast<long long>(getpid()));
  EXPECT_EQ(j["host"], hostName());
}

TEST_F(FolderLockTest, ReleaseRemovesTheFileAndALockFileNamingNobodyIsTakenQuietly) {
  const fs::path file = dir_ / ".gnn-lock";
  {
    FolderLock lock = FolderLock::acquire(dir_.string(), "--checkpoint-dir");
    EXPECT_EQ(lock.path(), file.string());
    ASSERT_TRUE(fs::exists(file));
    FolderLock moved = std::move(lock);  // the moved-from lock releases nothing
    EXPECT_TRUE(fs::exists(file));
  }
  EXPECT_FALSE(fs::exists(file));
  // A file cut short (a holder killed while writing its name): nothing to report.
  std::ofstream(file) << "{\"pid\": 12";
  std::ostringstream report;
  {
    FolderLock lock = FolderLock::acquire(dir_.string(), "--checkpoint-dir", &report);
    EXPECT_EQ(report.str(), "");
  }
  EXPECT_FALSE(fs::exists(file));
  // An output file's lock sits next to it.
  const std::string out = (dir_ / "data.npz").string();
  {
    FolderLock lock = FolderLock::forFile(out, "--out");
    EXPECT_EQ(lock.path(), out + ".lock");
    EXPECT_TRUE(fs::exists(out + ".lock"));
    EXPECT_THROW(FolderLock::forFile(out, "--out"), FolderInUse);  // another open file: refused as well
  }
  EXPECT_FALSE(fs::exists(out + ".lock"));
}

TEST_F(FolderLockTest, RacingProcessesNeverHoldItTogether) {
  // Each process takes and releases the lock in a loop; while it holds it, it owns a marker file created with
  // O_EXCL. Two holders at once (one of them on a lock file already unlinked by a release) would find the
  // marker there. That race needs a release to fall between an acquirer's open and its flock: with 8
  // processes of 1000 rounds most runs catch an acquirer that skips the check that the path still names its file.
  const std::string marker = (dir_ / "inside").string(), count = (dir_ / "count").string();
  constexpr int kProcesses = 8, kRounds = 1000;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    if (pid == 0) {
      for (int i = 0; i < kRounds; ++i) {
        try {
          FolderLock lock = FolderLock::acquire(dir_.string(), "--checkpoint-dir");
          const int fd = open(marker.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
          if (fd < 0) _exit(1);  // someone else holds it too
          close(fd);
          const int c = open(count.c_str(), O_CREAT | O_APPEND | O_WRONLY, 0644);
          if (c < 0 || write(c, "x", 1) != 1) _exit(2);
          close(c);
          unlink(marker.c_str());
        } catch (const FolderInUse&) {
        } catch (...) {
          _exit(2);
        }
      }
      _exit(0);
    }
    ASSERT_GT(pid, 0);
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: two holders at once; 2: an error";
  }
  EXPECT_GT(fs::file_size(count), 0u);  // the lock was taken, not refused every time
  EXPECT_FALSE(fs::exists(dir_ / ".gnn-lock"));
}

}  // namespace
}  // namespace gnn
