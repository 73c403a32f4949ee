// MultiheadSelfAttention: scaled dot-product self-attention with `heads` heads (Vaswani et al. 2017) over B
// sequences of T rows stored as [B·T, dim], with an optional additive bias per head and pair (Graphormer's
// spatial and edge encodings) and a key padding mask. One input projection Linear(dim, 3·dim) gives queries,
// keys and values side by side (PyTorch's in_proj layout), the fused multiHeadAttention op does every head's
// softmax(q k^T / sqrt(d) + bias) v with attention dropout, and Linear(dim, dim) projects the heads back.
//
//   MultiheadSelfAttention attn(80, 8, gen, /*attentionDropout=*/0.1);
//   Variable y = attn.forward(x, numGraphs, bias, keyMask);   // x [G·T, 80], bias [G, 8, T, T]
//   Variable z = attn.forwardPacked(xr, rowPtr, T, bias);       // xr [R, 80]: each graph's real rows only
#pragma once
#include "gnn/nn/Linear.h"
#include "gnn/nn/Module.h"

namespace gnn {

class MultiheadSelfAttention : public Module {
 public:
  MultiheadSelfAttention(int64_t dim, int64_t heads, Generator& gen, double attentionDropout = 0.0,
                         DType dtype = DType::F32);
  /// x [sequences·T, dim] (each sequence's T rows contiguous) -> [sequences·T, dim]. bias [sequences, heads,
  /// T, T] and keyMask uint8 [sequences, T] (1 = attend to this key) are optional. Attention dropout in
  /// training.
  Variable forward(const Variable& x, int64_t sequences, const Variable& bias = Variable(),
                   const Tensor& keyMask = Tensor()) const;
  /// Packed sequences: x [R, dim] holds sequence g in rows rowPtr[g] .. rowPtr[g+1] - 1 (int64 [G + 1], at
  /// most maxRows rows each), no padding rows -> [R, dim]; bias [G, heads, maxRows, maxRows] optional
  /// (multiHeadAttentionPacked).
  Variable forwardPacked(const Variable& x, const Tensor& rowPtr, int64_t maxRows,
                         const Variable& bias = Variable()) const;
  std::unique_ptr<Module> clone() const override;
  Linear& inProj() { return inProj_; }
  Linear& outProj() { return outProj_; }
  int64_t dim() const { return dim_; }
  int64_t heads() const { return heads_; }

 private:
  int64_t dim_, heads_;
  double attentionDropout_;
  DType dtype_;
  Linear inProj_, outProj_;
};

}  // namespace gnn
