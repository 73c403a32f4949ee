// OutFile: a dataset generator's output file (.csv, or .csv.gz at level 1 as OGB ships them), written through a 1 MB
// buffer with its own integer and fixed-point text, so the bytes are the same on every libc (printf's rounding is
// not specified to the last digit); bytesUnder sums a written folder. Used by bench/ProductsLikeGraph.h and
// bench/MagLikeGraph.h.
//
//   detail::OutFile f("/tmp/g/raw/edge.csv.gz", true);
//   f.putInt(3); f.put(','); f.putFixed3(-0.25); f.endLine();   // "3,-0.250\n"
//   f.close();                                                  // throws when the disk is full
#pragma once
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace gnn::bench::detail {

class OutFile {
 public:
  OutFile(const std::string& path, bool gzip) : path_(path) {
    if (gzip) {
      gz_ = gzopen(path.c_str(), "wb1");
      if (!gz_) throw std::runtime_error("cannot write " + path);
    } else {
      f_ = std::fopen(path.c_str(), "wb");
      if (!f_) throw std::runtime_error("cannot write " + path);
    }
    buf_.reserve(kFlush + 4096);
  }
  ~OutFile() {
    try {
      close();
    } catch (...) {
    }
  }
  OutFile(const OutFile&) = delete;
  OutFile& operator=(const OutFile&) = delete;

  void put(char c) { buf_.push_back(c); }
  void put(const std::string& text) { buf_.append(text); }
  void putInt(int64_t v) {
    char tmp[24];
    int n = 0;
    const bool neg = v < 0;
    uint64_t u = neg ? static_cast<uint64_t>(-v) : static_cast<uint64_t>(v);
    do {
      tmp[n++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u);
    if (neg) buf_.push_back('-');
    while (n) buf_.push_back(tmp[--n]);
  }
  // Fixed 3 decimals from the value rounded to thousandths, so the text is the same on every libc.
  void putFixed3(double x) {
    const int64_t t = static_cast<int64_t>(std::llround(x * 1000.0));
    if (t < 0) buf_.push_back('-');
    const int64_t a = t < 0 ? -t : t;
    putInt(a / 1000);
    buf_.push_back('.');
    const int64_t frac = a % 1000;
    buf_.push_back(static_cast<char>('0' + frac / 100));
    buf_.push_back(static_cast<char>('0' + frac / 10 % 10));
    buf_.push_back(static_cast<char>('0' + frac % 10));
  }
  void endLine() {
    buf_.push_back('\n');
    if (buf_.size() >= kFlush) flush();
  }
  void close() {
    if (!gz_ && !f_) return;
    flush();
    const bool ok = gz_ ? gzclose(gz_) == Z_OK : std::fclose(f_) == 0;
    gz_ = nullptr;
    f_ = nullptr;
    if (!ok) throw std::runtime_error("cannot finish " + path_);
  }

 private:
  static constexpr size_t kFlush = size_t{1} << 20;
  void flush() {
    if (buf_.empty()) return;
    const bool ok = gz_ ? gzwrite(gz_, buf_.data(), static_cast<unsigned>(buf_.size())) ==
                              static_cast<int>(buf_.size())
                        : std::fwrite(buf_.data(), 1, buf_.size(), f_) == buf_.size();
    if (!ok) throw std::runtime_error("cannot write " + path_ + " (disk full?)");
    buf_.clear();
  }
  std::string path_;
  gzFile gz_ = nullptr;
  std::FILE* f_ = nullptr;
  std::string buf_;
};

// Bytes on disk of every file under dir (a generator's JSON reports it).
inline int64_t bytesUnder(const std::string& dir) {
  int64_t bytes = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) bytes += static_cast<int64_t>(e.file_size());
  return bytes;
}

}  // namespace gnn::bench::detail
