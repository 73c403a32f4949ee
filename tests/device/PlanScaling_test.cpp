// A plan across many replicas and hosts: the step's parts add up to the step (the all-reduce split into IPU-Links
// and the network between PODs or hosts, by hand), and the scaling table over 1..64 replicas: IPUs and hosts by
// the stated rule, a row's all-reduce by hand, the parts that must grow or shrink with the replicas doing so, the
// host's rate growing with the hosts.
#include <gtest/gtest.h>

#include "device/Collectives.h"
#include "device/Plan.h"
#include "device/PlanScaling.h"
#include "device/StepParts.h"

namespace gnn {
namespace {

ModelProfile blocksOf(int64_t blocks, int64_t flops, int64_t params) {
  ModelProfile m;
  m.training = true;
  m.optimizerStateTensors = 2;
  m.inputBytes = 200000;
  m.graphSlots = 33;
  for (int64_t b = 0; b < blocks; ++b) {
    BlockProfile p;
    p.name = "layers/" + std::to_string(b);
    p.parameters = params;
    p.parameterTensors = 1;
    p.inputBytes = b == 0 ? 0 : 50000;
    p.outputBytes = 50000;
    p.savedBytes = 10000;
    p.forwardFlops = flops;
    p.backwardFlops = 2 * flops;
    p.forward.push_back({"linear", OpClass::Matmul, flops, 2000000, 10000, true});
    p.forward.push_back({"gatherRows", OpClass::Exchange, 0, 500000, 0, true});
    p.backward.push_back({"linear", OpClass::Matmul, 2 * flops, 4000000, 0, true});
    p.backward.push_back({"gatherRows", OpClass::Exchange, 0, 1000000, 0, true});
    m.blocks.push_back(p);
  }
  m.outputBytes = 50000;
  return m;
}

TEST(PlanStepParts, PartsAddUpAndTheAllReduceSplitsByHand) {
  const ModelProfile m = blocksOf(2, 100000000, 1000000);
  IpuOptions o;
  o.replicationFactor = 4;
  o.gradientAccumulation = 4;
  o.hosts = 2;
  o.networkBytesPerSecond = 12.5e9;
  o.networkLatencySeconds = 10e-6;
  const Plan p = makePlan(m, o, 16);
  const StepParts parts = stepParts(p);
  double sum = 0;
  for (const StepPart& part : parts.device) sum += part.seconds;
  EXPECT_NEAR(sum, p.cost.stepSeconds, 1e-12);
  EXPECT_NEAR(parts.deviceStep, p.cost.stepSeconds, 1e-12);
  // One stage of 2M parameters (8 MB fp32) in 2 weight tensors, each its own all-reduce (PopART's default): over
  // the 4 replicas' IPU-Links (device/Collectives.h), and over the network between the 2 hosts (2(2-1)/2 over
  // 12.5 GB/s, 2 x 10 us per tensor).
  const IpuSpec spec = IpuSpec::mk2();
  const double links = 2 * collectiveCost(Collective::AllReduce, 4e6, 4, spec, {}).seconds();
  const double network = 1.0 * 8e6 / 12.5e9 + 2 * 2 * 10e-6;
  auto part = [&](const std::string& key) {
    for (const StepPart& x : parts.device)
      if (x.key == key) return x.seconds;
    return -1.0;
  };
  EXPECT_NEAR(part("all_reduce_ipu_links"), links, 1e-12);
  EXPECT_NEAR(part("all_reduce_network"), network, 1e-12);
  EXPECT_GT(part("compute"), 0);
  EXPECT_GT(part("exchange"), 0);
  EXPECT_NEAR(part("host_io"), p.cost.hostSeconds, 1e-15);
  EXPECT_FALSE(parts.hostKnown);
  // Merged collectives (--merge-all-reduce): the latencies once per stage, the bytes the same.
  IpuOptions merged = o;
  merged.mergeAllReduce = true;
  const Plan pm = makePlan(m, merged, 16);
  EXPECT_NEAR(pm.cost.allReduceSeconds,
              collectiveCost(Collective::AllReduce, 8e6, 4, spec, {}).seconds() + 1.0 * 8e6 / 12.5e9 + 2 * 10e-6, 1e-12);
  EXPECT_NEAR(pm.cost.networkSeconds, 1.0 * 8e6 / 12.5e9 + 2 * 10e-6, 1e-12);
  const std::string text = p.report();
  for (const char* name : {"all-reduce over IPU-Links", "all-reduce between PODs or hosts", "host I/O", "compute"})
    EXPECT_NE(text.find(name), std::string::npos) << name;
}

TEST(PlanScalingTable, ReplicasOneToSixtyFourByTheStatedRules) {
  const ModelProfile m = blocksOf(4, 200000000, 1000000);
  IpuOptions o;
  o.gradientAccumulation = 8;
  o.pipelineSplits = {"layers/2"};  // 2 stages of 2M parameters each
  o.networkBytesPerSecond = 12.5e9;
  o.networkLatencySeconds = 10e-6;
  Plan p = makePlan(m, o, 16);
  ASSERT_TRUE(p.fits());
  p.setHost(HostSample::given(2e-3, "test"), 4, "test");  // 2 ms per micro-batch, 4 cores per host
  const PlanScaling t = planScaling(p, ScalingOptions{64, 4, 8});  // PODs of 8 IPUs, to reach the network early
  ASSERT_EQ(t.rows.size(), 7u);
  double lastAllReduce = -1, lastEfficiency = 2, lastDevice = 0;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const ScalingRow& r = t.rows[i];
    const int64_t R = int64_t{1} << i;
    EXPECT_EQ(r.replicas, R);
    EXPECT_EQ(r.ipus, 2 * R);
    EXPECT_EQ(r.hosts, (2 * R + 3) / 4);
    EXPECT_EQ(r.pods, (2 * R + 7) / 8);
    EXPECT_TRUE(r.fits);
    // The hosts' rate: a step's 16 x 8 x R graphs over its preparation (R x 8 micro-batches of 2 ms on
    // min(hosts, R) x 4 cores) and its request's call.
    const double call = IpuSpec::mk2().hostCallSeconds;
    EXPECT_NEAR(r.hostSamplesPerSecond,
                16.0 * 8 * static_cast<double>(R) /
                    (static_cast<double>(R * 8) * 2e-3 / (4.0 * static_cast<double>(std::min(r.hosts, R))) + call),
                1e-6);
    // PopTorch's default synchronous loading: a step of 8 micro-batches per replica waits for its preparation
    // (R x 8 micro-batches on min(hosts, R) x 4 cores).
    const double prep = static_cast<double>(R * 8) * 2e-3 / (4.0 * static_cast<double>(std::min(r.hosts, R)));
    EXPECT_NEAR(r.hostPreparation, prep, 1e-12);
    EXPECT_NEAR(r.samplesPerSecond, static_cast<double>(16 * 8 * R) / (r.stepSeconds + prep), 1e-6);
    EXPECT_EQ(r.limitedBy, r.hostSamplesPerSecond < r.deviceSamplesPerSecond ? "host" : "device");
    // Monotone parts: the all-reduce never shrinks, the device's samples/s never falls, the efficiency per
    // replica never rises; the compute of a step does not depend on the replicas.
    const double allReduce = r.allReduceIpuLinks + r.allReduceNetwork;
    EXPECT_GE(allReduce, lastAllReduce) << R;
    EXPECT_GE(r.deviceSamplesPerSecond, lastDevice) << R;
    EXPECT_LE(r.efficiency, lastEfficiency + 1e-12) << R;
    EXPECT_NEAR(r.compute, t.rows[0].compute, 1e-12);
    lastAllReduce = allReduce;
    lastDevice = r.deviceSamplesPerSecond;
    lastEfficiency = r.efficiency;
  }
  EXPECT_DOUBLE_EQ(t.rows[0].efficiency, 1.0);
  EXPECT_EQ(t.rows[0].allReduceIpuLinks + t.rows[0].allReduceNetwork, 0);
  // Asynchronous loading (--loader-mode async): the slower of the device and the hosts.
  IpuOptions ao = o;
  ao.asyncLoading = true;
  Plan ap = makePlan(m, ao, 16);
  ap.setHost(HostSample::given(2e-3, "test"), 4, "test");
  for (const ScalingRow& r : planScaling(ap, ScalingOptions{64, 4, 8}).rows) {
    // samples / (call + max(IPUs' part, preparation)): the slower side's rate when the call is small.
    const double samples = 16.0 * 8 * static_cast<double>(r.replicas), call = IpuSpec::mk2().hostCallSeconds;
    EXPECT_NEAR(r.samplesPerSecond, samples / (call + std::max(samples / r.deviceSamplesPerSecond, r.hostPreparation)),
                1e-6);
    EXPECT_EQ(r.limitedBy, r.hostSamplesPerSecond < r.deviceSamplesPerSecond ? "host" : "device");
  }
  // 8 replicas x 2 stages = 16 IPUs in 2 PODs of 8, 4 replicas per POD: each stage's 8 MB in 2 weight tensors,
  // each reduce-scattered over the POD's IPU-Links, its 1 MB shards all-reduced between the 2 PODs over GW-Links
  // (2 steps of 10 us, 2(2-1)/2 of the shard at 6.25 GB/s per IPU) and all-gathered.
  const ScalingRow& r8 = t.rows[3];
  CollectiveOptions pod8;
  pod8.ipusPerReplica = 2;
  pod8.ipusPerPod = 8;
  const CollectiveCost each = collectiveCost(Collective::AllReduce, 4e6, 8, IpuSpec::mk2(), pod8);
  EXPECT_NEAR(r8.allReduceNetwork, 2 * (2 * 10e-6 + 1e6 / 6.25e9), 1e-12);
  EXPECT_NEAR(r8.allReduceNetwork, 2 * each.gwLinkSeconds(), 1e-12);
  EXPECT_NEAR(r8.allReduceIpuLinks, 2 * (each.seconds() - each.gwLinkSeconds()), 1e-12);
  // 4 hosts feed it: 64 micro-batches of 2 ms on 16 cores, and the call.
  EXPECT_NEAR(r8.hostSamplesPerSecond, 16.0 * 64 / (64 * 2e-3 / 16 + IpuSpec::mk2().hostCallSeconds), 1e-6);
  // One POD (R <= 4) has no network part.
  EXPECT_EQ(t.rows[2].allReduceNetwork, 0);
  EXPECT_GT(t.rows[3].allReduceNetwork, 0);
  // PODs of 64 IPUs (the default): the network only beyond 64 IPUs.
  const PlanScaling pod64 = planScaling(p, ScalingOptions{});
  for (const ScalingRow& r : pod64.rows) EXPECT_EQ(r.allReduceNetwork > 0, r.ipus > 64) << r.replicas;

  const std::string text = t.table();
  EXPECT_NE(text.find("--ipus-per-host"), std::string::npos);
  const nlohmann::json j = t.toJson();
  ASSERT_EQ(j["rows"].size(), 7u);
  EXPECT_EQ(j["rows"][6]["replicas"], 64);
  EXPECT_EQ(j["rows"][6]["ipus"], 128);
  EXPECT_EQ(j["rows"][6]["hosts"], 32);
  EXPECT_EQ(j["ipus_per_host"], 4);

  // A slow host caps every row: the table names it.
  p.setHost(HostSample::given(10.0, "test"), 1, "test");
  const PlanScaling slow = planScaling(p, ScalingOptions{8, 4});
  ASSERT_EQ(slow.rows.size(), 4u);
  for (const ScalingRow& r : slow.rows) EXPECT_EQ(r.limitedBy, "host");
}

}  // namespace
}  // namespace gnn
