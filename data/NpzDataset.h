// NpzDataset: a molecular dataset on disk as one NumPy .npz (docs/datasets.md documents every array), built
// once by NpzDatasetWriter (streaming, bounded memory) and read back by NpzDataset, which memory-maps the
// file and slices graphs out of it without parsing anything.
//
// Format 2 (the default) stores every integer array in the narrowest dtype that holds it and Graphormer's
// paths as an N x N matrix per graph (path_via) from which get() gathers edge_input for any K; format 1
// stored edge_input [P, K, 3] itself. Both are read, to the same Graphs bit for bit.
//
//   NpzDataset ds("hiv.npz");        // implements gnn::Dataset
//   Graph g = ds.get(17);             // x int64 [N, 9], edge_index int64 [2, E], edge_attr int64 [E, 3], ...
//   std::string s = ds.smiles(17);    // the molecule's SMILES; ds.targetNames() names the columns of y
//
//   import numpy as np; d = np.load("hiv.npz")   # the same arrays from Python
//   p = d["smiles_ptr"]; s = bytes(d["smiles"][p[17]:p[18]]).decode()
#pragma once
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data/Dataset.h"
#include "data/MoleculeGraph.h"
#include "data/NpzFile.h"
#include "data/NpzWriter.h"

namespace gnn {

class NpzDatasetWriter {
 public:
  struct Options {
    std::string path;
    int numTargets = 0;
    bool positions = false;     // write pos and z
    /// > 0: write Graphormer's encodings with K = min(this, the longest possible path): graphs come with K_i =
    /// min(this, max(1, n_i - 1)) hop slots (GraphormerEncodings' capAtLongestPath). Format 2 writes
    /// spatial_pos, in_degree, path_via and that K (multi_hop_max_dist); format 1 writes edge_input, each
    /// graph's padded with -1 to the largest K_i when the file is assembled.
    int graphormerMaxDist = 0;
    /// Non-empty: a resumable writer (NpzWriter's stateDir), whose progress snapshot() records.
    std::string stateDir;
    /// 2: narrow dtypes and path_via (graphs need g.pathVia); 1: the earlier layout with edge_input (graphs
    /// need g.edgeInput), for readers that predate format 2.
    int formatVersion = 2;
  };
  static constexpr int kFormatVersion = 2;
  explicit NpzDatasetWriter(Options options);

  /// Appends one graph and its SMILES (g.smiles); `index` is the molecule's id in its source, `line` where
  /// it starts there.
  void add(const MoleculeGraph& g, int64_t index, int64_t line);
  /// A named split as positions into this dataset (written as split_<name>).
  void addSplit(const std::string& name, const std::vector<int64_t>& positions);
  int64_t numGraphs() const { return graphs_; }
  int64_t numNodes() const { return nodes_; }
  int64_t numEdges() const { return edges_; }
  /// The K edge_input gets: min(Options::graphormerMaxDist, max(1, largest n - 1) so far); 0 without encodings.
  int graphormerMaxDist() const;
  /// Resumable writers: everything written so far, flushed to disk, as numbers for restore() (NpzWriter's
  /// snapshot plus the running counts).
  std::vector<int64_t> snapshot();
  void restore(std::vector<int64_t> state);
  /// Writes the metadata JSON (as a uint8 array "metadata"), assembles the .npz and renames it into place.
  /// `poll` as NpzWriter::finish: called as the file is assembled, it may throw to abandon it.
  void finish(const std::string& metadataJson, const std::function<void()>& poll = {});

 private:
  Options options_;
  NpzWriter out_;
  int x_, edgeIndex_, edgeAttr_, nodePtr_, edgePtr_, y_, yMask_, index_, line_;
  int smiles_ = -1, smilesPtr_ = -1;
  int64_t smilesBytes_ = 0;  // running end of smiles_ptr
  int pos_ = -1, z_ = -1, spatialPos_ = -1, pairPtr_ = -1, inDegree_ = -1, edgeInput_ = -1, pathVia_ = -1;
  int64_t graphs_ = 0, nodes_ = 0, edges_ = 0, pairs_ = 0;
  int64_t maxSlots_ = 0;  // format 2: the largest K_i so far (format 1: edge_input's width)
  std::vector<uint8_t> u8_;
  std::vector<int32_t> i32_;
  std::vector<int16_t> i16_;
};

class NpzDataset : public Dataset {
 public:
  /// Throws std::runtime_error naming the file when it is not a dataset written by NpzDatasetWriter.
  explicit NpzDataset(const std::string& path);

  size_t size() const override { return static_cast<size_t>(numGraphs_); }
  Graph get(size_t i) const override;
  int64_t numNodes(size_t i) const override { return nodePtr_[i + 1] - nodePtr_[i]; }
  int64_t numEdges(size_t i) const override { return edgePtr_[i + 1] - edgePtr_[i]; }

  /// The molecule's id in its source (PCQM4Mv2 idx, else position in the file) and its line there.
  int64_t sourceIndex(size_t i) const;
  int64_t sourceLine(size_t i) const;
  int numTargets() const { return numTargets_; }
  /// The names of y's columns as the build recorded them (metadata `targets`: the CSV columns, SDF
  /// properties or XYZ keys; PCQM4Mv2: {"homolumogap"}); empty without targets.
  const std::vector<std::string>& targetNames() const { return targetNames_; }
  /// Molecule i's SMILES: the input's text for SMILES sources, RDKit's canonical SMILES for SDF records, ""
  /// for XYZ records and for datasets written before SMILES were stored. NumPy:
  /// `p = d['smiles_ptr']; bytes(d['smiles'][p[i]:p[i+1]]).decode()`.
  std::string smiles(size_t i) const;
  bool hasSmiles() const { return smilesPtr_ != nullptr; }
  bool hasPositions() const { return file_.has("pos"); }
  /// 1 or 2 (module docs), told by edge_index's dtype (int32 in format 1, unsigned in format 2).
  int formatVersion() const { return version_; }
  /// K of the edge_input graphs come out with (as built, or as chosen by widenMaxDist / setGraphormerMaxDist);
  /// 0 without encodings.
  int graphormerMaxDist() const { return hops_; }
  /// Whether graphs can come out with k hop slots holding exactly what a build with --graphormer-max-dist k
  /// would give (-1 slots past a path's end): always for format 2, which keeps whole paths; for format 1 when
  /// k is at most the stored K or the stored K covers every path (K >= the largest graph's nodes - 1, as a
  /// capped build stores).
  bool coversMaxDist(int k) const;
  /// Graphs come out with edge_input widened to k hop slots (never fewer than now). Throws
  /// std::invalid_argument unless coversMaxDist(k).
  void widenMaxDist(int k);
  /// Graphs come out with exactly k >= 1 hop slots (the read-time choice of K). Throws std::invalid_argument
  /// unless coversMaxDist(k) or the file has no encodings.
  void setGraphormerMaxDist(int k);
  /// The most nodes of any graph.
  int64_t maxNodes() const;
  /// Split names (e.g. "train") -> dataset positions, when the source had splits.
  std::vector<std::string> splitNames() const;
  std::vector<int64_t> split(const std::string& name) const;
  /// The metadata JSON (format version, vocabulary, RDKit version, source and checksum, rejected molecules).
  std::string metadataJson() const;
  const NpzFile& file() const { return file_; }

 private:
  void validate() const;
  void validatePaths() const;
  NpzFile file_;
  int64_t numGraphs_ = 0;
  int numTargets_ = 0;
  int version_ = 1;
  int maxDist_ = 0;  // the K stored (format 1: edge_input's width; format 2: multi_hop_max_dist)
  int hops_ = 0;     // the K graphs come out with
  const int64_t* nodePtr_ = nullptr;
  const int64_t* edgePtr_ = nullptr;
  const int64_t* pairPtr_ = nullptr;
  const int64_t* smilesPtr_ = nullptr;
  const NpzFile::Array* pathVia_ = nullptr;  // format 2 only
  const char* smilesData_ = nullptr;
  int64_t smilesSize_ = 0;
  std::vector<std::string> targetNames_;
};

}  // namespace gnn
