#include "data/OgbRawFiles.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace gnn::detail {
namespace fs = std::filesystem;

// The file as given, or with .gz added/removed: OGB ships .csv.gz, users often unpack them.
std::string findFile(const fs::path& base, const std::string& rel, bool required) {
  // The error_code overloads: a path the system cannot look up (a component past NAME_MAX, from a type name in a
  // heterogeneous folder's files) is a file not found, not a filesystem_error.
  std::error_code ec;
  fs::path p = base / rel;
  if (fs::exists(p, ec)) return p.string();
  std::string s = p.string();
  std::string alt = s.size() > 3 && s.substr(s.size() - 3) == ".gz" ? s.substr(0, s.size() - 3) : s + ".gz";
  if (fs::exists(alt, ec)) return alt;
  if (required) throw InputError(p.string(), 0, "file not found");
  return {};
}

std::vector<int64_t> readIndexList(const std::string& path, int64_t numNodes) {
  GzLineReader in(path);
  std::vector<int64_t> out;
  std::string_view line;
  while (in.next(line)) {
    if (line.empty()) continue;
    int64_t v = parseInt(line, in);
    if (v < 0 || v >= numNodes)
      in.fail("node id " + std::to_string(v) + " is outside [0, " + std::to_string(numNodes) + ")");
    out.push_back(v);
  }
  return out;
}

Tensor maskOf(const std::vector<int64_t>& idx, int64_t n) {
  Tensor m({n}, DType::U8);
  for (int64_t i : idx) m.data<uint8_t>()[i] = 1;
  return m;
}

// The dataset's name: its folder's ("data/cora/" -> "cora").
std::string datasetName(const std::string& dirName) {
  std::string name = fs::path(dirName).lexically_normal().filename().string();
  if (name.empty()) name = fs::path(dirName).lexically_normal().parent_path().filename().string();
  return name;
}

// Features: every row must have the first row's width. Rows go into fixed-size chunks (no vector doubling,
// which would hold up to three copies at its peak), then into the tensor, each chunk freed once copied: at
// most the matrix twice, briefly, and no text beyond the current line.
Tensor readFloatRows(const std::string& path) {
  int64_t width = -1, rows = 0;
  GzLineReader in(path);
  ChunkedArray<float> feats;
  std::string_view line;
  while (in.next(line)) {
    int64_t cols = 0;
    const char* p = line.data();
    const char* end = p + line.size();
    while (p <= end) {
      const char* comma = static_cast<const char*>(std::memchr(p, ',', static_cast<size_t>(end - p)));
      const char* fe = comma ? comma : end;
      float v = 0;
      auto [q, ec] = std::from_chars(p, fe, v);
      if (ec != std::errc() || q != fe)
        in.fail("feature " + std::to_string(cols) + " is not a number: '" + std::string(p, fe) + "'");
      // from_chars reads "nan" and "inf" (and overflows to inf); any of them would turn every row sum, mean and
      // then every loss into NaN.
      if (!std::isfinite(v))
        in.fail("feature " + std::to_string(cols) + " is not a finite number: '" + std::string(p, fe) + "'");
      feats.push(v);
      ++cols;
      if (!comma) break;
      p = comma + 1;
    }
    if (width < 0) width = cols;
    if (cols != width)
      in.fail("feature row has " + std::to_string(cols) + " values, expected " + std::to_string(width) +
              " (the width of the first row)");
    ++rows;
  }
  if (rows == 0) in.fail("no feature rows");
  Tensor features = Tensor::empty({rows, width}, DType::F32);
  feats.moveInto(features.data<float>());
  return features;
}

// A count file (num-node-list, num-edge-list), when present, must declare `actual` `what`s (`found` says where
// they were counted, for the message).
void checkCount(const fs::path& dir, const std::string& rel, int64_t actual, const std::string& what,
                const std::string& found) {
  std::string nn = findFile(dir, rel, false);
  if (nn.empty()) return;
  // Read to its end like every other file: only then are the gzip trailer and what follows it checked, and
  // a second count (a multi-graph list, or two files run together) is refused rather than ignored.
  GzLineReader in(nn);
  std::string_view line;
  int64_t declared = 0, declaredLine = 0;
  while (in.next(line)) {
    if (line.empty()) continue;
    if (declaredLine > 0)
      in.fail("unexpected line '" + std::string(line.substr(0, 40)) + "': the file holds one " + what +
              " count (one graph), on its first line");
    declared = parseInt(line, in);
    declaredLine = in.lineNumber();
  }
  if (declaredLine == 0) in.fail("empty file, expected the " + what + " count");
  if (declared != actual)
    throw InputError(in.path(), declaredLine,
                     "declares " + std::to_string(declared) + " " + what + "s but " + found);
}

// The split folder under splitRoot: the one named, else the only one there.
std::string splitFolder(const fs::path& splitRoot, const std::string& named) {
  if (!named.empty()) return named;
  if (!fs::is_directory(splitRoot)) throw InputError(splitRoot.string(), 0, "split directory not found");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(splitRoot))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  if (names.size() != 1)
    throw InputError(splitRoot.string(), 0,
                     "expected exactly one split folder (or name one), found " + std::to_string(names.size()));
  return names[0];
}

// Integer rows (OGB's additional node and edge files): one row of comma-separated integers per node or edge, every
// row the first row's width; `rows` of them.
Tensor readIntRows(const std::string& path, int64_t numRows, const std::string& what) {
  GzLineReader in(path);
  std::vector<int64_t> values;
  std::vector<std::string_view> f;
  int64_t width = -1, rows = 0;
  std::string_view line;
  while (in.next(line)) {
    if (line.empty()) continue;
    splitFields(line, ',', f);
    if (width < 0) width = static_cast<int64_t>(f.size());
    if (static_cast<int64_t>(f.size()) != width)
      in.fail("row has " + std::to_string(f.size()) + " values, expected " + std::to_string(width) +
              " (the width of the first row)");
    if (++rows > numRows) in.fail("more rows than the graph's " + std::to_string(numRows) + " " + what + "s");
    for (std::string_view v : f) values.push_back(parseInt(v, in));
  }
  if (rows != numRows)
    throw InputError(in.path(), in.lineNumber(),
                     "has " + std::to_string(rows) + " rows for " + std::to_string(numRows) + " " + what + "s");
  Tensor t = Tensor::empty({numRows, std::max<int64_t>(width, 0)}, DType::I64);
  std::copy(values.begin(), values.end(), t.data<int64_t>());
  return t;
}

}  // namespace gnn::detail
