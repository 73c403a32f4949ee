// Trace: what a device program ran, task by task, on which simulated IPU and when, written as Chrome
// trace-event JSON (open it in https://ui.perfetto.dev or chrome://tracing) and as an SVG timeline a person
// opens in a browser: one row per simulated IPU, forward and backward slices coloured by micro-batch, the
// pipeline's fill / main / flush phases marked.
//
// Every task keeps two clocks: `cpu` (measured wall time on this machine) and `ipu` (the simulated IPU's time,
// from the cost model; NaN until one is attached). The trace is drawn on the IPU clock when every task has
// one, else on the CPU clock, and says which.
//
//   Trace t;  t.setTracks({"IPU 0 (replica 0, stage 0)", ...});
//   t.add({TaskKind::Forward, /*ipu=*/0, /*replica=*/0, /*stage=*/0, /*iteration=*/0, /*microBatch=*/3, ...});
//   t.writeChromeJson("trace.json");  t.writeSvg("trace.svg");
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace gnn {

enum class TaskKind : uint8_t { Forward, Backward, Copy, AllReduce, Optimizer, HostToDevice, DeviceToHost };
const char* taskKindName(TaskKind k);

/// Where a pipelined task sits in PopART's schedule.
enum class PipelinePhase : uint8_t { None, Fill, Main, Flush };
const char* pipelinePhaseName(PipelinePhase p);

struct TaskClock {
  double start = NAN;     // seconds since the program's first request began
  double duration = NAN;  // seconds
  bool set() const { return std::isfinite(start) && std::isfinite(duration); }
};

struct TaskRecord {
  TaskKind kind = TaskKind::Forward;
  int64_t ipu = 0;  // track; the host track is numIpus
  int64_t replica = -1, stage = -1;
  int64_t request = 0, iteration = 0, microBatch = -1;
  PipelinePhase phase = PipelinePhase::None;
  int64_t flops = 0, bytes = 0;
  TaskClock cpu;
  TaskClock ipuClock;  // the simulated IPU's time (part of the cost model; unset here)
};

class Trace {
 public:
  /// Names of the tracks (one per simulated IPU, then "host").
  void setTracks(std::vector<std::string> names);
  const std::vector<std::string>& tracks() const { return tracks_; }
  /// Thread-safe.
  void add(const TaskRecord& r);
  std::vector<TaskRecord> records() const;
  /// Calls f on every record in place (under the trace's lock): e.g. to set the IPU clock from a cost model.
  void mapRecords(const std::function<void(TaskRecord&)>& f);
  bool empty() const;
  void clear();
  /// Keeps at most this many records (the first requests); later ones are counted as omitted. 0 = no limit.
  void setLimit(size_t maxRecords) { limit_ = maxRecords; }
  size_t omitted() const { return omitted_; }

  /// Chrome trace-event JSON: one thread (track) per simulated IPU plus the host; each slice's args name its
  /// replica, stage, device iteration, micro-batch, phase, FLOPs, bytes and the other clock.
  void writeChromeJson(const std::string& path, const std::string& title) const;
  /// SVG timeline of host request `request` (default: the last one recorded, past the first request's
  /// one-time capture of the compile record).
  void writeSvg(const std::string& path, const std::string& title, int64_t request = -1) const;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> tracks_;
  std::vector<TaskRecord> records_;
  size_t limit_ = 0, omitted_ = 0;
};

}  // namespace gnn
