// A folder of its own for an end-to-end test, under the system's temporary folder: made empty, removed with its
// files afterwards. Its name holds the process id and the test's (or suite's) name, so tests that ctest runs side
// by side never share one.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <string>

namespace gnn::testing {

/// An empty folder temp/gnn_<name>_<pid> (whatever was there before is removed); characters of `name` other
/// than letters, digits, '-' and '_' (the '/' of parameterised tests' names) become '_'.
inline std::filesystem::path makeScratchFolder(std::string name) {
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gnn_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// A fixture whose every test has a scratch folder named after the suite and the test.
class ScratchFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = makeScratchFolder(std::string(t->test_suite_name()) + "_" + t->name());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

/// The same for a suite that runs its programs once for all its tests (SetUpTestSuite).
template <class Suite>
class SuiteScratchFolderTest : public ::testing::Test {
 protected:
  static void makeFolder(const std::string& name) { dir_ = makeScratchFolder(name); }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }

  static inline std::filesystem::path dir_;
};

}  // namespace gnn::testing
