#include "device/ProcessGroup.h"

#include <cstring>

namespace gnn {

bool ProcessGroup::any(bool flag, const std::string& what) {
  for (const std::string& b : allGather(std::string(1, flag ? '\1' : '\0'), what))
    if (!b.empty() && b[0] != 0) return true;
  return false;
}

std::vector<double> ProcessGroup::gatherDoubles(double mine, const std::string& what) {
  std::string bytes(sizeof(double), '\0');
  std::memcpy(bytes.data(), &mine, sizeof mine);
  std::vector<double> out;
  for (const std::string& b : allGather(bytes, what)) {
    if (b.size() != sizeof(double)) throw ProcessGroupError(what + ": a process sent " + std::to_string(b.size()) + " bytes for one number");
    double v;
    std::memcpy(&v, b.data(), sizeof v);
    out.push_back(v);
  }
  return out;
}

}  // namespace gnn
