// GradientExchange: the sum of every replica's gradients across the processes of a ProcessGroup, as an
// order-preserving reduce-scatter and all-gather, so the bytes a process receives per update stay near twice the
// gradient's size whatever the process count (an all-gather of every replica's gradients grows with it).
//
// The gradients, every parameter's one after the other (parameters no replica touched take no room), are cut
// into size() contiguous slices balanced by elements. Process k receives slice k of every other process's
// replicas' gradients (ProcessGroup::allToAll), sums its slice over all replicas in global replica order, then
// every process receives every summed slice (allGather). Each element is summed exactly as one process running
// every replica sums it — a left fold over (replica, stage) in order, the first gradient copied and each next
// one added in the tensor's dtype, parameters no replica touched left undefined — so the result is the same
// bits for any process count. Only the lowest process's replicas (the prefix of that fold) are summed before
// they are sent; any other pre-summing would change the order of the additions.
//
//   GradientExchange exchange(group);   // one per program: it counts the bytes of every update
//   // local[r][s]: this process's replica rLo + r, stage s: its sink's gradients of the optimizer's parameters
//   std::vector<std::vector<std::vector<Tensor>>> local(Rl, std::vector<std::vector<Tensor>>(P));
//   for (int64_t r = rLo; r < rLo + Rl; ++r)
//     for (int64_t s = 0; s < P; ++s) local[r - rLo][s] = ipu(r, s).sink.grads(replicaParams(r));
//   std::vector<Tensor> grads = exchange.sum(local, rLo, "the gradients of update 12");  // [parameter], summed
// Every process calls it at the same update, once the processes agree there is no error (a process that failed
// calls nothing); it replaces sending every replica's gradients to every process and summing them there.
//
// Bytes per update, with G the bytes of the summed gradient (float32 / float64; parameters no replica touched
// count nothing), n processes, S_k ~ G / n the bytes of slice k, R replicas of which R_p on process p, P stages:
//   process k receives  m_k x S_k + (G - S_k) + H_other,   m_k = (k == 0 ? (R - R_0) x P : 1 + (R - R_0 - R_k) x P)
//   process k sends     (k == 0 ? 1 : R_k x P) x (G - S_k) + (n - 1) x S_k + (n - 1) x H_k
// (a (replica, stage) gradient without some parameters moves none of their bytes: the terms are then bounds), where
// H_p, process p's header, is 40 bytes + per parameter 2 + 8 x its dimensions (1 when p has no gradient for it)
// + 1 byte per parameter and gradient p sends (1 on rank 0, R_p x P elsewhere), and H_other the other processes'.
// With one replica per process and one stage: 2 (n - 1) / n x G + H_other received, whatever n.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "device/ProcessGroup.h"
#include "gnn/tensor/Tensor.h"

namespace gnn {

class GradientExchange {
 public:
  /// The group must outlive the exchange; every process of it calls sum() at the same point.
  explicit GradientExchange(ProcessGroup& group) : group_(group) {}

  /// The summed gradient of every replica of the job, one tensor per parameter (undefined when no replica of
  /// any process has a gradient for it), the same on every process. `local[r][s][i]`: this process's replica
  /// firstReplica + r, its pipeline stage s's gradient of optimizer parameter i (what that replica's stage sink
  /// holds for it; undefined = none) — every replica with the same stage count and parameter count. The processes'
  /// replicas are contiguous and ascending in rank order (RequestShard): rank 0 holds replica 0 on. `what` names
  /// the update in errors. Throws ProcessGroupError when a process does not answer in time (naming it) or the
  /// processes disagree on the replicas, stages or the parameters' shapes and dtypes; std::invalid_argument when
  /// `local` itself is malformed (a gradient of another dtype than float32 / float64, or shapes that differ).
  std::vector<Tensor> sum(const std::vector<std::vector<std::vector<Tensor>>>& local, int64_t firstReplica,
                          const std::string& what);

  /// Bytes this process sent to and received from the other processes in the last sum() and in all of them.
  int64_t lastBytesSent() const { return lastSent_; }
  int64_t lastBytesReceived() const { return lastReceived_; }
  int64_t totalBytesSent() const { return totalSent_; }
  int64_t totalBytesReceived() const { return totalReceived_; }

 private:
  ProcessGroup& group_;
  int64_t lastSent_ = 0, lastReceived_ = 0, totalSent_ = 0, totalReceived_ = 0;
};

}  // namespace gnn
