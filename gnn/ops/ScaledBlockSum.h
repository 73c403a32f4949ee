// scaledBlockSum: base plus the column blocks of a matrix, each scaled per row, summed:
//   out[n] = base[n] + factors[0][n] * blocks[n, 0:F] + factors[1][n] * blocks[n, F:2F] + ...
// (added in that order). PNAConv's post-layer with its degree scalers folded in:
// post(cat[x, s_1 A, ..., s_S A]) = x W_x^T + b + sum_s s_s (A W_s^T), where blocks = A [W_1 | ... | W_S]^T
// is one product, so the scaled [N, S K] copies of A and their gradients are never made. The numbers of
// add(...add(base, mul(sliceCols(blocks, 0, F), factors[0]))...) without the slices (to rounding: the compiler
// may fuse a product with its sum).
//
//   Variable out = scaledBlockSum(xPart, matmul(agg, wBlocks), {Variable(), amplification, attenuation});
#pragma once
#include <vector>

#include "gnn/autograd/Variable.h"

namespace gnn {

/// base [N, F], blocks [N, S F], factors: S per-row factors [N, 1] (or [N]), an undefined one meaning 1 (no
/// product) -> [N, F]. Parallel over rows. Saves the factors for the blocks' gradient and the blocks for the
/// factors' gradient (each only when needed).
Variable scaledBlockSum(const Variable& base, const Variable& blocks, const std::vector<Variable>& factors);

}  // namespace gnn
