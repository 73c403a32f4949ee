// Pcqm4mv2Reader: OGB-LSC PCQM4Mv2's raw layout (ogb/lsc/pcqm4mv2.py): <root>/raw/data.csv.gz with header
// idx,smiles,homolumogap (an empty gap = an unlabelled test molecule, mask 0) and <root>/split/
// {train,valid,test}.csv.gz holding one idx per line (OGB ships split_dict.pt; the shared copy uses CSVs).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "data/MoleculeCsvReader.h"

namespace gnn {

class Pcqm4mv2Reader : public MoleculeSource {
 public:
  /// `path`: the dataset root (holding raw/) or the data.csv(.gz) file itself.
  explicit Pcqm4mv2Reader(const std::string& path);
  bool next(MoleculeRecord& record) override { return csv_.next(record); }
  const std::vector<std::string>& targetNames() const override { return csv_.targetNames(); }
  std::string format() const override { return "pcqm4mv2"; }

  /// The root directory for a root or a raw/data.csv(.gz) path.
  static std::string rootOf(const std::string& path);
  /// Split name -> idx values, from <root>/split/*.csv(.gz); empty when there is no split folder.
  static std::map<std::string, std::vector<int64_t>> readSplits(const std::string& path);
  /// When the root has OGB's split_dict.pt (a PyTorch pickle, not read here) but no split/ folder: a message
  /// with the one-line conversion to split/*.csv.gz; otherwise empty.
  static std::string splitHint(const std::string& path);

 private:
  static std::string dataFile(const std::string& path);
  MoleculeCsvReader csv_;
};

}  // namespace gnn
