// RequestShard: which micro-batches of each host request one process runs when a job's replicas are spread over
// processes (MPI). Micro-batch m of a request goes to replica (m / perReplica) % replicas — the device's own
// mapping (device iteration, then replica, then the replica's micro-batches) — and a process runs the contiguous
// replicas [first, first + count). Loaders collate only their process's micro-batches, every micro-batch of an
// epoch runs on exactly one process, and which one depends only on its position, never on timing.
//
//   RequestShard s = RequestShard::of(/*rank=*/1, /*ranks=*/2, /*replicas=*/4, /*perReplica=G=*/2, /*perRequest=*/8);
//   s.first == 2, s.count == 2;  s.owns(4) == true (replica 2);  s.owns(3) == false
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "loaders/Batch.h"

namespace gnn {

struct RequestShard {
  int64_t replicas = 1;    // in the whole job
  int64_t first = 0;       // this process's first replica
  int64_t count = 1;       // this process's replicas
  int64_t perReplica = 1;  // consecutive micro-batches of one replica (gradient accumulation; 1 for inference)
  int64_t perRequest = 1;  // micro-batches of a full host request (device iterations x replicas x perReplica)

  /// Process `rank` of `ranks`: replicas split as evenly as possible, lower ranks taking the extra ones.
  /// Throws std::invalid_argument when there are fewer replicas than processes.
  static RequestShard of(int64_t rank, int64_t ranks, int64_t replicas, int64_t perReplica, int64_t perRequest);
  /// Every replica (one process).
  bool whole() const { return count == replicas; }
  int64_t replicaOf(int64_t m) const { return (m / perReplica) % replicas; }
  /// Micro-batch m of a host request runs here.
  bool owns(int64_t m) const {
    const int64_t r = replicaOf(m);
    return r >= first && r < first + count;
  }
  /// The epoch's `n` micro-batches (in the epoch's order) as host requests of this process: request q holds the
  /// indices j in [q·perRequest, (q+1)·perRequest) that it owns. A request may be empty (the epoch's short last
  /// one, when every micro-batch it holds belongs to other processes): the process must still run it, since the
  /// others wait for it at the weight update.
  std::vector<std::vector<int64_t>> requests(int64_t n) const;
  /// "replicas 2-3 of 4".
  std::string describe() const;
};

/// What this process sends of one host request's micro-batches `parts` (in order): those it owns, stacked (one as
/// it is; none, an empty Batch, which it must still run). Empties `parts`.
Batch ownedRequest(std::vector<Batch>& parts, const RequestShard& shard);

}  // namespace gnn
