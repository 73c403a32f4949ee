#include "models/BlockState.h"

#include "gnn/system/Check.h"

namespace gnn {

void BlockState::set(const std::string& name, Variable value) {
  for (auto& [n, v] : entries_)
    if (n == name) {
      v = std::move(value);
      return;
    }
  entries_.emplace_back(name, std::move(value));
}

const Variable& BlockState::get(const std::string& name) const {
  for (const auto& [n, v] : entries_)
    if (n == name) return v;
  std::string present;
  for (const auto& [n, v] : entries_) present += (present.empty() ? "" : ", ") + n;
  invalidArgument("block state has no entry '", name, "' (present: ", present.empty() ? "none" : present,
                  "); did an earlier block not run?");
}

bool BlockState::has(const std::string& name) const {
  for (const auto& [n, v] : entries_)
    if (n == name) return true;
  return false;
}

std::vector<std::string> BlockState::names() const {
  std::vector<std::string> out;
  for (const auto& [n, v] : entries_) out.push_back(n);
  return out;
}

}  // namespace gnn
