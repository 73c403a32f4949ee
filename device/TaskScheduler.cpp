#include "device/TaskScheduler.h"

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace gnn {

std::vector<TaskLane> lanesOf(const PipelineSchedule& schedule, int64_t firstReplica, int64_t replicas) {
  std::vector<TaskLane> lanes;
  for (int64_t r = firstReplica; r < firstReplica + replicas; ++r)
    for (const auto& l : schedule.lanes) lanes.push_back({r, &l});
  return lanes;
}

std::exception_ptr runLanes(const std::vector<TaskLane>& lanes, int64_t workers,
                            const std::function<bool(int64_t replica, const ScheduledTask&)>& ready,
                            const std::function<void(int64_t replica, const ScheduledTask&)>& run) {
  struct State {
    size_t next = 0;
    bool busy = false;
  };
  std::vector<State> state(lanes.size());
  size_t remaining = 0;
  for (const TaskLane& l : lanes) remaining += l.tasks->size();
  std::mutex mu;
  std::condition_variable cv;
  std::exception_ptr error;
  auto canRun = [&](size_t i) {
    const State& s = state[i];
    return !s.busy && s.next < lanes[i].tasks->size() && ready(lanes[i].replica, (*lanes[i].tasks)[s.next]);
  };
  auto worker = [&] {
    std::unique_lock<std::mutex> lock(mu);
    while (!error && remaining > 0) {
      size_t pick = lanes.size();
      for (size_t i = 0; i < lanes.size() && pick == lanes.size(); ++i)
        if (canRun(i)) pick = i;
      if (pick == lanes.size()) {
        bool anyBusy = false;
        for (const State& s : state) anyBusy = anyBusy || s.busy;
        if (!anyBusy) {
          error = std::make_exception_ptr(std::logic_error("device schedule stalled: no task can run"));
          cv.notify_all();
          break;
        }
        cv.wait(lock);
        continue;
      }
      State& s = state[pick];
      s.busy = true;
      const ScheduledTask task = (*lanes[pick].tasks)[s.next];
      lock.unlock();
      std::exception_ptr failed;
      try {
        run(lanes[pick].replica, task);
      } catch (...) {
        failed = std::current_exception();
      }
      lock.lock();
      s.busy = false;
      ++s.next;
      --remaining;
      if (failed && !error) error = failed;
      cv.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (int64_t w = 1; w < workers; ++w) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  return error;
}

}  // namespace gnn
