// SmilesFeaturizer: SMILES (or an RDKit molecule) -> graph with OGB's smiles2graph features, bit for bit:
// 9 atom features with vocabularies [119,5,12,12,10,6,6,2,2] and 3 bond features [5,6,2], each bond giving
// the two directed edges i->j, j->i in bond order (ogb/utils/features.py and ogb/utils/mol.py).
//
//   SmilesFeaturizer f;
//   MoleculeGraph g;
//   std::string why;
//   if (!f.featurize("Cl[C@H](/C=C/C)Br", g, why)) report(why);
#pragma once
#include <array>
#include <memory>
#include <string>

#include "data/MoleculeGraph.h"
#include "data/RingSystemLimits.h"

namespace RDKit {
class ROMol;
class RWMol;
}  // namespace RDKit

namespace gnn {

class SmilesFeaturizer {
 public:
  /// OGB's vocabulary sizes (get_atom_feature_dims / get_bond_feature_dims); the last entry of each is the
  /// "misc" bucket that safe_index returns for a value not in the list.
  static constexpr std::array<int, 9> kAtomFeatureDims{119, 5, 12, 12, 10, 6, 6, 2, 2};
  static constexpr std::array<int, 3> kBondFeatureDims{5, 6, 2};
  /// Recorded in dataset metadata so a later change of vocabulary is detectable.
  static constexpr const char* kVocabularyVersion = "ogb-1.3.6-smiles2graph";

  struct Options {
    /// Add hydrogens as explicit atoms (RDKit AddHs) after parsing. OGB does not: off by default.
    bool explicitHydrogens = false;
    /// Molecules whose fused ring systems are over these limits are refused before RDKit sanitises them: its
    /// time on them grows exponentially (data/RingSystemLimits.h).
    RingSystemLimits ringLimits;
  };

  SmilesFeaturizer() = default;
  explicit SmilesFeaturizer(Options options) : options_(options) {}
  const Options& options() const { return options_; }

  /// Parses with RDKit's defaults (sanitise, remove Hs), like Chem.MolFromSmiles, after checking the ring-system
  /// limits (Options::ringLimits). Returns null and sets
  /// `error` when RDKit rejects the SMILES; never throws for bad input. For a syntax error RDKit gives its
  /// reason only through its log, so `error` is generic then: call explainFailure() for the log text.
  std::unique_ptr<RDKit::RWMol> parse(const std::string& smiles, std::string& error) const;

  /// Parse + featurise into `out` (buffers reused; out.smiles = smiles). False with `error` set for a
  /// rejected molecule.
  bool featurize(const std::string& smiles, MoleculeGraph& out, std::string& error) const;

  /// OGB atom/bond features of an already built molecule (its atoms in order, bonds in order).
  /// Throws std::invalid_argument for a bond stereo value OGB's list lacks (OGB raises there too).
  static void featurizeMol(const RDKit::ROMol& mol, MoleculeGraph& out);

  /// RDKit's own words for why `smiles` was rejected, captured from its error log. Not thread-safe: call it
  /// when no other thread is inside RDKit (the dataset builder calls it between parallel chunks).
  std::string explainFailure(const std::string& smiles) const;

 private:
  Options options_;
};

/// Silences RDKit's logs for the lifetime of the object (restores the previous state afterwards): the
/// featuriser reports rejected molecules itself, with their line numbers.
class RdkitLogSilencer {
 public:
  RdkitLogSilencer();
  ~RdkitLogSilencer();
  RdkitLogSilencer(const RdkitLogSilencer&) = delete;
  RdkitLogSilencer& operator=(const RdkitLogSilencer&) = delete;

 private:
  void* state_;
};

/// The RDKit version this library was built against (e.g. "2022.09.3"), for dataset metadata.
std::string rdkitVersion();

}  // namespace gnn
