#include "gnn/autograd/Profiler.h"

#include <algorithm>
#include <cstdio>

namespace gnn {

void OpProfiler::onOp(const OpEvent& e) {
  std::lock_guard<std::mutex> lock(mu_);
  Row& r = rows_[{e.info->name, static_cast<int>(e.pass)}];
  if (r.calls == 0) {
    r.op = e.info->name;
    r.pass = e.pass;
  }
  ++r.calls;
  r.seconds += e.seconds;
  r.flops += e.flops;
  r.bytes += e.bytes;
}

std::vector<OpProfiler::Row> OpProfiler::rows() const {
  std::vector<Row> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [k, r] : rows_) out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(), [](const Row& a, const Row& b) { return a.seconds > b.seconds; });
  return out;
}

double OpProfiler::totalSeconds() const {
  double s = 0;
  for (const Row& r : rows()) s += r.seconds;
  return s;
}

int64_t OpProfiler::totalFlops() const {
  int64_t f = 0;
  for (const Row& r : rows()) f += r.flops;
  return f;
}

int64_t OpProfiler::flopsOf(const std::string& op) const {
  int64_t f = 0;
  for (const Row& r : rows())
    if (r.op == op) f += r.flops;
  return f;
}

void OpProfiler::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  rows_.clear();
}

void OpProfiler::print(std::ostream& os) const {
  const std::vector<Row> rs = rows();
  const double total = totalSeconds();
  char line[200];
  std::snprintf(line, sizeof line, "%-18s %-8s %8s %10s %10s %9s %7s\n", "op", "pass", "calls", "ms", "GFLOP",
                "GFLOP/s", "share");
  os << line;
  int64_t flops = 0, calls = 0;
  for (const Row& r : rs) {
    const double gflop = static_cast<double>(r.flops) / 1e9;
    std::snprintf(line, sizeof line, "%-18s %-8s %8lld %10.2f %10.3f %9.2f %6.1f%%\n", r.op.c_str(),
                  passName(r.pass), static_cast<long long>(r.calls), r.seconds * 1e3, gflop,
                  r.seconds > 0 ? gflop / r.seconds : 0.0, total > 0 ? 100.0 * r.seconds / total : 0.0);
    os << line;
    flops += r.flops;
    calls += r.calls;
  }
  std::snprintf(line, sizeof line, "%-18s %-8s %8lld %10.2f %10.3f %9.2f %6.1f%%\n", "total", "", static_cast<long long>(calls),
                total * 1e3, static_cast<double>(flops) / 1e9, total > 0 ? static_cast<double>(flops) / 1e9 / total : 0.0,
                100.0);
  os << line;
}

nlohmann::json OpProfiler::json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : rows())
    out.push_back({{"op", r.op}, {"pass", passName(r.pass)}, {"calls", r.calls}, {"ms", r.seconds * 1e3},
                   {"flops", r.flops}, {"bytes", r.bytes}});
  return out;
}

}  // namespace gnn
