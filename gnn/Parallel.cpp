#include "gnn/Parallel.h"

#include <Eigen/Core>

namespace gnn {
namespace {
int gThreads = 0;
}

int numThreads() { return gThreads > 0 ? gThreads : omp_get_max_threads(); }

void setNumThreads(int n) {
  gThreads = n > 0 ? n : 0;
  if (n > 0) omp_set_num_threads(n);
  // Our matmul splits rows into fixed blocks itself; Eigen's own threading would make its blocking (and
  // hence rounding) depend on the thread count.
  Eigen::setNbThreads(1);
}

}  // namespace gnn
