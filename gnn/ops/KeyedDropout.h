// Keyed dropout: inverted dropout whose mask is a pure function of a stream key and each row's own key, with
// no generator state. Element (r, c) is kept when a 16-bit value hashed from (key, rowKeys[r], c) is at least
// Generator::dropoutThreshold(p) (p resolved to 1/65536, as dropout()), and kept values are scaled by
// 1 / (1 - p). A row's mask therefore does not depend on which rows share the tensor or where the row sits:
// Monte Carlo dropout (models/KeyedDropoutScope.h) keys rows by (molecule, row inside the molecule), so a
// molecule's sampled outputs are the same bits in any batch, at any position, with any padding.
//
//   std::vector<uint64_t> rows = {keyOf(mol, 0), keyOf(mol, 1)};          // one key per row of h
//   Variable y = keyedDropout(h, 0.1, rows, keyedDropoutStream(seed, sample, site));
#pragma once
#include <cstdint>
#include <vector>

#include "gnn/autograd/Variable.h"

namespace gnn {

/// a [R, ...] (rows along dimension 0) times the keyed mask of p: zero with probability p, else 1/(1-p);
/// rowKeys holds one key per row. Backward: the gradient times the same mask. p == 0 returns a unchanged.
/// Throws std::invalid_argument for p outside [0, 1), a non-float a, or rowKeys.size() != rows.
Variable keyedDropout(const Variable& a, double p, const std::vector<uint64_t>& rowKeys, uint64_t key);

/// The mask keyedDropout multiplies by, [R, ...] of `dtype`.
Tensor keyedDropoutMask(const Shape& shape, DType dtype, double p, const std::vector<uint64_t>& rowKeys, uint64_t key);

/// A stream key from (seed, sample, site): SplitMix64 finalisers chained, so each part changes every bit.
uint64_t keyedDropoutStream(uint64_t seed, uint64_t sample, uint64_t site);

/// A row key from a group's key (a molecule's) and the row's index inside the group.
uint64_t keyedDropoutRow(uint64_t groupKey, uint64_t indexInGroup);

}  // namespace gnn
