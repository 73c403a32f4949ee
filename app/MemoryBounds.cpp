#include "app/MemoryBounds.h"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "app/Program.h"

namespace gnn::app {

namespace {
std::string bytesText(double b) {
  char buf[64];
  if (!(b < 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024)) {  // past PiB: a power of ten reads better
    std::snprintf(buf, sizeof buf, "%.2g bytes", b);
    return buf;
  }
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (b >= 1024 && u < 5) {
    b /= 1024;
    ++u;
  }
  std::snprintf(buf, sizeof buf, b < 10 && u > 0 ? "%.1f %s" : "%.0f %s", b, units[u]);
  return buf;
}
// Counts as integers (2^40 as 1099511627776, not 1.099511627776e+12).
std::string valueText(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9e15) return std::to_string(static_cast<int64_t>(v));
  return formatNumber(v);
}
}  // namespace

double physicalMemoryBytes() {
  static const double bytes = [] {
    const long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
    // Unknown (a sandbox without /proc): no bound rather than a wrong one.
    return pages > 0 && size > 0 ? static_cast<double>(pages) * static_cast<double>(size) : 1e300;
  }();
  return bytes;
}

void requireFitsInMemory(const std::string& field, double value, double bytes, const std::string& source,
                         const std::string& what) {
  const double memory = physicalMemoryBytes();
  if (bytes <= memory) return;  // NaN (an estimate past double) is refused too
  // The flag (--num-nodes) or the configuration key a checkpoint holds it under (num_nodes).
  std::string name = source.empty() ? "--" + field : field;
  if (!source.empty())
    for (char& ch : name)
      if (ch == '-') ch = '_';
  const std::string text = name + " " + valueText(value) + " needs about " + bytesText(bytes) + " (" + what +
                           "), more than this machine's " + bytesText(memory) + " of memory";
  if (source.empty()) throw UsageError(text);
  throw std::runtime_error(source + ": its configuration's " + text + "; the checkpoint cannot be used");
}

}  // namespace gnn::app
