// MoleculeData: opens a molecular dataset for the examples and benchmarks: a built .npz as it is, or raw
// molecules (PCQM4Mv2 layout, MoleculeNet CSV, ...) featurised once with MoleculeDatasetBuilder into a cached
// .npz under the system temp directory (keyed by path, columns and limit), then memory-mapped.
//
//   auto data = openMoleculeData({"examples/data/pcqm4mv2_style"});   // data.dataset, data.train, ...
#pragma once
#include <filesystem>
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/MoleculeDatasetBuilder.h"
#include "data/NpzDataset.h"

namespace gnn {

struct MoleculeDataOptions {
  std::string path;
  std::string smilesColumn = "smiles";
  std::vector<std::string> targetColumns;  // empty: the format's default (PCQM4Mv2: homolumogap)
  int64_t limit = -1;                      // first N molecules only
  int threads = 2;
};

struct MoleculeData {
  std::shared_ptr<NpzDataset> dataset;
  std::string npzPath;
  int64_t rejected = 0;
  double buildSeconds = 0;  // 0 when the cache was reused
  /// Dataset positions of the splits; without splits in the source: a seeded 80/10/10 split.
  std::vector<int64_t> train, valid, test;
};

/// The default molecule set: the PCQM4Mv2-style set shipped in examples/data (dataDir), else the shared raw copy.
inline std::string defaultMoleculeDataPath(const std::string& dataDir = "") {
  for (std::string p : {dataDir.empty() ? std::string() : dataDir + "/pcqm4mv2_style",
                        std::string("examples/data/pcqm4mv2_style"), std::string("../examples/data/pcqm4mv2_style"),
                        std::string("/work/shared/data/pcqm4mv2_style")})
    if (!p.empty() && std::filesystem::exists(p)) return p;
  return "examples/data/pcqm4mv2_style";
}

inline MoleculeData openMoleculeData(const MoleculeDataOptions& o) {
  MoleculeData d;
  namespace fs = std::filesystem;
  if (fs::path(o.path).extension() == ".npz") {
    d.npzPath = o.path;
  } else {
    std::string key = fs::absolute(o.path).string() + "|" + o.smilesColumn + "|" + std::to_string(o.limit);
    for (const auto& t : o.targetColumns) key += "|" + t;
    d.npzPath = (fs::temp_directory_path() / ("gnn_molecules_" + std::to_string(std::hash<std::string>{}(key)) + ".npz"))
                    .string();
    if (!fs::exists(d.npzPath)) {
      BuildOptions b;
      b.source.path = o.path;
      b.source.smilesColumn = o.smilesColumn;
      b.source.targetColumns = o.targetColumns;
      b.threads = o.threads;
      b.limit = o.limit;
      b.outPath = d.npzPath;
      BuildSummary s = MoleculeDatasetBuilder(b).run();
      d.rejected = s.rejected;
      d.buildSeconds = s.seconds;
    }
  }
  d.dataset = std::make_shared<NpzDataset>(d.npzPath);
  for (const std::string& name : d.dataset->splitNames()) {
    if (name == "train") d.train = d.dataset->split(name);
    if (name == "valid") d.valid = d.dataset->split(name);
    if (name == "test") d.test = d.dataset->split(name);
  }
  if (d.train.empty()) {
    // No split in the source: every 10th molecule (offset 0) validates, offset 1 tests, the rest trains.
    for (int64_t i = 0; i < static_cast<int64_t>(d.dataset->size()); ++i)
      (i % 10 == 0 ? d.valid : i % 10 == 1 ? d.test : d.train).push_back(i);
  }
  return d;
}

}  // namespace gnn
