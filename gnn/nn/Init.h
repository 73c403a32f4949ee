// Parameter initialisers, drawn from a seeded Generator (bit-identical for a seed).
#pragma once
#include "gnn/system/Random.h"
#include "gnn/tensor/Tensor.h"

namespace gnn::init {

/// U(-a, a) with a = sqrt(6 / (fanIn + fanOut)) (Glorot & Bengio 2010); PyG's `glorot` for GCNConv.
Tensor glorotUniform(const Shape& shape, int64_t fanIn, int64_t fanOut, Generator& gen, DType dtype = DType::F32);
/// U(low, high).
Tensor uniform(const Shape& shape, double low, double high, Generator& gen, DType dtype = DType::F32);
/// N(0, std^2).
Tensor normal(const Shape& shape, double std, Generator& gen, DType dtype = DType::F32);

}  // namespace gnn::init
