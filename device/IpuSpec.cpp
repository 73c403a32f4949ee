#include "device/IpuSpec.h"

#include "device/IpuOptions.h"
#include "gnn/system/Check.h"

namespace gnn {

IpuSpec IpuSpec::mk2() { return IpuSpec{}; }

IpuSpec IpuSpec::bow() {
  IpuSpec s;
  s.name = "bow";
  s.description = "Graphcore Bow IPU (GC200 at 1.85 GHz, Bow-2000)";
  s.clockHz = 1.85e9;
  // Tile-local memory bandwidth scales with the clock (same tiles, same width per cycle); the per-op terms are in
  // cycles, so they scale with it too.
  s.onChipBytesPerSecond = 47.5e12 * 1.85 / 1.33;
  return s;
}

IpuSpec IpuSpec::byName(const std::string& name) {
  if (name == "mk2") return mk2();
  if (name == "bow") return bow();
  invalidArgument("unknown IPU '", name, "' (mk2, bow)");
}

IpuSpec IpuSpec::of(const IpuOptions& o) {
  IpuSpec s = byName(o.ipuSpec);
  if (o.bytesPerTile > 0) s.bytesPerTile = o.bytesPerTile;
  return s;
}

}  // namespace gnn
