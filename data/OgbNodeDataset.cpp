#include "data/OgbNodeDataset.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <utility>

#include "data/GzLineReader.h"
#include "data/OgbNodeMaster.h"

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

// Values appended in chunks of 1M: growth never copies what is already read (a doubling vector holds the old
// and the new buffer at once), and the chunks can be freed one by one as they are moved into the final tensor.
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

// PyG's NormalizeFeatures (torch_geometric/transforms/normalize_features.py):
//   x = x - x.min();  x /= x.sum(dim=-1, keepdim=True).clamp(min=1)
// The minimum is the whole matrix's: features with negative values are all shifted by the same amount to be
// non-negative before rows are summed, and a row whose sum is below 1 (an all-zero row among them) is divided by 1,
// i.e. left as it is, so no row is divided by zero or by a sum near it. Bag-of-words counts (minimum 0, every
// non-empty row summing to at least 1) are neither shifted nor clamped: their rows sum to 1 as in Kipf & Welling.
void rowNormalize(Tensor& features) {
  auto x = features.matrix<float>();
  // Subtracting 0 changes no bits, so the common case skips the pass.
  if (float lowest = x.minCoeff(); lowest != 0) x.array() -= lowest;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    float s = x.row(i).sum();
    if (s > 1) x.row(i) /= s;
  }
}

// Per-feature standardisation with the training nodes' statistics (each counted once, in node order, in double;
// the population std), applied to every node. A feature constant over the training nodes keeps its scale (std 1):
// the constant is detected exactly rather than from a rounded variance, whose tiny non-zero remainder would
// multiply the other nodes' differences from it by ~1e16.
void standardize(Tensor& features, const Tensor& trainMask, std::vector<double>& mean, std::vector<double>& sd) {
  auto x = features.matrix<float>();
  const Eigen::Index n = x.rows(), f = x.cols();
  const uint8_t* train = trainMask.data<uint8_t>();
  std::vector<double> sum(static_cast<size_t>(f), 0.0);
  std::vector<float> lo(static_cast<size_t>(f), INFINITY), hi(static_cast<size_t>(f), -INFINITY);
  int64_t count = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!train[i]) continue;
    ++count;
    for (Eigen::Index j = 0; j < f; ++j) {
      const float v = x(i, j);
      sum[j] += v;
      lo[j] = std::min(lo[j], v);
      hi[j] = std::max(hi[j], v);
    }
  }
  mean.assign(static_cast<size_t>(f), 0.0);
  sd.assign(static_cast<size_t>(f), 1.0);
  std::vector<double> sq(static_cast<size_t>(f), 0.0);
  for (Eigen::Index j = 0; j < f; ++j) mean[j] = lo[j] == hi[j] ? lo[j] : sum[j] / static_cast<double>(count);
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!train[i]) continue;
    for (Eigen::Index j = 0; j < f; ++j) {
      const double d = x(i, j) - mean[j];
      sq[j] += d * d;
    }
  }
  for (Eigen::Index j = 0; j < f; ++j) {
    const double s = lo[j] == hi[j] ? 0.0 : std::sqrt(sq[j] / static_cast<double>(count));
    sd[j] = s > 0 ? s : 1.0;
  }
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < f; ++j) x(i, j) = static_cast<float>((x(i, j) - mean[j]) / sd[j]);
}
}  // namespace

const char* featureNormalizationName(FeatureNormalization n) {
  switch (n) {
    case FeatureNormalization::None: return "none";
    case FeatureNormalization::Row: return "row";
    case FeatureNormalization::Standard: return "standard";
    case FeatureNormalization::Auto: return "auto";
  }
  return "?";
}

std::optional<FeatureNormalization> parseFeatureNormalization(std::string_view name) {
  for (FeatureNormalization n : {FeatureNormalization::None, FeatureNormalization::Row, FeatureNormalization::Standard,
                                 FeatureNormalization::Auto})
    if (name == featureNormalizationName(n)) return n;
  return std::nullopt;
}

const char* addInverseEdgesName(AddInverseEdges a) {
  switch (a) {
    case AddInverseEdges::Auto: return "auto";
    case AddInverseEdges::On: return "on";
    case AddInverseEdges::Off: return "off";
  }
  return "?";
}

std::optional<AddInverseEdges> parseAddInverseEdges(std::string_view name) {
  for (AddInverseEdges a : {AddInverseEdges::Auto, AddInverseEdges::On, AddInverseEdges::Off})
    if (name == addInverseEdgesName(a)) return a;
  return std::nullopt;
}

namespace {

// The dataset's name: its folder's ("data/cora/" -> "cora").
std::string datasetName(const std::string& dirName) {
  std::string name = fs::path(dirName).lexically_normal().filename().string();
  if (name.empty()) name = fs::path(dirName).lexically_normal().parent_path().filename().string();
  return name;
}

// Features: every row must have the first row's width. Rows go into fixed-size chunks (no vector doubling,
// which would hold up to three copies at its peak), then into the tensor, each chunk freed once copied: at
// most the matrix twice, briefly, and no text beyond the current line.
Tensor readFeatures(const fs::path& dir) {
  int64_t width = -1, rows = 0;
  GzLineReader in(findFile(dir, "raw/node-feat.csv.gz", true));
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

// Edges: (src, dst) pairs in chunks, 32-bit while the node ids fit (8 bytes an edge while reading), then the
// [2, E] int64 tensor the graph holds, filled chunk by chunk as the chunks are freed. With `inverse`, each line
// becomes two edges, (s, d) then (d, s), as OGB's read_csv_graph_raw lays them out:
//   duplicated_edge = np.repeat(edge, 2, axis = 1)
//   duplicated_edge[0, 1::2] = duplicated_edge[1,0::2]
//   duplicated_edge[1, 1::2] = duplicated_edge[0,0::2]
// `lines` is set to the lines read (num-edge-list counts those: OGB slices the file by it before duplicating).
Tensor readEdges(const fs::path& dir, int64_t numNodes, bool inverse, int64_t& lines) {
  GzLineReader in(findFile(dir, "raw/edge.csv.gz", true));
  const bool narrow = numNodes <= INT32_MAX;
  ChunkedArray<int32_t> pairs32;
  ChunkedArray<int64_t> pairs64;
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
    if (narrow) {
      pairs32.push(static_cast<int32_t>(s));
      pairs32.push(static_cast<int32_t>(d));
    } else {
      pairs64.push(s);
      pairs64.push(d);
    }
  }
  lines = (narrow ? pairs32.size() : pairs64.size()) / 2;
  const int64_t E = inverse ? 2 * lines : lines;
  Tensor edgeIndex = Tensor::empty({2, E}, DType::I64);
  int64_t* src = edgeIndex.data<int64_t>();
  int64_t* dst = src + E;
  int64_t e = 0;
  auto unzip = [&](const auto* p, int64_t n) {
    for (int64_t k = 0; k < n; k += 2, ++e) {
      src[e] = p[k];
      dst[e] = p[k + 1];
      if (inverse) {
        ++e;
        src[e] = p[k + 1];
        dst[e] = p[k];
      }
    }
  };
  if (narrow) pairs32.drain(unzip);
  else pairs64.drain(unzip);
  return edgeIndex;
}

// Labels, one per node; numClasses becomes the largest label + 1.
Tensor readLabels(const fs::path& dir, int64_t numNodes, int64_t& numClasses) {
  GzLineReader in(findFile(dir, "raw/node-label.csv.gz", true));
  std::vector<int64_t> y;
  y.reserve(static_cast<size_t>(numNodes));
  std::string_view line;
  while (in.next(line)) {
    if (line.empty()) continue;
    int64_t v = parseInt(line, in);
    if (v < 0) in.fail("negative class label " + std::to_string(v));
    // Labels index the output layer: a label of 30,000,000 would build a 30M-class head, INT64_MAX would
    // overflow. No node-classification set has anywhere near kMaxClasses classes.
    if (v >= OgbNodeDataset::kMaxClasses)
      in.fail("class label " + std::to_string(v) + " is out of range (labels are 0 .. " +
              std::to_string(OgbNodeDataset::kMaxClasses - 1) + ")");
    y.push_back(v);
    numClasses = std::max(numClasses, v + 1);
  }
  if (static_cast<int64_t>(y.size()) != numNodes)
    throw InputError(in.path(), in.lineNumber(),
                     "has " + std::to_string(y.size()) + " labels for " + std::to_string(numNodes) + " nodes");
  return Tensor::fromVector(y);
}

// The additional node files to read: as asked, or under nullopt as OGB's master.csv lists them for the dataset the
// folder is named after. OGB reads each as raw/<name>.csv.gz and asserts the name starts with "node_".
std::vector<std::string> additionalNodeFiles(const std::string& name,
                                             const std::optional<std::vector<std::string>>& asked) {
  std::vector<std::string> names;
  if (asked) {
    names = *asked;
  } else if (const OgbNodeMasterEntry* e = ogbNodeMasterEntry(name)) {
    std::string_view list = e->additionalNodeFiles;
    while (!list.empty()) {
      const size_t comma = list.find(',');
      names.emplace_back(list.substr(0, comma));
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    }
  }
  for (const std::string& n : names)
    if (n.size() <= 5 || n.compare(0, 5, "node_") != 0 || n.find_first_of("/\\") != std::string::npos)
      throw std::invalid_argument("additional node file '" + n +
                                  "': OGB names them node_<what> (node_year, node_species), read from raw/");
  return names;
}

// An additional node file: one row of comma-separated integers per node, every row the first row's width.
Tensor readNodeFile(const fs::path& dir, const std::string& name, int64_t numNodes, bool asked) {
  const std::string path = findFile(dir, "raw/" + name + ".csv.gz", false);
  if (path.empty())
    throw InputError((dir / "raw" / (name + ".csv.gz")).string(), 0,
                     std::string("file not found: the additional node file ") +
                         (asked ? "asked for" : "OGB's master.csv lists for a folder of this name") +
                         " (to read without it, ask for none: --additional-node-files none)");
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
    if (++rows > numNodes) in.fail("more rows than the graph's " + std::to_string(numNodes) + " nodes");
    for (std::string_view v : f) values.push_back(parseInt(v, in));
  }
  if (rows != numNodes)
    throw InputError(in.path(), in.lineNumber(),
                     "has " + std::to_string(rows) + " rows for " + std::to_string(numNodes) + " nodes");
  Tensor t = Tensor::empty({numNodes, width}, DType::I64);
  std::copy(values.begin(), values.end(), t.data<int64_t>());
  return t;
}

// Whether the reverse of each edge is added: as asked, or under Auto as OGB's master.csv says for the dataset the
// folder is named after (any other folder: off, the file read as it is).
bool addsInverseEdges(const std::string& name, AddInverseEdges a) {
  if (a != AddInverseEdges::Auto) return a == AddInverseEdges::On;
  const OgbNodeMasterEntry* e = ogbNodeMasterEntry(name);
  return e && e->addInverseEdge;
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

}  // namespace

OgbNodeDataset OgbNodeDataset::load(const std::string& dirName, const OgbNodeOptions& options) {
  fs::path dir(dirName);
  if (!fs::is_directory(dir)) throw InputError(dirName, 0, "dataset directory not found");
  OgbNodeDataset ds;
  ds.name = datasetName(dirName);

  Tensor features = readFeatures(dir);
  const int64_t numNodes = features.dim(0);
  checkCount(dir, "raw/num-node-list.csv.gz", numNodes, "node", "node-feat has " + std::to_string(numNodes) + " rows");
  Graph& g = ds.graph;
  g.numNodes = numNodes;
  g.x = std::move(features);
  ds.inverseEdgesAdded = addsInverseEdges(ds.name, options.addInverseEdges);
  int64_t edgeLines = 0;
  g.edgeIndex = readEdges(dir, numNodes, ds.inverseEdgesAdded, edgeLines);
  // OGB counts the edges as stored, each undirected one once (it slices edge.csv by the count, then duplicates).
  checkCount(dir, "raw/num-edge-list.csv.gz", edgeLines, "edge",
             "edge.csv has " + std::to_string(edgeLines) + " (before any inverse edge)");
  for (const std::string& file : additionalNodeFiles(ds.name, options.additionalNodeFiles))
    ds.nodeFiles[file] = readNodeFile(dir, file, numNodes, options.additionalNodeFiles.has_value());
  if (options.featuresOnly) {
    if (options.normalization != FeatureNormalization::None && options.normalization != FeatureNormalization::Row)
      throw std::invalid_argument("OgbNodeDataset::load: featuresOnly reads no split for standard normalisation");
    ds.normalization = options.normalization;
    if (ds.normalization == FeatureNormalization::Row) rowNormalize(g.x);
    return ds;
  }
  g.y = readLabels(dir, numNodes, ds.numClasses);

  const fs::path splitRoot = dir / "split";
  const std::string split = splitFolder(splitRoot, options.split);
  const std::string trainFile = findFile(splitRoot / split, "train.csv.gz", true);
  ds.trainIdx = readIndexList(trainFile, numNodes);
  ds.validIdx = readIndexList(findFile(splitRoot / split, "valid.csv.gz", true), numNodes);
  ds.testIdx = readIndexList(findFile(splitRoot / split, "test.csv.gz", true), numNodes);
  g.trainMask = maskOf(ds.trainIdx, numNodes);
  g.validMask = maskOf(ds.validIdx, numNodes);
  g.testMask = maskOf(ds.testIdx, numNodes);

  ds.normalization = options.normalization;
  if (ds.normalization == FeatureNormalization::Auto)
    ds.normalization = g.x.matrix<float>().minCoeff() >= 0 ? FeatureNormalization::Row : FeatureNormalization::Standard;
  if (ds.normalization == FeatureNormalization::Row) {
    rowNormalize(g.x);
  } else if (ds.normalization == FeatureNormalization::Standard) {
    if (ds.trainIdx.empty())
      throw InputError(trainFile, 0,
                       "lists no node: standard feature normalisation takes each feature's mean and std from the "
                       "training nodes");
    standardize(g.x, g.trainMask, ds.featureMean, ds.featureStd);
  }
  return ds;
}

void OgbNodeDataset::permuteNodes(const std::vector<int64_t>& order) {
  Graph& g = graph;
  const int64_t n = g.numNodes;
  GNN_CHECK_ARG(static_cast<int64_t>(order.size()) == n, "OgbNodeDataset::permuteNodes: an order of ", order.size(),
                " nodes for ", n);
  std::vector<int64_t> newId(static_cast<size_t>(n), -1);
  for (int64_t i = 0; i < n; ++i) {
    GNN_CHECK_ARG(order[i] >= 0 && order[i] < n && newId[order[i]] < 0,
                  "OgbNodeDataset::permuteNodes: not a permutation (node ", order[i], " at ", i, ")");
    newId[order[i]] = i;
  }
  // Rows follow the cycles of the permutation: new row i = old row order[i], one row of scratch.
  {
    const int64_t f = g.x.dim(1);
    float* x = g.x.data<float>();
    std::vector<float> tmp(static_cast<size_t>(f));
    std::vector<bool> done(static_cast<size_t>(n), false);
    for (int64_t start = 0; start < n; ++start) {
      if (done[start] || order[start] == start) continue;
      std::copy(x + start * f, x + (start + 1) * f, tmp.begin());
      int64_t i = start;
      for (int64_t from = order[i]; from != start; i = from, from = order[i]) {
        std::copy(x + from * f, x + (from + 1) * f, x + i * f);
        done[i] = true;
      }
      std::copy(tmp.begin(), tmp.end(), x + i * f);
      done[i] = true;
    }
  }
  auto gather = [&](Tensor& t, auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if (!t.defined()) return;
    Tensor out = Tensor::empty(t.shape(), t.dtype());
    const T* in = std::as_const(t).data<T>();
    T* o = out.data<T>();
    for (int64_t i = 0; i < n; ++i) o[i] = in[order[i]];
    t = std::move(out);
  };
  gather(g.y, static_cast<int64_t*>(nullptr));
  for (auto& [name, t] : nodeFiles) {  // rows of t.dim(1) values
    Tensor out = Tensor::empty(t.shape(), t.dtype());
    const int64_t w = t.dim(1);
    const int64_t* in = std::as_const(t).data<int64_t>();
    int64_t* o = out.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) std::copy(in + order[i] * w, in + (order[i] + 1) * w, o + i * w);
    t = std::move(out);
  }
  for (Tensor* m : {&g.trainMask, &g.validMask, &g.testMask}) gather(*m, static_cast<uint8_t*>(nullptr));
  // Edges renumbered and listed by source (a stable counting sort: one source's edges keep their order), so
  // the rows of the normalised adjacency, grouped by target, come out with their columns in order.
  {
    const int64_t E = g.numEdges();
    const int64_t* e = std::as_const(g.edgeIndex).data<int64_t>();
    std::vector<int64_t> start(static_cast<size_t>(n) + 1, 0);
    for (int64_t k = 0; k < E; ++k) ++start[newId[e[k]] + 1];
    for (int64_t v = 0; v < n; ++v) start[v + 1] += start[v];
    Tensor sorted = Tensor::empty({2, E}, DType::I64);
    int64_t* src = sorted.data<int64_t>();
    int64_t* dst = src + E;
    for (int64_t k = 0; k < E; ++k) {
      const int64_t s = newId[e[k]], at = start[s]++;
      src[at] = s;
      dst[at] = newId[e[E + k]];
    }
    g.edgeIndex = std::move(sorted);
  }
  for (std::vector<int64_t>* idx : {&trainIdx, &validIdx, &testIdx})
    for (int64_t& v : *idx) v = newId[v];
}

double OgbNodeDataset::featureDensity() const {
  const Tensor& x = graph.x;
  if (x.numel() == 0) return 0;
  const int64_t nonZero = (x.flat<float>().array() != 0.0f).count();
  return static_cast<double>(nonZero) / static_cast<double>(x.numel());
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
