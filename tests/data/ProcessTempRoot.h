// ProcessTempRoot: one temporary folder per test process ($TMPDIR/<prefix><pid>), removed when the process
// exits, so the files a test writes there do not outlive its run.
//
//   static ProcessTempRoot root("gnn_gz_");
//   std::ofstream(root.path() / "one.gz") << bytes;
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace gnn::testing {

class ProcessTempRoot {
 public:
  explicit ProcessTempRoot(const std::string& prefix)
      : owner_(::getpid()), path_(std::filesystem::temp_directory_path() / (prefix + std::to_string(owner_))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  // Only the process that made it removes it: a death test's forked child that exits normally runs this
  // destructor too, while its parent still uses the folder.
  ~ProcessTempRoot() {
    if (::getpid() != owner_) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ProcessTempRoot(const ProcessTempRoot&) = delete;
  ProcessTempRoot& operator=(const ProcessTempRoot&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  pid_t owner_;
  std::filesystem::path path_;
};

}  // namespace gnn::testing
