#include "device/MpiReplicas.h"

#include <chrono>
#include <climits>
#include <cstdlib>
#include <iostream>
#include <thread>

#ifdef GNN_HAVE_MPI
#include <mpi.h>
#endif

namespace gnn {

namespace {
// Set by Open MPI's mpirun (ORTE/PRRTE) and by PMI launchers (Slurm's srun, Hydra).
bool startedByLauncher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"})
    if (std::getenv(v)) return true;
  return false;
}
}  // namespace

bool MpiReplicas::available() {
#ifdef GNN_HAVE_MPI
  return true;
#else
  return false;
#endif
}

#ifdef GNN_HAVE_MPI
namespace {
MPI_Comm& commOf(void* p) { return *static_cast<MPI_Comm*>(p); }

std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int n = 0;
  MPI_Error_string(code, text, &n);
  return std::string(text, static_cast<size_t>(n));
}
}  // namespace

std::shared_ptr<MpiReplicas> MpiReplicas::launched(int* argc, char*** argv) {
  if (!startedByLauncher()) return nullptr;
  int provided = 0;
  // Collectives run on the thread that runs the device program; the device's workers never call MPI.
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw ProcessGroupError("MPI_Init_thread failed");
  std::shared_ptr<MpiReplicas> g(new MpiReplicas());
  g->comm_ = new MPI_Comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &commOf(g->comm_));
  // Errors come back as codes (named in our messages) instead of aborting inside the library.
  MPI_Comm_set_errhandler(commOf(g->comm_), MPI_ERRORS_RETURN);
  MPI_Comm_rank(commOf(g->comm_), &g->rank_);
  MPI_Comm_size(commOf(g->comm_), &g->size_);
  MPI_Comm local;
  MPI_Comm_split_type(commOf(g->comm_), MPI_COMM_TYPE_SHARED, g->rank_, MPI_INFO_NULL, &local);
  MPI_Comm_size(local, &g->localSize_);
  MPI_Comm_rank(local, &g->localRank_);
  MPI_Comm_free(&local);
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(name, &len);
  g->host_.assign(name, static_cast<size_t>(len));
  return g;
}

MpiReplicas::~MpiReplicas() {
  if (!comm_) return;
  MPI_Comm_free(&commOf(comm_));
  delete static_cast<MPI_Comm*>(comm_);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::vector<std::string> MpiReplicas::allGather(const std::string& mine, const std::string& what) {
  std::vector<const std::string*> to(static_cast<size_t>(size_), &mine);
  to[static_cast<size_t>(rank_)] = nullptr;
  std::vector<std::string> out = exchange(to, what);
  out[static_cast<size_t>(rank_)] = mine;
  return out;
}

std::vector<std::string> MpiReplicas::allToAll(const std::vector<std::string>& toEach, const std::string& what) {
  if (toEach.size() != static_cast<size_t>(size_))
    throw ProcessGroupError(what + ": " + std::to_string(toEach.size()) + " messages for " + std::to_string(size_) + " ranks");
  std::vector<const std::string*> to(static_cast<size_t>(size_));
  for (size_t p = 0; p < to.size(); ++p) to[p] = &toEach[p];
  to[static_cast<size_t>(rank_)] = nullptr;
  std::vector<std::string> out = exchange(to, what);
  out[static_cast<size_t>(rank_)] = toEach[static_cast<size_t>(rank_)];
  return out;
}

std::vector<std::string> MpiReplicas::exchange(const std::vector<const std::string*>& to, const std::string& what) {
  std::vector<std::string> out(static_cast<size_t>(size_));
  if (size_ == 1) return out;
  for (const std::string* m : to)
    if (m && m->size() > static_cast<size_t>(INT_MAX))
      throw ProcessGroupError(what + ": " + std::to_string(m->size()) + " bytes is more than one MPI message carries");
  // One tag per collective: messages of different collectives between two ranks never match each other.
  const int tag = static_cast<int>(sequence_++ % 32000) + 1;
  MPI_Comm comm = commOf(comm_);
  std::vector<MPI_Request> sends;
  std::vector<int> sendTo;  // the rank of each send, to name the one that never took its data
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    const std::string& mine = *to[static_cast<size_t>(p)];
    MPI_Request r;
    const int rc = MPI_Isend(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, p, tag, comm, &r);
    if (rc != MPI_SUCCESS) throw ProcessGroupError(what + ": sending to rank " + std::to_string(p) + " failed: " + mpiError(rc));
    sends.push_back(r);
    sendTo.push_back(p);
  }
  // A message is probed for its size, then received without blocking: a sender stopped half-way through a large
  // message must not hold this rank in MPI_Recv past the deadline.
  std::vector<bool> got(static_cast<size_t>(size_), false), posted(static_cast<size_t>(size_), false);
  std::vector<MPI_Request> recvs(static_cast<size_t>(size_), MPI_REQUEST_NULL);
  got[static_cast<size_t>(rank_)] = true;
  int pending = size_ - 1;
  bool sent = false;
  const auto start = std::chrono::steady_clock::now();
  auto sleep = std::chrono::microseconds(1);
  while (pending > 0 || !sent) {
    bool progress = false;
    for (int p = 0; p < size_; ++p) {
      if (got[static_cast<size_t>(p)]) continue;
      const auto pi = static_cast<size_t>(p);
      if (!posted[pi]) {
        int flag = 0;
        MPI_Status st;
        const int rc = MPI_Iprobe(p, tag, comm, &flag, &st);
        if (rc != MPI_SUCCESS) throw ProcessGroupError(what + ": waiting for rank " + std::to_string(p) + " failed: " + mpiError(rc));
        if (!flag) continue;
        int n = 0;
        MPI_Get_count(&st, MPI_BYTE, &n);
        out[pi].resize(static_cast<size_t>(n));
        const int rc2 = MPI_Irecv(out[pi].data(), n, MPI_BYTE, p, tag, comm, &recvs[pi]);
        if (rc2 != MPI_SUCCESS) throw ProcessGroupError(what + ": receiving from rank " + std::to_string(p) + " failed: " + mpiError(rc2));
        posted[pi] = true;
        progress = true;
      }
      int done = 0;
      const int rc = MPI_Test(&recvs[pi], &done, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) throw ProcessGroupError(what + ": receiving from rank " + std::to_string(p) + " failed: " + mpiError(rc));
      if (done) {
        got[pi] = true;
        --pending;
        progress = true;
      }
    }
    if (!sent) {
      // One test per send (a finished one becomes MPI_REQUEST_NULL, which tests done): which peer has not taken
      // its data is then known at the deadline.
      sent = true;
      for (size_t k = 0; k < sends.size(); ++k) {
        int done = 0;
        const int rc = MPI_Test(&sends[k], &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
          throw ProcessGroupError(what + ": sending to rank " + std::to_string(sendTo[k]) + " failed: " + mpiError(rc));
        sent = sent && done != 0;
      }
    }
    if (pending == 0 && sent) break;
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > timeoutSeconds()) {
      std::string missing, untaken;
      for (int p = 0; p < size_; ++p)
        if (!got[static_cast<size_t>(p)]) missing += (missing.empty() ? "" : ", ") + std::to_string(p);
      for (size_t k = 0; k < sends.size(); ++k)
        if (sends[k] != MPI_REQUEST_NULL) untaken += (untaken.empty() ? "" : ", ") + std::to_string(sendTo[k]);
      throw ProcessGroupError(
          what + ": " + (missing.empty() ? "rank " + untaken + " did not take this rank's data"
                                          : "no data from rank " + missing) +
          " after " + std::to_string(static_cast<int>(waited)) + " s (--mpi-timeout): that process died, hangs or "
          "runs a different step; ending the job");
    }
    // Poll often while data flows, back off to 1 ms while waiting on a slower rank.
    if (progress) {
      sleep = std::chrono::microseconds(1);
    } else {
      std::this_thread::sleep_for(sleep);
      sleep = std::min(sleep * 2, std::chrono::microseconds(1000));
    }
  }
  return out;
}

void MpiReplicas::abort(int exitCode) {
  std::cerr << std::flush;
  MPI_Abort(commOf(comm_), exitCode);
  std::_Exit(exitCode);
}

std::string MpiReplicas::describe() const {
  return "MPI rank " + std::to_string(rank_) + " of " + std::to_string(size_) + " on " + host_;
}

#else  // built without MPI

std::shared_ptr<MpiReplicas> MpiReplicas::launched(int*, char***) {
  if (startedByLauncher())
    throw ProcessGroupError(
        "started by mpirun, but this gnn was built without MPI (install libopenmpi-dev and configure again): "
        "every process would train the whole model on its own");
  return nullptr;
}
MpiReplicas::~MpiReplicas() = default;
std::vector<std::string> MpiReplicas::allGather(const std::string& mine, const std::string&) { return {mine}; }
std::vector<std::string> MpiReplicas::allToAll(const std::vector<std::string>& toEach, const std::string& what) {
  if (toEach.size() != 1)
    throw ProcessGroupError(what + ": " + std::to_string(toEach.size()) + " messages for one process");
  return toEach;
}
void MpiReplicas::abort(int exitCode) { std::_Exit(exitCode); }
std::string MpiReplicas::describe() const { return "one process"; }

#endif

}  // namespace gnn
