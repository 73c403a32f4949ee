// MoleculeCsvReader: MoleculeNet-style CSV (.csv or .csv.gz) with a header row: the SMILES column and the
// target columns are chosen by name; fields may be quoted; a missing label becomes NaN with mask 0.
#pragma once
#include <string>
#include <vector>

#include "data/CsvRow.h"
#include "data/GzLineReader.h"
#include "data/MoleculeSource.h"

namespace gnn {

class MoleculeCsvReader : public MoleculeSource {
 public:
  /// Throws InputError naming the file when a requested column is missing from the header. When
  /// `indexColumn` is given, its integer value becomes record.index (PCQM4Mv2's idx); when `splitColumn` is,
  /// its value fills record.split (parseSplitName; another value makes the record an error).
  MoleculeCsvReader(const std::string& path, const std::string& smilesColumn,
                    const std::vector<std::string>& targetColumns, const std::string& indexColumn = "",
                    const std::string& splitColumn = "");
  bool next(MoleculeRecord& record) override;
  const std::vector<std::string>& targetNames() const override { return targets_; }
  std::string format() const override { return "csv"; }
  const std::vector<std::string>& header() const { return header_; }

 private:
  size_t column(const std::string& name) const;
  GzLineReader in_;
  CsvRow row_;
  std::string pending_;
  std::vector<std::string> header_, targets_;
  size_t smilesCol_ = 0;
  long indexCol_ = -1;
  long splitCol_ = -1;
  std::vector<size_t> targetCols_;
  int64_t count_ = 0;
};

}  // namespace gnn
