// DatasetSplit: which molecules of a dataset train, validate and test, and how that was decided: the
// source's own split, a seeded random split, a scaffold split, or OGB's split files. Positions are dataset
// positions (0-based, in dataset order).
//
//   DatasetSplit s = randomSplit(ds.size(), /*seed=*/0);            // 80/10/10 of a seeded permutation
//   DatasetSplit t = scaffoldSplit(smilesOfEveryMolecule);          // Bemis-Murcko, as OGB and MoleculeNet
//   DatasetSplit u = splitFromFiles("split/scaffold", ds);          // OGB's {train,valid,test}.csv.gz
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gnn {

class NpzDataset;

struct DatasetSplit {
  std::vector<int64_t> train, valid, test;
  std::string kind = "none";  // "source", "random", "scaffold", "file"
  uint64_t seed = 0;          // random
  std::string path;           // file
  int64_t droppedRejected = 0;  // file: indices of molecules the build rejected
  int64_t droppedBeyondLimit = 0;  // file: indices past --limit
  /// kind, sizes, and the seed (random) or the folder (file).
  nlohmann::json toJson() const;
};

/// floor(0.8 n) train, floor(0.1 n) valid and the rest test, taken in that order from a permutation of
/// 0..n-1 drawn with gnn::Generator(seed) (Fisher-Yates); each set sorted. Same (n, seed), same split.
DatasetSplit randomSplit(int64_t n, uint64_t seed, double trainFraction = 0.8, double validFraction = 0.1);

/// The Bemis-Murcko scaffold of a SMILES without stereochemistry, as RDKit's Python
/// MurckoScaffold.MurckoScaffoldSmiles(smiles=s, includeChirality=False); "" for an acyclic molecule. Throws
/// std::runtime_error for a SMILES RDKit cannot parse.
std::string murckoScaffold(const std::string& smiles);

/// The deterministic scaffold split of OGB (snap-stanford/pretrain-gnns, chem/splitters.py scaffold_split)
/// and MoleculeNet (deepchem ScaffoldSplitter): molecules grouped by scaffold; groups sorted by size, then by
/// their first position, both descending (Python's sorted(key=(len, first), reverse=True)); each group goes
/// whole to train while train stays within 0.8 n, else to valid while train + valid stays within 0.9 n, else
/// to test. No scaffold is in two sets. Throws naming the position of a SMILES RDKit cannot parse.
DatasetSplit scaffoldSplit(const std::vector<std::string>& smiles, double trainFraction = 0.8,
                           double validFraction = 0.1);

/// OGB's split layout: `dir/{train,valid,test}.csv[.gz]`, one 0-based molecule index of the source per line
/// (NpzDataset::sourceIndex). Indices of molecules the build rejected are dropped and counted; a line that is
/// not an index of the source, or an index in two sets, throws std::runtime_error with `file:line: reason`.
/// `sourceLimit` >= 0: the dataset holds only the source's first sourceLimit molecules (--limit); indices
/// beyond it are dropped and counted too.
DatasetSplit splitFromFiles(const std::string& dir, const NpzDataset& dataset, int64_t sourceLimit = -1);

}  // namespace gnn
