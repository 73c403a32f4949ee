#include "data/SmiReader.h"

namespace gnn {

bool SmiReader::next(MoleculeRecord& r) {
  std::string_view line;
  for (;;) {
    if (!in_.next(line)) return false;
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string_view::npos || line[b] == '#') continue;
    line.remove_prefix(b);
    break;
  }
  r.clear();
  r.line = in_.lineNumber();
  r.index = count_++;
  const size_t ws = line.find_first_of(" \t");
  r.smiles.assign(line.substr(0, ws));
  if (ws != std::string_view::npos) {
    std::string_view rest = line.substr(ws);
    const size_t nb = rest.find_first_not_of(" \t");
    if (nb != std::string_view::npos) r.name.assign(rest.substr(nb));
  }
  return true;
}

}  // namespace gnn
