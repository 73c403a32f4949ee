// n "processes" of a ProcessGroup played by threads of one test: each collective is a barrier that hands every
// thread the bytes meant for it. allToAll keeps the group's deadline: a thread that does not arrive within
// timeoutSeconds() is named in a ProcessGroupError, as MpiReplicas names a rank that does not answer.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device/ProcessGroup.h"

namespace gnn::test {

struct ThreadRanks {
  std::mutex mu;
  std::condition_variable cv;
  int n = 1, arrived = 0;
  uint64_t generation = 0;
  std::vector<std::string> slots, result;
  std::vector<std::vector<std::string>> sent, delivered;  // allToAll: [from][to]
  std::vector<bool> present;                               // allToAll: who has arrived at the current one
  explicit ThreadRanks(int size)
      : n(size), slots(static_cast<size_t>(size)), sent(static_cast<size_t>(size)), present(static_cast<size_t>(size)) {}
};

class ThreadRank : public ProcessGroup {
 public:
  ThreadRank(std::shared_ptr<ThreadRanks> all, int rank) : all_(std::move(all)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return all_->n; }
  int localSize() const override { return all_->n; }
  int localRank() const override { return rank_; }
  std::vector<std::string> allGather(const std::string& mine, const std::string&) override {
    std::unique_lock<std::mutex> lock(all_->mu);
    all_->slots[static_cast<size_t>(rank_)] = mine;
    if (++all_->arrived == all_->n) {
      all_->result = all_->slots;
      all_->arrived = 0;
      ++all_->generation;
      all_->cv.notify_all();
    } else {
      const uint64_t g = all_->generation;
      all_->cv.wait(lock, [&] { return all_->generation != g; });
    }
    return all_->result;
  }
  std::vector<std::string> allToAll(const std::vector<std::string>& toEach, const std::string& what) override {
    if (toEach.size() != static_cast<size_t>(all_->n))
      throw ProcessGroupError(what + ": " + std::to_string(toEach.size()) + " messages for " + std::to_string(all_->n) + " ranks");
    std::unique_lock<std::mutex> lock(all_->mu);
    all_->sent[static_cast<size_t>(rank_)] = toEach;
    all_->present[static_cast<size_t>(rank_)] = true;
    if (++all_->arrived == all_->n) {
      all_->delivered = all_->sent;
      all_->arrived = 0;
      all_->present.assign(all_->present.size(), false);
      ++all_->generation;
      all_->cv.notify_all();
    } else {
      const uint64_t g = all_->generation;
      const auto deadline = std::chrono::duration<double>(timeoutSeconds());
      if (!all_->cv.wait_for(lock, deadline, [&] { return all_->generation != g; })) {
        std::string missing;
        for (int p = 0; p < all_->n; ++p)
          if (!all_->present[static_cast<size_t>(p)]) missing += (missing.empty() ? "" : ", ") + std::to_string(p);
        throw ProcessGroupError(what + ": no data from rank " + missing + " after " + std::to_string(timeoutSeconds()) + " s");
      }
    }
    std::vector<std::string> out;
    for (const std::vector<std::string>& from : all_->delivered) out.push_back(from[static_cast<size_t>(rank_)]);
    return out;
  }
  [[noreturn]] void abort(int) override { std::abort(); }
  std::string describe() const override { return "thread rank " + std::to_string(rank_); }

 private:
  std::shared_ptr<ThreadRanks> all_;
  int rank_;
};

}  // namespace gnn::test
