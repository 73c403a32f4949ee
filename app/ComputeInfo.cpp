#include "app/ComputeInfo.h"

#include "gnn/kernels/Gemm.h"
#include "gnn/system/ExecutionContext.h"

namespace gnn::app {

void addComputeInfo(nlohmann::json& j) {
  if (!j.contains("precision")) j["precision"] = matmulPrecisionName(ExecutionContext::current().matmulPrecision());
  j["gemm_isa"] = kernels::gemmIsa();
  j["gemm_f32_plain_target"] = kernels::plainGemmTarget();
  j["bf16_native"] = kernels::bf16Native();
}

}  // namespace gnn::app
