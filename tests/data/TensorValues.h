// A tensor's elements as a std::vector, so tests compare whole tensors with EXPECT_EQ (and print them on failure).
#pragma once
#include <cstdint>
#include <vector>

#include "gnn/tensor/Tensor.h"

namespace gnn {

/// The elements of an int64 tensor, in row-major order.
inline std::vector<int64_t> values(const Tensor& t) {
  const int64_t* p = t.data<int64_t>();
  return std::vector<int64_t>(p, p + t.numel());
}

/// The elements of a float32 tensor, in row-major order.
inline std::vector<float> floats(const Tensor& t) {
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.numel());
}

}  // namespace gnn
