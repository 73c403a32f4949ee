// The precision of the products inside matmul, matmulNT and linear (`--precision` of the programs): float32,
// or bfloat16 inputs with float32 accumulation and float32 outputs (what torch.autocast('cpu', bfloat16)
// does for matmuls, with float32 instead of bfloat16 outputs). Everything else (weights, optimizer state,
// activations, norms, softmax, losses, segment sums) stays float32; float64 products are never rounded.
#pragma once
#include <string>

namespace gnn {

enum class MatmulPrecision { Float32, BFloat16 };

/// "fp32" or "bf16".
const char* matmulPrecisionName(MatmulPrecision p);
/// Parses "fp32" / "float32" / "bf16" / "bfloat16"; throws std::invalid_argument naming the choices.
MatmulPrecision parseMatmulPrecision(const std::string& name);

/// The precision of contexts that set none (ExecutionContext::matmulPrecision): float32 unless set.
MatmulPrecision defaultMatmulPrecision();
void setDefaultMatmulPrecision(MatmulPrecision p);

}  // namespace gnn
