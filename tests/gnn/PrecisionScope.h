// Sets the current context's matmul precision (gnn/ops/MatmulPrecision.h) for a scope, for tests that compare products
// in float32 and bfloat16.
#pragma once
#include "gnn/system/ExecutionContext.h"

namespace gnn {

class PrecisionScope {
 public:
  explicit PrecisionScope(MatmulPrecision p) : previous_(ExecutionContext::current().matmulPrecision()) {
    ExecutionContext::current().setMatmulPrecision(p);
  }
  ~PrecisionScope() { ExecutionContext::current().setMatmulPrecision(previous_); }
  PrecisionScope(const PrecisionScope&) = delete;
  PrecisionScope& operator=(const PrecisionScope&) = delete;

 private:
  MatmulPrecision previous_;
};

}  // namespace gnn
