// MoleculeDescriptors: one fixed-length vector per molecule, computed with RDKit's C++ API, for the models'
// molecule-level inputs (Chemprop's --features_generator / v2's --molecule-featurizers, whose descriptors are
// concatenated to the learned molecule vector before the FFN):
//
//   morgan        Morgan fingerprint, radius 2, 2048 bits, 0/1 (Chemprop's `morgan`:
//                 GetMorganFingerprintAsBitVect(mol, 2, nBits=2048); here RDKit's MorganGenerator, which gives
//                 the same bits)
//   morgan-count  the same fingerprint with counts (Chemprop's `morgan_count`: GetHashedMorganFingerprint)
//   rdkit2d       129 2D descriptors: RDKit's 43 registered descriptors (RDKit::Descriptors::Properties, in
//                 registration order: exactmw, amw, lipinskiHBA, ..., kappa3, Phi), then the VSA families
//                 SlogP_VSA1..12, SMR_VSA1..10, PEOE_VSA1..14 (calcSlogP_VSA, calcSMR_VSA, calcPEOE_VSA), the 42
//                 molecular quantum numbers MQN1..42 (calcMQNs) and the 8 BCUT2D eigenvalues (BCUT2D_MWHI ..
//                 BCUT2D_MRLOW). The idea is Chemprop's `rdkit_2d` / `v1_rdkit_2d` (descriptastorus' RDKit2D,
//                 200 descriptors of Python's Descriptors.descList); those that exist only in RDKit's Python
//                 layer (fragment counts fr_*, EState indices, BertzCT, Ipc, qed) are not here. names() lists
//                 every column.
//
// A value RDKit cannot compute is NaN (BCUT2D throws for elements without Gasteiger parameters, e.g. Na);
// every value of a molecule whose SMILES does not parse is NaN. What replaces them is the caller's choice
// (app/MoleculeFeatures.h: the training mean).
//
//   MoleculeDescriptors d("rdkit2d");
//   std::vector<double> row(static_cast<size_t>(d.width()));
//   bool ok = d.computeSmiles("CC(=O)Oc1ccccc1C(=O)O", row.data());    // row[d.column("tpsa")] == 63.6
//   std::vector<double> all = d.computeAll({"CCO", "c1ccccc1O"}, 2);  // [2, width], row-major
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace RDKit {
class ROMol;
}  // namespace RDKit

namespace gnn {

class MoleculeDescriptors {
 public:
  /// Chemprop's Morgan defaults.
  static constexpr int kMorganRadius = 2;
  static constexpr int kMorganBits = 2048;

  /// "morgan" | "morgan-count" | "rdkit2d"; std::invalid_argument for another name.
  explicit MoleculeDescriptors(const std::string& kind);
  static const std::vector<std::string>& kinds();

  const std::string& kind() const { return kind_; }
  int64_t width() const { return static_cast<int64_t>(names_.size()); }
  /// Column names: morgan_0 .. morgan_2047, or the descriptor names above.
  const std::vector<std::string>& names() const { return names_; }
  /// The column called `name`; -1 when there is none.
  int64_t column(const std::string& name) const;
  /// Fingerprints (bits or counts): values Chemprop leaves unscaled.
  bool isFingerprint() const { return kind_ != "rdkit2d"; }

  /// The molecule's values into row[0 .. width). Thread-safe.
  void compute(const RDKit::ROMol& mol, double* row) const;
  /// Parses `smiles` as the featuriser does (SmilesFeaturizer::parse: RDKit's defaults, ring-system limits);
  /// false (and a row of NaN) when it cannot.
  bool computeSmiles(const std::string& smiles, double* row) const;
  /// Every molecule's row, [smiles.size(), width] row-major, on `threads` OpenMP threads (each row is computed
  /// whole by one thread: the result does not depend on the thread count). `failed` (optional) receives the
  /// positions whose SMILES did not parse, in order. RDKit's log is silenced meanwhile.
  std::vector<double> computeAll(const std::vector<std::string>& smiles, int threads,
                                 std::vector<int64_t>* failed = nullptr) const;

 private:
  std::string kind_;
  std::vector<std::string> names_;
};

}  // namespace gnn
