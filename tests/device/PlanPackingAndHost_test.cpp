// Packing-aware and host-aware plans: the loader's packs counted as real graphs (graphs/s = packs/s x mean real
// graphs per pack, against the epoch plan counted by hand), the host's preparation timed within its bounds and
// scaled by cores and hosts (by hand), and the host reported as the bottleneck when it is slower than the IPUs.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "../loaders/SyntheticGraphs.h"
#include "device/Plan.h"
#include "loaders/FixedSizeDataLoader.h"

namespace gnn {
namespace {

// A model of `blocks` identical blocks of one matmul each (as in Plan_test.cpp).
ModelProfile uniformModel(int64_t blocks, int64_t flops, int64_t params) {
  ModelProfile m;
  m.training = true;
  m.optimizerStateTensors = 2;
  m.inputBytes = 100000;
  m.graphSlots = 17;
  for (int64_t b = 0; b < blocks; ++b) {
    BlockProfile p;
    p.name = "layers/" + std::to_string(b);
    p.parameters = params;
    p.parameterTensors = 1;
    p.inputBytes = b == 0 ? 0 : 10000;
    p.outputBytes = 10000;
    p.savedBytes = 1000;
    p.forwardFlops = flops;
    p.backwardFlops = 2 * flops;
    p.forward.push_back({"linear", OpClass::Matmul, flops, 1000000, 1000, true});
    p.backward.push_back({"linear", OpClass::Matmul, 2 * flops, 2000000, 0, true});
    m.blocks.push_back(p);
  }
  m.outputBytes = 10000;
  return m;
}

IpuOptions replicas(int64_t R, int64_t G, int64_t hosts = 1) {
  IpuOptions o;
  o.replicationFactor = R;
  o.gradientAccumulation = G;
  o.hosts = hosts;
  return o;
}

FixedSizeDataLoader::Options loaderOptions(PackingStrategy s) {
  FixedSizeDataLoader::Options lo;
  lo.strategy = s;
  lo.seed = 5;
  lo.prefetch = 0;
  return lo;
}

// The mean real graphs per pack of an epoch plan, its least-filled pack (fewest graphs, then nodes) left out.
double meanByHand(const EpochPlan& plan, int64_t* leftOut) {
  size_t least = 0;
  auto nodes = [&](size_t i) {
    int64_t n = 0;
    for (const PlannedGraph& g : plan.batches[i]) n += g.numNodes;
    return n;
  };
  for (size_t i = 1; i < plan.batches.size(); ++i)
    if (plan.batches[i].size() < plan.batches[least].size() ||
        (plan.batches[i].size() == plan.batches[least].size() && nodes(i) < nodes(least)))
      least = i;
  int64_t graphs = 0;
  for (size_t i = 0; i < plan.batches.size(); ++i)
    if (i != least) graphs += static_cast<int64_t>(plan.batches[i].size());
  *leftOut = static_cast<int64_t>(plan.batches[least].size());
  return static_cast<double>(graphs) / static_cast<double>(plan.batches.size() - 1);
}

TEST(PlanPacking, PackedLoaderCountsRealGraphsNotSlots) {
  auto ds = test::randomDataset(400, 3, 2, 24);
  // GPS++'s kind of pack: more graph slots (32 and the padding graph's) than its node budget fills (about 16).
  FixedSizeOptions fixed = FixedSizeOptions::forPacking(*ds, 16);
  fixed.numGraphs = 33;
  FixedSizeDataLoader loader(ds, fixed, loaderOptions(PackingStrategy::PlannedPack));
  loader.startEpoch(0);
  const PackingProfile p = PackingProfile::of(loader);
  int64_t leftOut = 0;
  const double mean = meanByHand(loader.plan(), &leftOut);
  ASSERT_TRUE(p.known);
  EXPECT_EQ(p.strategy, "plan");
  EXPECT_EQ(p.graphSlotsPerPack, 33);
  EXPECT_EQ(p.epochPacks, loader.numBatches());
  EXPECT_EQ(p.packs, loader.numBatches() - 1);
  EXPECT_EQ(p.leftOutGraphs, leftOut);
  EXPECT_DOUBLE_EQ(p.realGraphsPerPack, mean);
  EXPECT_DOUBLE_EQ(p.realGraphsPerMicroBatch(), mean);
  // The node budget runs out first: counting graph slots would overstate graphs/s by about 2x.
  EXPECT_LT(p.realGraphsPerPack, 20.0);
  EXPECT_GT(p.realGraphsPerPack, 10.0);
  EXPECT_LT(p.graphSlotFill(), 0.65);

  // The plan of that loader: graphs/s = packs/s x mean real graphs per pack, by hand from the step.
  const ModelProfile m = uniformModel(2, 200000000, 100000);
  Plan plan = makePlan(m, replicas(2, 4), p.realGraphsPerMicroBatch());
  plan.packing = p;
  const double packsPerSecond = 2.0 * 4.0 / plan.cost.stepSeconds;  // one pack per micro-batch
  EXPECT_NEAR(plan.cost.samplesPerSecond, packsPerSecond * mean, 1e-6 * packsPerSecond * mean);
  const nlohmann::json j = plan.toJson();
  EXPECT_NEAR(j["packing"]["packs_per_s"].get<double>(), packsPerSecond, 1e-6 * packsPerSecond);
  EXPECT_NEAR(j["packing"]["graphs_per_s"].get<double>(), packsPerSecond * mean, 1e-6 * packsPerSecond * mean);
  EXPECT_NEAR(j["estimated_samples_per_s"].get<double>(), packsPerSecond * mean, 1e-6 * packsPerSecond * mean);
  EXPECT_NE(plan.report().find("real graphs per pack on average"), std::string::npos);

  // A micro-batch of several packs: packs x mean graphs per pack.
  const PackingProfile four = PackingProfile::fromPlan(loader.plan(), fixed, PackingStrategy::PlannedPack, 4);
  EXPECT_DOUBLE_EQ(four.realGraphsPerMicroBatch(), 4 * mean);
}

TEST(PlanPacking, PaddedLoaderCountsFullBatchesWithoutTheEpochsRemainder) {
  auto ds = test::randomDataset(300, 4, 2, 20);  // 300 = 18 x 16 + 12
  FixedSizeDataLoader loader(ds, FixedSizeOptions::fromDataset(*ds, 17), loaderOptions(PackingStrategy::PadToMax));
  loader.startEpoch(0);
  const PackingProfile p = PackingProfile::of(loader);
  EXPECT_EQ(p.epochPacks, 19);
  EXPECT_EQ(p.leftOutGraphs, 12);
  EXPECT_DOUBLE_EQ(p.realGraphsPerPack, 16.0);  // every other pack is full
  EXPECT_DOUBLE_EQ(p.graphSlotFill(), 1.0);
}

TEST(PlanHost, TimingStopsAtItsBounds) {
  int64_t calls = 0;
  HostSample s = timePreparation([&](int64_t) { ++calls; }, HostTiming{20, 2.0});
  EXPECT_EQ(s.microBatches, 20);
  EXPECT_EQ(calls, 20);
  calls = 0;
  s = timePreparation(
      [&](int64_t) {
        ++calls;
        std::this_thread::sleep_for(std::chrono::milliseconds(60));
      },
      HostTiming{20, 0.15});
  EXPECT_GE(s.microBatches, 2);  // 0 s, 0.06 s, 0.12 s: under the bound, then stop
  EXPECT_LE(s.microBatches, 4);
  EXPECT_GE(s.collateSeconds, 0.06);
  // At least one call even with no time at all.
  s = timePreparation([&](int64_t) {}, HostTiming{20, 0.0});
  EXPECT_EQ(s.microBatches, 1);
}

TEST(PlanHost, TimedLoaderIsLeftAtItsEpoch) {
  auto ds = test::graphormerDataset(120, 2, 2, 12);
  FixedSizeDataLoader loader(ds, FixedSizeOptions::forPacking(*ds, 8), loaderOptions(PackingStrategy::PlannedPack));
  loader.startEpoch(0);
  std::vector<int64_t> before;
  for (const auto& b : loader.plan().batches)
    for (const PlannedGraph& g : b) before.push_back(g.index);
  const HostSample s = timeLoader(loader, HostTiming{5, 2.0});
  EXPECT_TRUE(s.known);
  EXPECT_EQ(s.microBatches, 5);
  EXPECT_GT(s.collateSeconds, 0);
  EXPECT_GT(s.packingSeconds, 0);
  std::vector<int64_t> after;
  for (const auto& b : loader.plan().batches)
    for (const PlannedGraph& g : b) after.push_back(g.index);
  EXPECT_EQ(before, after);
  Batch b;
  EXPECT_TRUE(loader.next(b));  // and it still serves its epoch
}

TEST(PlanHost, HostRateByHandAndTheBottleneckNamed) {
  const ModelProfile m = uniformModel(2, 200000000, 100000);
  // 4 replicas x 8 micro-batches over 2 hosts of 3 cores, 10 graphs per micro-batch; asynchronous loading
  // (--loader-mode async): preparation overlaps the IPUs' part of the step; the request's call (the host's work)
  // does not: samples / (call + max(IPUs' part, preparation)).
  IpuOptions async = replicas(4, 8, 2);
  async.asyncLoading = true;
  async.deviceIterations = 16;  // one request per 16 steps: the call spread over them
  Plan plan = makePlan(m, async, 10);
  const double device = plan.cost.samplesPerSecond, call = plan.cost.callSeconds;
  EXPECT_NEAR(call, IpuSpec::mk2().hostCallSeconds / 16, 1e-15);
  const double devicePart = plan.cost.stepSeconds - call;
  // Fast host: 1 us per micro-batch on one core: 32 micro-batches on 6 cores, plus the call, per step.
  plan.setHost(HostSample::given(1e-6, "test"), 3, "test");
  EXPECT_NEAR(plan.host.samplesPerSecond, 320 / (32 * 1e-6 / 6 + call), 1e-6);
  EXPECT_NEAR(plan.host.deviceSamplesPerSecond, 320 / devicePart, 1e-6);
  EXPECT_NEAR(plan.host.secondsPerStep, 32 * 1e-6 / 6, 1e-15);
  EXPECT_FALSE(plan.host.hostBound());
  EXPECT_STREQ(plan.limitedBy(), "device");
  EXPECT_NEAR(plan.throughput(), device, 1e-9 * device);  // the preparation hides under the IPUs

  // Slow host (the test hook: a stated time per micro-batch): 0.5 s on one core.
  plan.setHost(HostSample::given(0.5, "test"), 3, "test");
  const double prep = 32 * 0.5 / 6;  // the step's 32 micro-batches on 6 cores
  const double host = 320 / (prep + call);  // about 10 x 3 x 2 / 0.5 = 120 graphs/s
  ASSERT_LT(host, device);
  EXPECT_NEAR(plan.host.samplesPerSecond, host, 1e-9);
  EXPECT_TRUE(plan.host.hostBound());
  EXPECT_STREQ(plan.limitedBy(), "host");
  EXPECT_NEAR(plan.throughput(), host, 1e-9);
  EXPECT_NEAR(plan.host.secondsPerStep, prep, 1e-12);
  EXPECT_NEAR(plan.host.serialSamplesPerSecond, 320 / (plan.cost.stepSeconds + prep), 1e-9);
  const nlohmann::json j = plan.toJson();
  EXPECT_EQ(j["throughput"]["limited_by"], "host");
  EXPECT_NEAR(j["throughput"]["samples_per_s"].get<double>(), host, 1e-9);
  EXPECT_NEAR(j["estimated_samples_per_s"].get<double>(), device, 1e-9 * device);  // the IPUs' rate, kept
  EXPECT_TRUE(j["host"]["host_is_bottleneck"].get<bool>());
  EXPECT_NEAR(j["step_parts"]["host_preparation_ms"].get<double>(), prep * 1e3, 1e-9);
  const std::string text = plan.report();
  EXPECT_NE(text.find("the HOST is the bottleneck"), std::string::npos) << text;
  EXPECT_NE(text.find("limited by the HOST"), std::string::npos) << text;
  EXPECT_NE(text.find("AsynchronousDataAccessor"), std::string::npos) << text;

  // PopTorch's default, synchronous loading: each step waits for its preparation, whichever is slower.
  Plan sync = makePlan(m, replicas(4, 8, 2), 10);
  for (double perMicroBatch : {1e-6, 0.5}) {
    sync.setHost(HostSample::given(perMicroBatch, "test"), 3, "test");
    const double step = sync.cost.stepSeconds + 32 * perMicroBatch / 6;
    EXPECT_NEAR(sync.throughput(), 320 / step, 1e-9 * sync.throughput());
    EXPECT_LT(sync.throughput(), std::min(device, sync.host.samplesPerSecond));
    EXPECT_EQ(sync.toJson()["throughput"]["loader_mode"], "sync");
    EXPECT_NE(sync.report().find("--loader-mode sync (poptorch.DataLoader's default"), std::string::npos);
  }
  EXPECT_EQ(plan.toJson()["throughput"]["loader_mode"], "async");

  // More hosts than replicas do not help: a replica's data is prepared on its host.
  Plan one = makePlan(m, replicas(1, 8, 4), 10);
  one.setHost(HostSample::given(0.5, "test"), 3, "test");
  EXPECT_EQ(one.host.hosts, 1);
  EXPECT_NEAR(one.host.samplesPerSecond, 80 / (8 * 0.5 / 3 + one.cost.callSeconds), 1e-9);
}

}  // namespace
}  // namespace gnn
