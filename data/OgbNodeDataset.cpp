#include "data/OgbNodeDataset.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <utility>

#include "data/GzLineReader.h"
#include "data/OgbNodeMaster.h"
#include "data/OgbRawFiles.h"

namespace gnn {
namespace fs = std::filesystem;
using detail::checkCount;
using detail::ChunkedArray;
using detail::datasetName;
using detail::findFile;
using detail::maskOf;
using detail::readFloatRows;
using detail::readIndexList;
using detail::readIntRows;
using detail::splitFolder;

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
  return narrow ? edgeIndexFromPairs(pairs32, inverse) : edgeIndexFromPairs(pairs64, inverse);
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

// An additional node file: one row of comma-separated integers per node.
Tensor readNodeFile(const fs::path& dir, const std::string& name, int64_t numNodes, bool asked) {
  const std::string path = findFile(dir, "raw/" + name + ".csv.gz", false);
  if (path.empty())
    throw InputError((dir / "raw" / (name + ".csv.gz")).string(), 0,
                     std::string("file not found: the additional node file ") +
                         (asked ? "asked for" : "OGB's master.csv lists for a folder of this name") +
                         " (to read without it, ask for none: --additional-node-files none)");
  return readIntRows(path, numNodes, "node");
}

// Whether the reverse of each edge is added: as asked, or under Auto as OGB's master.csv says for the dataset the
// folder is named after (any other folder: off, the file read as it is).
bool addsInverseEdges(const std::string& name, AddInverseEdges a) {
  if (a != AddInverseEdges::Auto) return a == AddInverseEdges::On;
  const OgbNodeMasterEntry* e = ogbNodeMasterEntry(name);
  return e && e->addInverseEdge;
}

}  // namespace

OgbNodeDataset OgbNodeDataset::load(const std::string& dirName, const OgbNodeOptions& options) {
  fs::path dir(dirName);
  if (!fs::is_directory(dir)) throw InputError(dirName, 0, "dataset directory not found");
  if (const std::string triplets = findFile(dir, "raw/triplet-type-list.csv.gz", false); !triplets.empty())
    throw InputError(triplets, 0, "OGB's heterogeneous layout (node types and relations): read it with "
                                  "OgbHeteroDataset (data/OgbHeteroDataset.h)");
  OgbNodeDataset ds;
  ds.name = datasetName(dirName);

  Tensor features = readFloatRows(findFile(dir, "raw/node-feat.csv.gz", true));
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
    if (ds.normalization == FeatureNormalization::Row) normalizeRows(g.x);
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
    normalizeRows(g.x);
  } else if (ds.normalization == FeatureNormalization::Standard) {
    if (ds.trainIdx.empty())
      throw InputError(trainFile, 0,
                       "lists no node: standard feature normalisation takes each feature's mean and std from the "
                       "training nodes");
    standardizeFeatures(g.x, g.trainMask, ds.featureMean, ds.featureStd);
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
