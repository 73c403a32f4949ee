#include "gnn/nn/MultiheadSelfAttention.h"

#include "gnn/ops/Ops.h"

namespace gnn {

MultiheadSelfAttention::MultiheadSelfAttention(int64_t dim, int64_t heads, Generator& gen,
                                               double attentionDropout, DType dtype)
    : dim_(dim),
      heads_(heads),
      attentionDropout_(attentionDropout),
      dtype_(dtype),
      inProj_(dim, 3 * dim, gen, true, dtype),
      outProj_(dim, dim, gen, true, dtype) {
  GNN_CHECK_ARG(heads >= 1 && dim % heads == 0, "MultiheadSelfAttention: dim ", dim,
                " is not a multiple of heads ", heads);
  GNN_CHECK_ARG(attentionDropout >= 0 && attentionDropout < 1,
                "MultiheadSelfAttention: attention dropout must be in [0, 1), got ", attentionDropout);
  registerModule("in_proj", inProj_);
  registerModule("out_proj", outProj_);
}

Variable MultiheadSelfAttention::forward(const Variable& x, int64_t sequences, const Variable& bias,
                                         const Tensor& keyMask) const {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == dim_ && sequences >= 1 && x.dim(0) % sequences == 0,
                "MultiheadSelfAttention(", dim_, "): input ", shapeString(x.shape()), " is not ", sequences,
                " sequences of [T, ", dim_, "]");
  const int64_t t = x.dim(0) / sequences;
  Variable qkv = reshape(inProj_.forward(x), {sequences, t, 3 * dim_});
  Variable heads = multiHeadAttention(qkv, heads_, bias, keyMask, attentionDropout_, isTraining());
  return outProj_.forward(reshape(heads, {sequences * t, dim_}));
}

Variable MultiheadSelfAttention::forwardPacked(const Variable& x, const Tensor& rowPtr, int64_t maxRows,
                                               const Variable& bias) const {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == dim_, "MultiheadSelfAttention(", dim_, "): input ",
                shapeString(x.shape()), " is not [rows, ", dim_, "]");
  Variable heads = multiHeadAttentionPacked(inProj_.forward(x), heads_, rowPtr, maxRows, bias,
                                            attentionDropout_, isTraining());
  return outProj_.forward(heads);
}

std::unique_ptr<Module> MultiheadSelfAttention::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<MultiheadSelfAttention>(dim_, heads_, unused, attentionDropout_, dtype_));
}

}  // namespace gnn
