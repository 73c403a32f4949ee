#include "gnn/ops/MatmulPrecision.h"

#include <atomic>
#include <stdexcept>

namespace gnn {
namespace {
std::atomic<MatmulPrecision>& processDefault() {
  static std::atomic<MatmulPrecision> p{MatmulPrecision::Float32};
  return p;
}
}  // namespace

const char* matmulPrecisionName(MatmulPrecision p) { return p == MatmulPrecision::BFloat16 ? "bf16" : "fp32"; }

MatmulPrecision parseMatmulPrecision(const std::string& name) {
  if (name == "fp32" || name == "float32") return MatmulPrecision::Float32;
  if (name == "bf16" || name == "bfloat16") return MatmulPrecision::BFloat16;
  throw std::invalid_argument("precision '" + name + "' is not one of fp32, bf16");
}

MatmulPrecision defaultMatmulPrecision() { return processDefault().load(std::memory_order_relaxed); }
void setDefaultMatmulPrecision(MatmulPrecision p) { processDefault().store(p, std::memory_order_relaxed); }

}  // namespace gnn
