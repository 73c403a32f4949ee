// SmiReader: one SMILES per line (.smi or .smi.gz), optionally followed by whitespace and a name. Blank lines
// and lines starting with '#' are skipped. There are no targets.
#pragma once
#include "data/GzLineReader.h"
#include "data/MoleculeSource.h"

namespace gnn {

class SmiReader : public MoleculeSource {
 public:
  explicit SmiReader(const std::string& path) : in_(path) {}
  bool next(MoleculeRecord& record) override;
  const std::vector<std::string>& targetNames() const override { return targets_; }
  std::string format() const override { return "smi"; }

 private:
  GzLineReader in_;
  std::vector<std::string> targets_;
  int64_t count_ = 0;
};

}  // namespace gnn
