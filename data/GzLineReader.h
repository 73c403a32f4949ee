// GzLineReader: streams the lines of a text file, gzip-compressed or not (told by the gzip magic bytes),
// keeping the current line number for error messages. A truncated or corrupt .gz, or bytes after its last
// member that are not another member, are an error naming the file (and line).
//
//   GzLineReader in("raw/edge.csv.gz");
//   std::string_view line;
//   while (in.next(line)) { ... in.lineNumber() ... }
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gnn {

/// A user-facing input error: "<file>:<line>: <what>". Readers throw it for bad input.
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& file, int64_t line, const std::string& what);
  const std::string& file() const { return file_; }
  int64_t line() const { return line_; }

 private:
  std::string file_;
  int64_t line_;
};

class GzLineReader {
 public:
  explicit GzLineReader(std::string path);
  ~GzLineReader();
  GzLineReader(const GzLineReader&) = delete;
  GzLineReader& operator=(const GzLineReader&) = delete;

  /// Next line without its '\n' (and without a trailing '\r'); false at end of file. The view stays valid
  /// until the next call.
  bool next(std::string_view& line);
  /// 1-based number of the line last returned.
  int64_t lineNumber() const { return line_; }
  const std::string& path() const { return path_; }
  /// Throws InputError for the current line.
  [[noreturn]] void fail(const std::string& what) const;

 private:
  bool fill();
  struct Gz;
  std::string path_;
  std::vector<char> buf_;
  std::unique_ptr<Gz> gz_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  std::string carry_;
  int64_t line_ = 0;
};

/// Splits on a single-character separator without allocating (no quoting; see CsvRow for quoted CSV).
void splitFields(std::string_view line, char sep, std::vector<std::string_view>& out);
/// Parses a whole field as an integer / float; throws InputError(file, line) naming the field otherwise.
int64_t parseInt(std::string_view field, const GzLineReader& where);
double parseDouble(std::string_view field, const GzLineReader& where);

}  // namespace gnn
