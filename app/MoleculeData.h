// MoleculeData: a molecular dataset as the programs open it: a built .npz as it is, or raw molecules
// (PCQM4Mv2 layout, MoleculeNet CSV, .smi, SDF, XYZ) featurised once with MoleculeDatasetBuilder into a
// cached .npz under the system temp folder (keyed by path, columns, limit, featurisation, the input files'
// sizes and times and the program's build), then memory-mapped; with the split the run uses. A cache that
// fails the .npz checks when opened is rebuilt, with a note on stderr.
//
//   app::MoleculeDataOptions o;  o.path = "examples/data/moleculenet/BBBP.csv.gz";  o.targetColumns = {"p_np"};
//   o.split = "scaffold";
//   app::MoleculeData d = app::openMoleculeData(o);     // d.dataset, d.split.train, d.targetNames, ...
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/DatasetSplit.h"
#include "data/NpzDataset.h"

namespace gnn::app {

struct MoleculeDataOptions {
  std::string path;
  std::string format;  // "" = from the file name (MoleculeSourceOptions::format)
  std::string smilesColumn = "smiles";
  bool smilesColumnGiven = false;          // the user chose the column (refused for .npz input)
  std::vector<std::string> targetColumns;  // empty: the format's default (PCQM4Mv2: homolumogap)
  std::string splitColumn;                 // CSV: a column holding train / valid / test
  int64_t limit = -1;                      // first N molecules only
  int threads = 2;
  /// "auto" (the source's own split, else random), "random", "scaffold"; or splitFile (OGB's split folder).
  std::string split = "auto";
  std::string splitFile;
  uint64_t seed = 0;
  bool requireTargets = true;
  bool quiet = false;          // no featurisation progress on stderr  // training: a dataset without targets is refused
  // Featurisation beyond OGB's 9 atom and 3 bond features.
  int graphormerMaxDist = 0;
  bool positions = false;
};

struct MoleculeData {
  std::shared_ptr<NpzDataset> dataset;
  std::string npzPath;
  std::string sourcePath;  // the file the molecules were read from (source line numbers refer to it)
  int64_t rejected = 0;
  std::vector<std::string> rejectedLines;  // "line N: reason", as recorded in the dataset
  double buildSeconds = 0;                 // 0 when the cache was reused
  DatasetSplit split;                      // dataset positions (only the first `limit` molecules)
  int64_t size = 0;                        // molecules in use (after --limit)
  std::vector<std::string> targetNames;
  /// How the molecules were featurised (recorded in checkpoints; `predict` repeats it).
  nlohmann::json featurisation;
};

/// The PCQM4Mv2-style set shipped in examples/data (the programs' default).
std::string defaultMoleculeDataPath();

/// Opens (building if needed) and splits. Throws UsageError for flags that do not apply to the input
/// (columns with an .npz, a split file that does not exist) and std::runtime_error naming the file for input
/// that cannot be read.
MoleculeData openMoleculeData(const MoleculeDataOptions& options);

/// Builds `input` into a fresh .npz at `npzPath` with `featurisation` (as recorded by openMoleculeData);
/// rejected molecules are recorded in the dataset's metadata, never fatal. For `predict`.
void buildMoleculeDataset(const std::string& input, const std::string& format, const std::string& smilesColumn,
                          const nlohmann::json& featurisation, int threads, const std::string& npzPath);

/// "data.csv lines 12, 57, ... (and N more)" for dataset positions.
std::string describeMolecules(const MoleculeData& data, const std::vector<int64_t>& positions);

}  // namespace gnn::app
