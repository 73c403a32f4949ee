// BondMessages: the message step of directed message passing on bonds (D-MPNN; Yang et al. 2019, "Analyzing
// Learned Molecular Representations for Property Prediction"; Chemprop v2's _BondMessagePassingMixin.message):
// the message into directed bond u -> v is the sum of the states of the bonds entering u, less the state of its
// reverse v -> u, so a bond's message never comes straight back to it:
//
//   m_uv = sum_{k -> u} h_ku - h_vu
//
// Our graphs store each bond as two directed edges (smiles2graph: i -> j then j -> i, one bond after the other),
// and padding edges are self-loops on padding atoms; reverseEdges() pairs every edge u -> v with an edge v -> u
// from the edge list itself (a self-loop is its own reverse), so it holds for any batch layout, packing or
// trimmed edges. An edge without a reverse (a trimmed direction) subtracts nothing.
//
//   ReverseEdges rev = reverseEdges(batch.edgeIndex);
//   Variable m = bondMessages(h, batch.edgeIndex, rev, batch.numNodes);     // h [E, H] -> m [E, H]
#pragma once
#include "gnn/autograd/Variable.h"

namespace gnn {

struct ReverseEdges {
  Tensor index;  // int64 [E]: the reverse of edge e (e itself when it has none)
  Tensor mask;   // [E, 1] 0/1 column (0: no reverse, nothing to subtract); undefined when every edge has one
};

/// The reverse of each edge of edgeIndex int64 [2, E]: edge e = u -> v is paired with an edge v -> u, the k-th
/// edge u -> v with the k-th edge v -> u in edge order (parallel edges pair one to one). Edges laid out as
/// smiles2graph writes them (2k and 2k + 1 reverse each other) are recognised in one pass; other layouts are
/// sorted. maskDtype: the dtype of `mask` (the hidden states').
ReverseEdges reverseEdges(const Tensor& edgeIndex, DType maskDtype = DType::F32);

/// m_uv = sum_{k -> u} h_ku - h_{rev(uv)} for h [E, H] on the edges of edgeIndex int64 [2, E] (row 0 source,
/// row 1 target) over numNodes atoms -> [E, H]. Built from scatterSum, gatherRows, mul and sub (each
/// gradient-checked), so the gradient needs no op of its own.
Variable bondMessages(const Variable& h, const Tensor& edgeIndex, const ReverseEdges& rev, int64_t numNodes);

}  // namespace gnn
