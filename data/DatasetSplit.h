// DatasetSplit: which molecules of a dataset train, validate and test, and how that was decided: the
// split stored in the dataset (PCQM4Mv2's split folder or a CSV split column), a seeded random split, a
// Bemis-Murcko scaffold split, or OGB's split files. Sets hold dataset positions (0-based, dataset order),
// each sorted ascending.
//
//   NpzDataset ds("bbbp.npz");
//   DatasetSplit s = randomSplit(ds.size(), /*seed=*/0);        // 80/10/10 of a seeded permutation
//   std::vector<std::string> smiles;
//   for (size_t i = 0; i < ds.size(); ++i) smiles.push_back(ds.smiles(i));
//   DatasetSplit t = scaffoldSplit(smiles);                      // as MoleculeNet (deepchem)
//   DatasetSplit u = splitFromFiles("split/scaffold", ds);      // OGB's {train,valid,test}.csv.gz
//   DatasetSplit v = storedSplit(ds);                           // built with one (kind "source"/"column")
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gnn {

class NpzDataset;

struct DatasetSplit {
  std::vector<int64_t> train, valid, test;
  /// "source" (PCQM4Mv2's split folder), "column" (a CSV split column), "random", "scaffold", "file"
  /// (OGB's split files); "none" for a split not made by one of the functions below.
  std::string kind = "none";
  uint64_t seed = 0;              // random
  bool includeChirality = false;  // scaffold: scaffolds kept their stereo
  std::string path;               // file: the folder
  std::string column;             // column: the CSV column it came from
  int64_t droppedRejected = 0;    // file: indices of molecules the build rejected
  int64_t droppedBeyondLimit = 0; // file: indices past the build's --limit
  /// {"kind", "train", "valid", "test"} (the sizes), plus "seed" (random), "include_chirality" (scaffold),
  /// "path", "dropped_rejected", "dropped_beyond_limit" (file), "column" (column).
  nlohmann::json toJson() const;
};

/// floor(trainFraction n) train, floor(validFraction n) valid and the rest test, taken in that order from
/// a Fisher-Yates permutation of 0..n-1 drawn with gnn::Generator(seed) (gnn/system/Random.h), each set sorted.
/// Same (n, seed, fractions), same split, on any machine and thread count. Throws std::invalid_argument for
/// n < 0 or fractions that are negative or sum past 1.
DatasetSplit randomSplit(int64_t n, uint64_t seed, double trainFraction = 0.8, double validFraction = 0.1);

/// The Bemis-Murcko scaffold of a SMILES as canonical SMILES: RDKit's Python
/// `MurckoScaffold.MurckoScaffoldSmiles(smiles=s, includeChirality=...)`; "" for a molecule without rings.
/// Throws std::runtime_error for a SMILES RDKit cannot parse (or an empty one).
std::string murckoScaffold(const std::string& smiles, bool includeChirality = false);

/// The deterministic scaffold split of MoleculeNet and OGB: molecules grouped by murckoScaffold (acyclic
/// ones share the scaffold ""); groups sorted by size, then by their first position, both descending; in
/// that order each group goes whole to train unless train would pass trainFraction n, else to valid unless
/// train + valid would pass (trainFraction + validFraction) n, else to test. No scaffold is in two sets.
/// MoleculeNet (deepchem ScaffoldSplitter) drops stereo from scaffolds (includeChirality = false, the
/// default); OGB's scaffold split files come from snap-stanford/pretrain-gnns, which keeps it (true).
/// Scaffolds are computed in parallel (gnn::numThreads()); the split does not depend on the thread count.
/// Throws std::runtime_error naming the position of a SMILES RDKit cannot parse.
DatasetSplit scaffoldSplit(const std::vector<std::string>& smiles, double trainFraction = 0.8,
                           double validFraction = 0.1, bool includeChirality = false);

/// OGB's split layout: `dir/{train,valid,test}.csv[.gz]`, a header-less column of 0-based molecule indices
/// of the source (NpzDataset::sourceIndex; test.csv may be absent). Indices of molecules the build rejected
/// are dropped and counted (droppedRejected), as are indices past the build's --limit (droppedBeyondLimit;
/// the limit is `sourceLimit` when >= 0, else the one the dataset's metadata records). A line that is not an
/// integer, an index that is not a molecule of the source, or an index listed twice throws
/// std::runtime_error with `file:line: reason`.
DatasetSplit splitFromFiles(const std::string& dir, const NpzDataset& dataset, int64_t sourceLimit = -1);

/// The split the dataset was built with (its split_train, split_valid, split_test arrays): kind "column"
/// when it came from a CSV split column (build_dataset --split-col), "source" otherwise (PCQM4Mv2's split
/// folder); kind "none" with empty sets when the dataset has none.
DatasetSplit storedSplit(const NpzDataset& dataset);

}  // namespace gnn
