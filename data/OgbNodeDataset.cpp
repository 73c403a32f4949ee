#include "data/OgbNodeDataset.h"

#include <charconv>
#include <cstring>
#include <filesystem>

#include "data/GzLineReader.h"

namespace gnn {
namespace fs = std::filesystem;

namespace {
// The file as given, or with .gz added/removed: OGB ships .csv.gz, users often unpack them.
std::string findFile(const fs::path& base, const std::string& rel, bool required) {
  fs::path p = base / rel;
  if (fs::exists(p)) return p.string();
  std::string s = p.string();
  std::string alt = s.size() > 3 && s.substr(s.size() - 3) == ".gz" ? s.substr(0, s.size() - 3) : s + ".gz";
  if (fs::exists(alt)) return alt;
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
}  // namespace

OgbNodeDataset OgbNodeDataset::load(const std::string& dirName, const OgbNodeOptions& options) {
  fs::path dir(dirName);
  if (!fs::is_directory(dir)) throw InputError(dirName, 0, "dataset directory not found");
  OgbNodeDataset ds;
  ds.name = fs::path(dirName).lexically_normal().filename().string();
  if (ds.name.empty()) ds.name = fs::path(dirName).lexically_normal().parent_path().filename().string();

  // Features: every row must have the first row's width.
  std::vector<float> feats;
  int64_t width = -1, rows = 0;
  {
    GzLineReader in(findFile(dir, "raw/node-feat.csv.gz", true));
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
        feats.push_back(v);
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
  }
  int64_t numNodes = rows;
  if (std::string nn = findFile(dir, "raw/num-node-list.csv.gz", false); !nn.empty()) {
    // Read to its end like every other file: only then are the gzip trailer and what follows it checked, and
    // a second count (a multi-graph list, or two files run together) is refused rather than ignored.
    GzLineReader in(nn);
    std::string_view line;
    int64_t declared = 0, declaredLine = 0;
    while (in.next(line)) {
      if (line.empty()) continue;
      if (declaredLine > 0)
        in.fail("unexpected line '" + std::string(line.substr(0, 40)) +
                "': the file holds one node count (one graph), on its first line");
      declared = parseInt(line, in);
      declaredLine = in.lineNumber();
    }
    if (declaredLine == 0) in.fail("empty file, expected the node count");
    if (declared != rows)
      throw InputError(in.path(), declaredLine,
                       "declares " + std::to_string(declared) + " nodes but node-feat has " +
                           std::to_string(rows) + " rows");
  }
  Graph& g = ds.graph;
  g.numNodes = numNodes;
  g.x = Tensor::fromVector(feats, {numNodes, width});
  feats.clear();
  feats.shrink_to_fit();

  // Edges.
  {
    GzLineReader in(findFile(dir, "raw/edge.csv.gz", true));
    std::vector<int64_t> src, dst;
    std::string_view line;
    std::vector<std::string_view> f;
    while (in.next(line)) {
      if (line.empty()) continue;
      splitFields(line, ',', f);
      if (f.size() != 2) in.fail("expected 'src,dst', found " + std::to_string(f.size()) + " fields");
      int64_t s = parseInt(f[0], in), d = parseInt(f[1], in);
      if (s < 0 || s >= numNodes || d < 0 || d >= numNodes)
        in.fail("edge " + std::to_string(s) + " -> " + std::to_string(d) + " points past the last node (" +
                std::to_string(numNodes) + " nodes)");
      src.push_back(s);
      dst.push_back(d);
    }
    std::vector<int64_t> ei(src);
    ei.insert(ei.end(), dst.begin(), dst.end());
    g.edgeIndex = Tensor::fromVector(ei, {2, static_cast<int64_t>(src.size())});
  }

  // Labels.
  {
    GzLineReader in(findFile(dir, "raw/node-label.csv.gz", true));
    std::vector<int64_t> y;
    std::string_view line;
    while (in.next(line)) {
      if (line.empty()) continue;
      int64_t v = parseInt(line, in);
      if (v < 0) in.fail("negative class label " + std::to_string(v));
      // Labels index the output layer: a label of 30,000,000 would build a 30M-class head, INT64_MAX would
      // overflow. No node-classification set has anywhere near kMaxClasses classes.
      if (v >= kMaxClasses)
        in.fail("class label " + std::to_string(v) + " is out of range (labels are 0 .. " +
                std::to_string(kMaxClasses - 1) + ")");
      y.push_back(v);
      ds.numClasses = std::max(ds.numClasses, v + 1);
    }
    if (static_cast<int64_t>(y.size()) != numNodes)
      throw InputError(in.path(), in.lineNumber(),
                       "has " + std::to_string(y.size()) + " labels for " + std::to_string(numNodes) + " nodes");
    g.y = Tensor::fromVector(y);
  }

  // Split.
  std::string split = options.split;
  fs::path splitRoot = dir / "split";
  if (split.empty()) {
    if (!fs::is_directory(splitRoot)) throw InputError(splitRoot.string(), 0, "split directory not found");
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(splitRoot))
      if (e.is_directory()) names.push_back(e.path().filename().string());
    if (names.size() != 1)
      throw InputError(splitRoot.string(), 0,
                       "expected exactly one split folder (or name one), found " + std::to_string(names.size()));
    split = names[0];
  }
  ds.trainIdx = readIndexList(findFile(splitRoot / split, "train.csv.gz", true), numNodes);
  ds.validIdx = readIndexList(findFile(splitRoot / split, "valid.csv.gz", true), numNodes);
  ds.testIdx = readIndexList(findFile(splitRoot / split, "test.csv.gz", true), numNodes);
  g.trainMask = maskOf(ds.trainIdx, numNodes);
  g.validMask = maskOf(ds.validIdx, numNodes);
  g.testMask = maskOf(ds.testIdx, numNodes);

  if (options.normalizeFeatures) {
    auto x = g.x.matrix<float>();
    for (int64_t i = 0; i < numNodes; ++i) {
      float s = x.row(i).sum();
      if (s != 0) x.row(i) /= s;
    }
  }
  return ds;
}

SparseMatrix OgbNodeDataset::sparseFeatures() const {
  auto x = graph.x.matrix<float>();
  std::vector<int64_t> rp{0};
  std::vector<int32_t> ci;
  std::vector<float> v;
  for (int64_t i = 0; i < x.rows(); ++i) {
    for (int64_t j = 0; j < x.cols(); ++j)
      if (x(i, j) != 0) {
        ci.push_back(static_cast<int32_t>(j));
        v.push_back(x(i, j));
      }
    rp.push_back(static_cast<int64_t>(ci.size()));
  }
  return SparseMatrix::fromCsr(x.rows(), x.cols(), std::move(rp), std::move(ci), Tensor::fromVector(v));
}

}  // namespace gnn
