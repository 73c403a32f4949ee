#include "device/ProcessExchange.h"

#include <string>
#include <utility>

#include "device/ExecutionProgramParts.h"
#include "device/WireFormat.h"
#include "gnn/system/Check.h"

namespace gnn {

void exchangeRequest(ProcessGroup& g, const ReplicaLayout& layout, int64_t request, std::vector<MicroBatchRun>& mine,
                     std::exception_ptr error, std::vector<MicroBatchRun>& all) {
  const RequestShard& shard = layout.shard;
  ByteWriter w;
  w.put<int64_t>(static_cast<int64_t>(mine.size()));
  for (const MicroBatchRun& m : mine) {
    w.put<double>(m.weight);
    w.put<int64_t>(m.samples);
  }
  const std::string what = "the micro-batch weights of host request " + std::to_string(request);
  const std::vector<std::string> got = gatherOrRaise(g, what, error, std::move(w.bytes()));
  // Every process's (weight, samples) in its own order; the request's micro-batches in the device's order.
  std::vector<std::vector<std::pair<double, int64_t>>> per(static_cast<size_t>(g.size()));
  int64_t total = 0;
  for (int p = 0; p < g.size(); ++p) {
    ByteReader r(got[static_cast<size_t>(p)], what, kPayload);
    const auto n = r.get<int64_t>();
    for (int64_t j = 0; j < n; ++j) {
      const double wgt = r.get<double>();
      per[static_cast<size_t>(p)].push_back({wgt, r.get<int64_t>()});
    }
    r.expectEnd();
    total += n;
  }
  std::vector<int> rankOf(static_cast<size_t>(layout.replicas));
  for (int p = 0; p < g.size(); ++p) {
    const RequestShard sh = RequestShard::of(p, g.size(), layout.replicas, shard.perReplica, shard.perRequest);
    for (int64_t r = sh.first; r < sh.first + sh.count; ++r) rankOf[static_cast<size_t>(r)] = p;
  }
  all.assign(static_cast<size_t>(total), MicroBatchRun());
  std::vector<size_t> next(static_cast<size_t>(g.size()), 0);
  for (int64_t m = 0; m < total; ++m) {
    const int p = rankOf[static_cast<size_t>(shard.replicaOf(m))];
    size_t& j = next[static_cast<size_t>(p)];
    GNN_CHECK_ARG(j < per[static_cast<size_t>(p)].size(), "host request ", request, ": micro-batch ", m,
                  " of the job's ", total, " belongs to MPI rank ", p, ", which sent only ", per[static_cast<size_t>(p)].size(),
                  ": every process's loader must be sharded as the device program is (IpuOptions::shard())");
    MicroBatchRun& mb = all[static_cast<size_t>(m)];
    if (p == g.rank()) mb = std::move(mine[j]);
    mb.index = m;
    mb.weight = per[static_cast<size_t>(p)][j].first;
    mb.samples = per[static_cast<size_t>(p)][j].second;
    ++j;
  }
  for (int p = 0; p < g.size(); ++p)
    GNN_CHECK_ARG(next[static_cast<size_t>(p)] == per[static_cast<size_t>(p)].size(), "host request ", request,
                  ": MPI rank ", p, " sent ", per[static_cast<size_t>(p)].size(), " micro-batches but its replicas own ",
                  next[static_cast<size_t>(p)], " of the job's ", total,
                  ": every process's loader must be sharded as the device program is (IpuOptions::shard())");
}

void exchangeUpdate(ProcessGroup& g, const ReplicaLayout& layout, bool training, uint64_t exchange,
                    std::vector<std::vector<MicroBatchRun>>& mbs, std::exception_ptr error, int64_t& overflows) {
  const RequestShard& shard = layout.shard;
  const int64_t first = shard.first, last = shard.first + shard.count;
  ByteWriter w;
  if (!error) {
    for (int64_t r = first; r < last; ++r)
      for (const MicroBatchRun& m : mbs[static_cast<size_t>(r)]) {
        w.put<double>(m.loss);
        w.putTensor(m.output);
      }
    if (training) w.put<int64_t>(overflows);
  }
  const std::string what = std::string(training ? "the gradients of update " : "the outputs of inference request ") +
                           std::to_string(exchange);
  const std::vector<std::string> got = gatherOrRaise(g, what, error, std::move(w.bytes()));
  int64_t total = overflows;
  for (int p = 0; p < g.size(); ++p) {
    if (p == g.rank()) continue;
    const RequestShard sh = RequestShard::of(p, g.size(), layout.replicas, shard.perReplica, shard.perRequest);
    ByteReader r(got[static_cast<size_t>(p)], what, kPayload);
    for (int64_t q = sh.first; q < sh.first + sh.count; ++q)
      for (MicroBatchRun& m : mbs[static_cast<size_t>(q)]) {
        m.loss = r.get<double>();
        m.output = r.getTensor();
      }
    if (training) total += r.get<int64_t>();
    r.expectEnd();
  }
  overflows = total;
}

}  // namespace gnn
