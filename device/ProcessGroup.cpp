#include "device/ProcessGroup.h"

#include <cstring>

namespace gnn {

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
