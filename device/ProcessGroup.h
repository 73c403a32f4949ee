// ProcessGroup: the processes a job's replicas are spread over (MPI ranks, device/MpiReplicas.h), as the device
// program sees them: who am I, how many are we, and two collectives — every process's bytes in rank order
// (allGather), and each process's bytes addressed to each other (allToAll) — from which the gradient reduction,
// the loss of an update and the stop decisions are built. Results are the same bits however the replicas are
// spread, because the same per-replica tensors are summed in the same (replica) order; no reduction tree whose
// shape depends on the process count is involved.
//
//   auto group = MpiReplicas::launched(&argc, &argv);   // null when not started by mpirun
//   IpuOptions o;  o.replicationFactor = 4;  o.processes = group;   // replicas 0-1 on rank 0, 2-3 on rank 1
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace gnn {

/// Another process did not take part in a collective in time (it died or hangs), or the transport failed.
/// The message names the rank(s) and the collective.
class ProcessGroupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Processes of this job on this host (the cores are shared among them) and this process's index among them.
  virtual int localSize() const = 0;
  virtual int localRank() const = 0;
  /// Every process calls it with its own bytes; each gets every process's bytes, result[k] = process k's. `what`
  /// names the collective in errors ("the gradients of update 12"). Throws ProcessGroupError when a process has
  /// not sent within timeoutSeconds(), naming it.
  virtual std::vector<std::string> allGather(const std::string& mine, const std::string& what) = 0;
  /// Every process calls it with one message per process, toEach[k] for process k (toEach.size() == size());
  /// each gets what every process addressed to it, result[k] = process k's toEach[rank()] (its own message
  /// included). Same deadline and errors as allGather: the basis of a reduce-scatter whose traffic per process
  /// does not grow with the process count (device/GradientExchange.h).
  virtual std::vector<std::string> allToAll(const std::vector<std::string>& toEach, const std::string& what) = 0;
  /// Ends every process of the job at once (after this process's message is printed): the way out when the
  /// processes no longer agree on what comes next.
  [[noreturn]] virtual void abort(int exitCode) = 0;
  double timeoutSeconds() const { return timeout_; }
  void setTimeoutSeconds(double s) { timeout_ = s; }
  /// "MPI rank 1 of 2 on host-a".
  virtual std::string describe() const = 0;

  /// Process k's double, in rank order: decisions one process makes from its own clock or signals (a time
  /// budget, SIGINT) are combined so that every process takes them at the same step.
  std::vector<double> gatherDoubles(double mine, const std::string& what);

 private:
  double timeout_ = 30;
};

/// Rank 0 of a group, or no group: the process that writes checkpoints, logs, traces and results.
inline bool isPrimary(const ProcessGroup* g) { return !g || g->rank() == 0; }
/// More than one process.
inline bool isDistributed(const ProcessGroup* g) { return g && g->size() > 1; }

}  // namespace gnn
