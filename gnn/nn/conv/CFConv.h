// CFConv: SchNet's continuous-filter convolution (Schuett et al. 2017; PyTorch Geometric's CFConv). A filter
// per edge from its expanded distance, W = filterNet(rbf) * cutoff(d), with filterNet = Linear(rbf ->
// filters), shifted softplus, Linear(filters -> filters); then out_i = lin2(sum over edges j -> i of
// lin1(x)_j * W_e). Filters depend only on the distance, so both directions of a pair read one row: callers
// pass rbf and the cutoff per pair [P, ...] and pairOf [E] (filterMessageSum's filter index); a plain edge
// list is pairOf = identity (an undefined tensor).
//
//   CFConv conv(128, 128, 128, 50, gen);
//   Variable y = conv.forward(x, edgeIndex, rbf, cut, pairOf);    // x [N, 128] -> [N, 128]
#pragma once
#include "gnn/nn/Linear.h"
#include "gnn/nn/Module.h"

namespace gnn {

class CFConv : public Module {
 public:
  CFConv(int64_t inChannels, int64_t outChannels, int64_t filters, int64_t gaussians, Generator& gen,
         DType dtype = DType::F32);
  /// x [N, in], edgeIndex int64 [2, E], rbf [P, gaussians], cut [P] (cosine cutoff of the distances), pairOf
  /// int64 [E] into P (undefined: P = E) -> [N, out]. fusedCutoff: the cutoff is applied inside the message
  /// sum (filterMessageSum's filterScale) instead of by a mul on the filters; the same bits. plan: a
  /// messagePlan of edgeIndex and pairOf, shared by the interactions of one batch (undefined: the message sum
  /// checks and groups the edges itself); the same bits.
  Variable forward(const Variable& x, const Tensor& edgeIndex, const Variable& rbf, const Variable& cut,
                   const Tensor& pairOf = Tensor(), bool fusedCutoff = true, const Tensor& plan = Tensor()) const;
  /// The edge filters W [P, filters] (filter network times the cutoff).
  Variable filters(const Variable& rbf, const Variable& cut) const;
  /// The filter network alone, before the cutoff: Linear, shifted softplus, Linear on rbf [P, gaussians].
  Variable filterNetwork(const Variable& rbf) const;
  std::unique_ptr<Module> clone() const override;

 private:
  int64_t in_, out_, filters_, gaussians_;
  DType dtype_;
  Linear mlp1_, mlp2_, lin1_, lin2_;
};

}  // namespace gnn

namespace gnn {

/// The pairs of a directed edge list: edges j -> i and i -> j (and a self-loop alone) share a pair. pairs
/// [2, P] holds each pair's first edge in edge order (P rows of filters to compute), pairOf [E] each edge's
/// pair. Both directions of a pair have the same distance to the bit, so a filter row serves both.
struct EdgePairs {
  Tensor edgeIndex;  // int64 [2, P]
  Tensor pairOf;     // int64 [E]
};
EdgePairs edgePairs(const Tensor& edgeIndex);

}  // namespace gnn
