// Whether two lists of tensors hold the same bits: the device tests' weights, optimizer state and outputs, where
// a promise is "the same bits", not "close".
#pragma once
#include <vector>

#include "gnn/tensor/Tensor.h"

namespace gnn::test {

inline bool bitEqual(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].bitEqual(b[i])) return false;
  return true;
}

}  // namespace gnn::test
