#include "gnn/nn/pool/GlobalPooling.h"

#include "gnn/ops/Ops.h"

namespace gnn {

PoolKind parsePoolKind(const std::string& name) {
  if (name == "sum" || name == "add") return PoolKind::Sum;
  if (name == "mean") return PoolKind::Mean;
  if (name == "max") return PoolKind::Max;
  invalidArgument("unknown pooling '", name, "': use sum, mean or max");
}

const char* poolKindName(PoolKind kind) {
  switch (kind) {
    case PoolKind::Sum: return "sum";
    case PoolKind::Mean: return "mean";
    case PoolKind::Max: return "max";
  }
  return "?";
}

Tensor maskColumn(const Tensor& mask, DType dtype) {
  GNN_CHECK_ARG(mask.dtype() == DType::U8 && mask.rank() == 1, "maskColumn: expected a uint8 [G] mask, got ",
                dtypeName(mask.dtype()), " ", shapeString(mask.shape()));
  Tensor col = Tensor::zeros({mask.numel(), 1}, DType::F64);
  const uint8_t* m = mask.data<uint8_t>();
  double* c = col.data<double>();
  for (int64_t i = 0; i < mask.numel(); ++i) c[i] = m[i] ? 1.0 : 0.0;
  return col.to(dtype);
}

Variable globalPool(PoolKind kind, const Variable& x, const Tensor& ptr, const Tensor& graphsMask) {
  GNN_CHECK_ARG(x.value().rank() == 2, "globalPool: x must be [N, F], got ", shapeString(x.shape()));
  GNN_CHECK_ARG(ptr.dtype() == DType::I64 && ptr.rank() == 1 && ptr.numel() >= 1, "globalPool: ptr must be int64 [G+1]");
  Variable pooled = kind == PoolKind::Sum    ? segmentSum(x, ptr)
                    : kind == PoolKind::Mean ? segmentMean(x, ptr)
                                             : segmentMax(x, ptr);
  if (!graphsMask.defined()) return pooled;
  GNN_CHECK_ARG(graphsMask.numel() == ptr.numel() - 1, "globalPool: graphsMask has ", graphsMask.numel(),
                " entries but ptr describes ", ptr.numel() - 1, " graphs");
  // Multiplying by the 0/1 column keeps real rows bit-identical (x·1 = x) and zeroes padding graphs.
  return mul(pooled, Variable(maskColumn(graphsMask, x.dtype())));
}

Variable globalSumPool(const Variable& x, const Tensor& ptr, const Tensor& graphsMask) {
  return globalPool(PoolKind::Sum, x, ptr, graphsMask);
}
Variable globalMeanPool(const Variable& x, const Tensor& ptr, const Tensor& graphsMask) {
  return globalPool(PoolKind::Mean, x, ptr, graphsMask);
}
Variable globalMaxPool(const Variable& x, const Tensor& ptr, const Tensor& graphsMask) {
  return globalPool(PoolKind::Max, x, ptr, graphsMask);
}

}  // namespace gnn
