// The device's task scheduler on its own: every task of every replica's lanes runs once, each lane in its order,
// no task before its inputs are ready (here: a stage's forward after the previous stage's, a backward after the
// next stage's), on any number of workers; a task's error stops the pool and is returned; a schedule that cannot
// go on is reported as a stall instead of hanging.
#include "device/TaskScheduler.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <tuple>

namespace gnn {
namespace {

using Key = std::tuple<int64_t, int, int64_t, int64_t>;  // replica, kind, stage, micro-batch
Key keyOf(int64_t replica, const ScheduledTask& t) {
  return {replica, static_cast<int>(t.kind), t.stage, t.microBatch};
}

// The data dependencies of a pipelined training schedule: forward s needs forward s-1 of the same micro-batch,
// the last stage's backward its forward, backward s the backward of s+1.
struct Dependencies {
  explicit Dependencies(int64_t s) : stages(s) {}
  int64_t stages;
  std::mutex mu;
  std::set<Key> done;
  std::vector<std::pair<int64_t, ScheduledTask>> order;
  // Under the pool's lock; `done` grows under mu while other tasks run.
  bool readyLocked(int64_t r, const ScheduledTask& t) {
    std::lock_guard<std::mutex> lock(mu);
    return ready(r, t);
  }
  bool ready(int64_t r, const ScheduledTask& t) const {
    if (t.kind == TaskKind::Forward)
      return t.stage == 0 || done.count({r, static_cast<int>(TaskKind::Forward), t.stage - 1, t.microBatch});
    if (t.stage == stages - 1) return done.count({r, static_cast<int>(TaskKind::Forward), t.stage, t.microBatch}) > 0;
    return done.count({r, static_cast<int>(TaskKind::Backward), t.stage + 1, t.microBatch}) > 0;
  }
};

TEST(TaskScheduler, EveryTaskRunsOnceInLaneOrderAfterItsInputsOnAnyWorkerCount) {
  for (ExecutionStrategy strategy : {ExecutionStrategy::Pipelined, ExecutionStrategy::Sharded}) {
    const PipelineSchedule schedule = PipelineSchedule::training(3, 6, strategy);
    for (int64_t workers : {1, 2, 5}) {
      SCOPED_TRACE(std::string(executionStrategyName(strategy)) + ", " + std::to_string(workers) + " workers");
      Dependencies deps(schedule.stages);
      const std::vector<TaskLane> lanes = lanesOf(schedule, 2, 2);  // replicas 2 and 3
      ASSERT_EQ(lanes.size(), 2 * schedule.lanes.size());
      EXPECT_EQ(lanes.front().replica, 2);
      EXPECT_EQ(lanes.back().replica, 3);
      const std::exception_ptr error = runLanes(
          lanes, workers, [&](int64_t r, const ScheduledTask& t) { return deps.readyLocked(r, t); },
          [&](int64_t r, const ScheduledTask& t) {
            std::lock_guard<std::mutex> lock(deps.mu);
            EXPECT_TRUE(deps.ready(r, t)) << "a task ran before its inputs";
            EXPECT_TRUE(deps.done.insert(keyOf(r, t)).second) << "a task ran twice";
            deps.order.emplace_back(r, t);
          });
      EXPECT_FALSE(error);
      size_t tasks = 0;
      for (const TaskLane& l : lanes) tasks += l.tasks->size();
      EXPECT_EQ(deps.order.size(), tasks);
      // Each lane's tasks in the lane's order.
      for (const TaskLane& l : lanes) {
        size_t next = 0;
        for (const auto& [r, t] : deps.order)
          if (r == l.replica && next < l.tasks->size() && keyOf(r, t) == keyOf(r, (*l.tasks)[next])) ++next;
        EXPECT_EQ(next, l.tasks->size()) << "replica " << l.replica;
      }
    }
  }
}

TEST(TaskScheduler, AFailingTaskStopsThePoolAndIsReturned) {
  const PipelineSchedule schedule = PipelineSchedule::training(2, 4, ExecutionStrategy::Pipelined);
  for (int64_t workers : {1, 2}) {
    Dependencies deps(schedule.stages);
    int64_t ran = 0;
    const std::exception_ptr error = runLanes(
        lanesOf(schedule, 0, 1), workers, [&](int64_t r, const ScheduledTask& t) { return deps.readyLocked(r, t); },
        [&](int64_t r, const ScheduledTask& t) {
          {
            std::lock_guard<std::mutex> lock(deps.mu);
            ++ran;
          }
          if (t.kind == TaskKind::Forward && t.stage == 1 && t.microBatch == 1)
            throw std::runtime_error("micro-batch 1 failed");
          std::lock_guard<std::mutex> lock(deps.mu);
          deps.done.insert(keyOf(r, t));
        });
    ASSERT_TRUE(error);
    try {
      std::rethrow_exception(error);
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "micro-batch 1 failed");
    }
    EXPECT_LT(ran, 16);  // 2 stages x 4 micro-batches x forward and backward: not all ran
  }
}

TEST(TaskScheduler, AScheduleThatCannotGoOnIsAStallNotAHang) {
  const PipelineSchedule schedule = PipelineSchedule::training(2, 2, ExecutionStrategy::Pipelined);
  const std::exception_ptr error = runLanes(
      lanesOf(schedule, 0, 1), 2,
      [](int64_t, const ScheduledTask& t) { return t.kind == TaskKind::Forward && t.stage == 0; },
      [](int64_t, const ScheduledTask&) {});
  ASSERT_TRUE(error);
  try {
    std::rethrow_exception(error);
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("stalled"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gnn
