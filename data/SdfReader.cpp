#include "data/SdfReader.h"

#include <cmath>

namespace gnn {

bool SdfReader::next(MoleculeRecord& r) {
  std::string_view line;
  // Skip blank lines between records (and after the last "$$$$").
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
  r.name.assign(line);
  while (!r.name.empty() && r.name.back() == ' ') r.name.pop_back();
  r.y.assign(targets_.size(), std::nanf(""));
  r.yMask.assign(targets_.size(), 0);
  r.molBlock.assign(line);
  r.molBlock += '\n';
  bool inBlock = true;
  long property = -2;  // -2: none open; -1: an unrequested property; else target index
  for (;;) {
    if (!in_.next(line)) {
      if (inBlock) throw InputError(in_.path(), in_.lineNumber(), "file ends inside a mol block (no 'M  END')");
      return true;  // a last record without "$$$$" is accepted
    }
    if (line.substr(0, 4) == "$$$$") break;
    if (inBlock) {
      r.molBlock.append(line);
      r.molBlock += '\n';
      if (line.substr(0, 6) == "M  END") inBlock = false;
      continue;
    }
    if (!line.empty() && line[0] == '>') {
      property = -1;
      const size_t open = line.find('<'), close = line.rfind('>');
      if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
        const std::string_view key = line.substr(open + 1, close - open - 1);
        for (size_t t = 0; t < targets_.size(); ++t)
          if (key == targets_[t]) property = static_cast<long>(t);
      }
      continue;
    }
    if (line.empty()) {
      property = -2;
      continue;
    }
    if (property >= 0) {
      float v = 0;
      if (parseLabel(line, v)) {
        r.y[static_cast<size_t>(property)] = v;
        r.yMask[static_cast<size_t>(property)] = v == v ? 1 : 0;
      } else {
        r.error = "property '" + targets_[static_cast<size_t>(property)] + "' is not a number: '" +
                  std::string(line) + "'";
      }
      property = -1;  // only the first value line of a data item is the value
    }
  }
  return true;
}

}  // namespace gnn
