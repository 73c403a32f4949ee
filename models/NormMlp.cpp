#include "models/NormMlp.h"

#include "gnn/ops/Ops.h"

namespace gnn {

NormMlp::NormMlp(int64_t in, int64_t hidden, int64_t out, Generator& gen, DType dtype)
    : dtype_(dtype), first_(in, hidden, gen, true, dtype), norm_(hidden, 1e-5, dtype), second_(hidden, out, gen, true, dtype) {
  registerModule("dense1", first_);
  registerModule("norm1", norm_);
  registerModule("dense2", second_);
}

Variable NormMlp::forward(const Variable& x) const { return second_.forward(gelu(norm_.forward(first_.forward(x)))); }

std::unique_ptr<Module> NormMlp::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<NormMlp>(first_.inFeatures(), first_.outFeatures(), second_.outFeatures(), unused,
                                             dtype_));
}

}  // namespace gnn
