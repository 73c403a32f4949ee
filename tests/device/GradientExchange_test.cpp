// The reduce-scatter + all-gather of replicas' gradients over processes played by threads (tests/mpi/
// gradient_exchange.cpp runs it under mpirun): the same bits as one process summing every replica in order, for
// any spread of the replicas, with gradients that are missing on some replicas or on all, and the bytes each
// process receives within the bound device/GradientExchange.h states.
#include <gtest/gtest.h>

#include <thread>

#include "BitEqual.h"
#include "ThreadRanks.h"
#include "device/GradientExchange.h"
#include "device/GradientReduction.h"

namespace gnn {
namespace {

using test::ThreadRank;
using test::ThreadRanks;
using Gradients = std::vector<std::vector<std::vector<Tensor>>>;  // [replica][stage][parameter]

// Odd sizes, a float64 parameter between float32 ones (its pieces of a message are then unaligned), one
// parameter without elements.
const std::vector<Shape> kShapes = {{1001}, {7}, {33, 3}, {513}, {77}, {1}, {0}, {2053}, {5, 0}};
const std::vector<DType> kTypes = {DType::F32, DType::F32, DType::F32, DType::F32, DType::F64,
                                   DType::F32, DType::F32, DType::F32, DType::F32};

// Whether replica r's stage s has a gradient for parameter i: parameter 2 none at all, parameter 1 not on replica
// 0 (the sum starts at replica 1), parameter 5 only on replica 2, parameter 8 never. With two stages, parameters
// 0-3 belong to stage 0 and 3-8 to stage 1 (parameter 3 to both).
bool touches(int64_t r, int64_t s, size_t i, int64_t stages) {
  if (i == 2 || i == 8 || (i == 1 && r == 0) || (i == 5 && r != 2)) return false;
  if (stages == 1) return true;
  return s == 0 ? i <= 3 : i >= 3;
}

// Values where the order of the additions shows: large ones of opposite signs on alternate replicas, small ones
// between them (1e7 + 0.3 rounds to 1e7 in float32).
double value(int64_t r, int64_t s, size_t i, int64_t j) {
  const double big = 1e7 * static_cast<double>(1 + (j + static_cast<int64_t>(i)) % 13) * (s == 0 ? 1 : 3);
  switch (r % 4) {
    case 0: return big;
    case 1: return 0.3 + static_cast<double>(j % 17) * 1e-3;
    case 2: return -big + static_cast<double>(r);
    default: return 0.7 - static_cast<double>(j % 11) * 1e-4 + (i == 4 ? 1e-12 : 0);
  }
}

Gradients gradients(int64_t replicas, int64_t stages) {
  Gradients g(static_cast<size_t>(replicas), std::vector<std::vector<Tensor>>(static_cast<size_t>(stages)));
  for (int64_t r = 0; r < replicas; ++r)
    for (int64_t s = 0; s < stages; ++s)
      for (size_t i = 0; i < kShapes.size(); ++i) {
        Tensor t;
        if (touches(r, s, i, stages)) {
          t = Tensor::empty(kShapes[i], kTypes[i]);
          for (int64_t j = 0; j < t.numel(); ++j) {
            if (kTypes[i] == DType::F64) t.data<double>()[j] = value(r, s, i, j);
            else t.data<float>()[j] = static_cast<float>(value(r, s, i, j));
          }
        }
        g[static_cast<size_t>(r)][static_cast<size_t>(s)].push_back(t);
      }
  return g;
}

// One process running every replica: the device's own reduction (reduceGradients: replicas in order and each
// replica's stages in order). `reversed`: the same additions in the opposite order, to show the order matters.
std::vector<Tensor> orderedSum(const Gradients& all, bool reversed = false) {
  const auto replicas = static_cast<int64_t>(all.size()), stages = static_cast<int64_t>(all.front().size());
  return reduceGradients(replicas, stages, kShapes.size(), [&](int64_t r, int64_t s, size_t i) {
    if (reversed) r = replicas - 1 - r, s = stages - 1 - s;
    return all[static_cast<size_t>(r)][static_cast<size_t>(s)][i];
  });
}

struct RankRun {
  std::vector<Tensor> sum;
  int64_t sent = 0, received = 0, totalSent = 0, totalReceived = 0;
  std::string error;
};

// Runs the exchange on len(spread) thread ranks, rank k holding spread[k] consecutive replicas, `updates` times.
std::vector<RankRun> exchangeOnRanks(const std::vector<int64_t>& spread, const Gradients& all, int updates = 1) {
  const int n = static_cast<int>(spread.size());
  auto ranks = std::make_shared<ThreadRanks>(n);
  std::vector<RankRun> runs(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  int64_t first = 0;
  for (int k = 0; k < n; ++k) {
    threads.emplace_back([&, k, first] {
      ThreadRank group(ranks, k);
      const Gradients mine(all.begin() + first, all.begin() + first + spread[static_cast<size_t>(k)]);
      GradientExchange exchange(group);
      RankRun& run = runs[static_cast<size_t>(k)];
      try {
        for (int u = 0; u < updates; ++u) run.sum = exchange.sum(mine, first, "the gradients of update " + std::to_string(u));
      } catch (const std::exception& e) {
        run.error = e.what();
      }
      run.sent = exchange.lastBytesSent();
      run.received = exchange.lastBytesReceived();
      run.totalSent = exchange.totalBytesSent();
      run.totalReceived = exchange.totalBytesReceived();
    });
    first += spread[static_cast<size_t>(k)];
  }
  for (std::thread& t : threads) t.join();
  return runs;
}

int64_t bytesOf(const std::vector<Tensor>& ts) {
  int64_t b = 0;
  for (const Tensor& t : ts)
    if (t.defined()) b += static_cast<int64_t>(t.nbytes());
  return b;
}

TEST(GradientExchange, TestValuesDependOnTheOrderOfTheSum) {
  // Otherwise the bit-equality below would not show that the order is kept.
  for (int64_t stages : {1, 2}) {
    const Gradients all = gradients(4, stages);
    EXPECT_FALSE(test::bitEqual(orderedSum(all), orderedSum(all, true))) << stages << " stages";
  }
}

TEST(GradientExchange, EverySpreadOfTheReplicasGivesTheBitsOfOneProcess) {
  for (int64_t stages : {1, 2}) {
    const Gradients all = gradients(4, stages);
    const std::vector<Tensor> one = orderedSum(all);
    for (size_t i : {size_t{2}, size_t{8}}) EXPECT_FALSE(one[i].defined()) << i;  // no replica touched them
    for (size_t i : {size_t{0}, size_t{1}, size_t{5}, size_t{6}}) EXPECT_TRUE(one[i].defined()) << i;
    for (const std::vector<int64_t>& spread :
         std::vector<std::vector<int64_t>>{{4}, {1, 1, 1, 1}, {2, 2}, {3, 1}, {2, 1, 1}, {1, 3}}) {
      const std::vector<RankRun> runs = exchangeOnRanks(spread, all);
      for (size_t k = 0; k < runs.size(); ++k) {
        ASSERT_TRUE(runs[k].error.empty()) << runs[k].error;
        ASSERT_EQ(runs[k].sum.size(), one.size());
        for (size_t i = 0; i < one.size(); ++i) {
          ASSERT_EQ(runs[k].sum[i].defined(), one[i].defined()) << "parameter " << i;
          if (one[i].defined()) {
            EXPECT_EQ(runs[k].sum[i].shape(), one[i].shape());
            EXPECT_TRUE(runs[k].sum[i].bitEqual(one[i]))
                << "parameter " << i << ", rank " << k << " of " << runs.size() << ", " << stages << " stages";
          }
        }
      }
    }
  }
}

TEST(GradientExchange, BytesPerRankStayWithinTheBound) {
  // One replica per process: at most 1.1 x 2 (n - 1) / n x the gradient's bytes received per update.
  for (int n : {2, 3, 4}) {
    const Gradients all = gradients(n, 1);
    const int64_t G = bytesOf(orderedSum(all));
    const std::vector<RankRun> runs = exchangeOnRanks(std::vector<int64_t>(static_cast<size_t>(n), 1), all, 3);
    int64_t sent = 0, received = 0;
    for (const RankRun& r : runs) {
      ASSERT_TRUE(r.error.empty()) << r.error;
      EXPECT_LE(static_cast<double>(r.received), 1.1 * 2.0 * (n - 1) / n * static_cast<double>(G)) << n << " ranks";
      EXPECT_GT(r.received, (n - 1) * G / n);  // the sums of the other slices at least
      EXPECT_EQ(r.totalReceived, 3 * r.received);
      EXPECT_EQ(r.totalSent, 3 * r.sent);
      sent += r.sent;
      received += r.received;
    }
    EXPECT_EQ(sent, received);  // every byte sent is received once
  }
  // Other spreads: received <= 1.1 x (m_k x G / n + (n - 1) / n x G), m_k the gradients of other processes rank k
  // sums (rank 0's replicas arrive pre-summed, as one).
  const Gradients all = gradients(4, 1);
  const auto G = static_cast<double>(bytesOf(orderedSum(all)));
  for (const std::vector<int64_t>& spread : std::vector<std::vector<int64_t>>{{2, 2}, {3, 1}, {2, 1, 1}}) {
    const std::vector<RankRun> runs = exchangeOnRanks(spread, all);
    const auto n = static_cast<double>(spread.size());
    for (size_t k = 0; k < runs.size(); ++k) {
      ASSERT_TRUE(runs[k].error.empty()) << runs[k].error;
      const int64_t m = k == 0 ? 4 - spread[0] : 1 + 4 - spread[0] - spread[k];
      EXPECT_LE(static_cast<double>(runs[k].received), 1.1 * (static_cast<double>(m) * G / n + (n - 1) / n * G))
          << "rank " << k << " of " << spread.size();
    }
  }
}

TEST(GradientExchange, OneProcessSendsNothing) {
  const Gradients all = gradients(3, 1);
  const std::vector<RankRun> runs = exchangeOnRanks({3}, all);
  ASSERT_TRUE(runs[0].error.empty()) << runs[0].error;
  EXPECT_TRUE(test::bitEqual(runs[0].sum, orderedSum(all)));
  EXPECT_EQ(runs[0].sent, 0);
  EXPECT_EQ(runs[0].received, 0);
}

// A process that dies once the layouts are exchanged: it never sends its slices.
class DiesBeforeSlices : public ThreadRank {
 public:
  using ThreadRank::ThreadRank;
  std::vector<std::string> allToAll(const std::vector<std::string>&, const std::string&) override {
    throw std::runtime_error("killed");
  }
};

TEST(GradientExchange, ARankThatStopsAnsweringIsNamed) {
  const Gradients all = gradients(3, 1);
  auto ranks = std::make_shared<ThreadRanks>(3);
  std::vector<std::string> errors(3);
  std::vector<std::thread> threads;
  for (int k = 0; k < 3; ++k)
    threads.emplace_back([&, k] {
      std::unique_ptr<ThreadRank> group =
          k == 2 ? std::make_unique<DiesBeforeSlices>(ranks, k) : std::make_unique<ThreadRank>(ranks, k);
      group->setTimeoutSeconds(0.3);
      GradientExchange exchange(*group);
      try {
        exchange.sum(Gradients{all[static_cast<size_t>(k)]}, k, "the gradients of update 7");
      } catch (const ProcessGroupError& e) {
        errors[static_cast<size_t>(k)] = e.what();
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(k)] = std::string("other: ") + e.what();
      }
    });
  for (std::thread& t : threads) t.join();
  for (int k : {0, 1}) {
    EXPECT_NE(errors[static_cast<size_t>(k)].find("the gradients of update 7 (reduce-scatter): no data from rank 2"),
              std::string::npos)
        << errors[static_cast<size_t>(k)];
  }
  EXPECT_EQ(errors[2], "other: killed");
}

TEST(GradientExchange, ProcessesThatDisagreeOnTheReplicasAreRefusedOnEvery) {
  const Gradients all = gradients(4, 1);
  auto ranks = std::make_shared<ThreadRanks>(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int k = 0; k < 2; ++k)
    threads.emplace_back([&, k] {
      ThreadRank group(ranks, k);
      GradientExchange exchange(group);
      try {
        // Rank 0 holds replicas 0-1, rank 1 claims 3: replica 2 would be left out of the sum.
        exchange.sum(Gradients(all.begin() + 2 * k, all.begin() + 2 * k + 1 + (1 - k)), k == 0 ? 0 : 3, "update 1");
      } catch (const ProcessGroupError& e) {
        errors[static_cast<size_t>(k)] = e.what();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors)
    EXPECT_NE(e.find("update 1: rank 1 holds replicas 3 to 3, expected 2 on"), std::string::npos) << e;
}

TEST(GradientExchange, MismatchedGradientsAreNamed) {
  ThreadRank group(std::make_shared<ThreadRanks>(1), 0);
  GradientExchange exchange(group);
  Gradients g = gradients(2, 1);
  g[1][0][3] = Tensor::zeros({512});
  try {
    exchange.sum(g, 0, "update 4");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("update 4: the gradients of parameter 3 are float32 [513] and float32 [512]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gnn
