// PlanFormat: how the plan's reports write numbers: printf-style figures, milliseconds, percentages and
// thousands with commas ("24,758 samples/s"), shared by the report's parts (packing, host, step parts, scaling).
#pragma once
#include <cstdio>
#include <string>

namespace gnn::planfmt {

inline std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
inline std::string ms(double seconds) { return fmt("%.3f ms", seconds * 1e3); }
inline std::string pct(double x) { return fmt("%.0f%%", x * 100); }
inline std::string thousands(double v) {
  std::string s = fmt("%.0f", v);
  const int first = !s.empty() && s[0] == '-' ? 1 : 0;
  for (int i = static_cast<int>(s.size()) - 3; i > first; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

}  // namespace gnn::planfmt
