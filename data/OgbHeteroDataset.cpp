#include "data/OgbHeteroDataset.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>
#include <utility>

#include "data/GzLineReader.h"
#include "data/OgbRawFiles.h"

namespace gnn {
namespace fs = std::filesystem;

bool isOgbHeteroLayout(const std::string& dir) {
  return !detail::findFile(fs::path(dir), "raw/triplet-type-list.csv.gz", false).empty();
}

namespace {

// OGB's ogb/nodeproppred/master.csv, ogbn-mag's column (the only heterogeneous node set): add_inverse_edge False,
// additional node files node_year, additional edge files edge_reltype. A folder matches as OgbNodeMaster's do: by
// OGB's name or by the folder OGB's loader downloads into ('-' replaced by '_').
bool isOgbnMag(const std::string& folder) { return folder == "ogbn-mag" || folder == "ogbn_mag"; }

// A type or relation name becomes a folder name (relations/<src>___<rel>___<dst>, node-feat/<type>): one that
// could leave that folder or name no file is refused.
void checkName(std::string_view name, const GzLineReader& in, const char* what) {
  if (name.empty() || name == "." || name == ".." || name.find_first_of("/\\") != std::string_view::npos ||
      name.find('\0') != std::string_view::npos)
    in.fail(std::string(what) + " name '" + std::string(name.substr(0, 40)) +
            "' is not a folder name (empty, '.', '..', or with a slash)");
}

// A pandas CSV with a header of node types and one row of values (num-node-dict, nodetype-has-label,
// nodetype-has-split): the pairs in the file's order, with the row's line for messages.
struct TypeTable {
  std::string path;
  int64_t rowLine = 0;
  std::vector<std::pair<std::string, std::string>> cells;
};

TypeTable readTypeTable(const std::string& path) {
  GzLineReader in(path);
  TypeTable t{path, 0, {}};
  std::vector<std::string_view> f;
  std::vector<std::string> header;
  std::string_view line;
  while (in.next(line)) {
    if (line.empty()) continue;
    splitFields(line, ',', f);
    if (header.empty()) {
      std::set<std::string_view> seen;
      for (std::string_view name : f) {
        checkName(name, in, "node type");
        if (!seen.insert(name).second) in.fail("node type '" + std::string(name) + "' appears twice in the header");
        header.emplace_back(name);
      }
      continue;
    }
    if (t.rowLine > 0)
      in.fail("a second row: the file holds one row (one graph) under its header of node types");
    if (f.size() != header.size())
      in.fail("row has " + std::to_string(f.size()) + " values for " + std::to_string(header.size()) +
              " node types in the header");
    t.rowLine = in.lineNumber();
    for (size_t i = 0; i < f.size(); ++i) t.cells.emplace_back(header[i], std::string(f[i]));
  }
  if (header.empty()) in.fail("empty file, expected a header of node types and one row");
  if (t.rowLine == 0) in.fail("a header of node types but no row of values");
  return t;
}

// pandas reads True/False columns as booleans (its default true_values and false_values).
bool parseFlag(const TypeTable& t, const std::string& type, const std::string& v) {
  if (v == "True" || v == "true" || v == "TRUE") return true;
  if (v == "False" || v == "false" || v == "FALSE") return false;
  throw InputError(t.path, t.rowLine,
                   "node type '" + type + "': expected True or False, found '" + v.substr(0, 40) + "'");
}

// Node types and counts from raw/num-node-dict.csv.gz, sorted as OGB sorts them (nodetype_list = sorted(...)).
std::vector<std::pair<std::string, int64_t>> readNodeCounts(const fs::path& dir) {
  const TypeTable t = readTypeTable(detail::findFile(dir, "raw/num-node-dict.csv.gz", true));
  std::vector<std::pair<std::string, int64_t>> counts;
  for (const auto& [type, text] : t.cells) {
    // Spaces around the number allowed, as pandas and parseInt allow them.
    const size_t b = text.find_first_not_of(' '), e = text.find_last_not_of(' ');
    const std::string_view v =
        b == std::string::npos ? std::string_view() : std::string_view(text).substr(b, e - b + 1);
    int64_t n = 0;
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || ec != std::errc() || p != v.data() + v.size() || n < 0)
      throw InputError(t.path, t.rowLine,
                       "node type '" + type + "': count '" + text.substr(0, 40) + "' is not a non-negative integer");
    counts.emplace_back(type, n);
  }
  std::sort(counts.begin(), counts.end());
  return counts;
}

// Triplets from raw/triplet-type-list.csv.gz, each naming node types of the graph, sorted as OGB sorts them.
std::vector<EdgeType> readTriplets(const fs::path& dir, const HeteroGraph& g) {
  GzLineReader in(detail::findFile(dir, "raw/triplet-type-list.csv.gz", true));
  std::vector<EdgeType> types;
  std::set<EdgeType> seen;
  std::vector<std::string_view> f;
  std::string_view line;
  while (in.next(line)) {
    if (line.empty()) continue;
    splitFields(line, ',', f);
    if (f.size() != 3) in.fail("expected 'src,rel,dst', found " + std::to_string(f.size()) + " fields");
    checkName(f[1], in, "relation");
    for (std::string_view end : {f[0], f[2]})
      if (!g.hasNodeType(std::string(end)))
        in.fail("node type '" + std::string(end.substr(0, 40)) + "' is not in num-node-dict");
    EdgeType t{std::string(f[0]), std::string(f[1]), std::string(f[2])};
    if (!seen.insert(t).second) in.fail("edge type " + t.str() + " listed twice");
    types.push_back(std::move(t));
  }
  if (types.empty()) in.fail("no edge type listed");
  std::sort(types.begin(), types.end());
  return types;
}

// One relation's edge.csv: ids checked against the source and the destination type's counts. With `inverse`, each
// line (s, d) gives (s, d) then (d, s), OGB's np.repeat layout (read_csv_heterograph_raw, add_inverse_edge).
Tensor readRelationEdges(const std::string& path, const EdgeType& t, int64_t ns, int64_t nd, bool inverse,
                         int64_t& lines) {
  GzLineReader in(path);
  detail::ChunkedArray<int64_t> pairs;
  std::vector<std::string_view> f;
  std::string_view line;
  while (in.next(line)) {
    if (line.empty()) continue;
    splitFields(line, ',', f);
    if (f.size() != 2) in.fail("expected 'src,dst', found " + std::to_string(f.size()) + " fields");
    const int64_t s = parseInt(f[0], in), d = parseInt(f[1], in);
    if (s < 0 || s >= ns)
      in.fail("edge " + std::to_string(s) + " -> " + std::to_string(d) + ": source " + std::to_string(s) +
              " is outside node type '" + t.src + "' (" + std::to_string(ns) + " nodes)");
    if (d < 0 || d >= nd)
      in.fail("edge " + std::to_string(s) + " -> " + std::to_string(d) + ": destination " + std::to_string(d) +
              " is outside node type '" + t.dst + "' (" + std::to_string(nd) + " nodes)");
    pairs.push(s);
    pairs.push(d);
  }
  lines = pairs.size() / 2;
  return edgeIndexFromPairs(pairs, inverse);
}

// Each row twice, in place of once (np.repeat(feat, 2, axis=0): OGB's edge features under add_inverse_edge).
Tensor repeatRows(const Tensor& t) {
  Shape shape = t.shape();
  shape[0] *= 2;
  Tensor out = Tensor::empty(shape, t.dtype());
  const size_t row = static_cast<size_t>(t.cols()) * dtypeSize(t.dtype());
  const auto* in = static_cast<const unsigned char*>(t.raw());
  auto* o = static_cast<unsigned char*>(out.raw());
  for (int64_t i = 0; i < t.rows(); ++i) {
    std::copy(in + i * row, in + (i + 1) * row, o + 2 * i * row);
    std::copy(in + i * row, in + (i + 1) * row, o + (2 * i + 1) * row);
  }
  return out;
}

std::vector<std::string> fileList(const std::optional<std::vector<std::string>>& asked, bool mag, const char* magFile,
                                  const char* prefix) {
  std::vector<std::string> names;
  if (asked) names = *asked;
  else if (mag) names = {magFile};
  for (const std::string& n : names)
    if (n.size() <= 5 || n.compare(0, 5, prefix) != 0 || n.find_first_of("/\\") != std::string::npos)
      throw std::invalid_argument("additional file '" + n + "': OGB names them " + prefix +
                                  "<what> (node_year, edge_reltype) and reads them beside the type's files");
  return names;
}

// A relation's folder: edge.csv, its count, and the optional edge features and additional edge files. OGB's
// edge_feat_dict[triplet][num_edge:num_edge + num_edge] (read_csv_heterograph_raw) would keep no row of a one-graph
// file: a slip no OGB dataset meets (none has hetero edge features); the rows are taken whole here.
void readRelation(const fs::path& dir, const EdgeType& t, HeteroGraph& g, bool inverse,
                  const std::vector<std::string>& edgeFiles) {
  const fs::path rel = dir / "raw" / "relations" / (t.src + "___" + t.rel + "___" + t.dst);
  const std::string edgePath = detail::findFile(rel, "edge.csv.gz", true);
  // OGB's add_inverse_edge puts (d, s) after each (s, d) in the same relation whatever its types: between two
  // types, d would index the source type's nodes. No OGB set asks for it (ogbn-mag: False); refused rather than
  // read into a relation whose rows index the wrong types.
  if (inverse && t.src != t.dst)
    throw InputError(edgePath, 0,
                     "inverse edges asked for, but relation " + t.str() + " joins two node types: the reverse of '" +
                         t.src + "' -> '" + t.dst + "' cannot be stored in it (read without inverse edges; "
                         "toUndirected adds it as a rev_" + t.rel + " relation)");
  int64_t lines = 0;
  EdgeStore& s = g.addEdgeType(
      t, readRelationEdges(edgePath, t, g.numNodes(t.src), g.numNodes(t.dst), inverse, lines));
  // OGB reads num-edge-list with edge.csv as necessary files ('No necessary file' without it).
  detail::findFile(rel, "num-edge-list.csv.gz", true);
  detail::checkCount(rel, "num-edge-list.csv.gz", lines, "edge", "edge.csv has " + std::to_string(lines));
  if (const std::string feat = detail::findFile(rel, "edge-feat.csv.gz", false); !feat.empty()) {
    Tensor a = detail::readFloatRows(feat);
    if (a.dim(0) != lines)
      throw InputError(feat, a.dim(0), "has " + std::to_string(a.dim(0)) + " feature rows for the " +
                                           std::to_string(lines) + " edges of edge.csv");
    s.edgeAttr = inverse ? repeatRows(a) : std::move(a);
  }
  for (const std::string& name : edgeFiles) {
    if (const std::string path = detail::findFile(rel, name + ".csv.gz", false); !path.empty()) {
      Tensor r = detail::readIntRows(path, lines, "edge");
      s.edgeReltype = inverse ? repeatRows(r) : std::move(r);
    }
  }
}

// Node features and additional node files per type, where present (OGB skips a type without them).
void readNodeFiles(const fs::path& dir, HeteroGraph& g, const std::vector<std::string>& nodeFiles) {
  for (const std::string& type : g.nodeTypes()) {
    NodeStore& s = g.node(type);
    const fs::path sub = dir / "raw" / "node-feat" / type;
    if (const std::string feat = detail::findFile(sub, "node-feat.csv.gz", false); !feat.empty()) {
      s.x = detail::readFloatRows(feat);
      if (s.x.dim(0) != s.numNodes)
        throw InputError(feat, s.x.dim(0), "has " + std::to_string(s.x.dim(0)) + " feature rows for the " +
                                               std::to_string(s.numNodes) + " nodes of type '" + type + "'");
    }
    for (const std::string& name : nodeFiles)
      if (const std::string path = detail::findFile(sub, name + ".csv.gz", false); !path.empty())
        s.nodeFiles[name] = detail::readIntRows(path, s.numNodes, "node");
  }
}

// Labels of one type, one integer per node (OGB holds them [N, 1], PyG's OGB_MAG as y [N]: kept as [N]).
Tensor readTypeLabels(const std::string& path, const std::string& type, int64_t numNodes, int64_t& numClasses) {
  GzLineReader in(path);
  std::vector<int64_t> y;
  std::string_view line;
  while (in.next(line)) {
    if (line.empty()) continue;
    const int64_t v = parseInt(line, in);
    if (v < 0) in.fail("negative class label " + std::to_string(v));
    if (v >= OgbNodeDataset::kMaxClasses)
      in.fail("class label " + std::to_string(v) + " is out of range (labels are 0 .. " +
              std::to_string(OgbNodeDataset::kMaxClasses - 1) + ")");
    if (static_cast<int64_t>(y.size()) == numNodes)
      in.fail("more labels than the " + std::to_string(numNodes) + " nodes of type '" + type + "'");
    y.push_back(v);
    numClasses = std::max(numClasses, v + 1);
  }
  if (static_cast<int64_t>(y.size()) != numNodes)
    throw InputError(in.path(), in.lineNumber(),
                     "has " + std::to_string(y.size()) + " labels for the " + std::to_string(numNodes) +
                         " nodes of type '" + type + "'");
  return Tensor::fromVector(y);
}

// The types a has-label / has-split table marks True; each must be a node type of the graph, and one at least
// (OGB: 'No node label file found.', 'No split file found.').
std::vector<std::string> markedTypes(const std::string& path, const HeteroGraph& g, const char* what) {
  const TypeTable t = readTypeTable(path);
  std::vector<std::string> marked;
  for (const auto& [type, v] : t.cells) {
    if (!g.hasNodeType(type))
      throw InputError(t.path, 1, "node type '" + type + "' is not in num-node-dict");
    if (parseFlag(t, type, v)) marked.push_back(type);
  }
  if (marked.empty()) throw InputError(t.path, t.rowLine, std::string("no node type has ") + what);
  return marked;
}

void readLabelsAndSplit(const fs::path& dir, const std::string& splitName, OgbHeteroDataset& ds) {
  HeteroGraph& g = ds.graph;
  for (const std::string& type :
       markedTypes(detail::findFile(dir, "raw/nodetype-has-label.csv.gz", true), g, "labels")) {
    const std::string path = detail::findFile(dir / "raw" / "node-label" / type, "node-label.csv.gz", true);
    g.node(type).y = readTypeLabels(path, type, g.numNodes(type), ds.numClasses[type]);
  }
  const fs::path splitRoot = dir / "split";
  const fs::path split = splitRoot / detail::splitFolder(splitRoot, splitName);
  for (const std::string& type :
       markedTypes(detail::findFile(split, "nodetype-has-split.csv.gz", true), g, "a split")) {
    NodeStore& s = g.node(type);
    s.trainIdx = detail::readIndexList(detail::findFile(split / type, "train.csv.gz", true), s.numNodes);
    s.validIdx = detail::readIndexList(detail::findFile(split / type, "valid.csv.gz", true), s.numNodes);
    s.testIdx = detail::readIndexList(detail::findFile(split / type, "test.csv.gz", true), s.numNodes);
    s.hasSplit = true;
  }
}

// Each featured type normalised on its own, as OgbNodeDataset normalises its one type.
void normalize(const fs::path& dir, FeatureNormalization asked, OgbHeteroDataset& ds) {
  for (const std::string& type : ds.graph.nodeTypes()) {
    NodeStore& s = ds.graph.node(type);
    if (!s.x.defined()) continue;
    FeatureNormalization n = asked;
    if (n == FeatureNormalization::Auto)
      n = s.x.matrix<float>().minCoeff() >= 0 ? FeatureNormalization::Row : FeatureNormalization::Standard;
    ds.normalization[type] = n;
    if (n == FeatureNormalization::Row) {
      normalizeRows(s.x);
    } else if (n == FeatureNormalization::Standard) {
      if (s.trainIdx.empty())
        throw InputError((dir / "split").string(), 0,
                         "no training node of type '" + type +
                             "': standard feature normalisation takes each feature's mean and std from them (ask "
                             "for row or none)");
      standardizeFeatures(s.x, detail::maskOf(s.trainIdx, s.numNodes), ds.featureMean[type], ds.featureStd[type]);
    }
  }
}

}  // namespace

OgbHeteroDataset OgbHeteroDataset::load(const std::string& dirName, const OgbHeteroOptions& options) {
  if (options.featuresOnly && options.normalization != FeatureNormalization::None &&
      options.normalization != FeatureNormalization::Row)
    throw std::invalid_argument("OgbHeteroDataset::load: featuresOnly reads no split for standard normalisation");
  const fs::path dir(dirName);
  if (!fs::is_directory(dir)) throw InputError(dirName, 0, "dataset directory not found");
  OgbHeteroDataset ds;
  ds.name = detail::datasetName(dirName);
  const bool mag = isOgbnMag(ds.name);
  HeteroGraph& g = ds.graph;
  for (const auto& [type, count] : readNodeCounts(dir)) g.addNodeType(type, count);
  ds.inverseEdgesAdded = options.addInverseEdges == AddInverseEdges::On;  // Auto: OGB's ogbn-mag says False
  const std::vector<std::string> edgeFiles = fileList(options.additionalEdgeFiles, mag, "edge_reltype", "edge_");
  for (const std::string& name : edgeFiles)
    if (name != "edge_reltype")
      throw std::invalid_argument("additional edge file '" + name + "': only edge_reltype has a place in HeteroGraph");
  for (const EdgeType& t : readTriplets(dir, g)) readRelation(dir, t, g, ds.inverseEdgesAdded, edgeFiles);
  readNodeFiles(dir, g, fileList(options.additionalNodeFiles, mag, "node_year", "node_"));
  if (!options.featuresOnly) readLabelsAndSplit(dir, options.split, ds);
  normalize(dir, options.normalization, ds);
  if (options.toUndirected) g.toUndirected();
  return ds;
}

}  // namespace gnn
