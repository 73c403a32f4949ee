// MoleculeData: opens a molecular dataset for the examples and benchmarks: a built .npz as it is, or raw
// molecules (PCQM4Mv2 layout, MoleculeNet CSV, ...) featurised once with MoleculeDatasetBuilder into a cached
// .npz under the system temp directory (keyed by path, columns, limit, the input files' sizes and times and
// the program's build), then memory-mapped.
//
//   auto data = openMoleculeData({"examples/data/pcqm4mv2_style"});   // data.dataset, data.train, ...
#pragma once
#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/MoleculeDatasetBuilder.h"
#include "data/NpzDataset.h"
#include "data/Pcqm4mv2Reader.h"

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
  std::string sourcePath;  // the file the molecules were read from (source line numbers refer to it)
  int64_t rejected = 0;
  std::vector<std::string> rejectedLines;  // "line N: reason", as recorded in the dataset
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

/// Size and modification time of the input file, or of every file under an input directory: a cached .npz
/// is reused only while its input is unchanged.
inline std::string inputFingerprint(const std::string& path) {
  namespace fs = std::filesystem;
  auto stamp = [](const fs::path& p) {
    std::error_code ec;
    auto size = fs::file_size(p, ec);
    auto time = fs::last_write_time(p, ec).time_since_epoch().count();
    return p.string() + ":" + std::to_string(size) + ":" + std::to_string(time) + ";";
  };
  if (!fs::is_directory(path)) return stamp(path);
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(path))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::string f;
  for (const auto& p : files) f += stamp(p);
  return f;
}

inline MoleculeData openMoleculeData(const MoleculeDataOptions& o) {
  MoleculeData d;
  namespace fs = std::filesystem;
  if (fs::path(o.path).extension() == ".npz") {
    d.npzPath = o.path;
  } else {
    // The program's own file stamp too: a rebuilt program (new featuriser or reader) builds its own cache.
    std::string key = fs::absolute(o.path).string() + "|" + o.smilesColumn + "|" + std::to_string(o.limit) + "|" +
                      inputFingerprint(o.path) + "|" + inputFingerprint("/proc/self/exe");
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
      d.buildSeconds = s.seconds;
    }
  }
  d.dataset = std::make_shared<NpzDataset>(d.npzPath);
  // Rejected molecules, from the dataset's metadata (also when the cache was reused).
  nlohmann::json meta = nlohmann::json::parse(d.dataset->metadataJson(), nullptr, false);
  d.sourcePath = o.path;
  if (meta.is_object()) {
    if (meta.contains("source") && meta["source"].is_object()) {
      // The metadata names the file as the reader saw it (a PCQM4Mv2 directory's raw/data.csv.gz: "data.csv.gz").
      fs::path named = meta["source"].value("path", o.path);
      if (named.is_absolute() || fs::is_regular_file(named)) d.sourcePath = named.string();
      for (const fs::path& p : {fs::path(o.path) / "raw" / named.filename(), fs::path(o.path) / named.filename()})
        if (fs::is_directory(o.path) && fs::is_regular_file(p)) d.sourcePath = p.string();
    }
    d.rejected = meta.value("num_rejected", int64_t{0});
    if (meta.contains("rejected") && meta["rejected"].is_array())
      for (const auto& r : meta["rejected"])
        d.rejectedLines.push_back("line " + std::to_string(r.value("line", int64_t{0})) + ": " +
                                  r.value("reason", std::string()));
  }
  for (const std::string& name : d.dataset->splitNames()) {
    if (name == "train") d.train = d.dataset->split(name);
    if (name == "valid") d.valid = d.dataset->split(name);
    if (name == "test") d.test = d.dataset->split(name);
  }
  if (d.train.empty()) {
    if (std::string hint = Pcqm4mv2Reader::splitHint(o.path); !hint.empty()) std::cerr << hint << "\n";
    // No split in the source: every 10th molecule (offset 0) validates, offset 1 tests, the rest trains.
    for (int64_t i = 0; i < static_cast<int64_t>(d.dataset->size()); ++i)
      (i % 10 == 0 ? d.valid : i % 10 == 1 ? d.test : d.train).push_back(i);
  }
  return d;
}

}  // namespace gnn
