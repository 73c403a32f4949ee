// FuzzInput: helpers shared by the fuzz targets. Readers that take paths get the fuzzer's bytes through a
// file under $TMPDIR (one per process, so parallel fuzzing jobs do not collide), removed afterwards.
//
//   TempTree tree;                       // a fresh directory, removed with its contents
//   std::string p = tree.write("in.csv", data, size);
//   std::vector<std::string_view> parts = splitSections(data, size);   // "\x01"-separated files
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace gnn::fuzz {

class TempTree {
 public:
  // One folder per process, made once (creating and removing a folder per input halves the speed of the
  // file-reading targets); what an input wrote is removed when its TempTree goes.
  TempTree() : root_(processRoot()) {}
  ~TempTree() {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(root_, ec)) std::filesystem::remove_all(entry.path(), ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::filesystem::path& root() const { return root_; }
  /// Writes `bytes` to root/relative (creating folders) and returns the path.
  std::string write(const std::string& relative, std::string_view bytes) const {
    const std::filesystem::path p = root_ / relative;
    if (relative.find('/') != std::string::npos) std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p.string();
  }

 private:
  static const std::filesystem::path& processRoot() {
    static const std::filesystem::path root = [] {
      const char* tmp = std::getenv("TMPDIR");
      std::filesystem::path r =
          std::filesystem::path(tmp && *tmp ? tmp : "/tmp") / ("gnn-fuzz-" + std::to_string(::getpid()));
      std::filesystem::remove_all(r);
      std::filesystem::create_directories(r);
      std::atexit([] {
        std::error_code ec;
        std::filesystem::remove_all(processRoot(), ec);
      });
      return r;
    }();
    return root;
  }
  const std::filesystem::path& root_;
};

/// Multi-file layouts (PCQM4Mv2, OGB node sets) take one input cut into files at each 0x01 byte, so the
/// mutator can grow, shrink or drop one file without the others.
inline std::vector<std::string_view> splitSections(const uint8_t* data, size_t size) {
  std::vector<std::string_view> out;
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  for (size_t i = 0; i <= all.size(); ++i)
    if (i == all.size() || all[i] == '\x01') {
      out.push_back(all.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

}  // namespace gnn::fuzz
