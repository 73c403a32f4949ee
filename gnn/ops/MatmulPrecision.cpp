#include "gnn/ops/MatmulPrecision.h"

#include <stdexcept>

namespace gnn {

const char* matmulPrecisionName(MatmulPrecision p) { return p == MatmulPrecision::BFloat16 ? "bf16" : "fp32"; }

MatmulPrecision parseMatmulPrecision(const std::string& name) {
  if (name == "fp32" || name == "float32") return MatmulPrecision::Float32;
  if (name == "bf16" || name == "bfloat16") return MatmulPrecision::BFloat16;
  throw std::invalid_argument("precision '" + name + "' is not one of fp32, bf16");
}

}  // namespace gnn
