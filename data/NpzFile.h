// NpzFile: read-only, memory-mapped view of an uncompressed .npz (as NpzWriter or NumPy's savez write them):
// each array is found through the zip's central directory (ZIP64 aware) and its .npy header, then read in
// place; only an array whose data is not aligned for its type (NumPy does not align) is copied. The file must
// not change while it is open: truncating it (as `cp` onto it does) ends the program with an error naming it
// (MappedFileGuard).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data/MappedFileGuard.h"

namespace gnn {

class NpzFile {
 public:
  struct Array {
    std::string descr;  // NumPy dtype string, e.g. "<i8"
    std::vector<int64_t> shape;
    const unsigned char* data = nullptr;
    uint64_t bytes = 0;
    int64_t numel() const;
  };

  /// Throws std::runtime_error naming the file when it is not a readable, uncompressed .npz.
  explicit NpzFile(const std::string& path);
  ~NpzFile();
  NpzFile(const NpzFile&) = delete;
  NpzFile& operator=(const NpzFile&) = delete;

  bool has(const std::string& name) const { return arrays_.count(name) != 0; }
  /// Array by name (without ".npy"); throws naming the file and the array when absent.
  const Array& get(const std::string& name) const;
  /// Same, also checking the dtype string and rank.
  const Array& get(const std::string& name, const std::string& descr, size_t rank) const;
  const std::map<std::string, Array>& arrays() const { return arrays_; }
  const std::string& path() const { return path_; }
  uint64_t fileBytes() const { return size_; }

 private:
  std::string path_;
  void* map_ = nullptr;
  uint64_t size_ = 0;
  MappedFileGuard guard_;  // names the file if it is truncated under the mapping (a SIGBUS otherwise)
  std::map<std::string, Array> arrays_;
  std::vector<std::unique_ptr<uint64_t[]>> copies_;  // aligned copies of misaligned arrays
};

}  // namespace gnn
