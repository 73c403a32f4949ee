// NpzWriter: writes a NumPy .npz (a zip of .npy files) in bounded memory. Each array's bytes stream to a temp
// file as they come; finish() assembles the zip, stored uncompressed (so readers can memory-map arrays), with
// each array's data aligned to 64 bytes in the file, ZIP64 records when an array passes 4 GiB, then renames
// the temp zip onto the destination. Destroying an unfinished writer removes every temp file: a failed build
// leaves nothing behind. Formats: PKWARE APPNOTE.TXT (zip, ZIP64), NumPy NEP 1 (.npy).
//
//   NpzWriter w("out.npz");
//   int x = w.addArray("x", "|u1", 1, {9});     // shape [rows, 9], rows counted from the bytes appended
//   w.append(x, bytes, n);
//   int ei = w.addNarrowArray("edge_index", {}, 2);   // uint8, uint16 or uint32: the narrowest that holds it
//   w.appendNarrow(ei, values, count, 0);
//   w.finish();
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace gnn {

class NpzWriter {
 public:
  explicit NpzWriter(std::string path);
  /// Resumable: the arrays' temp files live in `stateDir` under fixed names (<array>.<part>), reopened if
  /// present, and are kept when the writer is destroyed unfinished, so a build killed part-way can go on from
  /// its last snapshot() (restore()). Arrays must be declared in the same order as by the writer that saved it.
  NpzWriter(std::string path, std::string stateDir);
  ~NpzWriter();
  NpzWriter(const NpzWriter&) = delete;
  NpzWriter& operator=(const NpzWriter&) = delete;

  /// Declares an array with NumPy dtype string `descr` (e.g. "<i8", "|u1", "<f4"), element size, and the
  /// dimensions after the first; the first is counted from the bytes appended. With parts > 1 the array is
  /// [parts, rows, trailing...], each part appended separately (edge_index's two rows). Returns its handle.
  int addArray(const std::string& name, const std::string& descr, size_t itemSize,
               std::vector<int64_t> trailing = {}, int parts = 1);
  void append(int array, const void* data, size_t bytes, int part = 0);
  /// Declares an array [rows, width, trailing...] whose width is only known at the end: each appendRows()
  /// gives rows of some width, and finish() pads every row to the widest (at least `minWidth`) with `fill`
  /// (one item's bytes). The temp file holds the rows as given, so a narrow row costs only its own bytes
  /// until the end (Graphormer's edge_input: a molecule of n atoms has paths of at most n - 1 hops).
  int addPaddedArray(const std::string& name, const std::string& descr, size_t itemSize,
                     std::vector<int64_t> trailing, const std::string& fill, int64_t minWidth = 0);
  void appendRows(int array, const void* data, int64_t rows, int64_t width);
  /// A padded array's width so far: the widest appended, or its minWidth.
  int64_t width(int array) const;
  /// Declares an array of non-negative integers whose dtype is chosen by finish(): the narrowest of uint8,
  /// uint16, uint32 that holds every value appended (a streaming writer learns the largest graph only at the
  /// end). With a `sentinel` (e.g. -1 for "none", 510 for "unreachable") that value is stored as the chosen
  /// dtype's largest value (255, 65535, 4294967295), which no other value may then take. Values are kept as
  /// int32 in the temp file until then.
  static constexpr int64_t kNoSentinel = INT64_MIN;
  int addNarrowArray(const std::string& name, std::vector<int64_t> trailing = {}, int parts = 1,
                     int64_t sentinel = kNoSentinel);
  /// Throws std::invalid_argument for a negative value that is not the sentinel.
  void appendNarrow(int array, const int32_t* values, size_t count, int part = 0);
  /// The dtype a narrow array gets ("|u1", "<u2", "<u4") from the values appended so far; any other array's.
  std::string descr(int array) const;
  /// Fixes the array's first dimension: needed when its rows hold no bytes (a trailing dimension of 0, as
  /// `y` [G, 0] of a dataset without targets), where it cannot be counted from the bytes. finish() checks
  /// that the bytes appended fill exactly this many rows.
  void setRows(int array, int64_t rows);
  const std::string& path() const { return path_; }

  /// Resumable writers: flushes every array to disk (fsync) and returns how far each one is (bytes per part,
  /// a padded array's width and rows, a narrow array's largest value), for restore() after a crash. Appends
  /// after it may be lost.
  std::vector<int64_t> snapshot();
  /// Cuts every array back to a snapshot() (bytes appended after it, e.g. by a chunk a kill interrupted, go).
  /// Throws std::runtime_error when a file is shorter than the snapshot says or the layout differs.
  void restore(const std::vector<int64_t>& state);

  /// Writes the zip and renames it onto path(). Throws std::runtime_error naming the file on I/O errors.
  /// `poll`, when given, is called before each array and after every MB read; it may throw to abandon the
  /// write (a stop request): the exception leaves finish() and the destructor removes the temp files.
  void finish(const std::function<void()>& poll = {});

 private:
  struct Array {
    std::string name, descr;
    size_t itemSize;
    std::vector<int64_t> trailing;
    std::vector<std::FILE*> files;
    std::vector<std::string> paths;
    std::vector<uint64_t> bytes;
    int64_t rows = -1;  // -1: counted from the bytes
    // Padded arrays: the temp file holds runs of (int64 rows, int64 width, rows x width items).
    bool padded = false;
    std::string fill;
    int64_t width = 0, paddedRows = 0;
    // Narrow arrays: int32 items in the temp file, written with the narrowest unsigned dtype (descr()).
    bool narrow = false;
    int64_t sentinel = kNoSentinel;
    int64_t maxValue = -1;  // the largest value appended that is not the sentinel
  };
  // Bytes of one item as written into the zip (a narrow array's chosen width, not its temp file's).
  size_t finalItemSize(const Array& a) const;
  // Streams the array's bytes as they go into the zip (a padded array's rows widened), in pieces of `buf`.
  void readArray(Array& a, std::vector<char>& buf, const std::function<void(const char*, size_t)>& sink,
                 const std::function<void()>& poll);
  void removeTemps();
  std::string path_, tmpBase_, stateDir_;
  std::vector<Array> arrays_;
  bool finished_ = false;
  bool layoutFixed_ = false;  // resumable: set by the first snapshot() or restore()
};

}  // namespace gnn
