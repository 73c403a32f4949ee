#include "data/NpzDataset.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "gnn/Check.h"

namespace gnn {

namespace {
constexpr int kF = MoleculeGraph::kAtomFeatures, kB = MoleculeGraph::kBondFeatures;
}

// On-disk dtypes are the narrowest that hold every value (docs/datasets.md): OGB's feature indices fit in
// uint8, Graphormer's distances (<= 510) and offset edge features (<= 2 + 512 * 2 + 5) in int16. NpzDataset
// widens them to int64 on get(), the dtype Graph and OGB use.
NpzDatasetWriter::NpzDatasetWriter(Options options)
    : options_(std::move(options)), out_(options_.path, options_.stateDir) {
  const int64_t t = options_.numTargets;
  x_ = out_.addArray("x", "|u1", 1, {kF});
  edgeIndex_ = out_.addArray("edge_index", "<i4", 4, {}, 2);
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
  if (options_.graphormerMaxDist > 0) {
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
  u8_.assign(g.x.begin(), g.x.end());
  out_.append(x_, u8_.data(), u8_.size());
  i32_.assign(g.src.begin(), g.src.end());
  out_.append(edgeIndex_, i32_.data(), i32_.size() * 4, 0);
  i32_.assign(g.dst.begin(), g.dst.end());
  out_.append(edgeIndex_, i32_.data(), i32_.size() * 4, 1);
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
  if (spatialPos_ >= 0) {
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
  state.insert(state.end(), {graphs_, nodes_, edges_, pairs_, smilesBytes_});
  return state;
}

void NpzDatasetWriter::restore(std::vector<int64_t> state) {
  if (state.size() < 5) throw std::runtime_error(options_.path + ": resume state does not match the dataset");
  const auto counts = state.end() - 5;
  graphs_ = counts[0];
  nodes_ = counts[1];
  edges_ = counts[2];
  pairs_ = counts[3];
  smilesBytes_ = counts[4];
  state.erase(counts, state.end());
  out_.restore(state);
}

int NpzDatasetWriter::graphormerMaxDist() const {
  return edgeInput_ >= 0 ? static_cast<int>(out_.width(edgeInput_)) : 0;
}

void NpzDatasetWriter::addSplit(const std::string& name, const std::vector<int64_t>& positions) {
  const int a = out_.addArray("split_" + name, "<i8", 8);
  out_.append(a, positions.data(), positions.size() * 8);
}

void NpzDatasetWriter::finish(const std::string& metadataJson, const std::function<void()>& poll) {
  // With no targets y's rows hold no bytes, so the writer cannot count them: [G, 0], not [0, 0].
  out_.setRows(y_, graphs_);
  out_.setRows(yMask_, graphs_);
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
  const NpzFile::Array& ei = file_.get("edge_index", "<i4", 2);
  file_.get("edge_attr", "|u1", 2);
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
  if (file_.has("edge_input")) {
    maxDist_ = static_cast<int>(file_.get("edge_input", "<i2", 3).shape[1]);
    pairPtr_ = reinterpret_cast<const int64_t*>(file_.get("pair_ptr", "<i8", 1).data);
  }
  validate();
}

// The structure every reader relies on, checked once when the file is opened (a linear pass; ~0.1 s per 10M
// edges): a damaged or crafted file is refused here, naming the array, instead of reading out of bounds or
// training on an edge that points into another molecule.
void NpzDataset::validate() const {
  const std::string& path = file_.path();
  auto fail = [&](const std::string& member, const std::string& why) {
    throw std::runtime_error(path + ": " + member + ": " + why);
  };
  auto expectShape = [&](const std::string& name, std::vector<int64_t> shape) {
    if (!file_.has(name)) return;
    const auto& a = file_.get(name);
    if (a.shape != shape) {
      std::string got, want;
      for (int64_t d : a.shape) got += (got.empty() ? "" : ", ") + std::to_string(d);
      for (int64_t d : shape) want += (want.empty() ? "" : ", ") + std::to_string(d);
      fail(name, "shape (" + got + "), expected (" + want + ")");
    }
  };
  // Offsets: start at 0, never decrease, end at the length of what they index.
  auto checkPtr = [&](const char* name, const int64_t* ptr, int64_t total) {
    if (ptr[0] != 0) fail(name, "does not start at 0");
    for (int64_t g = 0; g < numGraphs_; ++g)
      if (ptr[g + 1] < ptr[g]) fail(name, "decreases at graph " + std::to_string(g));
    if (ptr[numGraphs_] != total)
      fail(name, "ends at " + std::to_string(ptr[numGraphs_]) + " but indexes " + std::to_string(total) + " rows");
  };
  // Arrays come in groups that are written together; one without the others (or a name this format does not
  // have) is a damaged directory, which would otherwise silently drop a feature.
  static const std::vector<std::string> known = {"x", "edge_index", "edge_attr", "node_ptr", "edge_ptr", "y", "y_mask",
                                                 "source_index", "source_line", "smiles", "smiles_ptr", "pos", "z",
                                                 "spatial_pos", "pair_ptr", "in_degree", "edge_input", "metadata"};
  for (const auto& [name, a] : file_.arrays())
    if (name.rfind("split_", 0) != 0 && std::find(known.begin(), known.end(), name) == known.end())
      fail(name, "is not an array of this dataset format (a damaged or foreign file)");
  for (const std::vector<std::string>& group : {std::vector<std::string>{"smiles", "smiles_ptr"}, {"pos", "z"},
                                                {"spatial_pos", "pair_ptr", "in_degree", "edge_input"}}) {
    size_t present = 0;
    for (const auto& name : group) present += file_.has(name) ? 1 : 0;
    if (present != 0 && present != group.size()) fail(group[0], "present without the rest of its group");
  }
  const int64_t N = file_.get("x").shape[0], E = file_.get("edge_index").shape[1];
  checkPtr("node_ptr", nodePtr_, N);
  checkPtr("edge_ptr", edgePtr_, E);
  expectShape("x", {N, kF});
  expectShape("edge_index", {2, E});
  expectShape("edge_attr", {E, kB});
  expectShape("y_mask", file_.get("y").shape);
  expectShape("source_index", {numGraphs_});
  expectShape("source_line", {numGraphs_});
  if (!file_.has("source_index") || !file_.has("source_line") || !file_.has("y_mask"))
    fail("source_index/source_line/y_mask", "missing");
  expectShape("pos", {N, 3});
  expectShape("z", {N});
  expectShape("in_degree", {N});
  // Every edge joins two nodes of its own molecule (indices are local to the molecule: 0 .. n-1).
  const auto* ei = reinterpret_cast<const int32_t*>(file_.get("edge_index").data);
  for (int64_t g = 0; g < numGraphs_; ++g) {
    const int64_t n = nodePtr_[g + 1] - nodePtr_[g];
    for (int64_t e = edgePtr_[g]; e < edgePtr_[g + 1]; ++e) {
      const int64_t a = ei[e], b = ei[E + e];
      if (a < 0 || a >= n || b < 0 || b >= n)
        fail("edge_index", "edge " + std::to_string(e) + " (" + std::to_string(a) + " -> " + std::to_string(b) +
                               ") of graph " + std::to_string(g) + " leaves its " + std::to_string(n) + " nodes");
    }
  }
  const NpzFile::Array& m = file_.get("y_mask");
  for (uint64_t k = 0; k < m.bytes; ++k)
    if (m.data[k] > 1) fail("y_mask", "value " + std::to_string(m.data[k]) + " is not 0 or 1");
  // A label marked present must be a number (missing ones are NaN with y_mask 0), and coordinates must be
  // finite: the writer never stores otherwise, so either is damage that a recomputed CRC-32 would let through.
  {
    const NpzFile::Array& y = file_.get("y");
    const int64_t t = y.shape.size() == 2 ? y.shape[1] : 0;
    for (int64_t k = 0; k < y.numel(); ++k) {
      float v;
      std::memcpy(&v, y.data + k * 4, 4);
      if (m.data[k] == 1 && !std::isfinite(v))
        fail("y", "graph " + std::to_string(t ? k / t : 0) + " target " + std::to_string(t ? k % t : 0) + " is " +
                      std::to_string(v) + " but marked present (y_mask 1)");
    }
  }
  if (file_.has("pos")) {
    const NpzFile::Array& pos = file_.get("pos");
    for (int64_t k = 0; k < pos.numel(); ++k) {
      float v;
      std::memcpy(&v, pos.data + k * 4, 4);
      if (!std::isfinite(v)) fail("pos", "atom " + std::to_string(k / 3) + " has a coordinate " + std::to_string(v));
    }
  }
  if (smilesPtr_) checkPtr("smiles_ptr", smilesPtr_, smilesSize_);
  if (pairPtr_) {
    const int64_t P = file_.get("spatial_pos").shape[0];
    if (file_.get("pair_ptr").shape[0] != numGraphs_ + 1) fail("pair_ptr", "length is not the graph count + 1");
    checkPtr("pair_ptr", pairPtr_, P);
    for (int64_t g = 0; g < numGraphs_; ++g) {
      const int64_t n = nodePtr_[g + 1] - nodePtr_[g];
      if (pairPtr_[g + 1] - pairPtr_[g] != n * n) fail("pair_ptr", "graph " + std::to_string(g) + " has no N x N block");
    }
    expectShape("edge_input", {P, maxDist_, kB});
  }
  for (const std::string& name : splitNames()) {
    const NpzFile::Array& a = file_.get("split_" + name, "<i8", 1);
    const auto* v = reinterpret_cast<const int64_t*>(a.data);
    for (int64_t k = 0; k < a.shape[0]; ++k)
      if (v[k] < 0 || v[k] >= numGraphs_) fail("split_" + name, "position " + std::to_string(v[k]) + " is not a graph");
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

namespace {
template <class T>
Tensor widen(const NpzFile::Array& a, int64_t begin, int64_t count, Shape shape) {
  Tensor t(std::move(shape), DType::I64);
  int64_t* out = t.data<int64_t>();
  const T* in = reinterpret_cast<const T*>(a.data) + begin;
  for (int64_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, in + i, sizeof(T));  // the mapped data need not be aligned for T
    out[i] = v;
  }
  return t;
}
}  // namespace

Graph NpzDataset::get(size_t i) const {
  GNN_CHECK_ARG(i < size(), "NpzDataset::get: index ", i, " out of range for ", size(), " graphs");
  const int64_t n0 = nodePtr_[i], n = nodePtr_[i + 1] - n0;
  const int64_t e0 = edgePtr_[i], e = edgePtr_[i + 1] - e0;
  const int64_t totalE = edgePtr_[numGraphs_];
  Graph g;
  g.numNodes = n;
  g.x = widen<uint8_t>(file_.get("x"), n0 * kF, n * kF, {n, kF});
  const NpzFile::Array& ei = file_.get("edge_index");
  g.edgeIndex = Tensor({2, e}, DType::I64);
  Tensor src = widen<int32_t>(ei, e0, e, {e}), dst = widen<int32_t>(ei, totalE + e0, e, {e});
  std::memcpy(g.edgeIndex.data<int64_t>(), src.data<int64_t>(), static_cast<size_t>(e) * 8);
  std::memcpy(g.edgeIndex.data<int64_t>() + e, dst.data<int64_t>(), static_cast<size_t>(e) * 8);
  g.edgeAttr = widen<uint8_t>(file_.get("edge_attr"), e0 * kB, e * kB, {e, kB});
  const int64_t t = numTargets_;
  g.y = Tensor({t}, DType::F32);
  std::memcpy(g.y.data<float>(), file_.get("y").data + static_cast<size_t>(i * t) * 4, static_cast<size_t>(t) * 4);
  g.yMask = Tensor({t}, DType::U8);
  std::memcpy(g.yMask.data<uint8_t>(), file_.get("y_mask").data + i * t, static_cast<size_t>(t));
  if (file_.has("pos")) {
    g.pos = Tensor({n, 3}, DType::F32);
    std::memcpy(g.pos.data<float>(), file_.get("pos").data + static_cast<size_t>(n0) * 12, static_cast<size_t>(n) * 12);
    g.z = widen<uint8_t>(file_.get("z"), n0, n, {n});
  }
  if (pairPtr_) {
    const int64_t p0 = pairPtr_[i];
    g.spatialPos = widen<int16_t>(file_.get("spatial_pos"), p0, n * n, {n, n});
    g.inDegree = widen<int16_t>(file_.get("in_degree"), n0, n, {n});
    g.edgeInput = widen<int16_t>(file_.get("edge_input"), p0 * maxDist_ * kB, n * n * maxDist_ * kB,
                                 {n, n, maxDist_, kB});
    if (widenTo_ > maxDist_) {
      Tensor wide = Tensor::full({n, n, widenTo_, kB}, -1.0, DType::I64);
      for (int64_t p = 0; p < n * n; ++p)
        std::copy_n(g.edgeInput.data<int64_t>() + p * maxDist_ * kB, maxDist_ * kB,
                    wide.data<int64_t>() + p * widenTo_ * kB);
      g.edgeInput = wide;
    }
  }
  return g;
}

int64_t NpzDataset::maxNodes() const {
  int64_t m = 0;
  for (int64_t i = 0; i < numGraphs_; ++i) m = std::max(m, nodePtr_[i + 1] - nodePtr_[i]);
  return m;
}

void NpzDataset::widenMaxDist(int k) {
  GNN_CHECK_ARG(maxDist_ > 0 && maxDist_ >= maxNodes() - 1, file_.path(), ": edge_input holds ", maxDist_,
                " hops, fewer than its longest possible path: rebuild it with --graphormer-max-dist ", k);
  widenTo_ = std::max(k, maxDist_);
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
