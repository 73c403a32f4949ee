#include "gnn/nn/Embedding.h"

#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"

namespace gnn {

Embedding::Embedding(int64_t numEmbeddings, int64_t dim, Generator& gen, bool xavierInit, DType dtype)
    : num_(numEmbeddings), dim_(dim) {
  GNN_CHECK_ARG(numEmbeddings > 0 && dim > 0, "Embedding: sizes must be positive");
  Tensor w = xavierInit ? init::glorotUniform({num_, dim_}, num_, dim_, gen, dtype)
                        : init::normal({num_, dim_}, 1.0, gen, dtype);
  weight_ = &registerParameter("weight", std::move(w));
}

std::unique_ptr<Module> Embedding::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<Embedding>(num_, dim_, unused, false, weight_->dtype()));
}

Variable Embedding::forward(const Tensor& index) const { return embedding(*weight_, index); }

}  // namespace gnn
