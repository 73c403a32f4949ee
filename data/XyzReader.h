// XyzReader: multi-molecule XYZ (.xyz, .xyz.gz): per molecule, a line with the atom count, a comment line,
// then "Symbol x y z" lines in Angstrom. Targets are read from "key=value" pairs of the comment line (as in
// the extended-XYZ convention and ../shared/data/qm7_3d: idx=<i> ... e_pbe0_atomization_kcal_mol=<E>).
// XYZ carries no bonds: records hold atomic numbers and positions only.
#pragma once
#include "data/GzLineReader.h"
#include "data/MoleculeSource.h"

namespace gnn {

class XyzReader : public MoleculeSource {
 public:
  /// Largest frame accepted (the largest molecules people store as XYZ, proteins with hydrogens, stay well
  /// below it); a larger count is refused with its line before anything is allocated.
  static constexpr int64_t kMaxAtoms = 100000;

  XyzReader(const std::string& path, std::vector<std::string> targetKeys)
      : in_(path), targets_(std::move(targetKeys)) {}
  bool next(MoleculeRecord& record) override;
  const std::vector<std::string>& targetNames() const override { return targets_; }
  std::string format() const override { return "xyz"; }

 private:
  GzLineReader in_;
  std::vector<std::string> targets_;
  std::vector<std::string_view> fields_;
  int64_t count_ = 0;
};

}  // namespace gnn
