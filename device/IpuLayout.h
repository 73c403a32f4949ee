// IpuLayout: where a (replica, stage) of a device program runs, the one rule for its numbers: the simulated IPU's
// number in the whole job (replica-major, as plans, memory accounts and track names call it), this process's
// runtime and trace track for it (its own replicas only, stage-major within a replica; then the host's track).
// Replicas are always given by their number in the job; under mpirun a process holds replicas
// [firstLocalReplica, firstLocalReplica + localReplicas).
#pragma once
#include <cstdint>

namespace gnn {

struct IpuLayout {
  int64_t stages = 1;
  int64_t firstLocalReplica = 0, localReplicas = 1;
  bool simulated = false;  // the CPU device: one runtime and one track for everything

  /// One past this process's last replica.
  int64_t localEnd() const { return firstLocalReplica + localReplicas; }
  /// Whether this process holds the replica.
  bool isLocal(int64_t replica) const { return replica >= firstLocalReplica && replica < localEnd(); }
  /// The IPU's number in the job.
  int64_t ipu(int64_t replica, int64_t stage) const { return replica * stages + stage; }
  /// The replica's place among this process's replicas (an index into its per-replica models and weights).
  int64_t localReplica(int64_t replica) const { return replica - firstLocalReplica; }
  /// This process's runtime of the replica's stage (an index into its runtimes, replica-major).
  int64_t local(int64_t replica, int64_t stage) const { return localReplica(replica) * stages + stage; }
  /// The trace track of the replica's stage: its runtime's index; 0 on the CPU device.
  int64_t track(int64_t replica, int64_t stage) const { return simulated ? local(replica, stage) : 0; }
  /// The host's track, after the IPUs' (1 on the CPU device).
  int64_t hostTrack() const { return simulated ? localReplicas * stages : 1; }
};

}  // namespace gnn
