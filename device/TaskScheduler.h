// TaskScheduler: the worker pool of one update and the order its tasks run in. Every replica runs the schedule's
// lanes (PipelineSchedule: each lane a list of tasks in order); a worker takes the first lane, in lane order,
// whose next task has its inputs, runs it outside the lock and goes back for the next. Which worker runs a task
// never changes a result: tasks hand each other values through slots and the gradients are summed afterwards
// in a fixed order.
//
//   std::exception_ptr error = runLanes(lanesOf(schedule, firstReplica, replicas), workers, ready, run);
#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <vector>

#include "device/PipelineSchedule.h"

namespace gnn {

/// One replica's copy of a schedule lane.
struct TaskLane {
  int64_t replica = 0;
  const std::vector<ScheduledTask>* tasks = nullptr;
};

/// Replicas [firstReplica, firstReplica + replicas), each with every lane of `schedule`, replica-major.
std::vector<TaskLane> lanesOf(const PipelineSchedule& schedule, int64_t firstReplica, int64_t replicas);

/// Runs every lane's tasks in order on `workers` threads (the calling thread one of them). `ready` says whether
/// a task's inputs are there (called under the pool's lock); `run` runs it. The first error a task threw (or a
/// stall: no task can run and none is running) stops the pool and is returned; null when every task ran.
std::exception_ptr runLanes(const std::vector<TaskLane>& lanes, int64_t workers,
                            const std::function<bool(int64_t replica, const ScheduledTask&)>& ready,
                            const std::function<void(int64_t replica, const ScheduledTask&)>& run);

}  // namespace gnn
