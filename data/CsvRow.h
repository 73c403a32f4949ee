// CsvRow: splits one CSV record into fields with RFC 4180 quoting ("a,b" is one field, "" inside quotes is a
// quote). MoleculeNet files quote names that contain commas, e.g. FreeSolv's IUPAC names.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace gnn {

class CsvRow {
 public:
  /// Parses `line`; false when a quoted field is still open at the end of the line (the record continues on
  /// the next line: append "\n" and the next line, then parse again).
  bool parse(std::string_view line, char sep = ',');
  size_t size() const { return fields_.size(); }
  const std::string& operator[](size_t i) const { return fields_[i]; }
  const std::vector<std::string>& fields() const { return fields_; }

 private:
  std::vector<std::string> fields_;  // reused between rows: strings keep their capacity
  size_t count_ = 0;
};

/// A CSV field as a number, spaces around it ignored: an empty field reads as NaN (a missing value), "nan" and
/// "inf" as themselves, an underflow as 0; false when the field is no number at all.
bool csvNumber(const std::string& field, double& v);

}  // namespace gnn
