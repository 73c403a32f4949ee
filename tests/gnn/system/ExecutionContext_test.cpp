// Execution contexts: many threads running ops share the cores without oversubscribing them and get the
// same bits; memory is counted per context; random streams come from the context's key, not shared state.
#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <dirent.h>
#include <fstream>
#include <string>
#include <thread>

#include "gnn/nn/Init.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

// A workload of parallel ops (matmul, gather/scatter, layer norm, their backward) on inputs made beforehand, so
// a thread running it does nothing but ops.
struct Inputs {
  Tensor x, w, gamma, beta, index;
};
Inputs makeInputs(uint64_t seed) {
  Generator gen(seed);
  Inputs in;
  in.x = init::uniform({2000, 48}, -1, 1, gen);
  in.w = init::uniform({48, 32}, -1, 1, gen);
  std::vector<int64_t> idx(12000);
  for (auto& v : idx) v = static_cast<int64_t>(gen.nextBelow(2000));
  in.index = Tensor::fromVector(idx);
  in.gamma = init::uniform({32}, 0.5, 1.5, gen);
  in.beta = init::uniform({32}, -1, 1, gen);
  return in;
}
std::vector<Tensor> workload(const Inputs& in) {
  Variable x(in.x, true), w(in.w, true), gamma(in.gamma, true), beta(in.beta, true);
  Variable h = layerNormRelu(matmul(x, w), gamma, beta);
  Variable s = scatterSum(gatherRows(h, in.index), in.index, 2000);
  Variable loss = mean(tanh(s));
  loss.backward();
  return {h.value(), s.value(), loss.value(), x.grad(), w.grad(), gamma.grad(), beta.grad()};
}

// Threads inside loop bodies right now, and the most seen at once.
std::atomic<int> gInside{0}, gMostInside{0};
void busyLoop() {
  parallelFor(64, 1, [](int64_t, int64_t) {
    int now = gInside.fetch_add(1) + 1;
    int seen = gMostInside.load();
    while (now > seen && !gMostInside.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    gInside.fetch_sub(1);
  });
}

// OS threads of this process in state R (running or runnable), the calling thread excluded.
int runningThreads() {
  const long self = syscall(SYS_gettid);
  int running = 0;
  DIR* d = opendir("/proc/self/task");
  if (!d) return 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.' || std::stol(e->d_name) == self) continue;
    std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/stat");
    std::string stat;
    std::getline(f, stat);
    const size_t close = stat.rfind(')');
    if (close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'R') ++running;
  }
  closedir(d);
  return running;
}

TEST(ExecutionContext, FourThreadsOfFourOnTwoCoresKeepTwoBusyAndTheSameBits) {
  setCoreSlots(2);
  std::vector<Tensor> reference;
  {
    ExecutionContext ctx;
    ContextScope use(ctx);
    setNumThreads(1);
    reference = workload(makeInputs(7));
  }
  resetPeakCoreSlotsInUse();
  gMostInside = 0;
  std::vector<std::vector<Tensor>> results(4);
  // The OS's view: threads running at once, sampled while the four threads work.
  std::atomic<bool> done{false};
  std::vector<int> samples;
  std::thread sampler([&] {
    while (!done) {
      samples.push_back(runningThreads());
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
  });
  std::vector<std::thread> threads;
  std::vector<Inputs> inputs;
  for (int t = 0; t < 4; ++t) inputs.push_back(makeInputs(7));
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &results, &inputs] {
      setNumThreads(4);  // each asks for four threads on a machine given two slots
      for (int r = 0; r < 3; ++r) {
        busyLoop();
        results[t] = workload(inputs[t]);
      }
    });
  for (auto& th : threads) th.join();
  done = true;
  sampler.join();
  std::sort(samples.begin(), samples.end());
  ASSERT_FALSE(samples.empty());
  const int p99 = samples[samples.size() * 99 / 100];
  std::printf("running OS threads: median %d, 99th percentile %d, max %d over %zu samples\n",
              samples[samples.size() / 2], p99, samples.back(), samples.size());
  // The bar: never more than two threads inside op loops at once (the slots' own count, and the loops'
  // bodies counting themselves). The OS sample is reported too: reading /proc task by task is not an atomic
  // snapshot (a slot handed from one thread to another during a read counts both), so only its median is
  // held to the core count.
  EXPECT_LE(samples[samples.size() / 2], 2);
  EXPECT_LE(peakCoreSlotsInUse(), 2);
  EXPECT_LE(gMostInside.load(), 2) << "threads inside loop bodies at once";
  EXPECT_GE(gMostInside.load(), 1);
  for (int t = 0; t < 4; ++t) {
    ASSERT_EQ(results[t].size(), reference.size());
    for (size_t i = 0; i < reference.size(); ++i)
      EXPECT_TRUE(results[t][i].bitEqual(reference[i])) << "thread " << t << " output " << i;
  }
  setCoreSlots(0);
}

TEST(ExecutionContext, ThreadBudgetIsPerContext) {
  ExecutionContext a, b;
  a.setThreads(1);
  b.setThreads(3);
  {
    ContextScope use(a);
    EXPECT_EQ(numThreads(), 1);
    {
      ContextScope inner(b);
      EXPECT_EQ(numThreads(), 3);
    }
    EXPECT_EQ(numThreads(), 1);
  }
  int other = 0;
  std::thread([&] { other = numThreads(); }).join();
  EXPECT_EQ(other, defaultThreads()) << "a new thread starts from the process default";
}

TEST(ExecutionContext, TensorsAreChargedToTheAccountTheyWereAllocatedUnder) {
  auto ipu0 = std::make_shared<MemoryAccount>("ipu0"), ipu1 = std::make_shared<MemoryAccount>("ipu1");
  ExecutionContext c0, c1;
  c0.setMemoryAccount(ipu0);
  c1.setMemoryAccount(ipu1);
  Tensor kept;
  std::thread t0([&] {
    ContextScope use(c0);
    Tensor a = Tensor::zeros({1000});  // 4000 bytes, freed at the end of the scope
    kept = Tensor::zeros({250});       // 1000 bytes, outlives the thread
  });
  std::thread t1([&] {
    ContextScope use(c1);
    Generator g(1);
    Variable x(init::uniform({100, 10}, -1, 1, g));
    Variable y = matmul(x, Variable(init::uniform({10, 10}, -1, 1, g)));
  });
  t0.join();
  t1.join();
  EXPECT_EQ(ipu0->currentBytes(), 1000);
  EXPECT_EQ(ipu0->peakBytes(), 5000);
  EXPECT_EQ(ipu1->currentBytes(), 0);
  EXPECT_GE(ipu1->peakBytes(), 2 * 4000);
  kept = Tensor();  // freed on this thread: credited back to the account that paid for it
  EXPECT_EQ(ipu0->currentBytes(), 0);
}

TEST(ExecutionContext, ParallelLoopWorkersChargeTheCallersAccount) {
  setCoreSlots(2);
  auto account = std::make_shared<MemoryAccount>("loop");
  ExecutionContext ctx;
  ctx.setMemoryAccount(account);
  ctx.setThreads(2);
  {
    ContextScope use(ctx);
    std::vector<Tensor> parts(8);
    parallelFor(8, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) parts[i] = Tensor::zeros({100});
    });
    EXPECT_EQ(account->currentBytes(), 8 * 400);
  }
  setCoreSlots(0);
}

// Dropout masks from the context's key: the same whatever ran before on this thread or elsewhere.
Tensor maskOf(uint64_t seed, uint64_t step, uint64_t micro, int warmups) {
  ExecutionContext ctx;
  ContextScope use(ctx);
  Variable x(Tensor::full({4096}, 1.0));
  for (int i = 0; i < warmups; ++i) (void)dropout(x, 0.5, true);  // work before the key is set
  ctx.setRandomKey({seed, step, micro});
  (void)dropout(x, 0.3, true);  // the step's first random op
  return dropout(x, 0.5, true).value();
}

TEST(ExecutionContext, RandomStreamsComeFromTheKeyNotFromOrder) {
  Tensor a = maskOf(1, 10, 2, 0), b = maskOf(1, 10, 2, 5);
  EXPECT_TRUE(a.bitEqual(b));
  EXPECT_FALSE(a.bitEqual(maskOf(1, 10, 3, 0))) << "another micro-batch";
  EXPECT_FALSE(a.bitEqual(maskOf(1, 11, 2, 0))) << "another step";
  EXPECT_FALSE(a.bitEqual(maskOf(2, 10, 2, 0))) << "another seed";
  // Micro-batches run in any order on any thread give the same masks.
  std::vector<Tensor> forward(3), backward(3);
  for (int k = 0; k < 3; ++k) forward[k] = maskOf(9, 4, static_cast<uint64_t>(k), 0);
  std::vector<std::thread> ts;
  for (int k = 2; k >= 0; --k) ts.emplace_back([k, &backward] { backward[k] = maskOf(9, 4, static_cast<uint64_t>(k), k); });
  for (auto& t : ts) t.join();
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(forward[k].bitEqual(backward[k])) << "micro-batch " << k;
  // Without a key the stream still advances: two calls give two masks.
  Variable x(Tensor::full({4096}, 1.0));
  EXPECT_FALSE(dropout(x, 0.5, true).value().bitEqual(dropout(x, 0.5, true).value()));
}

TEST(ExecutionContext, TwoThreadsAccumulatingIntoOneGradientAreAnError) {
  // 4 MB accumulations: when ctest runs another test beside this one on a 2-core machine the two threads
  // often share a core, and then overlap only when one is preempted mid-write, which a longer write makes likely.
  Variable w(Tensor::zeros({1 << 20}), true);
  std::atomic<int> errors{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> ts;
  for (int t = 0; t < 2; ++t)
    ts.emplace_back([&] {
      while (!go) {
      }
      // Until the race is seen, for at most 5 s: 2,000 rounds were not always enough when ctest runs another
      // test beside this one on a 2-core machine (the two threads then share a core and rarely overlap).
      const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      for (int r = 0; errors == 0 && (r < 2000 || std::chrono::steady_clock::now() < end); ++r) {
        try {
          w.addGrad(Tensor::full({1 << 20}, 1.0));
        } catch (const std::logic_error&) {
          ++errors;
        }
      }
    });
  go = true;
  for (auto& t : ts) t.join();
  // A race is reported when the two writes overlap; they need not overlap on every round, but over 2,000
  // accumulations of 4 MB each on two threads (or 5 s of them) they do.
  EXPECT_GE(errors.load(), 1);
}

}  // namespace
}  // namespace gnn
