// A mapped .npz truncated while it is open ends the program with an error naming it (not a bare SIGBUS); a
// SIGBUS that is not on a guarded mapping behaves as it would without the guard.
#include "data/MappedFileGuard.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "data/NpzFile.h"
#include "data/NpzWriter.h"

namespace gnn {
namespace {
namespace fs = std::filesystem;

// The child of a "threadsafe" death test runs the test again from its start, with its own pid, and dies
// without its TearDown: its files go in a folder inside its parent's (the parent's TearDown removes both), and
// the expected messages match either path.
class MappedFileGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const bool deathTestChild = !GTEST_FLAG_GET(internal_run_death_test).empty();
    dir_ = fs::temp_directory_path() / ("gnn_guard_" + std::to_string(deathTestChild ? ::getppid() : ::getpid()));
    if (deathTestChild) dir_ /= "child_" + std::to_string(::getpid());
    fs::create_directories(dir_);
    NpzWriter w(npz());
    const int a = w.addArray("a", "|u1", 1);
    const std::vector<unsigned char> bytes(1 << 20, 7);  // 256 pages: truncation leaves most of them unbacked
    w.append(a, bytes.data(), bytes.size());
    w.finish();
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string npz() const { return (dir_ / "guarded.npz").string(); }
  fs::path dir_;
};

// No core file from the children that are meant to die of SIGBUS.
void noCoreFile() {
  const rlimit none{0, 0};
  ::setrlimit(RLIMIT_CORE, &none);
}

unsigned char touch(const unsigned char* p) {
  return *static_cast<const volatile unsigned char*>(p);
}

TEST_F(MappedFileGuardTest, AnOpenNpzIsGuardedUntilItCloses) {
  const unsigned char* data = nullptr;
  {
    NpzFile f(npz());
    data = f.get("a").data;
    EXPECT_EQ(MappedFileGuard::pathAt(data), npz());
    EXPECT_EQ(MappedFileGuard::pathAt(data + (1 << 20) - 1), npz());
  }
  EXPECT_EQ(MappedFileGuard::pathAt(data), "");
  int local = 0;
  EXPECT_EQ(MappedFileGuard::pathAt(&local), "");
}

TEST_F(MappedFileGuardTest, RefusedFilesGiveTheirSlotBack) {
  // Mapped, then refused (no zip directory): more of them than there are slots, and the good file that
  // follows is still guarded.
  const std::string bad = (dir_ / "bad.npz").string();
  std::ofstream(bad, std::ios::binary) << std::string(4096, 'x');
  for (int i = 0; i < MappedFileGuard::kCapacity + 8; ++i) EXPECT_THROW(NpzFile{bad}, std::runtime_error);
  NpzFile f(npz());
  EXPECT_EQ(MappedFileGuard::pathAt(f.get("a").data), npz());
}

TEST_F(MappedFileGuardTest, GuardsFreeTheirSlotsAndMove) {
  static const char bytes[64] = {};
  std::vector<MappedFileGuard> guards;
  for (int i = 0; i < MappedFileGuard::kCapacity; ++i) guards.emplace_back(bytes, sizeof bytes, "x");
  MappedFileGuard overflow(bytes, sizeof bytes, "y");
  EXPECT_FALSE(overflow.guarding());  // every slot taken: unguarded, not an error
  guards.clear();
  MappedFileGuard a(bytes, sizeof bytes, "z");
  ASSERT_TRUE(a.guarding());
  MappedFileGuard b(std::move(a));
  EXPECT_FALSE(a.guarding());
  EXPECT_EQ(MappedFileGuard::pathAt(bytes + 63), "z");
  b.reset();
  EXPECT_EQ(MappedFileGuard::pathAt(bytes), "");
}

TEST_F(MappedFileGuardTest, TruncatedWhileMappedIsAnErrorNamingTheFile) {
  EXPECT_EXIT(
      {
        noCoreFile();
        NpzFile f(npz());
        const NpzFile::Array& a = f.get("a");
        ASSERT_EQ(::truncate(npz().c_str(), 0), 0);
        touch(a.data + a.bytes / 2);
      },
      ::testing::ExitedWithCode(1),
      "error: .*gnn_guard_[0-9]+/(child_[0-9]+/)?guarded\\.npz changed while in use \\(the file was truncated or overwritten "
      "while "
      "this program read it; do not modify a dataset while a run uses it\\)");
}

// A SIGBUS elsewhere goes to the handler that was there before the first guard.
TEST_F(MappedFileGuardTest, OtherFaultsGoToThePreviousHandler) {
  EXPECT_EXIT(
      {
        struct sigaction sa {};
        sa.sa_flags = SA_SIGINFO;
        sa.sa_sigaction = [](int, siginfo_t*, void*) {
          const char m[] = "previous handler\n";
          (void)!::write(STDERR_FILENO, m, sizeof m - 1);
          ::_exit(3);
        };
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGBUS, &sa, nullptr);
        NpzFile f(npz());  // installs the guard's handler over ours
        const std::string other = (dir_ / "other.bin").string();
        std::ofstream(other, std::ios::binary) << std::string(1 << 16, 'o');
        const int fd = ::open(other.c_str(), O_RDONLY);
        void* map = ::mmap(nullptr, 1 << 16, PROT_READ, MAP_SHARED, fd, 0);
        ::close(fd);
        ASSERT_NE(map, MAP_FAILED);
        ASSERT_EQ(::truncate(other.c_str(), 0), 0);
        touch(static_cast<const unsigned char*>(map) + 4096);
      },
      ::testing::ExitedWithCode(3), "previous handler");
}

// What a SIGBUS that is not ours meets: the default action (death by SIGBUS), or under AddressSanitizer possibly
// its own handler, installed before ours, which reports the fault and exits 1.
bool diedAsWithoutTheGuard(int status) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  constexpr bool kAsan = true;
#else
  constexpr bool kAsan = false;
#endif
#else
  constexpr bool kAsan = false;
#endif
  const bool bySigbus = WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS;
  return bySigbus || (kAsan && WIFEXITED(status) && WEXITSTATUS(status) == 1);
}

TEST_F(MappedFileGuardTest, OtherSigbusKeepsTheDefaultAction) {
  // An unguarded mapping that faults, and a SIGBUS sent by kill(2): both end the program as they would without
  // the guard.
  EXPECT_EXIT(
      {
        noCoreFile();
        NpzFile f(npz());
        const std::string other = (dir_ / "other.bin").string();
        std::ofstream(other, std::ios::binary) << std::string(1 << 16, 'o');
        const int fd = ::open(other.c_str(), O_RDONLY);
        void* map = ::mmap(nullptr, 1 << 16, PROT_READ, MAP_SHARED, fd, 0);
        ::close(fd);
        ASSERT_EQ(::truncate(other.c_str(), 0), 0);
        touch(static_cast<const unsigned char*>(map) + 4096);
      },
      diedAsWithoutTheGuard, "");
  EXPECT_EXIT(
      {
        noCoreFile();
        NpzFile f(npz());
        ::raise(SIGBUS);
      },
      diedAsWithoutTheGuard, "");
}

}  // namespace
}  // namespace gnn
