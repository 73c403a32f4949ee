// The matrix product of the ops (matmul, matmulNT, linear, bmm, bmmNT and their gradients): operands as stored
// with their transposes, a bias, the current context's matmul precision. The one place that chooses the kernel
// (float32 and bfloat16 through gnn/ops/GemmProducts.h, float64 through Eigen) and cuts the work into blocks, so
// that every product's rows are stable (a row's bits depend on its own values, not on where it sits or on the
// batch's padding) and the same for any thread count (gnn/ops/RowBlocks.h). Ops hold no kernel policy.
#pragma once
#include <cstdint>

#include "gnn/tensor/Tensor.h"

namespace gnn::ops {

/// An operand as stored (a dense row-major matrix, or a batch of them [.., rows, cols]) and read as is or
/// transposed. `rounded`: the same values already rounded to bfloat16 (roundedOperand), for an operand that
/// several products read in bfloat16 precision; `stored` may then be null when nothing else needs the float32
/// values (a product of two rounded operands reads only those).
struct Operand {
  const Tensor* stored = nullptr;
  bool transposed = false;
  const Tensor* rounded = nullptr;
};

/// `t` (float32 [rows, cols]) rounded to bfloat16, rows in parallel.
Tensor toBfloat16(const Tensor& t);
/// `t` rounded to bfloat16 once, when the current context multiplies in bfloat16 (MatmulPrecision::BFloat16) and
/// `t` is float32: for an operand that several products read (linear's input serves its forward and its weight
/// gradient; the output gradient both backward products), at half of float32's bytes. Else an undefined tensor:
/// the products then read the float32 values.
Tensor roundedOperand(const Tensor& t);

/// op(a) [M, K] x op(b) [K, N] (+ bias [N] on every row, when not null), in the operands' dtype (float32 for
/// two rounded operands), the same bits for any thread count.
/// - op(b) transposed or not, op(a) not transposed: rows cut into row blocks of whole kernel panels, a last
///   partial panel through a zero-padded copy (row-stable).
/// - op(a) transposed and op(b) not (P^T Q with P [L, M] and Q [L, N]: a weight gradient, L the batch rows):
///   with a long L, summed over fixed chunks of L (from the shapes only) in chunk order, where row blocks would
///   be few and uneven; with `aSums`, also the column sums of P [M] from the same chunks (a bias gradient).
/// Both operands rounded: bfloat16 products on the rounded values. Else in the context's precision.
Tensor product(const Operand& a, const Operand& b, const Tensor* bias = nullptr, Tensor* aSums = nullptr);

/// out[i] = op(a[i]) op(b[i]) for every matrix of two batches of the same leading dimensions ([.., rows, cols];
/// at most one operand transposed): [.., M, N]. Work items are whole matrices (8 or more) or row blocks of
/// them, fixed by the shapes.
Tensor batchedProduct(const Operand& a, const Operand& b);

}  // namespace gnn::ops
