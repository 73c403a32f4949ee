#include "device/PipelineSchedule.h"

#include <algorithm>

#include "gnn/system/Check.h"

namespace gnn {

namespace {
PipelinePhase phaseOf(int64_t cycle, int64_t stages, int64_t microBatches) {
  if (stages == 1) return PipelinePhase::None;
  if (cycle < stages - 1) return PipelinePhase::Fill;
  if (cycle >= microBatches) return PipelinePhase::Flush;
  return PipelinePhase::Main;
}
}  // namespace

PipelineSchedule PipelineSchedule::training(int64_t P, int64_t G, ExecutionStrategy strategy) {
  GNN_CHECK_ARG(P >= 1 && G >= 1, "PipelineSchedule: ", P, " stages and ", G, " micro-batches");
  PipelineSchedule s;
  s.stages = P;
  s.microBatches = G;
  s.forTraining = true;
  if (strategy == ExecutionStrategy::Phased) {
    // Batch serialisation: each phase (stage) runs every micro-batch of the update before the next loads.
    s.lanes.resize(1);
    for (int64_t st = 0; st < P; ++st)
      for (int64_t k = 0; k < G; ++k) s.lanes[0].push_back({TaskKind::Forward, st, k, PipelinePhase::None});
    for (int64_t st = P - 1; st >= 0; --st)
      for (int64_t k = 0; k < G; ++k) s.lanes[0].push_back({TaskKind::Backward, st, k, PipelinePhase::None});
    return s;
  }
  if (strategy == ExecutionStrategy::Sharded || P == 1) {
    s.lanes.resize(1);
    for (int64_t k = 0; k < G; ++k) {
      for (int64_t st = 0; st < P; ++st) s.lanes[0].push_back({TaskKind::Forward, st, k, PipelinePhase::None});
      for (int64_t st = P - 1; st >= 0; --st) s.lanes[0].push_back({TaskKind::Backward, st, k, PipelinePhase::None});
    }
    return s;
  }
  s.lanes.resize(static_cast<size_t>(P));
  const int64_t cycles = G + 2 * (P - 1);
  for (int64_t t = 0; t < cycles; ++t)
    for (int64_t st = 0; st < P; ++st) {
      const PipelinePhase ph = phaseOf(t, P, G);
      const int64_t f = t - st, b = t - 2 * (P - 1) + st;
      if (f >= 0 && f < G) s.lanes[static_cast<size_t>(st)].push_back({TaskKind::Forward, st, f, ph});
      if (b >= 0 && b < G) s.lanes[static_cast<size_t>(st)].push_back({TaskKind::Backward, st, b, ph});
    }
  return s;
}

PipelineSchedule PipelineSchedule::inference(int64_t P, int64_t M, ExecutionStrategy strategy) {
  GNN_CHECK_ARG(P >= 1 && M >= 1, "PipelineSchedule: ", P, " stages and ", M, " micro-batches");
  PipelineSchedule s;
  s.stages = P;
  s.microBatches = M;
  s.forTraining = false;
  if (strategy == ExecutionStrategy::Phased) {
    s.lanes.resize(1);
    for (int64_t st = 0; st < P; ++st)
      for (int64_t k = 0; k < M; ++k) s.lanes[0].push_back({TaskKind::Forward, st, k, PipelinePhase::None});
    return s;
  }
  if (strategy == ExecutionStrategy::Sharded || P == 1) {
    s.lanes.resize(1);
    for (int64_t k = 0; k < M; ++k)
      for (int64_t st = 0; st < P; ++st) s.lanes[0].push_back({TaskKind::Forward, st, k, PipelinePhase::None});
    return s;
  }
  s.lanes.resize(static_cast<size_t>(P));
  for (int64_t t = 0; t < M + P - 1; ++t)
    for (int64_t st = 0; st < P; ++st) {
      const int64_t f = t - st;
      if (f >= 0 && f < M) s.lanes[static_cast<size_t>(st)].push_back({TaskKind::Forward, st, f, phaseOf(t, P, M)});
    }
  return s;
}

int64_t PipelineSchedule::maxStashed(int64_t stage) const {
  if (!forTraining) return 1;
  int64_t best = 0;
  for (const auto& lane : lanes) {
    int64_t live = 0;
    for (const auto& t : lane) {
      if (t.stage != stage) continue;
      live += t.kind == TaskKind::Forward ? 1 : -1;
      best = std::max(best, live);
    }
  }
  return best;
}

std::string PipelineSchedule::laneString(size_t lane) const {
  std::string s;
  for (const auto& t : lanes.at(lane)) {
    if (!s.empty()) s += ' ';
    s += (t.kind == TaskKind::Forward ? "F" : "B") + std::to_string(t.microBatch);
  }
  return s;
}

}  // namespace gnn
