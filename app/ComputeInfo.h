// What the programs' --json says about how products were computed: the matmul precision (--precision) and the
// instruction set oneDNN's GEMM kernels use on this CPU (they are chosen at run time, so a portable build
// reports the same as a -march=native one).
#pragma once
#include <nlohmann/json.hpp>

namespace gnn::app {

/// Sets "precision" (fp32 | bf16, unless already set: the simulated IPU's fp16 is reported by its device
/// section), "gemm_isa" and "bf16_native" in j.
void addComputeInfo(nlohmann::json& j);

}  // namespace gnn::app
