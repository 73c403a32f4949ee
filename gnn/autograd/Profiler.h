// OpProfiler: an OpObserver that sums each op's calls, time and FLOPs per pass (forward, backward), the
// per-op table users otherwise need PyTorch's profiler for. Forward times are the gaps between ops (see
// OpEvent::seconds); backward times are each closure's own run.
//
//   OpProfiler prof;
//   { ObserverScope watch(prof); trainOneEpoch(); }
//   prof.print(std::cerr);          // op, pass, calls, ms, GFLOP, GFLOP/s, share of the profiled time
//   json["profile"] = prof.json();  // [{"op", "pass", "calls", "ms", "flops"}, ...]
#pragma once
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "gnn/autograd/OpInfo.h"

namespace gnn {

class OpProfiler : public OpObserver {
 public:
  struct Row {
    std::string op;
    Pass pass = Pass::Forward;
    int64_t calls = 0;
    double seconds = 0;
    int64_t flops = 0;
    int64_t bytes = 0;
  };

  /// Thread-safe: contexts on several threads may share one profiler.
  void onOp(const OpEvent& e) override;
  /// Rows by descending time.
  std::vector<Row> rows() const;
  double totalSeconds() const;
  int64_t totalFlops() const;
  /// Sum over the rows of one op name (both passes).
  int64_t flopsOf(const std::string& op) const;
  void clear();

  /// Fixed-width table, heaviest op first, with a total line.
  void print(std::ostream& os) const;
  /// One object per row: op, pass, calls, ms, flops (and bytes).
  nlohmann::json json() const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, Row> rows_;
};

}  // namespace gnn
