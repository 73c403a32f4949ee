// MpiReplicas: a job's replicas spread over MPI processes (Open MPI's mpirun, one or more hosts). Each rank runs
// a contiguous range of the replicas (RequestShard), the loader gives it only those replicas' micro-batches, and
// at every weight update the ranks exchange each replica's gradients in rank order; every rank then sums them in
// replica order, so the weights are the same bits for 1, 2 or 4 processes (and as one process running every
// replica). PopTorch's counterpart is `Options.Distributed.configureProcessId(rank, size)` with PopRun.
//
// No collective waits forever: each polls point-to-point messages with a deadline (--mpi-timeout, default 30 s)
// and, past it, names the ranks that did not answer; the program then prints that and calls MPI_Abort, which ends
// every process of the job. A rank that dies is also noticed by mpirun itself, which ends the job naming it.
//
//   int main(int argc, char** argv) {
//     std::shared_ptr<MpiReplicas> mpi = MpiReplicas::launched(&argc, &argv);  // null outside mpirun
//     ...  options.processes = mpi;
//   }
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "device/ProcessGroup.h"

namespace gnn {

class MpiReplicas : public ProcessGroup {
 public:
  /// Initialises MPI when this process was started by mpirun (Open MPI's or a PMI launcher's environment), else
  /// returns null (a plain process). Also null when gnn was built without MPI, after checking that the
  /// environment does not ask for it (then it throws: the job would run the same work twice).
  static std::shared_ptr<MpiReplicas> launched(int* argc, char*** argv);
  /// Whether this build has MPI.
  static bool available();
  ~MpiReplicas() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int localSize() const override { return localSize_; }
  int localRank() const override { return localRank_; }
  std::vector<std::string> allGather(const std::string& mine, const std::string& what) override;
  std::vector<std::string> allToAll(const std::vector<std::string>& toEach, const std::string& what) override;
  [[noreturn]] void abort(int exitCode) override;
  std::string describe() const override;
  const std::string& hostName() const { return host_; }

 private:
  MpiReplicas() = default;
  int rank_ = 0, size_ = 1, localSize_ = 1, localRank_ = 0;
  std::string host_;
  uint64_t sequence_ = 0;
  // Both collectives: to[p] is sent to rank p (null for this rank), result[p] received from it, with the deadline.
  std::vector<std::string> exchange(const std::vector<const std::string*>& to, const std::string& what);
  void* comm_ = nullptr;  // MPI_Comm of our own (a duplicate of MPI_COMM_WORLD)
};

}  // namespace gnn
