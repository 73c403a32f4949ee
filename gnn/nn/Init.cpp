#include "gnn/nn/Init.h"

#include <cmath>

namespace gnn::init {

Tensor uniform(const Shape& shape, double low, double high, Generator& gen, DType dtype) {
  Tensor t(shape, DType::F64);
  uint64_t first = gen.reserve(static_cast<uint64_t>(t.numel()));
  double* p = t.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = low + (high - low) * gen.uniformDoubleAt(first + i);
  return dtype == DType::F64 ? t : t.to(dtype);
}

Tensor glorotUniform(const Shape& shape, int64_t fanIn, int64_t fanOut, Generator& gen, DType dtype) {
  double a = std::sqrt(6.0 / static_cast<double>(fanIn + fanOut));
  return uniform(shape, -a, a, gen, dtype);
}

Tensor normal(const Shape& shape, double std, Generator& gen, DType dtype) {
  Tensor t(shape, DType::F64);
  uint64_t first = gen.reserve(static_cast<uint64_t>(t.numel()));
  double* p = t.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = std * gen.normalAt(first + i);
  return dtype == DType::F64 ? t : t.to(dtype);
}

}  // namespace gnn::init
