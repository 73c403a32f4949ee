// PlanScaling: a plan repeated for 1, 2, 4, ..., 64 replicas, as users size an IPU-POD: every row keeps the
// plan's stages, micro-batch and accumulation (so the batch of an update grows with the replicas: weak scaling,
// as data-parallel runs do), feeds its R x P IPUs from ceil(R x P / IPUs per host) hosts (4: an IPU-M2000 or
// Bow-2000 per host, an assumption), joins them by IPU-Links within PODs of 64 IPUs (a POD64's IPU-M2000s form a
// 2D torus of IPU-Links: ../shared/ipu/README.md) and across PODs by the hosts' network, and splits each step
// into its parts: compute, exchange, the all-reduce over IPU-Links and over the network, host I/O, and the hosts'
// preparation of the micro-batches, whose throughput is min(device, host).
//
//   PlanScaling t = planScaling(plan, {});   // needs plan.profile (makePlan sets it)
//   std::cout << t.table();                   // one row per replica count
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gnn {

struct Plan;

struct ScalingOptions {
  int64_t maxReplicas = 64;
  int64_t ipusPerHost = 4;  // an IPU-M2000 / Bow-2000 (../shared/ipu/README.md: 4 GC200 per machine)
  int64_t ipusPerPod = 64;  // IPUs joined by IPU-Links; the all-reduce crosses the network between PODs
};

struct ScalingRow {
  int64_t replicas = 0, ipus = 0, hosts = 0, pods = 0;
  bool fits = false;
  double stepSeconds = 0;  // the device's step
  double compute = 0, exchange = 0, bubble = 0, allReduceIpuLinks = 0, allReduceNetwork = 0, optimizer = 0,
         hostIo = 0, streaming = 0;
  bool hostKnown = false;
  double hostPreparation = 0;        // per step, on every host's cores
  double deviceSamplesPerSecond = 0;
  double hostSamplesPerSecond = 0;   // 0 when the host is not known
  double samplesPerSecond = 0;       // min(device, host)
  std::string limitedBy;             // "device" | "host"
  double efficiency = 0;             // samples/s over R x the first row's
};

struct PlanScaling {
  ScalingOptions options;
  int64_t stages = 1;
  double networkGbps = 0;
  std::vector<ScalingRow> rows;

  std::string table() const;
  nlohmann::json toJson() const;
};

/// The plan's configuration planned again at each power-of-two replica count up to options.maxReplicas.
PlanScaling planScaling(const Plan& plan, const ScalingOptions& options);

}  // namespace gnn
