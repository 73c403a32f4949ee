#include "data/MoleculeCsvReader.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace gnn {

namespace {
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}
}  // namespace

MoleculeCsvReader::MoleculeCsvReader(const std::string& path, const std::string& smilesColumn,
                                     const std::vector<std::string>& targetColumns,
                                     const std::string& indexColumn, const std::string& splitColumn)
    : in_(path), targets_(targetColumns) {
  std::string_view line;
  if (!in_.next(line)) in_.fail("empty file: expected a header row");
  if (!row_.parse(line)) in_.fail("unterminated quote in the header row");
  for (const std::string& f : row_.fields()) header_.emplace_back(trimmed(f));
  smilesCol_ = column(smilesColumn);
  for (const std::string& t : targetColumns) targetCols_.push_back(column(t));
  if (!indexColumn.empty()) indexCol_ = static_cast<long>(column(indexColumn));
  if (!splitColumn.empty()) splitCol_ = static_cast<long>(column(splitColumn));
}

size_t MoleculeCsvReader::column(const std::string& name) const {
  for (size_t i = 0; i < header_.size(); ++i)
    if (header_[i] == name) return i;
  for (size_t i = 0; i < header_.size(); ++i)
    if (lower(header_[i]) == lower(name)) return i;
  std::string have;
  for (const std::string& h : header_) have += (have.empty() ? "" : ", ") + h;
  throw InputError(in_.path(), 1, "no column named '" + name + "' (columns: " + have + ")");
}

bool MoleculeCsvReader::next(MoleculeRecord& r) {
  std::string_view line;
  for (;;) {
    if (!in_.next(line)) return false;
    if (!trimmed(line).empty()) break;  // blank lines carry no molecule
  }
  r.clear();
  r.line = in_.lineNumber();
  if (!row_.parse(line)) {
    // A quoted field that spans lines: keep reading until the quote closes.
    pending_.assign(line);
    for (;;) {
      if (!in_.next(line)) throw InputError(in_.path(), r.line, "unterminated quoted field at end of file");
      pending_ += '\n';
      pending_.append(line);
      if (row_.parse(pending_)) break;
    }
  }
  r.index = count_++;
  const size_t need = std::max({smilesCol_, indexCol_ < 0 ? size_t{0} : static_cast<size_t>(indexCol_),
                                splitCol_ < 0 ? size_t{0} : static_cast<size_t>(splitCol_),
                                targetCols_.empty() ? size_t{0}
                                                    : *std::max_element(targetCols_.begin(), targetCols_.end())});
  if (row_.size() <= need) {
    r.error = "row has " + std::to_string(row_.size()) + " fields, the header has " + std::to_string(header_.size());
    return true;
  }
  // ESOL's SMILES carry a trailing space; RDKit would read it as a name separator anyway.
  r.smiles.assign(trimmed(row_[smilesCol_]));
  if (indexCol_ >= 0) {
    std::string_view f = trimmed(row_[static_cast<size_t>(indexCol_)]);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
    if (ec != std::errc() || p != f.data() + f.size())
      r.error = "index column '" + header_[static_cast<size_t>(indexCol_)] + "' is not an integer: '" +
                std::string(f) + "'";
    else
      r.index = v;
  }
  r.y.resize(targetCols_.size());
  r.yMask.resize(targetCols_.size());
  for (size_t t = 0; t < targetCols_.size(); ++t) {
    if (!parseLabel(row_[targetCols_[t]], r.y[t])) {
      r.error = "target '" + targets_[t] + "' is not a finite float32 number: '" + row_[targetCols_[t]] + "'";
      r.yMask[t] = 0;
      continue;
    }
    r.yMask[t] = r.y[t] == r.y[t] ? 1 : 0;
  }
  if (splitCol_ >= 0) {
    const std::string& f = row_[static_cast<size_t>(splitCol_)];
    if (!parseSplitName(f, r.split) && r.error.empty())
      r.error = "split column '" + header_[static_cast<size_t>(splitCol_)] + "' holds '" + std::string(trimmed(f)) +
                "', not train, valid (val, validation) or test";
  }
  if (r.smiles.empty() && r.error.empty()) r.error = "empty SMILES";
  return true;
}

}  // namespace gnn
