#include "gnn/system/SystemInfo.h"

#include <sys/resource.h>

namespace gnn {

double peakRssMb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux reports KiB
}

}  // namespace gnn
