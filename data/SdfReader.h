// SdfReader: MDL SD files (.sdf, .sdf.gz): each record is a mol block (with 2D/3D coordinates) ending in
// "M  END", then "> <PROPERTY>" data items, then "$$$$". Requested properties become targets (missing or
// non-numeric -> NaN, mask 0). The mol block is parsed later by the featuriser (RDKit MolBlockToMol).
#pragma once
#include "data/GzLineReader.h"
#include "data/MoleculeSource.h"

namespace gnn {

class SdfReader : public MoleculeSource {
 public:
  SdfReader(const std::string& path, std::vector<std::string> targetProperties)
      : in_(path), targets_(std::move(targetProperties)) {}
  bool next(MoleculeRecord& record) override;
  const std::vector<std::string>& targetNames() const override { return targets_; }
  std::string format() const override { return "sdf"; }

 private:
  GzLineReader in_;
  std::vector<std::string> targets_;
  int64_t count_ = 0;
};

}  // namespace gnn
