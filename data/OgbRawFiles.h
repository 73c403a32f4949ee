// OgbRawFiles: the pieces both OGB node readers (OgbNodeDataset, OgbHeteroDataset) read their raw .csv(.gz) files
// with: finding a file gzipped or not, streaming float and integer rows, index lists, count files and the split
// folder. Every problem is an InputError naming the file and line.
//
//   Tensor x = detail::readFloatRows(detail::findFile(dir, "raw/node-feat.csv.gz", true));
#pragma once
#include <cstdint>
#include <deque>
#include <filesystem>
#include <string>
#include <vector>

#include "data/GzLineReader.h"
#include "gnn/tensor/Tensor.h"

namespace gnn::detail {

/// The file base/rel as given, or with .gz added/removed (OGB ships .csv.gz, users often unpack them); empty when
/// neither exists and !required, else an InputError naming the path.
std::string findFile(const std::filesystem::path& base, const std::string& rel, bool required);

/// Values appended in chunks of 1M: growth never copies what is already read (a doubling vector holds the old
/// and the new buffer at once), and the chunks can be freed one by one as they are moved into the final tensor.
template <class T>
class ChunkedArray {
 public:
  static constexpr int64_t kChunk = int64_t{1} << 20;  // a multiple of 2, so an edge's pair never straddles two
  void push(T v) {
    if (chunks_.empty() || static_cast<int64_t>(chunks_.back().size()) == kChunk) {
      chunks_.emplace_back();
      chunks_.back().reserve(static_cast<size_t>(kChunk));
    }
    chunks_.back().push_back(v);
    ++size_;
  }
  int64_t size() const { return size_; }
  /// Calls f(data, n) on each chunk in order, freeing it afterwards.
  template <class F>
  void drain(F&& f) {
    for (auto& c : chunks_) {
      f(c.data(), static_cast<int64_t>(c.size()));
      std::vector<T>().swap(c);
    }
    chunks_.clear();
    size_ = 0;
  }
  void moveInto(T* out) {
    drain([&](const T* p, int64_t n) { out = std::copy(p, p + n, out); });
  }

 private:
  std::deque<std::vector<T>> chunks_;
  int64_t size_ = 0;
};

/// edge_index int64 [2, E] from (source, destination) pairs read into `pairs` (drained), each pair followed by its
/// reverse when `inverse`: OGB's add_inverse_edge order (s0, d0), (d0, s0), (s1, d1), (d1, s1), ...
template <class T>
Tensor edgeIndexFromPairs(ChunkedArray<T>& pairs, bool inverse) {
  const int64_t lines = pairs.size() / 2, E = inverse ? 2 * lines : lines;
  Tensor edgeIndex = Tensor::empty({2, E}, DType::I64);
  int64_t* src = edgeIndex.data<int64_t>();
  int64_t* dst = src + E;
  int64_t e = 0;
  pairs.drain([&](const T* p, int64_t n) {
    for (int64_t k = 0; k < n; k += 2, ++e) {
      src[e] = p[k];
      dst[e] = p[k + 1];
      if (inverse) {
        ++e;
        src[e] = p[k + 1];
        dst[e] = p[k];
      }
    }
  });
  return edgeIndex;
}

/// Node ids, one per line, each in [0, numNodes).
std::vector<int64_t> readIndexList(const std::string& path, int64_t numNodes);
/// A uint8 [n] mask with the listed ids set.
Tensor maskOf(const std::vector<int64_t>& idx, int64_t n);
/// The dataset's name: its folder's ("data/cora/" -> "cora").
std::string datasetName(const std::string& dirName);
/// Float32 [rows, F] from one row of comma-separated finite numbers per line, every row the first row's width;
/// at least one row.
Tensor readFloatRows(const std::string& path);
/// Int64 [numRows, width] from one row of comma-separated integers per line (`what` names a row: "node", "edge").
Tensor readIntRows(const std::string& path, int64_t numRows, const std::string& what);
/// A count file (dir/rel, optional) holding one count: it must be `actual` (`found` says where those were counted).
void checkCount(const std::filesystem::path& dir, const std::string& rel, int64_t actual, const std::string& what,
                const std::string& found);
/// The split folder under splitRoot: the one named, else the only one there.
std::string splitFolder(const std::filesystem::path& splitRoot, const std::string& named);

}  // namespace gnn::detail
