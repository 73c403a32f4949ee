// The precision of the products inside matmul, matmulNT and linear (`--precision` of the programs): float32,
// or bfloat16 inputs with float32 accumulation and float32 outputs (what torch.autocast('cpu', bfloat16)
// does for matmuls, with float32 instead of bfloat16 outputs). Everything else (weights, optimizer state,
// activations, norms, softmax, losses, segment sums) stays float32; float64 products are never rounded.
// It is a setting of the ExecutionContext the products run under (float32 unless set), never of the process:
// a program carries it in its options (IpuOptions::precision, Precision::BF16) to every context it runs.
#pragma once
#include <string>

namespace gnn {

enum class MatmulPrecision { Float32, BFloat16 };

/// "fp32" or "bf16".
const char* matmulPrecisionName(MatmulPrecision p);
/// Parses "fp32" / "float32" / "bf16" / "bfloat16"; throws std::invalid_argument naming the choices.
MatmulPrecision parseMatmulPrecision(const std::string& name);

}  // namespace gnn
