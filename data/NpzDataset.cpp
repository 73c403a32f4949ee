#include "data/NpzDataset.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "data/EdgeInputGather.h"
#include "data/GraphormerEncodings.h"
#include "gnn/system/Check.h"

namespace gnn {

namespace {
constexpr int kF = MoleculeGraph::kAtomFeatures, kB = MoleculeGraph::kBondFeatures;
constexpr int64_t kFar = GraphormerEncodings::kUnreachable;

bool isUnsigned(const std::string& descr) { return descr == "|u1" || descr == "<u2" || descr == "<u4"; }

template <class T, class Out>
void readAs(const NpzFile::Array& a, int64_t begin, int64_t count, Out* out, bool mapTop, Out topAs) {
  const unsigned char* in = a.data + static_cast<size_t>(begin) * sizeof(T);
  for (int64_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, in + static_cast<size_t>(i) * sizeof(T), sizeof(T));  // the mapped data need not be aligned
    out[i] = mapTop && v == std::numeric_limits<T>::max() ? topAs : static_cast<Out>(v);
  }
}

// Items [begin, begin + count) of an integer array in any dtype this format uses. `topAs`, when given, is what
// an unsigned dtype's largest value stands for (format 2's sentinels: 510 in spatial_pos, -1 in path_via).
template <class Out>
void readInts(const NpzFile::Array& a, int64_t begin, int64_t count, Out* out, std::optional<Out> topAs = {}) {
  const bool map = topAs.has_value();
  const Out top = topAs.value_or(0);
  if (a.descr == "|u1") return readAs<uint8_t>(a, begin, count, out, map, top);
  if (a.descr == "<u2") return readAs<uint16_t>(a, begin, count, out, map, top);
  if (a.descr == "<u4") return readAs<uint32_t>(a, begin, count, out, map, top);
  if (a.descr == "<i2") return readAs<int16_t>(a, begin, count, out, false, top);
  if (a.descr == "<i4") return readAs<int32_t>(a, begin, count, out, false, top);
  GNN_ASSERT(a.descr == "<i8", "readInts: dtype ", a.descr, " was not checked when the file was opened");
  readAs<int64_t>(a, begin, count, out, false, top);
}

Tensor readTensor(const NpzFile::Array& a, int64_t begin, int64_t count, Shape shape,
                  std::optional<int64_t> topAs = {}) {
  Tensor t(std::move(shape), DType::I64);
  readInts<int64_t>(a, begin, count, t.data<int64_t>(), topAs);
  return t;
}
}  // namespace

// On-disk dtypes are the narrowest that hold every value (docs/datasets.md): OGB's feature indices fit in
// uint8; format 2 chooses uint8, uint16 or uint32 for local node indices, distances, degrees and path nodes by
// the largest value the whole file holds (NpzWriter's narrow arrays), format 1 stored int32 and int16.
// NpzDataset widens them to int64 on get(), the dtype Graph and OGB use.
NpzDatasetWriter::NpzDatasetWriter(Options options)
    : options_(std::move(options)), out_(options_.path, options_.stateDir) {
  GNN_CHECK_ARG(options_.formatVersion == 1 || options_.formatVersion == 2,
                "NpzDatasetWriter: format version must be 1 or 2, got ", options_.formatVersion);
  const bool v2 = options_.formatVersion == 2;
  const int64_t t = options_.numTargets;
  x_ = out_.addArray("x", "|u1", 1, {kF});
  edgeIndex_ = v2 ? out_.addNarrowArray("edge_index", {}, 2) : out_.addArray("edge_index", "<i4", 4, {}, 2);
  edgeAttr_ = out_.addArray("edge_attr", "|u1", 1, {kB});
  nodePtr_ = out_.addArray("node_ptr", "<i8", 8);
  edgePtr_ = out_.addArray("edge_ptr", "<i8", 8);
  y_ = out_.addArray("y", "<f4", 4, {t});
  yMask_ = out_.addArray("y_mask", "|u1", 1, {t});
  index_ = out_.addArray("source_index", "<i8", 8);
  line_ = out_.addArray("source_line", "<i8", 8);
  smiles_ = out_.addArray("smiles", "|u1", 1);
  smilesPtr_ = out_.addArray("smiles_ptr", "<i8", 8);
  if (options_.positions) {
    pos_ = out_.addArray("pos", "<f4", 4, {3});
    z_ = out_.addArray("z", "|u1", 1);
  }
  if (options_.graphormerMaxDist > 0 && v2) {
    // Graphormer's encodings in O(n^2) per graph: edge_input is gathered from path_via when read, for any K.
    spatialPos_ = out_.addNarrowArray("spatial_pos", {}, 1, kFar);
    pairPtr_ = out_.addArray("pair_ptr", "<i8", 8);
    inDegree_ = out_.addNarrowArray("in_degree");
    pathVia_ = out_.addNarrowArray("path_via", {}, 1, -1);
    maxSlots_ = 1;  // as format 1's edge_input, at least one slot
  } else if (options_.graphormerMaxDist > 0) {
    spatialPos_ = out_.addArray("spatial_pos", "<i2", 2);
    pairPtr_ = out_.addArray("pair_ptr", "<i8", 8);
    inDegree_ = out_.addArray("in_degree", "<i2", 2);
    const int16_t none = -1;
    edgeInput_ = out_.addPaddedArray("edge_input", "<i2", 2, {kB}, std::string(reinterpret_cast<const char*>(&none), 2),
                                     1);
  }
  const int64_t zero = 0;
  out_.append(nodePtr_, &zero, 8);
  out_.append(edgePtr_, &zero, 8);
  out_.append(smilesPtr_, &zero, 8);
  if (pairPtr_ >= 0) out_.append(pairPtr_, &zero, 8);
}

void NpzDatasetWriter::add(const MoleculeGraph& g, int64_t index, int64_t line) {
  const std::string& smiles = g.smiles;
  const int64_t n = g.numNodes, e = g.numEdges();
  GNN_CHECK_ARG(static_cast<int>(g.y.size()) == options_.numTargets, "NpzDatasetWriter: graph has ", g.y.size(),
                " targets, the dataset ", options_.numTargets);
  const bool v2 = options_.formatVersion == 2;
  u8_.assign(g.x.begin(), g.x.end());
  out_.append(x_, u8_.data(), u8_.size());
  for (int part = 0; part < 2; ++part) {
    const std::vector<int64_t>& ends = part == 0 ? g.src : g.dst;
    i32_.assign(ends.begin(), ends.end());
    if (v2)
      out_.appendNarrow(edgeIndex_, i32_.data(), i32_.size(), part);
    else
      out_.append(edgeIndex_, i32_.data(), i32_.size() * 4, part);
  }
  u8_.assign(g.edgeAttr.begin(), g.edgeAttr.end());
  out_.append(edgeAttr_, u8_.data(), u8_.size());
  nodes_ += n;
  edges_ += e;
  out_.append(nodePtr_, &nodes_, 8);
  out_.append(edgePtr_, &edges_, 8);
  out_.append(y_, g.y.data(), g.y.size() * 4);
  out_.append(yMask_, g.yMask.data(), g.yMask.size());
  out_.append(index_, &index, 8);
  out_.append(line_, &line, 8);
  out_.append(smiles_, smiles.data(), smiles.size());
  smilesBytes_ += static_cast<int64_t>(smiles.size());
  out_.append(smilesPtr_, &smilesBytes_, 8);
  if (pos_ >= 0) {
    GNN_CHECK_ARG(static_cast<int64_t>(g.pos.size()) == 3 * n, "NpzDatasetWriter: molecule at line ", line,
                  " has no coordinates but the dataset stores pos");
    out_.append(pos_, g.pos.data(), g.pos.size() * 4);
    u8_.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) u8_[i] = static_cast<uint8_t>(g.z[i]);
    out_.append(z_, u8_.data(), u8_.size());
  }
  if (spatialPos_ >= 0 && v2) {
    GNN_CHECK_ARG(g.inDegree.size() == static_cast<size_t>(n) && g.spatialPos.size() == static_cast<size_t>(n * n) &&
                      g.pathVia.size() == static_cast<size_t>(n * n),
                  "NpzDatasetWriter: molecule at line ", line, " lacks Graphormer's paths (GraphormerEncodings)");
    maxSlots_ = std::max<int64_t>(maxSlots_, std::min<int64_t>(options_.graphormerMaxDist, std::max<int64_t>(1, n - 1)));
    i32_.assign(g.spatialPos.begin(), g.spatialPos.end());
    out_.appendNarrow(spatialPos_, i32_.data(), i32_.size());
    pairs_ += n * n;
    out_.append(pairPtr_, &pairs_, 8);
    i32_.assign(g.inDegree.begin(), g.inDegree.end());
    out_.appendNarrow(inDegree_, i32_.data(), i32_.size());
    out_.appendNarrow(pathVia_, g.pathVia.data(), g.pathVia.size());
  } else if (spatialPos_ >= 0) {
    const int64_t slots = std::min<int64_t>(options_.graphormerMaxDist, std::max<int64_t>(1, n - 1));
    GNN_CHECK_ARG(g.inDegree.size() == static_cast<size_t>(n) && g.maxDist >= slots &&
                      g.maxDist <= options_.graphormerMaxDist &&
                      g.edgeInput.size() == static_cast<size_t>(n * n * g.maxDist * kB),
                  "NpzDatasetWriter: molecule at line ", line, " lacks Graphormer encodings up to ",
                  options_.graphormerMaxDist, " hops");
    i16_.assign(g.spatialPos.begin(), g.spatialPos.end());
    out_.append(spatialPos_, i16_.data(), i16_.size() * 2);
    pairs_ += n * n;
    out_.append(pairPtr_, &pairs_, 8);
    i16_.assign(g.inDegree.begin(), g.inDegree.end());
    out_.append(inDegree_, i16_.data(), i16_.size() * 2);
    // Hop slots past n - 1 are -1 in every graph: keep only the first `slots` of each pair.
    if (g.maxDist == slots) {
      out_.appendRows(edgeInput_, g.edgeInput.data(), n * n, slots);
    } else {
      i16_.resize(static_cast<size_t>(n * n * slots * kB));
      for (int64_t p = 0; p < n * n; ++p)
        std::copy_n(g.edgeInput.data() + p * g.maxDist * kB, slots * kB, i16_.data() + p * slots * kB);
      out_.appendRows(edgeInput_, i16_.data(), n * n, slots);
    }
  }
  ++graphs_;
}

std::vector<int64_t> NpzDatasetWriter::snapshot() {
  std::vector<int64_t> state = out_.snapshot();
  state.insert(state.end(), {graphs_, nodes_, edges_, pairs_, smilesBytes_, maxSlots_});
  return state;
}

void NpzDatasetWriter::restore(std::vector<int64_t> state) {
  if (state.size() < 6) throw std::runtime_error(options_.path + ": resume state does not match the dataset");
  const auto counts = state.end() - 6;
  graphs_ = counts[0];
  nodes_ = counts[1];
  edges_ = counts[2];
  pairs_ = counts[3];
  smilesBytes_ = counts[4];
  maxSlots_ = counts[5];
  state.erase(counts, state.end());
  out_.restore(state);
}

int NpzDatasetWriter::graphormerMaxDist() const {
  if (edgeInput_ >= 0) return static_cast<int>(out_.width(edgeInput_));
  return pathVia_ >= 0 ? static_cast<int>(maxSlots_) : 0;
}

void NpzDatasetWriter::addSplit(const std::string& name, const std::vector<int64_t>& positions) {
  const int a = out_.addArray("split_" + name, "<i8", 8);
  out_.append(a, positions.data(), positions.size() * 8);
}

void NpzDatasetWriter::finish(const std::string& metadataJson, const std::function<void()>& poll) {
  // With no targets y's rows hold no bytes, so the writer cannot count them: [G, 0], not [0, 0].
  out_.setRows(y_, graphs_);
  out_.setRows(yMask_, graphs_);
  if (pathVia_ >= 0) {
    // The K graphs get unless a reader asks for another (any K reads exactly: path_via keeps whole paths).
    const int k = out_.addArray("multi_hop_max_dist", "<i8", 8);
    out_.append(k, &maxSlots_, 8);
  }
  const int m = out_.addArray("metadata", "|u1", 1);
  out_.append(m, metadataJson.data(), metadataJson.size());
  out_.finish(poll);
}

NpzDataset::NpzDataset(const std::string& path) : file_(path) {
  const NpzFile::Array& np = file_.get("node_ptr", "<i8", 1);
  const NpzFile::Array& ep = file_.get("edge_ptr", "<i8", 1);
  numGraphs_ = np.shape[0] - 1;
  if (numGraphs_ < 0 || ep.shape[0] != np.shape[0])
    throw std::runtime_error(path + ": node_ptr and edge_ptr disagree on the number of graphs");
  nodePtr_ = reinterpret_cast<const int64_t*>(np.data);
  edgePtr_ = reinterpret_cast<const int64_t*>(ep.data);
  const NpzFile::Array& x = file_.get("x", "|u1", 2);
  // The format is told by edge_index's dtype: int32 in format 1, the narrowest unsigned type in format 2.
  const NpzFile::Array& ei = file_.get("edge_index");
  const bool v2 = isUnsigned(ei.descr);
  version_ = v2 ? 2 : 1;
  file_.get("edge_index", v2 ? ei.descr : "<i4", 2);
  file_.get("edge_attr", "|u1", 2);
  if (file_.has("z")) file_.get("z", "|u1", 1);
  if (x.shape[0] != nodePtr_[numGraphs_] || ei.shape[1] != edgePtr_[numGraphs_])
    throw std::runtime_error(path + ": x or edge_index length differs from node_ptr / edge_ptr totals");
  const NpzFile::Array& y = file_.get("y", "<f4", 2);
  numTargets_ = static_cast<int>(y.shape[1]);
  // Datasets without targets written before y's rows were fixed hold y as [0, 0]; any other count is wrong.
  if (y.shape[0] != numGraphs_ && !(numTargets_ == 0 && y.shape[0] == 0))
    throw std::runtime_error(path + ": y has " + std::to_string(y.shape[0]) + " rows for " +
                             std::to_string(numGraphs_) + " graphs");
  if (file_.has("metadata")) {
    nlohmann::json meta = nlohmann::json::parse(metadataJson(), nullptr, false);
    if (meta.is_object() && meta.contains("targets") && meta["targets"].is_array())
      for (const auto& t : meta["targets"])
        if (t.is_string()) targetNames_.push_back(t.get<std::string>());
  }
  if (file_.has("smiles") && file_.has("smiles_ptr")) {
    const NpzFile::Array& sp = file_.get("smiles_ptr", "<i8", 1);
    const NpzFile::Array& sd = file_.get("smiles", "|u1", 1);
    if (sp.shape[0] != numGraphs_ + 1)
      throw std::runtime_error(path + ": smiles_ptr has " + std::to_string(sp.shape[0]) + " entries for " +
                               std::to_string(numGraphs_) + " graphs");
    smilesPtr_ = reinterpret_cast<const int64_t*>(sp.data);
    smilesData_ = reinterpret_cast<const char*>(sd.data);
    smilesSize_ = sd.shape[0];
  }
  if (!v2 && file_.has("edge_input")) {
    maxDist_ = static_cast<int>(file_.get("edge_input", "<i2", 3).shape[1]);
    pairPtr_ = reinterpret_cast<const int64_t*>(file_.get("pair_ptr", "<i8", 1).data);
    file_.get("spatial_pos", "<i2", 1);
    file_.get("in_degree", "<i2", 1);
  }
  if (v2 && file_.has("path_via")) {
    pathVia_ = &file_.get("path_via");
    pairPtr_ = reinterpret_cast<const int64_t*>(file_.get("pair_ptr", "<i8", 1).data);
    for (const char* name : {"spatial_pos", "in_degree", "path_via"}) {
      const NpzFile::Array& a = file_.get(name);
      if (!isUnsigned(a.descr) || a.shape.size() != 1)
        throw std::runtime_error(path + ": array '" + name + "' has dtype " + a.descr + " and rank " +
                                 std::to_string(a.shape.size()) + ", expected |u1, <u2 or <u4 and rank 1");
    }
    const NpzFile::Array& k = file_.get("multi_hop_max_dist", "<i8", 1);
    if (k.shape[0] != 1) throw std::runtime_error(path + ": multi_hop_max_dist: shape is not (1,)");
    int64_t stored = 0;
    std::memcpy(&stored, k.data, 8);
    // Checked in validate() against the graphs' sizes, once the offsets are known to be sound.
    maxDist_ = static_cast<int>(std::clamp<int64_t>(stored, 0, std::numeric_limits<int>::max()));
    if (maxDist_ != stored) maxDist_ = 0;
  }
  hops_ = maxDist_;
  validate();
}

namespace {

[[noreturn]] void refuse(const NpzFile& file, const std::string& member, const std::string& why) {
  throw std::runtime_error(file.path() + ": " + member + ": " + why);
}

// An array's shape, when the file has the array.
void expectShape(const NpzFile& file, const std::string& name, std::vector<int64_t> shape) {
  if (!file.has(name)) return;
  const auto& a = file.get(name);
  if (a.shape != shape) {
    std::string got, want;
    for (int64_t d : a.shape) got += (got.empty() ? "" : ", ") + std::to_string(d);
    for (int64_t d : shape) want += (want.empty() ? "" : ", ") + std::to_string(d);
    refuse(file, name, "shape (" + got + "), expected (" + want + ")");
  }
}

// Offsets: start at 0, never decrease, end at the length of what they index.
void checkOffsets(const NpzFile& file, const char* name, const int64_t* ptr, int64_t numGraphs, int64_t total) {
  if (ptr[0] != 0) refuse(file, name, "does not start at 0");
  for (int64_t g = 0; g < numGraphs; ++g)
    if (ptr[g + 1] < ptr[g]) refuse(file, name, "decreases at graph " + std::to_string(g));
  if (ptr[numGraphs] != total)
    refuse(file, name, "ends at " + std::to_string(ptr[numGraphs]) + " but indexes " + std::to_string(total) + " rows");
}

// Arrays come in groups that are written together; one without the others (or a name this format does not
// have) is a damaged directory, which would otherwise silently drop a feature.
void checkArrayNames(const NpzFile& file, bool v2) {
  std::vector<std::string> known = {"x", "edge_index", "edge_attr", "node_ptr", "edge_ptr", "y", "y_mask",
                                    "source_index", "source_line", "smiles", "smiles_ptr", "pos", "z",
                                    "spatial_pos", "pair_ptr", "in_degree", "metadata"};
  const std::vector<std::string> graphormer =
      v2 ? std::vector<std::string>{"spatial_pos", "pair_ptr", "in_degree", "path_via", "multi_hop_max_dist"}
         : std::vector<std::string>{"spatial_pos", "pair_ptr", "in_degree", "edge_input"};
  known.push_back(graphormer.back());
  if (v2) known.push_back("path_via");
  for (const auto& [name, a] : file.arrays())
    if (name.rfind("split_", 0) != 0 && std::find(known.begin(), known.end(), name) == known.end())
      refuse(file, name,
             std::string("is not an array of this dataset format") +
                 (v2 ? " (format 2, told by edge_index's unsigned dtype)" : " (format 1, told by edge_index's int32)") +
                 " (a damaged or foreign file)");
  for (const std::vector<std::string>& group :
       {std::vector<std::string>{"smiles", "smiles_ptr"}, std::vector<std::string>{"pos", "z"}, graphormer}) {
    size_t present = 0;
    for (const auto& name : group) present += file.has(name) ? 1 : 0;
    if (present != 0 && present != group.size()) refuse(file, group[0], "present without the rest of its group");
  }
}

// Every edge joins two nodes of its own molecule (indices are local to the molecule: 0 .. n-1).
void checkEdgeEnds(const NpzFile& file, const int64_t* nodePtr, const int64_t* edgePtr, int64_t numGraphs) {
  const NpzFile::Array& ei = file.get("edge_index");
  const int64_t E = ei.shape[1];
  std::vector<int64_t> ends;
  for (int64_t g = 0; g < numGraphs; ++g) {
    const int64_t n = nodePtr[g + 1] - nodePtr[g], e0 = edgePtr[g], e = edgePtr[g + 1] - e0;
    ends.resize(static_cast<size_t>(2 * e));
    readInts<int64_t>(ei, e0, e, ends.data());
    readInts<int64_t>(ei, E + e0, e, ends.data() + e);
    for (int64_t k = 0; k < e; ++k) {
      const int64_t a = ends[k], b = ends[e + k];
      if (a < 0 || a >= n || b < 0 || b >= n)
        refuse(file, "edge_index", "edge " + std::to_string(e0 + k) + " (" + std::to_string(a) + " -> " +
                                       std::to_string(b) + ") of graph " + std::to_string(g) + " leaves its " +
                                       std::to_string(n) + " nodes");
    }
  }
}

// y_mask holds 0 or 1. A label marked present must be a number (missing ones are NaN with y_mask 0), and
// coordinates must be finite: the writer never stores otherwise, so either is damage that a recomputed CRC-32
// would let through.
void checkValues(const NpzFile& file) {
  const NpzFile::Array& m = file.get("y_mask");
  for (uint64_t k = 0; k < m.bytes; ++k)
    if (m.data[k] > 1) refuse(file, "y_mask", "value " + std::to_string(m.data[k]) + " is not 0 or 1");
  {
    const NpzFile::Array& y = file.get("y");
    const int64_t t = y.shape.size() == 2 ? y.shape[1] : 0;
    for (int64_t k = 0; k < y.numel(); ++k) {
      float v;
      std::memcpy(&v, y.data + k * 4, 4);
      if (m.data[k] == 1 && !std::isfinite(v))
        refuse(file, "y", "graph " + std::to_string(t ? k / t : 0) + " target " + std::to_string(t ? k % t : 0) +
                              " is " + std::to_string(v) + " but marked present (y_mask 1)");
    }
  }
  if (file.has("pos")) {
    const NpzFile::Array& pos = file.get("pos");
    for (int64_t k = 0; k < pos.numel(); ++k) {
      float v;
      std::memcpy(&v, pos.data + k * 4, 4);
      if (!std::isfinite(v))
        refuse(file, "pos", "atom " + std::to_string(k / 3) + " has a coordinate " + std::to_string(v));
    }
  }
}

}  // namespace

// The structure every reader relies on, checked once when the file is opened (a linear pass; ~0.1 s per 10M
// edges): a damaged or crafted file is refused here, naming the array, instead of reading out of bounds or
// training on an edge that points into another molecule.
void NpzDataset::validate() const {
  checkArrayNames(file_, version_ == 2);
  const int64_t N = file_.get("x").shape[0], E = file_.get("edge_index").shape[1];
  checkOffsets(file_, "node_ptr", nodePtr_, numGraphs_, N);
  checkOffsets(file_, "edge_ptr", edgePtr_, numGraphs_, E);
  expectShape(file_, "x", {N, kF});
  expectShape(file_, "edge_index", {2, E});
  expectShape(file_, "edge_attr", {E, kB});
  expectShape(file_, "y_mask", file_.get("y").shape);
  expectShape(file_, "source_index", {numGraphs_});
  expectShape(file_, "source_line", {numGraphs_});
  if (!file_.has("source_index") || !file_.has("source_line") || !file_.has("y_mask"))
    refuse(file_, "source_index/source_line/y_mask", "missing");
  expectShape(file_, "pos", {N, 3});
  expectShape(file_, "z", {N});
  expectShape(file_, "in_degree", {N});
  checkEdgeEnds(file_, nodePtr_, edgePtr_, numGraphs_);
  checkValues(file_);
  if (smilesPtr_) checkOffsets(file_, "smiles_ptr", smilesPtr_, numGraphs_, smilesSize_);
  if (pairPtr_) {
    const int64_t P = file_.get("spatial_pos").shape[0];
    if (file_.get("pair_ptr").shape[0] != numGraphs_ + 1)
      refuse(file_, "pair_ptr", "length is not the graph count + 1");
    checkOffsets(file_, "pair_ptr", pairPtr_, numGraphs_, P);
    for (int64_t g = 0; g < numGraphs_; ++g) {
      const int64_t n = nodePtr_[g + 1] - nodePtr_[g];
      if (pairPtr_[g + 1] - pairPtr_[g] != n * n)
        refuse(file_, "pair_ptr", "graph " + std::to_string(g) + " has no N x N block");
    }
    expectShape(file_, "edge_input", {P, maxDist_, kB});
    expectShape(file_, "spatial_pos", {P});
    expectShape(file_, "path_via", {P});
    // What the writer stores: the K asked for, capped at the longest possible path, and at least 1 (get()
    // allocates n^2 K items per graph, so a crafted K must not pass).
    if (pathVia_ && (maxDist_ < 1 || maxDist_ > std::max<int64_t>(1, maxNodes() - 1)))
      refuse(file_, "multi_hop_max_dist", "is not between 1 and the largest graph's nodes - 1");
    if (pathVia_) validatePaths();
  }
  for (const std::string& name : splitNames()) {
    const NpzFile::Array& a = file_.get("split_" + name, "<i8", 1);
    const auto* v = reinterpret_cast<const int64_t*>(a.data);
    for (int64_t k = 0; k < a.shape[0]; ++k)
      if (v[k] < 0 || v[k] >= numGraphs_)
        refuse(file_, "split_" + name, "position " + std::to_string(v[k]) + " is not a graph");
  }
}

// path_via is followed recursively when edge_input is gathered, so a crafted one could loop or step off the
// graph: every pair must be what Floyd-Warshall leaves (docs/datasets.md). A pair (i, j) with a via m splits
// into (i, m) and (m, j), both strictly closer than (i, j) by spatial_pos, so every walk ends; a pair without
// one is the diagonal, one edge (distance 1) or unreachable (510). One pass over the N^2 entries of each graph.
void NpzDataset::validatePaths() const {
  const NpzFile::Array& sp = file_.get("spatial_pos");
  const NpzFile::Array& ei = file_.get("edge_index");
  const int64_t E = ei.shape[1];
  std::vector<int32_t> dist, via;
  std::vector<int64_t> ends;
  std::vector<uint8_t> edge;
  for (int64_t g = 0; g < numGraphs_; ++g) {
    const int64_t n = nodePtr_[g + 1] - nodePtr_[g], p0 = pairPtr_[g], e0 = edgePtr_[g], e = edgePtr_[g + 1] - e0;
    const size_t nn = static_cast<size_t>(n * n);
    dist.resize(nn);
    via.resize(nn);
    readInts<int32_t>(sp, p0, n * n, dist.data(), static_cast<int32_t>(kFar));
    readInts<int32_t>(*pathVia_, p0, n * n, via.data(), -1);
    ends.resize(static_cast<size_t>(2 * e));
    readInts<int64_t>(ei, e0, e, ends.data());
    readInts<int64_t>(ei, E + e0, e, ends.data() + e);
    edge.assign(nn, 0);
    for (int64_t k = 0; k < e; ++k) edge[static_cast<size_t>(ends[k] * n + ends[e + k])] = 1;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const size_t at = static_cast<size_t>(i * n + j);
        const int64_t d = dist[at], m = via[at];
        auto bad = [&](const std::string& why) {
          throw std::runtime_error(file_.path() + ": path_via: graph " + std::to_string(g) + " pair (" + std::to_string(i) +
                                   ", " + std::to_string(j) + "): " + why + " (spatial_pos " + std::to_string(d) +
                                   ", via " + std::to_string(m) + ")");
        };
        if (i == j) {
          if (d != 0 || m != -1) bad("the diagonal has distance 0 and no via");
          continue;
        }
        if (d < 1 || d > kFar) bad("distance out of range");
        if (edge[at] && d != 1) bad("an edge at a distance other than 1");
        if (m < 0) {
          if (d != kFar && !(d == 1 && edge[at])) bad("no via, yet neither one edge nor unreachable");
          continue;
        }
        if (m >= n || m == i || m == j || d == kFar) bad("via is not a node inside a reachable pair's path");
        const int64_t a = dist[static_cast<size_t>(i * n + m)], b = dist[static_cast<size_t>(m * n + j)];
        if (a < 1 || b < 1 || a + b != d) bad("the halves through via do not add up to the distance");
      }
    }
  }
}

std::string NpzDataset::smiles(size_t i) const {
  GNN_CHECK_ARG(i < size(), "NpzDataset::smiles: index ", i, " out of range for ", size(), " graphs");
  if (!smilesPtr_) return "";
  int64_t b = 0, e = 0;
  std::memcpy(&b, smilesPtr_ + i, 8);  // the mapped data need not be aligned
  std::memcpy(&e, smilesPtr_ + i + 1, 8);
  if (b < 0 || e < b || e > smilesSize_)
    throw std::runtime_error(file_.path() + ": smiles_ptr[" + std::to_string(i) + "] is out of range");
  return std::string(smilesData_ + b, static_cast<size_t>(e - b));
}

Graph NpzDataset::get(size_t i) const {
  GNN_CHECK_ARG(i < size(), "NpzDataset::get: index ", i, " out of range for ", size(), " graphs");
  const int64_t n0 = nodePtr_[i], n = nodePtr_[i + 1] - n0;
  const int64_t e0 = edgePtr_[i], e = edgePtr_[i + 1] - e0;
  const int64_t totalE = edgePtr_[numGraphs_];
  Graph g;
  g.numNodes = n;
  g.x = readTensor(file_.get("x"), n0 * kF, n * kF, {n, kF});
  const NpzFile::Array& ei = file_.get("edge_index");
  g.edgeIndex = Tensor({2, e}, DType::I64);
  int64_t* src = g.edgeIndex.data<int64_t>();
  readInts<int64_t>(ei, e0, e, src);
  readInts<int64_t>(ei, totalE + e0, e, src + e);
  g.edgeAttr = readTensor(file_.get("edge_attr"), e0 * kB, e * kB, {e, kB});
  const int64_t t = numTargets_;
  g.y = Tensor({t}, DType::F32);
  std::memcpy(g.y.data<float>(), file_.get("y").data + static_cast<size_t>(i * t) * 4, static_cast<size_t>(t) * 4);
  g.yMask = Tensor({t}, DType::U8);
  std::memcpy(g.yMask.data<uint8_t>(), file_.get("y_mask").data + i * t, static_cast<size_t>(t));
  if (file_.has("pos")) {
    g.pos = Tensor({n, 3}, DType::F32);
    std::memcpy(g.pos.data<float>(), file_.get("pos").data + static_cast<size_t>(n0) * 12, static_cast<size_t>(n) * 12);
    g.z = readTensor(file_.get("z"), n0, n, {n});
  }
  if (!pairPtr_) return g;
  const int64_t p0 = pairPtr_[i];
  g.spatialPos = readTensor(file_.get("spatial_pos"), p0, n * n, {n, n}, pathVia_ ? std::optional<int64_t>(kFar) : std::nullopt);
  g.inDegree = readTensor(file_.get("in_degree"), n0, n, {n});
  g.edgeInput = Tensor({n, n, hops_, kB}, DType::I64);
  if (pathVia_) {
    // Format 2: the first hops_ hops of every path of path_via (scratch per thread: loaders call get() from
    // their prefetch threads).
    thread_local std::vector<int32_t> via;
    thread_local EdgeInputGather gather;
    via.resize(static_cast<size_t>(n * n));
    readInts<int32_t>(*pathVia_, p0, n * n, via.data(), -1);
    gather.run(n, src, src + e, e, g.edgeAttr.data<int64_t>(), g.spatialPos.data<int64_t>(), via.data(), hops_,
               g.edgeInput.data<int64_t>());
  } else if (hops_ == maxDist_) {
    readInts<int64_t>(file_.get("edge_input"), p0 * maxDist_ * kB, n * n * maxDist_ * kB, g.edgeInput.data<int64_t>());
  } else {
    // Format 1 read with another K: the stored slots, cut or padded with "no hop" (coversMaxDist said it is exact).
    const int64_t kept = std::min(hops_, maxDist_);
    std::vector<int64_t> stored(static_cast<size_t>(n * n * maxDist_ * kB));
    readInts<int64_t>(file_.get("edge_input"), p0 * maxDist_ * kB, n * n * maxDist_ * kB, stored.data());
    int64_t* out = g.edgeInput.data<int64_t>();
    std::fill(out, out + n * n * hops_ * kB, int64_t{-1});
    for (int64_t p = 0; p < n * n; ++p)
      std::copy_n(stored.data() + p * maxDist_ * kB, kept * kB, out + p * hops_ * kB);
  }
  return g;
}

int64_t NpzDataset::maxNodes() const {
  int64_t m = 0;
  for (int64_t i = 0; i < numGraphs_; ++i) m = std::max(m, nodePtr_[i + 1] - nodePtr_[i]);
  return m;
}

bool NpzDataset::coversMaxDist(int k) const {
  if (maxDist_ == 0) return false;
  return pathVia_ || k <= maxDist_ || maxDist_ >= maxNodes() - 1;
}

void NpzDataset::widenMaxDist(int k) {
  GNN_CHECK_ARG(coversMaxDist(k), file_.path(), ": edge_input holds ", maxDist_,
                " hops, fewer than its longest possible path: rebuild it with --graphormer-max-dist ", k);
  hops_ = std::max(k, hops_);
}

void NpzDataset::setGraphormerMaxDist(int k) {
  GNN_CHECK_ARG(k >= 1, "NpzDataset::setGraphormerMaxDist: K must be >= 1, got ", k);
  if (maxDist_ == 0) return;
  GNN_CHECK_ARG(coversMaxDist(k), file_.path(), ": edge_input holds ", maxDist_,
                " hops, fewer than its longest possible path: rebuild it with --graphormer-max-dist ", k);
  hops_ = k;
}

int64_t NpzDataset::sourceIndex(size_t i) const {
  int64_t v;
  std::memcpy(&v, file_.get("source_index").data + i * 8, 8);
  return v;
}

int64_t NpzDataset::sourceLine(size_t i) const {
  int64_t v;
  std::memcpy(&v, file_.get("source_line").data + i * 8, 8);
  return v;
}

std::vector<std::string> NpzDataset::splitNames() const {
  std::vector<std::string> names;
  for (const auto& [name, a] : file_.arrays())
    if (name.rfind("split_", 0) == 0) names.push_back(name.substr(6));
  return names;
}

std::vector<int64_t> NpzDataset::split(const std::string& name) const {
  const NpzFile::Array& a = file_.get("split_" + name, "<i8", 1);
  std::vector<int64_t> v(static_cast<size_t>(a.shape[0]));
  std::memcpy(v.data(), a.data, v.size() * 8);
  return v;
}

std::string NpzDataset::metadataJson() const {
  const NpzFile::Array& a = file_.get("metadata");
  return std::string(reinterpret_cast<const char*>(a.data), a.bytes);
}

}  // namespace gnn
