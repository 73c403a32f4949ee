// pnaAggregate: PNA's messages and its aggregators in one op (PyG 2.3.1's PNAConv.message followed by
// DegreeScalerAggregation's side-by-side aggregators): the message along edge e = j -> i is
//   m_e = (target[i] + source[j]) + edge[e]      (a term left out when its Variable is undefined),
// and each node's incoming messages are reduced by every reduction of scatterMultiAggregate ("sum" or "add",
// "mean", "min", "max", "var", "std") -> [numNodes, reductions x F], reduction-major. The numbers of
// scatterMultiAggregate(add(add(gatherRows(target, dst), gatherRows(source, src)), edge), dst, ...) without
// the [E, F] messages: each node sums its messages in edge order from 0 (sums and sums of squares in double,
// also for float32: var = mean(m^2) - mean(m)^2 cancels where the messages are close), the maximum and minimum
// go to the first message holding them, std is sqrt(clamp(var, min=stdEps)). PNA's first pre-layer is
// linear, so target = x W_i^T + b and source = x W_j^T are node-sized products (one product side by side:
// pnaAggregatePaired) and the messages are formed on the fly; with more pre-layers they come whole as `edge`.
//
//   Variable agg = pnaAggregate(xWi, xWj, Variable(), src, dst, N, {"mean", "std"});     // [N, 2 F]
//   Variable same = pnaAggregatePaired(matmul(x, wIJ), bias, Variable(), src, dst, {"mean", "std"});
#pragma once
#include <string>
#include <vector>

#include "gnn/autograd/Variable.h"

namespace gnn {

/// target [numNodes, F], source [S, F], edge [E, F] (at least one defined, one float dtype); the edges'
/// sources src int64 [E] in [0, S) (only read for a source term) and targets dst int64 [E] in [0, numNodes).
/// The backward keeps, per node and feature, the mean, variance and std (var, std) and the positions of the
/// maximum and minimum (int32), and the inputs' values when var or std needs the messages again; the
/// messages' gradient [E, F] exists only in the backward. Parallel over targets (forward, target gradient)
/// and over sources (source gradient): no atomics, the same bits for any thread count. The edges' groupings
/// by target and by source are checked and built once per edge list and cached (keyed by src's and dst's
/// storage and version: a write to them makes the next call rebuild).
Variable pnaAggregate(const Variable& target, const Variable& source, const Variable& edge, const Tensor& src,
                      const Tensor& dst, int64_t numNodes, const std::vector<std::string>& reductions,
                      double stdEps = 1e-5);
/// The same with the target's and source's terms side by side in one matrix, nodes [N, 2 F] = [target | source]
/// (PNAConv's one product x [W_i; W_j]^T for both), and targetBias [F] (PyG's pre-layer bias, may be undefined)
/// added to each target row first: the numbers of pnaAggregate(add(sliceCols(nodes, 0, F), targetBias),
/// sliceCols(nodes, F, 2 F), edge, src, dst, N, ...) without the slices. The nodes' gradient holds both halves.
Variable pnaAggregatePaired(const Variable& nodes, const Variable& targetBias, const Variable& edge,
                            const Tensor& src, const Tensor& dst, const std::vector<std::string>& reductions,
                            double stdEps = 1e-5);

}  // namespace gnn
