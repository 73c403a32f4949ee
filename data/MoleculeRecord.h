// MoleculeRecord: one molecule as a reader found it, before featurisation: a SMILES string, an SDF mol
// block, or XYZ atoms with coordinates, plus its targets and where it came from (for error reports).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gnn {

struct MoleculeRecord {
  int64_t line = 0;   // 1-based line of the file where the molecule starts
  int64_t index = 0;  // the molecule's id: PCQM4Mv2's idx column, otherwise its 0-based position in the file
  std::string smiles;
  std::string name;
  std::string molBlock;                // SDF records: the MDL mol block (up to "M  END")
  std::vector<int> atomicNumbers;      // XYZ records
  std::vector<float> pos;              // XYZ records: [N * 3] Angstrom
  std::vector<float> y;                // [T] targets, NaN when missing
  std::vector<uint8_t> yMask;          // [T] 1 = label present
  std::string split;                   // "train", "valid" or "test" from a split column; else empty
  std::string error;                   // set by the reader when the record itself is unusable (bad label...)

  void clear() {
    line = index = 0;
    smiles.clear();
    name.clear();
    molBlock.clear();
    atomicNumbers.clear();
    pos.clear();
    y.clear();
    yMask.clear();
    split.clear();
    error.clear();
  }
  /// What to print in reports and --jsonl: the SMILES, else the name.
  const std::string& label() const { return smiles.empty() ? name : smiles; }
};

}  // namespace gnn
