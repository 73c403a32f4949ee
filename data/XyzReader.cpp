#include "data/XyzReader.h"

#include <algorithm>
#include <cmath>

#include <GraphMol/PeriodicTable.h>

namespace gnn {

namespace {
void splitWhitespace(std::string_view s, std::vector<std::string_view>& out) {
  out.clear();
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
}
}  // namespace

bool XyzReader::next(MoleculeRecord& r) {
  std::string_view line;
  bool have = false;
  while (in_.next(line)) {
    if (line.find_first_not_of(" \t") != std::string_view::npos) {
      have = true;
      break;
    }
  }
  if (!have) return false;
  r.clear();
  r.line = in_.lineNumber();
  r.index = count_++;
  const int64_t n = parseInt(line, in_);
  if (n < 0) in_.fail("negative atom count");
  // The count is a claim until the atom lines are read: nothing is sized from it (a 3-line file claiming a
  // billion atoms must fail at its end, not allocate 16 GB), and frames past kMaxAtoms are refused.
  if (n > kMaxAtoms)
    in_.fail("atom count " + std::to_string(n) + " is more than the " + std::to_string(kMaxAtoms) +
             " atoms an XYZ frame may hold here");
  if (!in_.next(line)) in_.fail("file ends before the comment line");
  r.name.assign(line);
  r.y.assign(targets_.size(), std::nanf(""));
  r.yMask.assign(targets_.size(), 0);
  splitWhitespace(line, fields_);
  for (std::string_view f : fields_) {
    const size_t eq = f.find('=');
    if (eq == std::string_view::npos) continue;
    for (size_t t = 0; t < targets_.size(); ++t) {
      if (f.substr(0, eq) != targets_[t]) continue;
      if (!parseLabel(f.substr(eq + 1), r.y[t])) r.error = "comment value '" + std::string(f) + "' is not a finite float32 number";
      r.yMask[t] = r.y[t] == r.y[t] ? 1 : 0;
    }
  }
  const RDKit::PeriodicTable* table = RDKit::PeriodicTable::getTable();
  r.atomicNumbers.reserve(static_cast<size_t>(std::min<int64_t>(n, 1024)));
  r.pos.reserve(static_cast<size_t>(std::min<int64_t>(n, 1024)) * 3);
  for (int64_t a = 0; a < n; ++a) {
    if (!in_.next(line)) in_.fail("file ends inside a molecule: expected " + std::to_string(n) + " atom lines");
    splitWhitespace(line, fields_);
    if (fields_.size() < 4) in_.fail("expected 'Symbol x y z'");
    for (int c = 0; c < 3; ++c) {
      // A coordinate must be a finite float32 (nan, inf and 1e39 parse as numbers): otherwise the molecule is
      // rejected, as an unknown element is, and the build goes on.
      const float v = static_cast<float>(parseDouble(fields_[c + 1], in_));
      if (!std::isfinite(v) && r.error.empty())
        r.error = "coordinate '" + std::string(fields_[c + 1]) + "' on line " + std::to_string(in_.lineNumber()) +
                  " is not a finite float32 number";
      r.pos.push_back(v);
    }
    int z = 0;
    try {
      z = table->getAtomicNumber(std::string(fields_[0]));
    } catch (...) {
      z = -1;
    }
    if (z <= 0) {
      r.error = "unknown element symbol '" + std::string(fields_[0]) + "' on line " + std::to_string(in_.lineNumber());
      z = 0;
    }
    r.atomicNumbers.push_back(z);
  }
  return true;
}

}  // namespace gnn
