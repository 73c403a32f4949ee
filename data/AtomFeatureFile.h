// AtomFeatureFile: the user's per-atom descriptors of every molecule of an input (Chemprop v2's
// --atom-features-path, v1's --atom_descriptors_path), read from one of two layouts:
//
//   .npz   `features`  float32 or float64 [total atoms, width]: the atoms of molecule 0, then of molecule 1, ...
//          `atom_ptr`  int64 [molecules + 1]: molecule m's atoms are rows atom_ptr[m] .. atom_ptr[m + 1] - 1
//                      (compressed rows, as PyTorch Geometric's `ptr`; atom_ptr[0] = 0, the last = total atoms)
//   CSV    one line per atom: `molecule,atom,f1,...,fk` (optionally .gz), molecule and atom 0-based, atoms of a
//          molecule on consecutive lines from atom 0, molecules in ascending order; a molecule without lines has
//          no atoms. An optional first line of column names (any field that is not a number makes it a header).
//          An empty field, nan or inf is a missing value.
//
// Molecules are the input's lines in order, rejected ones included (molecule m is the input's m-th molecule);
// atoms are in RDKit's order of the parsed molecule (heavy atoms, hydrogens implicit: OGB's smiles2graph order,
// which data/SmilesFeaturizer.h keeps). Non-finite values are kept as NaN here: app/AtomFeatures.h replaces them.
//
//   AtomFeatureFile f = AtomFeatureFile::read("atoms.npz");
//   const double* firstAtomOf3 = f.row(3);         // f.atoms(3) rows of f.width values
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gnn {

struct AtomFeatureFile {
  std::string path;
  int64_t molecules = 0, width = 0;
  std::vector<int64_t> ptr;        // [molecules + 1]
  std::vector<double> values;      // [ptr.back(), width], row-major; NaN where missing
  std::vector<std::string> names;  // per column: the CSV header's name, else file_<k>
  bool header = false;

  int64_t atoms(int64_t molecule) const { return ptr[static_cast<size_t>(molecule + 1)] - ptr[static_cast<size_t>(molecule)]; }
  const double* row(int64_t molecule) const { return values.data() + ptr[static_cast<size_t>(molecule)] * width; }

  /// Reads .npz (by its extension) or CSV. Throws std::runtime_error naming the file (and for CSV the line) for
  /// a file that cannot be used: a missing or mistyped array, atom_ptr that does not split `features`' rows,
  /// atoms out of order, a value that is no number.
  static AtomFeatureFile read(const std::string& path);
};

}  // namespace gnn
