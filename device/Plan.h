// Plan: the answer to "will it fit, how fast will it be, which stage is the bottleneck, what do I change when
// it does not fit", from a model's compile record (ModelProfile), its IpuOptions and the IpuSpec, in seconds and
// without the hardware. A plan holds the memory of every simulated IPU (MemoryModel), the estimated step time
// and its split (CostModel), the stages (given, or chosen by autoSplits), and, when it does not fit, the
// changes that would make it fit: each computed by planning the changed configuration again, never guessed.
// Given the loader's packs (PackingProfile) its samples are real graphs; given the host's preparation of a
// micro-batch (HostCost) its headline is min(device, host), naming which limits; planScaling (PlanScaling.h)
// plans it again for 1..64 replicas.
//
//   Plan p = makePlan(profile, options, /*samplesPerMicroBatch=*/64);
//   std::cout << p.report();
//   if (!p.fits()) throw OutOfMemory(p);          // what SimulatedIpu::compile does
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "device/CostModel.h"
#include "device/HostCost.h"
#include "device/MemoryModel.h"
#include "device/PackingProfile.h"

namespace gnn {

/// A change to a configuration that does not fit, planned.
struct PlanFix {
  std::string change;  // "fp16 weights, activations and gradients"
  std::string flags;   // "--precision fp16"
  bool fits = false;
  int64_t fullestBytes = 0;  // the largest IPU's total after the change
  double samplesPerSecond = 0;
};

struct Plan {
  IpuSpec spec;
  IpuOptions options;
  StageBlocks stages;
  std::vector<std::string> splits;  // block names that start stages 1..P-1
  std::string splitReason;          // --pipeline-splits auto: why these
  bool recomputeByDefault = false;  // recomputation on as PopTorch's default for a pipelined training program
  double samplesPerMicroBatch = 0;
  bool training = true;
  int64_t parameters = 0;
  MemoryPlan memory;
  CostPlan cost;
  std::vector<PlanFix> fixes;  // only when it does not fit
  std::vector<std::string> blockNames;
  PackingProfile packing;  // known when the loader told the plan its packs (samplesPerMicroBatch = its real graphs)
  HostPlan host;           // known when the host's preparation was timed or given (setHost)
  std::shared_ptr<const ModelProfile> profile;  // what it was planned from (the scaling table plans it again)

  bool fits() const { return memory.fits; }
  int64_t numIpus() const;
  /// The headline: the device's samples/s, or min(device, host) when the host is known.
  double throughput() const { return host.known ? host.throughput : cost.samplesPerSecond; }
  const char* limitedBy() const { return host.hostBound() ? "host" : "device"; }
  /// Sets `host` from the host's preparation of one micro-batch and its cores (an assumption; `coresSource` says
  /// whose), against this plan's device; `hosts` feed the replicas (0: options.hosts).
  void setHost(const HostSample& sample, int64_t coresPerHost, const std::string& coresSource, int64_t hosts = 0);
  /// The memory and cost report people read (--plan-only).
  std::string report() const;
  /// The out-of-memory report: the IPU, used vs budget, the largest items, the changes that would make it fit.
  std::string outOfMemoryReport() const;
  /// Everything in report() as JSON (--report), including the --json keys memory_per_ipu_mb, memory_budget_mb,
  /// estimated_samples_per_s (the IPUs' rate), pipeline_utilisation, bottleneck_stage; packing, host, step_parts
  /// and throughput (the headline, min(device, host), and which limits).
  nlohmann::json toJson() const;
  std::string stageName(int64_t s) const;
};

/// Stages from block names that start each stage after the first; throws naming the blocks on a bad name.
StageBlocks stagesFromSplits(const ModelProfile& model, const std::vector<std::string>& splits);

/// The plan of `options` as given; with options.autoPipelineSplits, of the splits autoSplits chooses. Its options
/// hold the defaults resolved as PopTorch resolves them (recomputation when a training program is pipelined over
/// more than one stage: IpuOptions::recomputes); the program runs with them. `withFixes`: plan the candidate
/// changes when it does not fit.
Plan makePlan(const ModelProfile& model, const IpuOptions& options, double samplesPerMicroBatch, bool withFixes = true);

/// Balanced splits for `stages` stages (0: the fewest that fit, up to one block per stage): contiguous blocks
/// minimising the slowest stage's time per micro-batch, every stage within its IPU's memory (dynamic
/// programming over the blocks), each number of stages planned with its own default recomputation. Returns false
/// when no split fits; `reason` says why these were chosen.
bool autoSplits(const ModelProfile& model, const IpuOptions& options, int64_t stages, StageBlocks* out,
                std::string* reason);

/// Compiling a configuration that does not fit: what() is the out-of-memory report.
class OutOfMemory : public std::runtime_error {
 public:
  explicit OutOfMemory(Plan plan) : std::runtime_error(plan.outOfMemoryReport()), plan_(std::move(plan)) {}
  const Plan& plan() const { return plan_; }

 private:
  Plan plan_;
};

/// Sets every task's IPU clock in `trace` from the plan's timeline (requests one after another, each its
/// host transfer then its updates), so the trace draws on the simulated IPU's time.
void attachIpuClock(Trace& trace, const Plan& plan);

}  // namespace gnn
