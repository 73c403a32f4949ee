// ProcessExchange: what the processes of a distributed program (replicas spread over MPI ranks) tell each other.
// exchangeRequest, at the start of a host request: every process's micro-batch weights and samples (a pipeline
// seeds its backwards with weight / the update's total before the last forward ran). exchangeUpdate, at the end
// of an update or inference pass: the losses, outputs and (training) gradient overflow counts of the other
// processes' replicas, or the error one of them hit, raised on every process. The gradients themselves are summed
// afterwards by GradientExchange (a reduce-scatter + all-gather whose bytes do not grow with the process count).
//
//   exchangeRequest(group, layout, requestNumber, mine, error, all);
//   exchangeUpdate(group, layout, training, exchange, mbs, error, overflows);
#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <vector>

#include "device/ProcessGroup.h"
#include "gnn/tensor/Tensor.h"
#include "loaders/RequestShard.h"

namespace gnn {

struct MicroBatchRun;

/// Where the replicas of a program sit: every process computes every process's share from it.
struct ReplicaLayout {
  int64_t replicas = 1;  // in the job
  int64_t stages = 1;
  RequestShard shard;    // this process's
};

/// `mine`: this process's micro-batches of host request `request` (1-based); `all` receives the request's
/// micro-batches in the device's order, this process's moved in, the others' with their weight and samples only.
/// Throws (on every process) the error of the lowest rank that failed, or when the ranks' loaders are not
/// sharded as the program is.
void exchangeRequest(ProcessGroup& g, const ReplicaLayout& layout, int64_t request, std::vector<MicroBatchRun>& mine,
                     std::exception_ptr error, std::vector<MicroBatchRun>& all);

/// Exchange number `exchange`: fills the other processes' replicas' losses and outputs in `mbs` ([replica][k]);
/// training: adds their gradient overflows to `overflows`. Throws on every process the error of the lowest rank
/// that failed.
void exchangeUpdate(ProcessGroup& g, const ReplicaLayout& layout, bool training, uint64_t exchange,
                    std::vector<std::vector<MicroBatchRun>>& mbs, std::exception_ptr error, int64_t& overflows);

}  // namespace gnn
