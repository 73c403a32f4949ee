// Replicas spread over processes, with the processes played by threads of this test (an in-process
// ProcessGroup; tests/mpi/two_ranks.sh runs the same through mpirun): the loader's shard gives every micro-batch to
// exactly one process, and the weights, losses and counts are the same bits as one process running every replica,
// also with dropout, a short last request whose share is empty on one process, and an error on one process.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "BitEqual.h"
#include "SmallMolecules.h"
#include "ThreadRanks.h"
#include "device/ProcessGroup.h"
#include "device/SimulatedIpu.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/ExecutionContext.h"
#include "loaders/FixedSizeDataLoader.h"
#include "loaders/RequestShard.h"
#include "models/OgbMolGIN.h"

namespace gnn {
namespace {

using test::ThreadRank;
using test::ThreadRanks;

const std::vector<Graph>& molecules() { return test::smallMolecules(); }
Batch fixedBatch(size_t first, size_t count) { return test::smallBatch(first, count); }
// Dropout on: the masks must not depend on which process runs a micro-batch.
std::unique_ptr<BlockModel> gin() { return test::smallGin(0.3); }

struct TrainedRun {
  std::vector<Tensor> weights;
  std::vector<double> losses;
  int64_t updates = 0, samples = 0, padded = 0;
  std::string error;
  std::vector<std::string> tracks;  // the trace of the first request
  std::vector<TaskRecord> tasks;
};

// Trains on `micro` (the job's micro-batches, in order) in requests of o.microBatchesPerRequest(), sending this
// process only its share.
TrainedRun train(const std::vector<Batch>& micro, IpuOptions o, std::shared_ptr<ProcessGroup> group) {
  ExecutionContext::current().setRandomKey({5, 0, 0});
  auto model = gin();
  Adam opt({{model->parameters(), 0.0}}, 1e-2);
  o.processes = group;
  SimulatedIpu ipu;
  LossFn loss{[](const Variable& out, const Batch& b) { return l1Loss(out, b.y, b.yMask); }, {}};
  auto program = ipu.compile(*model, loss, &opt, micro.front(), o);
  program->enableTrace(1);
  const RequestShard shard = o.shard(true);
  const auto per = static_cast<size_t>(o.microBatchesPerRequest());
  TrainedRun r;
  RunArgs args;
  args.seed = 5;
  try {
    for (size_t q = 0; q < micro.size(); q += per) {
      std::vector<Batch> mine;
      for (size_t m = q; m < std::min(micro.size(), q + per); ++m)
        if (shard.owns(static_cast<int64_t>(m - q))) mine.push_back(micro[m]);
      const Batch req = mine.empty() ? Batch() : mine.size() == 1 ? mine.front() : stackMicroBatches(mine);
      const RunResult res = program->run(req, args);
      for (const UpdateResult& u : res.updateResults) r.losses.push_back(u.loss);
      r.updates += res.updates;
      r.samples += res.samples;
      r.padded += res.paddedMicroBatches;
    }
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  for (const Variable& p : model->parameters()) r.weights.push_back(p.value().clone());
  r.tracks = program->trace().tracks();
  r.tasks = program->trace().records();
  return r;
}

std::vector<TrainedRun> trainOnRanks(int ranks, const std::vector<Batch>& micro, const IpuOptions& o) {
  auto all = std::make_shared<ThreadRanks>(ranks);
  std::vector<TrainedRun> runs(static_cast<size_t>(ranks));
  std::vector<std::thread> threads;
  for (int k = 0; k < ranks; ++k)
    threads.emplace_back([&, k] { runs[static_cast<size_t>(k)] = train(micro, o, std::make_shared<ThreadRank>(all, k)); });
  for (auto& t : threads) t.join();
  return runs;
}

using test::bitEqual;

TEST(RequestShard, SplitsReplicasAndGivesEveryMicroBatchToOneProcess) {
  const RequestShard a = RequestShard::of(0, 2, 3, 2, 12), b = RequestShard::of(1, 2, 3, 2, 12);
  EXPECT_EQ(a.first, 0);
  EXPECT_EQ(a.count, 2);  // lower ranks take the extra replica
  EXPECT_EQ(b.first, 2);
  EXPECT_EQ(b.count, 1);
  EXPECT_TRUE(a.owns(3));   // replica 1
  EXPECT_TRUE(b.owns(4));   // replica 2
  EXPECT_TRUE(a.owns(6));   // device iteration 1, replica 0
  EXPECT_THROW(RequestShard::of(0, 4, 2, 1, 2), std::invalid_argument);  // fewer replicas than processes
  // 29 micro-batches: every one on exactly one process, in order, requests aligned.
  std::multiset<int64_t> seen;
  const auto qa = a.requests(29), qb = b.requests(29);
  ASSERT_EQ(qa.size(), 3u);
  ASSERT_EQ(qb.size(), 3u);
  for (const auto& q : qa) seen.insert(q.begin(), q.end());
  for (const auto& q : qb) seen.insert(q.begin(), q.end());
  EXPECT_EQ(seen.size(), 29u);
  for (int64_t j = 0; j < 29; ++j) EXPECT_EQ(seen.count(j), 1u) << j;
  // The short last request, 24..28: replicas 0, 0, 1, 1, 2.
  EXPECT_EQ(qa[2], (std::vector<int64_t>{24, 25, 26, 27}));
  EXPECT_EQ(qb[2], (std::vector<int64_t>{28}));
}

TEST(FixedSizeDataLoader, ShardedLoadersCollateEachBatchOnce) {
  auto ds = std::make_shared<InMemoryDataset>(std::vector<Graph>(molecules().begin(), molecules().begin() + 40));
  FixedSizeDataLoader::Options lo;
  lo.seed = 3;
  lo.microBatchesPerRequest = 4;
  FixedSizeOptions fixed{64, 128, 3};
  fixed.maxNodesPerGraph = 30;
  FixedSizeDataLoader whole(ds, fixed, lo);
  whole.startEpoch(1);
  std::vector<std::vector<int64_t>> wholeGraphs;
  for (Batch b; whole.next(b);) wholeGraphs.push_back(std::vector<int64_t>(b.graphIndex.begin(), b.graphIndex.end()));
  std::set<std::vector<int64_t>> got;
  int64_t requests = -1;
  for (int64_t rank = 0; rank < 2; ++rank) {
    FixedSizeDataLoader::Options so = lo;
    so.shard = RequestShard::of(rank, 2, 2, 2, 4);
    FixedSizeDataLoader part(ds, fixed, so);
    part.startEpoch(1);
    int64_t n = 0;
    for (Batch b; part.nextRequest(b); ++n) {
      EXPECT_EQ(part.lastRequestMicroBatches(), std::min<int64_t>(4, whole.numBatches() - 4 * n));
      const int64_t k = b.numGraphs / 3;
      for (int64_t m = 0; m < k; ++m) {
        const Batch mb = k == 1 ? b : microBatch(b, m, k);
        got.insert(std::vector<int64_t>(mb.graphIndex.begin(), mb.graphIndex.end()));
      }
    }
    if (requests >= 0) {
      EXPECT_EQ(n, requests);  // every process sees every request, empty or not
    }
    requests = n;
  }
  EXPECT_EQ(got.size(), wholeGraphs.size());
  for (const auto& g : wholeGraphs) EXPECT_TRUE(got.count(g));
}

TEST(ProcessGroup, TwoProcessesEndWithTheBitsOfOne) {
  // 4 replicas x 2 micro-batches = 8 per update; 19 micro-batches: 2 full updates and a short third one (3
  // micro-batches, all of replicas 0-1: the second process's share of it is empty), padded.
  std::vector<Batch> micro;
  for (size_t i = 0; i < 19; ++i) micro.push_back(fixedBatch((i * 3) % 60, 3));
  IpuOptions o;
  o.replicationFactor = 4;
  o.gradientAccumulation = 2;
  const TrainedRun one = train(micro, o, nullptr);
  ASSERT_TRUE(one.error.empty()) << one.error;
  EXPECT_EQ(one.updates, 3);
  EXPECT_EQ(one.padded, 5);
  for (int ranks : {2, 4}) {
    const std::vector<TrainedRun> runs = trainOnRanks(ranks, micro, o);
    for (const TrainedRun& r : runs) {
      ASSERT_TRUE(r.error.empty()) << r.error;
      EXPECT_TRUE(bitEqual(r.weights, one.weights)) << ranks << " processes";
      EXPECT_EQ(r.losses, one.losses);
      EXPECT_EQ(r.updates, one.updates);
      EXPECT_EQ(r.samples, one.samples);
      EXPECT_EQ(r.padded, one.padded);
    }
  }
}

// Each process traces its own replicas: every task of a replica's stage, the copies of gradients between stages
// included, lands on the track named for that replica and stage.
TEST(ProcessGroup, EveryProcessTracesEachTaskOnItsReplicasStageTrack) {
  std::vector<Batch> micro;
  for (size_t i = 0; i < 16; ++i) micro.push_back(fixedBatch((i * 3) % 60, 3));
  IpuOptions o;
  o.replicationFactor = 4;
  o.gradientAccumulation = 4;
  o.pipelineSplits = {"layers/1"};
  std::vector<TrainedRun> runs = trainOnRanks(2, micro, o);
  runs.push_back(train(micro, o, nullptr));
  for (size_t k = 0; k < runs.size(); ++k) {
    const TrainedRun& r = runs[k];
    ASSERT_TRUE(r.error.empty()) << r.error;
    const size_t ipuTracks = k < 2 ? 4 : 8;  // 2 or 4 replicas x 2 stages, then the host
    ASSERT_EQ(r.tracks.size(), ipuTracks + 1) << "process " << k;
    EXPECT_EQ(r.tracks.back(), "host");
    int64_t copies = 0;
    for (const TaskRecord& t : r.tasks) {
      ASSERT_GE(t.ipu, 0);
      ASSERT_LT(static_cast<size_t>(t.ipu), r.tracks.size());
      if (t.replica < 0 || t.stage < 0) continue;
      const std::string want = "(replica " + std::to_string(t.replica) + ", stage " + std::to_string(t.stage) + ":";
      EXPECT_NE(r.tracks[static_cast<size_t>(t.ipu)].find(want), std::string::npos)
          << "process " << k << ": a " << taskKindName(t.kind) << " task of replica " << t.replica << " stage "
          << t.stage << " on track '" << r.tracks[static_cast<size_t>(t.ipu)] << "'";
      copies += t.kind == TaskKind::Copy;
    }
    EXPECT_GT(copies, 0) << "process " << k;
  }
}

TEST(ProcessGroup, AnErrorOnOneProcessIsRaisedOnEvery) {
  std::vector<Batch> micro;
  for (size_t i = 0; i < 4; ++i) micro.push_back(fixedBatch(i * 3, 3));
  // A NaN target on the last micro-batch: replica 1's, on the second process only.
  micro[3].y = micro[3].y.clone();
  micro[3].y.data<float>()[0] = NAN;
  IpuOptions o;
  o.replicationFactor = 2;
  o.gradientAccumulation = 2;
  const std::vector<TrainedRun> runs = trainOnRanks(2, micro, o);
  std::vector<Tensor> initial;
  for (const Variable& p : gin()->parameters()) initial.push_back(p.value().clone());
  for (const TrainedRun& r : runs) {
    EXPECT_NE(r.error.find("the loss is"), std::string::npos) << r.error;
    EXPECT_TRUE(bitEqual(r.weights, initial));  // the update was applied on neither
  }
  EXPECT_NE(runs[0].error.find("on MPI rank 1"), std::string::npos) << runs[0].error;
}

}  // namespace
}  // namespace gnn
