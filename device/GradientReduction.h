// GradientReduction: the collectives between replicas. The all-reduce sums every replica's gradient of each
// parameter in a fixed order (replica, then stage; a parameter two stages use gets both), so the sum is the
// same bits whichever worker or process ran each replica; with replicated tensor sharding each replica updates
// its range of the flattened parameters and the all-gather copies every range into every replica's weights.
//
//   std::vector<Tensor> grads = reduceGradients(replicas, stages, params, gradOf);
#pragma once
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "gnn/autograd/Variable.h"
#include "gnn/tensor/Tensor.h"

namespace gnn {

/// acc + g (g when acc is undefined), in a new tensor.
Tensor sumInto(const Tensor& acc, const Tensor& g);
/// Every value of a float tensor is finite.
bool allFinite(const Tensor& t);
/// Gradients among `grads` holding NaN or Inf.
int64_t countNonFinite(const std::vector<Tensor>& grads);

/// Parameter i's gradient summed over replicas 0..replicas-1 and their stages 0..stages-1, in that order
/// (`gradOf(replica, stage, i)`: undefined when that stage has none).
std::vector<Tensor> reduceGradients(int64_t replicas, int64_t stages, size_t params,
                                    const std::function<Tensor(int64_t replica, int64_t stage, size_t param)>& gradOf);

/// Replicated tensor sharding's all-gather: replica r's weights hold the updated values of its range
/// `ranges[r]` of the flattened parameters; every range is copied into the other replicas' weights.
/// `replicaParams[r][i]`: replica r's parameter i, in the optimizer's order.
void allGatherShards(std::vector<std::vector<Variable>>& replicaParams,
                     const std::vector<std::pair<int64_t, int64_t>>& ranges);

}  // namespace gnn
