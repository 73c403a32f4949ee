// Prefetcher: produces items 0, 1, ..., count−1 of an epoch with make(i) on a background thread and hands
// them out in order through a bounded queue of `depth` items. Because one thread makes the items in index
// order and make(i) depends only on i, the items are exactly those of a synchronous loop (depth 0 = no thread).
//
//   Prefetcher<Batch> pf;
//   pf.start(numBatches, [&](int64_t i) { return collateBatch(i); }, /*depth=*/4);
//   Batch b;
//   while (pf.next(b)) train(b);
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace gnn {

template <class T>
class Prefetcher {
 public:
  Prefetcher() = default;
  ~Prefetcher() { stop(); }
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  /// Starts a new pass (stopping any pass in flight).
  void start(int64_t count, std::function<T(int64_t)> make, int64_t depth) {
    stop();
    count_ = count;
    make_ = std::move(make);
    depth_ = depth;
    consumed_ = 0;
    produced_ = 0;
    stopping_ = false;
    error_ = nullptr;
    queue_.clear();
    if (depth_ > 0 && count_ > 0) worker_ = std::thread([this] { run(); });
  }

  /// Next item in index order; false when the pass is over. Rethrows an exception thrown by make().
  bool next(T& out) {
    if (consumed_ >= count_) return false;
    if (depth_ <= 0) {
      out = make_(consumed_++);
      return true;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [this] { return !queue_.empty() || error_; });
    if (queue_.empty()) {
      std::exception_ptr e = error_;
      lock.unlock();
      stop();
      count_ = 0;
      std::rethrow_exception(e);
    }
    out = std::move(queue_.front());
    queue_.pop_front();
    ++consumed_;
    space_.notify_one();
    return true;
  }

  /// Ends the pass early (joins the background thread).
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    space_.notify_all();
    if (worker_.joinable()) worker_.join();
  }

  int64_t count() const { return count_; }

 private:
  void run() {
    try {
      for (int64_t i = 0; i < count_; ++i) {
        {
          std::unique_lock<std::mutex> lock(mutex_);
          space_.wait(lock, [this] { return stopping_ || static_cast<int64_t>(queue_.size()) < depth_; });
          if (stopping_) return;
        }
        T item = make_(i);  // outside the lock: this is the work that overlaps with training
        {
          std::lock_guard<std::mutex> lock(mutex_);
          queue_.push_back(std::move(item));
          ++produced_;
        }
        ready_.notify_one();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
      ready_.notify_all();
    }
  }

  int64_t count_ = 0, depth_ = 0, consumed_ = 0, produced_ = 0;
  std::function<T(int64_t)> make_;
  std::deque<T> queue_;
  std::mutex mutex_;
  std::condition_variable ready_, space_;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread worker_;
};

}  // namespace gnn
