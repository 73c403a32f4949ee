#include "loaders/RequestShard.h"

#include <algorithm>

#include "gnn/system/Check.h"

namespace gnn {

RequestShard RequestShard::of(int64_t rank, int64_t ranks, int64_t replicas, int64_t perReplica, int64_t perRequest) {
  GNN_CHECK_ARG(ranks >= 1 && rank >= 0 && rank < ranks, "RequestShard: rank ", rank, " of ", ranks);
  GNN_CHECK_ARG(replicas >= ranks, replicas, " replica(s) over ", ranks,
                " processes: each process runs at least one replica (give --replicas a multiple of the process count)");
  GNN_CHECK_ARG(perReplica >= 1 && perRequest >= replicas * perReplica && perRequest % (replicas * perReplica) == 0,
                "RequestShard: a request of ", perRequest, " micro-batches is not whole device iterations of ",
                replicas, " replicas x ", perReplica);
  RequestShard s;
  s.replicas = replicas;
  s.perReplica = perReplica;
  s.perRequest = perRequest;
  const int64_t base = replicas / ranks, extra = replicas % ranks;
  s.count = base + (rank < extra ? 1 : 0);
  s.first = rank * base + std::min(rank, extra);
  return s;
}

std::vector<std::vector<int64_t>> RequestShard::requests(int64_t n) const {
  std::vector<std::vector<int64_t>> out;
  for (int64_t q = 0; q * perRequest < n; ++q) {
    std::vector<int64_t> mine;
    for (int64_t j = q * perRequest; j < std::min(n, (q + 1) * perRequest); ++j)
      if (owns(j - q * perRequest)) mine.push_back(j);
    out.push_back(std::move(mine));
  }
  return out;
}

std::string RequestShard::describe() const {
  return "replica" + std::string(count > 1 ? "s " : " ") + std::to_string(first) +
         (count > 1 ? "-" + std::to_string(first + count - 1) : std::string()) + " of " + std::to_string(replicas);
}

Batch ownedRequest(std::vector<Batch>& parts, const RequestShard& shard) {
  std::vector<Batch> mine;
  for (size_t m = 0; m < parts.size(); ++m)
    if (shard.owns(static_cast<int64_t>(m))) mine.push_back(std::move(parts[m]));
  parts.clear();
  return mine.empty() ? Batch() : mine.size() == 1 ? std::move(mine.front()) : stackMicroBatches(mine);
}

}  // namespace gnn
